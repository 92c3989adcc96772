/* cosign_policy.c: ClusterImagePolicy / ImagePolicy resources
 * (config.openshift.io) read strictly, and images checked against them as
 * the cluster's verifier does. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/cosign.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "airlock/ref.h"
#include "yaml_int.h"
#include "cosign_int.h"

typedef struct cs_rule {
	char *name; /* "ClusterImagePolicy/NAME" or "ImagePolicy/NS/NAME" */
	int cluster;
	char **scopes;
	size_t nscopes;
	al_cosign_trust *trust;
	int require_tlog;
	al_cosign_match match;
	char *arg1; /* exactRepository.repository or remapIdentity.prefix */
	char *arg2; /* remapIdentity.signedPrefix */
} cs_rule;

struct al_cosign_policy {
	cs_rule *rules;
	size_t n;
};

static void rule_clear(cs_rule *r)
{
	size_t i;

	free(r->name);
	for (i = 0; i < r->nscopes; i++)
		free(r->scopes[i]);
	free(r->scopes);
	al_cosign_trust_free(r->trust);
	free(r->arg1);
	free(r->arg2);
	memset(r, 0, sizeof(*r));
}

void al_cosign_policy_free(al_cosign_policy *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++)
		rule_clear(&p->rules[i]);
	free(p->rules);
	free(p);
}

size_t al_cosign_policy_count(const al_cosign_policy *p)
{
	return p != NULL ? p->n : 0;
}

/* Refuse members of obj not in allowed: a field we do not know may be a
 * requirement we would silently drop. */
static int known(const json_t *obj, const char *what, const char *where,
                 const char *const *allowed)
{
	const char *key;
	json_t *v;
	size_t i;

	if (!json_is_object(obj))
		return al_error_set(AL_EPARSE, "%s: '%s' is not an object",
		                    what, where);
	json_object_foreach((json_t *)obj, key, v)
	{
		(void)v;
		for (i = 0; allowed[i] != NULL; i++) {
			if (strcmp(key, allowed[i]) == 0)
				break;
		}
		if (allowed[i] == NULL)
			return al_error_set(AL_EPARSE,
			                    "%s: unknown field '%s.%s'", what,
			                    where, key);
	}
	return 0;
}

static int need_str(const char **out, const json_t *obj, const char *key,
                    const char *what, const char *where)
{
	const char *s = al_json_str(obj, key);

	if (s == NULL || s[0] == '\0')
		return al_error_set(AL_EPARSE,
		                    "%s: '%s.%s' is required (a non-empty "
		                    "string)",
		                    what, where, key);
	*out = s;
	return 0;
}

/* Base64 of PEM at obj.key into trust with fn. */
static int key_data(al_cosign_trust *t, const json_t *obj, const char *key,
                    const char *what, const char *where,
                    int (*fn)(al_cosign_trust *, const uint8_t *, size_t,
                              const char *))
{
	al_buf pem = AL_BUF_INIT(AL_COSIGN_MAX_PEM);
	const char *s = NULL;
	char *label = NULL;
	int rc;

	if ((rc = need_str(&s, obj, key, what, where)) < 0)
		return rc;
	if (al_base64_decode(&pem, s, strlen(s)) < 0) {
		rc = al_error_set(AL_EPARSE, "%s: '%s.%s' is not base64", what,
		                  where, key);
		goto out;
	}
	if ((label = al_sprintf("%s: %s.%s", what, where, key)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = fn(t, pem.ptr, pem.len, label)) < 0 && rc != AL_ENOMEM)
		rc = AL_EPARSE;
out:
	free(label);
	al_buf_free(&pem);
	return rc;
}

static int parse_root(cs_rule *r, const json_t *root, const char *what)
{
	static const char *const root_keys[] = {
	    "policyType", "publicKey", "fulcioCAWithRekor", "pki", NULL};
	static const char *const pk_keys[] = {"keyData", "rekorKeyData", NULL};
	static const char *const fr_keys[] = {"fulcioCAData", "rekorKeyData",
	                                      "fulcioSubject", NULL};
	static const char *const fs_keys[] = {"oidcIssuer", "signedEmail",
	                                      NULL};
	static const char *const pki_keys[] = {"caRootsData",
	                                       "caIntermediatesData",
	                                       "pkiCertificateSubject", NULL};
	static const char *const ps_keys[] = {"email", "hostname", NULL};
	const char *type = NULL, *iss = NULL, *email = NULL;
	const json_t *pk = json_object_get(root, "publicKey");
	const json_t *fr = json_object_get(root, "fulcioCAWithRekor");
	const json_t *pki = json_object_get(root, "pki");
	int rc;

	if ((rc = known(root, what, "spec.policy.rootOfTrust", root_keys)) <
	        0 ||
	    (rc = need_str(&type, root, "policyType", what,
	                   "spec.policy.rootOfTrust")) < 0)
		return rc;
	if ((rc = al_cosign_trust_new(&r->trust)) < 0)
		return rc;
	/* a union: the member named by policyType, and no other */
	if ((strcmp(type, "PublicKey") == 0) != (pk != NULL) ||
	    (strcmp(type, "FulcioCAWithRekor") == 0) != (fr != NULL) ||
	    (strcmp(type, "PKI") == 0) != (pki != NULL))
		return al_error_set(AL_EPARSE,
		                    "%s: spec.policy.rootOfTrust: policyType "
		                    "'%s' with %s%s%s",
		                    what, type, pk != NULL ? "publicKey " : "",
		                    fr != NULL ? "fulcioCAWithRekor " : "",
		                    pki != NULL ? "pki" : "no matching member");
	if (pk != NULL) {
		const char *w = "spec.policy.rootOfTrust.publicKey";

		if ((rc = known(pk, what, w, pk_keys)) < 0 ||
		    (rc = key_data(r->trust, pk, "keyData", what, w,
		                   al_cosign_trust_add_keys)) < 0)
			return rc;
		/* containers/image: with a Rekor key, a SET is required */
		if (json_object_get(pk, "rekorKeyData") != NULL) {
			if ((rc = key_data(r->trust, pk, "rekorKeyData", what,
			                   w, al_cosign_trust_add_rekor)) < 0)
				return rc;
			r->require_tlog = 1;
		}
	} else if (fr != NULL) {
		const char *w = "spec.policy.rootOfTrust.fulcioCAWithRekor";
		const json_t *sub = json_object_get(fr, "fulcioSubject");

		if ((rc = known(fr, what, w, fr_keys)) < 0 ||
		    (rc = key_data(r->trust, fr, "fulcioCAData", what, w,
		                   al_cosign_trust_add_fulcio)) < 0 ||
		    (rc = key_data(r->trust, fr, "rekorKeyData", what, w,
		                   al_cosign_trust_add_rekor)) < 0 ||
		    (rc = known(sub, what,
		                "spec.policy.rootOfTrust.fulcioCAWithRekor."
		                "fulcioSubject",
		                fs_keys)) < 0 ||
		    (rc = need_str(&iss, sub, "oidcIssuer", what,
		                   "fulcioSubject")) < 0 ||
		    (rc = need_str(&email, sub, "signedEmail", what,
		                   "fulcioSubject")) < 0 ||
		    (rc = al_cosign_trust_set_identity(r->trust, iss, email)) <
		        0)
			return rc;
		r->trust->subject_email_only = 1;
		r->require_tlog = 1;
	} else if (pki != NULL) {
		const char *w = "spec.policy.rootOfTrust.pki";
		const json_t *sub =
		    json_object_get(pki, "pkiCertificateSubject");

		if ((rc = known(pki, what, w, pki_keys)) < 0 ||
		    (rc = key_data(r->trust, pki, "caRootsData", what, w,
		                   al_cosign_trust_add_fulcio)) < 0 ||
		    (json_object_get(pki, "caIntermediatesData") != NULL &&
		     (rc = key_data(r->trust, pki, "caIntermediatesData", what,
		                    w, al_cosign_trust_add_fulcio)) < 0) ||
		    (rc = known(sub, what,
		                "spec.policy.rootOfTrust.pki."
		                "pkiCertificateSubject",
		                ps_keys)) < 0)
			return rc;
		if ((rc = al_cosign_trust_set_pki(
		         r->trust, al_json_str(sub, "email"),
		         al_json_str(sub, "hostname"))) < 0)
			return al_error_wrap(AL_EPARSE, "%s", what);
	} else {
		return al_error_set(AL_EPARSE,
		                    "%s: unknown policyType '%s' (PublicKey, "
		                    "FulcioCAWithRekor or PKI)",
		                    what, type);
	}
	return 0;
}

static int parse_identity(cs_rule *r, const json_t *id, const char *what)
{
	static const char *const id_keys[] = {"matchPolicy", "exactRepository",
	                                      "remapIdentity", NULL};
	static const char *const er_keys[] = {"repository", NULL};
	static const char *const ri_keys[] = {"prefix", "signedPrefix", NULL};
	const char *w = "spec.policy.signedIdentity", *m = NULL, *a = NULL,
	           *b = NULL;
	const json_t *er = json_object_get(id, "exactRepository");
	const json_t *ri = json_object_get(id, "remapIdentity");
	int rc;

	r->match = AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT;
	if (id == NULL)
		return 0;
	if ((rc = known(id, what, w, id_keys)) < 0 ||
	    (rc = need_str(&m, id, "matchPolicy", what, w)) < 0)
		return rc;
	if (strcmp(m, "MatchRepoDigestOrExact") == 0)
		r->match = AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT;
	else if (strcmp(m, "MatchRepository") == 0)
		r->match = AL_COSIGN_MATCH_REPOSITORY;
	else if (strcmp(m, "ExactRepository") == 0)
		r->match = AL_COSIGN_MATCH_EXACT_REPOSITORY;
	else if (strcmp(m, "RemapIdentity") == 0)
		r->match = AL_COSIGN_MATCH_REMAP_IDENTITY;
	else
		return al_error_set(
		    AL_EPARSE, "%s: unknown %s.matchPolicy '%s'", what, w, m);
	if ((r->match == AL_COSIGN_MATCH_EXACT_REPOSITORY) != (er != NULL) ||
	    (r->match == AL_COSIGN_MATCH_REMAP_IDENTITY) != (ri != NULL))
		return al_error_set(AL_EPARSE,
		                    "%s: %s: exactRepository goes with "
		                    "ExactRepository and remapIdentity with "
		                    "RemapIdentity, and only there",
		                    what, w);
	if (er != NULL &&
	    ((rc = known(er, what, "signedIdentity.exactRepository", er_keys)) <
	         0 ||
	     (rc = need_str(&a, er, "repository", what,
	                    "signedIdentity.exactRepository")) < 0))
		return rc;
	if (ri != NULL &&
	    ((rc = known(ri, what, "signedIdentity.remapIdentity", ri_keys)) <
	         0 ||
	     (rc = need_str(&a, ri, "prefix", what,
	                    "signedIdentity.remapIdentity")) < 0 ||
	     (rc = need_str(&b, ri, "signedPrefix", what,
	                    "signedIdentity.remapIdentity")) < 0))
		return rc;
	if ((a != NULL && (r->arg1 = al_strdup(a)) == NULL) ||
	    (b != NULL && (r->arg2 = al_strdup(b)) == NULL))
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

static int parse_resource(al_cosign_policy *p, const json_t *doc,
                          const char *src)
{
	static const char *const top_keys[] = {
	    "apiVersion", "kind", "metadata", "spec", "status", NULL};
	static const char *const spec_keys[] = {"scopes", "policy", NULL};
	static const char *const policy_keys[] = {"rootOfTrust",
	                                          "signedIdentity", NULL};
	const char *kind = al_json_str(doc, "kind");
	const char *api = al_json_str(doc, "apiVersion");
	const json_t *meta = json_object_get(doc, "metadata");
	const json_t *spec = json_object_get(doc, "spec"), *scopes, *s;
	const json_t *policy = json_object_get(spec, "policy");
	const char *name = al_json_str(meta, "name");
	const char *ns = al_json_str(meta, "namespace");
	cs_rule r, *grown;
	char what[512];
	size_t i;
	int rc, cluster;

	if (kind == NULL || (strcmp(kind, "ClusterImagePolicy") != 0 &&
	                     strcmp(kind, "ImagePolicy") != 0))
		return 0;
	cluster = strcmp(kind, "ClusterImagePolicy") == 0;
	memset(&r, 0, sizeof(r));
	snprintf(what, sizeof(what), "%s: %s/%s%s%s", src, kind,
	         !cluster && ns != NULL ? ns : "",
	         !cluster && ns != NULL ? "/" : "",
	         name != NULL ? name : "(unnamed)");
	if (api == NULL || (strcmp(api, "config.openshift.io/v1") != 0 &&
	                    strcmp(api, "config.openshift.io/v1alpha1") != 0))
		return al_error_set(AL_EPARSE,
		                    "%s: apiVersion '%s' is not "
		                    "config.openshift.io/v1 or v1alpha1",
		                    what, api != NULL ? api : "");
	if (p->n >= AL_COSIGN_MAX_POLICIES)
		return al_error_set(AL_ELIMIT, "%s: more than %d policies", src,
		                    AL_COSIGN_MAX_POLICIES);
	if ((rc = known(doc, what, "(resource)", top_keys)) < 0 ||
	    (rc = known(spec, what, "spec", spec_keys)) < 0 ||
	    (rc = known(policy, what, "spec.policy", policy_keys)) < 0)
		return rc;
	scopes = json_object_get(spec, "scopes");
	if (json_array_size(scopes) == 0 || json_array_size(scopes) > 256) {
		rc = al_error_set(AL_EPARSE,
		                  "%s: spec.scopes must list 1 to 256 scopes",
		                  what);
		goto out;
	}
	r.cluster = cluster;
	if ((r.name = al_strdup(what + strlen(src) + 2)) == NULL ||
	    (r.scopes = calloc(json_array_size(scopes), sizeof(char *))) ==
	        NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	json_array_foreach(scopes, i, s)
	{
		const char *v = json_string_value(s);

		if (v == NULL || v[0] == '\0' || strlen(v) > 512) {
			rc = al_error_set(AL_EPARSE,
			                  "%s: spec.scopes[%zu] is not a scope",
			                  what, i);
			goto out;
		}
		if ((r.scopes[r.nscopes] = al_strdup(v)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		r.nscopes++;
	}
	if ((rc = parse_root(&r, json_object_get(policy, "rootOfTrust"),
	                     what)) < 0 ||
	    (rc = parse_identity(&r, json_object_get(policy, "signedIdentity"),
	                         what)) < 0)
		goto out;
	if ((grown = realloc(p->rules, (p->n + 1) * sizeof(*grown))) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	p->rules = grown;
	p->rules[p->n++] = r;
	memset(&r, 0, sizeof(r));
	rc = 0;
out:
	rule_clear(&r);
	return rc;
}

int al_cosign_policy_load(al_cosign_policy **out, const uint8_t *p, size_t n,
                          const char *what)
{
	al_yaml_node **docs = NULL;
	size_t ndocs = 0, i, j;
	al_cosign_policy *pol = NULL;
	json_t *doc = NULL, *item;
	int rc;

	if (what == NULL)
		what = "policy";
	if (n > AL_COSIGN_MAX_POLICY_BYTES)
		return al_error_set(
		    AL_ELIMIT, "'%s' exceeds %llu bytes", what,
		    (unsigned long long)AL_COSIGN_MAX_POLICY_BYTES);
	if ((rc = al_yaml_load(&docs, &ndocs, p, n, what)) < 0)
		return rc;
	if ((pol = calloc(1, sizeof(*pol))) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < ndocs; i++) {
		const char *kind;

		if ((rc = al_yaml_to_json(&doc, docs[i])) < 0) {
			rc = al_error_wrap(rc, "'%s'", what);
			goto out;
		}
		kind = al_json_str(doc, "kind");
		if (kind != NULL && strcmp(kind, "List") == 0) {
			json_array_foreach(json_object_get(doc, "items"), j,
			                   item)
			{
				if ((rc = parse_resource(pol, item, what)) < 0)
					goto out;
			}
		} else if (json_is_object(doc) &&
		           (rc = parse_resource(pol, doc, what)) < 0) {
			goto out;
		}
		json_decref(doc);
		doc = NULL;
	}
	if (pol->n == 0) {
		rc = al_error_set(AL_ENOTFOUND,
		                  "'%s' holds no ClusterImagePolicy or "
		                  "ImagePolicy",
		                  what);
		goto out;
	}
	*out = pol;
	pol = NULL;
	rc = 0;
out:
	json_decref(doc);
	al_cosign_policy_free(pol);
	al_yaml_docs_free(docs, ndocs);
	return rc;
}

int al_cosign_policy_load_file(al_cosign_policy **out, const char *path)
{
	al_buf b = AL_BUF_INIT(AL_COSIGN_MAX_POLICY_BYTES);
	int rc;

	if ((rc = al_fs_read_file(path, &b)) < 0)
		return rc;
	rc = al_cosign_policy_load(out, b.ptr, b.len, path);
	al_buf_free(&b);
	return rc;
}

/* --- identity (containers/image policy_reference_match.go) ------------ */

/* refMatchesPrefix: prefix of ref ending at ':', '/' or '@'. */
static int ref_has_prefix(const char *ref, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(ref, prefix, n) != 0)
		return 0;
	return ref[n] == '\0' || ref[n] == ':' || ref[n] == '/' ||
	       ref[n] == '@';
}

/* matchRepoDigestOrExactReferenceValues */
static int repo_digest_or_exact(const al_ref *intended, const al_ref *sig)
{
	char *a = NULL, *b = NULL;
	int ok = 0;

	if (sig->tag == NULL && sig->digest == NULL)
		return 0; /* a name-only signature is never exact */
	/* reference.Canonical first, as the Go type switch does: an image
	 * named by digest (with or without a tag) matches its repository; one
	 * named by tag only that exact tag */
	if (intended->digest != NULL) {
		a = al_ref_name(intended);
		b = al_ref_name(sig);
	} else if (intended->tag != NULL) {
		a = al_ref_string(intended);
		b = al_ref_string(sig);
	}
	ok = a != NULL && b != NULL && strcmp(a, b) == 0;
	free(a);
	free(b);
	return ok;
}

int al_cosign_identity_matches(al_cosign_match match, const char *image_ref,
                               const char *sig_ref, const char *arg1,
                               const char *arg2)
{
	al_ref img, sig, other;
	char *a = NULL, *b = NULL, *s = NULL, *remapped = NULL;
	int ok = 0;

	memset(&img, 0, sizeof(img));
	memset(&sig, 0, sizeof(sig));
	memset(&other, 0, sizeof(other));
	if (image_ref == NULL || sig_ref == NULL ||
	    al_ref_parse(&img, image_ref) < 0 ||
	    al_ref_parse(&sig, sig_ref) < 0)
		goto out;
	switch (match) {
	case AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT:
		ok = repo_digest_or_exact(&img, &sig);
		break;
	case AL_COSIGN_MATCH_REPOSITORY:
		a = al_ref_name(&img);
		b = al_ref_name(&sig);
		ok = a != NULL && b != NULL && strcmp(a, b) == 0;
		break;
	case AL_COSIGN_MATCH_EXACT_REPOSITORY:
		if (arg1 == NULL || al_ref_parse(&other, arg1) < 0)
			break;
		a = al_ref_name(&other);
		b = al_ref_name(&sig);
		ok = a != NULL && b != NULL && strcmp(a, b) == 0;
		break;
	case AL_COSIGN_MATCH_REMAP_IDENTITY:
		if (arg1 == NULL || arg2 == NULL ||
		    (s = al_ref_string(&img)) == NULL)
			break;
		if (ref_has_prefix(s, arg1)) {
			remapped = al_sprintf("%s%s", arg2, s + strlen(arg1));
			if (remapped == NULL ||
			    al_ref_parse(&other, remapped) < 0)
				break;
			ok = repo_digest_or_exact(&other, &sig);
		} else {
			ok = repo_digest_or_exact(&img, &sig);
		}
		break;
	}
out:
	al_error_clear();
	free(a);
	free(b);
	free(s);
	free(remapped);
	al_ref_clear(&img);
	al_ref_clear(&sig);
	al_ref_clear(&other);
	return ok;
}

/* --- scopes (containers/image docker transport) ---------------------- */

/*
 * The scope names an image is looked up by, most specific first
 * (docker_transport.go PolicyConfigurationIdentity / Namespaces):
 * registry/repo@digest (or :tag), registry/repo, each parent namespace,
 * the registry, then "*.rest" for each subdomain suffix of the host.
 * Caller frees the array and its strings.
 */
static int scope_names(char ***out, size_t *n, const al_ref *r)
{
	char **v = NULL, *name = NULL, *host = NULL, *p;
	size_t cap = 64, k = 0;
	int rc = 0;

	if ((v = calloc(cap, sizeof(*v))) == NULL ||
	    (name = al_ref_name(r)) == NULL ||
	    (host = al_strdup(r->registry)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if (r->digest != NULL)
		v[k++] = al_sprintf("%s@%s", name, r->digest);
	else if (r->tag != NULL)
		v[k++] = al_sprintf("%s:%s", name, r->tag);
	for (;;) {
		if (k + 2 >= cap)
			break;
		v[k++] = al_strdup(name);
		if ((p = strrchr(name, '/')) == NULL)
			break;
		*p = '\0';
	}
	/* wildcards: the host without its port */
	if (host[0] != '[' && (p = strrchr(host, ':')) != NULL)
		*p = '\0';
	for (p = host; (p = strchr(p, '.')) != NULL && k + 1 < cap; p++)
		v[k++] = al_sprintf("*%s", p);
	for (cap = 0; cap < k; cap++) {
		if (v[cap] == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	*out = v;
	*n = k;
	v = NULL;
	k = 0;
out:
	while (v != NULL && k > 0)
		free(v[--k]);
	free(v);
	free(name);
	free(host);
	return rc;
}

static int rule_has_scope(const cs_rule *r, const char *s)
{
	size_t i;

	for (i = 0; i < r->nscopes; i++) {
		if (strcmp(r->scopes[i], s) == 0)
			return 1;
	}
	return 0;
}

void al_cosign_verdict_clear(al_cosign_verdict *v)
{
	if (v == NULL)
		return;
	free(v->policy);
	free(v->scope);
	al_cosign_info_clear(&v->info);
	memset(v, 0, sizeof(*v));
}

/* Does candidate c satisfy rule r for the image? 0 yes (info filled). */
static int rule_accepts(al_cosign_info *info, const cs_rule *r,
                        const char *reference, const al_digest *digest,
                        const al_cosign_candidate *c)
{
	al_cosign_opts o = AL_COSIGN_OPTS_INIT;
	int rc;

	o.trust = r->trust;
	o.require_tlog = r->require_tlog;
	if (c->sig != NULL)
		rc = al_cosign_verify_sig(info, c->sig, &o);
	else
		rc = al_cosign_verify_bundle(info, c->bundle, c->bundle_len,
		                             c->artifact, c->artifact_len, &o);
	if (rc < 0)
		return rc;
	/* the cluster's verifier understands cosign payloads only */
	if (!info->has_payload)
		return al_error_set(AL_EVERIFY,
		                    "no cosign payload (an in-toto statement "
		                    "does not satisfy an image policy)");
	if (!al_digest_equal(&info->payload.digest, digest)) {
		char a[AL_DIGEST_STRMAX], b[AL_DIGEST_STRMAX];

		return al_error_set(AL_EVERIFY,
		                    "digest mismatch: signature is for %s, "
		                    "image is %s",
		                    al_digest_str(&info->payload.digest, a),
		                    al_digest_str(digest, b));
	}
	if (!al_cosign_identity_matches(
	        r->match, reference, info->payload.reference, r->arg1, r->arg2))
		return al_error_set(
		    AL_EVERIFY,
		    "identity mismatch: the signature names "
		    "'%s', which signedIdentity does not accept "
		    "for '%s'",
		    info->payload.reference, reference);
	return 0;
}

int al_cosign_policy_check(al_cosign_verdict *out, const al_cosign_policy *p,
                           const char *reference, const al_digest *digest,
                           const al_cosign_candidate *c, size_t n)
{
	al_cosign_verdict v;
	al_ref ref;
	al_buf why = AL_BUF_INIT(8192);
	char **names = NULL;
	size_t nnames = 0, i, k, j;
	const char *scope = NULL;
	int rc, pass, found_cluster = 0;

	memset(&v, 0, sizeof(v));
	memset(&ref, 0, sizeof(ref));
	if (al_ref_parse(&ref, reference) < 0)
		return al_error_wrap(AL_EINVAL, "image reference");
	if ((rc = scope_names(&names, &nnames, &ref)) < 0)
		goto out;
	/* ClusterImagePolicy first (pass 0), then ImagePolicy */
	for (pass = 0; pass < 2 && scope == NULL; pass++) {
		for (k = 0; k < nnames && scope == NULL; k++) {
			for (i = 0; i < p->n; i++) {
				if (p->rules[i].cluster == (pass == 0) &&
				    rule_has_scope(&p->rules[i], names[k])) {
					scope = names[k];
					found_cluster = pass == 0;
					break;
				}
			}
		}
	}
	if (scope == NULL) {
		rc = 0;
		goto done;
	}
	v.covered = 1;
	if ((v.scope = al_strdup(scope)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* every policy holding that scope must be satisfied */
	for (i = 0; i < p->n; i++) {
		const cs_rule *r = &p->rules[i];
		int accepted = 0;

		if (r->cluster != found_cluster || !rule_has_scope(r, scope))
			continue;
		for (j = 0; j < n && !accepted; j++) {
			al_cosign_info info;

			memset(&info, 0, sizeof(info));
			rc = rule_accepts(&info, r, reference, digest, &c[j]);
			if (rc == AL_ENOMEM)
				goto out;
			if (rc == 0) {
				accepted = 1;
				if (v.policy == NULL) {
					v.which = j;
					v.info = info;
					memset(&info, 0, sizeof(info));
					v.policy = al_strdup(r->name);
				}
			} else {
				(void)al_buf_printf(&why, "%ssignature %zu: %s",
				                    why.len > 0 ? "; " : "",
				                    j + 1, al_error_message());
			}
			al_cosign_info_clear(&info);
		}
		if (!accepted) {
			rc = al_error_set(AL_EVERIFY,
			                  "'%s' is refused by %s (scope '%s'): "
			                  "%s",
			                  reference, r->name, scope,
			                  n == 0 ? "no signature"
			                         : al_buf_cstr(&why));
			goto out;
		}
	}
	rc = 0;
done:
	if (out != NULL) {
		*out = v;
		memset(&v, 0, sizeof(v));
	}
out:
	al_cosign_verdict_clear(&v);
	for (i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	al_buf_free(&why);
	al_ref_clear(&ref);
	return rc;
}
