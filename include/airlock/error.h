/* error.h: status codes and the thread-local error message. */
#ifndef AIRLOCK_ERROR_H
#define AIRLOCK_ERROR_H

#include "common.h"

AL_BEGIN_DECL

/*
 * Status codes: 0 is success, failures are negative. Append-only: a code
 * never changes its value. AL_EVERIFY means "the content is bad", never
 * "could not check".
 */
typedef enum al_status {
	AL_OK = 0,
	AL_EINVAL = -1,    /* bad argument or usage */
	AL_ENOMEM = -2,    /* allocation failed */
	AL_ENOTFOUND = -3, /* file, blob, manifest, key or entry not found */
	AL_EIO = -4,       /* local I/O error */
	AL_ENET = -5,      /* network error (connect, reset, TLS, DNS) */
	AL_ETIMEOUT = -6,  /* a deadline or timeout expired */
	AL_ECANCELED = -7, /* cancelled by the caller or a signal */
	AL_EPARSE = -8,    /* malformed input (JSON, YAML, reference...) */
	AL_ELIMIT = -9,    /* an input exceeded a configured bound */
	AL_EVERIFY = -10,  /* content failed verification (digest, signature) */
	AL_EAUTH = -11,    /* authentication or authorisation refused */
	AL_EEXIST = -12,   /* already exists */
	AL_ELOCKED = -13,  /* held by another process */
	AL_EUNSUPPORTED =
	    -14, /* valid but not supported (media type, algorithm) */
	AL_EPROTO =
	    -15, /* the server broke the protocol or answered an error */
} al_status;

/*
 * Set the calling thread's error message (printf-style) and return code,
 * so a failure site reads: return al_error_set(AL_EVERIFY, "...", x);
 * The message is truncated at 1 KiB.
 */
AL_EXPORT int al_error_set(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Record "out of memory" and return AL_ENOMEM, without allocating or
 * formatting: the message is preallocated (what every failed allocation
 * reports: return al_error_oom();). */
AL_EXPORT int al_error_oom(void);

/* Like al_error_set, with ": strerror(err)" appended; the code is derived
 * from errno (ENOENT -> AL_ENOTFOUND, ENOMEM -> AL_ENOMEM, EEXIST ->
 * AL_EEXIST, else AL_EIO). */
AL_EXPORT int al_error_errno(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Like al_error_set, with ": <OpenSSL error queue text>" appended; the
 * OpenSSL queue is cleared. */
AL_EXPORT int al_error_openssl(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefix the current message with context ("pulling 'x'" + ": " + old
 * message). Exactly one ": " joins them: trailing ':' and blanks of the
 * context and leading ones of the message are dropped, and a message that
 * already starts with the context is left as it is (no subject twice).
 * Returns code unchanged so callers can: return al_error_wrap(rc, ...). */
AL_EXPORT int al_error_wrap(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The calling thread's last message ("" if none). Borrowed until the next
 * al_error_* call on this thread. */
AL_EXPORT const char *al_error_message(void);

/* Forget the calling thread's message. */
AL_EXPORT void al_error_clear(void);

/* A short stable name for a status ("AL_EVERIFY"). */
AL_EXPORT const char *al_status_name(int code);

AL_END_DECL

#endif
