/* pack_ocmirror_int.h: what pack_ocmirror.c and pack_ocmirror_catalogs.c
 * share (internal, not installed): the name of oc-mirror's cache and the
 * catalog records of an oc-mirror v2 archive import (docs/pack.md
 * "oc-mirror archives"). */
#ifndef AIRLOCK_PACK_OCMIRROR_INT_H
#define AIRLOCK_PACK_OCMIRROR_INT_H

#include "airlock/imageset.h"
#include "airlock/store.h"

/* the name airlock gives what the archive holds: oc-mirror's local cache
 * registry (its --port default), from which it pushes */
#define OCM_REGISTRY "localhost:55000"

/*
 * The store name oc-mirror's cache gives op's (rebuilt) catalog,
 * OCM_REGISTRY/<targetCatalog or path>:<targetTag, tag or
 * "sha256-<hex>"> (operator/common.go prepareM2DCopyBatch), into *out
 * (caller frees); *out NULL when the catalog came from no registry (an
 * oci: path) or its reference names neither tag nor digest. AL_ENOMEM.
 */
int al_pack__ocmirror_catalog_name(const al_imageset_operator *op, char **out);

/*
 * One catalog record per operator catalog of cfg whose rebuilt catalog
 * the import named (al_pack__ocmirror_catalog_name) and that opens, as
 * 'airlock mirror' records one (mirror_catalogs.c finish_one), its
 * bundle and related images by the store names the import gave them;
 * stamp (the archives' time) as "mirrored". The records are marked
 * untrusted under pack before they are merged; a catalog the store
 * records already with the same digest keeps its record. cfg NULL:
 * nothing. A catalog that does not open is said and left unrecorded.
 */
int al_pack__ocmirror_catalogs(al_store *s, const al_imageset *cfg,
                               const char *pack, const char *stamp);

#endif
