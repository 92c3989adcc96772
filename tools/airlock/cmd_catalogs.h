/* cmd_catalogs.h: the operator catalogs a store records, for
 * 'airlock mirrorsets' and the cluster resources of push (cmd_catalogs.c). */
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

/* 1 when the record named name of kind (AL_STORE_UNTRUSTED_CATALOG or
 * _CHART) is one an untrusted import wrote and no trusted one replaced
 * (docs/security.md "Marks of untrusted imports"), 0 if not, or a
 * negative al_status when the marks cannot be read. */
int cli_record_untrusted(al_store *store, int kind, const char *name);

#endif
