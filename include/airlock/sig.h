/* sig.h: release signatures: simple-signing payloads, verification, signature
 * stores (HTTP, directory, ConfigMap), bounded retrieval, signatures in the
 * store. */
#ifndef AIRLOCK_SIG_H
#define AIRLOCK_SIG_H

#include "common.h"
#include "buf.h"
#include "clock.h"
#include "digest.h"
#include "http.h"
#include "pgp.h"
#include "store.h"

AL_BEGIN_DECL

/*
 * Thread safety: every function here is reentrant; distinct objects may be
 * used from different threads at once. al_sig_fetch() starts and joins its
 * own threads; like every HTTP user it needs al_http_global_init() to have
 * been called once. docs/signatures.md describes formats and policies.
 */

/* Bounds. */
#define AL_SIG_MAX_BYTES (64 * AL_KIB)   /* one signature (OpenPGP message) */
#define AL_SIG_MAX_PAYLOAD (64 * AL_KIB) /* its simple-signing JSON */
#define AL_SIG_MAX_CONFIGMAP_BYTES                                             \
	(16 * AL_MIB)                  /* one ConfigMap file or stream */
#define AL_SIG_DEFAULT_MAX_PER_STORE 9 /* signature-1..9, like oc */
#define AL_SIG_MAX_PER_STORE 256       /* largest accepted setting */
#define AL_SIG_MAX_STORED 1000 /* signatures kept per release in a store */
#define AL_SIG_MAX_SOURCES 64  /* sources queried by one al_sig_fetch */

/* The "type" of a simple-signing payload. */
#define AL_SIG_PAYLOAD_TYPE "atomic container signature"

/* How critical.identity.docker-reference must relate to the expected
 * reference. */
typedef enum al_sig_identity_policy {
	/* the same normalised reference (registry/repository[:tag][@digest]) */
	AL_SIG_IDENTITY_EXACT = 0,
	/* the same registry/repository; tag and digest are not compared */
	AL_SIG_IDENTITY_REPOSITORY = 1,
	/* not checked (the user said so); the digest is still checked */
	AL_SIG_IDENTITY_IGNORE = 2,
} al_sig_identity_policy;

/* "exact", "repository" or "ignore" into *out; AL_EINVAL otherwise. */
AL_EXPORT int al_sig_identity_policy_parse(al_sig_identity_policy *out,
                                           const char *s);
/* "exact", "repository" or "ignore" (static string). */
AL_EXPORT const char *al_sig_identity_policy_name(al_sig_identity_policy p);

/*
 * A parsed simple-signing payload ("atomic container signature"). Strings
 * are owned; clear with al_sig_payload_clear.
 */
typedef struct al_sig_payload {
	al_digest digest;  /* critical.image.docker-manifest-digest */
	char *reference;   /* critical.identity.docker-reference, as written */
	char *creator;     /* optional.creator, NULL if absent */
	int64_t timestamp; /* optional.timestamp (Unix seconds) */
	int has_timestamp; /* 1 if optional.timestamp was present */
} al_sig_payload;

/*
 * Parse p[0..n) as a simple-signing payload, strictly: one JSON object
 * (duplicate keys refused) of at most AL_SIG_MAX_PAYLOAD bytes with the
 * members "critical" (required) and "optional" (an object, may be
 * absent) and nothing else; critical holds exactly "type" (which must be
 * AL_SIG_PAYLOAD_TYPE), "image" {"docker-manifest-digest"} and "identity"
 * {"docker-reference"}: a missing or unknown member anywhere inside
 * critical is refused. optional may hold anything; "creator" must be a
 * string and "timestamp" an integer when present.
 * Errors: AL_EPARSE (with the reason, e.g. "unknown field
 * 'critical.foo'"), AL_ELIMIT (too large), AL_ENOMEM.
 */
AL_EXPORT int al_sig_payload_parse(al_sig_payload *out, const uint8_t *p,
                                   size_t n);
/* Free pl's strings and zero it; NULL is a no-op. */
AL_EXPORT void al_sig_payload_clear(al_sig_payload *pl);

/*
 * Check a payload against the release: its digest must equal release
 * (AL_EVERIFY "digest mismatch: signature is for sha256:..., release is
 * sha256:..."), and under EXACT / REPOSITORY its identity must match
 * reference (AL_EVERIFY "identity mismatch: ..."; a docker-reference that
 * does not parse is AL_EVERIFY too). reference may be NULL only under
 * IGNORE (AL_EINVAL otherwise, also for a reference that does not parse).
 */
AL_EXPORT int al_sig_payload_check(const al_sig_payload *pl,
                                   const al_digest *release,
                                   const char *reference,
                                   al_sig_identity_policy policy);

/* The version of al_sig_verify_opts this header describes. */
#define AL_SIG_VERIFY_OPTS_VERSION 1

/* What a signature is checked against. */
typedef struct al_sig_verify_opts {
	/* AL_SIG_VERIFY_OPTS_VERSION of the caller's header (0, a zeroed
	 * struct, reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	const al_pgp_keyring *keyring; /* trusted keys (required) */
	al_sig_identity_policy policy;
	const char *reference; /* expected identity; may be NULL under IGNORE */
	uint64_t now; /* Unix seconds for key expiry; 0: system clock */
} al_sig_verify_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_SIG_VERIFY_OPTS_INIT                                                \
	{                                                                      \
		.version = AL_SIG_VERIFY_OPTS_VERSION                          \
	}

/* What a verified signature says. Strings owned; al_sig_info_clear. */
typedef struct al_sig_info {
	char fingerprint[41]; /* signing key (primary or subkey), uppercase hex
	                       */
	char primary_fingerprint[41]; /* its primary key */
	uint64_t signed_at;           /* OpenPGP signature creation time */
	char *reference;              /* critical.identity.docker-reference */
	char *creator;                /* optional.creator or NULL */
	int64_t timestamp;            /* optional.timestamp */
	int has_timestamp;
} al_sig_info;

/* Free info's strings and zero it; NULL is a no-op. */
AL_EXPORT void al_sig_info_clear(al_sig_info *info);

/*
 * Verify one signature sig[0..n) (a binary or armored OpenPGP signed
 * message) for the release digest: al_pgp_verify with opts->keyring, then
 * the literal data as a payload (al_sig_payload_parse) checked with
 * al_sig_payload_check. Returns 0 only when every check passed; only then
 * is *out (may be NULL) written. Errors: AL_EVERIFY for any bad content,
 * with the specific reason (unknown key, bad signature, "invalid
 * signature payload: ...", digest mismatch, identity mismatch);
 * AL_ELIMIT (more than AL_SIG_MAX_BYTES), AL_EUNSUPPORTED, AL_EINVAL,
 * AL_ENOMEM. A malformed OpenPGP message is AL_EVERIFY too (the bytes
 * claimed to be a signature).
 */
AL_EXPORT int al_sig_verify(al_sig_info *out, const uint8_t *sig, size_t n,
                            const al_digest *release,
                            const al_sig_verify_opts *opts);

/* Signatures as retrieved, in order (signature-1 first). */
typedef struct al_sig_blob {
	uint8_t *data;
	size_t len;
} al_sig_blob;

typedef struct al_sig_list {
	al_sig_blob *items;
	size_t n;
} al_sig_list;

#define AL_SIG_LIST_INIT                                                       \
	{                                                                      \
		NULL, 0                                                        \
	}

/* Append a copy of p[0..n) (AL_ELIMIT beyond AL_SIG_MAX_BYTES; an empty
 * signature is AL_EINVAL). */
AL_EXPORT int al_sig_list_add(al_sig_list *l, const uint8_t *p, size_t n);
/* Free everything and zero l; NULL is a no-op. */
AL_EXPORT void al_sig_list_clear(al_sig_list *l);

/*
 * Verify each signature of l in order and stop at the first that passes:
 * 0 with *which (may be NULL) its index and *out (may be NULL) its info.
 * AL_ENOTFOUND when l is empty; otherwise AL_EVERIFY whose message lists
 * every signature's reason ("signature-1: ...; signature-2: ...").
 */
AL_EXPORT int al_sig_verify_list(al_sig_info *out, size_t *which,
                                 const al_sig_list *l, const al_digest *release,
                                 const al_sig_verify_opts *opts);

/* --- trusted keys ----------------------------------------------------- */

/*
 * Red Hat's release signatures: releases under this registry/repository
 * prefix are checked against the release keys shipped with airlock when no
 * keyring is given, and their signatures are also looked up in Red Hat's
 * published signature store (docs/signatures.md names both).
 */
#define AL_SIG_REDHAT_RELEASE_PREFIX "quay.io/openshift-release-dev/"
#define AL_SIG_REDHAT_STORE                                                    \
	"https://mirror.openshift.com/pub/openshift-v4/signatures/openshift/"  \
	"release"

/* 1 when reference (docker:// optional) names an image under
 * AL_SIG_REDHAT_RELEASE_PREFIX, 0 otherwise (also when it does not parse). */
AL_EXPORT int al_sig_is_redhat_release(const char *reference);

/* 1 when any of refs[0..n) is al_sig_is_redhat_release. */
AL_EXPORT int al_sig_any_redhat_release(const char *const *refs, size_t n);

/* The Red Hat signature store to query: $AIRLOCK_REDHAT_SIGNATURE_STORE when
 * set and not empty (tests point it at a loopback server), else
 * AL_SIG_REDHAT_STORE. Static or environment storage: do not free. */
AL_EXPORT const char *al_sig_redhat_store(void);

/* Add the shipped Red Hat release keys (release key 2 and beta key 2 as
 * openshift/cluster-update-keys publishes them) to kr. */
AL_EXPORT int al_sig_keyring_add_defaults(al_pgp_keyring *kr);

/*
 * Add the trusted keys at path to kr, in any of the forms clusters ship:
 * an OpenPGP key file (binary or armored, one or many keys), a ConfigMap
 * (YAML or JSON; a multi-document stream or a List) whose data
 * "verifier-public-key-*" entries hold armored keys, as
 * openshift/cluster-update-keys writes the release-verification ConfigMap,
 * or a directory of such files (name order; hidden files and
 * subdirectories skipped; a directory that holds verifier-public-key-*
 * files is a mounted ConfigMap and only those are read). Symlinks are
 * followed. Copies of one key merge (al_pgp_keyring_add).
 * Errors: AL_ENOTFOUND (missing path, a directory without key files),
 * AL_EIO, AL_EPARSE (neither keys nor such a ConfigMap), AL_EUNSUPPORTED,
 * AL_ELIMIT, AL_ENOMEM; each message names the path.
 */
AL_EXPORT int al_sig_keyring_add_path(al_pgp_keyring *kr, const char *path);

/*
 * A new keyring of the keys at paths[0..n) (al_sig_keyring_add_path each),
 * or of the shipped Red Hat keys when n is 0; flags as for
 * al_pgp_keyring_set_flags (AL_PGP_STRICT_EXPIRY). The caller shows the
 * keyring's warnings (al_pgp_keyring_warning) and frees it. *out is
 * written only on success.
 */
AL_EXPORT int al_sig_keyring_load_paths(al_pgp_keyring **out,
                                        const char *const *paths, size_t n,
                                        unsigned flags);

/* --- sources ---------------------------------------------------------- */

/*
 * Read dir/sha256=<hex>/signature-1, -2, ... until the first missing file
 * or max files (0: AL_SIG_DEFAULT_MAX_PER_STORE), appending them to out.
 * Files are opened without following symlinks and are at most
 * AL_SIG_MAX_BYTES (AL_ELIMIT). A missing digest directory appends
 * nothing and returns 0; a missing dir is AL_ENOTFOUND. Errors: AL_EIO,
 * AL_ELIMIT, AL_ENOMEM; on error
 * out keeps what was appended before.
 */
AL_EXPORT int al_sig_dir_read(al_sig_list *out, const char *dir,
                              const al_digest *d, unsigned max);

/*
 * Collect the signatures of d from ConfigMaps in p[0..n) (YAML or JSON:
 * one ConfigMap, a multi-document stream, or a v1 List of them): every
 * binaryData key "sha256-<hex of d>-<k>" (base64) in ascending k
 * (numerically; equal k in document order). Keys of other digests and
 * documents that are not ConfigMaps are ignored. what names the input in
 * messages. Errors: AL_EPARSE (bad YAML/JSON, bad base64, a key of d without a
 * valid number), AL_ELIMIT (input over AL_SIG_MAX_CONFIGMAP_BYTES, a
 * signature over AL_SIG_MAX_BYTES, more than AL_SIG_MAX_STORED), AL_ENOMEM;
 * on error out is unchanged.
 */
AL_EXPORT int al_sig_configmap_parse(al_sig_list *out, const uint8_t *p,
                                     size_t n, const char *what,
                                     const al_digest *d);
/* Read path (bounded) and al_sig_configmap_parse it. AL_ENOTFOUND. */
AL_EXPORT int al_sig_configmap_load(al_sig_list *out, const char *path,
                                    const al_digest *d);

/*
 * GET base/sha256=<hex>/signature-1, -2, ... with h until the first 404
 * or max signatures (0: AL_SIG_DEFAULT_MAX_PER_STORE); each body is
 * bounded by AL_SIG_MAX_BYTES. Every request is bounded by dl (and by
 * h's own per-request timeouts). Any other non-2xx answer is AL_EPROTO
 * naming the URL and status; al_http_do's errors (AL_ENET, AL_ETIMEOUT,
 * AL_ECANCELED, ...) are returned unchanged. On error out keeps the
 * signatures read before.
 */
AL_EXPORT int al_sig_http_read(al_sig_list *out, al_http *h, const char *base,
                               const al_digest *d, unsigned max,
                               al_deadline dl);

typedef enum al_sig_source_kind {
	AL_SIG_SOURCE_HTTP = 1, /* http(s):// base URL of a signature store */
	AL_SIG_SOURCE_DIR = 2,  /* local directory in the same layout */
	AL_SIG_SOURCE_CONFIGMAP = 3, /* a ConfigMap file (YAML or JSON) */
} al_sig_source_kind;

/* A place to look for signatures. location is borrowed. */
typedef struct al_sig_source {
	al_sig_source_kind kind;
	const char *location;
	/* HTTP only, may be NULL: CA certificates (PEM, ca_pem_len bytes;
	 * borrowed) trusted for this store's TLS, in place of the base
	 * client's ca_pem (added to its CA bundle): a ClusterVersion
	 * signature store's spec.signatureStores[].ca. */
	const uint8_t *ca_pem;
	size_t ca_pem_len;
} al_sig_source;

/*
 * The kind of source s names: "http://" / "https://" -> HTTP, "file://"
 * prefix stripped; an existing directory -> DIR, anything else ->
 * CONFIGMAP. *out->location borrows s (past "file://").
 */
AL_EXPORT int al_sig_source_parse(al_sig_source *out, const char *s);

/*
 * Append Red Hat's signature store (al_sig_redhat_store) to sources[0..*n)
 * unless it is there already or *n == cap; returns 1 when appended, else
 * 0. For callers that query it for Red Hat's releases, as airlock mirror
 * does; the location is borrowed from al_sig_redhat_store().
 */
AL_EXPORT int al_sig_sources_add_redhat(al_sig_source *sources, size_t *n,
                                        size_t cap);

/* --- bounded retrieval ------------------------------------------------ */

typedef enum al_sig_store_status {
	AL_SIG_STORE_OK = 0, /* at least one signature verified */
	AL_SIG_STORE_NOT_FOUND =
	    1, /* the store has no signature for the digest */
	AL_SIG_STORE_INVALID =
	    2, /* signatures found, none verified (message says why) */
	AL_SIG_STORE_TIMEOUT = 3, /* a request or the total budget ran out */
	AL_SIG_STORE_ERROR = 4,   /* network, protocol or I/O error (message) */
	AL_SIG_STORE_SKIPPED = 5, /* stopped early: another store already
	                           * verified, or the caller cancelled */
} al_sig_store_status;

/* "ok", "not found", "invalid", "timed out", "error", "skipped". */
AL_EXPORT const char *al_sig_store_status_name(al_sig_store_status s);

/* The outcome for one source, in the order of opts->sources. Allocated
 * by the library inside an al_sig_fetch_result, whose version covers it
 * (no version of its own). */
typedef struct al_sig_store_result {
	char *location; /* the source location without URL
	                 * userinfo or query (for messages) */
	al_sig_store_status status;
	int code;            /* 0 or the al_status behind status */
	size_t nfound;       /* signatures retrieved */
	size_t nverified;    /* of those, verified */
	uint64_t elapsed_ms; /* from start until this store finished */
	char *message;       /* reason for any status but OK; NULL for OK
	                      * (e.g. "timed out after 10.0s: ...") */
} al_sig_store_result;

/* A verified signature and where it came from. */
typedef struct al_sig_verified {
	uint8_t *data;
	size_t len;
	size_t store; /* index into opts->sources */
	al_sig_info info;
} al_sig_verified;

/* The version of al_sig_fetch_opts this header describes. */
#define AL_SIG_FETCH_OPTS_VERSION 1

/* version: AL_SIG_FETCH_OPTS_VERSION of the caller's header (0, a zeroed
 * struct, reads as 1; a newer one than the library's is AL_EINVAL;
 * docs/architecture.md "Options structs"). */
typedef struct al_sig_fetch_opts {
	unsigned version;
	const al_sig_source *sources;
	size_t nsources;
	const al_pgp_keyring *keyring; /* required */
	al_sig_identity_policy policy;
	uint64_t now;           /* Unix seconds for expiry; 0: system clock */
	unsigned max_per_store; /* 0: AL_SIG_DEFAULT_MAX_PER_STORE */
	uint64_t budget_ms;     /* whole retrieval; 0: 30000 */
	uint64_t request_timeout_ms; /* one HTTP attempt; 0: 10000 */
	uint64_t connect_timeout_ms; /* 0: 5000 */
	uint64_t
	    low_speed_time_ms; /* no byte for this long is a stall; 0: 5000 */
	unsigned max_retries;  /* per request; 0: 1, AL_HTTP_NO_RETRY: none */
	int require_all;       /* every store must yield a verified signature */
	/* Base client settings (CA file, proxy, TLS, user agent); the
	 * timeouts, retries and cancel above override its own. May be NULL. */
	const al_http_opts *http;
	al_cancel *cancel; /* caller's cancellation (borrowed, may be NULL) */
} al_sig_fetch_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_SIG_FETCH_OPTS_INIT                                                 \
	{                                                                      \
		.version = AL_SIG_FETCH_OPTS_VERSION                           \
	}

/* The version of al_sig_fetch_result this header describes. */
#define AL_SIG_FETCH_RESULT_VERSION 1

/* Filled by al_sig_fetch even on failure; clear with al_sig_fetch_result_clear.
 */
typedef struct al_sig_fetch_result {
	/* AL_SIG_FETCH_RESULT_VERSION of the caller's header, set by
	 * AL_SIG_FETCH_RESULT_INIT (0, a zeroed struct, reads as 1; newer:
	 * AL_EINVAL, nothing written): the library writes no field past it */
	unsigned version;
	al_sig_store_result *stores; /* nstores == opts->nsources */
	size_t nstores;
	al_sig_verified
	    *sigs; /* verified, identical bytes once, by store order */
	size_t nsigs;
	uint64_t elapsed_ms;
	int budget_expired; /* the total budget ran out */
} al_sig_fetch_result;

/* Every other field zero / NULL; set the version by name. */
#define AL_SIG_FETCH_RESULT_INIT                                               \
	{                                                                      \
		.version = AL_SIG_FETCH_RESULT_VERSION                         \
	}

/* Free what res holds and zero it; NULL is a no-op. */
AL_EXPORT void al_sig_fetch_result_clear(al_sig_fetch_result *res);

/*
 * Retrieve and verify the signatures of release from every source at
 * once: one thread per source (each HTTP source with its own al_http
 * whose connect, stall and per-attempt timeouts come from opts), all
 * under one total budget. When the budget ends, when the caller's cancel
 * is set, or (unless require_all) as soon as one signature verified, the
 * remaining stores are stopped through a shared al_cancel: a store that
 * hangs after accept, stalls mid-body or resets costs at most the budget
 * (plus about a second for the transfer to notice). reference is the
 * expected identity (may be NULL under AL_SIG_IDENTITY_IGNORE).
 *
 * *res (initialised with AL_SIG_FETCH_RESULT_INIT or cleared) is filled
 * in every case, also on failure: per store its status and message, and
 * the verified signatures.
 * Returns 0 when at least one signature verified (require_all: when every
 * store yielded one). Otherwise, with a message summing up every store
 * ("signature store 'URL' timed out after 10.0s; ..."):
 *   AL_EVERIFY    a store had signatures and none verified (content bad)
 *   AL_ETIMEOUT   no verified signature, and a store timed out
 *   AL_ENOTFOUND  no store had a signature for the digest
 *   AL_ECANCELED  the caller cancelled
 *   another code  the first store error (AL_ENET, AL_EPROTO, AL_EIO...)
 *   AL_EINVAL     bad options (no source or more than AL_SIG_MAX_SOURCES,
 *                 no keyring, reference missing)
 */
AL_EXPORT int al_sig_fetch(al_sig_fetch_result *res, const al_digest *release,
                           const char *reference,
                           const al_sig_fetch_opts *opts);

/*
 * The call for 'airlock mirror': al_sig_fetch() for release, then every
 * verified signature saved into the store with al_sig_store_save (so
 * STORE/signatures serves as a signature store and 'airlock configmaps'
 * finds them). Returns al_sig_fetch's result (0: verified and saved), or
 * the save error. res as for al_sig_fetch: the caller prints per store
 * e.g. "signature store '%s' %s" with location and message, and the
 * verifying key from res->sigs[0].info.fingerprint. Nothing is saved
 * when nothing verified. Retrieval time never exceeds opts->budget_ms
 * (plus about a second), whatever the stores do. Sketch:
 *
 *   al_sig_source src[] = {{AL_SIG_SOURCE_HTTP, "https://host/signatures"}};
 *   al_sig_fetch_opts o = {0};
 *   al_sig_fetch_result res = AL_SIG_FETCH_RESULT_INIT;
 *   o.sources = src; o.nsources = 1; o.keyring = kr;
 *   o.policy = AL_SIG_IDENTITY_REPOSITORY; o.budget_ms = 30000;
 *   o.http = &http_opts; o.cancel = cancel;
 *   rc = al_sig_fetch_release(store, &digest, "quay.io/x/release:4.14.1",
 *                             &o, &res);
 *   for (i = 0; i < res.nstores; i++)
 *           if (res.stores[i].status != AL_SIG_STORE_OK)
 *                   warn("signature store '%s' %s", res.stores[i].location,
 *                        res.stores[i].message);
 *   if (rc == 0) info("verified by %s", res.sigs[0].info.fingerprint);
 *   al_sig_fetch_result_clear(&res);
 *
 * A failure here (AL_EVERIFY, AL_ETIMEOUT, AL_ENOTFOUND...) means "not
 * verified", never success; whether to go on regardless is the caller's
 * decision (--force), and should be recorded as unverified.
 */
AL_EXPORT int al_sig_fetch_release(al_store *s, const al_digest *release,
                                   const char *release_ref,
                                   const al_sig_fetch_opts *opts,
                                   al_sig_fetch_result *res);

/* --- signatures in the store ------------------------------------------ */

/*
 * Save p[0..n) as STORE/signatures/sha256=<hex>/signature-<k> (written
 * atomically), k one past the last existing file; when a file with the
 * same bytes exists already nothing is written and *index (may be NULL)
 * is its k. The bytes are not verified here: save what verified.
 * Errors: AL_EINVAL (empty), AL_ELIMIT (over
 * AL_SIG_MAX_BYTES or AL_SIG_MAX_STORED signatures), AL_EIO. Thread-safe:
 * saves in one process are serialised (the store lock serialises
 * processes).
 */
AL_EXPORT int al_sig_store_save(al_store *s, const al_digest *release,
                                const uint8_t *p, size_t n, unsigned *index);

/* Load STORE/signatures/sha256=<hex>/signature-1.. (up to
 * AL_SIG_MAX_STORED) into out; none (also no signatures/ directory at
 * all) is 0 with nothing appended. */
AL_EXPORT int al_sig_store_load(al_store *s, const al_digest *release,
                                al_sig_list *out);

/*
 * al_sig_store_load without the signatures an untrusted import wrote
 * (al_store_signature_untrusted, docs/security.md "Untrusted imports"):
 * what may be shipped without verifying it (signature ConfigMaps).
 * *left_out (may be NULL) gets how many were left out. Verification with
 * keys may use al_sig_store_load: a signature counts there only when it
 * verifies against a trusted key.
 */
AL_EXPORT int al_sig_store_load_trusted(al_store *s, const al_digest *release,
                                        al_sig_list *out, size_t *left_out);

AL_END_DECL

#endif
