/* mirror.h: mirroring releases (release image + every component image) and additional images into the store. */
#ifndef AIRLOCK_MIRROR_H
#define AIRLOCK_MIRROR_H

#include "common.h"
#include "digest.h"
#include "store.h"
#include "transfer.h"

/* What happened to one release. */
typedef struct al_mirror_release {
	char *source;        /* the reference asked for */
	char *version;       /* from release-metadata (NULL if it failed early) */
	al_digest digest;    /* release image manifest digest */
	size_t components;   /* images in image-references */
	size_t components_failed;
	int status;          /* 0 or the worst negative al_status */
	char *message;       /* first error, NULL on success */
} al_mirror_release;

typedef struct al_mirror_report {
	al_mirror_release *releases;
	size_t nreleases;
	size_t additional;          /* additional images asked for */
	size_t additional_failed;
	char **errors;              /* every image error message */
	size_t nerrors;
	al_transfer_stats stats;    /* blobs and bytes over all runs */
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
AL_EXPORT int al_mirror(al_store *s, const char *const *releases, size_t nreleases, const char *const *additional, size_t nadditional, const al_transfer_opts *opts, al_mirror_report *report);
AL_EXPORT void al_mirror_report_clear(al_mirror_report *report);

#endif
