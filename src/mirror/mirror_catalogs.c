/* mirror_catalogs.c: the operator catalogs of an ImageSetConfiguration in
 * 'airlock mirror' (mirror.operators[]): fetch, filter, mirror the
 * selected bundle and related images, rebuild, name and record. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "airlock/catalog.h"
#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/log.h"
#include "airlock/ref.h"
#include "mirror_catalogs.h"
#include "mirror_int.h"

/* The catalog failed: status, first message, the report's error list. */
static void cat_fail(al_mirror_result *res, al_mirror_catalog *c, int st,
                     const char *msg)
{
	c->status = al_mirror__worse(c->status, st < 0 ? st : AL_EINVAL);
	if (c->message == NULL)
		c->message = al_strdup(msg);
	al_mirror__report_errorf(&res->report, "%s", msg);
}

/* cat_fail with the error just set, named "FILE:LINE: ..." after op. */
static void cat_fail_at(al_mirror_result *res, al_mirror_catalog *c, int st,
                        const al_imageset *cfg, const al_imageset_operator *op)
{
	char msg[2048];

	snprintf(msg, sizeof(msg), "%s:%zu: %s",
	         cfg->path != NULL ? cfg->path : "", op->line,
	         al_error_message());
	cat_fail(res, c, st, msg);
}

void al_mirror__catalogs_clear(al_mirror_result *res)
{
	size_t i;

	if (res == NULL || res->catalogs == NULL)
		return;
	for (i = 0; i < res->ncatalogs; i++) {
		al_mirror_catalog *c = &res->catalogs[i];

		free(c->source);
		free(c->source_name);
		free(c->target_name);
		free(c->target_repo);
		free(c->message);
	}
	free(res->catalogs);
	res->catalogs = NULL;
	res->ncatalogs = 0;
	res->catalogs_mirrored = 0;
}

/* Queue ref (docker, bare or oci:) under its store name: name when given,
 * else the normalised docker reference, as mirror.c names components. */
static int queue(al_transfer *t, const char *ref, const char *name)
{
	al_imgref ir;
	char *own = NULL;
	int rc;

	memset(&ir, 0, sizeof(ir));
	if ((rc = al_imgref_parse(&ir, ref)) < 0)
		return rc;
	if (name == NULL && ir.transport == AL_TRANSPORT_DOCKER &&
	    (own = al_ref_string(&ir.ref)) == NULL) {
		al_imgref_clear(&ir);
		return al_error_oom();
	}
	rc = al_transfer_add(t, &ir, name != NULL ? name : own);
	free(own);
	al_imgref_clear(&ir);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One mirror.operators[] entry of the run: its entry of the result, its
 * selection (NULL once it failed) and the transfer index of its catalog
 * image. */
typedef struct cat_run {
	al_mirror_catalog *c;
	const al_imageset_operator *op;
	al_catalog_selection *sel;
	int idx; /* -1: out of the run */
} cat_run;

/* The images of every selection, once each (sorted, borrowed), and each
 * one's transfer index. */
typedef struct uimg {
	const char **v;
	int *idx;
	size_t n;
} uimg;

static int uimg_build(uimg *u, const cat_run *cr, size_t ncr)
{
	const al_catalog_selection *sel;
	size_t i, j, total = 0, w = 0;

	for (i = 0; i < ncr; i++)
		total += cr[i].sel != NULL ? cr[i].sel->nimages : 0;
	u->v = calloc(total + 1, sizeof(*u->v));
	u->idx = calloc(total + 1, sizeof(*u->idx));
	if (u->v == NULL || u->idx == NULL)
		return al_error_oom();
	for (i = 0; i < ncr; i++)
		for (j = 0; (sel = cr[i].sel) != NULL && j < sel->nimages; j++)
			u->v[w++] = sel->images[j];
	if (w > 1)
		qsort(u->v, w, sizeof(*u->v), cmp_str);
	u->n = 0;
	for (i = 0; i < w; i++)
		if (u->n == 0 || strcmp(u->v[u->n - 1], u->v[i]) != 0)
			u->v[u->n++] = u->v[i];
	for (i = 0; i < u->n; i++)
		u->idx[i] = -1;
	return 0;
}

static int uimg_index(const uimg *u, const char *img)
{
	const char **hit = bsearch(&img, u->v, u->n, sizeof(*u->v), cmp_str);

	return hit != NULL ? u->idx[hit - u->v] : -1;
}

static void uimg_free(uimg *u)
{
	free(u->v);
	free(u->idx);
	memset(u, 0, sizeof(*u));
}

/* The repository path and tag of the rebuilt catalog's name. */
static void split_target(const char *name, char **repo, char **tag)
{
	al_ref r;

	memset(&r, 0, sizeof(r));
	*repo = *tag = NULL;
	if (al_ref_parse(&r, name) == 0) {
		*repo = r.repository != NULL ? al_strdup(r.repository) : NULL;
		*tag = r.tag != NULL ? al_strdup(r.tag) : NULL;
	}
	al_error_clear();
	al_ref_clear(&r);
}

/* Name and record one catalog whose images all arrived; its rebuilt
 * image (sel->rebuilt) was written before they were fetched. */
static int finish_one(al_store *s, const al_transfer_opts *to,
                      al_catalog_selection *sel, al_mirror_catalog *c)
{
	al_store_catalog rec;
	char *tag = NULL;
	int rc;

	memset(&rec, 0, sizeof(rec));
	if ((rc = al_store_tag(s, c->target_name, &sel->rebuilt)) < 0)
		return al_error_wrap(rc, "naming catalog '%s'", c->source_name);
	c->digest = sel->rebuilt.digest;
	rec.name = c->target_name;
	rec.digest = sel->rebuilt.digest;
	rec.has_digest = 1;
	rec.source = c->source;
	rec.source_name = c->source_name;
	rec.source_digest = c->source_digest;
	rec.has_source_digest = 1;
	split_target(c->target_name, &rec.target_repo, &tag);
	rec.target_tag = tag;
	rec.platform = (char *)(uintptr_t)to->platform;
	rec.mirrored = al_clock_rfc3339_now();
	rec.packages = (long long)c->packages;
	rec.bundles = (long long)c->bundles;
	rec.images = sel->images;
	rec.nimages = sel->nimages;
	if (rec.mirrored == NULL)
		rc = al_error_oom();
	else
		rc = al_store_catalog_put(s, &rec);
	free(rec.target_repo);
	free(tag);
	free(rec.mirrored);
	return rc;
}

/* The catalogs of a run: one transfer, one record per catalog, the
 * images of every selection once each. */
typedef struct cats {
	al_store *s;
	const al_imageset *cfg;
	const al_transfer_opts *to;
	al_mirror_result *res;
	al_transfer *t;
	cat_run *v;
	size_t n;
	uimg u;
} cats;

/* 1. The catalog image, under the names of al_catalog_names. 0, or
 * AL_ENOMEM to stop. */
static int queue_catalog(cats *k, cat_run *cr)
{
	al_mirror_catalog *c = cr->c;
	char msg[2048];
	int r2;

	cr->idx = -1;
	if ((c->source = al_strdup(cr->op->catalog)) == NULL)
		return al_error_oom();
	r2 = al_catalog_names(cr->op, &c->source_name, &c->target_name,
	                      &c->target_repo);
	if (r2 == 0)
		r2 = cr->idx = queue(k->t, cr->op->catalog, c->source_name);
	if (r2 < 0) {
		snprintf(msg, sizeof(msg), "%s:%zu: catalog '%s': %s",
		         k->cfg->path != NULL ? k->cfg->path : "", cr->op->line,
		         cr->op->catalog, al_error_message());
		cat_fail(k->res, c, r2, msg);
		cr->idx = -1;
	}
	return 0;
}

/* 2. Read, filter and rebuild a catalog whose image arrived; its images
 * join the run's second transfer. */
static void select_catalog(cats *k, cat_run *cr)
{
	al_mirror_catalog *c = cr->c;
	const char *m = NULL;
	size_t j;
	int st = 0;

	al_transfer_result(k->t, cr->idx, &st, &c->source_digest, NULL, &m);
	if (st == 0)
		st = al_catalog_select(&cr->sel, k->s, cr->op, k->to->platform,
		                       0);
	else
		al_error_set(st, "%s", m != NULL ? m : "");
	if (st < 0) {
		cat_fail_at(k->res, c, st, k->cfg, cr->op);
		return;
	}
	c->packages = al_catalog_package_count(cr->sel->filtered);
	c->bundles = al_catalog_bundle_count(cr->sel->filtered);
	c->images = cr->sel->nimages;
	c->unresolved = al_catalog_unresolved_count(cr->sel->filtered);
	for (j = 0; j < c->unresolved; j++)
		al_log_warn("catalog '%s': %s", c->source_name,
		            al_catalog_unresolved_at(cr->sel->filtered, j));
	al_log_info("catalog '%s': %zu packages, %zu bundles, %zu "
	            "images selected",
	            c->source_name, c->packages, c->bundles, c->images);
	/* The rebuilt image is written now, unnamed, and the selection's
	 * tree freed: a catalog of thousands of bundles is not held while its
	 * images transfer (docs/performance.md). It is named only once every
	 * image arrived (step 3); unnamed, its blobs are what `check --gc`
	 * removes. */
	st = al_catalog_rebuild(k->s, &c->source_digest, k->to->platform,
	                        cr->sel->filtered, NULL, &cr->sel->rebuilt);
	if (st < 0) {
		al_error_wrap(st, "rebuilding catalog '%s'", c->source_name);
		cat_fail_at(k->res, c, st, k->cfg, cr->op);
		al_catalog_selection_free(cr->sel);
		cr->sel = NULL;
		return;
	}
	al_catalog_free(cr->sel->filtered);
	cr->sel->filtered = NULL;
}

/* 2. The images of every selection, once each, into the transfer, then
 * run. 0, or AL_ENOMEM to stop. */
static int fetch_images(cats *k)
{
	size_t i;
	int rc;

	if ((rc = uimg_build(&k->u, k->v, k->n)) < 0)
		return rc;
	for (i = 0; i < k->u.n; i++) {
		int q = queue(k->t, k->u.v[i], NULL);

		/* a reference that does not parse fails its catalogs below */
		k->u.idx[i] = q;
		if (q < 0)
			al_error_clear();
	}
	if (k->u.n > 0) {
		al_log_info("operators: mirroring %zu bundle and related "
		            "images",
		            k->u.n);
		al_transfer_run(k->t, &k->res->report.stats);
	}
	return 0;
}

/* 3. A catalog whose images all arrived is named and recorded; one with
 * a failed image is not named (as a release). */
static void settle_catalog(cats *k, cat_run *cr)
{
	al_mirror_catalog *c = cr->c;
	char msg[2048];
	size_t j;
	int r2;

	for (j = 0; j < cr->sel->nimages; j++) {
		const char *img = cr->sel->images[j];
		int idx = uimg_index(&k->u, img), st = AL_EPARSE;
		const char *m = "not an image reference";

		if (idx >= 0)
			al_transfer_result(k->t, idx, &st, NULL, NULL, &m);
		if (st == 0)
			continue;
		c->images_failed++;
		c->status = al_mirror__worse(c->status, st);
		snprintf(msg, sizeof(msg), "%s (image of catalog '%s'): %s",
		         img, c->source_name, m != NULL ? m : "");
		al_mirror__report_errorf(&k->res->report, "%s", msg);
		al_mirror__report_failed(&k->res->report, "catalog-image", img,
		                         NULL, st, msg);
		if (c->message == NULL)
			c->message = al_strdup(msg);
	}
	if (c->images_failed > 0) {
		snprintf(msg, sizeof(msg),
		         "catalog '%s': %zu of %zu images failed; the "
		         "rebuilt catalog is not named '%s'",
		         c->source_name, c->images_failed, c->images,
		         c->target_name);
		al_mirror__report_errorf(&k->res->report, "%s", msg);
	} else if ((r2 = finish_one(k->s, k->to, cr->sel, c)) < 0) {
		cat_fail_at(k->res, c, r2, k->cfg, cr->op);
	} else {
		char ds[AL_DIGEST_STRMAX];

		k->res->catalogs_mirrored++;
		al_log_info("mirrored catalog %s -> %s (%s): %zu "
		            "packages, %zu bundles, %zu images",
		            c->source_name, c->target_name,
		            al_digest_str(&c->digest, ds), c->packages,
		            c->bundles, c->images);
	}
}

/* Steps 1 to 3 over k's records; 0, or <0 when the step stopped. */
static int catalogs_run(cats *k)
{
	size_t i;
	int rc;

	for (i = 0; i < k->n; i++)
		if ((rc = queue_catalog(k, &k->v[i])) < 0)
			return rc;
	al_log_info("operators: fetching %zu catalog images", k->n);
	al_transfer_run(k->t, &k->res->report.stats);
	for (i = 0; i < k->n; i++)
		if (k->v[i].idx >= 0)
			select_catalog(k, &k->v[i]);
	return fetch_images(k);
}

int al_mirror__catalogs(al_store *s, const al_imageset *cfg,
                        const al_transfer_opts *to, al_mirror_result *res,
                        int rc)
{
	cats k;
	size_t i;
	int r2, worst = 0;

	if (cfg == NULL || cfg->noperators == 0 || res == NULL)
		return rc;
	memset(&k, 0, sizeof(k));
	k.s = s;
	k.cfg = cfg;
	k.to = to;
	k.res = res;
	k.n = cfg->noperators;
	res->catalogs = calloc(k.n, sizeof(*res->catalogs));
	k.v = calloc(k.n, sizeof(*k.v));
	if (res->catalogs == NULL || k.v == NULL) {
		r2 = al_error_oom();
		goto out;
	}
	res->ncatalogs = k.n;
	for (i = 0; i < k.n; i++) {
		k.v[i].c = &res->catalogs[i];
		k.v[i].op = &cfg->operators[i];
		k.v[i].idx = -1;
	}
	if ((r2 = al_transfer_new_to_store(&k.t, s, to)) < 0 ||
	    (r2 = catalogs_run(&k)) < 0)
		goto out;
	for (i = 0; i < k.n; i++) {
		if (k.v[i].sel != NULL)
			settle_catalog(&k, &k.v[i]);
		worst = al_mirror__worse(worst, k.v[i].c->status);
	}
out:
	if (r2 < 0) {
		al_mirror__report_errorf(&res->report, "operator catalogs: %s",
		                         al_error_message());
		worst = al_mirror__worse(worst, r2);
	}
	for (i = 0; k.v != NULL && i < k.n; i++)
		al_catalog_selection_free(k.v[i].sel);
	free(k.v);
	uimg_free(&k.u);
	al_transfer_free(k.t);
	rc = al_mirror__worse(rc, worst);
	if (worst < 0 && rc == worst)
		al_error_set(rc, "%zu of %zu operator catalog(s) failed",
		             res->ncatalogs - res->catalogs_mirrored,
		             res->ncatalogs);
	return rc;
}
