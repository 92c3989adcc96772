/* layout.h: where images go on a destination registry: oc-mirror v2's
 * layout (releases and their components under openshift/release-images and
 * openshift/release, the default) or the source paths, and the categories
 * and scopes of the mirror sets that follow from it (docs/push.md). */
#ifndef AIRLOCK_LAYOUT_H
#define AIRLOCK_LAYOUT_H

#include "airlock/common.h"
#include "airlock/release.h"
#include "airlock/store.h"

AL_BEGIN_DECL

/* The two layouts; zero is the default, oc-mirror's. */
typedef enum al_layout_kind {
	/* oc-mirror v2: a release at openshift/release-images:<tag>, its
	 * components at openshift/release:<tag>-<name>, the rest at their
	 * source path (release/local_stored_collector.go
	 * preparePathComponents, prepareTag) */
	AL_LAYOUT_OC_MIRROR = 0,
	/* every image at its source path (airlock before 0.x: --layout
	 * source) */
	AL_LAYOUT_SOURCE = 1,
} al_layout_kind;

/* "oc-mirror" or "source" into *out; AL_EINVAL for anything else. */
AL_EXPORT int al_layout_parse(const char *s, al_layout_kind *out);
/* "oc-mirror" or "source"; never NULL. */
AL_EXPORT const char *al_layout_name(al_layout_kind kind);

/* The repositories oc-mirror v2 gives releases and their components
 * (release/const.go releaseImagePathComponents,
 * releaseComponentPathComponents). */
#define AL_LAYOUT_RELEASE_REPO "openshift/release-images"
#define AL_LAYOUT_COMPONENT_REPO "openshift/release"

/* What an image of a store is to the mirror sets (oc-mirror v2's
 * clusterresources imageTypeToCategory). */
typedef enum al_layout_category {
	AL_LAYOUT_GENERIC = 0,  /* additionalImages and anything else */
	AL_LAYOUT_RELEASE = 1,  /* a release image or one of its components */
	AL_LAYOUT_OPERATOR = 2, /* a bundle or related image of a catalog */
	AL_LAYOUT_CATALOG = 3,  /* a catalog image: in no mirror set */
} al_layout_category;

/* "release", "operator" or "generic" (mirrorCategory toString): the
 * middle of idms-<category>-0. Catalog images: "operator". */
AL_EXPORT const char *al_layout_category_name(al_layout_category c);

/*
 * The tag of a release for oc-mirror's layout: the tag of its reference,
 * or the hex of its digest when it has none (local_stored_collector.go
 * prepareTag, OCPBUGS-44033). Caller frees. AL_EPARSE when release is not
 * a docker reference.
 */
AL_EXPORT int al_layout_release_tag(const char *release, char **out);

/*
 * Mirror-set scope (clusterresources attemptNamespaceScope): when the
 * destination repository path ends with the source repository path, both
 * are cut to their namespace ("quay.io/a/b" -> "quay.io/a", a repository
 * at the root of a registry -> the registry), else both stay whole
 * repositories. force_repository keeps them whole (oc-mirror's
 * repositoryScope). src and dst are "HOST/PATH" without tag or digest.
 * Caller frees *src_scope and *dst_scope. AL_EINVAL for a name without a
 * '/'.
 */
AL_EXPORT int al_layout_scope(const char *src, const char *dst,
                              int force_repository, char **src_scope,
                              char **dst_scope);

/* What the store's records say about its images (opaque). */
typedef struct al_layout al_layout;

/*
 * Read the records of s once: every release (airlock/releases.json) and
 * its components (image-references of the release image, read from the
 * store; a release whose image is not in the store has no components
 * here), every catalog (its images and catalog images). AL_EPARSE,
 * AL_ENOTFOUND as al_store_releases_list, al_store_catalogs_list and
 * al_release_open; a release that cannot be read fails the whole. Free
 * with al_layout_free.
 */
AL_EXPORT int al_layout_open(al_layout **out, al_store *s, al_layout_kind kind);

/* An empty layout of kind, for releases known before the store records
 * them (mirror --dry-run's mapping.txt): fill with al_layout_add_release.
 * Free with al_layout_free. AL_ENOMEM. */
AL_EXPORT int al_layout_new(al_layout **out, al_layout_kind kind);

/*
 * Add the release named release (a docker reference, as a record's
 * "source") and, when r is not NULL, its components, as al_layout_open
 * adds a record: the same names and tags; a name already placed gains
 * each further place (the component of another release), a name
 * already there unplaced (an image the catalogs name) stays unplaced.
 * Called once without r (the release known, its image not yet read) and
 * again with r, the components join. AL_EPARSE when release is not a
 * docker reference, AL_ENOMEM.
 */
AL_EXPORT int al_layout_add_release(al_layout *l, const char *release,
                                    const al_release *r);
AL_EXPORT void al_layout_free(al_layout *l);
AL_EXPORT al_layout_kind al_layout_kind_of(const al_layout *l);

/* The category of the store image named name (its index.json name). */
AL_EXPORT al_layout_category al_layout_category_of(const al_layout *l,
                                                   const char *name);

/*
 * How many places the layout gives the store image named name under
 * AL_LAYOUT_OC_MIRROR: one for a release; for a component, one per
 * release and component name that reference it (oc-mirror's
 * prepareM2DCopyBatch makes one copy per release, so a component shared
 * by 4.14.1 and 4.14.2 is at openshift/release:4.14.1-x86_64-<name> and
 * at openshift/release:4.14.2-x86_64-<name>); in the order the releases
 * were recorded. 0 when the image keeps its source path (every image
 * under AL_LAYOUT_SOURCE).
 */
AL_EXPORT size_t al_layout_place_count(const al_layout *l, const char *name);

/*
 * Place number place (from 0) of the store image named name, as a path
 * and a tag under the destination prefix: 1 with *repo
 * ("openshift/release-images" or "openshift/release") and *tag set
 * (caller frees both); 0 (nothing set) when place is not below
 * al_layout_place_count; AL_ENOMEM.
 */
AL_EXPORT int al_layout_place_at(const al_layout *l, const char *name,
                                 size_t place, char **repo, char **tag);

/* al_layout_place_at(l, name, 0, repo, tag): the first place. */
AL_EXPORT int al_layout_place(const al_layout *l, const char *name, char **repo,
                              char **tag);

AL_END_DECL

#endif
