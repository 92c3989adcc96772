/* mirror_preflight.h: the planner of a mirror run
 * (src/mirror/mirror_preflight.c), the hooks al_mirror_plan_run calls before
 * and after it mirrors. Not installed. */
#ifndef AL_MIRROR_PREFLIGHT_H
#define AL_MIRROR_PREFLIGHT_H

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

#endif
