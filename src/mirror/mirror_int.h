/* mirror_int.h: the report of a mirror as every file of the mirror
 * workflow shares it (src/mirror/mirror.c, the bottom of the workflow: it calls
 * nothing of mirror above it). Not installed. */
#ifndef AL_MIRROR_INT_H
#define AL_MIRROR_INT_H

#include <stdarg.h>

#include "airlock/mirror.h"

/* Append a copy of msg to r->errors. AL_ENOMEM. */
int al_mirror__report_error(al_mirror_report *r, const char *msg);
/* The same, formatted (at most 2047 bytes of it). */
int al_mirror__report_errorf(al_mirror_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int al_mirror__report_verrorf(al_mirror_report *r, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* The worse of two statuses (0 = ok): a verification failure outranks a
 * runtime error; otherwise the first failure stays. */
int al_mirror__worse(int a, int b);

/*
 * Append one failed image to r->failed: kind (one of
 * AL_MIRROR_FAILED_KINDS), source, message copied; digest may be NULL.
 * AL_ENOMEM.
 */
int al_mirror__report_failed(al_mirror_report *r, const char *kind,
                             const char *source, const al_digest *digest,
                             int status, const char *message);

/* Free f's members and zero it. */
void al_mirror__failure_clear(al_mirror_failure *f);

/* Move from's failed images to the end of to's, each relabelled kind
 * when kind is not NULL. AL_ENOMEM (from keeps what was not moved). */
int al_mirror__failures_move(al_mirror_report *to, al_mirror_report *from,
                             const char *kind);

/*
 * A step's report (from, of al_mirror__run_images) into the run's (to):
 * the statistics and additional-image counts added, the errors and the
 * failed images moved (relabelled kind when not NULL). from keeps its
 * releases; the caller clears it. AL_ENOMEM (from keeps what was not
 * moved).
 */
int al_mirror__report_merge(al_mirror_report *to, al_mirror_report *from,
                            const char *kind);

#endif
