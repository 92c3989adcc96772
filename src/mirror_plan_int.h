/* mirror_plan_int.h: what the mirror workflow's files share: the hook
 * al_mirror_plan_run calls before it mirrors (src/mirror_plan.c), and the
 * report's error list and worst-status rule (src/mirror.c). */
#ifndef AIRLOCK_MIRROR_PLAN_INT_H
#define AIRLOCK_MIRROR_PLAN_INT_H

#include <stdarg.h>

#include "airlock/mirror.h"
#include "airlock/mirror_plan.h"

/*
 * Before a mirror: resolve releases and the catalog images of
 * cfg->operators (their images fetched, held unnamed, to be read), the
 * components, the bundle and related images the catalogs select, the Helm
 * charts of cfg (mirror_helm.h) and their images, and the additional
 * images (manifests only) into a plan in lc (cfg may be NULL). A dry run then
 * writes mapping.txt and missing.txt and returns 1 (do not mirror); a real run
 * checks the free space (unless lc->no_space_check) and returns 0 (go on) or
 * AL_EIO naming both figures. lc NULL: nothing to do, 0. Errors of single
 * images are entries of the plan, not failures of the call.
 */
int al_mirror__plan_before(al_store *store, al_mirror_lifecycle *lc,
                           const al_imageset *cfg, const char *const *releases,
                           size_t nreleases, const char *const *images,
                           size_t nimages, const al_transfer_opts *to);

/* After the mirror: count what the plan fetched as transferred by the
 * run (the mirror found those blobs present). lc NULL: nothing. */
void al_mirror__plan_after(const al_mirror_lifecycle *lc,
                           al_transfer_stats *stats);

/* Append a copy of msg to r->errors. AL_ENOMEM. */
int al_mirror__report_error(al_mirror_report *r, const char *msg);
/* The same, formatted (at most 2047 bytes of it). */
int al_mirror__report_errorf(al_mirror_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int al_mirror__report_verrorf(al_mirror_report *r, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* The roots of al_mirror_check; the list owns each root's from. */
typedef struct al_mirror__roots {
	al_store_root *v;
	size_t n, cap;
} al_mirror__roots;
/* Append digest d needed by from (taken: freed on failure, NULL is
 * AL_ENOMEM). AL_ENOMEM. */
int al_mirror__roots_add(al_mirror__roots *l, const al_digest *d, char *from);
void al_mirror__roots_clear(al_mirror__roots *l);

/* The worse of two statuses (0 = ok): a verification failure outranks a
 * runtime error; otherwise the first failure stays. */
int al_mirror__worse(int a, int b);

#endif
