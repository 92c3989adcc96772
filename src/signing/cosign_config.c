/* cosign_config.c: the cluster configuration a sigstore-verified mirror
 * needs: registries.d documents (use-sigstore-attachments) and
 * ClusterImagePolicy resources. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/cosign.h"
#include "airlock/error.h"
#include "yaml_int.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int valid_location(const char *s)
{
	const char *slash = strchr(s, '/');
	const char *last = strrchr(s, '/');

	if (s[0] == '\0' || s[0] == '/' || strpbrk(s, " \t\r\n@\"'") != NULL)
		return 0;
	/* a ':' after the host would be a tag */
	if (slash != NULL && strchr(last, ':') != NULL)
		return 0;
	return s[strlen(s) - 1] != '/';
}

int al_cosign_emit_registries_d(al_buf *out, const char *const *locations,
                                size_t n)
{
	json_t *doc = NULL, *docker = NULL, *loc;
	const char **sorted = NULL;
	size_t i;
	int rc;

	if (n == 0)
		return al_error_set(AL_EINVAL, "no mirror location");
	if ((sorted = calloc(n, sizeof(*sorted))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		if (locations[i] == NULL || !valid_location(locations[i])) {
			rc = al_error_set(AL_EINVAL,
			                  "invalid mirror location '%s' (want "
			                  "host[:port][/namespace...])",
			                  locations[i] != NULL ? locations[i]
			                                       : "");
			goto out;
		}
		sorted[i] = locations[i];
	}
	qsort(sorted, n, sizeof(*sorted), cmp_str);
	if ((doc = json_object()) == NULL || (docker = json_object()) == NULL ||
	    json_object_set(doc, "docker", docker) < 0) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if ((loc = json_pack("{s:b}", "use-sigstore-attachments", 1)) ==
		        NULL ||
		    json_object_set_new(docker, sorted[i], loc) < 0) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	rc = al_yaml_emit_json(out, &doc, 1);
out:
	json_decref(docker);
	json_decref(doc);
	free(sorted);
	return rc;
}

static json_t *b64_value(const uint8_t *p, size_t n)
{
	char *s = al_base64_encode(p, n);
	json_t *v = s != NULL ? json_string(s) : NULL;

	free(s);
	return v;
}

static const char *match_name(al_cosign_match m)
{
	switch (m) {
	case AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT:
		return "MatchRepoDigestOrExact";
	case AL_COSIGN_MATCH_REPOSITORY:
		return "MatchRepository";
	case AL_COSIGN_MATCH_EXACT_REPOSITORY:
		return "ExactRepository";
	case AL_COSIGN_MATCH_REMAP_IDENTITY:
		return "RemapIdentity";
	}
	return NULL;
}

int al_cosign_emit_policy(al_buf *out, const al_cosign_policy_spec *sp)
{
	json_t *doc = NULL, *scopes = NULL, *root = NULL, *id = NULL, *v;
	size_t i;
	int rc = AL_ENOMEM;

	if (sp->name == NULL || sp->nscopes == 0 ||
	    match_name(sp->match) == NULL)
		return al_error_set(AL_EINVAL, "a policy needs a name, scopes "
		                               "and a match policy");
	if ((sp->key_pem == NULL) == (sp->fulcio_pem == NULL))
		return al_error_set(AL_EINVAL, "a policy needs a public key or "
		                               "a Fulcio CA, not both");
	if (sp->fulcio_pem != NULL &&
	    (sp->rekor_pem == NULL || sp->oidc_issuer == NULL ||
	     sp->signed_email == NULL))
		return al_error_set(AL_EINVAL,
		                    "a FulcioCAWithRekor policy needs a Rekor "
		                    "key, an OIDC issuer and a signed email");
	if ((sp->match == AL_COSIGN_MATCH_EXACT_REPOSITORY &&
	     sp->arg1 == NULL) ||
	    (sp->match == AL_COSIGN_MATCH_REMAP_IDENTITY &&
	     (sp->arg1 == NULL || sp->arg2 == NULL)))
		return al_error_set(AL_EINVAL, "the match policy needs its "
		                               "repository or prefixes");
	if ((scopes = json_array()) == NULL)
		goto oom;
	for (i = 0; i < sp->nscopes; i++) {
		if (json_array_append_new(scopes, json_string(sp->scopes[i])) <
		    0)
			goto oom;
	}
	if (sp->key_pem != NULL) {
		json_t *pk = json_object();

		root = json_pack("{s:s,s:o}", "policyType", "PublicKey",
		                 "publicKey", pk);
		if (root == NULL ||
		    (v = b64_value(sp->key_pem, sp->key_len)) == NULL ||
		    json_object_set_new(pk, "keyData", v) < 0 ||
		    (sp->rekor_pem != NULL &&
		     ((v = b64_value(sp->rekor_pem, sp->rekor_len)) == NULL ||
		      json_object_set_new(pk, "rekorKeyData", v) < 0)))
			goto oom;
	} else {
		json_t *fr = json_object();

		root = json_pack("{s:s,s:o}", "policyType", "FulcioCAWithRekor",
		                 "fulcioCAWithRekor", fr);
		if (root == NULL ||
		    (v = b64_value(sp->fulcio_pem, sp->fulcio_len)) == NULL ||
		    json_object_set_new(fr, "fulcioCAData", v) < 0 ||
		    (v = b64_value(sp->rekor_pem, sp->rekor_len)) == NULL ||
		    json_object_set_new(fr, "rekorKeyData", v) < 0 ||
		    json_object_set_new(
		        fr, "fulcioSubject",
		        json_pack("{s:s,s:s}", "oidcIssuer", sp->oidc_issuer,
		                  "signedEmail", sp->signed_email)) < 0)
			goto oom;
	}
	if ((id = json_pack("{s:s}", "matchPolicy", match_name(sp->match))) ==
	    NULL)
		goto oom;
	if (sp->match == AL_COSIGN_MATCH_EXACT_REPOSITORY &&
	    json_object_set_new(id, "exactRepository",
	                        json_pack("{s:s}", "repository", sp->arg1)) < 0)
		goto oom;
	if (sp->match == AL_COSIGN_MATCH_REMAP_IDENTITY &&
	    json_object_set_new(id, "remapIdentity",
	                        json_pack("{s:s,s:s}", "prefix", sp->arg1,
	                                  "signedPrefix", sp->arg2)) < 0)
		goto oom;
	doc = json_pack("{s:s,s:s,s:{s:s},s:{s:O,s:{s:O,s:O}}}", "apiVersion",
	                "config.openshift.io/v1", "kind", "ClusterImagePolicy",
	                "metadata", "name", sp->name, "spec", "scopes", scopes,
	                "policy", "rootOfTrust", root, "signedIdentity", id);
	if (doc == NULL)
		goto oom;
	rc = al_yaml_emit_json(out, &doc, 1);
	goto out;
oom:
	rc = al_error_set(AL_ENOMEM, "out of memory");
out:
	json_decref(doc);
	json_decref(scopes);
	json_decref(root);
	json_decref(id);
	return rc;
}
