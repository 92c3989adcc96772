/* http_int.h: the http module's header-line parsers, for the unit and fuzz
 * builds (not installed, not part of the API). */
#ifndef AIRLOCK_HTTP_INT_H
#define AIRLOCK_HTTP_INT_H

#include <stddef.h>

/* The status code of an "HTTP/x yyy ..." line (0 when it has no digits, at
 * most 4 digits read), or -1 when the line is not a status line. */
long al_http__status_code(const char *buf, size_t len);

/* What al_http__split_header found: a "Name: value" field; the empty line
 * that ends the headers; a line to ignore (folded continuation, no colon, a
 * blank in the field name); a line to refuse (a control character). */
#define AL_HTTP_HDR_FIELD 0
#define AL_HTTP_HDR_END 1
#define AL_HTTP_HDR_SKIP 2
#define AL_HTTP_HDR_BAD 3

/*
 * Split one raw header line (its CR LF included or not, len bytes, not
 * NUL-terminated) into a name [0, *name_len) and a value [*value_off,
 * *value_off + *value_len) with surrounding blanks trimmed. The outputs are
 * written only for AL_HTTP_HDR_FIELD. Thread-safe.
 */
int al_http__split_header(const char *buf, size_t len, size_t *name_len,
                          size_t *value_off, size_t *value_len);

#endif
