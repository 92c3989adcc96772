/* cosign.h: sigstore (cosign) image signatures verified offline: the
 * simple-signing payload, key-based and keyless (Fulcio + Rekor) signatures,
 * sigstore bundles. */
#ifndef AIRLOCK_COSIGN_H
#define AIRLOCK_COSIGN_H

#include "common.h"
#include "digest.h"
#include "registry.h"
#include "sig.h"
#include "store.h"
#include "transfer.h"

AL_BEGIN_DECL

/*
 * Thread safety: every function here is reentrant. An al_cosign_trust is
 * read-only once built and may then be shared by threads verifying at
 * once; building it (the _add_ functions) is not thread-safe.
 * docs/cosign.md names the specification each rule follows.
 */

/* Bounds. */
#define AL_COSIGN_MAX_PAYLOAD (64 * AL_KIB) /* simple-signing or DSSE body */
#define AL_COSIGN_MAX_BUNDLE (1 * AL_MIB)   /* one sigstore bundle (JSON) */
#define AL_COSIGN_MAX_PEM (1 * AL_MIB)      /* one key or certificate file */
#define AL_COSIGN_MAX_TRUST 64 /* keys, certificates or logs per trust */

/* critical.type of a cosign simple-signing payload. */
#define AL_COSIGN_PAYLOAD_TYPE "cosign container image signature"
/* Media type of the layer holding the payload in a ".sig" image. */
#define AL_COSIGN_SIMPLESIGNING_MEDIA_TYPE                                     \
	"application/vnd.dev.cosign.simplesigning.v1+json"
/* Annotations of that layer. */
#define AL_COSIGN_ANN_SIGNATURE "dev.cosignproject.cosign/signature"
#define AL_COSIGN_ANN_CERTIFICATE "dev.sigstore.cosign/certificate"
#define AL_COSIGN_ANN_CHAIN "dev.sigstore.cosign/chain"
#define AL_COSIGN_ANN_BUNDLE "dev.sigstore.cosign/bundle"
/* Prefix of every sigstore bundle media type (and referrer artifactType). */
#define AL_COSIGN_BUNDLE_MEDIA_PREFIX "application/vnd.dev.sigstore.bundle"

/*
 * Parse p[0..n) as a cosign simple-signing payload with the rules of
 * containers/image (signature/internal/sigstore_payload.go): one JSON
 * object (duplicate keys refused) with exactly "critical" and "optional"
 * (optional may be null, as cosign writes it without annotations);
 * critical holds exactly "type" (AL_COSIGN_PAYLOAD_TYPE), "image"
 * {"docker-manifest-digest"} and "identity" {"docker-reference"}, nothing
 * missing and nothing more. An empty docker-reference is refused.
 * optional may hold anything; "creator" must be a string and "timestamp"
 * an integer when present. The result is an al_sig_payload (sig.h):
 * clear it with al_sig_payload_clear.
 * Errors: AL_EPARSE (with the reason), AL_ELIMIT (more than
 * AL_COSIGN_MAX_PAYLOAD), AL_ENOMEM.
 */
AL_EXPORT int al_cosign_payload_parse(al_sig_payload *out, const uint8_t *p,
                                      size_t n);

/* --- trust ---------------------------------------------------------- */

/* Public keys, Fulcio certificates and Rekor keys to verify against. */
typedef struct al_cosign_trust al_cosign_trust;

AL_EXPORT int al_cosign_trust_new(al_cosign_trust **out);
/* NULL is a no-op. */
AL_EXPORT void al_cosign_trust_free(al_cosign_trust *t);

/*
 * Add every "PUBLIC KEY" PEM block (PKIX SubjectPublicKeyInfo: ECDSA
 * P-256/P-384/P-521, Ed25519, RSA of 2048 bits or more) of pem[0..n) as a
 * signing key. what names the input in messages. A block of another kind,
 * an unsupported key or no block at all is AL_EPARSE / AL_EUNSUPPORTED.
 */
AL_EXPORT int al_cosign_trust_add_keys(al_cosign_trust *t, const uint8_t *pem,
                                       size_t n, const char *what);
/*
 * Add every "CERTIFICATE" PEM block of pem[0..n) as a Fulcio trust anchor
 * (a root or an intermediate: any of them ends a chain, as Go's
 * x509.CertPool roots do in containers/image).
 */
AL_EXPORT int al_cosign_trust_add_fulcio(al_cosign_trust *t, const uint8_t *pem,
                                         size_t n, const char *what);
/*
 * Add every "PUBLIC KEY" PEM block of pem[0..n) as a Rekor (transparency
 * log) key; its log ID is the SHA-256 of its DER SubjectPublicKeyInfo.
 */
AL_EXPORT int al_cosign_trust_add_rekor(al_cosign_trust *t, const uint8_t *pem,
                                        size_t n, const char *what);
/*
 * Add every "CERTIFICATE" PEM block of pem[0..n) as an RFC 3161 timestamp
 * authority's chain (its signing certificate and the CAs above it): a
 * bundle's timestampVerificationData then dates a keyless signature when
 * no signed entry timestamp does.
 */
AL_EXPORT int al_cosign_trust_add_tsa(al_cosign_trust *t, const uint8_t *pem,
                                      size_t n, const char *what);
/* Read path (at most AL_COSIGN_MAX_PEM bytes) and add it as above. */
AL_EXPORT int al_cosign_trust_add_keys_file(al_cosign_trust *t,
                                            const char *path);
AL_EXPORT int al_cosign_trust_add_fulcio_file(al_cosign_trust *t,
                                              const char *path);
AL_EXPORT int al_cosign_trust_add_rekor_file(al_cosign_trust *t,
                                             const char *path);
AL_EXPORT int al_cosign_trust_add_tsa_file(al_cosign_trust *t,
                                           const char *path);
/*
 * Add a Sigstore trusted root (protobuf-specs trustedroot.proto in its JSON
 * form, mediaType application/vnd.dev.sigstore.trustedroot+json;version=
 * 0.1 or later, as trusted_root.json is distributed): "tlogs" as Rekor keys
 * under their logId.keyId (the checkpoint key hint is its first 4 bytes;
 * the host of baseUrl is a Rekor v2 log's checkpoint origin),
 * "certificateAuthorities" as Fulcio anchors, "timestampAuthorities" as
 * timestamp authority chains, "ctlogs" as certificate transparency logs,
 * each with its validFor window: a key or certificate is used only for a
 * time inside it (both ends inclusive). A validFor without its start, a
 * malformed time or key is AL_EPARSE; on any error t may hold part of the
 * root and should be freed.
 */
AL_EXPORT int al_cosign_trust_add_trusted_root(al_cosign_trust *t,
                                               const uint8_t *json, size_t n,
                                               const char *what);
/* Read path (at most AL_COSIGN_MAX_PEM bytes) and add it as above. */
AL_EXPORT int al_cosign_trust_add_trusted_root_file(al_cosign_trust *t,
                                                    const char *path);

/*
 * The trusted root kept in a store (docs/cosign.md "The trusted root in
 * the store"): a "sigstore" record of STORE/airlock/releases.json named
 * "trusted-root", holding the file's text exactly as read, its SHA-256,
 * where it came from and when, so that pack carries it under its signed
 * manifest and unpack merges it (the pack's replaces the far store's).
 *
 * al_cosign_store_root_put keeps json[0..n) (which must load as a trusted
 * root, as al_cosign_trust_add_trusted_root does; AL_EPARSE otherwise),
 * replacing the one kept before; source names where it was read from.
 * Read-only store: AL_EINVAL.
 * al_cosign_store_root_get copies the kept text into out (and its digest
 * into *digest when not NULL): AL_ENOTFOUND when none is kept or the
 * record kept is one an untrusted import brought (marked in
 * airlock/untrusted.json; a warning says so; put clears that mark),
 * AL_EVERIFY when the record's text does not match its digest.
 * al_cosign_trust_add_store_root adds the kept root to t, as
 * al_cosign_trust_add_trusted_root; AL_ENOTFOUND when none is kept.
 */
AL_EXPORT int al_cosign_store_root_put(al_store *s, const uint8_t *json,
                                       size_t n, const char *source);
AL_EXPORT int al_cosign_store_root_get(al_store *s, al_buf *out,
                                       al_digest *digest);
AL_EXPORT int al_cosign_trust_add_store_root(al_cosign_trust *t, al_store *s);

/*
 * The identity a keyless certificate must carry: issuer (the OIDC issuer,
 * Fulcio extension 1.3.6.1.4.1.57264.1.8, or .1.1 in older certificates)
 * and subject (a SAN email address or URI), both compared exactly. Either
 * may be NULL (not checked), but keyless verification refuses to run with
 * neither set: any certificate Fulcio ever issued would pass.
 */
AL_EXPORT int al_cosign_trust_set_identity(al_cosign_trust *t,
                                           const char *issuer,
                                           const char *subject);

/*
 * Make t a PKI (BYOPKI) trust: its Fulcio anchors are read as the CA roots
 * and intermediates, a certificate is checked at the present time with no
 * Fulcio extension and no log, and its SAN must hold email and/or the DNS
 * name hostname (at least one given, AL_EINVAL otherwise).
 */
AL_EXPORT int al_cosign_trust_set_pki(al_cosign_trust *t, const char *email,
                                      const char *hostname);

/* How many keys, Fulcio anchors and Rekor keys t holds. */
AL_EXPORT void al_cosign_trust_counts(const al_cosign_trust *t, size_t *keys,
                                      size_t *fulcio, size_t *rekor);

/* The version of al_cosign_opts this header describes. */
#define AL_COSIGN_OPTS_VERSION 1

/* --- verification --------------------------------------------------- */

typedef struct al_cosign_opts {
	/* AL_COSIGN_OPTS_VERSION of the caller's header (0, a zeroed struct,
	 * reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	const al_cosign_trust *trust; /* required */
	/* Require a transparency-log entry whose SET (or inclusion proof to
	 * a signed checkpoint) verifies against a Rekor key of trust, also
	 * for key-based signatures. Keyless ones always need a SET: it
	 * gives the time at which the short-lived certificate was valid. */
	int require_tlog;
	/* At least this many verified times (RFC 3161 timestamps, or where
	 * the signature has none, Rekor integrated times) must date the
	 * signature; 0 means 1 for a keyless signature and none for a
	 * key-based one (sigstore-go WithSignedTimestamps /
	 * WithIntegratedTimestamps thresholds). */
	size_t min_times;
} al_cosign_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_COSIGN_OPTS_INIT                                                    \
	{                                                                      \
		.version = AL_COSIGN_OPTS_VERSION                              \
	}

/* What a verified signature says. Strings owned; al_cosign_info_clear. */
typedef struct al_cosign_info {
	int keyless;       /* 1: Fulcio certificate, 0: a trusted key */
	char key_id[65];   /* hex SHA-256 of the signer's DER public key */
	char *subject;     /* keyless: the SAN that matched (or the first) */
	char *issuer;      /* keyless: the OIDC issuer extension */
	int tlog_verified; /* 1 if a Rekor entry verified */
	int has_time; /* 1 if integrated_time is vouched for (SET or TSA) */
	int tsa_time; /* 1 if that time came from an RFC 3161 token */
	int64_t integrated_time; /* Rekor integratedTime or TSA genTime */
	int64_t log_index;
	/* The signed statement: a simple-signing payload when has_payload. */
	int has_payload;
	al_sig_payload payload;
	/* Bundles with a DSSE envelope: its payloadType and payload. */
	char *payload_type;
	uint8_t *dsse_payload;
	size_t dsse_payload_len;
} al_cosign_info;

/* Free info's strings and zero it; NULL is a no-op. */
AL_EXPORT void al_cosign_info_clear(al_cosign_info *info);

/*
 * One tag-scheme signature: a layer of a "sha256-<hex>.sig" image. payload
 * is the layer's bytes (its digest already checked by whoever fetched it);
 * signature, certificate, chain and bundle are the values of the
 * AL_COSIGN_ANN_* annotations (NULL when absent).
 */
typedef struct al_cosign_sig {
	const uint8_t *payload;
	size_t payload_len;
	const char *signature;   /* base64 (required) */
	const char *certificate; /* PEM leaf (keyless) */
	const char *chain;       /* PEM intermediates (untrusted) */
	const char *bundle;      /* Rekor bundle JSON */
} al_cosign_sig;

/*
 * Verify one tag-scheme signature: the signature over the payload bytes
 * with a trusted key, or (certificate present) with the certificate's key,
 * the certificate chaining to a Fulcio anchor at the Rekor SET's time and
 * carrying the configured identity; the Rekor bundle's SET and body
 * (hashedrekord: payload hash, signature and key) when present or
 * required; then the payload parsed (al_cosign_payload_parse). The image
 * digest and identity are not compared here: see al_cosign_check_image.
 * Returns 0 only when every check passed; only then is *out (may be
 * NULL) written.
 * Errors: AL_EVERIFY for bad content, naming the failed check;
 * AL_EINVAL (no trust for the kind of signature); AL_ENOMEM.
 */
AL_EXPORT int al_cosign_verify_sig(al_cosign_info *out, const al_cosign_sig *s,
                                   const al_cosign_opts *opts);

/*
 * Verify a sigstore bundle b[0..n) (media types ...bundle+json;version=0.1,
 * 0.2, 0.3 and ...bundle.v0.3+json): a messageSignature over artifact
 * (required then; its messageDigest must be its SHA-256) or a DSSE
 * envelope (one signature over the DSSE PAE), with verificationMaterial
 * publicKey (a trusted key), x509CertificateChain or certificate (keyless),
 * tlogEntries (inclusionPromise: SET; inclusionProof: Merkle path to a
 * signed checkpoint; hashedrekord or dsse body matched against the
 * signature). A DSSE payload of type
 * application/vnd.dev.cosign.simplesigning.v1+json, or a messageSignature
 * artifact that is a cosign payload, is parsed into info->payload.
 * Errors as al_cosign_verify_sig, and AL_ELIMIT (over
 * AL_COSIGN_MAX_BUNDLE), AL_EUNSUPPORTED (an unknown bundle version or
 * tlog kind).
 */
AL_EXPORT int al_cosign_verify_bundle(al_cosign_info *out, const uint8_t *b,
                                      size_t n, const uint8_t *artifact,
                                      size_t artifact_len,
                                      const al_cosign_opts *opts);

/*
 * Check what a verified signature vouches for against the image: a
 * simple-signing payload's digest must equal digest and its identity
 * match reference under policy (al_sig_payload_check); a DSSE in-toto
 * statement (payloadType application/vnd.in-toto+json) must list digest
 * among its subjects (its identity is not checked: in-toto names no
 * registry). AL_EVERIFY otherwise, also when info vouches for neither.
 */
AL_EXPORT int al_cosign_check_image(const al_cosign_info *info,
                                    const al_digest *digest,
                                    const char *reference,
                                    al_sig_identity_policy policy);

/*
 * Check what a bundle verified over artifact[0..n) (al_cosign_verify_bundle
 * with the same bytes) vouches for, as cosign verify-blob and the
 * sigstore-conformance verify-bundle protocol do: a message signature is
 * over the artifact already; a DSSE in-toto statement must list the
 * artifact's SHA-256 among its subjects; any other DSSE payload must be the
 * artifact's bytes. AL_EVERIFY otherwise, AL_ENOMEM.
 */
AL_EXPORT int al_cosign_check_blob(const al_cosign_info *info,
                                   const uint8_t *artifact, size_t n);

/*
 * RFC 6962 Merkle audit path: 0 when the leaf hash at index in a tree of
 * tree_size leaves, combined with the n 32-byte hashes of path, gives
 * root. AL_EVERIFY otherwise (wrong count, index out of range,
 * mismatch). Exposed for tests.
 */
AL_EXPORT int al_cosign_merkle_verify(const uint8_t leaf[32], uint64_t index,
                                      uint64_t tree_size, const uint8_t *path,
                                      size_t n, const uint8_t root[32]);

/* --- cluster policy (ClusterImagePolicy / ImagePolicy) --------------- */

/* The signedIdentity.matchPolicy values of config.openshift.io. */
typedef enum al_cosign_match {
	AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT = 0, /* the default */
	AL_COSIGN_MATCH_REPOSITORY = 1,
	AL_COSIGN_MATCH_EXACT_REPOSITORY = 2,
	AL_COSIGN_MATCH_REMAP_IDENTITY = 3,
} al_cosign_match;

/* Policies read from ClusterImagePolicy / ImagePolicy resources. */
typedef struct al_cosign_policy al_cosign_policy;

#define AL_COSIGN_MAX_POLICIES 256
#define AL_COSIGN_MAX_POLICY_BYTES (4 * AL_MIB)

/*
 * Read every ClusterImagePolicy and ImagePolicy (apiVersion
 * config.openshift.io/v1 or v1alpha1) of p[0..n): YAML or JSON, one
 * resource, a multi-document stream or a v1 List; other kinds are
 * skipped. The schema is openshift/api config/v1/types_image_policy.go:
 * spec.scopes (1..256 scopes), spec.policy.rootOfTrust with policyType
 * PublicKey (publicKey.keyData, optional rekorKeyData), FulcioCAWithRekor
 * (fulcioCAWithRekor.fulcioCAData, rekorKeyData, fulcioSubject.oidcIssuer
 * and signedEmail) or PKI (pki.caRootsData, caIntermediatesData,
 * pkiCertificateSubject.email / hostname), and spec.policy.signedIdentity
 * (matchPolicy, exactRepository.repository, remapIdentity.prefix and
 * signedPrefix). Key data is base64 of PEM. An unknown field, a missing
 * required one, a union member that does not match policyType, or key
 * data that does not parse is AL_EPARSE naming the resource and field.
 * No policy in the input is AL_ENOTFOUND. Free with al_cosign_policy_free.
 */
AL_EXPORT int al_cosign_policy_load(al_cosign_policy **out, const uint8_t *p,
                                    size_t n, const char *what);
/* Read path (at most AL_COSIGN_MAX_POLICY_BYTES) and load it. */
AL_EXPORT int al_cosign_policy_load_file(al_cosign_policy **out,
                                         const char *path);
/* NULL is a no-op. */
AL_EXPORT void al_cosign_policy_free(al_cosign_policy *p);
/* How many policies p holds. */
AL_EXPORT size_t al_cosign_policy_count(const al_cosign_policy *p);

/* One signature of an image as discovery found it: a tag-scheme layer, or
 * a sigstore bundle (with the artifact a message signature is over). */
typedef struct al_cosign_candidate {
	const al_cosign_sig *sig; /* or NULL */
	const uint8_t *bundle;
	size_t bundle_len;
	const uint8_t *artifact;
	size_t artifact_len;
} al_cosign_candidate;

/* The outcome of al_cosign_policy_check. Owned; al_cosign_verdict_clear. */
typedef struct al_cosign_verdict {
	int covered;  /* 0: no scope of any policy covers the image */
	char *policy; /* "ClusterImagePolicy/NAME" that decided */
	char *scope;  /* its scope that matched */
	size_t which; /* the accepted candidate */
	al_cosign_info info;
} al_cosign_verdict;

AL_EXPORT void al_cosign_verdict_clear(al_cosign_verdict *v);

/*
 * Check the image reference (registry/repository[:tag][@digest], the name
 * it is pulled by) with manifest digest against p, as the cluster's
 * verifier (containers/image, configured from these resources by the
 * machine-config operator) does: the most specific scope matching the
 * reference wins (a tagged or digested reference, then the repository,
 * its parent namespaces, the host, then "*.domain" wildcards), a
 * ClusterImagePolicy before an ImagePolicy, and every policy with that
 * scope must be satisfied by at least one candidate whose signature
 * verifies under its rootOfTrust and whose cosign payload names digest
 * and an identity signedIdentity accepts. Returns 0 with out->covered 0
 * when no scope matches (the cluster does not check the image), 0 with
 * covered 1 when accepted, AL_EVERIFY when refused (the message lists
 * each candidate's reason), AL_EINVAL for a reference that does not
 * parse. *out (may be NULL) is written on success.
 */
AL_EXPORT int al_cosign_policy_check(al_cosign_verdict *out,
                                     const al_cosign_policy *p,
                                     const char *reference,
                                     const al_digest *digest,
                                     const al_cosign_candidate *c, size_t n);

/*
 * Whether a signature's docker-reference sig_ref is acceptable for the
 * image reference image_ref under match (containers/image
 * signature/policy_reference_match.go semantics); arg1 / arg2 are the
 * exactRepository repository or the remapIdentity prefix and
 * signedPrefix. 1 yes, 0 no (also when either reference does not parse).
 */
AL_EXPORT int al_cosign_identity_matches(al_cosign_match match,
                                         const char *image_ref,
                                         const char *sig_ref, const char *arg1,
                                         const char *arg2);

/* --- discovery (tag scheme and OCI 1.1 referrers) --------------------- */

/* What al_cosign_discover looks for. */
#define AL_COSIGN_FIND_SIG 0x1       /* "sha256-<hex>.sig" */
#define AL_COSIGN_FIND_ATT 0x2       /* "sha256-<hex>.att" */
#define AL_COSIGN_FIND_SBOM 0x4      /* "sha256-<hex>.sbom" */
#define AL_COSIGN_FIND_REFERRERS 0x8 /* referrers API, else "sha256-<hex>" */
#define AL_COSIGN_FIND_DEFAULT (AL_COSIGN_FIND_SIG | AL_COSIGN_FIND_REFERRERS)

#define AL_COSIGN_MAX_ARTIFACTS 256 /* per image */

typedef enum al_cosign_kind {
	AL_COSIGN_KIND_SIG = 1,
	AL_COSIGN_KIND_ATT = 2,
	AL_COSIGN_KIND_SBOM = 3,
	AL_COSIGN_KIND_REFERRER = 4,
} al_cosign_kind;

/* One signature-like artifact of an image, with its manifest bytes (the
 * digest checked). Carry it by digest: the bytes stay exact. */
typedef struct al_cosign_artifact {
	al_cosign_kind kind;
	char *tag;           /* tag scheme: the tag; NULL for referrers */
	al_digest digest;    /* its manifest's digest */
	char *media_type;    /* its manifest's media type */
	char *artifact_type; /* referrers: artifactType, NULL when none */
	uint8_t *manifest;
	size_t manifest_len;
} al_cosign_artifact;

typedef struct al_cosign_found {
	al_cosign_artifact *items;
	size_t n;
	int referrers_api;    /* 1: the registry's referrers API answered */
	char *fallback_tag;   /* the "sha256-<hex>" tag read instead, or NULL */
	size_t skipped;       /* referrers refused: subject is another image */
	char *skipped_reason; /* why the last one was refused */
} al_cosign_found;

/* Free everything and zero f; NULL is a no-op. */
AL_EXPORT void al_cosign_found_clear(al_cosign_found *f);

/* Where signatures are looked up: a registry repository, or the store. */
typedef struct al_cosign_source al_cosign_source;

/* r and repo are borrowed and must outlive the source. */
AL_EXPORT int al_cosign_source_registry(al_cosign_source **out, al_registry *r,
                                        const char *repo);
/* Images named "name:tag" in the store (name: registry/repository). */
AL_EXPORT int al_cosign_source_store(al_cosign_source **out, al_store *s,
                                     const char *name);
AL_EXPORT void al_cosign_source_free(al_cosign_source *src);

/*
 * Find the signatures of the image with manifest digest image: the cosign
 * tags asked for in what (absent tags are not an error), and with
 * AL_COSIGN_FIND_REFERRERS its OCI 1.1 referrers from the referrers API
 * or, when the registry has none, from the "sha256-<hex>" tag (an index).
 * A referrer whose manifest's subject is not image is left out and
 * counted in skipped. Errors: AL_ENET, AL_EAUTH, AL_EPROTO from the
 * source; AL_EVERIFY for a manifest whose bytes do not match its digest;
 * AL_ELIMIT beyond AL_COSIGN_MAX_ARTIFACTS.
 */
AL_EXPORT int al_cosign_discover(al_cosign_found *out, al_cosign_source *src,
                                 const al_digest *image, unsigned what);

/* The signature candidates of found artifacts, with their blobs fetched
 * (digests checked) and owned. al_cosign_cands_clear. */
typedef struct al_cosign_cands {
	al_cosign_candidate *items;
	size_t n;
	void **owned; /* private */
	size_t nowned;
} al_cosign_cands;

/*
 * Every candidate of f: each simple-signing layer of a ".sig" image (with
 * its annotations) and each referrer whose artifactType is a sigstore
 * bundle (its first layer's bytes). ".att", ".sbom" and other referrers
 * carry no image signature and give no candidate.
 */
AL_EXPORT int al_cosign_candidates(al_cosign_cands *out, al_cosign_source *src,
                                   const al_cosign_found *f);
AL_EXPORT void al_cosign_cands_clear(al_cosign_cands *c);

/* --- what the disconnected cluster needs ------------------------------ */

/*
 * Append to out a containers-registries.d(5) YAML document turning on
 * sigstore attachments (cosign tags and referrers) for each location
 * (host[:port][/namespace...]) as the mirror serves them:
 *   docker:
 *     LOCATION:
 *       use-sigstore-attachments: true
 * Locations are sorted and repeated ones written once. AL_EINVAL for an
 * empty or malformed location (with a tag, a digest or a space).
 */
AL_EXPORT int al_cosign_emit_registries_d(al_buf *out,
                                          const char *const *locations,
                                          size_t n);

/* One trust for al_cosign_emit_policy: PEM texts (NULL when unused). */
typedef struct al_cosign_policy_spec {
	const char *name; /* metadata.name */
	const char *const *scopes;
	size_t nscopes;
	const uint8_t *key_pem; /* PublicKey policy */
	size_t key_len;
	const uint8_t *fulcio_pem; /* FulcioCAWithRekor policy */
	size_t fulcio_len;
	const uint8_t
	    *rekor_pem; /* optional with a key, required with Fulcio */
	size_t rekor_len;
	const char *oidc_issuer; /* FulcioCAWithRekor fulcioSubject */
	const char *signed_email;
	al_cosign_match match;
	const char *arg1, *arg2; /* exactRepository / remapIdentity values */
} al_cosign_policy_spec;

/*
 * Append to out one ClusterImagePolicy (config.openshift.io/v1) in YAML:
 * spec.scopes, rootOfTrust (PublicKey when key_pem, else
 * FulcioCAWithRekor), signedIdentity. What it writes,
 * al_cosign_policy_load reads back. AL_EINVAL for a spec that names
 * neither kind of trust, or lacks what its kind requires.
 */
AL_EXPORT int al_cosign_emit_policy(al_buf *out,
                                    const al_cosign_policy_spec *spec);

/* --- carrying signatures with mirrored images ------------------------- */

/* The version of al_cosign_carry_report this header describes. */
#define AL_COSIGN_CARRY_REPORT_VERSION 1

typedef struct al_cosign_carry_report {
	/* AL_COSIGN_CARRY_REPORT_VERSION of the caller's header, set by
	 * AL_COSIGN_CARRY_REPORT_INIT (0, a zeroed struct, reads as 1; a newer
	 * one is AL_EINVAL, nothing written): the library writes no field past
	 * it */
	unsigned version;
	size_t images;    /* store images looked up at their source */
	size_t artifacts; /* signature artifacts copied (tags and referrers) */
	size_t indexes;   /* "sha256-<hex>" referrers indexes written */
	size_t skipped;   /* referrers left out (subject is another image) */
	size_t failed;    /* images whose lookup or copy failed */
	size_t remapped;  /* of images, read through opts->sources */
	char *first_error;
	size_t unsigned_images; /* of images, with no artifact found at all */
} al_cosign_carry_report;

/* Every other field zero / NULL; set the version by name. */
#define AL_COSIGN_CARRY_REPORT_INIT                                            \
	{                                                                      \
		.version = AL_COSIGN_CARRY_REPORT_VERSION                      \
	}

AL_EXPORT void al_cosign_carry_report_clear(al_cosign_carry_report *r);

/*
 * Carry the sigstore attachments of store images: for each image named
 * REGISTRY/REPO[:TAG|@DIGEST] in s (names, n restrict the set; NULL: every
 * image that is not itself a signature artifact), look them up at its
 * source registry (al_cosign_discover with what) and copy them into s,
 * digests unchanged: a tag-scheme artifact under "REGISTRY/REPO:<its tag>",
 * and the image's referrers as the children of an OCI index named
 * "REGISTRY/REPO:sha256-<hex>" (the referrers tag schema), so that after
 * push a registry without the referrers API still serves them. opts: the
 * transfer settings (registry, TLS, parallelism; NULL: the defaults of
 * AL_TRANSFER_OPTS_INIT); an image under an
 * opts->sources prefix (read from a layout or another registry) is not looked
 * up, and counted in report->remapped. Returns 0 when every image was looked
 * up, else the worst status (each failure counted in report; the caller clears
 * it).
 */
AL_EXPORT int al_cosign_carry(al_store *s, const char *const *names, size_t n,
                              unsigned what, const al_transfer_opts *opts,
                              al_cosign_carry_report *report);

/* One image's verdict in an al_cosign_store_report. */
typedef struct al_cosign_image_verdict {
	char *name;       /* the store name */
	al_digest digest; /* the image checked */
	const char
	    *verdict; /* static: "accepted", "refused" or "not-covered" */
	char *policy; /* the policy that decided, NULL when none */
	char *reason; /* why it was refused, NULL otherwise */
} al_cosign_image_verdict;

/* The version of al_cosign_store_report this header describes. */
#define AL_COSIGN_STORE_REPORT_VERSION 1

/* The outcome of al_cosign_check_store. Owned; clear it. */
typedef struct al_cosign_store_report {
	/* AL_COSIGN_STORE_REPORT_VERSION of the caller's header, set by
	 * AL_COSIGN_STORE_REPORT_INIT (0, a zeroed struct, reads as 1; a newer
	 * one is AL_EINVAL, nothing written): the library writes no field past
	 * it */
	unsigned version;
	size_t accepted;  /* covered by a scope and accepted */
	size_t uncovered; /* no scope covers them */
	size_t refused;
	char **messages; /* one per refused image: "NAME: reason" */
	size_t nmessages;
	al_cosign_image_verdict *verdicts; /* every image checked, in order */
	size_t nverdicts;
} al_cosign_store_report;

/* Every other field zero / NULL; set the version by name. */
#define AL_COSIGN_STORE_REPORT_INIT                                            \
	{                                                                      \
		.version = AL_COSIGN_STORE_REPORT_VERSION                      \
	}

AL_EXPORT void al_cosign_store_report_clear(al_cosign_store_report *r);

/*
 * Check every image of s (names, n restrict the set; NULL: every image
 * that is not a signature artifact) against p, with the signatures the
 * store holds for it (carried by al_cosign_carry), as REGISTRY/REPO@DIGEST.
 * Returns 0 when none was refused, AL_EVERIFY when some were (listed in
 * report), or another status when the store could not be read.
 */
AL_EXPORT int al_cosign_check_store(al_store *s, const al_cosign_policy *p,
                                    const char *const *names, size_t n,
                                    al_cosign_store_report *report);

/*
 * Check every image of s (names, n as for al_cosign_check_store) with the
 * signatures the store holds for it against the Sigstore trusted root
 * root[0..len) (loaded as al_cosign_trust_add_trusted_root; what names it
 * in messages): an image is "verified" (counted in report->accepted) when
 * one of its signatures verifies under the root (a Fulcio chain valid at
 * a time the root's Rekor, TSA and CT keys vouch for, the log entries,
 * the timestamps) and names its digest; "refused" when it has signatures
 * and none does; "not-checked" (report->uncovered) when it has none, or
 * only signatures by a key (a root holds no signing key). This checks the
 * root and what the signatures say, not who signed: any certificate
 * identity passes; that is a policy's question (al_cosign_policy_check).
 * Returns 0 when none was refused, AL_EVERIFY when some were (listed in
 * report), AL_EPARSE for a root that does not load, or another status
 * when the store could not be read.
 */
AL_EXPORT int al_cosign_check_store_root(al_store *s, const uint8_t *root,
                                         size_t len, const char *what,
                                         const char *const *names, size_t n,
                                         al_cosign_store_report *report);

/*
 * Record report in STORE/airlock/sigstore.json (atomically): {"policy":
 * policy_name, "allowUnsigned": allowed, "images": [...]}, one entry
 * {"name","digest","verdict","policy","reason"} per report->verdicts, each
 * image with its verdict "accepted", "refused" (or "allowed" when allowed
 * is set: mirrored although the policy refuses it) or "not-covered".
 */
AL_EXPORT int al_cosign_record(al_store *s, const al_cosign_store_report *r,
                               const char *policy_name, int allowed);

AL_END_DECL

#endif
