/* mirror_failed.h: what the mirror workflow's files share for the
 * failed-image list (src/mirror_failed.c, docs/lifecycle.md). */
#ifndef AIRLOCK_MIRROR_FAILED_INT_H
#define AIRLOCK_MIRROR_FAILED_INT_H

#include "airlock/mirror.h"

/*
 * Append one failed image to r->failed: kind (one of
 * AL_MIRROR_FAILED_KINDS), source, message copied; digest may be NULL.
 * AL_ENOMEM.
 */
int al_mirror__report_failed(al_mirror_report *r, const char *kind,
                             const char *source, const al_digest *digest,
                             int status, const char *message);

/* Move from's failed images to the end of to's, each relabelled kind
 * when kind is not NULL. AL_ENOMEM (from keeps what was not moved). */
int al_mirror__failures_move(al_mirror_report *to, al_mirror_report *from,
                             const char *kind);

/*
 * The imageset as AL_MIRROR_IMAGESET_OPTIONS_ONLY sees it: *view filled
 * with cfg's options only (pointers borrowed from cfg, nothing to
 * free), every field that selects content zero. Returns view, or NULL
 * when cfg is NULL.
 */
const al_imageset *al_mirror__options_view(al_imageset *view,
                                           const al_imageset *cfg);

/*
 * A run stopped by its plan because no image resolved (mirror_plan.c):
 * every entry of lc->plan failed, so each is recorded in res (releases
 * as "release", the rest as "image") and the list written, as a run
 * that ran would. Nothing when lc or its plan is NULL, or when any entry
 * resolved (a refusal for space is not a failure of images). The
 * thread's error message is kept.
 */
struct al_mirror_lifecycle;
int al_mirror__failed_from_plan(const struct al_mirror_lifecycle *lc,
                                al_mirror_result *res, const char *store_path);

#endif
