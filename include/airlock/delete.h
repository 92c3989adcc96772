/* delete.h: removing releases and images from a store (and their manifests
 * from a registry): airlock delete, oc-mirror's DeleteImageSetConfiguration
 * (docs/commands/delete.md, docs/store.md "Deleting"). */
#ifndef AIRLOCK_DELETE_H
#define AIRLOCK_DELETE_H

#include "common.h"
#include "imageset.h"
#include "store.h"
#include "transfer.h"

AL_BEGIN_DECL

/* A DeleteImageSetConfiguration channel: releases recorded in the store
 * with this channel, between the versions (NULL: unbounded). */
typedef struct al_delete_channel {
	char *name;
	char *min_version;
	char *max_version;
} al_delete_channel;

/*
 * oc-mirror's DeleteImageSetConfiguration (mirror.openshift.io/v2alpha1,
 * kind DeleteImageSetConfiguration, everything under "delete:"): the
 * subset that names store content. Strings are owned.
 */
typedef struct al_delete_config {
	char *path;
	char **releases; /* delete.platform.release */
	size_t nreleases;
	al_delete_channel *channels; /* delete.platform.channels */
	size_t nchannels;
	/* delete.platform.architectures: accepted, not a filter (a
	 * warning says so) */
	char **architectures;
	size_t narchitectures;
	int graph;     /* delete.platform.graph: only false is accepted */
	char **images; /* delete.additionalImages[].name */
	size_t nimages;
	char **catalogs; /* delete.operators[].catalog (whole catalogs) */
	size_t ncatalogs;
	/* delete.operators[] in full and delete.helm, read as an
	 * ImageSetConfiguration's mirror.operators and mirror.helm
	 * (content->operators parallel to catalogs; content->helm_repos,
	 * content->helm_local); NULL when the file has neither */
	al_imageset *content;
	int api_version; /* 2: mirror.openshift.io/v2alpha1, 1: v1alpha2 */
	/* delete.samples[].name: accepted, nothing to delete (airlock
	 * mirror stores no sample images; oc-mirror implements none) */
	size_t nsamples;
} al_delete_config;

/*
 * Load a DeleteImageSetConfiguration (apiVersion mirror.openshift.io/
 * v2alpha1 or v1alpha2: oc-mirror v2 reads both with the same types).
 * Field names in another case are read as oc-mirror's Go decoder reads
 * them (a warning names each). Unknown fields are AL_EPARSE with
 * file:line:column; oc-mirror fields airlock does not implement
 * (kubeVirtContainer) are AL_EUNSUPPORTED; an ImageSetConfiguration
 * (kind) or a "mirror:" section is refused, as oc-mirror does, so that a
 * mirror configuration never deletes by accident. Caller frees with
 * al_delete_config_free.
 */
AL_EXPORT int al_delete_config_load(al_delete_config **out, const char *path);
AL_EXPORT void al_delete_config_free(al_delete_config *cfg);

/* The version of al_delete_opts this header describes. */
#define AL_DELETE_OPTS_VERSION 1

typedef struct al_delete_opts {
	/* AL_DELETE_OPTS_VERSION of the caller's header (0, a zeroed struct,
	 * reads as 1; a newer one than the library's is AL_EINVAL;
	 * docs/architecture.md "Options structs") */
	unsigned version;
	/* releases by version ("4.14.1") or digest ("sha256:...") */
	const char *const *releases;
	size_t nreleases;
	/* images by index.json name or by digest (every name of it) */
	const char *const *images;
	size_t nimages;
	const al_delete_config *config; /* may be NULL */
	/* `airlock update --state` files: the releases they hold on to are
	 * refused unless force */
	const char *const *state_files;
	size_t nstate_files;
	int force;
	int dry_run; /* say what would go, change nothing */
	/* "docker://HOST[:PORT]/PREFIX" (as given to push): delete the
	 * manifests there too; NULL: the store only */
	const char *registry;
	const al_transfer_opts *transfer; /* http, auth, TLS (may be NULL) */
	/* where push put the images there (layout.h), when layout_given;
	 * else the layout of the store's last push to that registry and
	 * prefix, else oc-mirror's (push's default) */
	al_layout_kind layout;
	int layout_given;
} al_delete_opts;

#define AL_DELETE_OPTS_INIT                                                    \
	{                                                                      \
		.version = AL_DELETE_OPTS_VERSION                              \
	}

/* The version of al_delete_result this header describes. */
#define AL_DELETE_RESULT_VERSION 1

/* What a delete did (dry run: would do). Free with al_delete_result_clear. */
typedef struct al_delete_result {
	/* AL_DELETE_RESULT_VERSION of the caller's header, set by
	 * AL_DELETE_RESULT_INIT (0, a zeroed struct, reads as 1; a newer one is
	 * AL_EINVAL, nothing written): the library writes no field past it */
	unsigned version;
	char **releases; /* "VERSION (sha256:...)" */
	size_t nreleases;
	char **names; /* index.json names removed */
	size_t nnames;
	/* blobs nothing kept references any more: a dry run's estimate
	 * (from the manifests), a real run's figure from the gc that
	 * removed them (which also removes garbage older runs left) */
	uint64_t blobs_freed;
	uint64_t bytes_freed;
	/* "HOST/REPO@sha256:..." in the order they were (would be) deleted:
	 * indexes before their children */
	char **registry_manifests;
	size_t nregistry_manifests;
	size_t registry_gone; /* of them, the registry had no longer */
} al_delete_result;

/* Every other field zero / NULL; set the version by name. */
#define AL_DELETE_RESULT_INIT                                                  \
	{                                                                      \
		.version = AL_DELETE_RESULT_VERSION                            \
	}

AL_EXPORT void al_delete_result_clear(al_delete_result *res);

/*
 * Delete what opts names from s (open writable unless dry_run):
 * - a release: its releases.json record, its index names, its
 *   signatures/ directory, the index names of its components (names by
 *   digest only) that no kept release also uses;
 * - an image: its index names;
 * - then their sigstore attachments (sha256-<hex>.sig/.att/.sbom tags)
 *   and referrers whose subject is gone;
 * and finally every blob no kept name, release or component reaches
 * (al_mirror_check with gc). A release that a state file holds on to
 * (desired, or the newest Completed) is refused (AL_EINVAL, naming it and
 * the file) unless force. With registry, the manifests are deleted there
 * (each image where push put it: al_push_target_layout with the layout
 * above and the last push's --max-nested-paths) first (indexes before their
 * children; a digest a kept image of the same repository still needs is left),
 * so that an interrupted delete is rerun as a whole: the store still names
 * everything. Nothing named: AL_EINVAL; a key that matches nothing:
 * AL_ENOTFOUND naming it. res (cleared first) is filled on success and on
 * failure.
 */
AL_EXPORT int al_delete_run(al_store *s, const al_delete_opts *opts,
                            al_delete_result *res);

AL_END_DECL

#endif
