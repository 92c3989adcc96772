/* mirror_images.c: the image engine of the mirror workflow
 * (al_mirror__run_images, src/mirror/mirror_images.h): releases, their
 * component images and additional images queued into one transfer, run,
 * settled, named and recorded in releases.json. Calls only the report below it.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "airlock/mirror.h"
#include "airlock/ref.h"
#include "airlock/release.h"
#include "mirror_images.h"
#include "mirror_int.h"

/* The index.json name mirror gives ref: the normalised docker reference
 * (skopeo can then read it as oci:STORE:NAME); oci: sources keep their
 * own name (NULL: none). *alt (may be NULL) gets "REPO@" for docker
 * references, "NAME@" otherwise: the prefix of a name by digest. */
static int store_name(const char *ref, char **name, char **alt)
{
	al_imgref ir = {0};
	char *n = NULL, *a = NULL, *base = NULL;
	int rc;

	if ((rc = al_imgref_parse(&ir, ref)) < 0)
		return rc;
	if (ir.transport == AL_TRANSPORT_DOCKER) {
		n = al_ref_string(&ir.ref);
		base = al_ref_name(&ir.ref);
	} else if (ir.name != NULL) {
		n = al_strdup(ir.name);
		base = al_strdup(ir.name);
	}
	if (alt != NULL && base != NULL)
		a = al_sprintf("%s@", base);
	if ((n == NULL && ir.transport == AL_TRANSPORT_DOCKER) ||
	    (alt != NULL && base != NULL && a == NULL)) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	*name = n;
	n = NULL;
	if (alt != NULL) {
		*alt = a;
		a = NULL;
	}
out:
	free(n);
	free(a);
	free(base);
	al_imgref_clear(&ir);
	return rc;
}

/* The store name of ref: rename (imageset targetRepo/targetTag) when not
 * NULL, else store_name's. */
static int name_of(const char *ref, const char *rename, char **name)
{
	if (rename == NULL)
		return store_name(ref, name, NULL);
	if ((*name = al_strdup(rename)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

static int queue_as(al_transfer *t, const char *ref, const char *rename,
                    int *idx)
{
	al_imgref ir = {0};
	char *name = NULL;
	int rc;

	if ((rc = al_imgref_parse(&ir, ref)) < 0)
		return rc;
	if ((rc = name_of(ref, rename, &name)) < 0) {
		al_imgref_clear(&ir);
		return rc;
	}
	rc = al_transfer_add(t, &ir, name);
	free(name);
	al_imgref_clear(&ir);
	if (rc < 0)
		return rc;
	*idx = rc;
	return 0;
}

static int queue(al_transfer *t, const char *ref, int *idx)
{
	return queue_as(t, ref, NULL, idx);
}

/* The target name opts->renames gives the additional image ref, or NULL. */
static const char *rename_target(const al_transfer_opts *opts, const char *ref)
{
	return opts != NULL ? al_imageset_rename_of(opts->renames, ref) : NULL;
}

/* A renamed additional image that arrived: its entry records ref. */
static int record_origin(al_store *s, const al_transfer_opts *opts,
                         const char *ref)
{
	const char *rn = rename_target(opts, ref);
	char *src = NULL;
	int rc;

	if (rn == NULL)
		return 0;
	if ((rc = store_name(ref, &src, NULL)) < 0)
		return rc;
	rc = al_store_set_origin(s, rn, src);
	free(src);
	return rc;
}

/* The store's release records, read once for a series of lookups. */
typedef struct rel_list {
	al_store_release *v;
	size_t n;
	int loaded; /* 1 once read (a failed read counts as no record) */
} rel_list;

static const rel_list *rel_list_load(al_store *s, rel_list *l)
{
	if (!l->loaded) {
		l->loaded = 1;
		if (al_store_releases_list(s, &l->v, &l->n) < 0) {
			al_error_clear();
			l->v = NULL;
			l->n = 0;
		}
	}
	return l;
}

static void rel_list_clear(rel_list *l)
{
	al_store_releases_free(l->v, l->n);
	memset(l, 0, sizeof(*l));
}

/*
 * 1 when index.json names name and releases.json records that manifest as
 * a verified release (*digest and fpr, 41 bytes, set), 0 when name is
 * absent or names something else (*digest set when present, *present).
 * The release records are those in recs, or read now when recs is NULL (a
 * caller asking for each image of a release reads them once: engine.recs).
 */
static int named_verified_in(al_store *s, const rel_list *recs,
                             const char *name, al_digest *digest, int *present,
                             char *fpr)
{
	al_store_image cur;
	rel_list fresh = {0};
	size_t i;
	int verified = 0;

	*present = 0;
	fpr[0] = '\0';
	if (name == NULL || al_store_find(s, name, &cur) < 0) {
		al_error_clear();
		return 0;
	}
	*present = 1;
	*digest = cur.desc.digest;
	al_store_image_clear(&cur);
	if (recs == NULL)
		recs = rel_list_load(s, &fresh);
	/* any record of that digest (an import may have added a second) */
	for (i = 0; i < recs->n && !verified; i++) {
		const al_store_release *r = &recs->v[i];

		if (r->verified != AL_STORE_VERIFIED || !r->has_digest ||
		    !al_digest_equal(&r->digest, digest))
			continue;
		verified = 1;
		if (r->verified_by != NULL)
			snprintf(fpr, 41, "%s", r->verified_by);
	}
	rel_list_clear(&fresh);
	return verified;
}

static int named_verified(al_store *s, const char *name, al_digest *digest,
                          int *present, char *fpr)
{
	return named_verified_in(s, NULL, name, digest, present, fpr);
}

/* What the store kept under name, for a refusal: "; the store keeps
 * 'NAME' at DIGEST (verified by KEY)", or "" when nothing is named. */
static char *kept_note(al_store *s, const char *name)
{
	al_digest d;
	char ds[AL_DIGEST_STRMAX], fpr[41];
	int present = 0, v = named_verified(s, name, &d, &present, fpr);

	if (!present)
		return al_strdup("");
	return al_sprintf(
	    "; the store keeps '%s' at %s%s%s%s", name, al_digest_str(&d, ds),
	    v ? " (verified by " : " (not recorded as verified)",
	    v ? (fpr[0] != '\0' ? fpr : "a trusted key") : "", v ? ")" : "");
}

/* Add or update (same digest) the release record in releases.json. */
static int record_release(al_store *s, const al_mirror_release *rel,
                          const char *platform, int checked)
{
	al_store_release rec;
	char ds[AL_DIGEST_STRMAX];
	int rc, kept = 0;

	memset(&rec, 0, sizeof(rec));
	rec.version = rel->version;
	rec.digest = rel->digest;
	rec.has_digest = 1;
	rec.source = rel->source;
	rec.components = (long long)rel->components;
	rec.platform = (char *)platform;
	rec.mirrored = al_clock_rfc3339_now();
	rec.verified = !checked        ? AL_STORE_UNCHECKED
	               : rel->verified ? AL_STORE_VERIFIED
	                               : AL_STORE_UNVERIFIED;
	rec.verified_by = (char *)(uintptr_t)rel->verified_by;
	if (rec.mirrored == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_store_release_put(s, &rec, 0, &kept);
	/* A verified record is never downgraded by a later run that could
	 * not verify (other keys, --allow-unsigned): its signature stays in
	 * STORE/signatures. */
	if (rc == 0 && kept) {
		al_store_release old;
		int found = al_store_release_find(
		                s, al_digest_str(&rel->digest, ds), &old) == 0;
		al_log_warn("release %s (%s) was verified earlier "
		            "(by %s): its record stays verified",
		            rel->source, ds,
		            found && old.verified_by != NULL ? old.verified_by
		                                             : "a trusted key");
		if (found)
			al_store_release_clear(&old);
		al_error_clear();
	}
	free(rec.mirrored);
	return rc;
}

/* Retrieve and verify the signatures of rel; 0 when it may proceed. */
static int check_signatures(al_store *s, al_mirror_release *rel,
                            const char *name, const al_transfer_opts *opts,
                            const al_mirror_sig_opts *sig,
                            al_mirror_report *report)
{
	al_sig_source *src = NULL;
	al_sig_fetch_opts fo;
	al_sig_fetch_result res = AL_SIG_FETCH_RESULT_INIT;
	char *local = NULL, *reference = NULL;
	al_imgref ir = {0};
	size_t i, nsrc;
	int rc;

	if (sig->keyring == NULL) {
		/* allow_unsigned without keys: recorded as unverified */
		rel->verified = 0;
		return 0;
	}
	src = calloc(sig->nsources + 1, sizeof(*src));
	local = al_path_join(al_store_path(s), "signatures");
	if (src == NULL || local == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* Signatures saved by an earlier run count too (no network needed),
	 * except under require_all, which is about the configured stores. */
	nsrc = 0;
	if (!sig->require_all || sig->nsources == 0) {
		src[nsrc].kind = AL_SIG_SOURCE_DIR;
		src[nsrc++].location = local;
	}
	for (i = 0; i < sig->nsources; i++)
		src[nsrc++] = sig->sources[i];
	if (al_imgref_parse(&ir, rel->source) == 0 &&
	    ir.transport == AL_TRANSPORT_DOCKER)
		reference = al_ref_string(&ir.ref);
	memset(&fo, 0, sizeof(fo));
	fo.sources = src;
	fo.nsources = nsrc;
	fo.keyring = sig->keyring;
	fo.policy = reference != NULL ? sig->policy : AL_SIG_IDENTITY_IGNORE;
	fo.budget_ms = sig->budget_ms;
	fo.require_all = sig->require_all;
	fo.http = sig->http;
	fo.cancel = opts != NULL ? opts->cancel : NULL;
	rc = al_sig_fetch_release(s, &rel->digest, reference, &fo, &res);
	for (i = 0; i < res.nstores; i++) {
		if (res.stores[i].status == AL_SIG_STORE_OK ||
		    res.stores[i].status == AL_SIG_STORE_SKIPPED)
			continue;
		if (res.stores[i].status == AL_SIG_STORE_NOT_FOUND &&
		    src[i].location == local)
			continue; /* nothing saved yet: normal on a first run */
		al_log_warn(
		    "release %s: signature store '%s': %s", rel->source,
		    res.stores[i].location,
		    res.stores[i].message != NULL
		        ? res.stores[i].message
		        : al_sig_store_status_name(res.stores[i].status));
	}
	if (rc == 0 && res.nsigs > 0) {
		rel->verified = 1;
		memcpy(rel->verified_by, res.sigs[0].info.fingerprint,
		       sizeof(rel->verified_by));
		rel->verified_by[sizeof(rel->verified_by) - 1] = '\0';
		al_log_info("release %s: signature verified by key %s",
		            rel->source, rel->verified_by);
		goto out;
	}
	{
		char ds[AL_DIGEST_STRMAX];
		char *why = al_strdup(al_error_message());
		char *kept = sig->allow_unsigned ? NULL : kept_note(s, name);
		char *m =
		    al_sprintf("%s (%s): no verified signature: %s%s",
		               rel->source, al_digest_str(&rel->digest, ds),
		               why != NULL ? why : "out of memory",
		               kept != NULL ? kept : "");
		free(why);
		free(kept);
		if (sig->allow_unsigned) {
			al_log_warn("%s; mirrored anyway (--allow-unsigned), "
			            "recorded as unverified",
			            m != NULL ? m : rel->source);
			rc = 0;
		} else {
			al_mirror__report_error(
			    report, m != NULL ? m : "out of memory");
			rel->message = m;
			m = NULL;
			rel->status = AL_EVERIFY;
			rc = al_error_set(AL_EVERIFY, "%s",
			                  rel->message != NULL
			                      ? rel->message
			                      : "no verified signature");
		}
		free(m);
	}
out:
	al_sig_fetch_result_clear(&res);
	al_imgref_clear(&ir);
	free(reference);
	free(local);
	free(src);
	return rc;
}

/*
 * Name the release image idx after it verified and every component
 * arrived. An unverified release (no keys, --allow-unsigned) never
 * re-points a name that refers to a verified release: it is named by
 * digest instead, and the verified one keeps the name.
 */
static int tag_release(al_store *s, al_transfer *t, int idx,
                       const al_mirror_release *rel, int checked)
{
	char *name = NULL, *alt = NULL, *byd = NULL;
	char ds[AL_DIGEST_STRMAX], ks[AL_DIGEST_STRMAX], fpr[41];
	al_digest kept;
	int rc, present = 0;

	if ((rc = store_name(rel->source, &name, &alt)) < 0)
		return rc;
	if ((!checked || !rel->verified) && name != NULL && alt != NULL &&
	    named_verified(s, name, &kept, &present, fpr) &&
	    !al_digest_equal(&kept, &rel->digest)) {
		byd = al_sprintf("%s%s", alt, al_digest_str(&rel->digest, ds));
		if (byd == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		al_log_warn("release %s (%s) is not verified: '%s' keeps the "
		            "verified %s (verified by %s); this one is named "
		            "'%s'",
		            rel->source, ds, name, al_digest_str(&kept, ks),
		            fpr[0] != '\0' ? fpr : "a trusted key", byd);
		rc = al_transfer_tag(t, idx, byd);
		goto out;
	}
	rc = al_transfer_tag(t, idx, NULL);
out:
	free(byd);
	free(name);
	free(alt);
	return rc;
}

/*
 * An additional or component image must not re-point a name that refers
 * to a verified release either: such an image is held (*held set), and
 * settle_held names it only when it is that very release.
 */
static int hold_if_verified_name(al_store *s, const rel_list *recs,
                                 al_transfer *t, const char *ref,
                                 const char *rename, int idx, int *held)
{
	char *name = NULL;
	char fpr[41];
	al_digest d;
	int present = 0, rc;

	*held = 0;
	if ((rc = name_of(ref, rename, &name)) < 0)
		return rc;
	if (named_verified_in(s, recs, name, &d, &present, fpr))
		*held = al_transfer_hold(t, idx) == 0;
	free(name);
	return 0;
}

/* After the run: a held image that arrived is named if it is the verified
 * release its name refers to; else it is refused (*msg, caller frees). */
static int settle_held(al_store *s, al_transfer *t, const char *ref,
                       const char *rename, int idx, char **msg)
{
	char *name = NULL;
	char fpr[41], ds[AL_DIGEST_STRMAX], ks[AL_DIGEST_STRMAX];
	al_digest kept, got;
	int present = 0, rc;

	*msg = NULL;
	if ((rc = name_of(ref, rename, &name)) < 0)
		return rc;
	al_transfer_result(t, idx, NULL, &got, NULL, NULL);
	if (named_verified(s, name, &kept, &present, fpr) &&
	    !al_digest_equal(&kept, &got)) {
		*msg = al_sprintf(
		    "%s (%s): refused: '%s' names the verified release %s "
		    "(verified by %s), which an unverified image does not "
		    "replace; the store keeps it",
		    ref, al_digest_str(&got, ds), name,
		    al_digest_str(&kept, ks),
		    fpr[0] != '\0' ? fpr : "a trusted key");
		rc = *msg != NULL ? AL_EVERIFY
		                  : al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	rc = al_transfer_tag(t, idx, NULL);
out:
	free(name);
	return rc;
}

/* One component of a release in the run. */
typedef struct comp_run {
	int idx;    /* transfer index, -1: not queued */
	char *held; /* the reference of a held component (hold_if_verified_name)
	             */
} comp_run;

/* One release of the run: what the engine keeps beside the release's
 * entry of the report. */
typedef struct rel_run {
	al_mirror_release *rel; /* the report's entry */
	const char *ref;        /* as given */
	int idx;                /* transfer index; -1: out of the run */
	int queued;             /* transfer index as queued; -1: never */
	comp_run *comp;         /* rel->components entries once opened */
	size_t ncomp;
} rel_run;

/* One additional image of the run. */
typedef struct add_run {
	const char *ref;    /* as given */
	const char *rename; /* its target name (renamed), or NULL */
	int idx;            /* transfer index; -1: out of the run */
	int held;           /* held by hold_if_verified_name */
} add_run;

/* A run of the engine: one transfer, one record per release and per
 * additional image, the worst status so far. */
typedef struct engine {
	al_store *s;
	al_transfer *t;
	const al_transfer_opts *opts;
	const al_mirror_sig_opts *sig;
	al_mirror_report *report;
	rel_run *rels;
	size_t nrels;
	add_run *adds;
	size_t nadds;
	int worst;
	/* the release records, read once for the holds of steps 2 and 3:
	 * nothing records a release before step 4 (settle_release) */
	rel_list recs;
} engine;

/* The release failed with st: its status and message (taken: msg, which
 * may be NULL), the report's error list, the run's worst status; it
 * leaves the run. */
static void release_fail(engine *e, rel_run *rr, int st, char *msg)
{
	rr->rel->status = st;
	rr->rel->message = msg;
	al_mirror__report_error(e->report, msg);
	e->worst = al_mirror__worse(e->worst, st);
	rr->idx = -1;
}

/* 1. The release image: stored, not named until it verified and its
 * components arrived (a refusal leaves index.json as it was). */
static void queue_release(engine *e, rel_run *rr)
{
	int rc;

	rr->rel->source = al_strdup(rr->ref);
	rr->idx = -1;
	if ((rc = al_regconf_check_release_ref(
	         e->opts != NULL ? e->opts->registry.regconf : NULL, rr->ref)) <
	        0 ||
	    (rc = queue(e->t, rr->ref, &rr->idx)) < 0 ||
	    (rc = al_transfer_hold(e->t, rr->idx)) < 0)
		release_fail(e, rr, rc,
		             al_sprintf("%s: %s", rr->ref, al_error_message()));
	rr->queued = rr->idx;
}

/* 2. The release image arrived: where from, its signatures. 0 when it
 * goes on, 1 when it left the run, <0 to stop. */
static int release_arrived(engine *e, rel_run *rr)
{
	al_mirror_release *rel = rr->rel;
	const char *pulled, *msg;
	char *name = NULL;
	int st, rc;

	al_transfer_result(e->t, rr->idx, &st, &rel->digest, NULL, &msg);
	if (st < 0) {
		release_fail(e, rr, st, al_strdup(msg));
		return 1;
	}
	pulled = al_transfer_pulled_from(e->t, rr->idx);
	if (pulled != NULL && (rel->pulled_from = al_strdup(pulled)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (e->sig == NULL)
		return 0;
	if ((rc = store_name(rr->ref, &name, NULL)) < 0)
		return rc;
	rc = check_signatures(e->s, rel, name, e->opts, e->sig, e->report);
	free(name);
	if (rc < 0) {
		/* refused: never named, whatever the name referred to stays */
		e->worst = al_mirror__worse(e->worst, rel->status);
		rr->idx = -1;
		return 1;
	}
	return 0;
}

/* 2. Queue each component of a release that arrived (held when its
 * name refers to a verified release). 0, or <0 to stop. */
static int queue_components(engine *e, rel_run *rr)
{
	al_mirror_release *rel = rr->rel;
	al_release *r = NULL;
	size_t j;
	int rc = 0;

	if ((rc = al_release_open(&r, e->s, &rel->digest,
	                          e->opts != NULL ? e->opts->platform : NULL)) <
	    0) {
		release_fail(e, rr, rc,
		             al_sprintf("%s: not a release image: %s", rr->ref,
		                        al_error_message()));
		return 0;
	}
	rel->version = al_strdup(al_release_version(r));
	rel->components = al_release_component_count(r);
	if ((rr->comp = calloc(rel->components + 1, sizeof(*rr->comp))) ==
	    NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	rr->ncomp = rel->components;
	for (j = 0; j < rel->components; j++) {
		const al_release_component *c = al_release_component_at(r, j);
		comp_run *cr = &rr->comp[j];
		int held = 0, st;

		cr->idx = -1;
		if ((st = queue(e->t, c->image, &cr->idx)) < 0 ||
		    (st = hold_if_verified_name(
		         e->s, rel_list_load(e->s, &e->recs), e->t, c->image,
		         NULL, cr->idx, &held)) < 0) {
			char *m =
			    al_sprintf("%s (component %s of %s): %s", c->image,
			               c->name, rr->ref, al_error_message());
			al_mirror__report_error(
			    e->report, m != NULL ? m : "out of memory");
			free(m);
			rel->components_failed++;
			rel->status = al_mirror__worse(rel->status, st);
			cr->idx = -1;
			continue;
		}
		if (held && (cr->held = al_strdup(c->image)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
out:
	al_release_free(r);
	return rc;
}

/* 3. Queue an additional image (held when its name refers to a verified
 * release). */
static void queue_additional(engine *e, add_run *ar)
{
	int rc;

	ar->rename = rename_target(e->opts, ar->ref);
	ar->idx = -1;
	if ((rc = queue_as(e->t, ar->ref, ar->rename, &ar->idx)) < 0 ||
	    (rc = hold_if_verified_name(e->s, rel_list_load(e->s, &e->recs),
	                                e->t, ar->ref, ar->rename, ar->idx,
	                                &ar->held)) < 0) {
		char *m = al_sprintf("%s: %s", ar->ref, al_error_message());
		al_mirror__report_error(e->report,
		                        m != NULL ? m : "out of memory");
		al_mirror__report_failed(e->report, "image", ar->ref, NULL, rc,
		                         m);
		free(m);
		e->report->additional_failed++;
		e->worst = al_mirror__worse(e->worst, rc);
		ar->idx = -1;
	}
}

/* 4. After the run: each component's fate, then the release named and
 * recorded when all of it arrived. */
static void settle_release(engine *e, rel_run *rr)
{
	al_mirror_release *rel = rr->rel;
	size_t j;
	int rc;

	for (j = 0; j < rr->ncomp; j++) {
		comp_run *cr = &rr->comp[j];
		const char *msg;
		char *m = NULL;
		int st;

		if (cr->idx < 0)
			continue;
		al_transfer_result(e->t, cr->idx, &st, NULL, NULL, &msg);
		if (st == 0 && cr->held != NULL &&
		    (st = settle_held(e->s, e->t, cr->held, NULL, cr->idx,
		                      &m)) < 0)
			msg = m != NULL ? m : al_error_message();
		if (st < 0) {
			al_mirror__report_error(e->report, msg);
			rel->components_failed++;
			rel->status = al_mirror__worse(rel->status, st);
			if (rel->message == NULL)
				rel->message = al_strdup(msg);
		}
		free(m);
	}
	if (rel->status == 0 &&
	    (rc = tag_release(e->s, e->t, rr->idx, rel, e->sig != NULL)) < 0) {
		rel->status = rc;
		rel->message = al_strdup(al_error_message());
		al_mirror__report_error(e->report, rel->message);
	}
	if (rel->status == 0) {
		if ((rc = record_release(
		         e->s, rel, e->opts != NULL ? e->opts->platform : NULL,
		         e->sig != NULL)) < 0) {
			rel->status = rc;
			rel->message = al_strdup(al_error_message());
			al_mirror__report_error(e->report, rel->message);
		} else {
			al_log_info("mirrored release %s (%s): %zu "
			            "component images",
			            rel->version ? rel->version : "?",
			            rel->source, rel->components);
		}
	}
	e->worst = al_mirror__worse(e->worst, rel->status);
}

/* 4. After the run: an additional image's fate. */
static void settle_additional(engine *e, add_run *ar)
{
	const char *msg;
	char *m = NULL;
	size_t k;
	int st;

	al_transfer_result(e->t, ar->idx, &st, NULL, NULL, &msg);
	/* the same image as a release: it shares the release's fate */
	for (k = 0; st == 0 && k < e->nrels; k++) {
		const rel_run *rr = &e->rels[k];

		if (rr->queued == ar->idx && rr->rel->status < 0) {
			st = rr->rel->status;
			m = al_sprintf("%s: the same image as release %s, "
			               "which was not mirrored",
			               ar->ref, rr->rel->source);
			msg = m != NULL ? m : "out of memory";
		}
	}
	if (st == 0 && ar->held &&
	    (st = settle_held(e->s, e->t, ar->ref, ar->rename, ar->idx, &m)) <
	        0)
		msg = m != NULL ? m : al_error_message();
	/* stored under its target name: remember where it came from
	 * (mirror sets map that source to the target) */
	if (st == 0 && (st = record_origin(e->s, e->opts, ar->ref)) < 0)
		msg = al_error_message();
	if (st < 0) {
		al_mirror__report_error(e->report, msg);
		al_mirror__report_failed(e->report, "image", ar->ref, NULL, st,
		                         msg);
		e->report->additional_failed++;
		e->worst = al_mirror__worse(e->worst, st);
	}
	free(m);
}

static void engine_clear(engine *e)
{
	size_t i, j;

	for (i = 0; e->rels != NULL && i < e->nrels; i++) {
		for (j = 0; j < e->rels[i].ncomp; j++)
			free(e->rels[i].comp[j].held);
		free(e->rels[i].comp);
	}
	free(e->rels);
	free(e->adds);
	rel_list_clear(&e->recs);
	al_transfer_free(e->t);
}

/* Steps 1 to 4 over e's records; 0, or <0 when the run stopped. */
static int engine_run(engine *e)
{
	size_t i;
	int rc;

	for (i = 0; i < e->nrels; i++)
		queue_release(e, &e->rels[i]);
	al_transfer_run(e->t, &e->report->stats);
	for (i = 0; i < e->nrels; i++) {
		rel_run *rr = &e->rels[i];

		if (rr->idx < 0)
			continue;
		if ((rc = release_arrived(e, rr)) < 0)
			return rc;
		if (rc == 0 && (rc = queue_components(e, rr)) < 0)
			return rc;
	}
	for (i = 0; i < e->nadds; i++)
		queue_additional(e, &e->adds[i]);
	al_transfer_run(e->t, &e->report->stats);
	for (i = 0; i < e->nrels; i++)
		if (e->rels[i].idx >= 0)
			settle_release(e, &e->rels[i]);
	for (i = 0; i < e->nadds; i++)
		if (e->adds[i].idx >= 0)
			settle_additional(e, &e->adds[i]);
	/* the failed-image list: a release with a failed component is
	 * retried whole (its present components transfer nothing) */
	for (i = 0; i < e->nrels; i++) {
		const al_mirror_release *rel = e->rels[i].rel;
		if (rel->status < 0)
			al_mirror__report_failed(
			    e->report, "release", e->rels[i].ref,
			    rel->version != NULL ? &rel->digest : NULL,
			    rel->status, rel->message);
	}
	return 0;
}

int al_mirror__run_images(al_store *s, const char *const *releases,
                          size_t nreleases, const char *const *additional,
                          size_t nadditional, const al_transfer_opts *opts,
                          const al_mirror_sig_opts *sig,
                          al_mirror_report *report)
{
	engine e;
	size_t i;
	int rc;

	/* no release: nothing is signed, no keyring needed (additional
	 * images, operator catalogs only) */
	if (sig != NULL && sig->keyring == NULL && !sig->allow_unsigned &&
	    nreleases > 0)
		return al_error_set(AL_EINVAL,
		                    "signature checks need a keyring");
	memset(report, 0, sizeof(*report));
	memset(&e, 0, sizeof(e));
	e.s = s;
	e.opts = opts;
	e.sig = sig;
	e.report = report;
	if ((rc = al_transfer_new_to_store(&e.t, s, opts)) < 0)
		return rc;
	report->releases = calloc(nreleases + 1, sizeof(*report->releases));
	e.rels = calloc(nreleases + 1, sizeof(*e.rels));
	e.adds = calloc(nadditional + 1, sizeof(*e.adds));
	if (report->releases == NULL || e.rels == NULL || e.adds == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	report->nreleases = e.nrels = nreleases;
	report->additional = e.nadds = nadditional;
	for (i = 0; i < nreleases; i++) {
		e.rels[i].rel = &report->releases[i];
		e.rels[i].ref = releases[i];
	}
	for (i = 0; i < nadditional; i++)
		e.adds[i].ref = additional[i];
	if ((rc = engine_run(&e)) < 0)
		goto out;
	rc = e.worst;
	if (rc < 0)
		al_error_set(rc, "%zu image(s) failed", report->nerrors);
out:
	engine_clear(&e);
	return rc;
}

int al_mirror_record_channels(al_store *s, const al_digest *release,
                              const char *const *channels, size_t n)
{
	al_store_release rec;

	memset(&rec, 0, sizeof(rec));
	rec.digest = *release;
	rec.has_digest = 1;
	rec.components = -1;
	rec.verified = AL_STORE_UNCHECKED;
	rec.channels = (char **)(uintptr_t)channels;
	rec.nchannels = n;
	return al_store_release_put(s, &rec, AL_STORE_RELEASE_EXISTING, NULL);
}
