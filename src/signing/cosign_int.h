/* cosign_int.h: what the cosign files share: the trust store's layout,
 * signature checks, transparency-log entries and certificates. */
#ifndef AIRLOCK_COSIGN_INT_H
#define AIRLOCK_COSIGN_INT_H

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "airlock/buf.h"
#include "airlock/cosign.h"

/* A validity window in seconds since the epoch, both ends inclusive
 * (protobuf-specs TimeRange); CS_FOREVER_* when unbounded. */
#define CS_FOREVER_FROM INT64_MIN
#define CS_FOREVER_UNTIL INT64_MAX
typedef struct cs_win {
	int64_t from, until;
} cs_win;

typedef struct cs_key {
	EVP_PKEY *pkey;
	/* the log ID: SHA-256 of the DER SubjectPublicKeyInfo, or for a
	 * trusted root's log, its logId.keyId as given */
	uint8_t id[32];
	cs_win win;
	/* a trusted root's log: the host of its baseUrl, the checkpoint
	 * origin and signer name of a Rekor v2 log; "" when not known */
	char origin[256];
} cs_key;

struct al_cosign_trust {
	cs_key *keys;
	size_t nkeys;
	X509 **fulcio;
	cs_win *fulcio_win; /* one per fulcio certificate: its CA's */
	size_t nfulcio;
	cs_key *rekor;
	size_t nrekor;
	X509 **tsa;
	cs_win *tsa_win; /* one per tsa certificate: its authority's */
	size_t ntsa;
	cs_key *ct; /* certificate transparency logs (trusted root) */
	size_t nct;
	char *issuer;
	char *subject;
	int subject_email_only; /* fulcioSubject.signedEmail: no URI SAN */
	/* a trusted-root check (al_cosign_check_store_root): a keyless
	 * certificate's identity is read and reported, not required */
	int any_identity;
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

/* A name whose tag is "sha256-<64 hex>" with or without a suffix: a
 * signature artifact or a referrers index, not an image to sign. */
int al__cosign_is_attachment_tag(const char *tag);
/* A store manifest with a subject or an artifactType is an artifact
 * itself (a manifest that cannot be read is not). */
int al__cosign_is_artifact(al_store *s, const al_descriptor *d);

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
	uint8_t signed_digest[32]; /* SHA-256 of the bytes signed: the
	                              artifact, or the DSSE PAE */
	int dsse;
} cs_signed;

/*
 * Verify entry e against the Rekor keys of t and the signature s: its body
 * (kind hashedrekord or dsse, version 0.0.1) must name s's digest,
 * signature and key; its SET, when present, must verify (then *time_ok
 * is set: integrated_time is vouched for); its inclusion proof, when
 * present, must lead to a checkpoint a Rekor key of t signed (Rekor v2
 * entries, hashedrekord and dsse 0.0.2, need one); without a SET, the log
 * key's window must hold each of the nwhen signed times. At least one
 * of SET and proof is needed. AL_EVERIFY with the reason.
 */
int al__cosign_tlog_verify(const al_cosign_trust *t, const cs_tlog *e,
                           const cs_signed *s, const int64_t *when,
                           size_t nwhen, int *time_ok);

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

/*
 * An allocation failure that a check can only answer with "malformed" or
 * "does not match" (a base64 decode into a buffer, a name copied for a
 * comparison) is noted here, per thread; al_cosign_verify_bundle and
 * al_cosign_verify_sig then report their refusal as AL_ENOMEM.
 * al__cosign_oom_take returns whether one was noted and clears the note.
 */
void al__cosign_oom_note(void);
int al__cosign_oom_take(void);

/* al_base64_decode, noting an allocation failure. */
int al__cosign_b64(al_buf *out, const char *s, size_t n);

/* 1 when at lies in w (both ends inclusive). */
static inline int al__cosign_win_has(const cs_win *w, int64_t at)
{
	return at >= w->from && at <= w->until;
}

/*
 * Add the DER SubjectPublicKeyInfo der[0..len) to *list (*n entries) with
 * log ID id (NULL: SHA-256 of der), window w and origin (NULL: none).
 * AL_EPARSE, AL_EUNSUPPORTED (key type), AL_ELIMIT, AL_ENOMEM.
 */
int al__cosign_add_key_der(cs_key **list, size_t *n, const uint8_t *der,
                           long len, const uint8_t *id, const cs_win *w,
                           const char *origin, const char *what);

/* Add the DER certificate der[0..len) to *list / *win (*n entries) with
 * window w. AL_EPARSE, AL_ELIMIT, AL_ENOMEM. */
int al__cosign_add_cert_der(X509 ***list, cs_win **win, size_t *n,
                            const uint8_t *der, long len, const cs_win *w,
                            const char *what);

/*
 * RFC 6962 signed certificate timestamps embedded in leaf (extension
 * 1.3.6.1.4.1.11129.2.4.2), issued under issuer: with CT logs in t (a
 * trusted root's ctlogs), at least one must verify with the key of the log
 * its log ID names (sigstore-go VerifySignedCertificateTimestamp); without
 * CT logs nothing is checked. AL_EVERIFY with the reason, AL_ENOMEM.
 */
int al__cosign_sct_verify(const al_cosign_trust *t, X509 *leaf, X509 *issuer);

/* Hex of p[0..n) into out (2n+1 bytes). */
void al__cosign_hex(char *out, const uint8_t *p, size_t n);

#endif
