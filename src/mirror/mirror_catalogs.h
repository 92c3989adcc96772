/* mirror_catalogs.h: private: the operator catalogs of a mirror run
 * (mirror_catalogs.c), a step of al_mirror_plan_run (mirror_run.c). */
#ifndef AIRLOCK_MIRROR_CATALOGS_H
#define AIRLOCK_MIRROR_CATALOGS_H

#include "airlock/mirror.h"

/*
 * Every mirror.operators[] entry of cfg (may be NULL): fetch the catalog
 * images, read and filter each, fetch every bundle and related image
 * (one transfer with to's options: --parallel, sources, insecure hosts,
 * platform, progress), then rebuild, name and record each catalog whose
 * images all arrived. Fills res->catalogs; errors go to res->report.
 * Returns rc made worse by the catalogs' statuses.
 */
int al_mirror__catalogs(al_store *s, const al_imageset *cfg,
                        const al_transfer_opts *to, al_mirror_result *res,
                        int rc);
/* Free res->catalogs. */
void al_mirror__catalogs_clear(al_mirror_result *res);

#endif
