/* imageset.h: the ImageSetConfiguration (mirror.openshift.io/v2alpha1 subset
 * plus airlock: fields). */
#ifndef AIRLOCK_IMAGESET_H
#define AIRLOCK_IMAGESET_H

#include "common.h"

AL_BEGIN_DECL

/* Thread safety: every function here is reentrant; distinct objects may be
 * used from different threads at once. */

/*
 * Where images under a source prefix are really read from, e.g.
 * prefix "quay.io/airlock-samples", location "oci:/abs/samples/layout"
 * or "docker://127.0.0.1:5000/mirror". A relative oci: path is resolved
 * against the directory of the configuration file, so location is always
 * "oci:/ABSOLUTE/DIR" (no ":NAME") or "docker://HOST[:PORT][/PATH]".
 * prefix is "host[:port][/path]" as written, to be compared with the
 * normalised reference name (docker.io/library/..., not busybox).
 */
typedef struct al_imageset_source {
	char *prefix;
	char *location;
} al_imageset_source;

/*
 * A mirror.platform.channels entry: releases of an update channel between
 * two versions (graph.h selects them). Versions are NULL when not given.
 */
typedef struct al_imageset_channel {
	char *name;        /* "stable-4.15" */
	char *min_version; /* minVersion */
	char *max_version; /* maxVersion */
	int shortest_path; /* shortestPath: true */
	int full;          /* full: true */
	int okd;           /* type: okd (default ocp) */
} al_imageset_channel;

/* mirror.operators[].packages[].channels[] (oc-mirror IncludeChannel). */
typedef struct al_imageset_op_channel {
	char *name;
	char *min_version; /* NULL when not given */
	char *max_version;
} al_imageset_op_channel;

/* mirror.operators[].packages[] (oc-mirror IncludePackage). */
typedef struct al_imageset_op_package {
	char *name;
	char *default_channel; /* NULL when not given */
	char *min_version;
	char *max_version;
	al_imageset_op_channel *channels;
	size_t nchannels;
	char **bundles; /* bundles[].name */
	size_t nbundles;
} al_imageset_op_package;

/* mirror.operators[] (oc-mirror v2alpha1.Operator). */
typedef struct al_imageset_operator {
	char *catalog;        /* as written; an oci: path made absolute */
	char *target_catalog; /* NULL when not given */
	char *target_tag;
	int full;
	int skip_dependencies;
	al_imageset_op_package *packages;
	size_t npackages;
	size_t line; /* of the entry, for messages */
} al_imageset_operator;

/* mirror.helm.repositories[].charts[] and mirror.helm.local[] (oc-mirror
 * v2alpha1.Chart), docs/helm.md. */
typedef struct al_imageset_helm_chart {
	char *name;
	char *version; /* exact version; NULL: the latest stable (Helm's
	                  IndexFile.Get); always NULL for local[] */
	char *path;    /* local[]: the chart archive (.tgz), made absolute */
	char **image_paths; /* imagePaths: paths into the chart's values */
	size_t nimage_paths;
	size_t line; /* of the entry, for messages */
} al_imageset_helm_chart;

/* mirror.helm.repositories[] (oc-mirror v2alpha1.Repository). */
typedef struct al_imageset_helm_repo {
	char *name;
	char *url; /* http(s):// chart repository or oci:// namespace */
	al_imageset_helm_chart *charts;
	size_t ncharts;
	/* no charts: every version of every chart of the index that is not
	 * a library chart (oc-mirror getChartsFromIndex) */
	int all_charts;
	size_t line;
} al_imageset_helm_repo;

typedef struct al_imageset {
	char **releases; /* mirror.platform.release: one string or a list */
	size_t nreleases;
	char **architectures; /* mirror.platform.architectures (default none) */
	size_t narchitectures;
	char **additional; /* mirror.additionalImages[].name */
	size_t nadditional;
	al_imageset_source *sources; /* airlock.sources */
	size_t nsources;
	/* airlock.insecureRegistries: hosts with --tls-verify=false */
	char **insecure;
	size_t ninsecure;
	char *path;                    /* the file it was read from */
	al_imageset_channel *channels; /* mirror.platform.channels */
	size_t nchannels;
	char *graph_url; /* airlock.graph.url (NULL: the default service) */
	int graph_exclude_conditional; /* airlock.graph.excludeConditional */
	/* airlock.signatures: release signature verification for mirror */
	char **
	    keyrings; /* keyrings: trusted OpenPGP keys (paths made absolute) */
	size_t nkeyrings;
	char **signature_stores; /* stores: http(s) URLs, directories or
	                            ConfigMap files (paths made absolute) */
	size_t nsignature_stores;
	char *identity_policy; /* identityPolicy: exact|repository|ignore (NULL:
	                          default) */
	char
	    *signature_timeout; /* timeout: a duration ("30s"), NULL: default */
	/* mirror.operators, only with AL_IMAGESET_OPERATORS */
	al_imageset_operator *operators;
	size_t noperators;
	/* --- oc-mirror fields as users have them (docs/imageset.md) --- */
	int api_version;   /* 2: mirror.openshift.io/v2alpha1, 1: v1alpha2 (the
	                      last document's, when there are several) */
	size_t ndocuments; /* YAML documents read (their union is kept) */
	/* archiveSize: GiB per archive, in bytes (0: not given); the default
	 * of `airlock pack --volume-size` (al_imageset_record_defaults) */
	uint64_t archive_size;
	/* storageConfig.local.path (v1alpha2), made absolute: the store when
	 * --store is not given; NULL when absent */
	char *store_path;
	/* mirror.blockedImages[].name: regular expressions (POSIX extended,
	 * checked at load); a reference that matches is not mirrored */
	char **blocked;
	size_t nblocked;
	/* mirror.samples[].name: accepted and reported as not mirrored */
	char **samples;
	size_t nsamples;
	/* mirror.platform.kubeVirtContainer: also mirror the KubeVirt boot
	 * image each release names (0000_50_installer_coreos-bootimages) */
	int kubevirt;
	/* mirror.platform.platforms[]: "os/architecture" */
	char **platforms;
	size_t nplatforms;
	/* what the file says that airlock reads differently from oc-mirror
	 * or does not act on ("samples are not mirrored"), one sentence
	 * each with "path:line:column: "; al_mirror_plan_new logs them */
	char **notes;
	size_t nnotes;
	/* mirror.additionalImages[].platforms, parallel to additional (NULL
	 * when no image has one): NULL for an image without platforms, else
	 * its "os/architecture" (one); several platforms leave it NULL (the
	 * whole index) with a note */
	char **additional_platforms;
	/* mirror.helm (docs/helm.md) */
	al_imageset_helm_repo *helm_repos;
	size_t nhelm_repos;
	al_imageset_helm_chart *helm_local;
	size_t nhelm_local;
	/* mirror.platform.graph: true: build the update service's graph-data
	 * image after the releases (docs/graph.md) */
	int graph;
	/* mirror.additionalImages[].targetRepo / targetTag: NULL-terminated
	 * pairs (the image's name, the name it is stored and pushed under:
	 * al_imageset_target_name); NULL when no image has one */
	char **additional_renames;
	size_t nadditional_renames; /* pairs */
} al_imageset;

/* Largest configuration file accepted (AL_ELIMIT beyond). */
#define AL_IMAGESET_MAX_BYTES (1024 * 1024)

/*
 * Load path. kind must be ImageSetConfiguration and apiVersion
 * mirror.openshift.io/v2alpha1 or v1alpha2 (oc-mirror v1: storageConfig,
 * no platform.release); several YAML documents are read as their union
 * (cfg->notes says so). Any field not understood is AL_EPARSE
 * "<path>:<line>:<column>: unknown field 'x' in mirror.platform";
 * oc-mirror features airlock does not implement (helm platforms,
 * storageConfig.registry; operators
 * without AL_IMAGESET_OPERATORS) are AL_EUNSUPPORTED with position.
 * Channel entries need a
 * name; minVersion/maxVersion must be semantic versions with
 * minVersion <= maxVersion (AL_EPARSE with position). Image references
 * are validated (al_ref_parse) with position in the message.
 * Missing file: AL_ENOTFOUND. Caller frees *out with al_imageset_free.
 * docs/imageset.md lists the supported fields.
 */
AL_EXPORT int al_imageset_load(al_imageset **out, const char *path);

/*
 * al_imageset_load with flags. AL_IMAGESET_OPERATORS: read
 * mirror.operators[] into cfg->operators (catalog, targetCatalog,
 * targetTag, full, skipDependencies, packages[] with name,
 * defaultChannel, minVersion, maxVersion, channels[] with name,
 * minVersion, maxVersion, and bundles[] with name); any other field is
 * refused with its position. Without the flag operators stay
 * AL_EUNSUPPORTED, so a command that does not mirror them never ignores
 * them (docs/operators.md).
 */
#define AL_IMAGESET_OPERATORS 1
AL_EXPORT int al_imageset_load_ex(al_imageset **out, const char *path,
                                  int flags);
AL_EXPORT void al_imageset_free(al_imageset *cfg);

/*
 * The kind of the configuration file at path, from its first YAML
 * document's "kind": AL_IMAGESET_KIND_MIRROR (ImageSetConfiguration),
 * AL_IMAGESET_KIND_DELETE (DeleteImageSetConfiguration, loaded with
 * delete.h's al_delete_config_load), or 0 (none of them, or not a
 * mapping: the loader says why). AL_ENOTFOUND, AL_EIO, AL_ELIMIT, or
 * AL_EPARSE when the file is not YAML.
 */
#define AL_IMAGESET_KIND_MIRROR 1
#define AL_IMAGESET_KIND_DELETE 2
AL_EXPORT int al_imageset_file_kind(const char *path, int *kind);

/*
 * 1 when ref (a docker reference as written, or its normalised form
 * "docker.io/library/x:latest") matches one of cfg->blocked, as oc-mirror
 * matches blockedImages: an unanchored regular-expression search
 * (regexp.MatchString) against the reference without its transport.
 * *pattern (may be NULL) gets the pattern that matched, borrowed.
 */
AL_EXPORT int al_imageset_blocked(const al_imageset *cfg, const char *ref,
                                  const char **pattern);

/*
 * Record what the imageset says about later steps in the store (today
 * archiveSize: airlock/defaults.json "packVolumeSize", read by
 * al_imageset_pack_volume_default). Nothing is written when the imageset
 * has nothing to say. store_path is the store's directory.
 */
AL_EXPORT int al_imageset_record_defaults(const al_imageset *cfg,
                                          const char *store_path);

/*
 * The default volume size for `airlock pack` recorded by a mirror from
 * the imageset's archiveSize: *bytes, or 0 when none is recorded.
 * AL_EPARSE naming the file when it is not what
 * al_imageset_record_defaults wrote.
 */
AL_EXPORT int al_imageset_pack_volume_default(const char *store_path,
                                              uint64_t *bytes);

/*
 * The store name of the additional image ref mirrored with target_repo
 * and/or target_tag (either may be NULL or ""), as oc-mirror v2 names its
 * destination (additional/local_stored_collector.go resolveTargetRepoTag,
 * buildMirrorToDiskPaths): the source registry, target_repo (default: the
 * source repository), then target_tag, else the source tag, else the
 * source digest (push adds the tag sha256-<hex>), else "latest". *out is
 * NULL when neither is given. AL_EPARSE: target_repo is not a path
 * (al_imageset_target_repo_valid), or the name is not a reference (a bad
 * tag). Caller frees *out.
 */
AL_EXPORT int al_imageset_target_name(char **out, const char *ref,
                                      const char *target_repo,
                                      const char *target_tag);
/* 1 when s matches oc-mirror v2's IsValidPathComponent: components of
 * [a-z0-9]+ joined by '.', '_', '__' or dashes, separated by '/'. */
AL_EXPORT int al_imageset_target_repo_valid(const char *s);
/* The name renames (pairs as cfg->additional_renames; may be NULL) gives
 * ref, or NULL. Borrowed from renames. */
AL_EXPORT const char *al_imageset_rename_of(const char *const *renames,
                                            const char *ref);
AL_END_DECL

#endif
