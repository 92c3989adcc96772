/* cosign_check.c: the images of a store judged with the signatures it
 * holds for them: against ClusterImagePolicy / ImagePolicy resources
 * (al_cosign_check_store), or against a Sigstore trusted root
 * (al_cosign_check_store_root, mirror --trusted-root), and the policy
 * verdicts recorded in STORE/airlock/sigstore.json. docs/cosign.md. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/cosign.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "array_int.h"
#include "cosign_int.h"
#include "json_int.h"
#include "error_int.h"

void al_cosign_store_report_clear(al_cosign_store_report *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nmessages; i++)
		free(r->messages[i]);
	free(r->messages);
	for (i = 0; i < r->nverdicts; i++) {
		free(r->verdicts[i].name);
		free(r->verdicts[i].policy);
		free(r->verdicts[i].reason);
	}
	free(r->verdicts);
	AL_RESULT_ZERO(r);
}

static int record(al_cosign_store_report *r, const char *name,
                  const al_digest *d, const char *verdict, const char *policy,
                  const char *reason)
{
	al_cosign_image_verdict *grown, *v;

	grown = al__array_grow_n(r->verdicts, r->nverdicts, r->nverdicts + 1,
	                         sizeof(*grown));
	if (grown == NULL)
		return AL_ENOMEM;
	r->verdicts = grown;
	v = &r->verdicts[r->nverdicts];
	memset(v, 0, sizeof(*v));
	v->digest = *d;
	v->verdict = verdict;
	if ((v->name = strdup(name)) == NULL ||
	    (policy != NULL && (v->policy = strdup(policy)) == NULL) ||
	    (reason != NULL && (v->reason = strdup(reason)) == NULL)) {
		free(v->name);
		free(v->policy);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	r->nverdicts++;
	return 0;
}

/* The sigstore.json entry of v; "refused" reads "allowed" when allowed. */
static json_t *verdict_json(const al_cosign_image_verdict *v, int allowed)
{
	char ds[AL_DIGEST_STRMAX];
	const char *verdict = v->verdict;
	json_t *e;

	if (allowed && strcmp(verdict, "refused") == 0)
		verdict = "allowed";
	e = json_pack("{s:s,s:s,s:s}", "name", v->name, "digest",
	              al_digest_str(&v->digest, ds), "verdict", verdict);
	if (e != NULL &&
	    ((v->policy != NULL &&
	      json_object_set_new(e, "policy", json_string(v->policy)) < 0) ||
	     (v->reason != NULL &&
	      json_object_set_new(e, "reason", json_string(v->reason)) < 0))) {
		json_decref(e);
		e = NULL;
	}
	return e;
}

int al_cosign_record(al_store *s, const al_cosign_store_report *r,
                     const char *policy_name, int allowed)
{
	json_t *doc = NULL, *images;
	char *dir = NULL, *path = NULL;
	size_t i;
	int rc;

	if ((images = json_array()) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (i = 0; i < r->nverdicts; i++) {
		if (json_array_append_new(
		        images, verdict_json(&r->verdicts[i], allowed)) < 0) {
			json_decref(images);
			return al_error_set(AL_ENOMEM, "out of memory");
		}
	}
	doc = json_pack("{s:s,s:b,s:o}", "policy",
	                policy_name != NULL ? policy_name : "", "allowUnsigned",
	                allowed, "images", images);
	if (doc == NULL ||
	    (dir = al_path_join(al_store_path(s), "airlock")) == NULL ||
	    (path = al_path_join(dir, "sigstore.json")) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) == 0)
		rc = al_json_save_file(path, doc, 2);
out:
	json_decref(doc);
	free(dir);
	free(path);
	return rc;
}

static int add_message(al_cosign_store_report *r, const char *name)
{
	char **grown = al__array_grow_n(r->messages, r->nmessages,
	                                r->nmessages + 1, sizeof(*grown));
	char *m;

	if (grown == NULL)
		return AL_ENOMEM;
	r->messages = grown;
	if ((m = al_sprintf("%s: %s", name, al_error_message())) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	r->messages[r->nmessages++] = m;
	return 0;
}

/*
 * The store image img when names (n; NULL: every image) asks for it and
 * it is an image to sign, not an artifact: *ref its name by digest
 * (caller frees) and *c the signature candidates the store holds for it
 * (al_cosign_carry put them there). 1: not an image to check; 0: filled;
 * AL_EVERIFY: an artifact in the store does not match its digest; other
 * statuses: the store could not be read.
 */
static int store_cands(al_store *s, const al_store_image *img,
                       const char *const *names, size_t n, char **ref,
                       al_cosign_cands *c)
{
	al_ref r;
	al_cosign_source *src = NULL;
	al_cosign_found f;
	char ds[AL_DIGEST_STRMAX];
	char *base = NULL;
	size_t k;
	int rc, wanted = names == NULL;

	*ref = NULL;
	for (k = 0; names != NULL && k < n && !wanted; k++)
		wanted = strcmp(names[k], img->name) == 0;
	memset(&r, 0, sizeof(r));
	memset(&f, 0, sizeof(f));
	if (!wanted || img->name[0] == '\0' ||
	    al_ref_parse(&r, img->name) < 0) {
		al_error_clear();
		return 1;
	}
	if (al__cosign_is_attachment_tag(r.tag) ||
	    al__cosign_is_artifact(s, &img->desc)) {
		al_ref_clear(&r);
		return 1;
	}
	base = al_ref_name(&r);
	if (base == NULL ||
	    (*ref = al_sprintf("%s@%s", base,
	                       al_digest_str(&img->desc.digest, ds))) == NULL)
		rc = al_error_set(AL_ENOMEM, "out of memory");
	else if ((rc = al_cosign_source_store(&src, s, base)) == 0 &&
	         (rc = al_cosign_discover(&f, src, &img->desc.digest,
	                                  AL_COSIGN_FIND_DEFAULT)) == 0)
		rc = al_cosign_candidates(c, src, &f);
	al_cosign_found_clear(&f);
	al_cosign_source_free(src);
	al_ref_clear(&r);
	free(base);
	return rc;
}

/* A refused image: counted, its message and verdict recorded. The
 * reason is the current error message. */
static int refuse(al_cosign_store_report *report, const al_store_image *img)
{
	char *why = al_strdup(al_error_message());
	int rc;

	report->refused++;
	rc = add_message(report, img->name);
	if (rc == 0)
		rc = record(report, img->name, &img->desc.digest, "refused",
		            NULL, why != NULL ? why : "");
	free(why);
	return rc;
}

int al_cosign_check_store(al_store *s, const al_cosign_policy *p,
                          const char *const *names, size_t n,
                          al_cosign_store_report *report)
{
	al_store_image *imgs = NULL;
	size_t nimgs = 0, i;
	int rc;

	if ((rc = AL_RESULT_VERSION_CHECK("al_cosign_store_report", report,
	                                  version,
	                                  AL_COSIGN_STORE_REPORT_VERSION)) < 0)
		return rc;
	AL_RESULT_ZERO(report);
	if ((rc = al_store_list(s, &imgs, &nimgs)) < 0)
		return rc;
	for (i = 0; i < nimgs; i++) {
		const al_store_image *img = &imgs[i];
		al_cosign_cands c;
		al_cosign_verdict v;
		char *ref = NULL;

		memset(&c, 0, sizeof(c));
		memset(&v, 0, sizeof(v));
		rc = store_cands(s, img, names, n, &ref, &c);
		if (rc == 0)
			rc = al_cosign_policy_check(
			    &v, p, ref, &img->desc.digest, c.items, c.n);
		if (rc == 0 && v.covered) {
			report->accepted++;
			rc = record(report, img->name, &img->desc.digest,
			            "accepted", v.policy, NULL);
		} else if (rc == 0) {
			report->uncovered++;
			rc = record(report, img->name, &img->desc.digest,
			            "not-covered", NULL, NULL);
		} else if (rc == AL_EVERIFY) {
			rc = refuse(report, img);
		}
		al_cosign_verdict_clear(&v);
		al_cosign_cands_clear(&c);
		free(ref);
		if (rc < 0 && rc != AL_EVERIFY)
			goto out;
	}
	rc = report->refused > 0
	         ? al_error_set(AL_EVERIFY,
	                        "%zu image(s) refused by the image policy",
	                        report->refused)
	         : 0;
out:
	al_store_images_free(imgs, nimgs);
	return rc;
}

/*
 * One image's candidates under a trusted root t (any identity): 0 when
 * one verifies and names digest, AL_EVERIFY (the reasons joined) when
 * none does and one was refused for its content, 1 when the root could
 * check none (no candidate, or key-based ones only: a trusted root holds
 * no signing key), AL_ENOMEM.
 */
static int root_judge(const al_cosign_trust *t, const al_digest *digest,
                      const char *ref, const al_cosign_cands *c)
{
	al_buf why = AL_BUF_INIT(8192);
	al_cosign_opts opts = AL_COSIGN_OPTS_INIT;
	size_t i, refused = 0;
	int rc = 1;

	opts.trust = t;
	for (i = 0; i < c->n && rc != 0; i++) {
		const al_cosign_candidate *k = &c->items[i];
		al_cosign_info info;
		int r2;

		memset(&info, 0, sizeof(info));
		if (k->sig != NULL)
			r2 = al_cosign_verify_sig(&info, k->sig, &opts);
		else
			r2 = al_cosign_verify_bundle(&info, k->bundle,
			                             k->bundle_len, k->artifact,
			                             k->artifact_len, &opts);
		/* the digest, not the name: who may sign which name is the
		 * image policy's question (--sigstore-policy) */
		if (r2 == 0)
			r2 = al_cosign_check_image(&info, digest, ref,
			                           AL_SIG_IDENTITY_IGNORE);
		al_cosign_info_clear(&info);
		if (r2 == 0) {
			rc = 0;
		} else if (r2 == AL_ENOMEM) {
			rc = r2;
			break;
		} else if (r2 != AL_EINVAL) {
			/* AL_EINVAL: no trust for this kind (a key) */
			refused++;
			if (al_buf_printf(&why, "%ssignature %zu: %s",
			                  why.len > 0 ? "; " : "", i + 1,
			                  al_error_message()) == AL_ENOMEM) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				break;
			}
		}
	}
	if (rc == 1 && refused > 0)
		rc = al_error_set(AL_EVERIFY, "%s", al_buf_cstr(&why));
	else if (rc == 0)
		al_error_clear();
	al_buf_free(&why);
	return rc;
}

int al_cosign_check_store_root(al_store *s, const uint8_t *root, size_t len,
                               const char *what, const char *const *names,
                               size_t n, al_cosign_store_report *report)
{
	al_cosign_trust *t = NULL;
	al_store_image *imgs = NULL;
	size_t nimgs = 0, i;
	int rc;

	if ((rc = AL_RESULT_VERSION_CHECK("al_cosign_store_report", report,
	                                  version,
	                                  AL_COSIGN_STORE_REPORT_VERSION)) < 0)
		return rc;
	AL_RESULT_ZERO(report);
	if ((rc = al_cosign_trust_new(&t)) < 0 ||
	    (rc = al_cosign_trust_add_trusted_root(
	         t, root, len, what != NULL ? what : "trusted root")) < 0 ||
	    (rc = al_store_list(s, &imgs, &nimgs)) < 0)
		goto out;
	t->any_identity = 1;
	for (i = 0; i < nimgs; i++) {
		const al_store_image *img = &imgs[i];
		al_cosign_cands c;
		char *ref = NULL;

		memset(&c, 0, sizeof(c));
		rc = store_cands(s, img, names, n, &ref, &c);
		if (rc == 0)
			rc = root_judge(t, &img->desc.digest, ref, &c);
		if (rc == 0) {
			report->accepted++;
			rc = record(report, img->name, &img->desc.digest,
			            "verified", NULL, NULL);
		} else if (rc == 1 && ref != NULL) {
			report->uncovered++;
			rc = record(report, img->name, &img->desc.digest,
			            "not-checked", NULL, NULL);
		} else if (rc == AL_EVERIFY) {
			rc = refuse(report, img);
		}
		al_cosign_cands_clear(&c);
		free(ref);
		if (rc < 0 && rc != AL_EVERIFY)
			goto out;
	}
	rc = report->refused > 0
	         ? al_error_set(AL_EVERIFY,
	                        "%zu image(s) whose signatures do not verify "
	                        "under the trusted root",
	                        report->refused)
	         : 0;
out:
	al_store_images_free(imgs, nimgs);
	al_cosign_trust_free(t);
	return rc;
}
