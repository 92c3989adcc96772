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
#include "imageset.h"

AL_BEGIN_DECL

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
	/* "host/repository" of the registries.conf mirror the release
	 * image was pulled from; NULL: from its own location */
	char *pulled_from;
} al_mirror_release;

/*
 * One image a mirror run could not complete, as the failed-image list
 * records it (al_mirror_report.failed, docs/lifecycle.md "Failed-image
 * list and --retry"). kind is one of AL_MIRROR_FAILED_KINDS: "release"
 * (the release image, or a release some of whose components failed: a
 * retry runs the release again, whose present components transfer
 * nothing), "image" (an additional image, or a KubeVirt or
 * own-platform image of the imageset), "catalog-image" (a bundle or
 * related image of mirror.operators[]), "chart-image" (an image a
 * mirror.helm chart uses). source is the reference as the run mirrored
 * it (its store name depends on it); digest is the manifest digest the
 * run learned for it (has_digest 0: none).
 */
typedef struct al_mirror_failure {
	char *kind;
	char *source;
	al_digest digest;
	int has_digest;
	int status;    /* the negative al_status */
	char *message; /* why, NULL when none */
} al_mirror_failure;

/* The kinds of al_mirror_failure, in the order a list is written. */
#define AL_MIRROR_FAILED_KINDS                                                 \
	{                                                                      \
		"release", "image", "catalog-image", "chart-image"             \
	}

/* The version of al_mirror_report this header describes. */
#define AL_MIRROR_REPORT_VERSION 1

/* What al_mirror, al_mirror_signed and al_mirror_helm did; owned by the
 * caller, freed with al_mirror_report_clear. Also held by value in
 * al_mirror_result, whose version covers it there (its INIT sets this
 * one's version, its clear keeps it). */
typedef struct al_mirror_report {
	/* AL_MIRROR_REPORT_VERSION of the caller's header, set by
	 * AL_MIRROR_REPORT_INIT (0, a zeroed struct, reads as 1; a newer one is
	 * AL_EINVAL, nothing written): the library writes no field past it */
	unsigned version;
	al_mirror_release *releases;
	size_t nreleases;
	size_t additional; /* additional images asked for */
	size_t additional_failed;
	char **errors; /* every image error message */
	size_t nerrors;
	al_transfer_stats stats; /* blobs and bytes over all runs */
	/* every image that failed, one entry each (the failed-image list) */
	al_mirror_failure *failed;
	size_t nfailed;
} al_mirror_report;

/* Every other field zero / NULL; set the version by name. */
#define AL_MIRROR_REPORT_INIT                                                  \
	{                                                                      \
		.version = AL_MIRROR_REPORT_VERSION,                           \
		.stats = AL_TRANSFER_STATS_INIT                                \
	}

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
/* The version of al_mirror_sig_opts this header describes. */
#define AL_MIRROR_SIG_OPTS_VERSION 1

/* Release signature checks during a mirror. */
typedef struct al_mirror_sig_opts {
	/* AL_MIRROR_SIG_OPTS_VERSION of the caller's header (0, a zeroed
	 * struct, reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
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

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_MIRROR_SIG_OPTS_INIT                                                \
	{                                                                      \
		.version = AL_MIRROR_SIG_OPTS_VERSION                          \
	}

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

/* --- the whole workflow: al_mirror_run -------------------------------- */

/* The version of al_mirror_opts this header describes (see
 * AL_MIRROR_OPTS_INIT). */
#define AL_MIRROR_OPTS_VERSION 5

/* al_mirror_opts.flags */
enum {
	/* mirror releases whose signatures do not verify (or with no keys
	 * at all), recorded "verified": false (--allow-unsigned) */
	AL_MIRROR_ALLOW_UNSIGNED = 1u << 0,
	/* every signature store must give a verified signature */
	AL_MIRROR_REQUIRE_ALL = 1u << 1,
	/* never fall back to the shipped Red Hat release keys */
	AL_MIRROR_NO_DEFAULT_KEYS = 1u << 2,
	/* do not also query Red Hat's signature store for its releases */
	AL_MIRROR_NO_DEFAULT_STORE = 1u << 3,
	/* do not carry the images' sigstore (cosign) signatures
	 * (--no-sigstore); bit 12 leaves the low bits to other flags */
	AL_MIRROR_NO_SIGSTORE = 1u << 12,
	/* take from the imageset only its options (airlock.sources,
	 * insecureRegistries, signatures, platform and architectures,
	 * blockedImages, additionalImages targetRepo/targetTag), not what
	 * it selects: `mirror --retry FILE --config F` (docs/lifecycle.md) */
	AL_MIRROR_IMAGESET_OPTIONS_ONLY = 1u << 13,
	/* write no failed-image list (al_mirror_result.failed_list) */
	AL_MIRROR_NO_FAILED_LIST = 1u << 14,
};

/*
 * What `airlock mirror` takes besides the ImageSetConfiguration. Start
 * from AL_MIRROR_OPTS_INIT and set fields by name:
 *
 *     al_mirror_opts o = AL_MIRROR_OPTS_INIT;
 *     o.releases = refs; o.nreleases = n;
 *
 * version is AL_MIRROR_OPTS_VERSION of the header the caller was built
 * with (0, a zeroed struct, reads as version 1). Fields are only ever
 * added at the end; a library reads only the fields of the version it is
 * given, and refuses (AL_EINVAL) a version newer than its own, so a
 * program built against an older header keeps working with a newer
 * library. Every pointer is borrowed and must
 * outlive the call (or the plan).
 */
typedef struct al_mirror_opts {
	unsigned version;
	/* releases to mirror besides the imageset's mirror.platform.release
	 * (after them) */
	const char *const *releases;
	size_t nreleases;
	/* additional images besides the imageset's additionalImages
	 * (before them) */
	const char *const *images;
	size_t nimages;
	/* trusted keys (paths as for al_sig_keyring_add_path) besides the
	 * imageset's airlock.signatures.keyrings (before them) */
	const char *const *keyrings;
	size_t nkeyrings;
	unsigned keyring_flags; /* al_pgp_keyring_set_flags flags */
	/* signature stores (al_sig_source_parse) besides the imageset's */
	const char *const *signature_stores;
	size_t nsignature_stores;
	/* NULL: the imageset's value, else the default (30 s, repository) */
	const char *signature_timeout; /* a duration, "30s" */
	const char *identity_policy;   /* exact, repository or ignore */
	/* "os/arch": NULL: linux/ARCH when the imageset names exactly one
	 * architecture, else every platform */
	const char *platform;
	const char *graph_url;  /* NULL: airlock.graph.url, else the default */
	const char *graph_file; /* channel graphs from a file or directory */
	unsigned flags;         /* AL_MIRROR_* */
	/* HTTP, auth, parallelism, progress, cancellation (may be NULL);
	 * platform, insecure hosts and sources are filled from the above */
	const al_transfer_opts *transfer;
	/* version 2: sigstore (cosign) signatures, carried with every
	 * mirrored image unless AL_MIRROR_NO_SIGSTORE (docs/cosign.md) */
	/* a ClusterImagePolicy / ImagePolicy file every mirrored image is
	 * checked against (NULL: none); read by al_mirror_plan_new */
	const char *sigstore_policy;
	/* what to look up: AL_COSIGN_FIND_* bits (cosign.h); 0: the
	 * "sha256-<hex>.sig" tag and the referrers */
	unsigned sigstore_find;
	/* version 3: --dry-run, the free-space check (mirror_plan.h; may be
	 * NULL: no plan, no check) */
	struct al_mirror_lifecycle *lifecycle;
	/* version 4: mirror to mirror (--to, docs/lifecycle.md): when not
	 * NULL, after everything else the run pushes every image of the
	 * store with al_push_store (transfer.h; push->transfer NULL: the
	 * run's transfer options, insecure hosts included, without the
	 * platform, sources and renames), and its
	 * outcome goes into *push_result (required with push; cleared
	 * first, freed by the caller with al_push_result_clear). Not done
	 * by a dry run or a refused run. */
	const al_push_opts *push;
	al_push_result *push_result;
	/* version 5: a Sigstore trusted_root.json (--trusted-root; NULL:
	 * none), read and checked by al_mirror_plan_new: the signatures
	 * carried are checked against it (al_cosign_check_store_root) and,
	 * unless that refused an image, it is kept in the store
	 * (al_cosign_store_root_put) for pack to carry (docs/cosign.md) */
	const char *sigstore_trusted_root;
} al_mirror_opts;

#define AL_MIRROR_OPTS_INIT                                                    \
	{                                                                      \
		.version = AL_MIRROR_OPTS_VERSION                              \
	}

/* What happened to one mirror.operators[] catalog (mirror_catalogs.c,
 * docs/operators.md "airlock mirror"). */
typedef struct al_mirror_catalog {
	char *source;            /* the catalog as the imageset names it */
	char *source_name;       /* store name of the fetched catalog */
	char *target_name;       /* store name of the rebuilt catalog */
	char *target_repo;       /* targetCatalog or the source repository */
	al_digest source_digest; /* the fetched catalog (status 0) */
	al_digest digest;        /* the rebuilt catalog (status 0) */
	size_t packages;         /* in the selection */
	size_t bundles;          /* in the selection */
	size_t images;           /* bundle and related images selected */
	size_t images_failed;
	size_t unresolved; /* dependencies nothing in the catalog provides */
	int status;        /* 0 or the worst negative al_status */
	char *message;     /* first error, NULL on success */
} al_mirror_catalog;
/* The sigstore step of a mirror run (al_mirror_result.sigstore): only
 * ever filled inside an al_mirror_result, whose version covers it (no
 * version of its own). */
typedef struct al_mirror_sigstore_result {
	int ran;                /* the step ran (no AL_MIRROR_NO_SIGSTORE) */
	size_t images;          /* mirrored images looked up at their source */
	size_t unsigned_images; /* of them, with no signature artifact at all
	                           (normal for many images: not an error) */
	size_t artifacts;       /* tags and referrers carried */
	size_t indexes;         /* "sha256-<hex>" referrers indexes written */
	size_t skipped; /* referrers left out: their subject is another image */
	size_t failed;  /* images whose lookup or copy failed */
	size_t local;   /* images read from an oci: reference, not looked up */
	int policy_checked; /* sigstore_policy given and checked */
	size_t accepted, refused, uncovered; /* its verdicts */
	/* sigstore_trusted_root given and checked: images with a signature
	 * verified under it, with signatures none of which verifies, and
	 * with no signature the root can check (none, or by a key only) */
	int root_checked;
	size_t root_verified, root_refused, root_unchecked;
	int root_kept; /* kept in the store */
} al_mirror_sigstore_result;

/* The version of al_mirror_result this header describes. */
#define AL_MIRROR_RESULT_VERSION 1

/* What al_mirror_run did; free with al_mirror_result_clear. */
typedef struct al_mirror_result {
	/* AL_MIRROR_RESULT_VERSION of the caller's header, set by
	 * AL_MIRROR_RESULT_INIT (0, a zeroed struct, reads as 1; a newer one is
	 * AL_EINVAL, nothing written): the library writes no field past it */
	unsigned version;
	/* nonzero: refused before anything was fetched because the inputs
	 * do not make sense together (no trusted keys, nothing to mirror,
	 * an option that does not parse): a usage error for a CLI */
	int refused;
	/* nonzero: the transfer ran, report and the counts below are
	 * meaningful */
	int ran;
	size_t releases_mirrored; /* releases with status 0 */
	size_t channel_releases;  /* releases the channels selected */
	size_t images;            /* images completed */
	/* every release, image, channel-recording and graph-saving error;
	 * also the reason of a refusal that named no image */
	al_mirror_report report;
	/* mirror.operators[] of the imageset (read with
	 * AL_IMAGESET_OPERATORS), one per entry, in order; their image
	 * errors are in report.errors and their transfers in report.stats */
	al_mirror_catalog *catalogs;
	size_t ncatalogs;
	size_t catalogs_mirrored; /* catalogs with status 0 */
	/* sigstore signatures carried and checked (after the images) */
	al_mirror_sigstore_result sigstore;
	/* mirror.platform.graph: the graph-data image this run built and
	 * tagged AL_GRAPH_IMAGE_NAME (graph.h), when has_graph_image */
	int has_graph_image;
	al_digest graph_image;
	/* the images the charts of mirror.helm use, as they were mirrored
	 * (src/mirror/mirror_helm.c): the sigstore step carries theirs too */
	char **chart_images;
	size_t nchart_images;
	/* the failed-image list this run wrote (al_mirror_failed_write),
	 * NULL when nothing failed or no list was written */
	char *failed_list;
} al_mirror_result;

/* Every other field zero / NULL; set the version by name. */
#define AL_MIRROR_RESULT_INIT                                                  \
	{                                                                      \
		.version = AL_MIRROR_RESULT_VERSION,                           \
		.report = AL_MIRROR_REPORT_INIT                                \
	}

AL_EXPORT void al_mirror_result_clear(al_mirror_result *result);

/*
 * A mirror run prepared without a store: the options merged with the
 * imageset (command-line releases after the imageset's, images and
 * keyrings before), checked, and the trusted keys loaded. Opaque.
 */
typedef struct al_mirror_plan al_mirror_plan;

/*
 * Merge and check imageset (may be NULL) with opts, and load the trusted
 * keys when they are already known to be needed (keyrings given, or a
 * named Red Hat release with no keyring: the shipped keys). Touches no
 * store and no network, so a caller can refuse bad input before creating
 * a store. Every failure is a refusal of the inputs: AL_EINVAL (bad
 * option, nothing to mirror, no trusted keys), or the keyring's own code
 * (AL_ENOTFOUND, AL_EPARSE...) naming the file. Keyring warnings go to
 * the log (al_log_warn). imageset and opts are borrowed until
 * al_mirror_plan_free. *out written only on success.
 */
AL_EXPORT int al_mirror_plan_new(al_mirror_plan **out,
                                 const al_imageset *imageset,
                                 const al_mirror_opts *opts);

/*
 * Run the plan into store (open writable): resolve the imageset's
 * channels through the update graph (info "channels: N releases
 * selected"), load the shipped keys when channels named Red Hat's
 * releases, add Red Hat's signature store for Red Hat releases (unless
 * AL_MIRROR_NO_DEFAULT_STORE), mirror with signatures
 * (al_mirror_signed), record each mirrored release's channels
 * (al_mirror_record_channels) and save the graphs read
 * (al_graph_save_to_store); then, unless AL_MIRROR_NO_SIGSTORE, carry
 * the sigstore signatures of every image the run mirrored from its
 * source (al_cosign_carry; an image without any is counted, not an
 * error) and check them against opts->sigstore_policy (a refusal is
 * AL_EVERIFY unless AL_MIRROR_ALLOW_UNSIGNED; result->sigstore says what
 * happened). Returns 0 or the worst status; result
 * (cleared first, freed by the caller with al_mirror_result_clear even on
 * failure) says whether it was refused or ran and what failed.
 */
AL_EXPORT int al_mirror_plan_run(al_mirror_plan *plan, al_store *store,
                                 al_mirror_result *result);

AL_EXPORT void al_mirror_plan_free(al_mirror_plan *plan);

/*
 * What `airlock mirror` does, in one call: al_mirror_plan_new,
 * al_mirror_plan_run, al_mirror_plan_free. A refusal by the plan sets
 * result->refused.
 */
AL_EXPORT int al_mirror_run(al_store *store, const al_imageset *imageset,
                            const al_mirror_opts *opts,
                            al_mirror_result *result);

/* --- the failed-image list (src/mirror/mirror_failed.c, docs/lifecycle.md) ---
 */

/* Largest failed-image list read (AL_ELIMIT beyond), its longest line
 * and its most entries. */
#define AL_MIRROR_FAILED_MAX_BYTES (4u * 1024 * 1024)
#define AL_MIRROR_FAILED_MAX_LINE 4096
#define AL_MIRROR_FAILED_MAX_ENTRIES 100000
/* The first line of every list. */
#define AL_MIRROR_FAILED_HEADER "# airlock failed-image list v1"

/*
 * Write the failed-image list of a run that ran (result->report.failed)
 * into STORE/airlock/failed/mirror-YYYYMMDD_HHMMSS.txt (UTC; "-N" added
 * when that name exists), atomically (temporary file, fsync, rename):
 * the header, comment lines (when, which store, how to retry, the
 * catalogs a retry cannot finish), then per image a "# error: MESSAGE"
 * line and "KIND<TAB>REFERENCE<TAB>DIGEST" ("-" when unknown).
 * Duplicates are written once; a source that could not be read back
 * (not a reference, control characters) is a comment instead. Nothing
 * failed: nothing written, *path_out NULL. *path_out (caller frees) is
 * the file written.
 */
AL_EXPORT int al_mirror_failed_write(const al_mirror_result *result,
                                     const char *store_path, char **path_out);

/*
 * Parse a failed-image list (name only for messages): the first line
 * must be AL_MIRROR_FAILED_HEADER; '#' lines and empty lines are
 * skipped; every other line is KIND<TAB>REFERENCE[<TAB>DIGEST] with a
 * known kind, a reference al_imgref_parse accepts and a digest or "-".
 * Refused with "NAME:LINE: why": AL_EPARSE for anything else, a control
 * character (a byte below 0x20 other than the tab, or 0x7f) anywhere,
 * or a list naming no image; AL_ELIMIT past the bounds above.
 * Duplicate entries are kept once. *out (free with
 * al_mirror_failures_free) and *n written only on success.
 */
AL_EXPORT int al_mirror_failed_parse(al_mirror_failure **out, size_t *n,
                                     const char *name, const uint8_t *p,
                                     size_t len);
/* al_mirror_failed_parse of the regular file path (al_fs_open_regular:
 * no FIFO, no symlink), at most AL_MIRROR_FAILED_MAX_BYTES. */
AL_EXPORT int al_mirror_failed_load(al_mirror_failure **out, size_t *n,
                                    const char *path);
AL_EXPORT void al_mirror_failures_free(al_mirror_failure *v, size_t n);

/*
 * After a retry of the list at path: remove it when it is a list of the
 * store at store_path (in STORE/airlock/failed), since the retry's own
 * list (or none: everything arrived) supersedes it. Returns 1 removed,
 * 0 left alone (a list elsewhere is the user's), or AL_EIO.
 */
AL_EXPORT int al_mirror_failed_retire(const char *store_path, const char *path);

/* --- mirror.helm (src/mirror/mirror_helm.c, docs/helm.md) -------------------
 */

/* 1 when imageset names Helm charts (mirror.helm repositories or local). */
AL_EXPORT int al_mirror_helm_wanted(const al_imageset *imageset);

/*
 * The mirror.helm step of a mirror run: each chart (a repository's
 * index.yaml and archive over HTTP with opts' TLS, proxy and auth
 * settings, an oci:// chart through the transfer engine, or a local
 * archive) into s as a Helm OCI artifact named charts/NAME:TAG (oci://
 * charts keep their own reference); the images each chart uses
 * (al_helm_chart_read) then mirrored like additional images. Charts fail
 * independently: every error is appended to report (and the image
 * transfer's counts added to it); image fields that could not be
 * resolved are logged as warnings. Each chart stored is recorded
 * (al_store_chart_put). Returns 0 or the worst status.
 */
AL_EXPORT int al_mirror_helm(al_store *s, const al_imageset *imageset,
                             const al_transfer_opts *opts,
                             al_mirror_report *report);

AL_END_DECL

#endif
