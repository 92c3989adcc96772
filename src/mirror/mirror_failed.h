/* mirror_failed.h: what the mirror workflow's files share for the
 * failed-image list (src/mirror/mirror_failed.c, docs/lifecycle.md). */
#ifndef AIRLOCK_MIRROR_FAILED_INT_H
#define AIRLOCK_MIRROR_FAILED_INT_H

#include "airlock/mirror.h"
#include "mirror_int.h" /* the failed images of a report */

/*
 * The imageset as AL_MIRROR_IMAGESET_OPTIONS_ONLY sees it: *view filled
 * with cfg's options only (pointers borrowed from cfg, nothing to
 * free), every field that selects content zero. Returns view, or NULL
 * when cfg is NULL.
 */
const al_imageset *al_mirror__options_view(al_imageset *view,
                                           const al_imageset *cfg);

/*
 * A run stopped by its plan because no image resolved (mirror_preflight.c):
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
