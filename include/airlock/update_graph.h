/* update_graph.h: the updater's payload: manifest file names, the
 * documents kept (library-go Manifest.Include), image substitution and the
 * run-level task graph (src/update/update_graph.c). Included by update.h. */
#ifndef AIRLOCK_UPDATE_GRAPH_H
#define AIRLOCK_UPDATE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "release.h"

AL_BEGIN_DECL

/* Bounds and names of a payload. */
#define AL_UPDATE_MAX_TASKS 100000   /* manifests (objects) in one payload */
#define AL_UPDATE_MAX_LEFT_OUT 10000 /* left-out documents listed in a plan */
#define AL_UPDATE_DEFAULT_PROFILE "self-managed-high-availability"
#define AL_UPDATE_PLACEHOLDER_REPO "registry.ci.openshift.org/openshift"
#define AL_UPDATE_PLACEHOLDER_VERSION "0.0.1-snapshot"

/*
 * Parse a manifest file name with the Cluster Version Operator's pattern
 * (pkg/payload reMatchPattern, ^0000_(\d+)_([a-zA-Z0-9]+(-[a-zA-Z0-9]+)*?)_):
 * a match gives *numbered = 1, *level the run level's digits as a number
 * (UINT_MAX when larger; the graph compares the digits as strings, as the
 * CVO does) and *component (caller frees). Any other name (no "0000_"
 * prefix, no digits, no '_' after the component, a component with a
 * leading, trailing or double '-') gives *numbered = 0, *level 0 and
 * *component NULL: such files run serially in their place in file order.
 * Errors: AL_EINVAL (NULL name), AL_ENOMEM.
 */
AL_EXPORT int al_update_parse_name(const char *file, int *numbered,
                                   unsigned *level, char **component);

/* One manifest file (borrowed). */
typedef struct al_update_file {
	const char *name;
	const uint8_t *data;
	size_t len;
} al_update_file;

/* One image of image-references (borrowed). */
typedef struct al_update_image {
	const char *tag;
	const char *image;
} al_update_image;

/* A ClusterVersion spec.overrides entry with unmanaged: true (borrowed
 * strings; group "" for the core API; ns NULL or "" for none). */
typedef struct al_update_override {
	const char *group, *kind, *ns, *name;
} al_update_override;

/* The version of al_update_load_opts this header describes. */
#define AL_UPDATE_LOAD_OPTS_VERSION 1

typedef struct al_update_load_opts {
	/* AL_UPDATE_LOAD_OPTS_VERSION of the caller's header (0, a zeroed
	 * struct, reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	const char *
	    profile; /* include.release.openshift.io/<profile>; NULL: default */
	const char *exclude; /* skip exclude.release.openshift.io/<id>: "true";
	                        may be NULL */
	/* the release's version: replaces AL_UPDATE_PLACEHOLDER_VERSION;
	 * required */
	const char *release_version;
	const al_update_image *images; /* image-references */
	size_t nimages;
	/* The cluster's filters (library-go manifest.Include; docs/updater.md
	 * "What is applied"). feature_set: the cluster's spec.featureSet,
	 * NULL or "" meaning "Default" (always applied, as the CVO does). */
	const char *feature_set;
	/* Enabled feature gates; used only when feature_gates_known. */
	const char *const *feature_gates;
	size_t nfeature_gates;
	int feature_gates_known;
	/* Enabled (explicitly or implicitly) capabilities and the known ones;
	 * used only when capabilities_known (else nothing is filtered on
	 * capabilities). known NULL: AL_UPDATE_KNOWN_CAPABILITIES. */
	const char *const *capabilities;
	size_t ncapabilities;
	const char *const *known_capabilities;
	size_t nknown_capabilities;
	int capabilities_known;
	/* {{.ReleaseImage}} in the image's manifests/ templates; NULL: the
	 * version. */
	const char *release_image;
	/* Objects the admin took over (ClusterVersion spec.overrides,
	 * unmanaged): left out, as library-go's Include leaves them out
	 * (getOverrideForManifest; the namespace is ignored for a
	 * cluster-scoped manifest). */
	const al_update_override *overrides;
	size_t noverrides;
} al_update_load_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_UPDATE_LOAD_OPTS_INIT                                               \
	{                                                                      \
		.version = AL_UPDATE_LOAD_OPTS_VERSION                         \
	}

/* The object of a task (a JSON object; al_update_task_json gives its
 * text). */
typedef struct al_update_object al_update_object;

/* One task: one object of one manifest file. */
typedef struct al_update_task {
	char *file;            /* manifest file name */
	size_t doc;            /* 0-based YAML document index in the file */
	al_update_object *obj; /* the object to apply (substituted) */
	const char *api_version, *kind, *name,
	    *ns;              /* borrowed from obj; ns may be NULL */
	int cluster_operator; /* a config.openshift.io ClusterOperator: gates
	                         its level */
	int create_only;      /* release.openshift.io/create-only: "true" */
	int delete_it; /* release.openshift.io/delete: "true": delete, not apply
	                */
	int job;       /* a batch/v1 Job: a barrier (the CVO's SplitOnJobs) */
	char *group;   /* API group of apiVersion ("" for core) */
	/* release.openshift.io/delete with a value other than "true": the
	 * task fails without touching the object (lib/resourcedelete
	 * ValidDeleteAnnotation) */
	int delete_invalid;
} al_update_task;

/* A component: tasks[first .. first + count) applied in order. */
typedef struct al_update_component {
	char *name; /* "" for the unnumbered group */
	size_t first;
	size_t count;
} al_update_component;

/* A run level: components[first .. first + count) applied in parallel. */
typedef struct al_update_level {
	int numbered;
	unsigned level;
	size_t first;
	size_t count;
	size_t ntasks;
	char *number; /* the run level's digits as in the file name ("05");
	                 NULL for names the CVO's pattern does not match */
} al_update_level;

typedef struct al_update_graph {
	al_update_task *tasks;
	size_t ntasks;
	al_update_component *components;
	size_t ncomponents;
	al_update_level *levels;
	size_t nlevels;
	size_t skipped;            /* documents left out (any filter, empty) */
	size_t skipped_feature;    /* of which: feature set / gate / major */
	size_t skipped_capability; /* of which: capability not enabled */
	size_t skipped_template;   /* manifests/ files whose template failed */
	size_t skipped_override;   /* documents left out: spec.overrides */
	/* The documents left out by a filter, "Kind ns/name (file #doc): why
	 * (annotation: value)", at most AL_UPDATE_MAX_LEFT_OUT of them. */
	char **left_out;
	size_t nleft_out;
} al_update_graph;

/*
 * Build the graph from release-manifests/ files (any order; sorted by name
 * here): al_update_graph_build2 without manifests/ files. Files not ending
 * in .yaml, .yml or .json are ignored. Every document is parsed
 * (multi-document YAML, JSON is YAML); empty documents are skipped; a
 * document must be a map with apiVersion, kind and metadata.name
 * (AL_EPARSE naming the file and document). Filters, duplicates and order:
 * al_update_graph_build2. A kept document with release.openshift.io/delete:
 * "true" becomes a deletion task (delete_it).
 * Substitution (in every string value of a kept document): each
 * "AL_UPDATE_PLACEHOLDER_REPO:<tag>" whose tag is in images becomes that
 * image (a tag not in images is AL_EPARSE naming the file), and each
 * AL_UPDATE_PLACEHOLDER_VERSION becomes opts->release_version. References that
 * are already full pull specs are left as they are. A graph without any
 * task is AL_EPARSE. Errors also AL_ELIMIT (over AL_UPDATE_MAX_TASKS),
 * AL_ENOMEM. Free with al_update_graph_free.
 */
AL_EXPORT int al_update_graph_build(al_update_graph **out,
                                    const al_update_file *files, size_t nfiles,
                                    const al_update_load_opts *opts);

/*
 * The CVO's full load (pkg/payload LoadUpdate, task_graph.go): the image's
 * manifests/ files (cvo, rendered as templates: {{.ReleaseImage}},
 * {{.ClusterProfile}}, {{.Images.<tag>}}, string literals; a file using
 * anything else is skipped, as the CVO skips a template that fails) come
 * first, then release-manifests/ (files), each directory in file-name
 * order. Every document is filtered as library-go's manifest.Include does
 * (exclude, feature set, feature gate, major version, profile,
 * capabilities). The same object (group, kind, namespace, name) twice in
 * one file refuses the payload before filtering (library-go
 * ParseManifests); the same object kept from two files refuses it too
 * (AL_EPARSE naming both files). Order: the flat list is split at each
 * batch/v1 Job (SplitOnJobs), then grouped as ByNumberAndComponent does:
 * a run of names with the same run-level digits (compared as strings)
 * and several components is one parallel level; anything else (one
 * component, a name the pattern does not match) runs serially in place.
 * al_update_graph_build is this with no manifests/ files.
 */
AL_EXPORT int al_update_graph_build2(al_update_graph **out,
                                     const al_update_file *cvo, size_t ncvo,
                                     const al_update_file *files, size_t nfiles,
                                     const al_update_load_opts *opts);

/* 1 when name is a feature set library-go knows ("Default",
 * "TechPreviewNoUpgrade", "DevPreviewNoUpgrade", "CustomNoUpgrade", "OKD";
 * "" is "Default"), else 0. */
AL_EXPORT int al_update_feature_set_known(const char *name);

/* The capabilities the CVO knows (openshift/api
 * KnownClusterVersionCapabilities), NULL-terminated. */
AL_EXPORT const char *const *al_update_known_capabilities(void);

/* al_update_graph_build on a release's files and image-references
 * (opts->images and opts->release_version are taken from r when NULL). */
AL_EXPORT int al_update_graph_from_release(al_update_graph **out,
                                           const al_release *r,
                                           const al_update_load_opts *opts);

AL_EXPORT void al_update_graph_free(al_update_graph *g);

/* "Kind ns/name (file #doc)" into a new string (caller frees), NULL on ENOMEM.
 */
AL_EXPORT char *al_update_task_describe(const al_update_task *t);

/* The task's object as compact JSON with keys in document order (caller
 * frees), NULL on ENOMEM. */
AL_EXPORT char *al_update_task_json(const al_update_task *t);

AL_END_DECL

#endif
