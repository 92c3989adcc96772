/* cmd_catalogs.h: the operator catalogs a store records, for
 * 'airlock mirrorsets' (cmd_catalogs.c). */
#ifndef AIRLOCK_CMD_CATALOGS_H
#define AIRLOCK_CMD_CATALOGS_H

#include "airlock/buf.h"
#include "airlock/store.h"

/* airlock catalogs: the catalogs a store records. */
int cmd_catalogs(int argc, char **argv);

/*
 * Append to out, for each catalog the store records, "---" and a
 * CatalogSource, "---" and a ClusterCatalog pointing at where 'airlock
 * push' puts it under prefix (HOST[:PORT][/PATH]). Returns 1 when any
 * was written, 0 when none is recorded, or a negative al_status.
 */
int cli_catalog_resources(al_buf *out, al_store *store, const char *prefix);

#endif
