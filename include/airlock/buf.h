/* buf.h: the length-tracked byte buffer with a mandatory maximum, and string
 * helpers. */
#ifndef AIRLOCK_BUF_H
#define AIRLOCK_BUF_H

#include <stdarg.h>
#include "common.h"

AL_BEGIN_DECL

/*
 * A growable buffer that never grows past max. ptr is always either NULL
 * or NUL-terminated after len bytes (the NUL is not counted), so text
 * content can be read as a C string via al_buf_cstr().
 */
typedef struct al_buf {
	uint8_t *ptr;
	size_t len;
	size_t cap;
	size_t max;
} al_buf;

#define AL_BUF_INIT(maxbytes)                                                  \
	{                                                                      \
		NULL, 0, 0, (maxbytes)                                         \
	}

AL_EXPORT void al_buf_init(al_buf *b, size_t max);
/* Room for n more bytes, allocated exactly (for a size known in advance:
 * appending grows by doubling); AL_ELIMIT past max, AL_ENOMEM. */
AL_EXPORT int al_buf_reserve(al_buf *b, size_t n);
/* Append n bytes; AL_ELIMIT if len + n would exceed max, AL_ENOMEM. */
AL_EXPORT int al_buf_append(al_buf *b, const void *p, size_t n);
AL_EXPORT int al_buf_puts(al_buf *b, const char *s);
AL_EXPORT int al_buf_printf(al_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
AL_EXPORT int al_buf_vprintf(al_buf *b, const char *fmt, va_list ap);
/* Content as a C string ("" when empty); borrowed. */
AL_EXPORT const char *al_buf_cstr(const al_buf *b);
/* Drop content, keep memory and max. */
AL_EXPORT void al_buf_reset(al_buf *b);
/* Free memory; the buffer is empty and reusable afterwards. */
AL_EXPORT void al_buf_free(al_buf *b);
/* Take ownership of the content (NUL-terminated, never NULL on success);
 * the buffer is left empty. *len (may be NULL) receives the length. */
AL_EXPORT char *al_buf_detach(al_buf *b, size_t *len);
/* An al_writer appending to b (AL_ELIMIT past max). */
AL_EXPORT al_writer al_buf_writer(al_buf *b);

/* strdup that returns NULL on NULL input or allocation failure. */
AL_EXPORT char *al_strdup(const char *s);
AL_EXPORT char *al_strndup(const char *s, size_t n);
/* Allocate a formatted string; NULL on failure. Caller frees. */
AL_EXPORT char *al_sprintf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* 1 if s starts with prefix. */
AL_EXPORT int al_str_startswith(const char *s, const char *prefix);
/* 1 if s ends with suffix. */
AL_EXPORT int al_str_endswith(const char *s, const char *suffix);
/*
 * Text from outside (registry answers, tar entry names, references) made safe
 * to print: each byte that could drive a terminal or forge a line is written
 * as "\xNN" (lowercase hex): C0 controls (TAB, LF, CR and ESC included), DEL,
 * C1 controls (U+0080..U+009F, and the raw bytes 0x80..0x9F), bytes that are
 * not valid UTF-8 (overlong forms, surrogates, > U+10FFFF, truncated
 * sequences), and the Unicode line / paragraph separators and bidirectional
 * controls (U+2028, U+2029, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069).
 * Valid printable UTF-8 and backslashes are kept as they are, so escaping
 * twice changes nothing.
 *
 * al_str_escape: the n bytes at s into out (capacity cap > 0, always
 * NUL-terminated); when out is too small the text is cut before the first
 * character (or escape) that does not fit. Returns the length written. No
 * allocation, no error state: usable from log handlers. Thread-safe.
 * al_buf_append_escaped: the same onto b (AL_ELIMIT past b->max: nothing of
 * the character that did not fit is appended; AL_ENOMEM).
 */
AL_EXPORT size_t al_str_escape(char *out, size_t cap, const char *s, size_t n);
AL_EXPORT int al_buf_append_escaped(al_buf *b, const char *s, size_t n);
/* 1 if the n bytes at s hold a byte al_str_escape would escape. */
AL_EXPORT int al_str_needs_escape(const char *s, size_t n);

/* Base64 (RFC 4648, padded). Caller frees. NULL on allocation failure. */
AL_EXPORT char *al_base64_encode(const uint8_t *p, size_t n);
/* Decode padded or unpadded base64 into out (bounded by out->max);
 * AL_EPARSE on invalid input. */
AL_EXPORT int al_base64_decode(al_buf *out, const char *s, size_t n);

AL_END_DECL

#endif
