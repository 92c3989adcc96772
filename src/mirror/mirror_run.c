/* mirror_run.c: the whole mirror workflow (al_mirror_run): imageset and
 * options merged, trusted keys and signature stores chosen, channels
 * resolved, releases mirrored, channels recorded and graphs saved. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/graph.h"
#include "airlock/log.h"
#include "airlock/mirror.h"
#include "mirror_catalogs.h"
#include "mirror_failed.h"
#include "mirror_graph.h"
#include "mirror_helm.h"
#include "mirror_imageset.h"
#include "mirror_sigstore.h"
#include "mirror_images.h"
#include "mirror_int.h"
#include "mirror_preflight.h"
#include "error_int.h"

typedef struct strv {
	const char **v;
	size_t n;
} strv;

struct al_mirror_plan {
	const al_imageset *cfg;
	const al_mirror_opts *opts;
	strv releases, images, keyrings, sigstores, insecure;
	al_mirror_sig_opts sig;
	al_pgp_keyring *kr;
	al_sig_source *sources; /* nsigstores + 1 slots (Red Hat's store) */
	int want_defaults; /* the shipped keys, if releases are Red Hat's */
	const char *platform;
	char platbuf[64];
	al_mirror__sigstore *sigstore; /* NULL: off (mirror_sigstore.c) */
	/* cfg's options alone (AL_MIRROR_IMAGESET_OPTIONS_ONLY) */
	al_imageset options_view;
};

static int strv_push(strv *s, const char *x)
{
	const char **grown = realloc(s->v, (s->n + 1) * sizeof(*grown));

	if (grown == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	s->v = grown;
	s->v[s->n++] = x;
	return 0;
}

static int strv_add(strv *s, const char *const *v, size_t n)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		if ((rc = strv_push(s, v[i])) < 0)
			return rc;
	return 0;
}

static int has_channels(const al_mirror_plan *p)
{
	return p->cfg != NULL && p->cfg->nchannels > 0;
}

/* mirror.operators[] (mirror_catalogs.c) */
static int has_operators(const al_mirror_plan *p)
{
	return p->cfg != NULL && p->cfg->noperators > 0;
}

static int red_hat(const al_mirror_plan *p)
{
	return al_sig_any_redhat_release(p->releases.v, p->releases.n);
}

/* The trusted keys (the keyrings, or the shipped Red Hat keys when there
 * are none) and the signature sources, with a spare slot for Red Hat's
 * store. */
static int load_trust(al_mirror_plan *p)
{
	size_t i;
	int rc;

	if ((rc =
	         al_sig_keyring_load_paths(&p->kr, p->keyrings.v, p->keyrings.n,
	                                   p->opts->keyring_flags)) < 0)
		return rc;
	for (i = 0; i < al_pgp_keyring_warning_count(p->kr); i++)
		al_log_warn("%s", al_pgp_keyring_warning(p->kr, i));
	p->sources = calloc(p->sigstores.n + 1, sizeof(*p->sources));
	if (p->sources == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (i = 0; i < p->sigstores.n; i++)
		if (al_sig_source_parse(&p->sources[i], p->sigstores.v[i]) < 0)
			return al_error_wrap(AL_EINVAL, "signature store '%s'",
			                     p->sigstores.v[i]);
	p->sig.keyring = p->kr;
	p->sig.sources = p->sources;
	p->sig.nsources = p->sigstores.n;
	return 0;
}

static int merge(al_mirror_plan *p)
{
	const al_imageset *cfg = p->cfg;
	const al_mirror_opts *o = p->opts;
	int rc;

	if (cfg != NULL &&
	    ((rc = strv_add(&p->releases, (const char *const *)cfg->releases,
	                    cfg->nreleases)) < 0))
		return rc;
	if ((rc = strv_add(&p->releases, o->releases, o->nreleases)) < 0 ||
	    (rc = strv_add(&p->images, o->images, o->nimages)) < 0 ||
	    (rc = strv_add(&p->keyrings, o->keyrings, o->nkeyrings)) < 0 ||
	    (rc = strv_add(&p->sigstores, o->signature_stores,
	                   o->nsignature_stores)) < 0)
		return rc;
	if (cfg != NULL &&
	    ((rc = strv_add(&p->images, (const char *const *)cfg->additional,
	                    cfg->nadditional)) < 0 ||
	     (rc = strv_add(&p->insecure, (const char *const *)cfg->insecure,
	                    cfg->ninsecure)) < 0 ||
	     (rc = strv_add(&p->keyrings, (const char *const *)cfg->keyrings,
	                    cfg->nkeyrings)) < 0 ||
	     (rc = strv_add(&p->sigstores,
	                    (const char *const *)cfg->signature_stores,
	                    cfg->nsignature_stores)) < 0))
		return rc;
	if (o->transfer != NULL && o->transfer->insecure_hosts != NULL) {
		const char *const *h;
		for (h = o->transfer->insecure_hosts; *h != NULL; h++)
			if ((rc = strv_push(&p->insecure, *h)) < 0)
				return rc;
	}
	if ((rc = strv_push(&p->insecure, NULL)) < 0)
		return rc;
	p->platform = o->platform;
	if (p->platform == NULL && cfg != NULL && cfg->narchitectures == 1) {
		int n = snprintf(p->platbuf, sizeof(p->platbuf), "linux/%s",
		                 cfg->architectures[0]);
		if (n < 0 || (size_t)n >= sizeof(p->platbuf))
			return al_error_set(AL_EINVAL,
			                    "architecture '%s' is too long",
			                    cfg->architectures[0]);
		p->platform = p->platbuf;
	}
	/* imageset: notes, blockedImages, platforms (mirror_imageset.c) */
	p->platform = al_mirror__imageset_plan(cfg, p->platform, o->platform,
	                                       p->releases.v, &p->releases.n,
	                                       p->images.v, &p->images.n);
	return 0;
}

static int check(al_mirror_plan *p)
{
	const char *timeout = p->opts->signature_timeout;
	const char *policy = p->opts->identity_policy;
	unsigned flags = p->opts->flags;

	if (p->cfg != NULL && timeout == NULL)
		timeout = p->cfg->signature_timeout;
	if (p->cfg != NULL && policy == NULL)
		policy = p->cfg->identity_policy;
	if (p->releases.n == 0 && p->images.n == 0 && !has_channels(p) &&
	    !has_operators(p) && al_mirror__own_platform_count(p->cfg) == 0 &&
	    !al_mirror_helm_wanted(p->cfg))
		return al_error_set(AL_EINVAL,
		                    "nothing to mirror: give "
		                    "RELEASE references or --config");
	p->sig.policy = AL_SIG_IDENTITY_REPOSITORY;
	if (policy != NULL &&
	    al_sig_identity_policy_parse(&p->sig.policy, policy) < 0)
		return al_error_set(AL_EINVAL,
		                    "--identity-policy takes exact, "
		                    "repository or ignore, not '%s'",
		                    policy);
	if (timeout != NULL &&
	    (al_parse_duration(timeout, &p->sig.budget_ms) < 0 ||
	     p->sig.budget_ms == 0))
		return al_error_wrap(AL_EINVAL, "signature timeout");
	/* Red Hat's releases (named, or from channels of the update service)
	 * are checked against the shipped keys when no keyring is given */
	if (p->keyrings.n == 0 && !(flags & AL_MIRROR_NO_DEFAULT_KEYS))
		p->want_defaults = has_channels(p) || red_hat(p);
	if (p->keyrings.n == 0 && !p->want_defaults &&
	    !(flags & AL_MIRROR_ALLOW_UNSIGNED) &&
	    (p->releases.n > 0 || has_channels(p)))
		return al_error_set(
		    AL_EINVAL,
		    "no trusted keys to verify release signatures: give "
		    "--keyring "
		    "(or airlock.signatures.keyrings), or --allow-unsigned");
	if (p->opts->version >= 4 && p->opts->push != NULL &&
	    (p->opts->push_result == NULL || p->opts->push->registry == NULL ||
	     p->opts->push->registry[0] == '\0'))
		return al_error_set(AL_EINVAL, "a mirror with a push needs its "
		                               "registry and push_result");
	p->sig.allow_unsigned = (flags & AL_MIRROR_ALLOW_UNSIGNED) != 0;
	p->sig.require_all = (flags & AL_MIRROR_REQUIRE_ALL) != 0;
	return 0;
}

void al_mirror_plan_free(al_mirror_plan *plan)
{
	if (plan == NULL)
		return;
	al_pgp_keyring_free(plan->kr);
	al_mirror__sigstore_free(plan->sigstore);
	free(plan->sources);
	free(plan->releases.v);
	free(plan->images.v);
	free(plan->keyrings.v);
	free(plan->sigstores.v);
	free(plan->insecure.v);
	free(plan);
}

int al_mirror_plan_new(al_mirror_plan **out, const al_imageset *imageset,
                       const al_mirror_opts *opts)
{
	al_mirror_plan *p = NULL;
	int rc;

	if (out == NULL || opts == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_mirror_plan_new: no options");
	if ((rc = al_opts_version_check("al_mirror_opts", opts->version,
	                                AL_MIRROR_OPTS_VERSION)) < 0)
		return rc;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	p->sig = (al_mirror_sig_opts)AL_MIRROR_SIG_OPTS_INIT;
	p->cfg = imageset;
	/* mirror --retry --config: the list says what, the imageset how */
	if (opts->flags & AL_MIRROR_IMAGESET_OPTIONS_ONLY)
		p->cfg = al_mirror__options_view(&p->options_view, imageset);
	p->opts = opts;
	if ((rc = merge(p)) < 0 || (rc = check(p)) < 0 ||
	    (rc = al_mirror__sigstore_prepare(&p->sigstore, opts)) < 0)
		goto out;
	/* the shipped keys for channels wait until the channels named their
	 * releases: another update service's are not Red Hat's */
	if ((p->keyrings.n > 0 || (p->want_defaults && red_hat(p))) &&
	    (rc = load_trust(p)) < 0)
		goto out;
	*out = p;
	p = NULL;
out:
	al_mirror_plan_free(p);
	return rc;
}

/* Zero res, keeping the versions its caller set: its own, its report's
 * and the report's stats' (docs/architecture.md "Options structs"). */
static void result_zero(al_mirror_result *res)
{
	unsigned rv = res->report.version, sv = res->report.stats.version;

	AL_RESULT_ZERO(res);
	res->report.version = rv;
	res->report.stats.version = sv;
}

void al_mirror_result_clear(al_mirror_result *result)
{
	if (result == NULL)
		return;
	al_mirror_report_clear(&result->report);
	al_mirror__catalogs_clear(result);
	al_mirror__helm_clear(result);
	free(result->failed_list);
	result_zero(result);
}

#define add_errorf al_mirror__report_errorf /* mirror_int.h */

/* Record the channels of the releases they selected, save the graphs. */
static int after(al_store *store, const al_graph_selection *sel, size_t first,
                 al_mirror_result *res, int rc)
{
	size_t i;

	for (i = 0; i < sel->nreleases && first + i < res->report.nreleases;
	     i++) {
		al_mirror_release *rel = &res->report.releases[first + i];
		int r2;
		if (rel->status != 0)
			continue;
		r2 = al_mirror_record_channels(
		    store, &rel->digest,
		    (const char *const *)sel->releases[i].channels,
		    sel->releases[i].nchannels);
		if (r2 < 0) {
			add_errorf(&res->report, "recording channels of %s: %s",
			           rel->source, al_error_message());
			rc = rc < 0 ? rc : r2;
		}
	}
	for (i = 0; i < sel->ngraphs; i++) {
		int r2 = al_graph_save_to_store(store, sel->graphs[i]);
		if (r2 < 0) {
			add_errorf(&res->report, "saving the update graph: %s",
			           al_error_message());
			rc = rc < 0 ? rc : r2;
		}
	}
	return rc;
}

/*
 * Mirror to mirror (al_mirror_opts.push, docs/lifecycle.md): every image
 * of the store pushed with al_push_store after the mirror, whatever the
 * mirror's own outcome (what arrived is pushed; a rerun brings the rest).
 * Unless the caller gave push->transfer, the run's transfer options
 * (mirror_to) serve, with its insecure hosts (the imageset's
 * airlock.insecureRegistries too) but no platform (the store's images are
 * pushed whole), no source remapping and no renames. Returns rc, or the
 * push's status when rc is 0 (AL_EVERIFY wins).
 */
static int push_after(al_mirror_plan *p, al_store *store,
                      const al_transfer_opts *mirror_to, int rc)
{
	al_push_opts po = *p->opts->push;
	al_transfer_opts to = *mirror_to;
	int r2;

	/* interrupted (SIGINT): nothing to push now, a rerun resumes */
	if (al_cancel_is_set(mirror_to->cancel))
		return rc;
	to.platform = NULL;
	to.sources = NULL;
	to.nsources = 0;
	to.renames = NULL;
	if (po.transfer == NULL)
		po.transfer = &to;
	al_log_info("pushing the store to %s%s%s", po.registry,
	            po.prefix != NULL && po.prefix[0] != '\0' ? "/" : "",
	            po.prefix != NULL ? po.prefix : "");
	r2 = al_push_store(store, &po, p->opts->push_result);
	if (r2 < 0 && (rc == 0 || r2 == AL_EVERIFY))
		rc = r2;
	return rc;
}

/* Channels: ask the update graph which releases are in range; they join
 * p->releases (borrowed from *sel) from *first on. */
static int resolve_channels(al_mirror_plan *p, const al_transfer_opts *to,
                            al_graph_selection *sel, size_t *first,
                            al_mirror_result *res)
{
	al_graph_opts go = AL_GRAPH_OPTS_INIT;
	size_t i;
	int rc;

	go.url = p->opts->graph_url;
	go.graph_file = p->opts->graph_file;
	go.http = &to->registry.http;
	if ((rc = al_graph_resolve_imageset(p->cfg, &go, sel)) < 0)
		return al_error_wrap(rc, "cannot resolve the channels of '%s'",
		                     p->cfg->path ? p->cfg->path : "");
	*first = p->releases.n;
	for (i = 0; i < sel->nreleases; i++)
		if ((rc = strv_push(&p->releases, sel->releases[i].payload)) <
		    0)
			return rc;
	res->channel_releases = sel->nreleases;
	al_log_info("channels: %zu releases selected", sel->nreleases);
	return 0;
}

/* The refusals once the channels named their releases (res->refused):
 * nothing to mirror, no trusted keys. */
static int refuse(al_mirror_plan *p, al_mirror_result *res)
{
	int rc;

	if (p->releases.n == 0 && p->images.n == 0 && !has_operators(p) &&
	    al_mirror__own_platform_count(p->cfg) == 0 &&
	    !al_mirror_helm_wanted(p->cfg)) {
		res->refused = 1;
		return al_error_set(
		    AL_EINVAL,
		    "nothing to mirror: the channels selected no release");
	}
	if (p->kr == NULL && p->want_defaults && red_hat(p) &&
	    (rc = load_trust(p)) < 0) {
		res->refused = 1;
		return rc;
	}
	if (p->kr == NULL && !(p->opts->flags & AL_MIRROR_ALLOW_UNSIGNED) &&
	    p->releases.n > 0) {
		res->refused = 1;
		return al_error_set(
		    AL_EINVAL, "no trusted keys for releases not under "
		               "quay.io/openshift-release-dev: give --keyring "
		               "(or airlock.signatures.keyrings), or "
		               "--allow-unsigned");
	}
	return 0;
}

/* The transfer options of the run (*to) and the signature sources. */
static void run_options(al_mirror_plan *p, al_transfer_opts *to)
{
	to->platform = p->platform;
	to->insecure_hosts = p->insecure.v;
	if (p->cfg != NULL) {
		to->sources = p->cfg->sources;
		to->nsources = p->cfg->nsources;
		/* additionalImages[].targetRepo/targetTag (imageset_target.c)
		 */
		to->renames = (const char *const *)p->cfg->additional_renames;
	}
	p->sig.http = &to->registry.http;
	/* Red Hat's published signature store, besides the configured ones,
	 * when a release is Red Hat's (docs/signatures.md) */
	if (p->kr != NULL && !(p->opts->flags & AL_MIRROR_NO_DEFAULT_STORE) &&
	    red_hat(p))
		al_sig_sources_add_redhat(p->sources, &p->sig.nsources,
		                          p->sigstores.n + 1);
	if (p->kr == NULL && p->releases.n > 0)
		al_log_warn("release signatures are not checked (no "
		            "--keyring): releases are recorded as unverified");
}

/* The steps of a run that goes on, in order; returns the worst status. */
static int run_steps(al_mirror_plan *p, al_store *store,
                     const al_transfer_opts *to, const al_graph_selection *sel,
                     size_t first, al_mirror_result *res)
{
	int rc = 0, r2;

	/* releases and additional images through the image engine
	 * (mirror_images.c; a run of only Helm charts has nothing for it) */
	if (p->releases.n > 0 || p->images.n > 0)
		rc = al_mirror__run_images(store, p->releases.v, p->releases.n,
		                           p->images.v, p->images.n, to,
		                           &p->sig, &res->report);
	/* a refusal before any image (no keyring, no --allow-unsigned) */
	if (rc < 0 && res->report.nerrors == 0 &&
	    (r2 = add_errorf(&res->report, "%s", al_error_message())) < 0)
		rc = r2;
	/* mirror.helm: charts and their images (src/mirror/mirror_helm.c) */
	if ((r2 = al_mirror__helm(store, p->cfg, to, res)) < 0 && rc == 0)
		rc = r2;
	/* imageset: architectures, kubeVirtContainer, archiveSize */
	if ((r2 = al_mirror__imageset_after(p->cfg, store, to, &res->report)) <
	        0 &&
	    rc == 0)
		rc = r2;
	rc = after(store, sel, first, res, rc);
	/* mirror.platform.graph: the graph-data image (mirror_graph.c) */
	rc = al_mirror__graph_image(store, p->cfg, res, rc);
	/* operator catalogs: after the releases, so that their shared blobs
	 * are already in the store (mirror_catalogs.c) */
	rc = al_mirror__catalogs(store, p->cfg, to, res, rc);
	rc = al_mirror__sigstore_run(p->sigstore, store, to, p->images.v,
	                             p->images.n, p->sig.allow_unsigned, res,
	                             rc);
	/* what the plan fetched (release and catalog images, oci:// charts)
	 * counts as transferred by the run, whichever step met it */
	if (p->opts->version >= 3)
		al_mirror__plan_after(p->opts->lifecycle, &res->report.stats);
	/* mirror to mirror: the store pushed as airlock push does */
	if (p->opts->version >= 4 && p->opts->push != NULL)
		rc = push_after(p, store, to, rc);
	return rc;
}

/* The failed-image list (mirror_failed.c, docs/lifecycle.md); the run's
 * message ("N image(s) failed") stays the caller's. Returns rc, or the
 * write's failure when rc is 0. */
static int failed_list(al_mirror_plan *p, al_store *store,
                       al_mirror_result *res, int rc)
{
	char saved[1024];
	int r2;

	if ((p->opts->flags & AL_MIRROR_NO_FAILED_LIST) ||
	    res->report.nfailed == 0)
		return rc;
	snprintf(saved, sizeof(saved), "%s", al_error_message());
	if ((r2 = al_mirror_failed_write(res, al_store_path(store),
	                                 &res->failed_list)) < 0) {
		add_errorf(&res->report, "%s", al_error_message());
		rc = rc < 0 ? rc : r2;
	} else if (rc < 0) {
		al_error_set(rc, "%s", saved);
	}
	return rc;
}

int al_mirror_plan_run(al_mirror_plan *p, al_store *store,
                       al_mirror_result *res)
{
	al_graph_selection sel;
	al_transfer_opts to = AL_TRANSFER_OPTS_INIT;
	size_t first = 0, base, i;
	int rc = 0;

	memset(&sel, 0, sizeof(sel));
	if (res == NULL || p == NULL || store == NULL)
		return al_error_set(AL_EINVAL, "al_mirror_plan_run: NULL");
	if ((rc = AL_RESULT_VERSION_CHECK("al_mirror_result", res, version,
	                                  AL_MIRROR_RESULT_VERSION)) < 0 ||
	    (p->opts->version >= 4 &&
	     (rc = AL_RESULT_VERSION_CHECK("al_push_result",
	                                   p->opts->push_result, version,
	                                   AL_PUSH_RESULT_VERSION)) < 0))
		return rc;
	result_zero(res);
	if (p->opts->version >= 4 && p->opts->push_result != NULL)
		AL_RESULT_ZERO_STATS(p->opts->push_result);
	base = p->releases.n;
	if (p->opts->transfer != NULL)
		to = *p->opts->transfer;
	if ((has_channels(p) &&
	     (rc = resolve_channels(p, &to, &sel, &first, res)) < 0) ||
	    (rc = refuse(p, res)) < 0)
		goto out;
	run_options(p, &to);
	/* mirror_preflight.c: --dry-run and the free-space check
	 * (docs/lifecycle.md) */
	if (p->opts->version >= 3 &&
	    (rc = al_mirror__plan_before(store, p->opts->lifecycle, p->cfg,
	                                 p->releases.v, p->releases.n,
	                                 p->images.v, p->images.n, &to)) != 0) {
		/* no image resolved: still a failed-image list */
		if (rc < 0 && !(p->opts->flags & AL_MIRROR_NO_FAILED_LIST))
			al_mirror__failed_from_plan(p->opts->lifecycle, res,
			                            al_store_path(store));
		rc = rc > 0 ? 0 : rc;
		goto out;
	}
	res->ran = 1;
#ifdef __GLIBC__
	/* The plan's memory (its own resolve of every image and blob) is
	 * free now but stays in the process, in pieces the transfer does
	 * not reuse in full: given back before the transfer (peak RSS at
	 * 10,000 images, docs/performance.md). */
	if (p->opts->version >= 3 && p->opts->lifecycle != NULL)
		(void)malloc_trim(0);
#endif
	rc = run_steps(p, store, &to, &sel, first, res);
	res->images = (size_t)res->report.stats.images;
	for (i = 0; i < res->report.nreleases; i++)
		res->releases_mirrored += res->report.releases[i].status == 0;
	rc = failed_list(p, store, res, rc);
out:
	/* channel releases borrowed sel's payloads: forget them */
	p->releases.n = base;
	al_graph_selection_clear(&sel);
	return rc;
}

int al_mirror_run(al_store *store, const al_imageset *imageset,
                  const al_mirror_opts *opts, al_mirror_result *result)
{
	al_mirror_plan *plan = NULL;
	int rc;

	if ((rc = AL_RESULT_VERSION_CHECK("al_mirror_result", result, version,
	                                  AL_MIRROR_RESULT_VERSION)) < 0)
		return rc;
	if (result != NULL)
		result_zero(result);
	if ((rc = al_mirror_plan_new(&plan, imageset, opts)) < 0) {
		if (result != NULL)
			result->refused = 1;
		return rc;
	}
	rc = al_mirror_plan_run(plan, store, result);
	al_mirror_plan_free(plan);
	return rc;
}
