/* cosign_int.h: what the cosign files share: the trust store's layout,
 * signature checks, transparency-log entries and certificates. */
#ifndef AIRLOCK_COSIGN_INT_H
#define AIRLOCK_COSIGN_INT_H

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "airlock/buf.h"
#include "airlock/cosign.h"

typedef struct cs_key {
	EVP_PKEY *pkey;
	uint8_t id[32]; /* SHA-256 of the DER SubjectPublicKeyInfo */
} cs_key;

struct al_cosign_trust {
	cs_key *keys;
	size_t nkeys;
	X509 **fulcio;
	size_t nfulcio;
	cs_key *rekor;
	size_t nrekor;
	X509 **tsa;
	size_t ntsa;
	char *issuer;
	char *subject;
	int subject_email_only; /* fulcioSubject.signedEmail: no URI SAN */
	/* PKI (BYOPKI): certificates chain to the anchors at the present
	 * time, no Fulcio extensions, no log; SAN email or DNS name. */
	int pki;
	char *pki_email;
	char *pki_hostname;
};

/* al_cosign_discover: with AL_COSIGN_FIND_REFERRERS, skip the referrers
 * API and read the "sha256-<hex>" tag straight away (the registry answered
 * the API with 404 before: distribution-spec 1.1 says a registry with the
 * API never does). Internal: al_cosign_carry sets it per registry. */
#define AL_COSIGN__FIND_NO_API 0x100

/*
 * The repository's tags, listed once (a JSON object whose keys are the
 * tags; borrowed: it must outlive s, and is only read): the signature and
 * referrers-fallback tags al_cosign_discover would ask for are asked only
 * when listed, the others are absent without a request. NULL (the
 * default): ask for each. Internal: al_cosign_carry lists each repository
 * once per run.
 */
void al_cosign__source_known_tags(al_cosign_source *s, const json_t *tags);

/* SHA-256 of k's DER SubjectPublicKeyInfo into id. */
int al__cosign_key_id(uint8_t id[32], EVP_PKEY *k);

/*
 * Check sig[0..slen) over msg[0..mlen) with k as sigstore clients sign:
 * ECDSA (DER) with SHA-256 on every curve, Ed25519 (pure), RSA PKCS#1
 * v1.5 with SHA-256. 1 good, 0 bad.
 */
int al__cosign_sig_ok(EVP_PKEY *k, const uint8_t *msg, size_t mlen,
                      const uint8_t *sig, size_t slen);

/* One Rekor entry in the form both the bundle and the cosign annotation
 * carry. Owned buffers; cs_tlog_clear. */
typedef struct cs_tlog {
	al_buf body; /* canonicalized body (decoded) */
	int64_t integrated_time;
	int64_t log_index;
	uint8_t log_id[32];
	int has_log_id;
	char kind[32]; /* from kindVersion, "" when not given */
	char version[16];
	al_buf set; /* signed entry timestamp; len 0 when absent */
	int has_proof;
	int64_t proof_index;
	int64_t tree_size;
	uint8_t root[32];
	al_buf hashes; /* n * 32 bytes */
	char *checkpoint;
} cs_tlog;

void al__cosign_tlog_init(cs_tlog *e);
void al__cosign_tlog_clear(cs_tlog *e);

/* What a tlog body must agree with. */
typedef struct cs_signed {
	const uint8_t *sig;
	size_t siglen;
	EVP_PKEY *signer;   /* the key that verified sig */
	X509 *cert;         /* its certificate (keyless), or NULL */
	uint8_t digest[32]; /* SHA-256 of the artifact (hashedrekord) or of
	                       the DSSE payload (dsse) */
	int dsse;
} cs_signed;

/*
 * Verify entry e against the Rekor keys of t and the signature s: its body
 * (kind hashedrekord or dsse, version 0.0.1) must name s's digest,
 * signature and key; its SET, when present, must verify (then *time_ok
 * is set: integrated_time is vouched for); its inclusion proof, when
 * present, must lead to a checkpoint a Rekor key of t signed. At least one
 * of SET and proof is needed. AL_EVERIFY with the reason.
 */
int al__cosign_tlog_verify(const al_cosign_trust *t, const cs_tlog *e,
                           const cs_signed *s, int *time_ok);

/*
 * Check a keyless certificate: leaf (with untrusted intermediates chain,
 * may be NULL) chains to a Fulcio anchor of t at time at, has the code
 * signing key usage, and carries t's identity. *subject and *issuer
 * receive the matched values (caller frees). AL_EVERIFY, AL_EINVAL.
 */
int al__cosign_cert_verify(const al_cosign_trust *t, X509 *leaf,
                           STACK_OF(X509) * chain, int64_t at, char **subject,
                           char **issuer);

/* Parse every CERTIFICATE block of a PEM text into *out (appended). */
int al__cosign_pem_certs(STACK_OF(X509) * *out, const char *pem, size_t n,
                         const char *what);
/* A PEM text holding one certificate or one public key into a key. */
int al__cosign_pem_any_key(EVP_PKEY **out, const uint8_t *pem, size_t n);

/*
 * Verify the RFC 3161 timestamp token der[0..n) (a CMS SignedData
 * TimeStampToken) as a timestamp of sig[0..siglen) (message imprint:
 * SHA-256 of the signature bytes) by a timestamp authority of t; *at
 * receives its genTime. AL_EVERIFY with the reason.
 */
int al__cosign_tsa_verify(const al_cosign_trust *t, const uint8_t *der,
                          size_t n, const uint8_t *sig, size_t siglen,
                          int64_t *at);

/* Hex of p[0..n) into out (2n+1 bytes). */
void al__cosign_hex(char *out, const uint8_t *p, size_t n);

#endif
