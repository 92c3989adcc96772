/* catalog.h: operator file-based catalogs (FBC): reading from image layers,
 * filtering as oc-mirror v2 does, rebuilding the catalog image. */
#ifndef AIRLOCK_CATALOG_H
#define AIRLOCK_CATALOG_H

#include "common.h"
#include "buf.h"
#include "digest.h"
#include "imageset.h"
#include "oci.h"
#include "store.h"
#include "transfer.h"

AL_BEGIN_DECL

/*
 * Thread safety: an al_catalog is immutable once al_catalog_finish (or
 * al_catalog_open_image / al_catalog_filter) returned it: several threads
 * may read one catalog at once. Building one (add_file, finish) is for
 * one thread. Every function is reentrant.
 */

/* The config label naming the FBC directory (operator-registry). */
#define AL_CATALOG_LABEL "operators.operatorframework.io.index.configs.v1"
/* The label of SQLite-based catalogs (OpenShift 4.10 and earlier). */
#define AL_CATALOG_DB_LABEL "operators.operatorframework.io.index.database.v1"

/* Bounds (docs/operators.md). */
#define AL_CATALOG_FILE_MAX (256 * AL_MIB)   /* one file of the FBC */
#define AL_CATALOG_TOTAL_MAX (1024 * AL_MIB) /* all FBC files together */
#define AL_CATALOG_FILES_MAX 100000          /* files under the FBC dir */
#define AL_CATALOG_OBJECTS_MAX 2000000       /* FBC objects (blobs) */
#define AL_CATALOG_NAME_MAX 1024 /* package, channel and bundle names */

typedef struct al_catalog al_catalog;

/*
 * Build a catalog from files: new, add_file for each file, finish. A
 * file whose first non-blank byte is '{' is a stream of JSON objects,
 * anything else a (multi-document) YAML stream, as operator-registry's
 * declcfg.WalkMetasReader decides. Every object needs a "schema";
 * olm.package, olm.channel, olm.bundle and olm.deprecations are
 * checked, other schemas kept as they are. add_file: AL_EPARSE naming
 * path (and the object's position) for bad syntax or duplicate keys,
 * AL_ELIMIT over the bounds above. finish indexes and validates as
 * declcfg.ConvertToModel does (unique names, every channel entry has a
 * bundle, every bundle is in a channel, one olm.package property whose
 * packageName matches and whose version is semver, a default channel
 * that exists, exactly one head and no cycle per channel, skipRange a
 * valid range): AL_EPARSE naming package/channel/bundle.
 */
AL_EXPORT int al_catalog_new(al_catalog **out);
AL_EXPORT int al_catalog_add_file(al_catalog *c, const char *path,
                                  const uint8_t *p, size_t n);
AL_EXPORT int al_catalog_finish(al_catalog *c);
/* NULL is a no-op. */
AL_EXPORT void al_catalog_free(al_catalog *c);

/*
 * Read the catalog image manifest (an index: the platform entry, NULL =
 * "linux/amd64", or its only entry) from s: the config's
 * AL_CATALOG_LABEL names the FBC directory; the layers are streamed
 * (tar or tar+gzip), each verified against its digest, later layers
 * over earlier ones with whiteouts and opaque directories honoured; the
 * files under the directory are parsed as above. Nothing from the image
 * is executed. *configs_dir (may be NULL) receives the directory without
 * leading or trailing '/' (caller frees). AL_EUNSUPPORTED for a
 * SQLite-based catalog (AL_CATALOG_DB_LABEL without AL_CATALOG_LABEL),
 * for symlinks or hard links under the directory and for layer media
 * types other than tar / tar+gzip; AL_EPARSE for an image without
 * either label; AL_EVERIFY for a layer that does not match its digest.
 */
AL_EXPORT int al_catalog_open_image(al_catalog **out, char **configs_dir,
                                    al_store *s, const al_digest *manifest,
                                    const char *platform);

/* What the image is, from its config's labels only: 1 a file-based
 * catalog, 2 a SQLite-based catalog, 0 not a catalog; negative when the
 * manifest or config cannot be read (a missing blob, an image index
 * without the platform). */
AL_EXPORT int al_catalog_image_kind(al_store *s, const al_digest *manifest,
                                    const char *platform);

/* Packages, sorted by name. Borrowed strings live as long as c. */
AL_EXPORT size_t al_catalog_package_count(const al_catalog *c);
AL_EXPORT const char *al_catalog_package_name(const al_catalog *c, size_t i);
/* "" when the package has none. */
AL_EXPORT const char *al_catalog_default_channel(const al_catalog *c, size_t i);
/* Bundles in all packages. */
AL_EXPORT size_t al_catalog_bundle_count(const al_catalog *c);

/*
 * A deterministic text summary, one line per package, then per channel
 * and the bundles, for tests and `airlock catalog`:
 *   package P default=D
 *   channel P/C head=H entries=E1,E2 (sorted)
 *   bundles P: B1,B2 (sorted)
 *   deprecations P: schema/name,... (only when present)
 * Caller frees.
 */
AL_EXPORT char *al_catalog_summary(const al_catalog *c);

/* A filter, as oc-mirror v2's ImageSetConfiguration mirror.operators[]
 * (v2alpha1.Operator / IncludePackage / IncludeChannel). NULL or ""
 * strings mean "not given". */
typedef struct al_catalog_channel_filter {
	const char *name;
	const char *min_version;
	const char *max_version;
} al_catalog_channel_filter;

typedef struct al_catalog_package_filter {
	const char *name;
	const char *default_channel;
	const char *min_version;
	const char *max_version;
	const al_catalog_channel_filter *channels;
	size_t nchannels;
	const char *const *bundles; /* bundles[].name */
	size_t nbundles;
} al_catalog_package_filter;

typedef struct al_catalog_filter {
	const al_catalog_package_filter *packages;
	size_t npackages;
	int full;
	int skip_dependencies;
} al_catalog_filter;

/*
 * Select from in what f asks for (rules and examples: docs/operators.md)
 * into a new catalog *out (validated like finish). Configurations
 * oc-mirror refuses (full with a range or bundles, channels with a
 * package range, bundles with a range, an empty default channel, a
 * default channel filtered out without defaultChannel) and filters that
 * match nothing are AL_EINVAL / AL_ENOTFOUND naming the package, channel
 * or version and listing what exists.
 */
AL_EXPORT int al_catalog_filter_apply(al_catalog **out, const al_catalog *in,
                                      const al_catalog_filter *f);

/*
 * Dependencies the filter could not satisfy from this catalog (an
 * olm.package.required or olm.gvk.required nothing here provides), as
 * messages naming the bundle and what it needs; 0 for a catalog that
 * did not come from al_catalog_filter_apply. Borrowed.
 */
AL_EXPORT size_t al_catalog_unresolved_count(const al_catalog *c);
AL_EXPORT const char *al_catalog_unresolved_at(const al_catalog *c, size_t i);

/*
 * Every image the catalog needs: each bundle's image and each entry of
 * its relatedImages, deduplicated and sorted. Caller frees each string
 * and the array (al_catalog_images_free).
 */
AL_EXPORT int al_catalog_images(const al_catalog *c, char ***out, size_t *n);
AL_EXPORT void al_catalog_images_free(char **v, size_t n);

/*
 * Package i as `opm render` writes it (declcfg.WriteJSON): the
 * olm.package object, its channels and bundles sorted by name, other
 * objects, its olm.deprecations, each indented with 4 spaces and
 * followed by a newline. Appended to out (AL_ELIMIT at its maximum).
 * AL_CATALOG_GLOBAL_NAME stands for objects that belong to no package
 * (al_catalog_render_global).
 */
#define AL_CATALOG_GLOBAL_NAME "__global"
AL_EXPORT int al_catalog_render_package(const al_catalog *c, size_t i,
                                        al_buf *out);
/* 1 if there are objects without a package (and appends them). */
AL_EXPORT int al_catalog_render_global(const al_catalog *c, al_buf *out);
/*
 * The same, as a stream: fn receives the rendered bytes in pieces (each
 * object's text, then its newline), in order, and returns 0 or a
 * negative AL_E* code, which stops the rendering and is returned.
 * al_catalog_render_global_to returns 1 when it wrote objects, 0 when
 * there are none. Memory: one object's text at a time.
 */
typedef int (*al_catalog_sink)(void *ud, const char *p, size_t n);
AL_EXPORT int al_catalog_render_package_to(const al_catalog *c, size_t i,
                                           al_catalog_sink fn, void *ud);
AL_EXPORT int al_catalog_render_global_to(const al_catalog *c,
                                          al_catalog_sink fn, void *ud);
/* Write DIR/<package>/catalog.json for each package (declcfg.WriteFS
 * layout), created with parents, each file written atomically. */
AL_EXPORT int al_catalog_write_dir(const al_catalog *c, const char *dir);

/*
 * Rebuild the catalog image base (a manifest in s) for c. An image
 * index is rebuilt entry by entry into a new OCI index (every platform
 * when platform is NULL, attestation entries of platform "unknown" left
 * out, each platform keeping its own base layers and config); with
 * platform, or for a single image, one OCI manifest. For each image: a new gzip
 * layer that holds only c under the image's configs directory,
 * DIR/<package>/catalog.json (an opaque whiteout hides every older file there),
 * and a whiteout of opm's serving cache (the directory of --cache-dir in the
 * config's Cmd or Entrypoint); the new config drops --cache-dir and
 * --cache-enforce-integrity from the command so that opm serve builds
 * its cache at start (docs/operators.md says why), appends the layer's
 * diff ID and a history entry, and keeps the labels. Docker layer media
 * types become their OCI equivalents (same bytes) in the new OCI
 * manifest. The layer is deterministic (fixed times and owners, gzip
 * without name or time). Writes the blobs, tags the manifest as name in
 * s when name is non-NULL, and returns its descriptor in *out (cleared
 * with al_descriptor_clear). AL_EUNSUPPORTED when the configs directory
 * is the image root or a package name is not a safe directory name.
 */
AL_EXPORT int al_catalog_rebuild(al_store *s, const al_digest *base,
                                 const char *platform, const al_catalog *c,
                                 const char *name, al_descriptor *out);

/*
 * Cluster resources for a catalog pushed as image (a pull spec,
 * registry/path:tag or @digest), appended to out as one YAML document:
 * a CatalogSource (operators.coreos.com/v1alpha1, namespace
 * openshift-marketplace, sourceType grpc; display_name may be NULL) for
 * OLM v0, a ClusterCatalog (olm.operatorframework.io/v1, source type
 * Image) for OLM v1. AL_EINVAL without name or image.
 */
AL_EXPORT int al_catalog_source_yaml(al_buf *out, const char *name,
                                     const char *image,
                                     const char *display_name);
/*
 * The same two resources as oc-mirror v2 writes them (clusterresources
 * generateCatalogSource, generateClusterCatalog): keys sorted as
 * sigs.k8s.io/yaml writes them, the annotations createdAt (created_at),
 * createdBy ("airlock") and oc-mirror_version (airlock's version), and in
 * the ClusterCatalog spec.priority 0 (a field without omitempty). name
 * and image must be plain YAML scalars (a DNS label, a pull spec):
 * AL_EINVAL otherwise, and without name, image or created_at.
 */
AL_EXPORT int al_catalog_source_yaml_ocmirror(al_buf *out, const char *name,
                                              const char *image,
                                              const char *created_at);
AL_EXPORT int al_cluster_catalog_yaml_ocmirror(al_buf *out, const char *name,
                                               const char *image,
                                               const char *created_at);
AL_EXPORT int al_cluster_catalog_yaml(al_buf *out, const char *name,
                                      const char *image);
/* "<prefix>-<repository basename>-<suffix>" lowercased, other characters
 * '-', at most 63 bytes (a DNS-1123 label), as oc-mirror v2 names them
 * (clusterresources generateCatalogSource): the suffix is the first 12
 * characters of the tag ("cs-redhat-operator-index-v4-16"), of the
 * digest's hex for an image named by digest only, or "0". Caller frees;
 * NULL on failure. */
AL_EXPORT char *al_catalog_resource_name(const char *prefix, const char *image);

/*
 * One mirror.operators[] entry (imageset.h) on a store. al_catalog_names:
 * the store name of the source catalog (the reference without
 * docker://, normalised), of the rebuilt one
 * (REGISTRY/(targetCatalog|repository):(targetTag|tag|latest)) and the
 * target repository path; caller frees all three. An oci:DIR[:NAME]
 * catalog is named localhost/(targetCatalog|DIR base name):
 * (targetTag|NAME|latest) for both (copy it there first, e.g. with
 * transfer.h). A catalog named by digest without targetTag is tagged
 * with the digest's hex (its CatalogSource: cs-REPO-<12 hex>);
 * AL_EPARSE for a bad reference.
 */
AL_EXPORT int al_catalog_names(const al_imageset_operator *op,
                               char **source_name, char **target_name,
                               char **target_repo);

/* What al_catalog_select produced. Free with al_catalog_selection_free. */
typedef struct al_catalog_selection {
	char *source_name;
	char *target_name;
	char *target_repo;
	al_catalog *filtered;  /* the selection */
	al_descriptor rebuilt; /* the rebuilt image (media_type NULL when not
	                        * rebuilt) */
	char **images;         /* al_catalog_images of the selection */
	size_t nimages;
} al_catalog_selection;

/*
 * The whole step for one entry whose catalog image is in s: find it
 * (AL_ENOTFOUND), read it, filter it as the entry says, list its images
 * and, when rebuild, rebuild and tag it under target_name. Messages name
 * the catalog. Fetching the catalog and the images is the caller's
 * (transfer.h), so that they share one transfer with everything else.
 */
AL_EXPORT int al_catalog_select(al_catalog_selection **out, al_store *s,
                                const al_imageset_operator *op,
                                const char *platform, int rebuild);
AL_EXPORT void al_catalog_selection_free(al_catalog_selection *sel);

/*
 * Semantic versions (semver 2.0) and ranges as blang/semver (OLM's
 * skipRange and olm.package.required versionRange): "||" between
 * alternatives, space-separated comparators (>, >=, <, <=, =, ==, !=,
 * none = equal), "x" wildcards. Exposed for tests.
 */
/* 1 if s is a version as oc-mirror's minVersion/maxVersion take it
 * (semver.ParseTolerant: "v1.2" is 1.2.0), 0 if not. */
AL_EXPORT int al_catalog_version_valid(const char *s);
/* 1 if v (strict semver) satisfies range, 0 if not; AL_EPARSE if either
 * does not parse. */
AL_EXPORT int al_catalog_semver_match(const char *range, const char *v);
/* <0, 0, >0 as a precedes, equals or follows b; AL_EPARSE is reported as
 * *err (may be NULL) set to 1. */
AL_EXPORT int al_catalog_semver_cmp(const char *a, const char *b, int *err);

/* --- the whole of airlock catalog: al_catalog_run --------------------- */

/* What al_catalog_run does. */
typedef enum al_catalog_run_mode {
	/* each mirror.operators[] entry of the imageset: (fetch,) filter,
	 * rebuild, list the images it needs */
	AL_CATALOG_RUN_FILTER = 0,
	/* every operator catalog of the store, no imageset */
	AL_CATALOG_RUN_LIST,
} al_catalog_run_mode;

/* What an event of al_catalog_run reports. */
typedef enum al_catalog_run_event_kind {
	/* could not do something; subject is the context (what was being
	 * done), al_error_message() the reason, status the code */
	AL_CATALOG_RUN_EV_FAILED,
	/* an error said as it is (a failed image: subject, message; or
	 * message alone) */
	AL_CATALOG_RUN_EV_ERROR,
	/* a warning: message */
	AL_CATALOG_RUN_EV_WARNING,
	/* a transfer run ended (its progress is over) */
	AL_CATALOG_RUN_EV_TRANSFER_END,
	/* what a transfer run moved: subject (what it was for), stats */
	AL_CATALOG_RUN_EV_TRANSFERRED,
	/* a catalog rebuilt: subject (its source name), target, packages,
	 * bundles, digest */
	AL_CATALOG_RUN_EV_REBUILT,
	/* LIST: one catalog of the store: subject (its name), digest,
	 * sqlite (1: an SQLite catalog, not supported; packages and bundles
	 * unset), packages, bundles */
	AL_CATALOG_RUN_EV_LISTED,
	/* one entry, one listed catalog or the run's own set-up ended:
	 * status (0 or the worst code), input (1: the configuration asks
	 * for what the catalog lacks) */
	AL_CATALOG_RUN_EV_DONE,
} al_catalog_run_event_kind;

/* One event; every pointer is borrowed for the callback's duration. */
typedef struct al_catalog_run_event {
	al_catalog_run_event_kind kind;
	int status;
	int input;
	const char *subject;
	const char *message;
	const char *target;
	size_t packages, bundles;
	int sqlite;
	al_digest digest;
	const al_transfer_stats *stats;
} al_catalog_run_event;

typedef void (*al_catalog_run_fn)(void *ud, const al_catalog_run_event *ev);

/* The version of al_catalog_run_opts this header describes. */
#define AL_CATALOG_RUN_OPTS_VERSION 1

/*
 * How to run. Initialise from AL_CATALOG_RUN_OPTS_INIT and set fields by
 * name; version: 0 reads as 1, a newer one than the library's is
 * AL_EINVAL. Every pointer is borrowed.
 */
typedef struct al_catalog_run_opts {
	unsigned version;
	al_catalog_run_mode mode;
	const char *platform; /* read (and rebuild) this platform's image;
	                       * NULL: read linux/amd64, rebuild every one */
	int dry_run;          /* filter and list, rebuild nothing */
	const char *fbc;      /* write each selection as FBC under it */
	/* write CatalogSource and ClusterCatalog YAML into resources, for
	 * catalogs pushed under registry (both or neither) */
	const char *resources;
	const char *registry;
	/* fetch each catalog into the store first, then every image its
	 * selection needs, with these settings (the imageset's sources and
	 * insecure registries added; every platform) */
	int mirror;
	const al_transfer_opts *transfer; /* NULL: defaults */
	al_catalog_run_fn on_event;       /* may be NULL */
	void *ud;
} al_catalog_run_opts;

#define AL_CATALOG_RUN_OPTS_INIT                                               \
	{                                                                      \
		.version = AL_CATALOG_RUN_OPTS_VERSION                         \
	}

/* The version of al_catalog_run_report this header describes. */
#define AL_CATALOG_RUN_REPORT_VERSION 1

/* The images every entry's selection needs, sorted, each once. Free with
 * al_catalog_run_report_clear. */
typedef struct al_catalog_run_report {
	/* AL_CATALOG_RUN_REPORT_VERSION of the caller's header, set by
	 * AL_CATALOG_RUN_REPORT_INIT (0, a zeroed struct, reads as 1; a newer
	 * one is AL_EINVAL, nothing written): the library writes no field past
	 * it */
	unsigned version;
	char **images;
	size_t nimages;
} al_catalog_run_report;

/* Every other field zero / NULL; set the version by name. */
#define AL_CATALOG_RUN_REPORT_INIT                                             \
	{                                                                      \
		.version = AL_CATALOG_RUN_REPORT_VERSION                       \
	}

/*
 * airlock catalog over store (writable unless dry_run or LIST; imageset
 * may be NULL for LIST): every failure and result is an event, each entry
 * (each listed catalog) ends with a DONE event, and report (may be NULL)
 * receives the images. Returns 0 once the run happened (the entries'
 * outcomes are their DONE events), a negative status when its set-up
 * failed (the transfer, listing the store: a FAILED and a DONE event
 * said so), or AL_EINVAL without an event when opts are refused (a
 * version newer than the library's, no imageset for FILTER, mirror with
 * dry_run, resources without registry). Prints nothing.
 */
AL_EXPORT int al_catalog_run(al_store *store, const al_imageset *imageset,
                             const al_catalog_run_opts *opts,
                             al_catalog_run_report *report);
AL_EXPORT void al_catalog_run_report_clear(al_catalog_run_report *report);

AL_END_DECL

#endif
