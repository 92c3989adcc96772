/* mirror_preflight.c: the planner of a mirror run (al_mirror__plan_before,
 * src/mirror/mirror_preflight.h): every image the run would move resolved from
 * its manifests into an al_plan (mirror_plan.c), then --dry-run writes
 * mapping.txt and missing.txt, or the free-space check refuses
 * (docs/lifecycle.md). A step of al_mirror_plan_run (mirror_run.c). */
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "airlock/release.h"
#include "catalog_int.h"
#include "mirror_helm.h"
#include "mirror_plan_int.h"
#include "mirror_preflight.h"

/* What one transfer image of the plan is. */
typedef struct slot {
	const char *kind;
	char *source;      /* canonical, with transport */
	char *destination; /* oci:STORE:NAME or docker://... */
	char *name;        /* store name (index.json) */
} slot;

typedef struct planner {
	al_store *store;
	al_mirror_lifecycle *lc;
	al_plan *plan;
	slot *slots; /* by transfer image index */
	size_t nslots;
	/* what the resolution gave: when no image resolved and some failed,
	 * the mirror stops with the first failure instead of meeting it
	 * again (a hung registry would cost every deadline twice) */
	size_t resolved, failed;
	int first_status;
	char *first_error;
	/* additional images stored under a target name (to->renames) */
	const char *const *renames;
	/* with lc->to under oc-mirror's layout: the releases and their
	 * components as the plan meets them, so that mapping.txt names
	 * where push will put them (NULL: source paths) */
	al_layout *layout;
} planner;

static void slots_free(planner *pl)
{
	size_t i;

	for (i = 0; i < pl->nslots; i++) {
		free(pl->slots[i].source);
		free(pl->slots[i].destination);
		free(pl->slots[i].name);
	}
	free(pl->slots);
	pl->slots = NULL;
	pl->nslots = 0;
}

/* The store name mirror gives ref (mirror.c's store_name: the normalised
 * docker reference, an oci: source's own name) and the canonical source. */
static int names_of(const char *ref, char **name, char **source)
{
	al_imgref ir = {0};
	char *n = NULL, *s = NULL;
	int rc;

	if ((rc = al_imgref_parse(&ir, ref)) < 0)
		return rc;
	if (ir.transport == AL_TRANSPORT_DOCKER)
		n = al_ref_string(&ir.ref);
	else
		n = al_strdup(ir.name != NULL ? ir.name : ir.path);
	s = al_imgref_string(&ir);
	al_imgref_clear(&ir);
	if (n == NULL || s == NULL) {
		free(n);
		free(s);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	*name = n;
	*source = s;
	return 0;
}

/* Where the run puts name: the store, or with --to where push puts it
 * at its place number place (al_push_target_layout_at). */
static char *destination_at(const planner *pl, const char *name, size_t place)
{
	char *repo = NULL, *ref = NULL, *d = NULL;
	const char *prefix;

	if (pl->lc->to == NULL)
		return al_sprintf("oci:%s:%s", al_store_path(pl->store), name);
	prefix = pl->lc->to;
	if (al_str_startswith(prefix, "docker://"))
		prefix += strlen("docker://");
	if (al_push_target_layout_at(pl->layout, name, place, prefix,
	                             pl->lc->max_nested, &repo, &ref) < 0)
		return al_sprintf("oci:%s:%s", al_store_path(pl->store), name);
	d = al_sprintf("docker://%s%s%s", repo,
	               al_str_startswith(ref, "sha256:") ? "@" : ":", ref);
	free(repo);
	free(ref);
	return d;
}

static char *destination_of(const planner *pl, const char *name)
{
	return destination_at(pl, name, 0);
}

/* Queue ref as an image of kind, stored as as (NULL: the name mirror
 * gives it); failures become failed entries. */
static int queue(planner *pl, al_transfer *t, const char *kind, const char *ref,
                 const char *as, int hold, int *idx)
{
	al_imgref ir = {0};
	char *name = NULL, *source = NULL, *dest = NULL;
	int rc, i = -1;

	*idx = -1;
	if ((rc = names_of(ref, &name, &source)) < 0 ||
	    (rc = al_imgref_parse(&ir, ref)) < 0) {
		if (rc == AL_ENOMEM)
			goto out;
		rc = al_plan_add_failed(pl->plan, kind, ref, "", rc,
		                        al_error_message());
		goto out;
	}
	if (as != NULL) {
		free(name);
		if ((name = al_strdup(as)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	/* an additional image with targetRepo/targetTag: its target name */
	if (strcmp(kind, "image") == 0 &&
	    al_imageset_rename_of(pl->renames, ref) != NULL) {
		free(name);
		if ((name = al_strdup(
		         al_imageset_rename_of(pl->renames, ref))) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	if ((dest = destination_of(pl, name)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((i = al_transfer_add(t, &ir, name)) < 0 ||
	    (hold && (rc = al_transfer_hold(t, i)) < 0)) {
		rc = al_plan_add_failed(pl->plan, kind, source, dest,
		                        i < 0 ? i : rc, al_error_message());
		goto out;
	}
	if ((size_t)i >= pl->nslots) {
		size_t n = (size_t)i + 1;
		slot *grown = realloc(pl->slots, n * sizeof(*grown));
		if (grown == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		memset(grown + pl->nslots, 0,
		       (n - pl->nslots) * sizeof(*grown));
		pl->slots = grown;
		pl->nslots = n;
	}
	/* the same image queued twice is one transfer image */
	free(pl->slots[i].source);
	free(pl->slots[i].destination);
	free(pl->slots[i].name);
	pl->slots[i].kind = kind;
	pl->slots[i].source = source;
	pl->slots[i].destination = dest;
	pl->slots[i].name = name;
	source = dest = name = NULL;
	*idx = i;
	rc = 0;
out:
	al_imgref_clear(&ir);
	free(name);
	free(source);
	free(dest);
	return rc;
}

static int on_resolved(void *ud, int image, int status, const char *message,
                       const al_descriptor *top, uint64_t manifest_bytes,
                       const al_descriptor *blobs, size_t nblobs)
{
	planner *pl = ud;
	const slot *s;
	size_t n, p;
	int rc;

	(void)top;
	if (image < 0 || (size_t)image >= pl->nslots)
		return 0;
	s = &pl->slots[image];
	if (status < 0) {
		if (pl->failed++ == 0) {
			pl->first_status = status;
			pl->first_error = al_sprintf(
			    "%s: %s", s->source != NULL ? s->source : "?",
			    message != NULL ? message : "failed");
		}
		return al_plan_add_failed(pl->plan, s->kind, s->source,
		                          s->destination, status, message);
	}
	pl->resolved++;
	if ((rc = al_plan_add(pl->plan, s->kind, s->source, s->destination,
	                      pl->store, manifest_bytes, blobs, nblobs)) < 0)
		return rc;
	/* a component of several releases: a mapping line per place (the
	 * layout knows every release by now) */
	n = pl->lc->to != NULL ? al_layout_place_count(pl->layout, s->name) : 0;
	for (p = 1; p < n && rc == 0; p++) {
		char *d = destination_at(pl, s->name, p);

		rc = d != NULL ? al_plan__add_place(pl->plan, d)
		               : al_error_set(AL_ENOMEM, "out of memory");
		free(d);
	}
	return rc;
}

/* 1 when STORE/signatures/<algo>=<hex>/signature-1 exists. */
static int has_signature(al_store *store, const al_digest *d)
{
	char *dir = al_store_signature_dir(store, d);
	char *f = dir != NULL ? al_path_join(dir, "signature-1") : NULL;
	int r = f != NULL && al_fs_exists(f) == 1;

	free(dir);
	free(f);
	return r;
}

/*
 * Fetch the images of refs that resolved in t (idx[i] >= 0, resolved
 * only) into the store held, unnamed, through a transfer of their own:
 * the plan must read them (a release's image-references, a catalog's
 * FBC). The mirror that follows, or a later one, reuses the blobs. ok[i]
 * is 1 and d[i] the top manifest of each that arrived; what failed is a
 * warning (its entry resolved: the run meets the error again).
 */
static int prefetch(planner *pl, al_transfer *t, const char *const *refs,
                    const char *const *names, size_t n, const int *idx,
                    const al_transfer_opts *to, al_digest *d, int *ok)
{
	al_transfer_stats st = AL_TRANSFER_STATS_INIT;
	al_transfer *fetch = NULL;
	int *fidx = NULL;
	size_t i;
	int rc = 0;

	if ((fidx = calloc(n + 1, sizeof(*fidx))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if ((rc = al_transfer_new_to_store(&fetch, pl->store, to)) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		al_imgref ir = {0};
		char *name = NULL, *source = NULL;
		int status = 0;

		fidx[i] = -1;
		ok[i] = 0;
		if (idx[i] < 0)
			continue;
		al_transfer_result(t, idx[i], &status, NULL, NULL, NULL);
		if (status != AL_ECANCELED)
			continue;
		if ((rc = names_of(refs[i], &name, &source)) == 0 &&
		    (rc = al_imgref_parse(&ir, refs[i])) == 0 &&
		    (rc = al_transfer_add(fetch, &ir,
		                          names != NULL && names[i] != NULL
		                              ? names[i]
		                              : name)) >= 0) {
			fidx[i] = rc;
			rc = al_transfer_hold(fetch, fidx[i]);
		}
		al_imgref_clear(&ir);
		free(name);
		free(source);
		if (rc < 0)
			goto out;
	}
	al_transfer_run(fetch, &st);
	pl->lc->prefetched += st.bytes_transferred;
	pl->lc->prefetched_blobs += st.blobs_transferred;
	for (i = 0; i < n; i++) {
		const char *msg;
		int status;

		if (fidx[i] < 0)
			continue;
		al_transfer_result(fetch, fidx[i], &status, &d[i], NULL, &msg);
		if (status < 0)
			al_log_warn("plan: %s", msg);
		else
			ok[i] = 1;
	}
	rc = 0;
out:
	al_transfer_free(fetch);
	free(fidx);
	return rc;
}

/* The release ref (and, with r, its components) into pl->layout under the
 * name mirror stores it as; nothing without a layout. A ref that names
 * nothing stays unplaced: queue makes it a failed entry. */
static int layout_release(planner *pl, const char *ref, const al_release *r)
{
	char *name = NULL, *source = NULL;
	int rc;

	if (pl->layout == NULL)
		return 0;
	if (names_of(ref, &name, &source) < 0) {
		al_error_clear();
		return 0;
	}
	rc = al_layout_add_release(pl->layout, name, r);
	if (rc == AL_EPARSE) {
		/* an oci: release keeps its name: no docker tag to place */
		al_error_clear();
		rc = 0;
	}
	free(name);
	free(source);
	return rc;
}

/* Releases: resolved for the plan, then fetched (held, unnamed) so that
 * their image-references can be read; components queued. */
static int plan_releases(planner *pl, al_transfer *t,
                         const char *const *releases, size_t n,
                         const al_transfer_opts *to)
{
	al_digest *dig = NULL;
	int *idx = NULL, *ok = NULL;
	size_t i, j;
	int rc = 0;

	if (n == 0)
		return 0;
	idx = calloc(n, sizeof(*idx));
	ok = calloc(n, sizeof(*ok));
	dig = calloc(n, sizeof(*dig));
	if (idx == NULL || ok == NULL || dig == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		/* placed before it is queued: its entry names where it goes */
		if ((rc = layout_release(pl, releases[i], NULL)) < 0 ||
		    (rc = queue(pl, t, "release", releases[i], NULL, 1,
		                &idx[i])) < 0)
			goto out;
	}
	if ((rc = al_transfer_resolve(t, on_resolved, pl)) < 0 ||
	    (rc = prefetch(pl, t, releases, NULL, n, idx, to, dig, ok)) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		al_release *r = NULL;

		if (!ok[i])
			continue;
		if (!has_signature(pl->store, &dig[i]))
			pl->lc->signatures_missing++;
		if (al_release_open(&r, pl->store, &dig[i],
		                    to != NULL ? to->platform : NULL) < 0) {
			al_log_warn("plan: %s: not a release image: %s",
			            releases[i], al_error_message());
			continue;
		}
		if ((rc = layout_release(pl, releases[i], r)) < 0) {
			al_release_free(r);
			goto out;
		}
		for (j = 0; j < al_release_component_count(r); j++) {
			const al_release_component *c =
			    al_release_component_at(r, j);
			int ci;
			if ((rc = queue(pl, t, "component", c->image, NULL, 0,
			                &ci)) < 0)
				break;
		}
		al_release_free(r);
		if (rc < 0)
			goto out;
	}
out:
	free(dig);
	free(ok);
	free(idx);
	return rc;
}

/*
 * mirror.operators[]: each catalog image resolved, then fetched (held,
 * unnamed: its FBC must be read to filter it, as a release's
 * image-references), read and filtered as the catalogs step would
 * (al_catalog_select), and the bundle and related images it selects
 * queued, manifests only. A catalog that cannot be named, fetched, read
 * or filtered is a failed entry.
 */
static int plan_catalogs(planner *pl, al_transfer *t, const al_imageset *cfg,
                         const al_transfer_opts *to)
{
	const al_imageset_operator *ops;
	const char **refs = NULL;
	char **names = NULL;
	al_digest *dig = NULL;
	int *idx = NULL, *ok = NULL;
	size_t n, i, j;
	int rc = 0;

	if (cfg == NULL || cfg->noperators == 0)
		return 0;
	n = cfg->noperators;
	ops = cfg->operators;
	refs = calloc(n, sizeof(*refs));
	names = calloc(n, sizeof(*names));
	idx = calloc(n, sizeof(*idx));
	ok = calloc(n, sizeof(*ok));
	dig = calloc(n, sizeof(*dig));
	if (refs == NULL || names == NULL || idx == NULL || ok == NULL ||
	    dig == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		char *target = NULL, *repo = NULL;

		refs[i] = ops[i].catalog;
		idx[i] = -1;
		rc = al_catalog_names(&ops[i], &names[i], &target, &repo);
		free(target);
		free(repo);
		if (rc == AL_ENOMEM)
			goto out;
		if (rc < 0) {
			char msg[2048];

			snprintf(msg, sizeof(msg), "%s:%zu: catalog '%s': %s",
			         cfg->path != NULL ? cfg->path : "",
			         ops[i].line, ops[i].catalog,
			         al_error_message());
			if ((rc = al_plan_add_failed(pl->plan, "catalog",
			                             ops[i].catalog, "", rc,
			                             msg)) < 0)
				goto out;
			continue;
		}
		if ((rc = queue(pl, t, "catalog", ops[i].catalog, names[i], 1,
		                &idx[i])) < 0)
			goto out;
	}
	if ((rc = al_transfer_resolve(t, on_resolved, pl)) < 0 ||
	    (rc = prefetch(pl, t, refs, (const char *const *)names, n, idx, to,
	                   dig, ok)) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		al_catalog_selection *sel = NULL;

		if (!ok[i])
			continue;
		if (al_catalog__select_digest(&sel, pl->store, &ops[i], &dig[i],
		                              to != NULL ? to->platform
		                                         : NULL) < 0) {
			char msg[2048];

			snprintf(msg, sizeof(msg), "%s:%zu: %s",
			         cfg->path != NULL ? cfg->path : "",
			         ops[i].line, al_error_message());
			if ((rc = al_plan__mark_failed(pl->plan, "catalog",
			                               pl->slots[idx[i]].source,
			                               AL_EINVAL, msg)) < 0)
				goto out;
			continue;
		}
		al_log_info("plan: catalog '%s': %zu bundle and related "
		            "images selected",
		            names[i], sel->nimages);
		for (j = 0; j < sel->nimages && rc == 0; j++) {
			int x;
			rc = queue(pl, t, "operator", sel->images[j], NULL, 0,
			           &x);
		}
		al_catalog_selection_free(sel);
		if (rc < 0)
			goto out;
	}
out:
	for (i = 0; names != NULL && i < n; i++)
		free(names[i]);
	free(names);
	free(refs);
	free(dig);
	free(ok);
	free(idx);
	return rc;
}

static char *helm_dest(void *ud, const char *name)
{
	return destination_of(ud, name);
}

/* mirror.helm: the charts into the plan (mirror_helm.c), their images
 * queued as the helm step mirrors them. */
static int plan_helm(planner *pl, al_transfer *t, const al_imageset *cfg,
                     const al_transfer_opts *to)
{
	al_mirror__helm_plan_ctx hp;
	al_transfer_opts none = AL_TRANSFER_OPTS_INIT;
	size_t i;
	int rc, x;

	if (!al_mirror_helm_wanted(cfg))
		return 0;
	memset(&hp, 0, sizeof(hp));
	hp.plan = pl->plan;
	hp.dest = helm_dest;
	hp.ud = pl;
	rc = al_mirror__helm_plan(pl->store, cfg, to != NULL ? to : &none, &hp);
	pl->lc->prefetched += hp.prefetched;
	pl->lc->prefetched_blobs += hp.prefetched_blobs;
	for (i = 0; rc == 0 && i < hp.nimages; i++)
		rc = queue(pl, t, "chart-image", hp.images[i], NULL, 0, &x);
	al_mirror__helm_plan_clear(&hp);
	return rc;
}

void al_mirror__plan_after(const al_mirror_lifecycle *lc,
                           al_transfer_stats *stats)
{
	uint64_t n;

	if (lc == NULL || stats == NULL || lc->dry_run)
		return;
	n = lc->prefetched_blobs < stats->blobs_present ? lc->prefetched_blobs
	                                                : stats->blobs_present;
	stats->blobs_transferred += n;
	stats->blobs_present -= n;
	stats->bytes_transferred += lc->prefetched;
	stats->bytes_present = stats->bytes_present > lc->prefetched
	                           ? stats->bytes_present - lc->prefetched
	                           : 0;
}

int al_mirror__plan_before(al_store *store, al_mirror_lifecycle *lc,
                           const al_imageset *cfg, const char *const *releases,
                           size_t nreleases, const char *const *images,
                           size_t nimages, const al_transfer_opts *to)
{
	planner pl;
	al_transfer *t = NULL;
	al_plan_totals tot;
	size_t i;
	int rc, idx;

	if (lc == NULL || (!lc->dry_run && lc->no_space_check))
		return 0;
	memset(&pl, 0, sizeof(pl));
	pl.store = store;
	pl.lc = lc;
	pl.renames = to != NULL ? to->renames : NULL;
	al_mirror_lifecycle_clear(lc);
	if ((rc = al_plan_new(&lc->plan)) < 0)
		return rc;
	if (lc->to != NULL && lc->layout != AL_LAYOUT_SOURCE &&
	    (rc = al_layout_new(&pl.layout, lc->layout)) < 0)
		goto out;
	pl.plan = lc->plan;
	if ((rc = al_transfer_new_to_store(&t, store, to)) < 0)
		goto out;
	if ((rc = plan_releases(&pl, t, releases, nreleases, to)) < 0 ||
	    (rc = plan_catalogs(&pl, t, cfg, to)) < 0 ||
	    (rc = plan_helm(&pl, t, cfg, to)) < 0)
		goto out;
	for (i = 0; i < nimages; i++)
		if ((rc = queue(&pl, t, "image", images[i], NULL, 0, &idx)) < 0)
			goto out;
	if ((rc = al_transfer_resolve(t, on_resolved, &pl)) < 0)
		goto out;
	al_plan_get_totals(lc->plan, &tot);
	/* entries that are not images the transfer resolved (charts read
	 * from an archive) count as resolved too: the run has work */
	if (!lc->dry_run && pl.failed > 0 && tot.images == tot.images_failed) {
		rc = al_error_set(pl.first_status, "%s",
		                  pl.first_error != NULL ? pl.first_error
		                                         : "no image resolved");
		goto out;
	}
	if ((rc = al_fs_free_space(al_store_path(store), &lc->free)) < 0)
		goto out;
	/* what the plan fetched itself is on disk already */
	lc->need = tot.bytes_missing > lc->prefetched
	               ? tot.bytes_missing - lc->prefetched
	               : 0;
	if (lc->dry_run) {
		lc->dir = lc->dry_run_dir != NULL
		              ? al_strdup(lc->dry_run_dir)
		              : al_sprintf("%s/airlock/dry-run",
		                           al_store_path(store));
		if (lc->dir == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = al_plan_write(lc->plan, lc->dir)) < 0)
			goto out;
		rc = 1;
		goto out;
	}
	if (lc->need > lc->free) {
		rc = al_error_set(AL_EIO,
		                  "not enough space on '%s': the selection "
		                  "needs %llu more bytes, the file system has "
		                  "%llu bytes free (--no-space-check to try "
		                  "anyway)",
		                  al_store_path(store),
		                  (unsigned long long)lc->need,
		                  (unsigned long long)lc->free);
		goto out;
	}
	al_log_info("plan: %zu images, %llu bytes to transfer, %llu bytes "
	            "free",
	            tot.images, (unsigned long long)lc->need,
	            (unsigned long long)lc->free);
	/* The run reads nothing of the plan again (its figures are in lc):
	 * freed before the transfer, which then does not hold two records
	 * of every image (docs/performance.md, "Mirror at scale"). */
	al_plan_free(lc->plan);
	lc->plan = NULL;
	rc = 0;
out:
	free(pl.first_error);
	al_layout_free(pl.layout);
	slots_free(&pl);
	al_transfer_free(t);
	return rc;
}
