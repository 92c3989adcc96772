/* imageset.h: the ImageSetConfiguration (mirror.openshift.io/v2alpha1 subset
 * plus airlock: fields). */
#ifndef AIRLOCK_IMAGESET_H
#define AIRLOCK_IMAGESET_H

#include "common.h"

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
} al_imageset;

/* Largest configuration file accepted (AL_ELIMIT beyond). */
#define AL_IMAGESET_MAX_BYTES (1024 * 1024)

/*
 * Load path. kind must be ImageSetConfiguration and apiVersion
 * mirror.openshift.io/v2alpha1. Any field not understood is AL_EPARSE
 * "<path>:<line>:<column>: unknown field 'x' in mirror.platform";
 * oc-mirror features airlock does not implement (operators, helm,
 * graph: true) are AL_EUNSUPPORTED with position. Channel entries need a
 * name; minVersion/maxVersion must be semantic versions with
 * minVersion <= maxVersion (AL_EPARSE with position). Image references
 * are validated (al_ref_parse) with position in the message.
 * Missing file: AL_ENOTFOUND. Caller frees *out with al_imageset_free.
 * docs/imageset.md lists the supported fields.
 */
AL_EXPORT int al_imageset_load(al_imageset **out, const char *path);
AL_EXPORT void al_imageset_free(al_imageset *cfg);

#endif
