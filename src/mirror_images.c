/* mirror_images.c: the image engine of the mirror workflow
 * (al_mirror__run_images, src/mirror_images.h): releases, their component
 * images and additional images queued into one transfer, run, settled,
 * named and recorded in releases.json. Calls only the report below it. */
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
static const char *renamed(const al_transfer_opts *opts, const char *ref)
{
	return opts != NULL ? al_imageset_rename_of(opts->renames, ref) : NULL;
}

/* A renamed additional image that arrived: its entry records ref. */
static int record_origin(al_store *s, const al_transfer_opts *opts,
                         const char *ref)
{
	const char *rn = renamed(opts, ref);
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

/*
 * 1 when index.json names name and releases.json records that manifest as
 * a verified release (*digest and fpr, 41 bytes, set), 0 when name is
 * absent or names something else (*digest set when present, *present).
 */
static int named_verified(al_store *s, const char *name, al_digest *digest,
                          int *present, char *fpr)
{
	al_store_image cur;
	al_store_release *list = NULL;
	size_t n = 0, i;
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
	if (al_store_releases_list(s, &list, &n) < 0) {
		al_error_clear();
		return 0;
	}
	/* any record of that digest (an import may have added a second) */
	for (i = 0; i < n && !verified; i++) {
		if (list[i].verified != AL_STORE_VERIFIED ||
		    !list[i].has_digest ||
		    !al_digest_equal(&list[i].digest, digest))
			continue;
		verified = 1;
		if (list[i].verified_by != NULL)
			snprintf(fpr, 41, "%s", list[i].verified_by);
	}
	al_store_releases_free(list, n);
	return verified;
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
static int hold_if_verified_name(al_store *s, al_transfer *t, const char *ref,
                                 const char *rename, int idx, int *held)
{
	char *name = NULL;
	char fpr[41];
	al_digest d;
	int present = 0, rc;

	*held = 0;
	if ((rc = name_of(ref, rename, &name)) < 0)
		return rc;
	if (named_verified(s, name, &d, &present, fpr))
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

int al_mirror__run_images(al_store *s, const char *const *releases,
                          size_t nreleases, const char *const *additional,
                          size_t nadditional, const al_transfer_opts *opts,
                          const al_mirror_sig_opts *sig,
                          al_mirror_report *report)
{
	al_transfer *t = NULL;
	int *rel_idx = NULL, *rel_q = NULL, *add_idx = NULL, *add_held = NULL;
	size_t **comp_idx = NULL;
	char ***comp_held = NULL; /* the reference of each held component */
	size_t i, j, k;
	int rc = 0, worst = 0;

	/* no release: nothing is signed, no keyring needed (additional
	 * images, operator catalogs only) */
	if (sig != NULL && sig->keyring == NULL && !sig->allow_unsigned &&
	    nreleases > 0)
		return al_error_set(AL_EINVAL,
		                    "signature checks need a keyring");
	memset(report, 0, sizeof(*report));
	if ((rc = al_transfer_new_to_store(&t, s, opts)) < 0)
		return rc;
	report->releases = calloc(nreleases + 1, sizeof(*report->releases));
	rel_idx = calloc(nreleases + 1, sizeof(*rel_idx));
	rel_q = calloc(nreleases + 1, sizeof(*rel_q));
	add_idx = calloc(nadditional + 1, sizeof(*add_idx));
	add_held = calloc(nadditional + 1, sizeof(*add_held));
	comp_idx = calloc(nreleases + 1, sizeof(*comp_idx));
	comp_held = calloc(nreleases + 1, sizeof(*comp_held));
	if (report->releases == NULL || rel_idx == NULL || rel_q == NULL ||
	    add_idx == NULL || add_held == NULL || comp_idx == NULL ||
	    comp_held == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	report->nreleases = nreleases;
	report->additional = nadditional;

	/* 1. release images: stored, not named until they verified and
	 * their components arrived (a refusal leaves index.json as it was) */
	for (i = 0; i < nreleases; i++) {
		al_mirror_release *rel = &report->releases[i];
		rel->source = al_strdup(releases[i]);
		rel_idx[i] = -1;
		if ((rc = al_regconf_check_release_ref(
		         opts != NULL ? opts->registry.regconf : NULL,
		         releases[i])) < 0 ||
		    (rc = queue(t, releases[i], &rel_idx[i])) < 0 ||
		    (rc = al_transfer_hold(t, rel_idx[i])) < 0) {
			rel->status = rc;
			rel->message = al_sprintf("%s: %s", releases[i],
			                          al_error_message());
			al_mirror__report_error(report, rel->message);
			worst = al_mirror__worse(worst, rc);
			rel_idx[i] = -1;
		}
		rel_q[i] = rel_idx[i];
	}
	al_transfer_run(t, &report->stats);

	/* 2. components of each release that arrived */
	for (i = 0; i < nreleases; i++) {
		al_mirror_release *rel = &report->releases[i];
		al_release *r = NULL;
		char *name = NULL;
		const char *msg;
		int st;

		if (rel_idx[i] < 0)
			continue;
		al_transfer_result(t, rel_idx[i], &st, &rel->digest, NULL,
		                   &msg);
		if (st < 0) {
			rel->status = st;
			rel->message = al_strdup(msg);
			al_mirror__report_error(report, msg);
			worst = al_mirror__worse(worst, st);
			rel_idx[i] = -1;
			continue;
		}
		if (al_transfer_pulled_from(t, rel_idx[i]) != NULL &&
		    (rel->pulled_from = al_strdup(
		         al_transfer_pulled_from(t, rel_idx[i]))) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if (sig != NULL) {
			if ((rc = store_name(releases[i], &name, NULL)) < 0)
				goto out;
			rc = check_signatures(s, rel, name, opts, sig, report);
			free(name);
			if (rc < 0) {
				/* refused: never named, whatever the name
				 * referred to stays */
				worst = al_mirror__worse(worst, rel->status);
				rel_idx[i] = -1;
				continue;
			}
		}
		if ((rc = al_release_open(&r, s, &rel->digest,
		                          opts != NULL ? opts->platform
		                                       : NULL)) < 0) {
			rel->status = rc;
			rel->message =
			    al_sprintf("%s: not a release image: %s",
			               releases[i], al_error_message());
			al_mirror__report_error(report, rel->message);
			worst = al_mirror__worse(worst, rc);
			rel_idx[i] = -1;
			continue;
		}
		rel->version = al_strdup(al_release_version(r));
		rel->components = al_release_component_count(r);
		comp_idx[i] = calloc(rel->components + 1, sizeof(size_t));
		comp_held[i] = calloc(rel->components + 1, sizeof(char *));
		if (comp_idx[i] == NULL || comp_held[i] == NULL) {
			al_release_free(r);
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		for (j = 0; j < rel->components; j++) {
			const al_release_component *c =
			    al_release_component_at(r, j);
			int idx = -1, held = 0;
			if ((rc = queue(t, c->image, &idx)) < 0 ||
			    (rc = hold_if_verified_name(s, t, c->image, NULL,
			                                idx, &held)) < 0) {
				char *m = al_sprintf(
				    "%s (component %s of %s): %s", c->image,
				    c->name, releases[i], al_error_message());
				al_mirror__report_error(
				    report, m != NULL ? m : "out of memory");
				free(m);
				rel->components_failed++;
				rel->status = al_mirror__worse(rel->status, rc);
				comp_idx[i][j] = (size_t)-1;
				continue;
			}
			comp_idx[i][j] = (size_t)idx;
			if (held &&
			    (comp_held[i][j] = al_strdup(c->image)) == NULL) {
				al_release_free(r);
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
		}
		al_release_free(r);
	}
	/* 3. additional images */
	for (i = 0; i < nadditional; i++) {
		const char *rn = renamed(opts, additional[i]);
		add_idx[i] = -1;
		if ((rc = queue_as(t, additional[i], rn, &add_idx[i])) < 0 ||
		    (rc = hold_if_verified_name(s, t, additional[i], rn,
		                                add_idx[i], &add_held[i])) <
		        0) {
			char *m = al_sprintf("%s: %s", additional[i],
			                     al_error_message());
			al_mirror__report_error(
			    report, m != NULL ? m : "out of memory");
			al_mirror__report_failed(report, "image", additional[i],
			                         NULL, rc, m);
			free(m);
			report->additional_failed++;
			worst = al_mirror__worse(worst, rc);
			add_idx[i] = -1;
		}
	}
	al_transfer_run(t, &report->stats);

	for (i = 0; i < nreleases; i++) {
		al_mirror_release *rel = &report->releases[i];
		if (rel_idx[i] < 0)
			continue;
		for (j = 0; j < rel->components; j++) {
			const char *msg;
			char *m = NULL;
			int st;
			if (comp_idx[i][j] == (size_t)-1)
				continue;
			al_transfer_result(t, (int)comp_idx[i][j], &st, NULL,
			                   NULL, &msg);
			if (st == 0 && comp_held[i][j] != NULL &&
			    (st = settle_held(s, t, comp_held[i][j], NULL,
			                      (int)comp_idx[i][j], &m)) < 0)
				msg = m != NULL ? m : al_error_message();
			if (st < 0) {
				al_mirror__report_error(report, msg);
				rel->components_failed++;
				rel->status = al_mirror__worse(rel->status, st);
				if (rel->message == NULL)
					rel->message = al_strdup(msg);
			}
			free(m);
		}
		if (rel->status == 0 && (rc = tag_release(s, t, rel_idx[i], rel,
		                                          sig != NULL)) < 0) {
			rel->status = rc;
			rel->message = al_strdup(al_error_message());
			al_mirror__report_error(report, rel->message);
		}
		if (rel->status == 0) {
			if ((rc = record_release(
			         s, rel, opts != NULL ? opts->platform : NULL,
			         sig != NULL)) < 0) {
				rel->status = rc;
				rel->message = al_strdup(al_error_message());
				al_mirror__report_error(report, rel->message);
			} else {
				al_log_info("mirrored release %s (%s): %zu "
				            "component images",
				            rel->version ? rel->version : "?",
				            rel->source, rel->components);
			}
		}
		worst = al_mirror__worse(worst, rel->status);
	}
	for (i = 0; i < nadditional; i++) {
		const char *msg;
		char *m = NULL;
		int st;
		if (add_idx[i] < 0)
			continue;
		al_transfer_result(t, add_idx[i], &st, NULL, NULL, &msg);
		/* the same image as a release: it shares the release's fate */
		for (k = 0; st == 0 && k < nreleases; k++) {
			if (rel_q[k] == add_idx[i] &&
			    report->releases[k].status < 0) {
				st = report->releases[k].status;
				m = al_sprintf("%s: the same image as release "
				               "%s, which was not mirrored",
				               additional[i],
				               report->releases[k].source);
				msg = m != NULL ? m : "out of memory";
			}
		}
		if (st == 0 && add_held[i] &&
		    (st = settle_held(s, t, additional[i],
		                      renamed(opts, additional[i]), add_idx[i],
		                      &m)) < 0)
			msg = m != NULL ? m : al_error_message();
		/* stored under its target name: remember where it came from
		 * (mirror sets map that source to the target) */
		if (st == 0 && (st = record_origin(s, opts, additional[i])) < 0)
			msg = al_error_message();
		if (st < 0) {
			al_mirror__report_error(report, msg);
			al_mirror__report_failed(report, "image", additional[i],
			                         NULL, st, msg);
			report->additional_failed++;
			worst = al_mirror__worse(worst, st);
		}
		free(m);
	}
	/* the failed-image list: a release with a failed component is
	 * retried whole (its present components transfer nothing) */
	for (i = 0; i < nreleases; i++) {
		const al_mirror_release *rel = &report->releases[i];
		if (rel->status < 0)
			al_mirror__report_failed(
			    report, "release", releases[i],
			    rel->version != NULL ? &rel->digest : NULL,
			    rel->status, rel->message);
	}
	rc = worst;
	if (rc < 0)
		al_error_set(rc, "%zu image(s) failed", report->nerrors);
out:
	if (comp_idx != NULL)
		for (i = 0; i < nreleases; i++)
			free(comp_idx[i]);
	if (comp_held != NULL)
		for (i = 0; i < nreleases; i++) {
			for (j = 0; comp_held[i] != NULL &&
			            j < report->releases[i].components;
			     j++)
				free(comp_held[i][j]);
			free(comp_held[i]);
		}
	free(comp_idx);
	free(comp_held);
	free(rel_idx);
	free(rel_q);
	free(add_idx);
	free(add_held);
	al_transfer_free(t);
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
