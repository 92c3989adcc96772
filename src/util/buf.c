/* buf.c: the bounded byte buffer, string helpers and base64. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "array_int.h"

void al_buf_init(al_buf *b, size_t max)
{
	b->ptr = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

/* Make room for n more bytes plus the terminating NUL. */
int al_buf_reserve(al_buf *b, size_t n)
{
	uint8_t *p;

	if (n > b->max || b->len > b->max - n)
		return al_error_set(
		    AL_ELIMIT, "buffer limit of %zu bytes exceeded", b->max);
	if (b->len + n + 1 <= b->cap)
		return 0;
	p = realloc(b->ptr, b->len + n + 1);
	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory (%zu bytes)",
		                    b->len + n + 1);
	b->ptr = p;
	b->cap = b->len + n + 1;
	return 0;
}

static int buf_grow(al_buf *b, size_t n)
{
	size_t need, cap;
	uint8_t *p;

	if (n > b->max || b->len > b->max - n)
		return al_error_set(
		    AL_ELIMIT, "buffer limit of %zu bytes exceeded", b->max);
	need = b->len + n + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need) {
		if (cap > SIZE_MAX / 2) {
			cap = need;
			break;
		}
		cap *= 2;
	}
	if (cap > b->max + 1)
		cap = b->max + 1;
	p = realloc(b->ptr, cap);
	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory (%zu bytes)",
		                    cap);
	b->ptr = p;
	b->cap = cap;
	return 0;
}

int al_buf_append(al_buf *b, const void *p, size_t n)
{
	int rc;

	if (n == 0 && b->ptr != NULL)
		return 0;
	if ((rc = buf_grow(b, n)) < 0)
		return rc;
	if (n > 0)
		memcpy(b->ptr + b->len, p, n);
	b->len += n;
	b->ptr[b->len] = '\0';
	return 0;
}

int al_buf_puts(al_buf *b, const char *s)
{
	return al_buf_append(b, s, strlen(s));
}

int al_buf_vprintf(al_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n, rc;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return al_error_set(AL_EINVAL, "bad format string");
	if ((rc = buf_grow(b, (size_t)n)) < 0)
		return rc;
	if (vsnprintf((char *)b->ptr + b->len, (size_t)n + 1, fmt, ap) != n)
		return al_error_set(AL_EINVAL, "bad format string");
	b->len += (size_t)n;
	return 0;
}

int al_buf_printf(al_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = al_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

const char *al_buf_cstr(const al_buf *b)
{
	return b->ptr != NULL ? (const char *)b->ptr : "";
}

void al_buf_reset(al_buf *b)
{
	b->len = 0;
	if (b->ptr != NULL)
		b->ptr[0] = '\0';
}

void al_buf_free(al_buf *b)
{
	free(b->ptr);
	b->ptr = NULL;
	b->len = 0;
	b->cap = 0;
}

char *al_buf_detach(al_buf *b, size_t *len)
{
	char *p;

	if (b->ptr == NULL && buf_grow(b, 0) < 0)
		return NULL;
	if (b->ptr == NULL)
		return NULL;
	b->ptr[b->len] = '\0';
	p = (char *)b->ptr;
	if (len != NULL)
		*len = b->len;
	b->ptr = NULL;
	b->len = 0;
	b->cap = 0;
	return p;
}

static int buf_writer_write(void *ud, const uint8_t *p, size_t n)
{
	return al_buf_append(ud, p, n);
}

static int buf_writer_reset(void *ud)
{
	al_buf_reset(ud);
	return 0;
}

al_writer al_buf_writer(al_buf *b)
{
	al_writer w = {buf_writer_write, buf_writer_reset, b};

	return w;
}

char *al_strdup(const char *s)
{
	return s != NULL ? al_strndup(s, strlen(s)) : NULL;
}

char *al_strndup(const char *s, size_t n)
{
	char *p;

	if (s == NULL || n == SIZE_MAX)
		return NULL;
	p = malloc(n + 1);
	if (p == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *al_sprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	p = malloc((size_t)n + 1);
	if (p == NULL)
		return NULL;
	va_start(ap, fmt);
	if (vsnprintf(p, (size_t)n + 1, fmt, ap) != n) {
		free(p);
		p = NULL;
	}
	va_end(ap);
	return p;
}

int al_str_startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int al_str_endswith(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *al_base64_encode(const uint8_t *p, size_t n)
{
	size_t outlen, i, o = 0;
	char *out;

	if (n > (SIZE_MAX - 1) / 4 * 3 - 3)
		return NULL;
	outlen = (n + 2) / 3 * 4;
	out = malloc(outlen + 1);
	if (out == NULL)
		return NULL;
	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v =
		    (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = b64[v >> 6 & 63];
		out[o++] = b64[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
	return out;
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int al_base64_decode(al_buf *out, const char *s, size_t n)
{
	uint32_t acc = 0;
	int bits = 0, rc;
	size_t i, pad = 0;

	while (n > 0 && s[n - 1] == '=' && pad < 2) {
		n--;
		pad++;
	}
	if ((n + pad) % 4 == 1)
		return al_error_set(AL_EPARSE, "invalid base64 length");
	for (i = 0; i < n; i++) {
		int v = b64_value(s[i]);
		if (v < 0)
			return al_error_set(
			    AL_EPARSE, "invalid base64 character at offset %zu",
			    i);
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			uint8_t byte;
			bits -= 8;
			byte = (uint8_t)(acc >> bits);
			if ((rc = al_buf_append(out, &byte, 1)) < 0)
				return rc;
		}
	}
	return 0;
}

/*
 * Length of the valid, printable UTF-8 character at s (at most n bytes), or 0
 * when s[0] must be escaped (see al_str_escape in buf.h). Follows the
 * well-formed byte sequences of Unicode 15, table 3-7.
 */
static size_t printable_char_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len, i;
	uint32_t cp;

	if (c < 0x20 || c == 0x7f)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0; /* continuation byte, overlong lead, > U+10FFFF */
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (uint32_t)(s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	/* C1 controls; line and paragraph separators; bidi controls, which
	 * can make a line read differently from what it says. */
	if ((cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
	    cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		return 0;
	return len;
}

int al_str_needs_escape(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, l;

	while (i < n) {
		l = printable_char_len(p + i, n - i);
		if (l == 0)
			return 1;
		i += l;
	}
	return 0;
}

/* Call put(ud, bytes, len) for each output piece of the escaped text; stop
 * at the first nonzero return. */
static int escape_each(const char *s, size_t n,
                       int (*put)(void *ud, const char *p, size_t len),
                       void *ud)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, l;
	int rc;

	while (i < n) {
		l = printable_char_len(p + i, n - i);
		if (l > 0) {
			rc = put(ud, s + i, l);
			i += l;
		} else {
			char e[4] = {'\\', 'x', hex[p[i] >> 4], hex[p[i] & 15]};

			rc = put(ud, e, sizeof(e));
			i++;
		}
		if (rc != 0)
			return rc;
	}
	return 0;
}

struct escape_out {
	char *out;
	size_t cap;
	size_t len;
};

static int put_fixed(void *ud, const char *p, size_t len)
{
	struct escape_out *o = ud;

	if (len >= o->cap - o->len)
		return 1;
	memcpy(o->out + o->len, p, len);
	o->len += len;
	return 0;
}

size_t al_str_escape(char *out, size_t cap, const char *s, size_t n)
{
	struct escape_out o = {out, cap, 0};

	if (out == NULL || cap == 0)
		return 0;
	if (s != NULL)
		(void)escape_each(s, n, put_fixed, &o);
	out[o.len] = '\0';
	return o.len;
}

static int put_buf(void *ud, const char *p, size_t len)
{
	return al_buf_append(ud, p, len);
}

int al_buf_append_escaped(al_buf *b, const char *s, size_t n)
{
	if (s == NULL)
		return 0;
	return escape_each(s, n, put_buf, b);
}

void *al__array_grow(void *arr, size_t *cap, size_t need, size_t size)
{
	size_t nc = *cap;
	void *g;

	if (need <= *cap && arr != NULL)
		return arr;
	if (size == 0 || need > SIZE_MAX / size)
		goto nomem;
	if (nc == 0)
		nc = need; /* exact at first: most per-image arrays hold one
		              or two entries, at catalog scale times 10,000 */
	while (nc < need)
		nc = nc > SIZE_MAX / 2 ? need : nc * 2;
	if (nc > SIZE_MAX / size)
		nc = need;
	if ((g = realloc(arr, nc * size)) == NULL)
		goto nomem;
	*cap = nc;
	return g;
nomem:
	al_error_set(AL_ENOMEM, "out of memory (%zu elements of %zu bytes)",
	             need, size);
	return NULL;
}

size_t al__array_cap(size_t n)
{
	size_t c = 1;

	if (n == 0)
		return 0;
	while (c < n) {
		if (c > SIZE_MAX / 2)
			return n;
		c *= 2;
	}
	return c;
}

void *al__array_grow_n(void *arr, size_t n, size_t need, size_t size)
{
	size_t cap = 0;

	if (arr != NULL && need <= al__array_cap(n))
		return arr;
	/* al__array_grow with *cap 0 allocates exactly need: ask for the
	   capacity need will be seen to have */
	if (need == 0)
		need = 1;
	return al__array_grow(arr, &cap, al__array_cap(need), size);
}

void al__strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
