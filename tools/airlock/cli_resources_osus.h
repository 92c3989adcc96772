/* cli_resources_osus.h: the catalog and update-service resources of a
 * cluster-resources directory (cli_resources_osus.c). */
#ifndef AIRLOCK_CLI_RESOURCES_OSUS_H
#define AIRLOCK_CLI_RESOURCES_OSUS_H

#include <jansson.h>

#include "airlock.h"
#include "cli_cr_file.h"

/*
 * To o->dest: one cs-<name>.yaml (CatalogSource) and cc-<name>.yaml
 * (ClusterCatalog) per catalog the store records, and when the store
 * holds the graph-data image (AL_GRAPH_IMAGE_NAME) an UpdateService
 * (updateservice-airlock.yaml; oc-mirror: updateService.yaml) for the
 * release repository and that image (cli_resources_osus.c). Returns an
 * exit status.
 */
int cli_cr_catalogs_osus(al_store *store, const cli_cr_opts *o, json_t *files);

#endif
