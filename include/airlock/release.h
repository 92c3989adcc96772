/* release.h: release payloads: release-manifests/ from the image layers,
 * image-references, release-metadata. */
#ifndef AIRLOCK_RELEASE_H
#define AIRLOCK_RELEASE_H

#include "common.h"
#include "digest.h"
#include "store.h"

AL_BEGIN_DECL

/* Bounds on what a release may carry. */
#define AL_RELEASE_FILE_MAX (8 * AL_MIB)    /* one file of release-manifests/ */
#define AL_RELEASE_TOTAL_MAX (512 * AL_MIB) /* all of release-manifests/ */

typedef struct al_release al_release;

/* One entry of image-references: spec.tags[i]. */
typedef struct al_release_component {
	const char *name;  /* tag name, e.g. "cli" */
	const char *image; /* from.name, e.g. "quay.io/...@sha256:..." */
} al_release_component;

/*
 * Read the release image whose manifest (or index: platform picks the
 * entry, NULL = "linux/amd64", falling back to the only entry) is
 * manifest in s: stream its layers (gzip or plain tar, via libarchive),
 * keep release-manifests/ in memory (bounded), apply later layers over
 * earlier ones (whiteouts honoured), parse image-references (ImageStream
 * JSON) and release-metadata. AL_ENOTFOUND if a blob is missing (or the
 * index has no entry for platform), AL_EPARSE naming the file,
 * AL_ELIMIT over the bounds, AL_EVERIFY when a layer's bytes do not
 * match its digest or size, AL_EUNSUPPORTED for a layer media type other
 * than (OCI or Docker) tar or tar+gzip.
 *
 * Details: entries "release-manifests/x", "./release-manifests/x" and
 * "/release-manifests/x" count; subdirectories, symlinks, hard links and
 * devices are ignored. A layer's ".wh.<name>" deletes <name> from lower
 * layers, "release-manifests/.wh..wh..opq" (or a whiteout of the
 * directory itself, or a root opaque marker) clears them. Layer contents
 * are applied only after the whole layer verified. image-references
 * must be {"kind":"ImageStream","spec":{"tags":[...]}}: every tag needs
 * a unique non-empty name and from.kind; tags whose from.kind is not
 * "DockerImage" are skipped; a DockerImage tag without from.name is
 * AL_EPARSE naming the tag. release-metadata, when present, must have
 * "kind":"cincinnati-metadata-v0" and a "version" ("previous": array of
 * strings and "metadata": object when present). A release without
 * image-references or without any version is AL_EPARSE. Duplicate JSON
 * keys are AL_EPARSE everywhere.
 */
AL_EXPORT int al_release_open(al_release **out, al_store *s,
                              const al_digest *manifest, const char *platform);
AL_EXPORT void al_release_free(al_release *r);

/* release-metadata "version" (or image-references metadata.name),
 * borrowed, never NULL. Every borrowed pointer below lives as long as r. */
AL_EXPORT const char *al_release_version(const al_release *r);

AL_EXPORT size_t al_release_component_count(const al_release *r);
AL_EXPORT const al_release_component *
al_release_component_at(const al_release *r, size_t i);

/* Files of release-manifests/ (excluding subdirectories), sorted by name. */
AL_EXPORT size_t al_release_file_count(const al_release *r);
/* Name (no directory) and bytes of file i, borrowed. */
AL_EXPORT const char *al_release_file_name(const al_release *r, size_t i);
AL_EXPORT const uint8_t *al_release_file_data(const al_release *r, size_t i,
                                              size_t *len);

/* Files of the image's manifests/ directory (the Cluster Version
 * Operator's own manifests, which the CVO loads before release-manifests/),
 * read from the same layers with the same whiteout rules; sorted by name.
 * An image without that directory has none. */
AL_EXPORT size_t al_release_cvo_file_count(const al_release *r);
AL_EXPORT const char *al_release_cvo_file_name(const al_release *r, size_t i);
AL_EXPORT const uint8_t *al_release_cvo_file_data(const al_release *r, size_t i,
                                                  size_t *len);

/* Write release-manifests/ into dir (created with parents; each file
 * written atomically, existing files of the same name replaced, other
 * files left alone). */
AL_EXPORT int al_release_extract(const al_release *r, const char *dir);

AL_END_DECL

#endif
