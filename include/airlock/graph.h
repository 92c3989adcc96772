/* graph.h: update-graph (Cincinnati) client, version ordering, release-set
 * selection and the update-service graph data. */
#ifndef AIRLOCK_GRAPH_H
#define AIRLOCK_GRAPH_H

#include "common.h"
#include "clock.h"
#include "http.h"
#include "imageset.h"
#include "store.h"

AL_BEGIN_DECL

/*
 * Thread safety: every function here is reentrant; distinct objects may
 * be used from different threads at once. A const al_graph may be read
 * by many threads.
 */

/* The public update service (OpenShift Cincinnati). Never contacted by
 * the tests: they pass their loopback URL. */
#define AL_GRAPH_DEFAULT_URL "https://api.openshift.com/api/upgrades_info/v1"
/* Largest graph document accepted, from the network or a file. */
#define AL_GRAPH_MAX_BYTES (32 * 1024 * 1024)
/* Default total budget of one graph fetch (all attempts and backoff). */
#define AL_GRAPH_DEFAULT_TIMEOUT_MS 60000

/* al_version_compare and al_version_valid live in common.h. */

/* A JSON value a graph owns (node metadata, risks), opaque here: the
 * library reads it (src/release/graph_int.h); graph files carry it unchanged.
 */
typedef struct al_graph_json al_graph_json;

/* One release in a graph. */
typedef struct al_graph_node {
	char *version; /* "4.14.10" */
	char *payload; /* release image pull spec, normally by digest */
	al_graph_json *metadata; /* object of strings (may be empty), owned by
	                            the graph */
} al_graph_node;

/* An update from nodes[from] to nodes[to]. */
typedef struct al_graph_edge {
	size_t from;
	size_t to;
} al_graph_edge;

/* An update that is recommended only where none of its risks apply. */
typedef struct al_graph_cond_edge {
	size_t from;
	size_t to;
	al_graph_json *risks; /* array of {"url","name","message",
	                         "matchingRules"}, owned by the graph */
} al_graph_cond_edge;

/*
 * An update graph of one channel and architecture, as the update service
 * answers GET <base>/graph?channel=C&arch=A (Accept: application/json):
 * {"nodes":[{"version","payload","metadata"}], "edges":[[from,to],...],
 *  "conditionalEdges":[{"edges":[{"from":V,"to":V}],"risks":[...]}]}.
 * channel and arch are NULL when unknown (a file without "airlock").
 */
typedef struct al_graph {
	char *channel;
	char *arch;
	al_graph_node *nodes;
	size_t nnodes;
	al_graph_edge *edges;
	size_t nedges;
	al_graph_cond_edge *cond;
	size_t ncond;
} al_graph;

/*
 * Parse a graph document p[0..n) (what names the source in messages).
 * Nodes need "version" and "payload" strings and unique versions; edges
 * must be pairs of valid node indices; a conditional edge naming a
 * version that is not a node is dropped (the service only lists nodes of
 * the channel). An "airlock": {"channel","arch"} member (written by
 * al_graph_save_to_store) fills channel and arch. AL_EPARSE with the
 * source and the offending element, AL_ELIMIT past AL_GRAPH_MAX_BYTES.
 * Caller frees *out with al_graph_free.
 */
AL_EXPORT int al_graph_parse(al_graph **out, const uint8_t *p, size_t n,
                             const char *what);
/* Read and parse a graph file (the --graph-file source). AL_ENOTFOUND
 * for a missing file. */
AL_EXPORT int al_graph_load_file(al_graph **out, const char *path);
AL_EXPORT void al_graph_free(al_graph *g);
/* The graph as a JSON document: al_graph_to_json in src/release/graph_int.h. */

/*
 * Fetch the graph of channel for arch (e.g. "amd64") from the update
 * service at base_url (no trailing "/graph"; http:// or https://). http
 * may be NULL (defaults); its per-attempt timeouts and retries apply,
 * and deadline bounds the whole fetch, every attempt and backoff
 * included (AL_DEADLINE_NONE: AL_GRAPH_DEFAULT_TIMEOUT_MS). channel and
 * arch must be [A-Za-z0-9._-]+ (AL_EINVAL). Errors: AL_ETIMEOUT,
 * AL_ENET, AL_ECANCELED, AL_EPROTO (any answer but 200, naming the
 * status, channel and URL), AL_EPARSE, AL_ELIMIT.
 */
AL_EXPORT int al_graph_fetch(al_graph **out, const char *base_url,
                             const char *channel, const char *arch,
                             const al_http_opts *http, al_deadline deadline);

/* Index of the node with version in *idx; AL_ENOTFOUND (message naming
 * the version and the channel) if none. */
AL_EXPORT int al_graph_find(const al_graph *g, const char *version,
                            size_t *idx);

/*
 * Select releases of g between min and max (inclusive, by
 * al_version_compare). min NULL: the lowest version of the channel;
 * max NULL: the highest. With shortest_path, only the nodes of a
 * shortest update path from min to max (fewest updates; among equals,
 * the path through the highest versions), over edges and, when
 * include_conditional, conditional edges; otherwise every node in the
 * range. *idx receives node indices sorted by version (caller frees).
 * Errors: AL_ENOTFOUND for a min or max that is not in the channel
 * (message naming the version and the channel), for a channel without
 * releases, and for no update path; AL_EINVAL when min > max.
 */
AL_EXPORT int al_graph_select(const al_graph *g, const char *min,
                              const char *max, int shortest_path,
                              int include_conditional, size_t **idx, size_t *n);

/*
 * Save g as STORE/airlock/graph/<channel>-<arch>.json (atomic; the JSON of
 * al_graph_to_json). g->channel and g->arch must be set (AL_EINVAL).
 * Call while holding the store open writable.
 */
AL_EXPORT int al_graph_save_to_store(al_store *s, const al_graph *g);
/* Load what al_graph_save_to_store wrote; AL_ENOTFOUND if absent. */
AL_EXPORT int al_graph_load_from_store(al_graph **out, al_store *s,
                                       const char *channel, const char *arch);

/* The version of al_graph_opts this header describes. */
#define AL_GRAPH_OPTS_VERSION 1

/* How al_graph_resolve_imageset reaches the graphs. Initialise from
 * AL_GRAPH_OPTS_INIT and set fields by name. */
typedef struct al_graph_opts {
	/* AL_GRAPH_OPTS_VERSION of the caller's header (0, a zeroed struct,
	 * reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	/* Update service base URL; NULL: the imageset's airlock.graph.url,
	 * else AL_GRAPH_DEFAULT_URL. */
	const char *url;
	/* Read graphs from here instead of the network: a directory
	 * holding <channel>-<arch>.json files (e.g. a copy of
	 * STORE/airlock/graph), or one graph file used for every channel
	 * and architecture. */
	const char *graph_file;
	const al_http_opts *http; /* may be NULL */
	al_deadline deadline;     /* bounds each fetch (NONE:
	                             AL_GRAPH_DEFAULT_TIMEOUT_MS each) */
} al_graph_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_GRAPH_OPTS_INIT                                                     \
	{                                                                      \
		.version = AL_GRAPH_OPTS_VERSION                               \
	}

/* One release to mirror. */
typedef struct al_graph_release {
	char *version;
	char *payload; /* the pull spec to mirror */
	char *arch;
	char *
	    *channels; /* every channel of the imageset it was selected from */
	size_t nchannels;
} al_graph_release;

typedef struct al_graph_selection {
	al_graph_release
	    *releases; /* sorted by arch, then version; unique by payload */
	size_t nreleases;
	al_graph **graphs; /* every graph read (channel and arch set), for
	                      al_graph_save_to_store */
	size_t ngraphs;
} al_graph_selection;

/*
 * For every mirror.platform.channels entry of cfg and every architecture
 * of mirror.platform.architectures (default amd64), get the channel's
 * graph (opts->graph_file, else the update service) and select releases
 * as al_graph_select does (minVersion, maxVersion, shortestPath;
 * conditional edges unless airlock.graph.excludeConditional). Without
 * minVersion: with full: true the lowest version, else maxVersion (so
 * only the latest release when neither is given). The caller mirrors
 * each releases[i].payload, records releases[i].channels in
 * releases.json, and saves graphs[] with al_graph_save_to_store. A cfg
 * without channels gives an empty selection. Errors are those of
 * al_graph_fetch / al_graph_load_file / al_graph_select, the message
 * naming the channel. out is cleared first; free with
 * al_graph_selection_clear (also after a failure).
 */
AL_EXPORT int al_graph_resolve_imageset(const al_imageset *cfg,
                                        const al_graph_opts *opts,
                                        al_graph_selection *out);
/* Free what sel holds and zero it. NULL is a no-op. */
AL_EXPORT void al_graph_selection_clear(al_graph_selection *sel);

/* The version of al_graph_data_report this header describes. */
#define AL_GRAPH_DATA_REPORT_VERSION 1

/* What al_graph_write_data wrote: plain counts, nothing to free. Also
 * held by value in al_graph_image_result, whose version covers it there. */
typedef struct al_graph_data_report {
	/* AL_GRAPH_DATA_REPORT_VERSION of the caller's header, set by
	 * AL_GRAPH_DATA_REPORT_INIT (0, a zeroed struct, reads as 1; a newer
	 * one is AL_EINVAL, nothing written): the library writes no field past
	 * it */
	unsigned version;
	size_t channels; /* channels/<name>.yaml files */
	size_t versions; /* distinct mirrored versions listed in channels */
	size_t blocked_edges; /* blocked-edges/ files */
	size_t graphs;        /* saved graphs used */
} al_graph_data_report;

/* Every other field zero / NULL; set the version by name. */
#define AL_GRAPH_DATA_REPORT_INIT                                              \
	{                                                                      \
		.version = AL_GRAPH_DATA_REPORT_VERSION                        \
	}

/*
 * Write the update-service graph data for what the store holds into
 * outdir (created if missing), in the layout of OpenShift's
 * cincinnati-graph-data (docs/graph.md):
 *   version                       graph-data schema version
 *   channels/<name>.yaml          name + versions (sorted) that were mirrored
 *   blocked-edges/<to>-<risk>.yaml conditional edges between mirrored
 *                                 releases, with their risks
 *   blocked-edges/<to>-airlock-not-in-graph.yaml  updates between mirrored
 *                                 releases the upstream graph does not have
 *   airlock/graph/<channel>-<arch>.json  the saved graphs restricted to the
 *                                 mirrored nodes (Cincinnati JSON)
 * Mirrored releases are the entries of airlock/releases.json; a node
 * belongs to them when its payload digest or its version matches an
 * entry. Channels come from the saved graphs (airlock/graph/) and from
 * the "channels" lists of releases.json entries. rep may be NULL.
 * AL_ENOTFOUND when the store holds no release.
 */
AL_EXPORT int al_graph_write_data(al_store *s, const char *outdir,
                                  al_graph_data_report *rep);

/* --- the graph-data image (src/release/graph_image.c, docs/graph.md)
 * ------------ */

/* Where oc-mirror v2 names the image it builds (openshift/graph-image,
 * tagged latest, under the destination): the store name that push maps to
 * HOST/PREFIX/openshift/graph-image:latest. */
#define AL_GRAPH_IMAGE_NAME "localhost/openshift/graph-image:latest"
/* oc-mirror v2's base image, used when the store holds it. */
#define AL_GRAPH_IMAGE_BASE "registry.access.redhat.com/ubi9/ubi:latest"
/* The tree in the layer, and where the image's command copies it (the
 * operator mounts the graph-data volume there). */
#define AL_GRAPH_IMAGE_DATA_DIR "/var/lib/cincinnati-graph-data"
#define AL_GRAPH_IMAGE_MOUNT "/var/lib/cincinnati/graph-data"

/* The version of al_graph_image_opts this header describes. */
#define AL_GRAPH_IMAGE_OPTS_VERSION 1

typedef struct al_graph_image_opts {
	/* AL_GRAPH_IMAGE_OPTS_VERSION of the caller's header (0, a zeroed
	 * struct, reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	const char *name;     /* store name to tag; NULL: AL_GRAPH_IMAGE_NAME */
	const char *base;     /* store name of a base image; NULL: none (the
	                       * image is the graph-data layer alone) */
	const char *platform; /* "os/arch": the base's entry when it is an
	                       * index, and the config's; NULL: linux/amd64 */
	const char *tmpdir;   /* scratch for the tree; NULL: $TMPDIR, /tmp */
} al_graph_image_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_GRAPH_IMAGE_OPTS_INIT                                               \
	{                                                                      \
		.version = AL_GRAPH_IMAGE_OPTS_VERSION                         \
	}

/* The version of al_graph_image_result this header describes. */
#define AL_GRAPH_IMAGE_RESULT_VERSION 1

typedef struct al_graph_image_result {
	/* AL_GRAPH_IMAGE_RESULT_VERSION of the caller's header, set by
	 * AL_GRAPH_IMAGE_RESULT_INIT (0, a zeroed struct, reads as 1; a newer
	 * one is AL_EINVAL, nothing written): the library writes no field past
	 * it */
	unsigned version;
	al_descriptor manifest;    /* OCI manifest; al_descriptor_clear */
	al_digest layer;           /* the gzip layer blob */
	uint64_t layer_size;       /* its size */
	al_digest diff_id;         /* SHA-256 of the uncompressed tar */
	size_t entries;            /* files and directories in the tar */
	al_graph_data_report data; /* what al_graph_write_data wrote */
} al_graph_image_result;

/* Every other field zero / NULL; set the version by name. */
#define AL_GRAPH_IMAGE_RESULT_INIT                                             \
	{                                                                      \
		.version = AL_GRAPH_IMAGE_RESULT_VERSION,                      \
		.data = AL_GRAPH_DATA_REPORT_INIT                              \
	}

/*
 * Build the graph-data image from the tree at dir (what
 * al_graph_write_data writes): one gzip layer holding it under
 * AL_GRAPH_IMAGE_DATA_DIR (owner 0/0, mtime 0, fixed modes, sorted, so
 * the same tree gives the same digests), on top of opts->base's layers
 * when given; the config's Cmd copies the tree to AL_GRAPH_IMAGE_MOUNT,
 * as oc-mirror v2's CreateGraphImage does. Blobs are written to s and
 * the manifest tagged opts->name. Symlinks and special files in dir:
 * AL_EUNSUPPORTED; base not in the store: AL_ENOTFOUND. out->data is
 * zero. Caller clears out->manifest.
 */
AL_EXPORT int al_graph_image_from_dir(al_store *s, const char *dir,
                                      const al_graph_image_opts *opts,
                                      al_graph_image_result *out);

/*
 * al_graph_write_data into a scratch directory, then
 * al_graph_image_from_dir, the scratch removed after. AL_ENOTFOUND when
 * the store holds no release.
 */
AL_EXPORT int al_graph_image_build(al_store *s, const al_graph_image_opts *opts,
                                   al_graph_image_result *out);

AL_END_DECL

#endif
