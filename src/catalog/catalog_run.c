/* catalog_run.c: al_catalog_run, the whole of airlock catalog: each
 * mirror.operators[] entry fetched (with --mirror), selected, rebuilt and
 * written out, its images listed; or every catalog of a store listed.
 * Every outcome is an event; nothing is printed here. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/catalog.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/ref.h"
#include "array_int.h"
#include "error_int.h"

/* One run: its options and where the images go. */
typedef struct cr_run {
	al_store *store;
	const al_imageset *cfg;
	const al_catalog_run_opts *o;
	al_transfer *t; /* mirror: the one transfer of the run */
	char **all;     /* every entry's images */
	size_t nall, capall;
} cr_run;

static void emit(const cr_run *r, al_catalog_run_event *ev)
{
	if (r->o->on_event != NULL)
		r->o->on_event(r->o->ud, ev);
}

static void ev_init(al_catalog_run_event *ev, al_catalog_run_event_kind k)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = k;
}

static void failed(const cr_run *r, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void failed(const cr_run *r, int rc, const char *fmt, ...)
{
	al_catalog_run_event ev;
	char ctx[1024];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(ctx, sizeof(ctx), fmt, ap) < 0)
		ctx[0] = '\0';
	va_end(ap);
	ev_init(&ev, AL_CATALOG_RUN_EV_FAILED);
	ev.status = rc;
	ev.subject = ctx;
	emit(r, &ev);
}

static void said(const cr_run *r, al_catalog_run_event_kind k,
                 const char *subject, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void said(const cr_run *r, al_catalog_run_event_kind k,
                 const char *subject, const char *fmt, ...)
{
	al_catalog_run_event ev;
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	va_end(ap);
	ev_init(&ev, k);
	ev.subject = subject;
	ev.message = msg;
	emit(r, &ev);
}

static void done(const cr_run *r, int rc, int input)
{
	al_catalog_run_event ev;

	ev_init(&ev, AL_CATALOG_RUN_EV_DONE);
	ev.status = rc;
	ev.input = input;
	emit(r, &ev);
}

/* CatalogSource and ClusterCatalog of the catalog pushed as
 * registry/repo_path<:tag of dst> into dir. */
static int write_resources(const cr_run *r, const char *repo_path,
                           const char *dst)
{
	const char *dir = r->o->resources;
	const char *tag = strrchr(dst, ':');
	char *image = al_sprintf("%s/%s%s", r->o->registry, repo_path, tag);
	char *cs = al_catalog_resource_name("cs", image != NULL ? image : "");
	char *cc = al_catalog_resource_name("cc", image != NULL ? image : "");
	char *p1 = NULL, *p2 = NULL;
	al_buf b1 = AL_BUF_INIT(1 << 20), b2 = AL_BUF_INIT(1 << 20);
	int rc;

	if (image == NULL || cs == NULL || cc == NULL) {
		rc = AL_ENOMEM;
		goto out;
	}
	/* oc-mirror v2's file names: the resource name, ".yaml"
	 * (clusterresources generateCatalogSource, generateClusterCatalog) */
	p1 = al_sprintf("%s/%s.yaml", dir, cs);
	p2 = al_sprintf("%s/%s.yaml", dir, cc);
	if (p1 == NULL || p2 == NULL) {
		rc = AL_ENOMEM;
		goto out;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0 ||
	    (rc = al_catalog_source_yaml(&b1, cs, image, NULL)) < 0 ||
	    (rc = al_cluster_catalog_yaml(&b2, cc, image)) < 0 ||
	    (rc = al_fs_write_atomic(p1, b1.ptr, b1.len)) < 0 ||
	    (rc = al_fs_write_atomic(p2, b2.ptr, b2.len)) < 0)
		failed(r, rc, "cannot write resources into '%s'", dir);
out:
	if (rc == AL_ENOMEM)
		said(r, AL_CATALOG_RUN_EV_ERROR, NULL, "out of memory");
	free(image);
	free(cs);
	free(cc);
	free(p1);
	free(p2);
	al_buf_free(&b1);
	al_buf_free(&b2);
	return rc;
}

/* Run the transfer over what is queued; an event for each failed image,
 * then the totals. */
static int run_transfer(const cr_run *r, const char *what)
{
	al_catalog_run_event ev;
	al_transfer_stats st = AL_TRANSFER_STATS_INIT;
	size_t i;
	int rc, worst = 0;

	rc = al_transfer_run(r->t, &st);
	ev_init(&ev, AL_CATALOG_RUN_EV_TRANSFER_END);
	emit(r, &ev);
	for (i = 0; rc < 0 && i < al_transfer_count(r->t); i++) {
		const char *msg = NULL;
		int status = 0;

		al_transfer_result(r->t, (int)i, &status, NULL, NULL, &msg);
		if (status < 0) {
			said(r, AL_CATALOG_RUN_EV_ERROR, what, "%s",
			     msg != NULL ? msg : "");
			if (worst == 0 || status == AL_EVERIFY)
				worst = status;
		}
	}
	ev_init(&ev, AL_CATALOG_RUN_EV_TRANSFERRED);
	ev.subject = what;
	ev.stats = &st;
	emit(r, &ev);
	return rc < 0 ? (worst < 0 ? worst : rc) : 0;
}

/* Queue s (a docker reference, or oci:) for the store under dst_name
 * (NULL: its own name). */
static int queue_image(const cr_run *r, const char *s, const char *dst_name)
{
	char *with =
	    al_str_startswith(s, "docker://") || al_str_startswith(s, "oci:")
	        ? al_strdup(s)
	        : al_sprintf("docker://%s", s);
	al_imgref ref;
	int rc;

	memset(&ref, 0, sizeof(ref));
	if (with == NULL)
		return AL_ENOMEM;
	rc = al_imgref_parse(&ref, with);
	if (rc == 0)
		rc = al_transfer_add(r->t, &ref, dst_name);
	if (rc < 0)
		failed(r, rc, "cannot queue '%s'", s);
	al_imgref_clear(&ref);
	free(with);
	return rc < 0 ? rc : 0;
}

/* Warnings on a selection: what the filter could not resolve, images
 * named by tag. */
static void selection_warnings(const cr_run *r, const char *src,
                               const al_catalog_selection *sel)
{
	size_t i, ntag = 0, first = 0;

	for (i = 0; i < al_catalog_unresolved_count(sel->filtered); i++)
		said(r, AL_CATALOG_RUN_EV_WARNING, src, "catalog '%s': %s", src,
		     al_catalog_unresolved_at(sel->filtered, i));
	/* catalogs name their images by digest; a tag can move */
	for (i = 0; i < sel->nimages; i++) {
		if (strchr(sel->images[i], '@') == NULL && ntag++ == 0)
			first = i;
	}
	if (ntag > 0)
		said(r, AL_CATALOG_RUN_EV_WARNING, src,
		     "catalog '%s': %zu images are referenced by tag, not "
		     "digest (the first: '%s')",
		     src, ntag, sel->images[first]);
}

/* The images of sel fetched into the store (mirror), then taken into
 * the run's list. */
static int take_images(cr_run *r, const char *src, al_catalog_selection *sel)
{
	size_t i;
	int rc = 0;

	if (r->t != NULL) {
		char *what = al_sprintf("images of catalog '%s'", src);

		for (i = 0; i < sel->nimages && rc == 0; i++)
			rc = queue_image(r, sel->images[i], NULL);
		if (rc == 0)
			rc = run_transfer(r, what != NULL ? what : src);
		free(what);
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < sel->nimages; i++) {
		char **nv = al__array_grow(r->all, &r->capall, r->nall + 1,
		                           sizeof(*r->all));

		if (nv == NULL) {
			said(r, AL_CATALOG_RUN_EV_ERROR, NULL, "out of memory");
			return AL_ENOMEM;
		}
		r->all = nv;
		r->all[r->nall++] = sel->images[i];
		sel->images[i] = NULL;
	}
	return 0;
}

/* The selection written out: FBC, cluster resources, and the rebuilt
 * catalog's event. */
static int write_out(const cr_run *r, const al_catalog_selection *sel,
                     const char *src, const char *dst, const char *repo)
{
	const al_catalog_run_opts *o = r->o;
	al_catalog_run_event ev;
	int rc;

	if (o->fbc != NULL) {
		char *sub = al_catalog_resource_name("fbc", dst);
		char *d =
		    sub != NULL ? al_sprintf("%s/%s", o->fbc, sub + 4) : NULL;

		rc = d != NULL ? al_catalog_write_dir(sel->filtered, d)
		               : AL_ENOMEM;
		if (rc < 0)
			failed(r, rc, "cannot write the catalog into '%s'",
			       o->fbc);
		free(sub);
		free(d);
		if (rc < 0)
			return rc;
	}
	if (o->resources != NULL && (rc = write_resources(r, repo, dst)) < 0)
		return rc;
	if (!o->dry_run) {
		ev_init(&ev, AL_CATALOG_RUN_EV_REBUILT);
		ev.subject = src;
		ev.target = dst;
		ev.packages = al_catalog_package_count(sel->filtered);
		ev.bundles = al_catalog_bundle_count(sel->filtered);
		ev.digest = sel->rebuilt.digest;
		emit(r, &ev);
	}
	return 0;
}

/* One mirror.operators[] entry; ends with its DONE event. A
 * configuration asking for what the catalog lacks is input. */
static void do_one(cr_run *r, const al_imageset_operator *op)
{
	al_catalog_selection *sel = NULL;
	char *src = NULL, *dst = NULL, *repo = NULL;
	int rc, input = 0;

	if ((rc = al_catalog_names(op, &src, &dst, &repo)) < 0) {
		failed(r, rc, "%s:%zu", r->cfg->path, op->line);
		goto out;
	}
	/* the catalog image first: it may have moved since last time */
	if (r->t != NULL && ((rc = queue_image(r, op->catalog, src)) < 0 ||
	                     (rc = run_transfer(r, op->catalog)) < 0))
		goto out;
	if ((rc = al_catalog_select(&sel, r->store, op, r->o->platform,
	                            !r->o->dry_run)) < 0) {
		failed(r, rc, "%s:%zu", r->cfg->path, op->line);
		if (rc == AL_ENOTFOUND) {
			al_store_image img;

			memset(&img, 0, sizeof(img));
			/* the catalog is there: the configuration asks for
			 * something it does not have */
			if (al_store_find(r->store, src, &img) == 0)
				input = 1;
			al_store_image_clear(&img);
		}
		goto out;
	}
	selection_warnings(r, src, sel);
	if ((rc = take_images(r, src, sel)) < 0)
		goto out;
	rc = write_out(r, sel, src, dst, repo);
out:
	al_catalog_selection_free(sel);
	free(src);
	free(dst);
	free(repo);
	done(r, rc, input);
}

/* The transfer of a mirror run: the caller's settings, the imageset's
 * sources and insecure registries, every platform. */
static int start_transfer(cr_run *r, const char ***insecure)
{
	al_transfer_opts to = AL_TRANSFER_OPTS_INIT;
	size_t i;
	int rc;

	if (r->o->transfer != NULL)
		to = *r->o->transfer;
	to.sources = r->cfg->sources;
	to.nsources = r->cfg->nsources;
	to.platform = NULL; /* every platform, as airlock mirror */
	*insecure = calloc(r->cfg->ninsecure + 1, sizeof(**insecure));
	if (*insecure == NULL) {
		said(r, AL_CATALOG_RUN_EV_ERROR, NULL, "out of memory");
		return al_error_oom();
	}
	for (i = 0; i < r->cfg->ninsecure; i++)
		(*insecure)[i] = r->cfg->insecure[i];
	to.insecure_hosts = *insecure;
	if ((rc = al_transfer_new_to_store(&r->t, r->store, &to)) < 0)
		failed(r, rc, "cannot start the transfer");
	return rc;
}

/* LIST: each catalog of the store, with its counts; one DONE event per
 * catalog that could not be read. */
static int list_catalogs(const cr_run *r)
{
	al_store_image *imgs = NULL;
	al_catalog_run_event ev;
	size_t n = 0, i;
	int rc;

	if ((rc = al_store_list(r->store, &imgs, &n)) < 0) {
		failed(r, rc, "cannot list the store");
		done(r, rc, 0);
		return rc;
	}
	for (i = 0; i < n; i++) {
		al_catalog *c = NULL;
		int kind = al_catalog_image_kind(r->store, &imgs[i].desc.digest,
		                                 r->o->platform);

		if (kind != 1 && kind != 2)
			continue;
		ev_init(&ev, AL_CATALOG_RUN_EV_LISTED);
		ev.subject = imgs[i].name;
		ev.digest = imgs[i].desc.digest;
		ev.sqlite = kind == 2;
		if (kind == 1) {
			rc = al_catalog_open_image(&c, NULL, r->store,
			                           &imgs[i].desc.digest,
			                           r->o->platform);
			if (rc < 0) {
				failed(r, rc, "catalog '%s'", imgs[i].name);
				done(r, rc, 0);
				continue;
			}
			ev.packages = al_catalog_package_count(c);
			ev.bundles = al_catalog_bundle_count(c);
		}
		emit(r, &ev);
		al_catalog_free(c);
	}
	al_store_images_free(imgs, n);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The run's images, sorted, each once, into report. */
static void give_images(cr_run *r, al_catalog_run_report *report)
{
	size_t i, n = 0;

	if (r->nall > 1)
		qsort(r->all, r->nall, sizeof(*r->all), cmp_str);
	for (i = 0; i < r->nall; i++) {
		if (n > 0 && strcmp(r->all[i], r->all[n - 1]) == 0) {
			free(r->all[i]);
			continue;
		}
		r->all[n++] = r->all[i];
	}
	r->nall = n;
	if (report != NULL) {
		report->images = r->all;
		report->nimages = r->nall;
		r->all = NULL;
		r->nall = 0;
	}
}

int al_catalog_run(al_store *store, const al_imageset *imageset,
                   const al_catalog_run_opts *opts,
                   al_catalog_run_report *report)
{
	cr_run r;
	const char **insecure = NULL;
	size_t i;
	int rc = 0;

	if ((rc = AL_RESULT_VERSION_CHECK("al_catalog_run_report", report,
	                                  version,
	                                  AL_CATALOG_RUN_REPORT_VERSION)) < 0)
		return rc;
	if (report != NULL)
		AL_RESULT_ZERO(report);
	if (opts == NULL || store == NULL)
		return al_error_set(AL_EINVAL, "al_catalog_run: no %s",
		                    opts == NULL ? "options" : "store");
	if ((rc = al_opts_version_check("al_catalog_run_opts", opts->version,
	                                AL_CATALOG_RUN_OPTS_VERSION)) < 0)
		return rc;
	if (opts->mode != AL_CATALOG_RUN_LIST &&
	    (imageset == NULL || (opts->mirror && opts->dry_run) ||
	     (opts->resources == NULL) != (opts->registry == NULL)))
		return al_error_set(AL_EINVAL,
		                    "al_catalog_run: an imageset is needed; "
		                    "mirror excludes dry_run; resources and "
		                    "registry go together");
	memset(&r, 0, sizeof(r));
	r.store = store;
	r.cfg = imageset;
	r.o = opts;
	if (opts->mode == AL_CATALOG_RUN_LIST)
		return list_catalogs(&r);
	if (opts->mirror && (rc = start_transfer(&r, &insecure)) < 0) {
		done(&r, rc, 0);
		goto out;
	}
	for (i = 0; i < imageset->noperators; i++)
		do_one(&r, &imageset->operators[i]);
	give_images(&r, report);
out:
	for (i = 0; i < r.nall; i++)
		free(r.all[i]);
	free(r.all);
	al_transfer_free(r.t);
	free(insecure);
	return rc;
}

void al_catalog_run_report_clear(al_catalog_run_report *report)
{
	size_t i;

	if (report == NULL)
		return;
	for (i = 0; i < report->nimages; i++)
		free(report->images[i]);
	free(report->images);
	AL_RESULT_ZERO(report);
}
