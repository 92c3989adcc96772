/* mirror.h: mirroring releases (release image + every component image) and
 * additional images into the store. */
#ifndef AIRLOCK_MIRROR_H
#define AIRLOCK_MIRROR_H

#include "common.h"
#include "digest.h"
#include "store.h"
#include "transfer.h"
#include "pgp.h"
#include "sig.h"

/* What happened to one release. */
typedef struct al_mirror_release {
	char *source;      /* the reference asked for */
	char *version;     /* from release-metadata (NULL if it failed early) */
	al_digest digest;  /* release image manifest digest */
	size_t components; /* images in image-references */
	size_t components_failed;
	int verified;         /* a signature verified (signatures checked) */
	char verified_by[41]; /* fingerprint of the key that verified it */
	int status;           /* 0 or the worst negative al_status */
	char *message;        /* first error, NULL on success */
} al_mirror_release;

typedef struct al_mirror_report {
	al_mirror_release *releases;
	size_t nreleases;
	size_t additional; /* additional images asked for */
	size_t additional_failed;
	char **errors; /* every image error message */
	size_t nerrors;
	al_transfer_stats stats; /* blobs and bytes over all runs */
} al_mirror_report;

/*
 * Mirror releases (image references, docker:// or oci:) and additional
 * images into s: each release image first, then every component image
 * its image-references names, then the additional images, all through
 * one deduplicating transfer (see transfer.h). Each mirrored release is
 * recorded in airlock/releases.json (version, digest, source, component
 * count, time). Images fail independently; returns 0 when everything
 * succeeded, else the worst status (details in report, which the caller
 * frees with al_mirror_report_clear even on failure).
 */
AL_EXPORT int al_mirror(al_store *s, const char *const *releases,
                        size_t nreleases, const char *const *additional,
                        size_t nadditional, const al_transfer_opts *opts,
                        al_mirror_report *report);
/* Release signature checks during a mirror. */
typedef struct al_mirror_sig_opts {
	const al_pgp_keyring *keyring; /* trusted keys (required) */
	const al_sig_source
	    *sources; /* where to look besides STORE/signatures */
	size_t nsources;
	al_sig_identity_policy
	    policy;         /* identity check against the release reference */
	uint64_t budget_ms; /* whole retrieval per release; 0: 30 s */
	int allow_unsigned; /* mirror releases that did not verify, recorded
	                       "verified": false */
	int require_all;    /* every configured store must yield a verified
	                       signature */
	const al_http_opts
	    *http; /* CA, proxy, TLS settings for HTTP stores (may be NULL) */
} al_mirror_sig_opts;

/*
 * al_mirror with release signatures: after each release image arrived
 * and before its components are fetched, its signatures are retrieved
 * from sig->sources and STORE/signatures within sig->budget_ms, verified
 * against sig->keyring, and the verified ones saved under
 * STORE/signatures. A release that does not verify is refused
 * (AL_EVERIFY, components not fetched, index.json and releases.json left
 * exactly as they were: the message says what the store keeps under the
 * release's name) unless sig->allow_unsigned, in which case it is
 * mirrored and recorded "verified": false. releases.json records
 * "verified" and "verifiedBy".
 *
 * Names (both calls): a release image is named in index.json only after
 * it verified and every component arrived, so a failed release never
 * removes or re-points a name. A name that refers to a release recorded
 * verified is re-pointed only by a verified release: an unverified one
 * (no keys, allow_unsigned) is named "REPO@DIGEST" instead, with a
 * warning, and an additional or component image under such a name is
 * refused (AL_EVERIFY) unless it is that very manifest.
 * sig == NULL is al_mirror (no signature checks, nothing recorded).
 */
AL_EXPORT int al_mirror_signed(al_store *s, const char *const *releases,
                               size_t nreleases, const char *const *additional,
                               size_t nadditional, const al_transfer_opts *opts,
                               const al_mirror_sig_opts *sig,
                               al_mirror_report *report);

AL_EXPORT void al_mirror_report_clear(al_mirror_report *report);

/*
 * al_store_check (store.h) with airlock/releases.json cross-checked: the
 * manifest of every recorded release and every component image its
 * image-references names by digest are roots (al_store_check_roots), so
 * a missing or corrupt one is reported naming the release (and the
 * component), and gc never removes what a recorded release needs, even
 * when index.json no longer names it. A release whose image cannot be
 * read contributes no component roots (its own blobs are reported).
 */
AL_EXPORT int al_mirror_check(al_store *s, int flags, al_check_fn fn, void *ud,
                              al_check_result *res);

/*
 * Add channel names to the releases.json entry of the release whose
 * manifest digest is release (a union: names already there stay).
 * AL_ENOTFOUND when the store has no such release entry.
 */
AL_EXPORT int al_mirror_record_channels(al_store *s, const al_digest *release,
                                        const char *const *channels, size_t n);

#endif
