/* store_catalogs.c: the store's operator catalog records, typed: the
 * "catalogs" array of airlock/releases.json (beside "releases"), described
 * as a record kind (store_int.h) that store_record.c reads and writes. */
#include "airlock/store.h"
#include "store_int.h"

/* The members of a catalog record, in the order they are written. */
static const al_store__field catalog_fields[] = {
    AL_STORE__S(al_store_catalog, "name", AL_STORE__KEY | AL_STORE__LISTED,
                name),
    AL_STORE__D(al_store_catalog, "digest", AL_STORE__KEY | AL_STORE__LISTED,
                digest, has_digest),
    AL_STORE__S(al_store_catalog, "source", 0, source),
    AL_STORE__S(al_store_catalog, "sourceName", 0, source_name),
    AL_STORE__D(al_store_catalog, "sourceDigest", 0, source_digest,
                has_source_digest),
    AL_STORE__S(al_store_catalog, "targetCatalog", 0, target_repo),
    AL_STORE__S(al_store_catalog, "targetTag", 0, target_tag),
    AL_STORE__N(al_store_catalog, "packages", packages),
    AL_STORE__N(al_store_catalog, "bundles", bundles),
    AL_STORE__S(al_store_catalog, "platform", 0, platform),
    AL_STORE__S(al_store_catalog, "mirrored", 0, mirrored),
    AL_STORE__V(al_store_catalog, "images", AL_STORE__STRV, images, nimages),
};

const al_store__kind al_store__catalog_kind = {
    "catalogs", "catalog", sizeof(al_store_catalog), catalog_fields,
    sizeof(catalog_fields) / sizeof(catalog_fields[0])};

void al_store_catalog_clear(al_store_catalog *c)
{
	al_store__record_clear(&al_store__catalog_kind, c);
}

void al_store_catalogs_free(al_store_catalog *list, size_t n)
{
	al_store__records_free(&al_store__catalog_kind, list, n);
}

int al_store_catalogs_list(al_store *s, al_store_catalog **out, size_t *n)
{
	void *v = NULL;
	int rc = al_store__records_list(s, &al_store__catalog_kind, &v, n);

	*out = v;
	return rc;
}

int al_store_catalog_put(al_store *s, const al_store_catalog *c)
{
	return al_store__record_put(s, &al_store__catalog_kind, c);
}
