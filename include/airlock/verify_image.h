/* verify_image.h: the whole of airlock verify-image as one library entry
 * (al_verify_image_run): an image's sigstore (cosign) signatures checked
 * in a registry or a store against keys, a Fulcio identity, a trusted root
 * or a ClusterImagePolicy; a bundle over a blob; the registries.d and
 * policy files a mirror needs; signatures carried into a store
 * (docs/cosign.md). */
#ifndef AIRLOCK_VERIFY_IMAGE_H
#define AIRLOCK_VERIFY_IMAGE_H

#include "common.h"
#include "cosign.h"
#include "digest.h"
#include "registry.h"
#include "sig.h"
#include "store.h"
#include "transfer.h"

AL_BEGIN_DECL

/* What al_verify_image_run does. */
typedef enum al_verify_image_mode {
	/* verify each image given (none: the bundle over the artifact,
	 * cosign verify-blob) */
	AL_VERIFY_IMAGE_CHECK = 0,
	/* write DIR/registries.d/airlock-sigstore.yaml and, with a key or
	 * a Fulcio root, DIR/clusterimagepolicy.yaml */
	AL_VERIFY_IMAGE_WRITE_CONFIG,
	/* copy the attachments of the store's images (or of the images
	 * given) into the store; with one trusted root, keep it there */
	AL_VERIFY_IMAGE_CARRY,
} al_verify_image_mode;

/* What an event reports (al_verify_image_event.kind). Each image (or the
 * blob, or a file written) ends with exactly one of the kinds marked
 * "outcome"; the others come before it. */
typedef enum al_verify_image_event_kind {
	/* outcome: a signature verified; subject (the image by digest),
	 * index, from_bundle, keyless, signer, tlog */
	AL_VERIFY_IMAGE_EV_VERIFIED,
	/* outcome: the bundle verified over the blob; subject (the artifact
	 * file), bundle, keyless, signer, tlog */
	AL_VERIFY_IMAGE_EV_BLOB_VERIFIED,
	/* outcome: a policy accepted it; subject, policy, scope, index,
	 * keyless, signer */
	AL_VERIFY_IMAGE_EV_ACCEPTED,
	/* outcome: no policy scope covers subject (not checked) */
	AL_VERIFY_IMAGE_EV_UNCOVERED,
	/* outcome: no signature verified (status AL_EVERIFY); message says
	 * why (every signature's refusal) */
	AL_VERIFY_IMAGE_EV_REFUSED,
	/* outcome: could not check; status, subject is the context (what
	 * was being done), al_error_message() the reason */
	AL_VERIFY_IMAGE_EV_FAILED,
	/* outcome: a trust, policy or root file named in the options is
	 * unusable; status, message (what to print) */
	AL_VERIFY_IMAGE_EV_INPUT_FAILED,
	/* outcome: the image argument (or the options with it) cannot be
	 * used as given; message */
	AL_VERIFY_IMAGE_EV_BAD_ARGUMENT,
	/* referrers left out of subject: count, message (the reason) */
	AL_VERIFY_IMAGE_EV_SKIPPED,
	/* what was found for subject: count (artifacts), candidates,
	 * referrers_api, referrers_tag */
	AL_VERIFY_IMAGE_EV_FOUND,
	/* outcome for one file: subject (the path) written */
	AL_VERIFY_IMAGE_EV_WROTE,
	/* the trusted root subject (a path) kept in the store, digest */
	AL_VERIFY_IMAGE_EV_KEPT_ROOT,
	/* outcome of a carry: status, carried */
	AL_VERIFY_IMAGE_EV_CARRIED,
} al_verify_image_event_kind;

/* One event; every pointer is borrowed for the callback's duration. */
typedef struct al_verify_image_event {
	al_verify_image_event_kind kind;
	int status; /* 0, or the negative status of the outcome */
	const char *subject;
	const char *message;
	const char *bundle;
	size_t index;    /* the signature's number, from 1 */
	int from_bundle; /* a sigstore bundle, not the cosign tag */
	int keyless;
	const char *signer; /* keyless: the certificate's subject (may be
	                     * NULL); else the key's id */
	int tlog;           /* logged in Rekor */
	const char *policy, *scope;
	size_t count, candidates;
	int referrers_api, referrers_tag;
	al_digest digest;
	const al_cosign_carry_report *carried;
} al_verify_image_event;

typedef void (*al_verify_image_fn)(void *ud, const al_verify_image_event *ev);

/* The version of al_verify_image_opts this header describes. */
#define AL_VERIFY_IMAGE_OPTS_VERSION 1

/*
 * What to verify against and how. Initialise from
 * AL_VERIFY_IMAGE_OPTS_INIT and set fields by name; version tells the
 * library which fields the caller knows (0 reads as 1, a newer one than
 * the library's is AL_EINVAL). Every pointer is borrowed.
 *
 * Trust is either policy (a ClusterImagePolicy / ImagePolicy file) or the
 * files below: PEM keys, Fulcio roots, Rekor keys, TSA chains, BYOPKI CAs
 * (with pki_email and/or pki_host), Sigstore trusted roots, and with
 * use_kept the trusted root kept in store.
 */
typedef struct al_verify_image_opts {
	unsigned version;
	al_verify_image_mode mode;
	const char *const *keys;
	size_t nkeys;
	const char *const *fulcio;
	size_t nfulcio;
	const char *const *rekor;
	size_t nrekor;
	const char *const *tsa;
	size_t ntsa;
	const char *const *pki;
	size_t npki;
	const char *const *roots;
	size_t nroots;
	const char *pki_email, *pki_host;
	const char *issuer;  /* the certificate's OIDC issuer */
	const char *subject; /* the certificate's SAN */
	const char *policy;  /* a policy file instead of the trust above */
	int use_kept;        /* add the trusted root store keeps */
	int require_tlog;    /* refuse a key-based signature without Rekor */
	size_t min_times;    /* verified times needed (0: the default) */
	al_sig_identity_policy identity; /* the payload's docker-reference */
	unsigned what;                   /* AL_COSIGN_FIND_* */
	/* images are names in this store (borrowed; NULL: registries, with
	 * registry's settings); CARRY: the writable store carried into */
	al_store *store;
	const al_registry_opts *registry; /* NULL: defaults */
	const char *bundle;               /* verify this bundle file instead */
	const char *artifact; /* its signed bytes (a message signature) */
	/* WRITE_CONFIG */
	const char *config_dir;
	const char *const *mirrors;
	size_t nmirrors;
	const char *const *scopes; /* NULL: the mirrors */
	size_t nscopes;
	al_cosign_match match;
	/* CARRY */
	const al_transfer_opts *transfer; /* NULL: defaults */
	al_verify_image_fn on_event;      /* may be NULL */
	void *ud;
} al_verify_image_opts;

#define AL_VERIFY_IMAGE_OPTS_INIT                                              \
	{                                                                      \
		.version = AL_VERIFY_IMAGE_OPTS_VERSION,                       \
		.identity = AL_SIG_IDENTITY_REPOSITORY,                        \
		.match = AL_COSIGN_MATCH_REPOSITORY,                           \
		.what = AL_COSIGN_FIND_DEFAULT                                 \
	}

/* The largest artifact read in blob mode. */
#define AL_VERIFY_IMAGE_MAX_BLOB (256 * AL_MIB)

/*
 * airlock verify-image: do opts->mode over images (docker://REF, or with
 * a store a name REGISTRY/REPO[:TAG|@DIGEST] of it; CARRY: store names,
 * none for every image). Every outcome, refusals included, is an event;
 * the return is 0 once the run happened, or a negative status (message
 * set, no event sent) when opts were refused: AL_EINVAL for a version
 * newer than the library's or a missing input, AL_ENOMEM. Prints nothing.
 */
AL_EXPORT int al_verify_image_run(const al_verify_image_opts *opts,
                                  const char *const *images, size_t nimages);

AL_END_DECL

#endif
