/* cosign_verify.c: verifying a cosign tag-scheme signature (payload layer and
 * its annotations) and a sigstore bundle (protobuf-specs bundle.proto, JSON
 * form). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "airlock/cosign.h"
#include "airlock/error.h"
#include "json_int.h"
#include "cosign_int.h"
#include "error_int.h"

#define MAX_SIG_BYTES (16 * 1024)
#define MAX_TLOG_ENTRIES 16

#define DSSE_SIMPLESIGNING AL_COSIGN_SIMPLESIGNING_MEDIA_TYPE

/* Verified times kept per signature (timestamps and log entries). */
#define MAX_TIMES 32

/* What one verification works on. */
typedef struct core {
	const uint8_t *msg; /* the bytes the signature is over */
	size_t msglen;
	const uint8_t *sig;
	size_t siglen;
	uint8_t digest[32]; /* logged digest (artifact or DSSE payload) */
	int dsse;
	X509 *leaf; /* keyless */
	STACK_OF(X509) * chain;
	cs_tlog *entries;
	size_t nentries;
	const al_buf *tsa; /* RFC 3161 tokens (DER) */
	size_t ntsa;
} core;

static int sha256(uint8_t out[32], const uint8_t *p, size_t n)
{
	unsigned int len = 0;

	if (EVP_Digest(p, n, out, &len, EVP_sha256(), NULL) != 1 || len != 32)
		return al_error_openssl(AL_ENOMEM, "SHA-256 failed");
	return 0;
}

static int verify_core(al_cosign_info *info, const core *c,
                       const al_cosign_opts *o)
{
	const al_cosign_trust *t = o->trust;
	EVP_PKEY *signer = NULL;
	cs_signed s;
	size_t i;
	int rc, time_ok, have_time = 0, logged = 0, tsa_dated = 0;
	int64_t at = 0, index = 0, times[MAX_TIMES];
	size_t ntimes = 0, need, nsigned;

	if (t == NULL)
		return al_error_set(AL_EINVAL, "no trust to verify against");
	if (c->leaf != NULL) {
		if (t->nfulcio == 0)
			return al_error_set(
			    AL_EINVAL, "a keyless signature, and no Fulcio "
			               "certificate is trusted");
		signer = X509_get0_pubkey(c->leaf);
		if (signer == NULL ||
		    !al__cosign_sig_ok(signer, c->msg, c->msglen, c->sig,
		                       c->siglen))
			return al_error_set(
			    AL_EVERIFY, "signature does not verify with the "
			                "certificate's key");
	} else {
		if (t->nkeys == 0)
			return al_error_set(
			    AL_EINVAL, "a key-based signature, and no public "
			               "key is trusted");
		for (i = 0; i < t->nkeys && signer == NULL; i++) {
			if (al__cosign_sig_ok(t->keys[i].pkey, c->msg,
			                      c->msglen, c->sig, c->siglen))
				signer = t->keys[i].pkey;
		}
		if (signer == NULL)
			return al_error_set(
			    AL_EVERIFY,
			    "signature does not verify with any "
			    "of the %zu trusted keys",
			    t->nkeys);
	}
	memset(&s, 0, sizeof(s));
	s.sig = c->sig;
	s.siglen = c->siglen;
	s.signer = signer;
	s.cert = c->leaf;
	s.dsse = c->dsse;
	memcpy(s.digest, c->digest, 32);
	if ((rc = sha256(s.signed_digest, c->msg, c->msglen)) < 0)
		return rc;
	/* RFC 3161 tokens over the signature (sigstore-js getTSATimestamp,
	 * sigstore-go VerifySignedTimestamp): with a timestamp authority
	 * trusted, every token given must verify against its chain */
	for (i = 0; i < c->ntsa && !t->pki && t->ntsa > 0; i++) {
		int64_t when = 0;

		if ((rc = al__cosign_tsa_verify(t, c->tsa[i].ptr, c->tsa[i].len,
		                                c->sig, c->siglen, &when)) < 0)
			return al_error_wrap(rc, "timestamp %zu", i + 1);
		if (ntimes < MAX_TIMES) {
			times[ntimes++] = when;
			tsa_dated = 1;
		}
	}
	nsigned = ntimes;
	if (c->nentries > 0 && t->nrekor > 0) {
		for (i = 0; i < c->nentries; i++) {
			if ((rc = al__cosign_tlog_verify(t, &c->entries[i], &s,
			                                 times, nsigned,
			                                 &time_ok)) < 0)
				return al_error_wrap(
				    rc, "transparency log entry %zu", i + 1);
			/* Rekor's integrated time dates the signature only
			 * where it carries no signed timestamp (Sigstore
			 * client specification, "Establishing a time for
			 * the signature") */
			if (time_ok && c->ntsa == 0 && ntimes < MAX_TIMES)
				times[ntimes++] = c->entries[i].integrated_time;
			if (!logged)
				index = c->entries[i].log_index;
			logged = 1;
		}
	}
	if ((o->require_tlog || (c->leaf != NULL && !t->pki)) && t->nrekor == 0)
		return al_error_set(AL_EINVAL,
		                    "a transparency log entry is required, and "
		                    "no Rekor key is trusted");
	if (o->require_tlog && !logged)
		return al_error_set(AL_EVERIFY,
		                    "no transparency log entry, and one is "
		                    "required");
	need = o->min_times > 0 ? o->min_times
	                        : (c->leaf != NULL && !t->pki ? 1 : 0);
	if (!t->pki && ntimes < need && ntimes == 0 && c->leaf != NULL)
		return al_error_set(
		    AL_EVERIFY,
		    "keyless signature without a verified signed "
		    "entry timestamp or RFC 3161 timestamp: nothing "
		    "proves when the certificate was used");
	if (!t->pki && ntimes < need)
		return al_error_set(
		    AL_EVERIFY,
		    "%zu verified time(s) date the signature, %zu needed",
		    ntimes, need);
	if (c->leaf != NULL) {
		char *sub = NULL, *iss = NULL;

		/* A Fulcio certificate lives minutes: the chain must be valid
		 * at every verified time (sigstore-go VerifyLeafCertificate
		 * per timestamp); nothing else dates the signature. A PKI
		 * certificate is checked now. */
		if (t->pki) {
			times[0] = (int64_t)time(NULL);
			ntimes = 1;
		}
		for (i = 0; i < ntimes; i++) {
			free(sub);
			free(iss);
			sub = iss = NULL;
			if ((rc = al__cosign_cert_verify(t, c->leaf, c->chain,
			                                 times[i], &sub,
			                                 &iss)) < 0) {
				free(sub);
				free(iss);
				return rc;
			}
		}
		info->keyless = 1;
		info->subject = sub;
		info->issuer = iss;
	}
	have_time = ntimes > 0;
	at = ntimes > 0 ? times[0] : 0;
	if ((rc = al__cosign_key_id(s.digest, signer)) < 0)
		return rc;
	al__cosign_hex(info->key_id, s.digest, 32);
	info->tlog_verified = logged;
	info->has_time = have_time != 0;
	info->tsa_time = tsa_dated && !t->pki;
	info->integrated_time = at;
	info->log_index = index;
	return 0;
}

/* An int64 from a JSON integer or a decimal string (protobuf JSON, which
 * leaves out members holding their default: absent is 0). */
static int json_int64(int64_t *out, const json_t *v)
{
	const char *s;
	char *end = NULL;
	long long x;

	if (v == NULL) {
		*out = 0;
		return 0;
	}
	if (json_is_integer(v)) {
		*out = (int64_t)json_integer_value(v);
		return 0;
	}
	if ((s = json_string_value(v)) == NULL || s[0] == '\0' ||
	    (s[0] != '-' && (s[0] < '0' || s[0] > '9')))
		return -1;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = (int64_t)x;
	return 0;
}

/* Base64 as Go's encoding/base64 reads it in cosign and containers/image:
 * CR and LF are ignored (cosign's PKI signatures carry MIME line breaks). */
static int b64_lines(al_buf *out, const char *s)
{
	al_buf flat = AL_BUF_INIT(4 * AL_COSIGN_MAX_BUNDLE);
	int rc = 0;

	for (; *s != '\0' && rc == 0; s++) {
		if (*s != '\r' && *s != '\n' &&
		    (rc = al_buf_append(&flat, s, 1)) == AL_ENOMEM)
			al__cosign_oom_note();
	}
	if (rc == 0)
		rc = al__cosign_b64(out, al_buf_cstr(&flat), flat.len);
	al_buf_free(&flat);
	return rc < 0 ? -1 : 0;
}

static int json_b64(al_buf *out, const json_t *v)
{
	const char *s = json_string_value(v);

	if (s == NULL)
		return -1;
	return al__cosign_b64(out, s, strlen(s)) < 0 ? -1 : 0;
}

static int hex_decode(uint8_t *out, size_t n, const char *s)
{
	size_t i;

	if (s == NULL || strlen(s) != 2 * n)
		return -1;
	for (i = 0; i < 2 * n; i++) {
		int v;
		char ch = s[i];

		if (ch >= '0' && ch <= '9')
			v = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			v = ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			v = ch - 'A' + 10;
		else
			return -1;
		if (i % 2 == 0)
			out[i / 2] = (uint8_t)(v << 4);
		else
			out[i / 2] |= (uint8_t)v;
	}
	return 0;
}

static void free_entries(cs_tlog *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		al__cosign_tlog_clear(&e[i]);
	free(e);
}

/* The cosign "dev.sigstore.cosign/bundle" annotation: {"SignedEntryTimestamp":
 * b64, "Payload": {"body": b64, "integratedTime", "logIndex", "logID": hex}}
 * (cosign pkg/cosign/bundle/rekor.go). */
static int rekor_bundle(cs_tlog *e, const char *s)
{
	json_t *root = NULL, *pl;
	int rc = 0;

	if (al_json_parse(&root, (const uint8_t *)s, strlen(s),
	                  "cosign bundle annotation") < 0)
		return al_error_wrap(AL_EVERIFY, "invalid cosign bundle");
	pl = json_object_get(root, "Payload");
	if (json_b64(&e->set, json_object_get(root, "SignedEntryTimestamp")) <
	        0 ||
	    json_b64(&e->body, json_object_get(pl, "body")) < 0 ||
	    json_int64(&e->integrated_time,
	               json_object_get(pl, "integratedTime")) < 0 ||
	    json_int64(&e->log_index, json_object_get(pl, "logIndex")) < 0 ||
	    hex_decode(e->log_id, 32, al_json_str(pl, "logID")) < 0)
		rc = al_error_set(
		    AL_EVERIFY, "invalid cosign bundle annotation: missing or "
		                "malformed SignedEntryTimestamp, body, "
		                "integratedTime, logIndex or logID");
	else
		e->has_log_id = 1;
	json_decref(root);
	return rc;
}

static int first_cert(X509 **out, STACK_OF(X509) * *chain, const char *pem,
                      const char *what)
{
	int rc;

	if ((rc = al__cosign_pem_certs(chain, pem, strlen(pem), what)) < 0)
		return rc;
	if (sk_X509_num(*chain) < 1)
		return al_error_set(AL_EVERIFY, "%s: no certificate", what);
	/* containers/image parseLeafCertFromPEM: one certificate only */
	if (sk_X509_num(*chain) > 1)
		return al_error_set(AL_EVERIFY, "%s: more than one certificate",
		                    what);
	*out = sk_X509_shift(*chain);
	return 0;
}

/*
 * The dev.sigstore.cosign/chain annotation: its last certificate is the
 * root, and must be one of the trusted roots (byte for byte); only the
 * ones before it are intermediates (containers/image fulcio_cert.go
 * verifyFulcioCertificateAtTime uses chain[:len-1]; cosign's
 * certificate-chain root). Appended to *chain.
 */
static int chain_annotation(STACK_OF(X509) * *chain, const char *pem,
                            const al_cosign_trust *t)
{
	STACK_OF(X509) *all = NULL;
	X509 *root;
	size_t i;
	int rc, n;

	if ((rc = al__cosign_pem_certs(&all, pem, strlen(pem),
	                               AL_COSIGN_ANN_CHAIN)) < 0)
		goto out;
	if ((n = sk_X509_num(all)) < 1) {
		rc = 0;
		goto out;
	}
	root = sk_X509_value(all, n - 1);
	rc = AL_EVERIFY;
	for (i = 0; t != NULL && i < t->nfulcio; i++) {
		if (X509_cmp(root, t->fulcio[i]) == 0) {
			rc = 0;
			break;
		}
	}
	if (rc < 0) {
		rc =
		    al_error_set(AL_EVERIFY,
		                 "%s: its last certificate (the root) is not a "
		                 "trusted root",
		                 AL_COSIGN_ANN_CHAIN);
		goto out;
	}
	X509_free(sk_X509_pop(all));
	if (*chain == NULL && (*chain = sk_X509_new_null()) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	while (sk_X509_num(all) > 0) {
		X509 *x = sk_X509_shift(all);

		if (sk_X509_push(*chain, x) <= 0) {
			X509_free(x);
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	sk_X509_pop_free(all, X509_free);
	return rc;
}

static int parse_payload(al_cosign_info *info, const uint8_t *p, size_t n)
{
	int rc = al_cosign_payload_parse(&info->payload, p, n);

	if (rc < 0)
		return al_error_wrap(rc == AL_ENOMEM ? rc : AL_EVERIFY,
		                     "invalid cosign payload");
	info->has_payload = 1;
	return 0;
}

int al_cosign_verify_sig(al_cosign_info *out, const al_cosign_sig *s,
                         const al_cosign_opts *opts)
{
	al_cosign_info info;
	al_buf sig = AL_BUF_INIT(MAX_SIG_BYTES);
	cs_tlog entry;
	core c;
	X509 *leaf = NULL;
	STACK_OF(X509) *chain = NULL;
	int rc;

	if (opts != NULL &&
	    (rc = al_opts_version_check("al_cosign_opts", opts->version,
	                                AL_COSIGN_OPTS_VERSION)) < 0)
		return rc;
	memset(&info, 0, sizeof(info));
	memset(&c, 0, sizeof(c));
	(void)al__cosign_oom_take();
	al__cosign_tlog_init(&entry);
	if (s->signature == NULL) {
		rc = al_error_set(AL_EVERIFY, "no %s annotation",
		                  AL_COSIGN_ANN_SIGNATURE);
		goto out;
	}
	if (b64_lines(&sig, s->signature) < 0 || sig.len == 0) {
		rc = al_error_set(AL_EVERIFY, "malformed %s annotation",
		                  AL_COSIGN_ANN_SIGNATURE);
		goto out;
	}
	if (s->payload_len > AL_COSIGN_MAX_PAYLOAD) {
		rc = al_error_set(
		    AL_EVERIFY,
		    "cosign payload of %zu bytes exceeds the %llu "
		    "byte limit",
		    s->payload_len, (unsigned long long)AL_COSIGN_MAX_PAYLOAD);
		goto out;
	}
	if (s->certificate != NULL &&
	    (rc = first_cert(&leaf, &chain, s->certificate,
	                     AL_COSIGN_ANN_CERTIFICATE)) < 0)
		goto out;
	if (s->certificate != NULL && s->chain != NULL &&
	    (rc = chain_annotation(&chain, s->chain,
	                           opts != NULL ? opts->trust : NULL)) < 0)
		goto out;
	if (s->bundle != NULL) {
		if ((rc = rekor_bundle(&entry, s->bundle)) < 0)
			goto out;
		c.entries = &entry;
		c.nentries = 1;
	}
	if ((rc = sha256(c.digest, s->payload, s->payload_len)) < 0)
		goto out;
	c.msg = s->payload;
	c.msglen = s->payload_len;
	c.sig = sig.ptr;
	c.siglen = sig.len;
	c.leaf = leaf;
	c.chain = chain;
	if ((rc = verify_core(&info, &c, opts)) < 0 ||
	    (rc = parse_payload(&info, s->payload, s->payload_len)) < 0)
		goto out;
	if (out != NULL) {
		*out = info;
		memset(&info, 0, sizeof(info));
	}
	rc = 0;
out:
	/* a refusal that an allocation failure caused is that failure */
	if (al__cosign_oom_take() && rc < 0 && rc != AL_ENOMEM)
		rc = al_error_oom();
	al_cosign_info_clear(&info);
	al__cosign_tlog_clear(&entry);
	al_buf_free(&sig);
	X509_free(leaf);
	sk_X509_pop_free(chain, X509_free);
	return rc;
}

/* --- bundles -------------------------------------------------------- */

static int bundle_version(const char *mt)
{
	if (mt == NULL)
		return -1;
	if (strcmp(mt,
	           "application/vnd.dev.sigstore.bundle+json;version=0.1") == 0)
		return 1;
	if (strcmp(mt,
	           "application/vnd.dev.sigstore.bundle+json;version=0.2") == 0)
		return 2;
	if (strcmp(mt,
	           "application/vnd.dev.sigstore.bundle+json;version=0.3") ==
	        0 ||
	    strcmp(mt, "application/vnd.dev.sigstore.bundle.v0.3+json") == 0)
		return 3;
	return -1;
}

static int parse_entry(cs_tlog *e, const json_t *j, int version, size_t idx)
{
	const json_t *kv = json_object_get(j, "kindVersion");
	const json_t *promise = json_object_get(j, "inclusionPromise");
	const json_t *proof = json_object_get(j, "inclusionProof");
	const char *kind = al_json_str(kv, "kind");
	const char *ver = al_json_str(kv, "version");
	al_buf id = AL_BUF_INIT(64);
	const json_t *h;
	size_t i;
	int rc = 0;

	if (json_b64(&e->body, json_object_get(j, "canonicalizedBody")) < 0 ||
	    json_int64(&e->log_index, json_object_get(j, "logIndex")) < 0 ||
	    json_b64(&id, json_object_get(json_object_get(j, "logId"),
	                                  "keyId")) < 0 ||
	    id.len != 32 || kind == NULL || ver == NULL ||
	    strlen(kind) >= sizeof(e->kind) ||
	    strlen(ver) >= sizeof(e->version)) {
		rc = al_error_set(
		    AL_EVERIFY,
		    "bundle tlogEntries[%zu]: missing or malformed "
		    "canonicalizedBody, logIndex, logId or "
		    "kindVersion",
		    idx);
		goto out;
	}
	memcpy(e->log_id, id.ptr, 32);
	e->has_log_id = 1;
	memcpy(e->kind, kind, strlen(kind) + 1);
	memcpy(e->version, ver, strlen(ver) + 1);
	if (json_object_get(j, "integratedTime") != NULL &&
	    json_int64(&e->integrated_time,
	               json_object_get(j, "integratedTime")) < 0) {
		rc = al_error_set(AL_EVERIFY,
		                  "bundle tlogEntries[%zu]: malformed "
		                  "integratedTime",
		                  idx);
		goto out;
	}
	if (promise != NULL &&
	    (json_b64(&e->set,
	              json_object_get(promise, "signedEntryTimestamp")) < 0 ||
	     e->set.len == 0)) {
		rc = al_error_set(AL_EVERIFY,
		                  "bundle tlogEntries[%zu]: malformed "
		                  "inclusionPromise",
		                  idx);
		goto out;
	}
	if (proof != NULL) {
		al_buf root = AL_BUF_INIT(64);
		const char *cp = al_json_str(
		    json_object_get(proof, "checkpoint"), "envelope");
		int bad =
		    json_int64(&e->proof_index,
		               json_object_get(proof, "logIndex")) < 0 ||
		    json_int64(&e->tree_size,
		               json_object_get(proof, "treeSize")) < 0 ||
		    json_b64(&root, json_object_get(proof, "rootHash")) < 0 ||
		    root.len != 32 || cp == NULL ||
		    (json_object_get(proof, "hashes") != NULL &&
		     !json_is_array(json_object_get(proof, "hashes")));

		if (!bad)
			memcpy(e->root, root.ptr, 32);
		al_buf_free(&root);
		json_array_foreach(json_object_get(proof, "hashes"), i, h)
		{
			size_t before = e->hashes.len;

			if (bad || json_b64(&e->hashes, h) < 0 ||
			    e->hashes.len != before + 32) {
				bad = 1;
				break;
			}
		}
		if (!bad && (e->checkpoint = al_strdup(cp)) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		if (bad) {
			rc = al_error_set(AL_EVERIFY,
			                  "bundle tlogEntries[%zu]: malformed "
			                  "inclusionProof",
			                  idx);
			goto out;
		}
		e->has_proof = 1;
	}
	/* bundle.proto: v0.1 carries a promise, later versions a proof. */
	if (version == 1 && e->set.len == 0)
		rc = al_error_set(AL_EVERIFY,
		                  "v0.1 bundle tlogEntries[%zu] without an "
		                  "inclusionPromise",
		                  idx);
	else if (version >= 2 && !e->has_proof)
		rc = al_error_set(AL_EVERIFY,
		                  "bundle tlogEntries[%zu] without an "
		                  "inclusionProof",
		                  idx);
out:
	al_buf_free(&id);
	return rc;
}

/* DSSE pre-authentication encoding (DSSE protocol.md). */
static int dsse_pae(al_buf *out, const char *type, const uint8_t *p, size_t n)
{
	int rc;

	if ((rc = al_buf_printf(out, "DSSEv1 %zu %s %zu ", strlen(type), type,
	                        n)) < 0)
		return rc;
	return al_buf_append(out, p, n);
}

/* A sigstore bundle as read, before the signature is checked. */
typedef struct bundle {
	int version; /* bundle_version */
	X509 *leaf;
	STACK_OF(X509) * chain; /* the rest of an x509CertificateChain */
	cs_tlog *entries;
	size_t nentries;
	al_buf tsa[MAX_TLOG_ENTRIES]; /* RFC 3161 signed timestamps */
	size_t ntsa;
	al_buf sig, payload, pae, md;
	const char *ptype; /* the DSSE payloadType (borrowed), else NULL */
} bundle;

static void bundle_init(bundle *bd)
{
	memset(bd, 0, sizeof(*bd));
	al_buf_init(&bd->sig, MAX_SIG_BYTES);
	al_buf_init(&bd->payload, AL_COSIGN_MAX_PAYLOAD);
	al_buf_init(&bd->pae, AL_COSIGN_MAX_PAYLOAD + 1024);
	al_buf_init(&bd->md, 64);
}

static void bundle_clear(bundle *bd)
{
	size_t i;

	free_entries(bd->entries, bd->nentries);
	for (i = 0; i < bd->ntsa; i++)
		al_buf_free(&bd->tsa[i]);
	al_buf_free(&bd->sig);
	al_buf_free(&bd->payload);
	al_buf_free(&bd->pae);
	al_buf_free(&bd->md);
	X509_free(bd->leaf);
	sk_X509_pop_free(bd->chain, X509_free);
}

/* One DER certificate of the bundle (rawBytes), the whole input. */
static X509 *bundle_cert(const json_t *j, al_buf *der)
{
	const unsigned char *p;
	X509 *x;

	al_buf_reset(der);
	if (json_b64(der, json_object_get(j, "rawBytes")) < 0)
		return NULL;
	p = der->ptr;
	x = d2i_X509(NULL, &p, (long)der->len);
	if (x != NULL && p != der->ptr + der->len) {
		X509_free(x);
		x = NULL;
	}
	return x;
}

/* verificationMaterial's content, a oneof: a public key (nothing to read
 * here), an x509CertificateChain (before v0.3) or a certificate. */
static int bundle_certs(bundle *bd, const json_t *vm)
{
	al_buf der = AL_BUF_INIT(64 * 1024);
	const json_t *j, *cj;
	size_t nmat, i;
	int rc = 0;

	nmat = (json_object_get(vm, "publicKey") != NULL) +
	       (json_object_get(vm, "x509CertificateChain") != NULL) +
	       (json_object_get(vm, "certificate") != NULL);
	if (nmat != 1)
		return al_error_set(
		    AL_EVERIFY,
		    "sigstore bundle: verificationMaterial holds "
		    "%zu of publicKey, x509CertificateChain and "
		    "certificate, not 1",
		    nmat);
	if ((j = json_object_get(vm, "x509CertificateChain")) != NULL) {
		const json_t *certs = json_object_get(j, "certificates");

		if (bd->version >= 3)
			return al_error_set(AL_EVERIFY,
			                    "v0.3 sigstore bundle with an "
			                    "x509CertificateChain");
		if (json_array_size(certs) == 0 ||
		    json_array_size(certs) > AL_COSIGN_MAX_TRUST)
			return al_error_set(
			    AL_EVERIFY,
			    "sigstore bundle: x509CertificateChain "
			    "with %zu certificates",
			    json_array_size(certs));
		if ((bd->chain = sk_X509_new_null()) == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		json_array_foreach(certs, i, cj)
		{
			X509 *x = bundle_cert(cj, &der);

			if (x == NULL || sk_X509_push(bd->chain, x) <= 0) {
				X509_free(x);
				rc = al_error_openssl(
				    AL_EVERIFY,
				    "sigstore bundle: malformed "
				    "certificate %zu",
				    i + 1);
				goto out;
			}
		}
		bd->leaf = sk_X509_shift(bd->chain);
	} else if ((j = json_object_get(vm, "certificate")) != NULL) {
		if ((bd->leaf = bundle_cert(j, &der)) == NULL)
			rc = al_error_openssl(AL_EVERIFY,
			                      "sigstore bundle: malformed "
			                      "certificate");
	}
out:
	al_buf_free(&der);
	return rc;
}

/* verificationMaterial.tlogEntries and the RFC 3161 timestamps of
 * timestampVerificationData, at most MAX_TLOG_ENTRIES of each. */
static int bundle_evidence(bundle *bd, const json_t *vm)
{
	const json_t *j = json_object_get(vm, "tlogEntries");
	size_t i;
	int rc;

	if (j != NULL && !json_is_array(j))
		return al_error_set(
		    AL_EVERIFY, "sigstore bundle: tlogEntries is not a list");
	if (json_array_size(j) > MAX_TLOG_ENTRIES)
		return al_error_set(AL_EVERIFY,
		                    "sigstore bundle with %zu tlogEntries",
		                    json_array_size(j));
	if (json_array_size(j) > 0 &&
	    (bd->entries = calloc(json_array_size(j), sizeof(*bd->entries))) ==
	        NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (i = 0; i < json_array_size(j); i++) {
		al__cosign_tlog_init(&bd->entries[i]);
		bd->nentries++;
		if ((rc = parse_entry(&bd->entries[i], json_array_get(j, i),
		                      bd->version, i)) < 0)
			return rc;
	}
	j = json_object_get(json_object_get(vm, "timestampVerificationData"),
	                    "rfc3161Timestamps");
	if (json_array_size(j) > MAX_TLOG_ENTRIES)
		return al_error_set(AL_EVERIFY,
		                    "sigstore bundle with %zu timestamps",
		                    json_array_size(j));
	for (i = 0; i < json_array_size(j); i++) {
		al_buf *t = &bd->tsa[bd->ntsa++];

		al_buf_init(t, 64 * 1024);
		if (json_b64(t, json_object_get(json_array_get(j, i),
		                                "signedTimestamp")) < 0 ||
		    t->len == 0)
			return al_error_set(AL_EVERIFY,
			                    "sigstore bundle: malformed "
			                    "rfc3161Timestamps[%zu]",
			                    i);
	}
	return 0;
}

/* The signed content, a oneof: a messageSignature over artifact (its
 * messageDigest, when given, must be the artifact's) or a dsseEnvelope
 * with exactly one signature over its PAE. Sets c's message, digest and
 * signature. */
static int bundle_content(bundle *bd, core *c, const json_t *root,
                          const uint8_t *artifact, size_t artifact_len)
{
	const json_t *ms = json_object_get(root, "messageSignature");
	const json_t *dsse = json_object_get(root, "dsseEnvelope");
	int rc;

	if ((ms != NULL) == (dsse != NULL))
		return al_error_set(AL_EVERIFY,
		                    "sigstore bundle holds %s messageSignature "
		                    "and dsseEnvelope",
		                    ms != NULL ? "both" : "neither");
	if (ms != NULL) {
		const json_t *mdj = json_object_get(ms, "messageDigest");
		const char *alg = al_json_str(mdj, "algorithm");

		if (artifact == NULL)
			return al_error_set(
			    AL_EINVAL, "a message signature bundle needs the "
			               "signed artifact");
		if (json_b64(&bd->sig, json_object_get(ms, "signature")) < 0 ||
		    bd->sig.len == 0)
			return al_error_set(AL_EVERIFY,
			                    "sigstore bundle: malformed "
			                    "messageSignature.signature");
		if ((rc = sha256(c->digest, artifact, artifact_len)) < 0)
			return rc;
		/* The digest is optional in the message signature, but when
		 * given it must be the artifact's. */
		if (mdj != NULL &&
		    (alg == NULL || strcmp(alg, "SHA2_256") != 0 ||
		     json_b64(&bd->md, json_object_get(mdj, "digest")) < 0 ||
		     bd->md.len != 32 ||
		     CRYPTO_memcmp(bd->md.ptr, c->digest, 32) != 0))
			return al_error_set(
			    AL_EVERIFY, "sigstore bundle: messageDigest is not "
			                "the artifact's SHA-256");
		c->msg = artifact;
		c->msglen = artifact_len;
	} else {
		const json_t *sigs = json_object_get(dsse, "signatures");

		bd->ptype = al_json_str(dsse, "payloadType");
		if (bd->ptype == NULL ||
		    json_b64(&bd->payload, json_object_get(dsse, "payload")) <
		        0 ||
		    json_array_size(sigs) != 1 ||
		    json_b64(&bd->sig, json_object_get(json_array_get(sigs, 0),
		                                       "sig")) < 0 ||
		    bd->sig.len == 0)
			return al_error_set(
			    AL_EVERIFY,
			    "sigstore bundle: malformed dsseEnvelope "
			    "(payloadType, payload, exactly one "
			    "signature)");
		if ((rc = dsse_pae(&bd->pae, bd->ptype, bd->payload.ptr,
		                   bd->payload.len)) < 0 ||
		    (rc = sha256(c->digest, bd->payload.ptr, bd->payload.len)) <
		        0)
			return rc;
		c->msg = bd->pae.ptr;
		c->msglen = bd->pae.len;
		c->dsse = 1;
	}
	c->sig = bd->sig.ptr;
	c->siglen = bd->sig.len;
	c->leaf = bd->leaf;
	c->chain = bd->chain;
	c->entries = bd->entries;
	c->nentries = bd->nentries;
	c->tsa = bd->tsa;
	c->ntsa = bd->ntsa;
	return 0;
}

/* What a verified bundle vouches for: the image a message-signed cosign
 * payload names, or the DSSE payload (parsed when it is simple signing). */
static int bundle_result(al_cosign_info *info, bundle *bd,
                         const uint8_t *artifact, size_t artifact_len)
{
	int rc;

	if (bd->ptype == NULL) {
		/* An artifact that is a cosign payload names its image;
		 * anything else vouches only for its bytes. */
		al_sig_payload pl;

		if (al_cosign_payload_parse(&pl, artifact, artifact_len) == 0) {
			info->payload = pl;
			info->has_payload = 1;
		}
		al_error_clear();
		return 0;
	}
	if (strcmp(bd->ptype, DSSE_SIMPLESIGNING) == 0 &&
	    (rc = parse_payload(info, bd->payload.ptr, bd->payload.len)) < 0)
		return rc;
	if ((info->payload_type = al_strdup(bd->ptype)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	info->dsse_payload_len = bd->payload.len;
	info->dsse_payload =
	    (uint8_t *)al_buf_detach(&bd->payload, &info->dsse_payload_len);
	if (info->dsse_payload == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

int al_cosign_verify_bundle(al_cosign_info *out, const uint8_t *b, size_t n,
                            const uint8_t *artifact, size_t artifact_len,
                            const al_cosign_opts *opts)
{
	al_cosign_info info;
	json_t *root = NULL;
	const json_t *vm;
	const char *mt;
	bundle bd;
	core c;
	int rc;

	if (opts != NULL &&
	    (rc = al_opts_version_check("al_cosign_opts", opts->version,
	                                AL_COSIGN_OPTS_VERSION)) < 0)
		return rc;
	memset(&info, 0, sizeof(info));
	memset(&c, 0, sizeof(c));
	(void)al__cosign_oom_take();
	bundle_init(&bd);
	if (n > AL_COSIGN_MAX_BUNDLE) {
		rc = al_error_set(
		    AL_ELIMIT,
		    "sigstore bundle of %zu bytes exceeds the %llu "
		    "byte limit",
		    n, (unsigned long long)AL_COSIGN_MAX_BUNDLE);
		goto out;
	}
	if (al_json_parse(&root, b, n, "sigstore bundle") < 0) {
		rc = al_error_wrap(AL_EVERIFY, "invalid sigstore bundle");
		goto out;
	}
	mt = al_json_str(root, "mediaType");
	if ((bd.version = bundle_version(mt)) < 0) {
		rc = al_error_set(mt != NULL ? AL_EUNSUPPORTED : AL_EVERIFY,
		                  "sigstore bundle media type '%s' is not "
		                  "supported",
		                  mt != NULL ? mt : "(none)");
		goto out;
	}
	vm = json_object_get(root, "verificationMaterial");
	if (!json_is_object(vm)) {
		rc = al_error_set(
		    AL_EVERIFY, "sigstore bundle without verificationMaterial");
		goto out;
	}
	if ((rc = bundle_certs(&bd, vm)) < 0 ||
	    (rc = bundle_evidence(&bd, vm)) < 0 ||
	    (rc = bundle_content(&bd, &c, root, artifact, artifact_len)) < 0 ||
	    (rc = verify_core(&info, &c, opts)) < 0 ||
	    (rc = bundle_result(&info, &bd, artifact, artifact_len)) < 0)
		goto out;
	if (out != NULL) {
		*out = info;
		memset(&info, 0, sizeof(info));
	}
	rc = 0;
out:
	if (al__cosign_oom_take() && rc < 0 && rc != AL_ENOMEM)
		rc = al_error_oom();
	al_cosign_info_clear(&info);
	bundle_clear(&bd);
	json_decref(root);
	return rc;
}
