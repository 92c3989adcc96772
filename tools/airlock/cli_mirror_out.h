/* cli_mirror_out.h: mirror's --json document and argument checks. */
#ifndef AIRLOCK_CLI_MIRROR_OUT_H
#define AIRLOCK_CLI_MIRROR_OUT_H

#include "airlock.h"

/* Fill the open --json document (airlock.mirror/v1, docs/json.md) from
 * res; nothing when no document is open. */
void cli_mirror_json(const al_mirror_result *res, const char *store_path);

/* One stdout line per mirror.operators[] catalog of res (docs/operators.md). */
void cli_mirror_catalog_lines(const al_mirror_result *res);

/*
 * Refuse, before anything is fetched, the arguments airlock would
 * otherwise misread: a docker:// or file:// destination in oc-mirror's
 * style, and an image with no registry (bare "extra-tag"), which docker
 * would read as docker.io/library/... Returns EXIT_OK or EXIT_USAGE (said).
 */
int cli_mirror_check_args(const char *const *releases, size_t nreleases,
                          const char *const *images, size_t nimages,
                          const al_imageset *cfg);

#endif
