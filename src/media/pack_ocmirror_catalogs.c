/* pack_ocmirror_catalogs.c: the operator catalog records of an oc-mirror
 * v2 archive import: one per catalog of the carried image set
 * configuration, as 'airlock mirror' records one, marked untrusted before
 * they are merged (docs/pack.md "oc-mirror archives"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/catalog.h"
#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/log.h"
#include "airlock/ref.h"
#include "airlock/store.h"
#include "json_int.h"
#include "pack_ocmirror_int.h"
#include "store_int.h"

/* ref without a docker:// transport. */
static const char *bare(const char *ref)
{
	return al_str_startswith(ref, "docker://") ? ref + strlen("docker://")
	                                           : ref;
}

int al_pack__ocmirror_catalog_name(const al_imageset_operator *op, char **out)
{
	const char *cat, *repo, *colon;
	al_ref r = {0};

	*out = NULL;
	if (op->catalog == NULL)
		return 0;
	cat = bare(op->catalog);
	if (strstr(cat, "://") != NULL || al_str_startswith(cat, "oci:") ||
	    al_ref_parse(&r, cat) < 0) {
		al_error_clear();
		return 0;
	}
	repo = op->target_catalog != NULL ? op->target_catalog : r.repository;
	colon = r.digest != NULL ? strchr(r.digest, ':') : NULL;
	if (op->target_tag != NULL || r.tag != NULL)
		*out =
		    al_sprintf("%s/%s:%s", OCM_REGISTRY, repo,
		               op->target_tag != NULL ? op->target_tag : r.tag);
	else if (colon != NULL)
		*out = al_sprintf("%s/%s:%.*s-%s", OCM_REGISTRY, repo,
		                  (int)(colon - r.digest), r.digest, colon + 1);
	else {
		al_ref_clear(&r);
		return 0;
	}
	al_ref_clear(&r);
	return *out != NULL ? 0 : al_error_oom();
}

/* The manifest name holds in the store into *d: 1; 0 when the store
 * has no such name; AL_ENOMEM. */
static int held(al_store *s, const char *name, al_digest *d)
{
	al_store_image img;
	int rc;

	memset(&img, 0, sizeof(img));
	if ((rc = al_store_find(s, name, &img)) < 0) {
		if (rc == AL_ENOMEM)
			return rc;
		al_error_clear();
		return 0;
	}
	*d = img.desc.digest;
	al_store_image_clear(&img);
	return 1;
}

/* The names oc-mirror's cache gives the image ref (by tag, or by digest
 * under the tag "sha256-<hex>", as pack_ocmirror.c additional_origin),
 * into cand[0..2) (NULL where none); *pinned when ref names a digest,
 * then in *want. AL_ENOMEM. */
static int cache_names(const char *ref, char *cand[2], int *pinned,
                       al_digest *want)
{
	const char *colon;
	al_ref r = {0};
	int rc = 0;

	cand[0] = cand[1] = NULL;
	*pinned = 0;
	if (al_ref_parse(&r, bare(ref)) < 0) {
		al_error_clear();
		return 0;
	}
	if (r.digest != NULL && al_digest_parse_str(want, r.digest) == 0)
		*pinned = 1;
	al_error_clear();
	colon = r.digest != NULL ? strchr(r.digest, ':') : NULL;
	if (r.tag != NULL)
		rc = (cand[0] = al_sprintf("%s/%s:%s", OCM_REGISTRY,
		                           r.repository, r.tag)) != NULL
		         ? 0
		         : al_error_oom();
	else if (colon != NULL &&
	         ((cand[0] = al_sprintf("%s/%s@%s", OCM_REGISTRY, r.repository,
	                                r.digest)) == NULL ||
	          (cand[1] = al_sprintf("%s/%s:%.*s-%s", OCM_REGISTRY,
	                                r.repository, (int)(colon - r.digest),
	                                r.digest, colon + 1)) == NULL))
		rc = al_error_oom();
	al_ref_clear(&r);
	return rc;
}

/* Append every store name the import gave the image ref (that holds
 * the manifest ref pins, if it pins one) to arr; *found counts them. */
static int image_names(al_store *s, const char *ref, json_t *arr, size_t *found)
{
	char *cand[2];
	al_digest want, d;
	size_t i;
	int rc, pinned;

	*found = 0;
	if ((rc = cache_names(ref, cand, &pinned, &want)) < 0)
		return rc;
	for (i = 0; i < 2 && rc == 0 && cand[i] != NULL; i++) {
		if ((rc = held(s, cand[i], &d)) <= 0)
			continue;
		rc = 0;
		if (pinned && !al_digest_equal(&d, &want))
			continue;
		if (json_array_append_new(arr, json_string(cand[i])) != 0)
			rc = al_error_oom();
		(*found)++;
	}
	free(cand[0]);
	free(cand[1]);
	return rc;
}

/* The catalog as fetched, when the archives carry it apart from the
 * rebuilt one (name): the cache's name of the configuration's reference
 * holding a catalog (by digest: that digest). *sname NULL when not. */
static int fetched_catalog(al_store *s, const al_imageset_operator *op,
                           const char *name, char **sname, al_digest *sd)
{
	char *cand[2];
	al_digest want, d;
	size_t i;
	int rc, pinned;

	*sname = NULL;
	if ((rc = cache_names(op->catalog, cand, &pinned, &want)) < 0)
		return rc;
	for (i = 0; i < 2 && rc == 0 && *sname == NULL; i++) {
		if (cand[i] == NULL || (rc = held(s, cand[i], &d)) <= 0)
			continue;
		rc = 0;
		/* by tag, the name of the rebuilt catalog holds that one */
		if ((pinned && !al_digest_equal(&d, &want)) ||
		    (!pinned && strcmp(cand[i], name) == 0) ||
		    al_catalog_image_kind(s, &d, NULL) != 1) {
			al_error_clear();
			continue;
		}
		*sname = cand[i];
		cand[i] = NULL;
		*sd = d;
	}
	free(cand[0]);
	free(cand[1]);
	return rc;
}

static int set_str(json_t *o, const char *key, const char *v)
{
	return v == NULL || json_object_set_new(o, key, json_string(v)) == 0
	           ? 0
	           : al_error_oom();
}

static int set_digest(json_t *o, const char *key, const al_digest *d)
{
	char ds[AL_DIGEST_STRMAX];

	return set_str(o, key, al_digest_str(d, ds));
}

/* qsort order of JSON strings. */
static int cmp_json_str(const void *a, const void *b)
{
	return strcmp(json_string_value(*(json_t *const *)a),
	              json_string_value(*(json_t *const *)b));
}

/* arr's strings sorted, each once, into a new array *out. */
static int sorted_unique(const json_t *arr, json_t **out)
{
	size_t n = json_array_size(arr), i;
	json_t **v = NULL, *res = json_array();
	int rc = 0;

	if (res == NULL || (n > 0 && (v = calloc(n, sizeof(*v))) == NULL)) {
		json_decref(res);
		return al_error_oom();
	}
	for (i = 0; i < n; i++)
		v[i] = json_array_get(arr, i);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_json_str);
	for (i = 0; i < n && rc == 0; i++)
		if ((i == 0 || cmp_json_str(&v[i - 1], &v[i]) != 0) &&
		    json_array_append(res, v[i]) != 0)
			rc = al_error_oom();
	free(v);
	if (rc < 0)
		json_decref(res);
	else
		*out = res;
	return rc;
}

/* The record of a catalog named name (holding d) that opened as cat. */
static int build_record(al_store *s, const al_imageset_operator *op,
                        const char *name, const al_digest *d,
                        const al_catalog *cat, const char *stamp, json_t **out)
{
	json_t *rec = json_object(), *names = json_array(), *imgs = NULL;
	char **refs = NULL, *sname = NULL;
	size_t nrefs = 0, i, found, missing = 0;
	al_digest sd;
	al_ref r = {0};
	int rc;

	if (rec == NULL || names == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_catalog_images(cat, &refs, &nrefs)) < 0)
		goto out;
	for (i = 0; i < nrefs && rc == 0; i++)
		if ((rc = image_names(s, refs[i], names, &found)) == 0 &&
		    found == 0)
			missing++;
	if (rc < 0 || (rc = sorted_unique(names, &imgs)) < 0 ||
	    (rc = fetched_catalog(s, op, name, &sname, &sd)) < 0)
		goto out;
	if (missing > 0)
		al_log_warn("oc-mirror archives: catalog '%s': %zu of its %zu "
		            "images are not in the archives: its record lists "
		            "the others",
		            name, missing, nrefs);
	if (al_ref_parse(&r, name) < 0) {
		rc = al_error_wrap(AL_EPARSE, "catalog '%s'", name);
		goto out;
	}
	/* the members and order of al_store_catalog_put (store_catalogs.c)
	 * for what mirror_catalogs.c finish_one records; no platform: the
	 * archives do not say which were mirrored */
	if ((rc = set_str(rec, "name", name)) < 0 ||
	    (rc = set_digest(rec, "digest", d)) < 0 ||
	    (rc = set_str(rec, "source", op->catalog)) < 0 ||
	    (rc = set_str(rec, "sourceName", sname)) < 0 ||
	    (sname != NULL &&
	     (rc = set_digest(rec, "sourceDigest", &sd)) < 0) ||
	    (rc = set_str(rec, "targetCatalog", r.repository)) < 0 ||
	    (rc = set_str(rec, "targetTag", r.tag)) < 0)
		goto out;
	if (json_object_set_new(
	        rec, "packages",
	        json_integer((json_int_t)al_catalog_package_count(cat))) != 0 ||
	    json_object_set_new(
	        rec, "bundles",
	        json_integer((json_int_t)al_catalog_bundle_count(cat))) != 0 ||
	    (rc = set_str(rec, "mirrored", stamp)) < 0 ||
	    json_object_set(rec, "images", imgs) != 0) {
		rc = rc < 0 ? rc : al_error_oom();
		goto out;
	}
	*out = rec;
	rec = NULL;
out:
	al_ref_clear(&r);
	al_catalog_images_free(refs, nrefs);
	free(sname);
	json_decref(imgs);
	json_decref(names);
	json_decref(rec);
	return rc;
}

/* 1 when have[0..n) records name with the manifest d. */
static int recorded(const al_store_catalog *have, size_t n, const char *name,
                    const al_digest *d)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (have[i].name != NULL && strcmp(have[i].name, name) == 0 &&
		    have[i].has_digest && al_digest_equal(&have[i].digest, d))
			return 1;
	return 0;
}

/* 1 when arr holds a record named name. */
static int in_doc(const json_t *arr, const char *name)
{
	const json_t *e;
	size_t i;

	json_array_foreach(arr, i, e)
	{
		if (strcmp(al_json_str(e, "name"), name) == 0)
			return 1;
	}
	return 0;
}

/* The record of op into arr, unless the archives lack its catalog, it
 * does not open, or the store records it already. */
static int one_catalog(al_store *s, const al_imageset_operator *op,
                       const al_store_catalog *have, size_t nhave,
                       const char *stamp, json_t *arr)
{
	al_catalog *cat = NULL;
	json_t *rec = NULL;
	char *name = NULL;
	al_digest d;
	int rc, kind;

	if ((rc = al_pack__ocmirror_catalog_name(op, &name)) < 0 ||
	    name == NULL)
		return rc;
	if ((rc = held(s, name, &d)) <= 0) {
		if (rc == 0)
			al_log_warn("oc-mirror archives: catalog '%s' (%s) is "
			            "not in the archives: not recorded",
			            name, op->catalog);
		goto out;
	}
	rc = 0;
	if (recorded(have, nhave, name, &d) || in_doc(arr, name))
		goto out;
	kind = al_catalog_image_kind(s, &d, NULL);
	if (kind < 0)
		rc = kind; /* its manifest or config does not read */
	else if (kind != 1)
		rc = al_error_set(AL_EUNSUPPORTED,
		                  kind == 2 ? "an SQLite-based catalog"
		                            : "not a file-based catalog");
	else if ((rc = al_catalog_open_image(&cat, NULL, s, &d, NULL)) == 0)
		rc = build_record(s, op, name, &d, cat, stamp, &rec);
	if (rc < 0 && rc != AL_ENOMEM) {
		al_log_warn("oc-mirror archives: catalog '%s': %s: not "
		            "recorded",
		            name, al_error_message());
		al_error_clear();
		rc = 0;
	}
	if (rc == 0 && rec != NULL) {
		if (json_array_append(arr, rec) != 0)
			rc = al_error_oom();
		else
			al_log_info(
			    "oc-mirror archives: catalog %s recorded "
			    "(from %s, %zu images)",
			    name, op->catalog,
			    json_array_size(json_object_get(rec, "images")));
	}
out:
	json_decref(rec);
	al_catalog_free(cat);
	free(name);
	return rc;
}

/*
 * No key vouched for the archives: the records are marked untrusted
 * before they are merged, as an airlock pack accepted untrusted marks
 * the catalog records it merges (pack_unpack.c merge_releases,
 * al_store__untrusted_records_mark; docs/security.md "Marks of untrusted
 * imports"): catalogs shows them untrusted, pack leaves them out,
 * mirrorsets and push --cluster-resources write no CatalogSource for
 * them, a trusted import of the catalog replaces them.
 */
int al_pack__ocmirror_catalogs(al_store *s, const al_imageset *cfg,
                               const char *pack, const char *stamp)
{
	json_t *doc = NULL, *arr = NULL, *rels = NULL;
	al_store_catalog *have = NULL;
	size_t nhave = 0, i;
	int rc;

	if (cfg == NULL || cfg->noperators == 0)
		return 0;
	if ((rc = al_store_catalogs_list(s, &have, &nhave)) < 0)
		return rc;
	if ((doc = json_object()) == NULL || (arr = json_array()) == NULL ||
	    (rels = json_array()) == NULL ||
	    json_object_set(doc, "releases", rels) != 0 ||
	    json_object_set(doc, "catalogs", arr) != 0) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < cfg->noperators && rc == 0; i++)
		rc =
		    one_catalog(s, &cfg->operators[i], have, nhave, stamp, arr);
	if (rc < 0 || json_array_size(arr) == 0)
		goto out;
	if ((rc = al_store__untrusted_records_mark(s, doc, pack)) == 0)
		rc =
		    al_store__releases_import(s, doc, "the oc-mirror archives");
out:
	json_decref(rels);
	json_decref(arr);
	json_decref(doc);
	al_store_catalogs_free(have, nhave);
	return rc;
}
