/* mirror_sigstore.c: the sigstore step of al_mirror_plan_run: the cosign
 * tags and referrers of every image a run mirrored carried into the store
 * (al_cosign_carry), then the images checked against a Sigstore trusted
 * root (al_cosign_check_store_root, which is then kept in the store) and a
 * ClusterImagePolicy / ImagePolicy file (al_cosign_check_store).
 * docs/cosign.md. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/cosign.h"
#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "airlock/release.h"
#include "airlock/store.h"
#include "mirror_sigstore.h"
#include "mirror_int.h"

struct al_mirror__sigstore {
	unsigned what;         /* AL_COSIGN_FIND_* */
	const char *path;      /* the policy file, or NULL */
	al_cosign_policy *pol; /* loaded from path */
	const char *root_path; /* the trusted root file, or NULL */
	al_buf root;           /* its text, as read */
};

typedef struct namev {
	char **v;
	size_t n;
} namev;

/* Read the trusted root at path into ss->root and check now, before any
 * store or network, that it loads (as verify-image --carry does). */
static int read_root(al_mirror__sigstore *ss, const char *path)
{
	al_cosign_trust *t = NULL;
	int rc;

	if ((rc = al_fs_read_file(path, &ss->root)) < 0)
		return al_error_wrap(rc, "cannot read the trusted root '%s'",
		                     path);
	if ((rc = al_cosign_trust_new(&t)) == 0)
		rc = al_cosign_trust_add_trusted_root(t, ss->root.ptr,
		                                      ss->root.len, path);
	al_cosign_trust_free(t);
	ss->root_path = path;
	return rc;
}

int al_mirror__sigstore_prepare(al_mirror__sigstore **out,
                                const al_mirror_opts *opts)
{
	al_mirror__sigstore *ss = NULL;
	const char *path = NULL, *root = NULL;
	unsigned what = 0;
	int rc = 0;

	*out = NULL;
	if (opts->version >= 2) {
		path = opts->sigstore_policy;
		what = opts->sigstore_find;
	}
	if (opts->version >= 5)
		root = opts->sigstore_trusted_root;
	if (opts->flags & AL_MIRROR_NO_SIGSTORE) {
		if (path != NULL || root != NULL)
			return al_error_set(AL_EINVAL,
			                    "a sigstore %s ('%s') needs the "
			                    "signatures: it cannot be checked "
			                    "with sigstore off",
			                    path != NULL ? "policy"
			                                 : "trusted root",
			                    path != NULL ? path : root);
		return 0;
	}
	if (what & ~(unsigned)(AL_COSIGN_FIND_SIG | AL_COSIGN_FIND_ATT |
	                       AL_COSIGN_FIND_SBOM | AL_COSIGN_FIND_REFERRERS))
		return al_error_set(AL_EINVAL,
		                    "sigstore_find: unknown bits 0x%x", what);
	if ((ss = calloc(1, sizeof(*ss))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	ss->what = what != 0 ? what : AL_COSIGN_FIND_DEFAULT;
	ss->path = path;
	al_buf_init(&ss->root, AL_COSIGN_MAX_PEM);
	if (path != NULL &&
	    (rc = al_cosign_policy_load_file(&ss->pol, path)) < 0)
		goto out;
	if (root != NULL && (rc = read_root(ss, root)) < 0)
		goto out;
	*out = ss;
	ss = NULL;
out:
	al_mirror__sigstore_free(ss);
	return rc;
}

void al_mirror__sigstore_free(al_mirror__sigstore *ss)
{
	if (ss == NULL)
		return;
	al_cosign_policy_free(ss->pol);
	al_buf_free(&ss->root);
	free(ss);
}

/* Take ownership of s (NULL: out of memory). */
static int namev_take(namev *nv, char *s)
{
	char **grown;

	if (s == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	grown = realloc(nv->v, (nv->n + 1) * sizeof(*grown));
	if (grown == NULL) {
		free(s);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	nv->v = grown;
	nv->v[nv->n++] = s;
	return 0;
}

static void namev_clear(namev *nv)
{
	size_t i;

	for (i = 0; i < nv->n; i++)
		free(nv->v[i]);
	free(nv->v);
	memset(nv, 0, sizeof(*nv));
}

/*
 * The store name mirror gives ref (src/mirror/mirror.c: the normalised docker
 * reference), and with digest also "REPO@DIGEST" (the name of a release
 * that could not take its tag). An oci: reference has no registry to look
 * its signatures up at: counted in *local. A reference that does not
 * parse failed in the mirror already and is left alone.
 */
static int add_ref(namev *nv, const char *ref, const al_digest *digest,
                   size_t *local)
{
	al_imgref ir;
	char ds[AL_DIGEST_STRMAX];
	char *base = NULL;
	int rc = 0;

	memset(&ir, 0, sizeof(ir));
	if (al_imgref_parse(&ir, ref) < 0) {
		al_error_clear();
		return 0;
	}
	if (ir.transport != AL_TRANSPORT_DOCKER) {
		(*local)++;
		goto out;
	}
	if ((rc = namev_take(nv, al_ref_string(&ir.ref))) < 0)
		goto out;
	if (digest != NULL) {
		if ((base = al_ref_name(&ir.ref)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		rc = namev_take(
		    nv, al_sprintf("%s@%s", base, al_digest_str(digest, ds)));
	}
out:
	free(base);
	al_imgref_clear(&ir);
	return rc;
}

/* Every store name the run gave an image: releases that were opened
 * (their signatures verified or were allowed), their components, the
 * additional images. */
static int run_names(namev *nv, al_store *store, const al_transfer_opts *to,
                     const char *const *images, size_t nimages,
                     const al_mirror_report *rep, size_t *local)
{
	size_t i, j;
	int rc;

	for (i = 0; i < rep->nreleases; i++) {
		const al_mirror_release *rel = &rep->releases[i];
		al_release *r = NULL;

		if (rel->version == NULL || rel->source == NULL)
			continue;
		if ((rc = add_ref(nv, rel->source, &rel->digest, local)) < 0)
			return rc;
		if (al_release_open(&r, store, &rel->digest, to->platform) <
		    0) {
			/* the mirror reported it */
			al_error_clear();
			continue;
		}
		for (j = 0; j < al_release_component_count(r); j++) {
			const al_release_component *c =
			    al_release_component_at(r, j);

			if ((rc = add_ref(nv, c->image, NULL, local)) < 0)
				break;
		}
		al_release_free(r);
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < nimages; i++)
		if ((rc = add_ref(nv, images[i], NULL, local)) < 0)
			return rc;
	return 0;
}

/*
 * The other images of the run (docs/cosign.md "What is carried"): each
 * operator catalog that was mirrored, as fetched from its source (the
 * rebuilt catalog is airlock's own image: no one signed its digest), its
 * bundle and related images (the catalog's record, al_store_catalog), and
 * the images the Helm charts use and the oci:// charts themselves
 * (res->chart_images; a chart from index.yaml or a local directory is
 * packaged here and has no source image to look up).
 */
static int more_names(namev *nv, al_store *store, const al_mirror_result *res,
                      size_t *local)
{
	al_store_catalog *recs = NULL;
	size_t nrecs = 0, i, j, k;
	int rc = 0;

	if (res->ncatalogs > 0 &&
	    al_store_catalogs_list(store, &recs, &nrecs) < 0) {
		/* the catalog step reported a store it cannot read */
		al_error_clear();
		nrecs = 0;
	}
	for (i = 0; rc == 0 && i < res->ncatalogs; i++) {
		const al_mirror_catalog *c = &res->catalogs[i];
		al_imgref ir;

		if (c->status != 0 || c->source == NULL ||
		    c->source_name == NULL || c->target_name == NULL)
			continue;
		memset(&ir, 0, sizeof(ir));
		if (al_imgref_parse(&ir, c->source) < 0) {
			al_error_clear();
			continue;
		}
		if (ir.transport != AL_TRANSPORT_DOCKER)
			(*local)++;
		else
			rc = namev_take(nv, al_strdup(c->source_name));
		al_imgref_clear(&ir);
		for (j = 0; rc == 0 && j < nrecs; j++) {
			if (recs[j].name == NULL ||
			    strcmp(recs[j].name, c->target_name) != 0)
				continue;
			for (k = 0; rc == 0 && k < recs[j].nimages; k++)
				rc =
				    add_ref(nv, recs[j].images[k], NULL, local);
		}
	}
	for (i = 0; rc == 0 && i < res->nchart_images; i++)
		rc = add_ref(nv, res->chart_images[i], NULL, local);
	al_store_catalogs_free(recs, nrecs);
	return rc;
}

/* Each refusal of a store check: a warning under --allow-unsigned, else
 * an error of the run. */
static void report_refusals(const al_cosign_store_report *sr,
                            int allow_unsigned, al_mirror_result *res)
{
	size_t i;

	for (i = 0; i < sr->nmessages; i++) {
		if (allow_unsigned)
			al_log_warn("allowed (--allow-unsigned): %s",
			            sr->messages[i]);
		else
			al_mirror__report_errorf(&res->report, "%s",
			                         sr->messages[i]);
	}
}

/* The worse of two statuses: a verification failure wins (exit 1). */
static int worse(int rc, int r2)
{
	if (r2 < 0 && (rc == 0 || r2 == AL_EVERIFY))
		return r2;
	return rc;
}

static int check_policy(al_mirror__sigstore *ss, al_store *store,
                        const namev *nv, int allow_unsigned,
                        al_mirror_result *res, int rc)
{
	al_mirror_sigstore_result *out = &res->sigstore;
	al_cosign_store_report sr = AL_COSIGN_STORE_REPORT_INIT;
	int r2;

	r2 = al_cosign_check_store(store, ss->pol, (const char *const *)nv->v,
	                           nv->n, &sr);
	out->policy_checked = 1;
	out->accepted = sr.accepted;
	out->refused = sr.refused;
	out->uncovered = sr.uncovered;
	report_refusals(&sr, allow_unsigned, res);
	if (r2 < 0 && r2 != AL_EVERIFY) {
		al_mirror__report_errorf(&res->report,
		                         "checking the image policy: %s",
		                         al_error_message());
		rc = worse(rc, r2);
		goto out;
	}
	al_log_info("sigstore policy: %zu image(s) accepted, %zu refused, "
	            "%zu not covered",
	            sr.accepted, sr.refused, sr.uncovered);
	{
		int r3 = al_cosign_record(store, &sr, ss->path, allow_unsigned);

		if (r3 < 0) {
			al_mirror__report_errorf(
			    &res->report, "recording the policy verdicts: %s",
			    al_error_message());
			rc = worse(rc, r3);
		}
	}
	if (r2 == AL_EVERIFY && !allow_unsigned)
		rc = worse(rc, r2);
out:
	al_cosign_store_report_clear(&sr);
	return rc;
}

/*
 * The trusted root: every image of the run checked with the signatures
 * carried (al_cosign_check_store_root), then the root kept in the store
 * as verify-image --carry keeps it (al_cosign_store_root_put) unless an
 * image was refused and allow_unsigned is not set: a root the signatures
 * refute does not replace the one kept before.
 */
static int check_root(al_mirror__sigstore *ss, al_store *store, const namev *nv,
                      int allow_unsigned, al_mirror_result *res, int rc)
{
	al_mirror_sigstore_result *out = &res->sigstore;
	al_cosign_store_report sr = AL_COSIGN_STORE_REPORT_INIT;
	al_buf kept = AL_BUF_INIT(AL_COSIGN_MAX_PEM);
	al_digest d;
	char ds[AL_DIGEST_STRMAX];
	int r2 = 0;

	/* no names: nothing of this run to check (NULL would be "all") */
	if (nv->n > 0)
		r2 = al_cosign_check_store_root(
		    store, ss->root.ptr, ss->root.len, ss->root_path,
		    (const char *const *)nv->v, nv->n, &sr);
	out->root_checked = 1;
	out->root_verified = sr.accepted;
	out->root_refused = sr.refused;
	out->root_unchecked = sr.uncovered;
	report_refusals(&sr, allow_unsigned, res);
	if (r2 < 0 && r2 != AL_EVERIFY) {
		al_mirror__report_errorf(
		    &res->report, "checking against the trusted root: %s",
		    al_error_message());
		rc = worse(rc, r2);
		goto out;
	}
	al_log_info("sigstore trusted root: %zu image(s) verified, %zu "
	            "refused, %zu not checked (no keyless signature)",
	            sr.accepted, sr.refused, sr.uncovered);
	if (r2 == AL_EVERIFY && !allow_unsigned) {
		al_log_warn("the trusted root '%s' is not kept: signatures "
		            "refused under it",
		            ss->root_path);
		rc = worse(rc, r2);
		goto out;
	}
	if ((r2 = al_cosign_store_root_put(store, ss->root.ptr, ss->root.len,
	                                   ss->root_path)) < 0 ||
	    (r2 = al_cosign_store_root_get(store, &kept, &d)) < 0) {
		al_mirror__report_errorf(&res->report,
		                         "keeping the trusted root: %s",
		                         al_error_message());
		rc = worse(rc, r2);
		goto out;
	}
	out->root_kept = 1;
	al_log_info("kept the trusted root '%s' (%s) in the store",
	            ss->root_path, al_digest_str(&d, ds));
out:
	al_buf_free(&kept);
	al_cosign_store_report_clear(&sr);
	return rc;
}

/* Carry the attachments of the images named in nv (al_cosign_carry) and
 * count them in res->sigstore. */
static int carry(al_mirror__sigstore *ss, al_store *store,
                 const al_transfer_opts *to, const namev *nv,
                 al_mirror_result *res, int rc)
{
	al_mirror_sigstore_result *out = &res->sigstore;
	al_cosign_carry_report rep = AL_COSIGN_CARRY_REPORT_INIT;
	int r2;

	r2 = al_cosign_carry(store, (const char *const *)nv->v, nv->n, ss->what,
	                     to, &rep);
	out->images = rep.images;
	out->unsigned_images = rep.unsigned_images;
	out->artifacts = rep.artifacts;
	out->indexes = rep.indexes;
	out->skipped = rep.skipped;
	out->failed = rep.failed;
	if (r2 < 0) {
		al_mirror__report_errorf(
		    &res->report,
		    "sigstore signatures of %zu image(s) not carried; "
		    "first: %s",
		    rep.failed, rep.first_error != NULL ? rep.first_error : "");
		rc = worse(rc, r2);
	}
	if (rep.skipped > 0)
		al_log_warn(
		    "%zu referrer(s) left out: their subject is another "
		    "image",
		    rep.skipped);
	al_log_info("sigstore: carried %zu signature artifact(s) of %zu "
	            "image(s), %zu without any signature",
	            rep.artifacts, rep.images, rep.unsigned_images);
	al_cosign_carry_report_clear(&rep);
	return rc;
}

int al_mirror__sigstore_run(al_mirror__sigstore *ss, al_store *store,
                            const al_transfer_opts *to,
                            const char *const *images, size_t nimages,
                            int allow_unsigned, al_mirror_result *res, int rc)
{
	al_mirror_sigstore_result *out = &res->sigstore;
	namev nv;
	int r2;

	if (ss == NULL)
		return rc;
	memset(&nv, 0, sizeof(nv));
	out->ran = 1;
	if ((r2 = run_names(&nv, store, to, images, nimages, &res->report,
	                    &out->local)) < 0 ||
	    (r2 = more_names(&nv, store, res, &out->local)) < 0) {
		al_mirror__report_errorf(&res->report, "sigstore: %s",
		                         al_error_message());
		rc = worse(rc, r2);
		goto out;
	}
	if (nv.n > 0)
		rc = carry(ss, store, to, &nv, res, rc);
	if (ss->root_path != NULL)
		rc = check_root(ss, store, &nv, allow_unsigned, res, rc);
	if (ss->pol != NULL && nv.n > 0)
		rc = check_policy(ss, store, &nv, allow_unsigned, res, rc);
out:
	namev_clear(&nv);
	return rc;
}
