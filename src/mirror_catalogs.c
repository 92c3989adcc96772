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

/* The images of every selection, once each (sorted, borrowed), and each
 * one's transfer index. */
typedef struct uimg {
	const char **v;
	int *idx;
	size_t n;
} uimg;

static int uimg_build(uimg *u, al_catalog_selection **sel, size_t nsel)
{
	size_t i, j, total = 0, w = 0;

	for (i = 0; i < nsel; i++)
		total += sel[i] != NULL ? sel[i]->nimages : 0;
	u->v = calloc(total + 1, sizeof(*u->v));
	u->idx = calloc(total + 1, sizeof(*u->idx));
	if (u->v == NULL || u->idx == NULL)
		return al_error_oom();
	for (i = 0; i < nsel; i++)
		for (j = 0; sel[i] != NULL && j < sel[i]->nimages; j++)
			u->v[w++] = sel[i]->images[j];
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

int al_mirror__catalogs(al_store *s, const al_imageset *cfg,
                        const al_transfer_opts *to, al_mirror_result *res,
                        int rc)
{
	al_catalog_selection **sel = NULL;
	al_transfer *t = NULL;
	const al_imageset_operator *ops;
	int *cidx = NULL;
	uimg u;
	size_t n, i, j;
	int r2, worst = 0;

	memset(&u, 0, sizeof(u));
	if (cfg == NULL || cfg->noperators == 0 || res == NULL)
		return rc;
	n = cfg->noperators;
	ops = cfg->operators;
	res->catalogs = calloc(n, sizeof(*res->catalogs));
	sel = calloc(n, sizeof(*sel));
	cidx = calloc(n, sizeof(*cidx));
	if (res->catalogs == NULL || sel == NULL || cidx == NULL) {
		r2 = al_error_oom();
		goto out;
	}
	res->ncatalogs = n;
	if ((r2 = al_transfer_new_to_store(&t, s, to)) < 0)
		goto out;

	/* 1. the catalog images, under the names of al_catalog_names */
	for (i = 0; i < n; i++) {
		al_mirror_catalog *c = &res->catalogs[i];
		char msg[2048];

		cidx[i] = -1;
		if ((c->source = al_strdup(ops[i].catalog)) == NULL) {
			r2 = al_error_oom();
			goto out;
		}
		r2 = al_catalog_names(&ops[i], &c->source_name, &c->target_name,
		                      &c->target_repo);
		if (r2 == 0)
			r2 = cidx[i] = queue(t, ops[i].catalog, c->source_name);
		if (r2 < 0) {
			snprintf(msg, sizeof(msg), "%s:%zu: catalog '%s': %s",
			         cfg->path != NULL ? cfg->path : "",
			         ops[i].line, ops[i].catalog,
			         al_error_message());
			cat_fail(res, c, r2, msg);
			cidx[i] = -1;
		}
	}
	al_log_info("operators: fetching %zu catalog images", n);
	al_transfer_run(t, &res->report.stats);

	/* 2. read, filter and rebuild each; its images join one transfer */
	for (i = 0; i < n; i++) {
		al_mirror_catalog *c = &res->catalogs[i];
		const char *m = NULL;
		int st = 0;

		if (cidx[i] < 0)
			continue;
		al_transfer_result(t, cidx[i], &st, &c->source_digest, NULL,
		                   &m);
		if (st == 0)
			st = al_catalog_select(&sel[i], s, &ops[i],
			                       to->platform, 0);
		else
			al_error_set(st, "%s", m != NULL ? m : "");
		if (st < 0) {
			cat_fail_at(res, c, st, cfg, &ops[i]);
			continue;
		}
		c->packages = al_catalog_package_count(sel[i]->filtered);
		c->bundles = al_catalog_bundle_count(sel[i]->filtered);
		c->images = sel[i]->nimages;
		c->unresolved = al_catalog_unresolved_count(sel[i]->filtered);
		for (j = 0; j < c->unresolved; j++)
			al_log_warn(
			    "catalog '%s': %s", c->source_name,
			    al_catalog_unresolved_at(sel[i]->filtered, j));
		al_log_info("catalog '%s': %zu packages, %zu bundles, %zu "
		            "images selected",
		            c->source_name, c->packages, c->bundles, c->images);
		/* The rebuilt image is written now, unnamed, and the
		 * selection's tree freed: a catalog of thousands of bundles is
		 * not held while its images transfer (docs/performance.md). It
		 * is named only once every image arrived (step 3); unnamed, its
		 * blobs are what `check --gc` removes. */
		st = al_catalog_rebuild(s, &c->source_digest, to->platform,
		                        sel[i]->filtered, NULL,
		                        &sel[i]->rebuilt);
		if (st < 0) {
			al_error_wrap(st, "rebuilding catalog '%s'",
			              c->source_name);
			cat_fail_at(res, c, st, cfg, &ops[i]);
			al_catalog_selection_free(sel[i]);
			sel[i] = NULL;
			continue;
		}
		al_catalog_free(sel[i]->filtered);
		sel[i]->filtered = NULL;
	}
	if ((r2 = uimg_build(&u, sel, n)) < 0)
		goto out;
	for (i = 0; i < u.n; i++) {
		int q = queue(t, u.v[i], NULL);

		/* a reference that does not parse fails its catalogs below */
		u.idx[i] = q;
		if (q < 0)
			al_error_clear();
	}
	if (u.n > 0) {
		al_log_info("operators: mirroring %zu bundle and related "
		            "images",
		            u.n);
		al_transfer_run(t, &res->report.stats);
	}

	/* 3. a catalog whose images all arrived is named and
	 * recorded; one with a failed image is not named (as a release) */
	for (i = 0; i < n; i++) {
		al_mirror_catalog *c = &res->catalogs[i];
		char msg[2048];

		if (sel[i] == NULL) {
			worst = al_mirror__worse(worst, c->status);
			continue;
		}
		for (j = 0; j < sel[i]->nimages; j++) {
			const char *img = sel[i]->images[j];
			int idx = uimg_index(&u, img), st = AL_EPARSE;
			const char *m = "not an image reference";

			if (idx >= 0)
				al_transfer_result(t, idx, &st, NULL, NULL, &m);
			if (st == 0)
				continue;
			c->images_failed++;
			c->status = al_mirror__worse(c->status, st);
			snprintf(msg, sizeof(msg),
			         "%s (image of catalog '%s'): %s", img,
			         c->source_name, m != NULL ? m : "");
			al_mirror__report_errorf(&res->report, "%s", msg);
			al_mirror__report_failed(&res->report, "catalog-image",
			                         img, NULL, st, msg);
			if (c->message == NULL)
				c->message = al_strdup(msg);
		}
		if (c->images_failed > 0) {
			snprintf(msg, sizeof(msg),
			         "catalog '%s': %zu of %zu images failed; the "
			         "rebuilt catalog is not named '%s'",
			         c->source_name, c->images_failed, c->images,
			         c->target_name);
			al_mirror__report_errorf(&res->report, "%s", msg);
		} else if ((r2 = finish_one(s, to, sel[i], c)) < 0) {
			cat_fail_at(res, c, r2, cfg, &ops[i]);
		} else {
			char ds[AL_DIGEST_STRMAX];

			res->catalogs_mirrored++;
			al_log_info("mirrored catalog %s -> %s (%s): %zu "
			            "packages, %zu bundles, %zu images",
			            c->source_name, c->target_name,
			            al_digest_str(&c->digest, ds), c->packages,
			            c->bundles, c->images);
		}
		worst = al_mirror__worse(worst, c->status);
	}
	r2 = 0;
out:
	if (r2 < 0) {
		al_mirror__report_errorf(&res->report, "operator catalogs: %s",
		                         al_error_message());
		worst = al_mirror__worse(worst, r2);
	}
	for (i = 0; sel != NULL && i < n; i++)
		al_catalog_selection_free(sel[i]);
	free(sel);
	free(cidx);
	uimg_free(&u);
	al_transfer_free(t);
	rc = al_mirror__worse(rc, worst);
	if (worst < 0 && rc == worst)
		al_error_set(rc, "%zu of %zu operator catalog(s) failed",
		             res->ncatalogs - res->catalogs_mirrored,
		             res->ncatalogs);
	return rc;
}
