/* helm.h: Helm chart repositories and chart archives: index.yaml, version
 * choice, the images a chart uses (found without running templates), and
 * the chart as a Helm OCI artifact (docs/helm.md). */
#ifndef AIRLOCK_HELM_H
#define AIRLOCK_HELM_H

#include "common.h"
#include "buf.h"
#include "digest.h"

AL_BEGIN_DECL

/* Thread safety: every function here is reentrant; distinct objects may be
 * used from different threads at once. */

/* Helm's OCI media types (helm pkg/registry/constants.go). */
#define AL_HELM_CONFIG_MT "application/vnd.cncf.helm.config.v1+json"
#define AL_HELM_CHART_MT "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
#define AL_HELM_PROV_MT "application/vnd.cncf.helm.chart.provenance.v1.prov"
#define AL_HELM_LEGACY_CHART_MT "application/tar+gzip"

/* Bounds. A file of a chart and the whole decompressed chart as Helm's
 * loader (pkg/chart/loader/archive: MaxDecompressedFileSize,
 * MaxDecompressedChartSize); a chart archive as downloaded; index.yaml. */
#define AL_HELM_FILE_MAX (5 * 1024 * 1024)
#define AL_HELM_CHART_MAX (100 * 1024 * 1024)
#define AL_HELM_ARCHIVE_MAX (100 * 1024 * 1024)
#define AL_HELM_INDEX_MAX (64 * 1024 * 1024)
/* Charts nested in charts/ (dependencies packed as .tgz) are read this
 * deep; deeper ones are listed as unresolved. */
#define AL_HELM_NEST_MAX 4

/*
 * A chart version as Helm reads it (Masterminds semver NewVersion, which
 * is tolerant: "v1.2", "1" are 1.2.0 and 1.0.0). 1 when valid.
 */
AL_EXPORT int al_helm_version_valid(const char *s);
/* Order of two valid versions (<0, 0, >0; build metadata ignored,
 * a prerelease below its release); an invalid one sorts below every
 * valid one, two invalid ones compare equal. */
AL_EXPORT int al_helm_version_compare(const char *a, const char *b);

/* One version of one chart in an index.yaml (repo.ChartVersion). */
typedef struct al_helm_index_entry {
	char *name;
	char *version;
	char *type;  /* "application", "library" or NULL */
	char **urls; /* as written (relative or absolute) */
	size_t nurls;
	char *digest; /* sha256 hex of the archive, NULL when absent */
} al_helm_index_entry;

typedef struct al_helm_index {
	al_helm_index_entry *entries; /* per chart, newest version first */
	size_t n;
} al_helm_index;

/*
 * Parse an index.yaml (YAML, or JSON, which is YAML too) as Helm's
 * loadIndex: apiVersion required, entries without a version or a name
 * skipped, and those ChartVersion.Validate refuses (a name that is not one
 * path component, a version that is not semver or holds a control byte,
 * space or '='), each chart's versions sorted newest first
 * (ChartVersions.Less). name is used in messages. AL_EPARSE
 * with "<name>:<line>:<column>", AL_ELIMIT beyond AL_HELM_INDEX_MAX.
 */
AL_EXPORT int al_helm_index_parse(al_helm_index *out, const uint8_t *p,
                                  size_t n, const char *name);
AL_EXPORT void al_helm_index_clear(al_helm_index *ix);

/*
 * Helm's IndexFile.Get: version NULL or "": the newest version without a
 * prerelease (semver constraint "*"); otherwise the entry written exactly
 * so, else the one equal to it as a version ("v1.2.0" for "1.2"). The
 * entry is borrowed from ix. AL_ENOTFOUND naming the chart and the
 * versions there are.
 */
AL_EXPORT int al_helm_index_get(const al_helm_index *ix, const char *name,
                                const char *version,
                                const al_helm_index_entry **out);

/*
 * A chart URL of the index resolved against the repository URL as Helm's
 * repo.ResolveReferenceURL: absolute URLs as they are, a relative one
 * against the repository URL with a trailing '/', keeping the
 * repository's query. Caller frees *out.
 */
AL_EXPORT int al_helm_resolve_url(const char *repo_url, const char *ref,
                                  char **out);

/* An image a chart uses, or a place where one could not be read. */
typedef struct al_helm_image {
	char *ref;    /* normalised reference (registry/repo:tag|@digest);
	                 for an unresolved one, the text as written */
	char *source; /* "podinfo/values.yaml:12 image", "templates/x.yaml:7",
	                 "Chart.yaml artifacthub.io/images" */
} al_helm_image;

/* What al_helm_chart_read found in a chart archive. */
typedef struct al_helm_chart {
	char *name; /* Chart.yaml */
	char *version;
	char *app_version;     /* NULL when absent */
	int library;           /* type: library */
	char *config;          /* Helm's OCI config JSON (json.Marshal of
	                          chart.Metadata, in its field order) */
	int64_t created;       /* mtime of Chart.yaml in the archive */
	al_helm_image *images; /* deduplicated, in the order found */
	size_t nimages;
	al_helm_image *unresolved; /* image fields that need templates */
	size_t nunresolved;
} al_helm_chart;

/*
 * Read a chart archive (.tgz, as `helm package` writes it) from fd,
 * streaming, and find the images it uses without running templates
 * (docs/helm.md "Images"):
 *   - image_paths (the imageset's imagePaths: "{.a.b}", ".a.b" or "a.b",
 *     with "[*]" or "[N]" for lists) evaluated against values.yaml;
 *   - Chart.yaml's artifacthub.io/images annotation;
 *   - values.yaml: "image: repo:tag" strings and "image:" maps with
 *     repository (and registry, tag, digest), also for keys ending in
 *     "Image";
 *   - "image:" lines of templates/ that are literal, or whose actions
 *     are only .Values paths, .Chart.AppVersion / .Chart.Version, with
 *     "| default" / "| quote"; every other one is listed in unresolved.
 * The same for the subcharts under charts/ (directories and .tgz, at
 * most AL_HELM_NEST_MAX deep). Entries that are absolute or name "..",
 * or lie outside one top directory, are refused (AL_EPARSE) as Helm's
 * loader does; a file over AL_HELM_FILE_MAX or a chart over
 * AL_HELM_CHART_MAX is AL_ELIMIT. what names the chart in messages.
 * Caller clears *out with al_helm_chart_clear.
 */
AL_EXPORT int al_helm_chart_read(al_helm_chart *out, int fd,
                                 const char *const *image_paths,
                                 size_t nimage_paths, const char *what);
/* al_helm_chart_read of n bytes in memory. */
AL_EXPORT int al_helm_chart_read_mem(al_helm_chart *out, const uint8_t *p,
                                     size_t n, const char *const *image_paths,
                                     size_t nimage_paths, const char *what);
AL_EXPORT void al_helm_chart_clear(al_helm_chart *c);

/*
 * The OCI manifest `helm push` writes for chart (the archive's digest and
 * size, and the config blob's): config application/vnd.cncf.helm.config
 * .v1+json, one layer application/vnd.cncf.helm.chart.content.v1.tar+gzip,
 * annotations from Chart.yaml (generateOCIAnnotations: description,
 * title, version, url, created, source, authors, then the chart's own
 * annotations). Appended to out.
 */
AL_EXPORT int al_helm_manifest(al_buf *out, const al_helm_chart *chart,
                               const al_digest *config, uint64_t config_size,
                               const al_digest *archive, uint64_t archive_size);

/* The tag `helm push` gives version: '+' becomes '_' (OCI tags cannot
 * hold '+'). Caller frees. */
AL_EXPORT char *al_helm_tag(const char *version);

/* Bounds of a chart directory (al_helm_package_dir): files and
 * directories visited, and directory levels (symbolic links inside the
 * chart are followed, so a link loop ends at one of them). */
#define AL_HELM_DIR_FILES_MAX 10000
#define AL_HELM_DIR_DEPTH_MAX 32

/*
 * Package the chart directory dir as a gzip-compressed tar archive into fd
 * (at its offset), as `helm package` would (docs/helm.md "Local charts"):
 * the files Helm's loader.LoadDir takes (.helmignore rules and the default
 * templates/.?* rule, lexical order, symbolic links followed), each under
 * NAME/ (Chart.yaml's name), Chart.yaml and values.yaml first, mode 0644,
 * the file's mtime, a gzip header without timestamp. Refused: a symbolic
 * link that resolves outside dir, an irregular file, no Chart.yaml or no
 * name (AL_EPARSE); a link that does not resolve (AL_ENOTFOUND); a file
 * over AL_HELM_FILE_MAX, a chart over AL_HELM_CHART_MAX, more than
 * AL_HELM_DIR_FILES_MAX entries or AL_HELM_DIR_DEPTH_MAX levels
 * (AL_ELIMIT). Every message names the path.
 */
AL_EXPORT int al_helm_package_dir(const char *dir, int fd);

AL_END_DECL

#endif
