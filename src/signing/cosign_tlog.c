/* cosign_tlog.c: Rekor transparency-log entries: signed entry timestamps,
 * RFC 6962 inclusion proofs, signed checkpoints, and the entry body checked
 * against the signature it logs. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <limits.h>

#include "airlock/error.h"
#include "json_int.h"
#include "cosign_int.h"

void al__cosign_tlog_init(cs_tlog *e)
{
	memset(e, 0, sizeof(*e));
	al_buf_init(&e->body, AL_COSIGN_MAX_BUNDLE);
	al_buf_init(&e->set, 1024);
	al_buf_init(&e->hashes, 64 * 32);
}

void al__cosign_tlog_clear(cs_tlog *e)
{
	al_buf_free(&e->body);
	al_buf_free(&e->set);
	al_buf_free(&e->hashes);
	free(e->checkpoint);
	al__cosign_tlog_init(e);
}

static int sha256(uint8_t out[32], const void *a, size_t alen, const void *b,
                  size_t blen, const void *c, size_t clen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int len = 0;
	int ok = ctx != NULL &&
	         EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
	         EVP_DigestUpdate(ctx, a, alen) == 1 &&
	         (blen == 0 || EVP_DigestUpdate(ctx, b, blen) == 1) &&
	         (clen == 0 || EVP_DigestUpdate(ctx, c, clen) == 1) &&
	         EVP_DigestFinal_ex(ctx, out, &len) == 1 && len == 32;

	EVP_MD_CTX_free(ctx);
	return ok ? 0 : al_error_openssl(AL_ENOMEM, "SHA-256 failed");
}

static int node_hash(uint8_t out[32], const uint8_t *l, const uint8_t *r)
{
	static const uint8_t one = 1;

	return sha256(out, &one, 1, l, 32, r, 32);
}

/* RFC 9162 section 2.1.3.2. */
int al_cosign_merkle_verify(const uint8_t leaf[32], uint64_t index,
                            uint64_t tree_size, const uint8_t *path, size_t n,
                            const uint8_t root[32])
{
	uint8_t r[32];
	uint64_t fn = index, sn;
	size_t i;
	int rc;

	if (tree_size == 0 || index >= tree_size)
		return al_error_set(AL_EVERIFY,
		                    "inclusion proof: index %" PRIu64
		                    " outside a tree of %" PRIu64 " entries",
		                    index, tree_size);
	sn = tree_size - 1;
	memcpy(r, leaf, 32);
	for (i = 0; i < n; i++) {
		const uint8_t *p = path + 32 * i;

		if (sn == 0)
			return al_error_set(AL_EVERIFY,
			                    "inclusion proof: too many hashes");
		if ((fn & 1) != 0 || fn == sn) {
			if ((rc = node_hash(r, p, r)) < 0)
				return rc;
			while ((fn & 1) == 0 && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else if ((rc = node_hash(r, r, p)) < 0) {
			return rc;
		}
		fn >>= 1;
		sn >>= 1;
	}
	if (sn != 0)
		return al_error_set(AL_EVERIFY,
		                    "inclusion proof: too few hashes");
	if (CRYPTO_memcmp(r, root, 32) != 0)
		return al_error_set(AL_EVERIFY,
		                    "inclusion proof: the computed root hash "
		                    "does not match");
	return 0;
}

static const cs_key *rekor_by_id(const al_cosign_trust *t, const uint8_t *id,
                                 size_t idlen)
{
	size_t i;

	for (i = 0; i < t->nrekor; i++) {
		if (memcmp(t->rekor[i].id, id, idlen) == 0)
			return &t->rekor[i];
	}
	return NULL;
}

/* The SET is Rekor's signature over the RFC 8785 form of {body,
 * integratedTime, logID, logIndex} (rekor pkg/api/entries.go); every
 * value is base64, hex or an integer, so no escaping is needed. */
static int verify_set(const al_cosign_trust *t, const cs_tlog *e)
{
	char idhex[65];
	char *b64 = NULL;
	al_buf msg = AL_BUF_INIT(2 * AL_COSIGN_MAX_BUNDLE);
	const cs_key *k;
	int rc;

	if (!e->has_log_id)
		return al_error_set(AL_EVERIFY,
		                    "transparency log entry without a log ID");
	al__cosign_hex(idhex, e->log_id, 32);
	if ((k = rekor_by_id(t, e->log_id, 32)) == NULL)
		return al_error_set(AL_EVERIFY,
		                    "transparency log entry from log %s, which "
		                    "is not trusted",
		                    idhex);
	/* the log's key must be valid at the integrated time (sigstore-go
	 * VerifySET against the trusted root's validFor) */
	if (!al__cosign_win_has(&k->win, e->integrated_time))
		return al_error_set(AL_EVERIFY,
		                    "the key of log %s is not valid at the "
		                    "integrated time %" PRId64
		                    " (trusted root validFor)",
		                    idhex, e->integrated_time);
	if ((b64 = al_base64_encode(e->body.ptr, e->body.len)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_buf_printf(&msg,
	                   "{\"body\":\"%s\",\"integratedTime\":%" PRId64
	                   ",\"logID\":\"%s\",\"logIndex\":%" PRId64 "}",
	                   b64, e->integrated_time, idhex, e->log_index);
	free(b64);
	if (rc < 0)
		goto out;
	if (!al__cosign_sig_ok(k->pkey, msg.ptr, msg.len, e->set.ptr,
	                       e->set.len))
		rc = al_error_set(AL_EVERIFY,
		                  "the signed entry timestamp does not verify "
		                  "with the key of log %s",
		                  idhex);
out:
	al_buf_free(&msg);
	return rc;
}

/* A decimal uint64 from s[0..n) (no sign, no leading zero but "0"). */
static int parse_u64(uint64_t *out, const char *s, size_t n)
{
	char tmp[24], *end = NULL;
	unsigned long long v;

	if (n == 0 || n >= sizeof(tmp) || (n > 1 && s[0] == '0'))
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (tmp[0] < '0' || tmp[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(tmp, &end, 10);
	if (errno != 0 || end != tmp + n)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* A Rekor v1 checkpoint's origin ends in " - TREEID" (sigstore-go
 * hasRekorV1STH); a Rekor v2 (tile) log's is its host name alone. */
static int v1_origin(const char *s, size_t n)
{
	size_t i = n;

	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	return i < n && i >= 3 && memcmp(s + i - 3, " - ", 3) == 0;
}

/*
 * A checkpoint is a signed note (C2SP signed-note.md, tlog-checkpoint.md;
 * golang.org/x/mod/sumdb/note): the text up to and including the first
 * blank line's preceding newline, then lines "\u2014 NAME BASE64\n" where
 * BASE64 is a 4-byte key hint and the signature. The text's lines are the
 * origin, the tree size and the base64 root hash.
 *
 * Rekor v1 (origin "HOST - TREEID"): one signature whose hint is the first
 * 4 bytes of a trusted Rekor key's ID must verify. Rekor v2 (log: the
 * entry's log, whose trusted-root origin is known): the origin line must
 * be that origin, and the lines whose name is the origin and whose hint is
 * the first 4 bytes of the log ID (C2SP: SHA-256(name || 0x0A || 0x01 ||
 * key) for Ed25519; rekor-tiles pkg/note KeyHash) are the log's: each must
 * verify and at least one must be there; other lines (witness
 * cosignatures, unknown keys) are ignored, as note.Open ignores unknown
 * signers.
 */
static int verify_checkpoint(const al_cosign_trust *t, const cs_key *log,
                             const char *env, uint64_t *size, uint8_t root[32])
{
	static const char dash[] = "\xe2\x80\x94 ";
	const char *sep = strstr(env, "\n\n"), *p, *nl, *l2, *l3;
	al_buf sig = AL_BUF_INIT(1024), hash = AL_BUF_INIT(64);
	size_t note_len, olen;
	int rc = 0, verified = 0, v2;

	if (sep == NULL)
		return al_error_set(AL_EVERIFY, "checkpoint without a blank "
		                                "line before its signatures");
	note_len = (size_t)(sep - env) + 1;
	l2 = memchr(env, '\n', note_len);
	olen = l2 != NULL ? (size_t)(l2 - env) : 0;
	v2 = log != NULL && log->origin[0] != '\0' && !v1_origin(env, olen);
	if (v2 && (olen != strlen(log->origin) ||
	           memcmp(env, log->origin, olen) != 0))
		return al_error_set(AL_EVERIFY,
		                    "checkpoint origin '%.*s' is not the log's "
		                    "'%s'",
		                    (int)(olen > 200 ? 200 : olen), env,
		                    log->origin);
	for (p = sep + 2; *p != '\0'; p = nl + 1) {
		const char *name, *b64;
		const cs_key *k;
		size_t nlen;

		if ((nl = strchr(p, '\n')) == NULL)
			break;
		if (strncmp(p, dash, sizeof(dash) - 1) != 0)
			continue;
		name = p + sizeof(dash) - 1;
		if ((b64 = memchr(name, ' ', (size_t)(nl - name))) == NULL)
			continue;
		nlen = (size_t)(b64 - name);
		b64++;
		al_buf_reset(&sig);
		if ((rc = al__cosign_b64(&sig, b64, (size_t)(nl - b64))) < 0 ||
		    sig.len < 5) {
			rc = rc == AL_ENOMEM
			         ? rc
			         : al_error_set(
			               AL_EVERIFY,
			               "checkpoint: malformed signature "
			               "line");
			goto out;
		}
		if (v2) {
			if (nlen != strlen(log->origin) ||
			    memcmp(name, log->origin, nlen) != 0 ||
			    memcmp(sig.ptr, log->id, 4) != 0)
				continue;
			k = log;
		} else if (verified ||
		           (k = rekor_by_id(t, sig.ptr, 4)) == NULL) {
			continue;
		}
		if (!al__cosign_sig_ok(k->pkey, (const uint8_t *)env, note_len,
		                       sig.ptr + 4, sig.len - 4)) {
			if (!v2)
				continue;
			rc = al_error_set(AL_EVERIFY,
			                  "checkpoint: the signature of log "
			                  "'%s' does not verify",
			                  log->origin);
			goto out;
		}
		verified = 1;
	}
	if (!verified) {
		rc = al_error_set(AL_EVERIFY, "checkpoint: no signature by a "
		                              "trusted transparency log");
		goto out;
	}
	/* origin \n size \n hash \n ... */
	if (l2 == NULL || olen == 0 ||
	    (l3 = memchr(l2 + 1, '\n', note_len - (size_t)(l2 + 1 - env))) ==
	        NULL ||
	    parse_u64(size, l2 + 1, (size_t)(l3 - l2 - 1)) < 0) {
		rc = al_error_set(AL_EVERIFY, "checkpoint: malformed header");
		goto out;
	}
	nl = memchr(l3 + 1, '\n', note_len - (size_t)(l3 + 1 - env));
	if (nl == NULL ||
	    al__cosign_b64(&hash, l3 + 1, (size_t)(nl - l3 - 1)) < 0 ||
	    hash.len != 32) {
		rc =
		    al_error_set(AL_EVERIFY, "checkpoint: malformed root hash");
		goto out;
	}
	memcpy(root, hash.ptr, 32);
	rc = 0;
out:
	al_buf_free(&sig);
	al_buf_free(&hash);
	return rc;
}

static int verify_proof(const al_cosign_trust *t, const cs_tlog *e)
{
	static const uint8_t zero = 0;
	uint8_t leaf[32], root[32];
	uint64_t size = 0;
	int rc;

	if (e->checkpoint == NULL)
		return al_error_set(AL_EVERIFY,
		                    "inclusion proof without a checkpoint");
	if ((rc = verify_checkpoint(
	         t, e->has_log_id ? rekor_by_id(t, e->log_id, 32) : NULL,
	         e->checkpoint, &size, root)) < 0)
		return rc;
	if (e->tree_size < 0 || (uint64_t)e->tree_size != size ||
	    CRYPTO_memcmp(root, e->root, 32) != 0)
		return al_error_set(AL_EVERIFY,
		                    "inclusion proof: tree size or root hash "
		                    "differs from the signed checkpoint");
	if (e->proof_index < 0)
		return al_error_set(AL_EVERIFY,
		                    "inclusion proof: negative index");
	if ((rc = sha256(leaf, &zero, 1, e->body.ptr, e->body.len, NULL, 0)) <
	    0)
		return rc;
	return al_cosign_merkle_verify(leaf, (uint64_t)e->proof_index, size,
	                               e->hashes.ptr, e->hashes.len / 32, root);
}

/* The base64 string at obj.key decoded into out. */
static int b64_member(al_buf *out, const json_t *obj, const char *key)
{
	const char *s = al_json_str(obj, key);

	if (s == NULL)
		return -1;
	return al__cosign_b64(out, s, strlen(s)) < 0 ? -1 : 0;
}

/*
 * The key or certificate in a body's base64 PEM must be the very one that
 * verified the signature: one PEM block, nothing but white space after
 * it, whose DER bytes equal the certificate's (keyless) or the key's
 * SubjectPublicKeyInfo (containers/image signature/internal/rekor_set.go
 * VerifyRekorSET compares the PEM payload bytes; an equal key in another
 * certificate is another entry).
 */
static int body_key_matches(const json_t *obj, const char *key,
                            const cs_signed *s)
{
	al_buf pem = AL_BUF_INIT(AL_COSIGN_MAX_PEM);
	BIO *bio = NULL;
	char *name = NULL, *header = NULL;
	unsigned char *der = NULL, *want = NULL;
	long len = 0;
	int wlen, ok = 0;
	size_t i;

	if (b64_member(&pem, obj, key) != 0 || pem.len > INT_MAX ||
	    (bio = BIO_new_mem_buf(pem.ptr, (int)pem.len)) == NULL ||
	    PEM_read_bio(bio, &name, &header, &der, &len) != 1)
		goto out;
	/* what follows the block: white space only */
	{
		char *rest;
		long n = BIO_get_mem_data(bio, &rest);

		for (i = 0; n > 0 && i < (size_t)n; i++)
			if (strchr(" \t\r\n", rest[i]) == NULL || rest[i] == 0)
				goto out;
	}
	if (s->cert != NULL)
		wlen = i2d_X509(s->cert, &want);
	else
		wlen = i2d_PUBKEY(s->signer, &want);
	ok = wlen > 0 && (long)wlen == len &&
	     CRYPTO_memcmp(want, der, (size_t)len) == 0 &&
	     strcmp(name, s->cert != NULL ? "CERTIFICATE" : "PUBLIC KEY") == 0;
out:
	OPENSSL_free(want);
	OPENSSL_free(name);
	OPENSSL_free(header);
	OPENSSL_free(der);
	BIO_free(bio);
	al_buf_free(&pem);
	ERR_clear_error();
	al_error_clear();
	return ok;
}

static int hash_matches(const json_t *h, const uint8_t digest[32])
{
	char hex[65];
	const char *alg = al_json_str(h, "algorithm");
	const char *v = al_json_str(h, "value");

	al__cosign_hex(hex, digest, 32);
	return alg != NULL && v != NULL && strcmp(alg, "sha256") == 0 &&
	       strcmp(v, hex) == 0;
}

static int sig_matches(const json_t *obj, const char *key, const cs_signed *s)
{
	al_buf b = AL_BUF_INIT(64 * 1024);
	int ok = b64_member(&b, obj, key) == 0 && b.len == s->siglen &&
	         CRYPTO_memcmp(b.ptr, s->sig, b.len) == 0;

	al_buf_free(&b);
	return ok;
}

/* rekor pkg/types/intoto/v0.0.2: the envelope's signature and key are
 * base64 of base64 and base64 of PEM; payloadHash names the payload. */
static int verify_intoto(const json_t *spec, const cs_signed *s)
{
	const json_t *content = json_object_get(spec, "content");
	const json_t *sigs =
	    json_object_get(json_object_get(content, "envelope"), "signatures");
	const json_t *sig0 = json_array_get(sigs, 0);
	al_buf outer = AL_BUF_INIT(64 * 1024), inner = AL_BUF_INIT(64 * 1024);
	int rc = 0;

	if (json_array_size(sigs) != 1) {
		rc = al_error_set(AL_EVERIFY,
		                  "transparency log entry holds %zu DSSE "
		                  "signatures, not 1",
		                  json_array_size(sigs));
	} else if (!hash_matches(json_object_get(content, "payloadHash"),
	                         s->digest)) {
		rc = al_error_set(AL_EVERIFY, "transparency log entry is for "
		                              "another DSSE payload");
	} else if (b64_member(&outer, sig0, "sig") < 0 ||
	           al__cosign_b64(&inner, (const char *)outer.ptr, outer.len) <
	               0 ||
	           inner.len != s->siglen ||
	           CRYPTO_memcmp(inner.ptr, s->sig, inner.len) != 0) {
		rc = al_error_set(AL_EVERIFY, "transparency log entry holds "
		                              "another signature");
	} else if (!body_key_matches(sig0, "publicKey", s)) {
		rc = al_error_set(AL_EVERIFY, "transparency log entry names "
		                              "another key or certificate");
	}
	al_buf_free(&outer);
	al_buf_free(&inner);
	return rc;
}

/* Rekor v2 (rekor-tiles api/proto/rekor/v2): a HashOutput {algorithm
 * SHA2_256, digest base64} naming d. */
static int v2_hash_matches(const json_t *h, const uint8_t d[32])
{
	al_buf b = AL_BUF_INIT(64);
	const char *alg = al_json_str(h, "algorithm");
	int ok = alg != NULL && strcmp(alg, "SHA2_256") == 0 &&
	         b64_member(&b, h, "digest") == 0 && b.len == 32 &&
	         CRYPTO_memcmp(b.ptr, d, 32) == 0;

	al_buf_free(&b);
	return ok;
}

/* A v2 Verifier: x509Certificate.rawBytes must be the very certificate
 * (keyless), publicKey.rawBytes the key's DER SubjectPublicKeyInfo. */
static int v2_verifier_matches(const json_t *v, const cs_signed *s)
{
	al_buf raw = AL_BUF_INIT(AL_COSIGN_MAX_PEM);
	unsigned char *want = NULL;
	const json_t *x = json_object_get(v, "x509Certificate");
	const json_t *k = json_object_get(v, "publicKey");
	int wlen, ok = 0;

	if ((x != NULL) == (k != NULL) || (s->cert != NULL) != (x != NULL) ||
	    b64_member(&raw, x != NULL ? x : k, "rawBytes") != 0)
		goto out;
	wlen = s->cert != NULL ? i2d_X509(s->cert, &want)
	                       : i2d_PUBKEY(s->signer, &want);
	ok = wlen > 0 && (size_t)wlen == raw.len &&
	     CRYPTO_memcmp(want, raw.ptr, raw.len) == 0;
out:
	OPENSSL_free(want);
	al_buf_free(&raw);
	return ok;
}

/*
 * Rekor v2 entries (rekor-tiles, kinds hashedrekord and dsse, version
 * 0.0.2, spec.hashedRekordV002 / spec.dsseV002). A hashedrekord names the
 * SHA-256 of the signed bytes: the artifact, or for a DSSE envelope its
 * PAE (sigstore-go reconstructV2EntryHash); a dsse entry the payload's
 * SHA-256 and its one signature. Signature and verifier must be this
 * signature's.
 */
static int verify_body_v2(const char *kind, const json_t *spec,
                          const cs_signed *s)
{
	const json_t *sig;

	if (strcmp(kind, "hashedrekord") == 0) {
		const json_t *h = json_object_get(spec, "hashedRekordV002");

		if (!v2_hash_matches(json_object_get(h, "data"),
		                     s->signed_digest))
			return al_error_set(AL_EVERIFY,
			                    "transparency log entry is for "
			                    "another artifact digest");
		sig = json_object_get(h, "signature");
	} else if (strcmp(kind, "dsse") == 0 && s->dsse) {
		const json_t *d = json_object_get(spec, "dsseV002");
		const json_t *sigs = json_object_get(d, "signatures");

		if (json_array_size(sigs) != 1)
			return al_error_set(AL_EVERIFY,
			                    "transparency log entry holds %zu "
			                    "DSSE signatures, not 1",
			                    json_array_size(sigs));
		if (!v2_hash_matches(json_object_get(d, "payloadHash"),
		                     s->digest))
			return al_error_set(AL_EVERIFY,
			                    "transparency log entry is for "
			                    "another DSSE payload");
		sig = json_array_get(sigs, 0);
	} else {
		return al_error_set(
		    AL_EVERIFY,
		    "transparency log entry of kind '%s' does "
		    "not match a %s",
		    kind, s->dsse ? "DSSE envelope" : "message signature");
	}
	if (!sig_matches(sig, "content", s))
		return al_error_set(AL_EVERIFY, "transparency log entry holds "
		                                "another signature");
	if (!v2_verifier_matches(json_object_get(sig, "verifier"), s))
		return al_error_set(AL_EVERIFY, "transparency log entry names "
		                                "another key or certificate");
	return 0;
}

/* rekor pkg/types/hashedrekord/v0.0.1 and dsse/v0.0.1. */
static int verify_body(const cs_tlog *e, const cs_signed *s)
{
	json_t *root = NULL, *spec, *sigs;
	const char *kind, *version;
	int rc = AL_EVERIFY;

	if (al_json_parse(&root, e->body.ptr, e->body.len,
	                  "transparency log entry body") < 0)
		return al_error_wrap(AL_EVERIFY,
		                     "invalid transparency log entry");
	kind = al_json_str(root, "kind");
	version = al_json_str(root, "apiVersion");
	spec = json_object_get(root, "spec");
	if (kind == NULL || version == NULL || !json_is_object(spec)) {
		rc = al_error_set(AL_EVERIFY,
		                  "transparency log entry body "
		                  "without kind, apiVersion or spec");
		goto out;
	}
	if ((e->kind[0] != '\0' && strcmp(e->kind, kind) != 0) ||
	    (e->version[0] != '\0' && strcmp(e->version, version) != 0)) {
		rc = al_error_set(AL_EVERIFY,
		                  "transparency log entry is %s/%s, its body "
		                  "%s/%s",
		                  e->kind, e->version, kind, version);
		goto out;
	}
	if (strcmp(version, "0.0.2") == 0 &&
	    (strcmp(kind, "hashedrekord") == 0 || strcmp(kind, "dsse") == 0)) {
		rc = verify_body_v2(kind, spec, s);
		goto out;
	}
	if (strcmp(version, strcmp(kind, "intoto") == 0 ? "0.0.2" : "0.0.1") !=
	    0) {
		rc = al_error_set(AL_EUNSUPPORTED,
		                  "transparency log entry %s version %s is not "
		                  "supported",
		                  kind, version);
		goto out;
	}
	if (strcmp(kind, "hashedrekord") == 0 && !s->dsse) {
		json_t *sig = json_object_get(spec, "signature");
		json_t *hash =
		    json_object_get(json_object_get(spec, "data"), "hash");

		if (!hash_matches(hash, s->digest))
			rc = al_error_set(
			    AL_EVERIFY, "transparency log entry is for another "
			                "artifact digest");
		else if (!sig_matches(sig, "content", s))
			rc = al_error_set(
			    AL_EVERIFY, "transparency log entry holds another "
			                "signature");
		else if (!body_key_matches(json_object_get(sig, "publicKey"),
		                           "content", s))
			rc = al_error_set(
			    AL_EVERIFY, "transparency log entry names another "
			                "key or certificate");
		else
			rc = 0;
	} else if (strcmp(kind, "dsse") == 0 && s->dsse) {
		sigs = json_object_get(spec, "signatures");
		if (json_array_size(sigs) != 1)
			rc = al_error_set(
			    AL_EVERIFY,
			    "transparency log entry holds %zu DSSE "
			    "signatures, not 1",
			    json_array_size(sigs));
		else if (!hash_matches(json_object_get(spec, "payloadHash"),
		                       s->digest))
			rc = al_error_set(
			    AL_EVERIFY, "transparency log entry is for another "
			                "DSSE payload");
		else if (!sig_matches(json_array_get(sigs, 0), "signature", s))
			rc = al_error_set(
			    AL_EVERIFY, "transparency log entry holds another "
			                "signature");
		else if (!body_key_matches(json_array_get(sigs, 0), "verifier",
		                           s))
			rc = al_error_set(
			    AL_EVERIFY, "transparency log entry names another "
			                "key or certificate");
		else
			rc = 0;
	} else if (strcmp(kind, "intoto") == 0 && s->dsse) {
		rc = verify_intoto(spec, s);
	} else {
		rc = al_error_set(
		    AL_EVERIFY,
		    "transparency log entry of kind '%s' does not match a %s",
		    kind, s->dsse ? "DSSE envelope" : "message signature");
	}
out:
	json_decref(root);
	return rc;
}

int al__cosign_tlog_verify(const al_cosign_trust *t, const cs_tlog *e,
                           const cs_signed *s, const int64_t *when,
                           size_t nwhen, int *time_ok)
{
	const cs_key *k;
	size_t i;
	int rc;

	*time_ok = 0;
	if ((rc = verify_body(e, s)) < 0)
		return rc;
	if (e->set.len == 0 && !e->has_proof)
		return al_error_set(AL_EVERIFY,
		                    "transparency log entry with neither a "
		                    "signed entry timestamp nor an inclusion "
		                    "proof");
	/* rekor-tiles entries carry no integrated time and no SET: only
	 * an inclusion proof (sigstore-go VerifyTlogEntry) */
	if (strcmp(e->version, "0.0.2") == 0 &&
	    strcmp(e->kind, "intoto") != 0 && !e->has_proof)
		return al_error_set(AL_EVERIFY, "Rekor v2 transparency log "
		                                "entry without an inclusion "
		                                "proof");
	if (e->set.len > 0) {
		if ((rc = verify_set(t, e)) < 0)
			return rc;
		*time_ok = 1;
	}
	if (e->has_proof && (rc = verify_proof(t, e)) < 0)
		return rc;
	/* an entry without a SET is dated by the signed timestamps: the
	 * log's key must be valid at each (trusted root validFor) */
	if (e->set.len == 0 && e->has_log_id &&
	    (k = rekor_by_id(t, e->log_id, 32)) != NULL) {
		for (i = 0; i < nwhen; i++)
			if (!al__cosign_win_has(&k->win, when[i]))
				return al_error_set(
				    AL_EVERIFY,
				    "the transparency log's key is not valid "
				    "at the signed time %" PRId64
				    " (trusted root validFor)",
				    when[i]);
	}
	return 0;
}
