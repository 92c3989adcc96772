/* delete.c: airlock delete: releases and images out of a store (mark and
 * sweep over index.json, releases, components, attachments, referrers)
 * and their manifests out of a registry, indexes before children. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/buf.h"
#include "airlock/delete.h"
#include "airlock/error.h"
#include "airlock/log.h"
#include "airlock/mirror.h"
#include "airlock/oci.h"
#include "airlock/ref.h"
#include "airlock/registry.h"
#include "airlock/release.h"
#include "airlock/update.h"
#include "airlock/catalog.h"
#include "airlock/graph.h"
#include "airlock/layout.h"
#include "catalog_int.h"
#include "error_int.h"
#include "array_int.h"

#define WALK_DEPTH 8
#define ATTACH_PASSES 4

typedef struct del {
	al_store *s;
	const al_delete_opts *o;
	al_delete_result *res;
	al_store_image *imgs;
	size_t nimgs;
	char *del_img; /* per index entry */
	al_store_release *rels;
	size_t nrels;
	char *del_rel;          /* per release record */
	json_t *comp_of;        /* per release record i: "<i>" -> [digests] */
	al_store_catalog *cats; /* catalog and chart records (read when a */
	size_t ncats;           /* DeleteImageSetConfiguration names parts */
	al_store_chart *charts; /* of them) */
	size_t ncharts;
	char *del_chart; /* per chart record */
	int parts_read;
} del;

static int strv_push(char ***v, size_t *n, char *s)
{
	char **grown;

	if (s == NULL)
		return al_error_oom();
	if ((grown = realloc(*v, (*n + 1) * sizeof(*grown))) == NULL) {
		free(s);
		return al_error_oom();
	}
	grown[(*n)++] = s;
	*v = grown;
	return 0;
}

void al_delete_result_clear(al_delete_result *res)
{
	if (res == NULL)
		return;
	al__strv_free(res->releases, res->nreleases);
	al__strv_free(res->names, res->nnames);
	al__strv_free(res->registry_manifests, res->nregistry_manifests);
	AL_RESULT_ZERO(res);
}

/* ---- which records and names the keys select ---- */

static int is_digest_key(const char *k)
{
	al_digest d;

	return al_str_startswith(k, "sha256:") &&
	       al_digest_parse_str(&d, k) == 0;
}

static int release_key(del *d, const char *key)
{
	size_t i, hit = 0;

	for (i = 0; i < d->nrels; i++) {
		const al_store_release *r = &d->rels[i];
		if ((r->version != NULL && strcmp(r->version, key) == 0) ||
		    (r->digest_text != NULL &&
		     strcmp(r->digest_text, key) == 0)) {
			d->del_rel[i] = 1;
			hit++;
		}
	}
	if (hit == 0)
		return al_error_set(AL_ENOTFOUND,
		                    "no release '%s' in store '%s' "
		                    "(airlock/releases.json)",
		                    key, al_store_path(d->s));
	return 0;
}

/* key with its transport dropped and, for a docker reference, normalised
 * (what mirror names images); caller frees */
static char *normal_name(const char *key)
{
	al_ref r;
	char *n;

	if (al_str_startswith(key, "docker://"))
		key += strlen("docker://");
	if (al_ref_parse(&r, key) < 0)
		return al_strdup(key);
	n = al_ref_string(&r);
	al_ref_clear(&r);
	return n;
}

static int image_key(del *d, const char *key, int quiet)
{
	char *norm = NULL;
	size_t i, hit = 0;
	al_digest dg;
	int by_digest = is_digest_key(key);

	if (by_digest)
		al_digest_parse_str(&dg, key);
	else if ((norm = normal_name(key)) == NULL)
		return al_error_oom();
	for (i = 0; i < d->nimgs; i++) {
		const al_store_image *im = &d->imgs[i];
		if ((by_digest && al_digest_equal(&im->desc.digest, &dg)) ||
		    (!by_digest && (strcmp(im->name, key) == 0 ||
		                    strcmp(im->name, norm) == 0))) {
			d->del_img[i] = 1;
			hit++;
		}
	}
	free(norm);
	if (hit == 0 && !quiet)
		return al_error_set(AL_ENOTFOUND,
		                    "no image '%s' in store '%s' (index.json)",
		                    key, al_store_path(d->s));
	return hit > 0 ? 1 : 0;
}

/* A reference that names a release (by its index name or record source,
 * its version or digest) deletes the release; anything else the image. */
static int ref_key(del *d, const char *ref)
{
	char *norm = normal_name(ref);
	size_t i, j;
	int hit = 0;

	if (norm == NULL)
		return al_error_oom();
	for (i = 0; i < d->nrels; i++) {
		const al_store_release *r = &d->rels[i];
		/* oc-mirror names a release image here; a version or a
		 * digest (as on the command line) names its record */
		int match =
		    (r->source != NULL && (strcmp(r->source, ref) == 0 ||
		                           strcmp(r->source, norm) == 0)) ||
		    (r->version != NULL && strcmp(r->version, ref) == 0) ||
		    (r->digest_text != NULL &&
		     strcmp(r->digest_text, ref) == 0);
		for (j = 0; !match && j < d->nimgs; j++)
			match = r->has_digest &&
			        strcmp(d->imgs[j].name, norm) == 0 &&
			        al_digest_equal(&d->imgs[j].desc.digest,
			                        &r->digest);
		if (match) {
			d->del_rel[i] = 1;
			hit = 1;
		}
	}
	free(norm);
	if (hit)
		return 0;
	return image_key(d, ref, 0) < 0 ? -1 : 0;
}

static int in_range(const char *v, const al_delete_channel *ch)
{
	if (v == NULL)
		return 0;
	if (ch->min_version != NULL &&
	    al_version_compare(v, ch->min_version) < 0)
		return 0;
	if (ch->max_version != NULL &&
	    al_version_compare(v, ch->max_version) > 0)
		return 0;
	return 1;
}

/* ---- parts of catalogs and charts (delete.operators[].packages,
 * delete.helm): the images oc-mirror's delete would list, less what
 * something kept still uses ---- */

static int read_parts(del *d)
{
	if (d->parts_read)
		return 0;
	d->parts_read = 1;
	int rc;

	if ((rc = al_store_catalogs_list(d->s, &d->cats, &d->ncats)) < 0 ||
	    (rc = al_store_charts_list(d->s, &d->charts, &d->ncharts)) < 0)
		return rc;
	if ((d->del_chart = calloc(d->ncharts + 1, 1)) == NULL)
		return al_error_oom();
	return 0;
}

static int strv_has(char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

/* 1 when img is needed by a catalog record other than skip, a chart
 * record not being deleted, or keep (a kept part of skip). */
static int part_kept(const del *d, const char *img,
                     const al_store_catalog *skip, char *const *keep,
                     size_t nkeep)
{
	size_t i;

	if (strv_has(keep, nkeep, img))
		return 1;
	for (i = 0; i < d->ncats; i++)
		if (&d->cats[i] != skip &&
		    strv_has(d->cats[i].images, d->cats[i].nimages, img))
			return 1;
	for (i = 0; i < d->ncharts; i++)
		if (!d->del_chart[i] &&
		    strv_has(d->charts[i].images, d->charts[i].nimages, img))
			return 1;
	return 0;
}

/* Delete the store names of imgs no kept part needs; the count deleted. */
static size_t drop_images(del *d, char *const *imgs, size_t n,
                          const al_store_catalog *skip, char *const *keep,
                          size_t nkeep)
{
	size_t i, hit = 0;

	for (i = 0; i < n; i++)
		if (!part_kept(d, imgs[i], skip, keep, nkeep) &&
		    image_key(d, imgs[i], 1) > 0)
			hit++;
	return hit;
}

/*
 * delete.operators[] with packages (or targetCatalog/targetTag): the
 * catalog's record found by the name airlock mirror gave the rebuilt
 * catalog (al_catalog_names, from the same fields), else by the catalog
 * as written. Without packages the rebuilt catalog's image goes. With
 * packages, the images their filter selects (oc-mirror's delete runs the
 * mirror's collector on the delete configuration) from the catalog as
 * fetched (the rebuilt one when the fetched one is gone), less every image
 * the record's other packages, other catalogs or kept charts need. The
 * rebuilt catalog stays as it is, as oc-mirror leaves it.
 */
static int catalog_part(del *d, const al_delete_config *c,
                        const al_imageset_operator *op, const char *written)
{
	al_catalog_selection *sel = NULL, *rest_sel = NULL;
	al_imageset_op_package *rest = NULL;
	al_imageset_operator rest_op;
	al_catalog *rebuilt = NULL;
	const al_store_catalog *rec = NULL;
	char *src = NULL, *dst = NULL, *repo = NULL;
	size_t i, j, nrest = 0, hit;
	int rc;

	memset(&rest_op, 0, sizeof(rest_op));
	if ((rc = read_parts(d)) < 0)
		return rc;
	if ((rc = al_catalog_names(op, &src, &dst, &repo)) < 0)
		goto out;
	for (i = 0; i < d->ncats && rec == NULL; i++)
		if (d->cats[i].name != NULL &&
		    strcmp(d->cats[i].name, dst) == 0)
			rec = &d->cats[i];
	for (i = 0; i < d->ncats && rec == NULL; i++)
		if (op->target_catalog == NULL && op->target_tag == NULL &&
		    d->cats[i].source != NULL &&
		    strcmp(d->cats[i].source, written) == 0)
			rec = &d->cats[i];
	if (rec == NULL || !rec->has_digest) {
		rc = al_error_set(AL_ENOTFOUND,
		                  "%s: no catalog '%s' (mirrored as '%s') "
		                  "recorded in store '%s'",
		                  c->path != NULL ? c->path : "", written, dst,
		                  al_store_path(d->s));
		goto out;
	}
	if (op->npackages == 0) {
		rc = image_key(d, rec->name, 0) < 0 ? -1 : 0;
		goto out;
	}
	rc = rec->has_source_digest
	         ? al_catalog__select_digest(&sel, d->s, op,
	                                     &rec->source_digest, rec->platform)
	         : AL_ENOTFOUND;
	if (rc < 0 && (rc = al_catalog__select_digest(
	                   &sel, d->s, op, &rec->digest, rec->platform)) < 0)
		goto out;
	/* what the record's other packages keep: every bundle of them */
	if ((rc = al_catalog_open_image(&rebuilt, NULL, d->s, &rec->digest,
	                                rec->platform)) < 0)
		goto out;
	rest = calloc(al_catalog_package_count(rebuilt) + 1, sizeof(*rest));
	if (rest == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < al_catalog_package_count(rebuilt); i++) {
		const char *name = al_catalog_package_name(rebuilt, i);
		int named = 0;
		for (j = 0; j < op->npackages && !named; j++)
			named = strcmp(op->packages[j].name, name) == 0;
		if (!named)
			rest[nrest++].name = (char *)(uintptr_t)name;
	}
	if (nrest > 0) {
		rest_op.catalog = op->catalog;
		rest_op.target_catalog = op->target_catalog;
		rest_op.target_tag = op->target_tag;
		rest_op.full = 1;
		rest_op.packages = rest;
		rest_op.npackages = nrest;
		if ((rc = al_catalog__select_digest(&rest_sel, d->s, &rest_op,
		                                    &rec->digest,
		                                    rec->platform)) < 0)
			goto out;
	}
	hit = drop_images(d, sel->images, sel->nimages, rec,
	                  rest_sel != NULL ? rest_sel->images : NULL,
	                  rest_sel != NULL ? rest_sel->nimages : 0);
	al_log_info("%s: catalog %s: %zu of the %zu images of the packages "
	            "named are in the store and used by nothing kept",
	            c->path != NULL ? c->path : "", rec->name, hit,
	            sel->nimages);
	rc = 0;
out:
	al_catalog_selection_free(sel);
	al_catalog_selection_free(rest_sel);
	al_catalog_free(rebuilt);
	free(rest);
	free(src);
	free(dst);
	free(repo);
	return rc;
}

/* A chart record a delete.helm chart names: a repository chart by the
 * repository's URL (the archive came from under it), name and version
 * (any when none is given); a local chart by its path or name. */
static int chart_matches(const al_store_chart *r, const char *url,
                         const al_imageset_helm_chart *ch)
{
	size_t n;

	if (r->chart == NULL || r->source == NULL)
		return 0;
	if (url == NULL)
		return (ch->path != NULL && strcmp(r->source, ch->path) == 0) ||
		       strcmp(r->chart, ch->name) == 0;
	n = strlen(url);
	while (n > 0 && url[n - 1] == '/')
		n--;
	if (strncmp(r->source, url, n) != 0 ||
	    (r->source[n] != '/' && r->source[n] != '\0'))
		return 0;
	if (ch == NULL)
		return 1;
	return strcmp(r->chart, ch->name) == 0 &&
	       (ch->version == NULL ||
	        (r->version != NULL && strcmp(r->version, ch->version) == 0));
}

static int chart_part(del *d, const al_delete_config *c, const char *url,
                      const al_imageset_helm_chart *ch, const char *what)
{
	size_t i, hit = 0;
	int rc;

	if ((rc = read_parts(d)) < 0)
		return rc;
	for (i = 0; i < d->ncharts; i++)
		if (chart_matches(&d->charts[i], url, ch)) {
			d->del_chart[i] = 1;
			hit++;
		}
	if (hit == 0)
		al_log_warn("%s: helm %s: no chart recorded in the store "
		            "matches",
		            c->path != NULL ? c->path : "", what);
	return 0;
}

/* delete.helm: the chart artifacts the entries name and their images
 * no kept chart or catalog needs. */
static int helm_parts(del *d, const al_delete_config *c)
{
	const al_imageset *ct = c->content;
	size_t i, j;
	int rc;

	for (i = 0; i < ct->nhelm_repos; i++) {
		const al_imageset_helm_repo *r = &ct->helm_repos[i];
		if (r->ncharts == 0 &&
		    (rc = chart_part(d, c, r->url, NULL, r->name)) < 0)
			return rc;
		for (j = 0; j < r->ncharts; j++)
			if ((rc = chart_part(d, c, r->url, &r->charts[j],
			                     r->charts[j].name)) < 0)
				return rc;
	}
	for (i = 0; i < ct->nhelm_local; i++)
		if ((rc = chart_part(d, c, NULL, &ct->helm_local[i],
		                     ct->helm_local[i].name)) < 0)
			return rc;
	for (i = 0; i < d->ncharts; i++) {
		if (!d->del_chart[i])
			continue;
		if (d->charts[i].name != NULL)
			image_key(d, d->charts[i].name, 1);
		drop_images(d, d->charts[i].images, d->charts[i].nimages, NULL,
		            NULL, 0);
	}
	return 0;
}

static int apply_config(del *d, const al_delete_config *c)
{
	size_t i, j, k;
	int rc;

	if (c->narchitectures > 0)
		al_log_warn("%s: delete.platform.architectures is not a filter "
		            "in airlock delete: the releases named go whatever "
		            "their architecture",
		            c->path != NULL ? c->path : "");
	for (i = 0; i < c->nreleases; i++)
		if ((rc = ref_key(d, c->releases[i])) < 0)
			return rc;
	for (i = 0; i < c->nchannels; i++) {
		const al_delete_channel *ch = &c->channels[i];
		size_t hit = 0;
		for (j = 0; j < d->nrels; j++) {
			const al_store_release *r = &d->rels[j];
			int named = 0;
			for (k = 0; k < r->nchannels && !named; k++)
				named = strcmp(r->channels[k], ch->name) == 0;
			if (named && in_range(r->version, ch)) {
				d->del_rel[j] = 1;
				hit++;
			}
		}
		if (hit == 0)
			al_log_warn("%s: channel %s: no release recorded in "
			            "the store is in range",
			            c->path != NULL ? c->path : "", ch->name);
	}
	for (i = 0; i < c->nimages; i++)
		if ((rc = ref_key(d, c->images[i])) < 0)
			return rc;
	for (i = 0; i < c->ncatalogs; i++) {
		const al_imageset_operator *op =
		    c->content != NULL && i < c->content->noperators
		        ? &c->content->operators[i]
		        : NULL;
		if (op != NULL &&
		    (op->npackages > 0 || op->target_catalog != NULL ||
		     op->target_tag != NULL)) {
			if ((rc = catalog_part(d, c, op, c->catalogs[i])) < 0)
				return rc;
		} else if ((rc = image_key(d, c->catalogs[i], 0)) < 0) {
			return rc;
		}
	}
	if (c->content != NULL && (rc = helm_parts(d, c)) < 0)
		return rc;
	/* mirror.platform.graph: true stored the graph-data image there */
	if (c->graph && image_key(d, AL_GRAPH_IMAGE_NAME, 1) == 0)
		al_log_warn("%s: delete.platform.graph: no graph image (%s) "
		            "in the store",
		            c->path != NULL ? c->path : "",
		            AL_GRAPH_IMAGE_NAME);
	return 0;
}

/* ---- components ---- */

/*
 * The component digests of release record i, read once ("<i>" -> [..]);
 * NULL when memory ran out. A component missing from the list would let
 * a kept release lose it (the keep set is built from this list), so a
 * failed allocation fails the list, never shortens it; a release that
 * cannot be opened for another reason (not in the store) has none.
 */
static const json_t *components(del *d, size_t i)
{
	char key[32];
	json_t *arr;
	al_release *r = NULL;
	size_t j;
	int rc = 0;

	if (snprintf(key, sizeof(key), "%zu", i) >= (int)sizeof(key))
		return NULL;
	if ((arr = json_object_get(d->comp_of, key)) != NULL)
		return arr;
	if ((arr = json_array()) == NULL)
		return NULL;
	if (d->rels[i].has_digest &&
	    (rc = al_release_open(&r, d->s, &d->rels[i].digest,
	                          d->rels[i].platform)) < 0)
		r = NULL;
	for (j = 0; r != NULL && j < al_release_component_count(r); j++) {
		const al_release_component *c = al_release_component_at(r, j);
		al_ref ref;

		/* a reference that does not parse names no digest */
		if ((rc = al_ref_parse(&ref, c->image)) < 0) {
			if (rc == AL_ENOMEM)
				break;
			continue;
		}
		if (ref.digest != NULL &&
		    json_array_append_new(arr, json_string(ref.digest)) < 0)
			rc = AL_ENOMEM;
		al_ref_clear(&ref);
		if (rc == AL_ENOMEM)
			break;
	}
	al_release_free(r);
	if (rc == AL_ENOMEM || json_object_set_new(d->comp_of, key, arr) != 0) {
		if (rc == AL_ENOMEM)
			json_decref(arr);
		return NULL;
	}
	return arr;
}

/* 1 when digest (a string) is a kept release or one of its components */
static int kept_release_needs(del *d, const char *ds)
{
	size_t i, j;

	for (i = 0; i < d->nrels; i++) {
		const json_t *arr;
		if (d->del_rel[i])
			continue;
		if (d->rels[i].digest_text != NULL &&
		    strcmp(d->rels[i].digest_text, ds) == 0)
			return 1;
		if ((arr = components(d, i)) == NULL)
			return -1;
		for (j = 0; j < json_array_size(arr); j++)
			if (strcmp(json_string_value(json_array_get(arr, j)),
			           ds) == 0)
				return 1;
	}
	return 0;
}

static int name_by_digest(const char *name, const char *ds)
{
	size_t nl = strlen(name), dl = strlen(ds);

	return nl > dl + 1 && name[nl - dl - 1] == '@' &&
	       strcmp(name + nl - dl, ds) == 0;
}

/* The names of what deleted releases are: the release image's names, and
 * the by-digest names of components that no kept release needs. */
static int release_names(del *d)
{
	size_t i, j, k;
	int r;

	for (i = 0; i < d->nrels; i++) {
		const json_t *arr;
		if (!d->del_rel[i] || !d->rels[i].has_digest)
			continue;
		for (k = 0; k < d->nimgs; k++)
			if (al_digest_equal(&d->imgs[k].desc.digest,
			                    &d->rels[i].digest))
				d->del_img[k] = 1;
		if ((arr = components(d, i)) == NULL)
			return al_error_oom();
		for (j = 0; j < json_array_size(arr); j++) {
			const char *ds =
			    json_string_value(json_array_get(arr, j));
			if ((r = kept_release_needs(d, ds)) < 0)
				return al_error_oom();
			if (r)
				continue;
			for (k = 0; k < d->nimgs; k++)
				if (name_by_digest(d->imgs[k].name, ds))
					d->del_img[k] = 1;
		}
	}
	return 0;
}

/* ---- digests still or no longer named ---- */

static int digest_kept(const del *d, const al_digest *dg)
{
	size_t i;

	for (i = 0; i < d->nimgs; i++)
		if (!d->del_img[i] &&
		    al_digest_equal(&d->imgs[i].desc.digest, dg))
			return 1;
	for (i = 0; i < d->nrels; i++)
		if (!d->del_rel[i] && d->rels[i].has_digest &&
		    al_digest_equal(&d->rels[i].digest, dg))
			return 1;
	return 0;
}

/* 1 when dg is something deleted and nothing kept names it */
static int digest_gone(const del *d, const al_digest *dg)
{
	size_t i;
	int deleted = 0;

	for (i = 0; i < d->nimgs && !deleted; i++)
		deleted = d->del_img[i] &&
		          al_digest_equal(&d->imgs[i].desc.digest, dg);
	for (i = 0; i < d->nrels && !deleted; i++)
		deleted = d->del_rel[i] && d->rels[i].has_digest &&
		          al_digest_equal(&d->rels[i].digest, dg);
	return deleted && !digest_kept(d, dg);
}

/* "REPO:sha256-<hex>.sig" (.att, .sbom): the subject's digest */
static int attachment_subject(const char *name, al_digest *out)
{
	const char *t = strrchr(name, ':');
	char buf[AL_DIGEST_STRMAX + 8];
	const char *dot;
	size_t n;

	if (t == NULL || !al_str_startswith(t + 1, "sha256-"))
		return 0;
	t += 1 + strlen("sha256-");
	if ((dot = strchr(t, '.')) == NULL ||
	    (strcmp(dot, ".sig") != 0 && strcmp(dot, ".att") != 0 &&
	     strcmp(dot, ".sbom") != 0))
		return 0;
	n = (size_t)(dot - t);
	if (n + 8 >= sizeof(buf))
		return 0;
	memcpy(buf, "sha256:", 7);
	memcpy(buf + 7, t, n);
	buf[7 + n] = '\0';
	return al_digest_parse_str(out, buf) == 0;
}

/* Attachments and referrers of what is gone go with it (again for
 * referrers of referrers, a few passes). */
static int attachments(del *d)
{
	size_t i, pass;
	int changed = 1;

	for (pass = 0; pass < ATTACH_PASSES && changed; pass++) {
		changed = 0;
		for (i = 0; i < d->nimgs; i++) {
			al_buf b = AL_BUF_INIT(AL_MANIFEST_MAX);
			al_manifest m;
			al_digest subj;
			int gone = 0;

			if (d->del_img[i])
				continue;
			if (attachment_subject(d->imgs[i].name, &subj))
				gone = digest_gone(d, &subj);
			if (!gone &&
			    al_store_read_blob(d->s, &d->imgs[i].desc.digest,
			                       &b) == 0 &&
			    al_manifest_parse(&m, b.ptr, b.len,
			                      d->imgs[i].desc.media_type,
			                      d->imgs[i].name) == 0) {
				gone = m.has_subject &&
				       digest_gone(d, &m.subject.digest);
				al_manifest_clear(&m);
			}
			al_buf_free(&b);
			if (gone) {
				d->del_img[i] = 1;
				changed = 1;
			}
		}
	}
	return 0;
}

/* ---- the cluster records ---- */

static int guard(del *d)
{
	size_t f, i, j;
	int rc = 0;

	for (f = 0; f < d->o->nstate_files; f++) {
		char **held = NULL;
		size_t nheld = 0;
		if ((rc = al_update_record_releases(d->o->state_files[f], &held,
		                                    &nheld)) < 0)
			return rc;
		for (i = 0; i < d->nrels && rc == 0; i++) {
			const al_store_release *r = &d->rels[i];
			if (!d->del_rel[i] || r->digest_text == NULL)
				continue;
			for (j = 0; j < nheld && rc == 0; j++) {
				if (strcmp(held[j], r->digest_text) != 0)
					continue;
				if (d->o->force) {
					al_log_warn(
					    "deleting release %s (%s), "
					    "which the cluster record "
					    "'%s' holds on to (--force)",
					    r->version ? r->version : "?",
					    r->digest_text,
					    d->o->state_files[f]);
					continue;
				}
				rc = al_error_set(
				    AL_EINVAL,
				    "release %s (%s) is current for the "
				    "cluster record '%s' (its desired release "
				    "or the one it runs): not deleted (--force "
				    "to delete it anyway)",
				    r->version ? r->version : "?",
				    r->digest_text, d->o->state_files[f]);
			}
		}
		al__strv_free(held, nheld);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- mark ---- */

static int walk(al_store *s, const al_digest *dg, json_t *set, int depth)
{
	al_buf b = AL_BUF_INIT(AL_MANIFEST_MAX);
	char ds[AL_DIGEST_STRMAX];
	al_manifest m;
	uint64_t size = 0;
	size_t i;
	int rc = 0;

	al_digest_str(dg, ds);
	if (json_object_get(set, ds) != NULL)
		return 0;
	if (al_store_has_blob(s, dg, &size) != 1)
		return 0; /* missing: nothing to free */
	if (json_object_set_new(set, ds, json_integer((json_int_t)size)) != 0)
		return al_error_oom();
	if (depth > WALK_DEPTH || al_store_read_blob(s, dg, &b) < 0 ||
	    al_manifest_parse(&m, b.ptr, b.len, NULL, ds) < 0) {
		al_buf_free(&b);
		return 0;
	}
	al_buf_free(&b);
	if (m.is_index) {
		for (i = 0; i < m.nmanifests && rc == 0; i++)
			rc = walk(s, &m.manifests[i].digest, set, depth + 1);
	} else {
		const al_descriptor *c = &m.config;
		for (i = 0; i <= m.nlayers && rc == 0; i++) {
			const al_descriptor *x = i == 0 ? c : &m.layers[i - 1];
			uint64_t sz = 0;
			al_digest_str(&x->digest, ds);
			if (json_object_get(set, ds) != NULL ||
			    al_store_has_blob(s, &x->digest, &sz) != 1)
				continue;
			if (json_object_set_new(
			        set, ds, json_integer((json_int_t)sz)) != 0)
				rc = al_error_oom();
		}
	}
	al_manifest_clear(&m);
	return rc;
}

/* Every blob the (kept, or all when all) names, releases and components
 * reach. */
static int mark(del *d, int all, json_t *set)
{
	size_t i, j;
	int rc;

	for (i = 0; i < d->nimgs; i++)
		if ((all || !d->del_img[i]) &&
		    (rc = walk(d->s, &d->imgs[i].desc.digest, set, 0)) < 0)
			return rc;
	for (i = 0; i < d->nrels; i++) {
		const json_t *arr;
		if ((!all && d->del_rel[i]) || !d->rels[i].has_digest)
			continue;
		if ((rc = walk(d->s, &d->rels[i].digest, set, 0)) < 0)
			return rc;
		if ((arr = components(d, i)) == NULL)
			return al_error_oom();
		for (j = 0; j < json_array_size(arr); j++) {
			al_digest cd;
			if (al_digest_parse_str(
			        &cd, json_string_value(
			                 json_array_get(arr, j))) == 0 &&
			    (rc = walk(d->s, &cd, set, 0)) < 0)
				return rc;
		}
	}
	return 0;
}

static int estimate_freed(del *d)
{
	json_t *before = json_object(), *after = json_object(), *v;
	const char *k;
	int rc;

	if (before == NULL || after == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = mark(d, 1, before)) < 0 || (rc = mark(d, 0, after)) < 0)
		goto out;
	json_object_foreach(before, k, v)
	{
		if (json_object_get(after, k) != NULL)
			continue;
		d->res->blobs_freed++;
		d->res->bytes_freed += (uint64_t)json_integer_value(v);
	}
out:
	json_decref(before);
	json_decref(after);
	return rc;
}

/* ---- the registry ---- */

typedef struct rman {
	char *repo;
	al_digest digest;
	int depth;
} rman;

typedef struct rplan {
	rman *v;
	size_t n;
	json_t *seen; /* "repo digest" */
	json_t *keep; /* "repo digest" a kept image needs */
} rplan;

/* Add (repo, dg) at depth to set: 1 when new, or (the delete set) when
 * it was there at a smaller depth, so that the caller walks its children
 * again, deeper: a manifest named on its own and also a child of an index
 * that goes is deleted after that index. 0 when already there. */
static int rplan_add(rplan *p, const char *repo, const al_digest *dg, int depth,
                     json_t *set)
{
	char ds[AL_DIGEST_STRMAX];
	char *key;
	const json_t *at;
	rman *grown;

	al_digest_str(dg, ds);
	if ((key = al_sprintf("%s %s", repo, ds)) == NULL)
		return al_error_oom();
	if ((at = json_object_get(set, key)) != NULL) {
		json_int_t k = json_integer_value(at);
		free(key);
		if (set == p->keep || k < 0 || (size_t)k >= p->n ||
		    p->v[k].depth >= depth)
			return 0;
		p->v[k].depth = depth;
		return 1;
	}
	if (json_object_set_new(set, key,
	                        set == p->keep
	                            ? json_true()
	                            : json_integer((json_int_t)p->n)) != 0) {
		free(key);
		return al_error_oom();
	}
	free(key);
	if (set == p->keep)
		return 1;
	if ((grown = realloc(p->v, (p->n + 1) * sizeof(*grown))) == NULL)
		return al_error_oom();
	p->v = grown;
	p->v[p->n].repo = al_strdup(repo);
	p->v[p->n].digest = *dg;
	p->v[p->n].depth = depth;
	if (p->v[p->n].repo == NULL)
		return al_error_oom();
	p->n++;
	return 1;
}

/* The manifest dg and, for an index, its children (from the store). */
static int rplan_walk(al_store *s, rplan *p, const char *repo,
                      const al_digest *dg, int depth, json_t *set)
{
	al_buf b = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_manifest m;
	size_t i;
	int rc;

	if ((rc = rplan_add(p, repo, dg, depth, set)) <= 0)
		return rc;
	if (depth > WALK_DEPTH || al_store_read_blob(s, dg, &b) < 0 ||
	    al_manifest_parse(&m, b.ptr, b.len, NULL, repo) < 0) {
		al_buf_free(&b);
		return 0;
	}
	al_buf_free(&b);
	rc = 0;
	if (m.is_index)
		for (i = 0; i < m.nmanifests && rc == 0; i++)
			rc = rplan_walk(s, p, repo, &m.manifests[i].digest,
			                depth + 1, set);
	al_manifest_clear(&m);
	return rc;
}

static int cmp_depth(const void *a, const void *b)
{
	const rman *x = a, *y = b;

	return (x->depth > y->depth) - (x->depth < y->depth);
}

static int split_registry(const char *dst, char **host, char **prefix)
{
	const char *p = dst, *slash;

	if (al_str_startswith(p, "docker://"))
		p += strlen("docker://");
	slash = strchr(p, '/');
	*host =
	    slash != NULL ? al_strndup(p, (size_t)(slash - p)) : al_strdup(p);
	*prefix = al_strdup(slash != NULL ? slash + 1 : "");
	if (*host == NULL || *prefix == NULL) {
		free(*host);
		free(*prefix);
		return al_error_oom();
	}
	{
		size_t n = strlen(*prefix);
		while (n > 0 && (*prefix)[n - 1] == '/')
			(*prefix)[--n] = '\0';
	}
	if ((*host)[0] == '\0') {
		free(*host);
		free(*prefix);
		return al_error_set(
		    AL_EINVAL, "registry '%s': want docker://HOST/PREFIX", dst);
	}
	return 0;
}

static int host_insecure(const al_transfer_opts *to, const char *host)
{
	const char *const *h;

	if (to == NULL)
		return 0;
	if (to->all_insecure)
		return 1;
	for (h = to->insecure_hosts; h != NULL && *h != NULL; h++)
		if (strcmp(*h, host) == 0)
			return 1;
	return 0;
}

/* How the store's last push placed the images when it went to host and
 * prefix (airlock/pushes.json): its --max-nested-paths (push joined deep
 * repository paths; 0: no limit) and its layout, so that the manifests
 * are looked for where it put them. A push elsewhere, or none: no limit
 * and oc-mirror's layout, push's defaults. */
static void pushed_as(al_store *s, const char *host, const char *prefix,
                      unsigned *nested, al_layout_kind *layout)
{
	al_store_push last;

	*nested = 0;
	*layout = AL_LAYOUT_OC_MIRROR;
	memset(&last, 0, sizeof(last));
	if (al_store_push_last(s, &last) < 0) {
		al_error_clear();
		return;
	}
	if (strcmp(last.registry, host) == 0 &&
	    strcmp(last.prefix, prefix) == 0) {
		*nested = last.max_nested_paths;
		*layout =
		    last.source_layout ? AL_LAYOUT_SOURCE : AL_LAYOUT_OC_MIRROR;
	}
	al_store_push_clear(&last);
}

/*
 * Place k of store image i (pass 0: kept, its manifests into p->keep;
 * pass 1: going, into p->seen unless a kept image of the same repository
 * has the manifest). 1 when the name is not a docker reference (left
 * alone, said once), else 0 or a negative status.
 */
static int registry_place(del *d, rplan *p, const al_layout *layout, size_t i,
                          size_t k, const char *host, const char *prefix,
                          unsigned nested, int pass)
{
	char ds[AL_DIGEST_STRMAX];
	char *repo = NULL, *ref = NULL, *key = NULL;
	int rc;

	if ((rc = al_push_target_layout_at(layout, d->imgs[i].name, k, prefix,
	                                   nested, &repo, &ref)) == AL_ENOMEM)
		return rc;
	if (rc < 0) {
		al_error_clear();
		al_log_warn("registry: '%s' is not a docker reference: left "
		            "alone",
		            d->imgs[i].name);
		return 1;
	}
	if (pass == 0) {
		rc = rplan_walk(d->s, p, repo, &d->imgs[i].desc.digest, 0,
		                p->keep);
		goto out;
	}
	/* a kept name of the same manifest in the same repository:
	 * deleting by digest would take its tag too */
	key = al_sprintf("%s %s", repo,
	                 al_digest_str(&d->imgs[i].desc.digest, ds));
	if (key == NULL)
		rc = al_error_oom();
	else if (json_object_get(p->keep, key) == NULL)
		rc = rplan_walk(d->s, p, repo, &d->imgs[i].desc.digest, 0,
		                p->seen);
	else
		al_log_warn("registry: %s/%s@%s left: a kept image of that "
		            "repository has the same manifest (its tag '%s' "
		            "stays there too)",
		            host, repo, ds, ref != NULL ? ref : "");
out:
	free(key);
	free(repo);
	free(ref);
	return rc < 0 ? rc : 0;
}

static int registry_delete(del *d)
{
	const al_delete_opts *o = d->o;
	rplan p;
	al_registry_opts ro = AL_REGISTRY_OPTS_INIT;
	al_registry *reg = NULL;
	al_layout *layout = NULL;
	al_layout_kind kind;
	char *host = NULL, *prefix = NULL;
	size_t i;
	unsigned nested;
	int rc = 0, pass;

	memset(&p, 0, sizeof(p));
	if ((rc = split_registry(o->registry, &host, &prefix)) < 0)
		return rc;
	pushed_as(d->s, host, prefix, &nested, &kind);
	if (o->layout_given)
		kind = o->layout;
	/* the store still records every release: the one mapping push
	 * used (layout.c), read before anything goes */
	if (kind != AL_LAYOUT_SOURCE &&
	    (rc = al_layout_open(&layout, d->s, kind)) < 0) {
		rc = al_error_wrap(rc, "cannot read the records of store '%s'",
		                   al_store_path(d->s));
		goto out;
	}
	if ((p.seen = json_object()) == NULL ||
	    (p.keep = json_object()) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	/* what kept images need, per repository, first; then what goes:
	 * each image at every place push gave it (a component two releases
	 * share is at a tag of each), so a manifest a kept release still
	 * places in a repository stays there, its tags with it */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < d->nimgs; i++) {
			size_t k, np;

			if ((pass == 0) == (d->del_img[i] != 0))
				continue;
			np = al_push_target_count(layout, d->imgs[i].name);
			for (k = 0; k < np; k++)
				if ((rc = registry_place(d, &p, layout, i, k,
				                         host, prefix, nested,
				                         pass)) != 0)
					break;
			if (rc == 1) {
				rc = 0;
				continue;
			}
			if (rc < 0)
				goto out;
		}
	}
	/* children that a kept image of the same repository needs stay */
	for (i = 0; i < p.n;) {
		char ds[AL_DIGEST_STRMAX];
		char *key = al_sprintf("%s %s", p.v[i].repo,
		                       al_digest_str(&p.v[i].digest, ds));
		if (key == NULL) {
			rc = al_error_oom();
			goto out;
		}
		if (json_object_get(p.keep, key) != NULL) {
			free(p.v[i].repo);
			p.v[i] = p.v[--p.n];
		} else {
			i++;
		}
		free(key);
	}
	/* indexes before their children: never a referenced child missing */
	if (p.n > 1) /* p.v is NULL when nothing goes there */
		qsort(p.v, p.n, sizeof(*p.v), cmp_depth);
	if (o->transfer != NULL)
		ro = o->transfer->registry;
	ro.insecure = host_insecure(o->transfer, host);
	if (!o->dry_run && p.n > 0 &&
	    (rc = al_registry_new(&reg, host, &ro)) < 0)
		goto out;
	for (i = 0; i < p.n; i++) {
		char ds[AL_DIGEST_STRMAX];
		int deleted = 0;
		if (!o->dry_run) {
			if ((rc = al_registry_delete_manifest(reg, p.v[i].repo,
			                                      &p.v[i].digest,
			                                      &deleted)) < 0)
				goto out;
			if (!deleted)
				d->res->registry_gone++;
		}
		if ((rc = strv_push(
		         &d->res->registry_manifests,
		         &d->res->nregistry_manifests,
		         al_sprintf("%s/%s@%s", host, p.v[i].repo,
		                    al_digest_str(&p.v[i].digest, ds)))) < 0)
			goto out;
	}
out:
	for (i = 0; i < p.n; i++)
		free(p.v[i].repo);
	free(p.v);
	json_decref(p.seen);
	json_decref(p.keep);
	al_registry_free(reg);
	al_layout_free(layout);
	free(host);
	free(prefix);
	return rc;
}

/* ---- the store ---- */

static int store_delete(del *d)
{
	al_check_result cr = AL_CHECK_RESULT_INIT;
	size_t i;
	int rc;

	for (i = 0; i < d->nimgs; i++) {
		if (!d->del_img[i])
			continue;
		rc = al_store_untag(d->s, d->imgs[i].name);
		if (rc < 0 && rc != AL_ENOTFOUND)
			return rc;
	}
	for (i = 0; i < d->nrels; i++) {
		if (!d->del_rel[i] || !d->rels[i].has_digest)
			continue;
		/* two records of one digest: the first removed both */
		rc = al_store_release_remove(d->s, &d->rels[i].digest);
		if (rc < 0 && rc != AL_ENOTFOUND)
			return rc;
		if (!digest_kept(d, &d->rels[i].digest) &&
		    (rc = al_store_signatures_remove(d->s,
		                                     &d->rels[i].digest)) < 0)
			return rc;
	}
	if ((rc = al_store_flush(d->s)) < 0)
		return rc;
	if ((rc =
	         al_mirror_check(d->s, AL_STORE_CHECK_GC | AL_STORE_CHECK_QUICK,
	                         NULL, NULL, &cr)) < 0)
		return rc;
	d->res->blobs_freed = cr.removed;
	d->res->bytes_freed = cr.bytes_removed;
	return 0;
}

static int record_result(del *d)
{
	char ds[AL_DIGEST_STRMAX];
	size_t i;
	int rc;

	for (i = 0; i < d->nrels; i++) {
		const al_store_release *r = &d->rels[i];
		if (!d->del_rel[i])
			continue;
		if (r->has_digest)
			al_digest_str(&r->digest, ds);
		if ((rc = strv_push(&d->res->releases, &d->res->nreleases,
		                    al_sprintf("%s (%s)",
		                               r->version ? r->version : "?",
		                               r->has_digest ? ds : "?"))) < 0)
			return rc;
	}
	for (i = 0; i < d->nimgs; i++)
		if (d->del_img[i] &&
		    (rc = strv_push(&d->res->names, &d->res->nnames,
		                    al_strdup(d->imgs[i].name))) < 0)
			return rc;
	return 0;
}

int al_delete_run(al_store *s, const al_delete_opts *o, al_delete_result *res)
{
	del d;
	size_t i;
	int rc, any = 0;

	if (s == NULL || o == NULL || res == NULL)
		return al_error_set(AL_EINVAL, "al_delete_run: NULL");
	if ((rc = AL_RESULT_VERSION_CHECK("al_delete_result", res, version,
	                                  AL_DELETE_RESULT_VERSION)) < 0)
		return rc;
	AL_RESULT_ZERO(res);
	if ((rc = al_opts_version_check("al_delete_opts", o->version,
	                                AL_DELETE_OPTS_VERSION)) < 0)
		return rc;
	memset(&d, 0, sizeof(d));
	d.s = s;
	d.o = o;
	d.res = res;
	if (o->nreleases == 0 && o->nimages == 0 && o->config == NULL)
		return al_error_set(AL_EINVAL,
		                    "nothing to delete: give releases, "
		                    "--image or --config");
	if ((rc = al_store_list(s, &d.imgs, &d.nimgs)) < 0 ||
	    (rc = al_store_releases_list(s, &d.rels, &d.nrels)) < 0)
		goto out;
	d.del_img = calloc(d.nimgs + 1, 1);
	d.del_rel = calloc(d.nrels + 1, 1);
	d.comp_of = json_object();
	if (d.del_img == NULL || d.del_rel == NULL || d.comp_of == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < o->nreleases; i++)
		if ((rc = release_key(&d, o->releases[i])) < 0)
			goto out;
	/* an image that is a recorded release's image is that release: its
	 * name alone would go, and the record keep every blob */
	for (i = 0; i < o->nimages; i++)
		if ((rc = ref_key(&d, o->images[i])) < 0)
			goto out;
	if (o->config != NULL && (rc = apply_config(&d, o->config)) < 0)
		goto out;
	if ((rc = guard(&d)) < 0 || (rc = release_names(&d)) < 0 ||
	    (rc = attachments(&d)) < 0)
		goto out;
	for (i = 0; i < d.nimgs; i++)
		any |= d.del_img[i];
	for (i = 0; i < d.nrels; i++)
		any |= d.del_rel[i];
	if (!any) {
		rc = al_error_set(AL_ENOTFOUND, "nothing in store '%s' matches",
		                  al_store_path(s));
		goto out;
	}
	if ((rc = record_result(&d)) < 0)
		goto out;
	if (o->dry_run && (rc = estimate_freed(&d)) < 0)
		goto out;
	/* the registry first: until the store changes, a rerun redoes all */
	if (o->registry != NULL && (rc = registry_delete(&d)) < 0)
		goto out;
	if (!o->dry_run)
		rc = store_delete(&d);
out:
	al_store_images_free(d.imgs, d.nimgs);
	al_store_releases_free(d.rels, d.nrels);
	free(d.del_img);
	free(d.del_rel);
	json_decref(d.comp_of);
	al_store_catalogs_free(d.cats, d.ncats);
	al_store_charts_free(d.charts, d.ncharts);
	free(d.del_chart);
	return rc;
}
