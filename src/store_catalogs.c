/* store_catalogs.c: the store's operator catalog records, typed: the
 * "catalogs" array of airlock/releases.json (beside "releases"). */
#include <stdlib.h>
#include <string.h>

#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "airlock/store.h"
#include "store_int.h"

void al_store_catalog_clear(al_store_catalog *c)
{
	size_t i;

	if (c == NULL)
		return;
	free(c->name);
	free(c->source);
	free(c->source_name);
	free(c->target_repo);
	free(c->target_tag);
	free(c->platform);
	free(c->mirrored);
	for (i = 0; i < c->nimages; i++)
		free(c->images[i]);
	free(c->images);
	memset(c, 0, sizeof(*c));
	c->packages = -1;
	c->bundles = -1;
}

void al_store_catalogs_free(al_store_catalog *list, size_t n)
{
	size_t i;

	if (list == NULL)
		return;
	for (i = 0; i < n; i++)
		al_store_catalog_clear(&list[i]);
	free(list);
}

static long long int_member(const json_t *e, const char *key)
{
	const json_t *v = json_object_get(e, key);

	return json_is_integer(v) && json_integer_value(v) >= 0
	           ? (long long)json_integer_value(v)
	           : -1;
}

/* One record of "catalogs" into c (cleared first). */
static int catalog_from_json(al_store_catalog *c, const json_t *e)
{
	const json_t *imgs = json_object_get(e, "images");
	const char *d;
	int rc;

	memset(c, 0, sizeof(*c));
	c->packages = int_member(e, "packages");
	c->bundles = int_member(e, "bundles");
	if ((rc = al_store__member_dup(&c->name, e, "name")) < 0 ||
	    (rc = al_store__member_dup(&c->source, e, "source")) < 0 ||
	    (rc = al_store__member_dup(&c->source_name, e, "sourceName")) < 0 ||
	    (rc = al_store__member_dup(&c->target_repo, e, "targetCatalog")) <
	        0 ||
	    (rc = al_store__member_dup(&c->target_tag, e, "targetTag")) < 0 ||
	    (rc = al_store__member_dup(&c->platform, e, "platform")) < 0 ||
	    (rc = al_store__member_dup(&c->mirrored, e, "mirrored")) < 0)
		goto fail;
	d = al_json_str(e, "digest");
	c->has_digest = d != NULL && al_digest_parse_str(&c->digest, d) == 0;
	d = al_json_str(e, "sourceDigest");
	c->has_source_digest =
	    d != NULL && al_digest_parse_str(&c->source_digest, d) == 0;
	al_error_clear();
	if ((rc = al_store__member_strv(&c->images, &c->nimages, imgs, NULL)) <
	    0)
		goto fail;
	return 0;
fail:
	al_store_catalog_clear(c);
	return rc;
}

static int catalog_read(void *elem, const json_t *e)
{
	return catalog_from_json(elem, e);
}

static void catalog_clear(void *elem)
{
	al_store_catalog_clear(elem);
}

int al_store_catalogs_list(al_store *s, al_store_catalog **out, size_t *n)
{
	void *v = NULL;
	int rc = al_store__records_list(s, "catalogs", sizeof(**out),
	                                catalog_read, catalog_clear, &v, n);

	*out = v;
	return rc;
}

static int set_int(json_t *o, const char *key, long long v)
{
	if (v < 0)
		return 0;
	return json_object_set_new(o, key, json_integer(v)) == 0
	           ? 0
	           : al_error_oom();
}

/* The record of c as JSON (members in a fixed order). */
static int catalog_to_json(const al_store_catalog *c, json_t **out)
{
	char ds[AL_DIGEST_STRMAX], ss[AL_DIGEST_STRMAX];
	json_t *o = json_object(), *imgs = json_array();
	size_t i;
	int rc;

	if (o == NULL || imgs == NULL) {
		rc = al_error_oom();
		goto fail;
	}
	al_digest_str(&c->digest, ds);
	if ((rc = al_store__member_set(o, "name", c->name)) < 0 ||
	    (rc = al_store__member_set(o, "digest", ds)) < 0 ||
	    (rc = al_store__member_set(o, "source", c->source)) < 0 ||
	    (rc = al_store__member_set(o, "sourceName", c->source_name)) < 0 ||
	    (rc = al_store__member_set(
	         o, "sourceDigest",
	         c->has_source_digest ? al_digest_str(&c->source_digest, ss)
	                              : NULL)) < 0 ||
	    (rc = al_store__member_set(o, "targetCatalog", c->target_repo)) <
	        0 ||
	    (rc = al_store__member_set(o, "targetTag", c->target_tag)) < 0 ||
	    (rc = set_int(o, "packages", c->packages)) < 0 ||
	    (rc = set_int(o, "bundles", c->bundles)) < 0 ||
	    (rc = al_store__member_set(o, "platform", c->platform)) < 0 ||
	    (rc = al_store__member_set(o, "mirrored", c->mirrored)) < 0)
		goto fail;
	for (i = 0; i < c->nimages; i++)
		if (json_array_append_new(imgs, json_string(c->images[i])) !=
		    0) {
			rc = al_error_oom();
			goto fail;
		}
	if (json_object_set_new(o, "images", imgs) != 0) {
		imgs = NULL;
		rc = al_error_oom();
		goto fail;
	}
	*out = o;
	return 0;
fail:
	json_decref(imgs);
	json_decref(o);
	return rc;
}

int al_store_catalog_put(al_store *s, const al_store_catalog *c)
{
	json_t *e = NULL;
	int rc;

	if (c == NULL || c->name == NULL || !c->has_digest)
		return al_error_set(
		    AL_EINVAL, "a catalog record needs a name and a digest");
	if ((rc = catalog_to_json(c, &e)) < 0)
		return rc;
	rc = al_store__record_save(s, "catalogs", e);
	json_decref(e);
	return rc;
}

int al_store__catalogs_merge(json_t *doc, const json_t *other, const char *what)
{
	/* a re-mirrored catalog replaces its record */
	return al_store__records_merge(doc, other, "catalogs", what);
}

int al_store__catalogs_inventory(al_store *s, json_t *inv)
{
	al_store_catalog *list = NULL;
	json_t *arr = json_array();
	size_t n = 0, i;
	int rc = 0;

	if (arr == NULL || json_object_set_new(inv, "catalogs", arr) != 0)
		return al_error_oom();
	if (al_store_catalogs_list(s, &list, &n) < 0) {
		al_error_clear();
		return 0;
	}
	for (i = 0; rc == 0 && i < n; i++) {
		char ds[AL_DIGEST_STRMAX];

		if (list[i].name == NULL || !list[i].has_digest)
			continue;
		if (json_array_append_new(
		        arr,
		        json_pack("{s:s, s:s}", "name", list[i].name, "digest",
		                  al_digest_str(&list[i].digest, ds))) != 0)
			rc = al_error_oom();
	}
	al_store_catalogs_free(list, n);
	return rc;
}
