/* transfer.h: the image transfer engine: many images between registries, OCI
 * layouts and the store, in parallel, deduplicated. */
#ifndef AIRLOCK_TRANSFER_H
#define AIRLOCK_TRANSFER_H

#include "common.h"
#include "clock.h"
#include "digest.h"
#include "imageset.h"
#include "log.h"
#include "ref.h"
#include "registry.h"
#include "store.h"
#include "layout.h"

AL_BEGIN_DECL

/* The version of al_transfer_opts this header describes. */
#define AL_TRANSFER_OPTS_VERSION 1

typedef struct al_transfer_opts {
	/* AL_TRANSFER_OPTS_VERSION of the caller's header (0, a zeroed struct,
	 * reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	unsigned parallel; /* concurrent transfers; 0 = default (16) */
	al_registry_opts
	    registry; /* http settings, auth (shared), chunk size,
	               * registries.conf: its regconf also gives the pull
	               * sources of docker references (mirrors in order, then
	               * the location; docs/registry.md) */
	const char *const
	    *insecure_hosts; /* NULL-terminated: --tls-verify=false for these */
	int all_insecure;    /* --tls-verify=false for every registry */
	/* Source remapping (imageset airlock.sources): a docker reference
	 * under prefix is read from location (oci:PATH or docker://HOST/NS). */
	const al_imageset_source *sources;
	size_t nsources;
	/* "os/arch[/variant]": pick that entry of an index; NULL = copy every
	 * platform of an index (like skopeo copy --all). */
	const char *platform;
	al_progress_fn progress; /* may be NULL */
	void *progress_ud;
	al_cancel *cancel; /* borrowed; may be NULL */
	/* NULL-terminated pairs (additional image reference, store name):
	 * al_mirror stores and names those additional images under the
	 * second (imageset targetRepo/targetTag, al_imageset_target_name)
	 * and records the first as the entry's origin (borrowed; NULL:
	 * none) */
	const char *const *renames;
} al_transfer_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_TRANSFER_OPTS_INIT                                                  \
	{                                                                      \
		.version = AL_TRANSFER_OPTS_VERSION,                           \
		.registry = AL_REGISTRY_OPTS_INIT                              \
	}

/* The version of al_transfer_stats this header describes. */
#define AL_TRANSFER_STATS_VERSION 1

/* Totals of one or more runs. Filled alone by al_transfer_run (its own
 * version) and embedded in al_mirror_report and al_push_result, whose
 * versions cover it there: their INIT macros set it, their clears keep
 * it. */
typedef struct al_transfer_stats {
	/* AL_TRANSFER_STATS_VERSION of the caller's header, set by
	 * AL_TRANSFER_STATS_INIT (0, a zeroed struct, reads as 1; a newer one
	 * is AL_EINVAL, nothing written): the library writes no field past it
	 */
	unsigned version;
	uint64_t images; /* images completed (tagged / pushed) */
	uint64_t images_failed;
	uint64_t blobs_transferred;
	uint64_t bytes_transferred;
	uint64_t blobs_present; /* already at the destination (or mounted) */
	uint64_t bytes_present;
	uint64_t manifests; /* manifests written */
	uint64_t elapsed_ms;
	/* registry destination: images one HEAD confirmed unchanged
	 * (al_transfer_expect), counted in images too */
	uint64_t images_unchanged;
} al_transfer_stats;

/* Every other field zero / NULL; set the version by name. */
#define AL_TRANSFER_STATS_INIT                                                 \
	{                                                                      \
		.version = AL_TRANSFER_STATS_VERSION                           \
	}

/*
 * A batch of images to move to one destination: the store (mirror,
 * copy to oci:) or a registry (push, copy to docker://). Blobs shared
 * by several images are transferred once. Not thread-safe itself; it
 * runs its own worker threads.
 */
typedef struct al_transfer al_transfer;

/* Destination: a store (borrowed, must be writable). */
AL_EXPORT int al_transfer_new_to_store(al_transfer **out, al_store *dst,
                                       const al_transfer_opts *opts);
/* Destination: a registry host ("127.0.0.1:5000"). */
AL_EXPORT int al_transfer_new_to_registry(al_transfer **out, const char *host,
                                          const al_transfer_opts *opts);
AL_EXPORT void al_transfer_free(al_transfer *t);

/*
 * Queue one image. src: a docker or oci: image reference (remapped by
 * opts->sources). dst_name: for a store destination, the index.json name
 * (NULL: the source reference string); for a registry destination,
 * "repo[:tag]" or "repo@digest" on the destination host (NULL is
 * AL_EINVAL). Returns the image's index for al_transfer_result (>= 0) or
 * a negative al_status.
 */
AL_EXPORT int al_transfer_add(al_transfer *t, const al_imgref *src,
                              const char *dst_name);

/* Queue an image that is already in a store (push): src_store is read
 * only, name is its index.json name. */
AL_EXPORT int al_transfer_add_from_store(al_transfer *t, al_store *src_store,
                                         const char *name,
                                         const char *dst_name);

/*
 * Transfer everything queued since the last run: resolve manifests,
 * move missing blobs in parallel (digest-verified before they become
 * visible), write manifests, and only then tag each image (not the held
 * ones: al_transfer_hold). Images fail
 * independently; the call returns 0 when every image of this run
 * succeeded, else the worst error (the messages are in the results).
 * stats (may be NULL) accumulates across runs.
 */
AL_EXPORT int al_transfer_run(al_transfer *t, al_transfer_stats *stats);

/* Per-image outcome after a run: status (0 or negative), the top-level
 * manifest digest and media type (valid when status == 0), and the error
 * message (borrowed, "" on success). Any out pointer may be NULL. */
AL_EXPORT int al_transfer_result(const al_transfer *t, int image, int *status,
                                 al_digest *digest, const char **media_type,
                                 const char **message);
AL_EXPORT size_t al_transfer_count(const al_transfer *t);

/*
 * Registry destination: the destination is believed to hold image's top
 * manifest with digest (the push record, docs/push.md). When the image's
 * manifest has that digest, the run asks the destination reference once
 * (HEAD); the same digest there means the image needs nothing more (no
 * blob is looked at, no manifest sent; counted in
 * al_transfer_stats.images_unchanged). Any other answer pushes the image
 * as usual. AL_EINVAL for a store destination.
 */
AL_EXPORT int al_transfer_expect(al_transfer *t, int image,
                                 const al_digest *digest);

/*
 * Registry destination: keep the upload sessions of blobs larger than the
 * upload chunk in dir (made 0700 when missing; NULL: not kept), so that a
 * later run continues an interrupted upload where the registry says it
 * stands (docs/push.md "Resuming an upload"). A failed chunk is continued
 * (or its session begun again) within the run either way.
 */
AL_EXPORT int al_transfer_set_upload_dir(al_transfer *t, const char *dir);

/* After a run: "host/repository" of the registries.conf mirror image idx
 * was pulled from (borrowed), NULL when it came from its own location. */
AL_EXPORT const char *al_transfer_pulled_from(const al_transfer *t, int idx);

/*
 * Store destination: when image (an index from al_transfer_add) arrives,
 * store its manifests and blobs but leave index.json alone; the caller
 * names it with al_transfer_tag once it decided to (mirror tags a release
 * only after its signatures verified and its components arrived, so that
 * a refused release never re-points a name). Call before the run.
 * AL_EINVAL for a registry destination or an unknown index.
 */
AL_EXPORT int al_transfer_hold(al_transfer *t, int image);
/*
 * Name an image of an earlier run (status 0) in the destination store:
 * under name, or its destination name when name is NULL. An entry that
 * already names the same manifest is not rewritten. AL_EINVAL when the
 * image has not arrived.
 */
AL_EXPORT int al_transfer_tag(al_transfer *t, int image, const char *name);

/*
 * Bounds of one image and of one run, whatever the indexes list: an index
 * has at most AL_OCI_ENTRIES_MAX entries (oci.h), each distinct child is
 * fetched once per image and kept as digest and media type only (its
 * bytes go to the store at once), an image has at most
 * AL_TRANSFER_IMAGE_MANIFESTS_MAX distinct manifests and
 * AL_TRANSFER_IMAGE_BLOBS_MAX distinct blobs, and a run at most
 * AL_TRANSFER_RUN_MANIFESTS_MAX manifests (AL_ELIMIT for the image
 * beyond them).
 */
#define AL_TRANSFER_IMAGE_MANIFESTS_MAX 10000
#define AL_TRANSFER_IMAGE_BLOBS_MAX 100000
#define AL_TRANSFER_RUN_MANIFESTS_MAX 100000

/*
 * Where push puts a store image: "REG/REPO[:tag|@digest]" ->
 * "PREFIX/REPO[:tag|@digest]" (the source registry host is dropped, as
 * oc-mirror does). prefix may be "" (no prefix). Caller frees *repo and
 * *ref (the tag or digest). AL_EPARSE for a name that is not a
 * docker reference.
 */
AL_EXPORT int al_push_target(const char *name, const char *prefix, char **repo,
                             char **ref);

/*
 * al_push_target for a registry that limits path depth (oc-mirror's
 * --max-nested-paths, image.WithMaxNestedPaths): when the repository path
 * PREFIX/REPO has more than max_nested components, the first
 * max_nested - 1 are kept and the rest are joined with '-' into the last
 * one ("a/b/c/d" with 2: "a/b-c-d"; with 1: "a-b-c-d"). max_nested 0: no
 * limit (al_push_target). Errors as al_push_target.
 */
AL_EXPORT int al_push_target_nested(const char *name, const char *prefix,
                                    unsigned max_nested, char **repo,
                                    char **ref);

/*
 * Where a store image goes under a layout (src/transfer/transfer_push.c): a
 * release or component that al_layout_place places (oc-mirror's
 * layout) at PREFIX/openshift/release-images:<tag> or
 * PREFIX/openshift/release:<tag>-<component>, with max_nested applied as
 * al_push_target_nested does; anything else (and every image when l is
 * NULL) as al_push_target_nested. Errors as al_push_target.
 */
AL_EXPORT int al_push_target_layout(const al_layout *l, const char *name,
                                    const char *prefix, unsigned max_nested,
                                    char **repo, char **ref);

/*
 * How many destinations push gives the store image named name under l:
 * al_layout_place_count when the layout places it (a component shared by
 * two releases: one per release), else 1 (its source path).
 */
AL_EXPORT size_t al_push_target_count(const al_layout *l, const char *name);

/*
 * Destination number place (from 0, below al_push_target_count) of the
 * store image named name: al_push_target_layout of that place (place 0
 * is what al_push_target_layout gives). AL_ENOTFOUND for a place beyond
 * the count; errors as al_push_target.
 */
AL_EXPORT int al_push_target_layout_at(const al_layout *l, const char *name,
                                       size_t place, const char *prefix,
                                       unsigned max_nested, char **repo,
                                       char **ref);

/*
 * The tag push gives an image it pushes by digest, so that a registry's
 * garbage collection of untagged manifests (docker-registry
 * garbage-collect --delete-untagged) keeps it: "<algo>-<hex>" of digest
 * ("sha256:ab..." -> "sha256-ab..."), cut to 127 characters as oc-mirror
 * v2 does (prepareM2DCopyBatch). Caller frees; NULL when digest is not
 * "algo:hex" or on allocation failure.
 */
AL_EXPORT char *al_push_digest_tag(const char *digest);

/* --- push: a store into a registry (src/transfer/transfer_push.c,
 * docs/push.md) -------
 */

/* al_push_opts.flags */
enum {
	/* push digest-referenced images by digest only, without the
	 * "sha256-<hex>" tag (push --no-digest-tags) */
	AL_PUSH_NO_DIGEST_TAGS = 1u << 0,
	/* do not append the push to STORE/airlock/pushes.json, nor keep
	 * what was pushed (airlock/pushed.json) or upload sessions */
	AL_PUSH_NO_RECORD = 1u << 1,
	/* ask the registry for every blob and send every manifest, as if
	 * airlock/pushed.json recorded nothing (push --recheck) */
	AL_PUSH_RECHECK = 1u << 2,
	/* push the names an untrusted import set too (marked in
	 * STORE/airlock/untrusted.json, docs/security.md "Marks of
	 * untrusted imports"); without it they are left out, with a warning
	 * (push --push-untrusted) */
	AL_PUSH_UNTRUSTED = 1u << 3,
};

/* The version of al_push_opts this header describes. */
#define AL_PUSH_OPTS_VERSION 1

/* Where and how al_push_store pushes. Every pointer is borrowed. */
typedef struct al_push_opts {
	/* AL_PUSH_OPTS_VERSION of the caller's header (0, a zeroed struct,
	 * reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	const char *registry; /* "HOST[:PORT]" (required) */
	const char *prefix;   /* path under it; NULL or "": none */
	unsigned max_nested;  /* al_push_target_nested; 0: no limit */
	unsigned flags;       /* AL_PUSH_* */
	/* oc-mirror's layout (0, the default: releases and components
	 * under openshift/release-images and openshift/release, layout.h)
	 * or AL_LAYOUT_SOURCE; recorded in pushes.json */
	al_layout_kind layout;
	/* HTTP, TLS, auth, parallelism, progress (may be NULL); used as
	 * given: no platform, the store's images are pushed whole */
	const al_transfer_opts *transfer;
} al_push_opts;

/* Every other field zero / NULL: set registry (and the rest) by name. */
#define AL_PUSH_OPTS_INIT                                                      \
	{                                                                      \
		.version = AL_PUSH_OPTS_VERSION                                \
	}

/* What happened to one store image. */
typedef struct al_push_image {
	char *source;      /* its index.json name */
	char *destination; /* "REPO:TAG" or "REPO@DIGEST" on the registry;
	                      NULL when the name maps to nothing */
	char *by_digest;   /* "REPO@DIGEST" of a digest-referenced image */
	al_digest digest;  /* the pushed manifest (status 0) */
	int queued;        /* it reached the transfer */
	int status;        /* 0 or a negative al_status */
	char *message;     /* NULL on success */
} al_push_image;

/* The version of al_push_result this header describes. */
#define AL_PUSH_RESULT_VERSION 1

/* What al_push_store did; free with al_push_result_clear. */
typedef struct al_push_result {
	/* AL_PUSH_RESULT_VERSION of the caller's header, set by
	 * AL_PUSH_RESULT_INIT (0, a zeroed struct, reads as 1; a newer one is
	 * AL_EINVAL, nothing written): the library writes no field past it */
	unsigned version;
	int ran; /* the transfer ran: images and stats are meaningful */
	/* every image of the store, in index order, an image the layout
	 * places more than once (a component of two releases) once per
	 * place (al_push_target_count) */
	al_push_image *images;
	size_t nimages;
	size_t failed;
	al_transfer_stats stats;
	int status;        /* what al_push_store returned */
	char *message;     /* its message when status < 0 */
	int recorded;      /* the push was appended to pushes.json */
	int record_status; /* < 0: the record could not be written */
	char *record_message;
} al_push_result;

/* Every other field zero / NULL; set the version by name. */
#define AL_PUSH_RESULT_INIT                                                    \
	{                                                                      \
		.version = AL_PUSH_RESULT_VERSION,                             \
		.stats = AL_TRANSFER_STATS_INIT                                \
	}

/*
 * What `airlock push` does: every image of s into opts->registry under
 * the push mapping (al_push_target_layout_at with opts->layout, at each
 * of its al_push_target_count places,
 * opts->prefix and opts->max_nested; a digest-referenced image under its
 * al_push_digest_tag unless AL_PUSH_NO_DIGEST_TAGS or the store gives
 * that tag to its referrers index), manifests byte for byte, blobs the
 * registry has skipped (HEAD) and those pushed to another repository in
 * the run mounted. A name an untrusted import set (marked in
 * airlock/untrusted.json) is left out, not in result->images, unless
 * AL_PUSH_UNTRUSTED (a warning says how many). An image
 * airlock/pushed.json records at its
 * destination with its digest is confirmed with one HEAD instead
 * (al_transfer_expect; not with AL_PUSH_RECHECK), and the upload sessions
 * of large blobs are kept in airlock/uploads/ so that a rerun continues
 * them (docs/push.md). Then, unless AL_PUSH_NO_RECORD, pushed.json gets
 * every destination this push left in place and, when at least one
 * image was pushed, the push is appended to airlock/pushes.json
 * (al_store_push_put; a failure there is result->record_status, not the
 * return value: the push itself is done). Images fail independently;
 * returns 0 when every image was pushed, else the worst status. A
 * failure before any transfer (the store cannot be listed, the registry
 * client cannot be made) returns its code with result->ran 0. result is
 * cleared first and freed by the caller with al_push_result_clear even
 * on failure. s may be read-only.
 */
AL_EXPORT int al_push_store(al_store *s, const al_push_opts *opts,
                            al_push_result *result);
AL_EXPORT void al_push_result_clear(al_push_result *result);

/*
 * Resolve the images queued since the last run without moving any blob:
 * their manifests are fetched (a store destination stores them, as a run
 * would) and, for each image in queue order, fn is called with its
 * status (0 or negative) and message, the top manifest (NULL on
 * failure), the bytes of its manifests, and its distinct blobs (configs
 * and layers, borrowed for the call). The images are then finished: a
 * later run does not transfer or tag them (al_transfer_result says
 * AL_ECANCELED "resolved only"). Returns 0, or the first negative value
 * fn returned (the remaining images are still finished).
 */
typedef int (*al_transfer_resolve_fn)(void *ud, int image, int status,
                                      const char *message,
                                      const al_descriptor *top,
                                      uint64_t manifest_bytes,
                                      const al_descriptor *blobs,
                                      size_t nblobs);
AL_EXPORT int al_transfer_resolve(al_transfer *t, al_transfer_resolve_fn fn,
                                  void *ud);

AL_END_DECL

#endif
