/* oci.h: OCI and Docker schema2 manifests and indexes: media types,
 * descriptors, strict parsing. */
#ifndef AIRLOCK_OCI_H
#define AIRLOCK_OCI_H

#include "common.h"
#include "digest.h"

AL_BEGIN_DECL

#define AL_MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define AL_MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define AL_MT_OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define AL_MT_OCI_LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"
#define AL_MT_OCI_LAYER "application/vnd.oci.image.layer.v1.tar"
#define AL_MT_OCI_LAYER_ZSTD "application/vnd.oci.image.layer.v1.tar+zstd"
#define AL_MT_DOCKER_MANIFEST                                                  \
	"application/vnd.docker.distribution.manifest.v2+json"
#define AL_MT_DOCKER_LIST                                                      \
	"application/vnd.docker.distribution.manifest.list.v2+json"
#define AL_MT_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
#define AL_MT_DOCKER_LAYER_GZIP                                                \
	"application/vnd.docker.image.rootfs.diff.tar.gzip"

#define AL_MT_DOCKER_LAYER "application/vnd.docker.image.rootfs.diff.tar"
#define AL_MT_DOCKER_SCHEMA1                                                   \
	"application/vnd.docker.distribution.manifest.v1+json"
#define AL_MT_DOCKER_SCHEMA1_SIGNED                                            \
	"application/vnd.docker.distribution.manifest.v1+prettyjws"

/* Bounds on what al_manifest_parse accepts (as containers/image: 4 MiB). */
#define AL_OCI_MANIFEST_MAX (4 * AL_MIB)
/* layers of a manifest, entries of an index */
#define AL_OCI_ENTRIES_MAX 10000

/* Index annotation naming an image in an OCI layout. */
#define AL_ANNOT_REF_NAME "org.opencontainers.image.ref.name"
/* An index.json entry stored under another name than the reference it
 * was mirrored from (imageset targetRepo/targetTag) carries that
 * reference here: the source of its mirror-set entries (docs/store.md). */
#define AL_ANNOT_ORIGIN "io.airlock.image.origin"

typedef struct al_descriptor {
	char *media_type;
	al_digest digest;
	uint64_t size;
	char *artifact_type; /* NULL when absent */
	/* platform, for index entries; NULL when absent */
	char *os;
	char *arch;
	char *variant;
} al_descriptor;

typedef struct al_manifest {
	char *media_type; /* from the body, or the hint */
	int is_index;     /* OCI index or Docker manifest list */
	/* image manifest */
	al_descriptor config;
	al_descriptor *layers;
	size_t nlayers;
	/* index */
	al_descriptor *manifests;
	size_t nmanifests;
	/* OCI 1.1 subject (referrers), present when has_subject */
	int has_subject;
	al_descriptor subject;
	char *artifact_type; /* top-level artifactType; NULL when absent */
} al_manifest;

/*
 * Parse manifest or index bytes into *out (cleared with al_manifest_clear;
 * written only on success). hint is the Content-Type or descriptor media
 * type (may be NULL) used when the body has no mediaType; with neither,
 * a body with "manifests" is an OCI index and one with "config" an OCI
 * manifest. The body's mediaType wins over the hint. schemaVersion must
 * be 2. Duplicate keys, missing digests/sizes, bad digests, negative or
 * non-integer sizes, wrongly typed optional fields (platform, urls,
 * annotations, artifactType, subject): AL_EPARSE; more than
 * AL_OCI_MANIFEST_MAX bytes or AL_OCI_ENTRIES_MAX entries: AL_ELIMIT;
 * Docker schema1 and unknown media types: AL_EUNSUPPORTED (a digest with
 * an unknown algorithm also gives AL_EUNSUPPORTED). what names the source
 * in messages.
 */
AL_EXPORT int al_manifest_parse(al_manifest *out, const uint8_t *p, size_t n,
                                const char *hint, const char *what);
/* Free what m holds and zero it; NULL is a no-op. */
AL_EXPORT void al_manifest_clear(al_manifest *m);
/* Free what d holds and zero it; NULL is a no-op. */
AL_EXPORT void al_descriptor_clear(al_descriptor *d);
/* Deep copy (AL_ENOMEM); *out is written only on success. */
AL_EXPORT int al_descriptor_copy(al_descriptor *out, const al_descriptor *in);

/* JSON forms of a descriptor: src/registry/oci_int.h (library internal). */

/* 1 if media_type is a manifest or index type we handle. */
AL_EXPORT int al_media_type_is_manifest(const char *media_type);
AL_EXPORT int al_media_type_is_index(const char *media_type);

/* 1 if the descriptor's platform matches "os/arch[/variant]". Without a
 * variant in platform any variant matches; a descriptor without platform
 * matches nothing. */
AL_EXPORT int al_platform_match(const al_descriptor *d, const char *platform);

AL_END_DECL

#endif
