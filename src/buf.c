/* buf.c: the bounded byte buffer, string helpers and base64. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"

void al_buf_init(al_buf *b, size_t max)
{
	b->ptr = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

/* Make room for n more bytes plus the terminating NUL. */
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
