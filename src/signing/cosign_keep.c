/* cosign_keep.c: the Sigstore trusted root kept in the store (a "sigstore"
 * record of airlock/releases.json, src/store/store_sigstore.c), so that pack
 * carries it under its signed manifest and verification on the far side
 * uses it when no other is given (docs/cosign.md "The trusted root in the
 * store"). */
#include <stdlib.h>
#include <string.h>

#include "airlock/clock.h"
#include "airlock/cosign.h"
#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "airlock/store.h"
#include "cosign_int.h"
#include "store_int.h"

#define KEEP_NAME "trusted-root"
#define KEEP_MEDIA_TYPE "application/vnd.dev.sigstore.trustedroot+json"

/*
 * 1 when the store's record named KEEP_NAME is one an untrusted import
 * brought (marked in airlock/untrusted.json and still the record the
 * store holds), 0 if not; docs/security.md "Marks of untrusted imports".
 */
static int root_marked(al_store *s)
{
	al_store_untrusted *u = NULL;
	size_t nu = 0, i;
	int rc, marked = 0;

	if ((rc = al_store_untrusted_list(s, &u, &nu)) < 0)
		return rc;
	for (i = 0; i < nu; i++)
		if (u[i].kind == AL_STORE_UNTRUSTED_SIGSTORE &&
		    u[i].name != NULL && strcmp(u[i].name, KEEP_NAME) == 0)
			marked = 1;
	al_store_untrusted_free(u, nu);
	return marked;
}

/* Clear the marks of the store's record named KEEP_NAME: a local writer
 * (mirror or verify-image --trusted-root FILE) just kept its own. */
static int root_unmark(al_store *s)
{
	al_store_untrusted *u = NULL;
	size_t nu = 0, i;
	int rc;

	if ((rc = al_store_untrusted_list(s, &u, &nu)) < 0)
		return rc;
	for (i = 0; i < nu && rc == 0; i++)
		if (u[i].kind == AL_STORE_UNTRUSTED_SIGSTORE &&
		    u[i].name != NULL && strcmp(u[i].name, KEEP_NAME) == 0)
			rc = al_store_untrusted_clear(s, &u[i], 1);
	al_store_untrusted_free(u, nu);
	return rc;
}

int al_cosign_store_root_put(al_store *s, const uint8_t *json, size_t n,
                             const char *source)
{
	al_store__sigstore_trust rec;
	al_cosign_trust *t = NULL;
	al_hasher *h = NULL;
	char *content = NULL;
	int rc;

	memset(&rec, 0, sizeof(rec));
	if (s == NULL || (json == NULL && n > 0))
		return al_error_set(AL_EINVAL,
		                    "al_cosign_store_root_put: bad argument");
	/* kept only what verification would accept, and text: the record
	 * holds it as a JSON string */
	if (n > 0 && memchr(json, '\0', n) != NULL)
		return al_error_set(AL_EPARSE,
		                    "%s: a trusted root is JSON text, this "
		                    "holds a NUL byte",
		                    source != NULL ? source : "trusted root");
	if ((rc = al_cosign_trust_new(&t)) < 0 ||
	    (rc = al_cosign_trust_add_trusted_root(
	         t, json, n, source != NULL ? source : "trusted root")) < 0)
		goto out;
	if ((content = malloc(n + 1)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	memcpy(content, json, n);
	content[n] = '\0';
	if ((rc = al_hasher_new(&h, AL_DIGEST_SHA256)) < 0 ||
	    (rc = al_hasher_update(h, json, n)) < 0 ||
	    (rc = al_hasher_final(h, &rec.digest)) < 0)
		goto out;
	rec.has_digest = 1;
	rec.name = (char *)KEEP_NAME;
	rec.media_type = (char *)KEEP_MEDIA_TYPE;
	rec.source = (char *)source;
	if ((rec.kept = al_clock_rfc3339_now()) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	rec.content = content;
	if ((rc = al_store__record_put(s, &al_store__sigstore_kind, &rec)) == 0)
		rc = root_unmark(s);
out:
	free(rec.kept);
	free(content);
	al_hasher_free(h);
	al_cosign_trust_free(t);
	return rc;
}

int al_cosign_store_root_get(al_store *s, al_buf *out, al_digest *digest)
{
	al_store__sigstore_trust *list = NULL;
	void *v = NULL;
	size_t n = 0, i;
	int rc;

	/* a root that only an untrusted import brought vouches for nothing:
	 * not used (a trusted import of it, or --trusted-root FILE, which
	 * keeps that file in its place, makes the store hold one again) */
	if ((rc = root_marked(s)) < 0)
		return rc;
	if (rc == 1) {
		al_log_warn("the trusted root kept in '%s' was brought by an "
		            "untrusted import (airlock check lists it): not "
		            "used",
		            al_store_path(s));
		return al_error_set(AL_ENOTFOUND,
		                    "the store '%s' keeps no Sigstore trusted "
		                    "root a key vouched for (its record came "
		                    "from an untrusted import)",
		                    al_store_path(s));
	}
	if ((rc = al_store__records_list(s, &al_store__sigstore_kind, &v, &n)) <
	    0)
		return rc;
	list = v;
	rc = al_error_set(AL_ENOTFOUND,
	                  "the store '%s' keeps no Sigstore trusted root",
	                  al_store_path(s));
	for (i = 0; i < n; i++) {
		const al_store__sigstore_trust *r = &list[i];
		al_hasher *h = NULL;
		al_digest got;
		size_t len;

		if (r->name == NULL || strcmp(r->name, KEEP_NAME) != 0)
			continue;
		len = r->content != NULL ? strlen(r->content) : 0;
		/* the digest the record names is what was kept: a record
		 * edited by hand since is refused, not used */
		if (!r->has_digest || r->content == NULL ||
		    (rc = al_hasher_new(&h, AL_DIGEST_SHA256)) < 0 ||
		    (rc = al_hasher_update(h, (const uint8_t *)r->content,
		                           len)) < 0 ||
		    (rc = al_hasher_final(h, &got)) < 0 ||
		    !al_digest_equal(&got, &r->digest)) {
			al_hasher_free(h);
			if (rc == AL_ENOMEM)
				break;
			rc = al_error_set(
			    AL_EVERIFY, "the store's trusted root record does "
			                "not match its digest (airlock/"
			                "releases.json \"sigstore\")");
			break;
		}
		al_hasher_free(h);
		al_buf_reset(out);
		if ((rc = al_buf_append(out, r->content, len)) < 0)
			break;
		if (digest != NULL)
			*digest = r->digest;
		al_error_clear();
		rc = 0;
		break;
	}
	al_store__records_free(&al_store__sigstore_kind, v, n);
	return rc;
}

int al_cosign_trust_add_store_root(al_cosign_trust *t, al_store *s)
{
	al_buf b = AL_BUF_INIT(AL_COSIGN_MAX_PEM);
	char *what = NULL;
	int rc;

	if ((rc = al_cosign_store_root_get(s, &b, NULL)) < 0)
		goto out;
	if ((what = al_sprintf("the trusted root kept in %s",
	                       al_store_path(s))) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	rc = al_cosign_trust_add_trusted_root(t, b.ptr, b.len, what);
out:
	free(what);
	al_buf_free(&b);
	return rc;
}
