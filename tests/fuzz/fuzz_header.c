/* fuzz_header.c: fuzz target for the parsers of server-supplied header text: status and header lines (src/registry/http_int.h), WWW-Authenticate, Retry-After, Link, Content-Range, Content-Length (src/registry/registry_int.h), and the message escaping every one of them ends up in. */
#include <stdlib.h>
#include <string.h>

#include "airlock/auth.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/http.h"
#include "harness.h"
#include "http_int.h"
#include "registry_int.h"

/* Inputs are header lines: curl hands over at most 100 KiB per line. */
#define FUZZ_HEADER_MAX (128 * 1024)

static int has_ctl(const char *s)
{
	for (; *s != '\0'; s++) {
		if (((unsigned char)*s < 0x20 && *s != '\t') ||
		    (unsigned char)*s == 0x7f)
			return 1;
	}
	return 0;
}

static void check_line(const uint8_t *data, size_t size)
{
	size_t nlen = 0, voff = 0, vlen = 0, i;
	long code = al_http__status_code((const char *)data, size);
	int rc;

	if (code < -1 || code > 9999)
		al_fuzz_fail("header", "status code out of range");
	rc = al_http__split_header((const char *)data, size, &nlen, &voff,
	                           &vlen);
	if (rc != AL_HTTP_HDR_FIELD)
		return;
	if (nlen >= size || voff > size || vlen > size - voff)
		al_fuzz_fail("header", "name or value outside the line");
	if (!al_http_value_ok((const char *)data + voff, vlen))
		al_fuzz_fail("header", "a value with a control character");
	for (i = 0; i < nlen; i++) {
		if (data[i] == ' ' || data[i] == '\t' || data[i] == ':')
			al_fuzz_fail("header", "blank or colon in a name");
	}
	if (vlen > 0 && (data[voff] == ' ' || data[voff] == '\t' ||
	                 data[voff + vlen - 1] == ' ' ||
	                 data[voff + vlen - 1] == '\t'))
		al_fuzz_fail("header", "value not trimmed");
}

static void check_challenge(const char *s)
{
	al_auth_params p = {NULL, NULL, NULL, NULL};
	int rc = al_auth_parse_challenge(&p, s);

	al_fuzz_note("header", "al_auth_parse_challenge", rc);
	if (rc < 0) {
		if (p.scheme != NULL)
			al_fuzz_fail("header", "failed parse left a scheme");
		al_error_clear();
		return;
	}
	if (p.scheme == NULL || p.scheme[0] == '\0')
		al_fuzz_fail("header", "challenge without a scheme");
	if (has_ctl(s) || (p.realm != NULL && has_ctl(p.realm)) ||
	    (p.service != NULL && has_ctl(p.service)) ||
	    (p.scope != NULL && has_ctl(p.scope)))
		al_fuzz_fail("header", "challenge with a control character");
	al_auth_params_clear(&p);
}

static void check_values(const char *s)
{
	uint64_t v = 0, ms = 0;
	char *next;
	const char *p;

	if (al_http_parse_retry_after(s, &ms) < 0)
		al_error_clear();
	next = al_registry__link_next(s);
	if (next != NULL && strstr(s, next) == NULL)
		al_fuzz_fail("header", "Link target not taken from the value");
	free(next);
	if (al_registry__content_range_start(s) < -1)
		al_fuzz_fail("header", "Content-Range start below -1");
	if (al_registry__parse_size(s, &v) == 0) {
		for (p = s; *p != '\0'; p++) {
			if (*p < '0' || *p > '9')
				al_fuzz_fail("header",
				             "size accepted with a non-digit");
		}
	}
}

static void check_escape(const char *s, size_t n)
{
	static char out[4 * FUZZ_HEADER_MAX + 1], again[4 * FUZZ_HEADER_MAX + 1];
	size_t len = al_str_escape(out, sizeof(out), s, n), i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)out[i];

		if (c < 0x20 || c == 0x7f)
			al_fuzz_fail("header", "escaped text holds a control");
	}
	if (al_str_needs_escape(out, len))
		al_fuzz_fail("header", "escaped text still needs escaping");
	if (al_str_escape(again, sizeof(again), out, len) != len ||
	    memcmp(again, out, len) != 0)
		al_fuzz_fail("header", "escaping twice changed the text");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size > FUZZ_HEADER_MAX)
		return 0;
	al_fuzz_quiet();
	check_line(data, size);
	check_escape((const char *)data, size);
	/* the value parsers take C strings: an embedded NUL ends them */
	s = malloc(size + 1);
	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	check_challenge(s);
	check_values(s);
	free(s);
	return 0;
}
