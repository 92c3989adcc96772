/* mirror_plan.h: what a mirror would move before it moves it (mirror
 * --dry-run: mapping.txt, missing.txt), and the free-space checks of
 * mirror, pack and unpack (docs/lifecycle.md). */
#ifndef AIRLOCK_MIRROR_PLAN_H
#define AIRLOCK_MIRROR_PLAN_H

#include "common.h"
#include "oci.h"
#include "layout.h"
#include "store.h"

AL_BEGIN_DECL

/*
 * One image of a plan. Strings are owned by the plan. size counts the
 * image's manifests and its distinct blobs; missing the bytes of those
 * blobs the store lacked when the entry was added (manifests are fetched
 * by the plan itself and never count as missing). status is 0, or the
 * negative al_status of a resolution that failed (then size and missing
 * are 0 and message says why).
 */
typedef struct al_plan_entry {
	/* "release", "component", "catalog", "operator", "chart",
	 * "chart-image", "image" */
	char *kind;
	char *source;      /* "docker://REF" or "oci:PATH:NAME" */
	char *destination; /* "oci:STORE:NAME" or "docker://HOST/PREFIX/..." */
	uint64_t size;
	uint64_t missing;
	int present; /* 1: every blob of the image is in the store */
	int status;
	char *message; /* NULL on success */
} al_plan_entry;

/* Totals over a plan, blobs deduplicated by digest across all entries. */
typedef struct al_plan_totals {
	size_t images;          /* entries */
	size_t images_failed;   /* entries whose resolution failed */
	size_t images_missing;  /* entries not present (failed included) */
	uint64_t blobs;         /* distinct blobs */
	uint64_t bytes;         /* their bytes */
	uint64_t blobs_missing; /* distinct blobs the store lacks */
	uint64_t bytes_missing; /* their bytes: what a run transfers */
} al_plan_totals;

/* A list of (source, destination, size, present) entries, open to every
 * workflow that adds images to a mirror (releases, catalogs, charts).
 * Not thread-safe. */
typedef struct al_plan al_plan;

AL_EXPORT int al_plan_new(al_plan **out);
AL_EXPORT void al_plan_free(al_plan *p);

/*
 * Add one resolved image: its top manifest, the bytes of all its
 * manifests, and its distinct blobs (configs, layers). Each blob is
 * looked up in store (may be NULL: nothing present) and counted once per
 * plan however many images share it. kind, source, destination are
 * copied.
 */
AL_EXPORT int al_plan_add(al_plan *p, const char *kind, const char *source,
                          const char *destination, al_store *store,
                          uint64_t manifest_bytes, const al_descriptor *blobs,
                          size_t nblobs);
/* Add an image whose resolution failed (status < 0, message copied). */
AL_EXPORT int al_plan_add_failed(al_plan *p, const char *kind,
                                 const char *source, const char *destination,
                                 int status, const char *message);

AL_EXPORT size_t al_plan_count(const al_plan *p);
/* Borrowed, lives as long as p; NULL past the end. */
AL_EXPORT const al_plan_entry *al_plan_entry_at(const al_plan *p, size_t i);
AL_EXPORT void al_plan_get_totals(const al_plan *p, al_plan_totals *out);

/*
 * Write DIR/mapping.txt (every entry, "SOURCE=DESTINATION" a line, as
 * oc-mirror's dry run does) and DIR/missing.txt (the entries not present
 * in the store, failed ones included; empty when none), each atomically,
 * DIR created with its parents.
 */
AL_EXPORT int al_plan_write(const al_plan *p, const char *dir);

/* Bytes available to an unprivileged writer on the file system holding
 * path (statvfs f_bavail * f_frsize). AL_EIO naming path. */
AL_EXPORT int al_fs_free_space(const char *path, uint64_t *avail);

/*
 * 0 when need bytes fit on the file system of path, else AL_EIO with
 * "not enough space for WHAT on 'PATH': N bytes needed, M bytes free"
 * (both figures named; callers add their own way out, --no-space-check).
 */
AL_EXPORT int al_space_check(const char *path, uint64_t need, const char *what);

/*
 * The lifecycle options of a mirror run (al_mirror_opts.lifecycle).
 * Inputs first; the outputs are filled by al_mirror_plan_run and freed
 * with al_mirror_lifecycle_clear.
 */
typedef struct al_mirror_lifecycle {
	/* resolve everything, fetch only the images the plan must read
	 * (releases: their image-references; catalogs: their FBC; oci://
	 * charts: their chart layer), held without a name, and download HTTP
	 * chart archives into temporary files; write mapping.txt and
	 * missing.txt, fetch no other blob */
	int dry_run;
	const char *dry_run_dir; /* NULL: STORE/airlock/dry-run */
	/* do not refuse a run whose missing bytes exceed the free space */
	int no_space_check;
	/* "docker://HOST/PREFIX": the destinations named in mapping.txt
	 * (NULL: the store, "oci:STORE:NAME") */
	const char *to;
	/* with to: where push puts each image (layout.h: oc-mirror's
	 * layout, the default, or AL_LAYOUT_SOURCE) and its
	 * --max-nested-paths (0: no limit), as al_push_target_layout */
	al_layout_kind layout;
	unsigned max_nested;

	/* out */
	/* what was resolved: kept for a dry run and for a run refused
	 * before its transfer (no image resolved, not enough space); NULL
	 * when not planned, and after a plan the run went on from (freed
	 * before the transfer) */
	al_plan *plan;
	char *dir;     /* where mapping.txt and missing.txt went */
	uint64_t free; /* bytes free on the store's file system */
	uint64_t need; /* bytes still to transfer when it was checked */
	/* bytes the plan itself fetched (release and catalog images, oci://
	 * charts) */
	uint64_t prefetched;
	uint64_t prefetched_blobs; /* and their number */
	size_t signatures_missing; /* releases without a stored signature */
} al_mirror_lifecycle;

#define AL_MIRROR_LIFECYCLE_INIT                                               \
	{                                                                      \
		.dry_run = 0                                                   \
	}

AL_EXPORT void al_mirror_lifecycle_clear(al_mirror_lifecycle *lc);

AL_END_DECL

#endif
