/* mirror_catalogs.h: private: the operator catalogs of a mirror run
 * (mirror_catalogs.c), hooked into mirror_run.c and mirror.c. */
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
/* Roots for al_mirror_check: every recorded catalog (rebuilt and source
 * manifests) and every image it names by digest, appended to roots. */
struct al_mirror__roots;
int al_mirror__catalog_roots(al_store *s, struct al_mirror__roots *roots);

#endif
