/* kube.h: a minimal Kubernetes API client: kubeconfig, discovery, server-side
 * apply, get, list, status. */
#ifndef AIRLOCK_KUBE_H
#define AIRLOCK_KUBE_H

#include "common.h"
#include "clock.h"
#include "http.h"

AL_BEGIN_DECL

/* The version of al_kube_opts this header describes. */
#define AL_KUBE_OPTS_VERSION 1

typedef struct al_kube_opts {
	/* AL_KUBE_OPTS_VERSION of the caller's header (0, a zeroed struct,
	 * reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	/* kubeconfig path; NULL: $KUBECONFIG (first file), ~/.kube/config,
	 * then the in-cluster service account
	 * (/var/run/secrets/kubernetes.io/serviceaccount +
	 * KUBERNETES_SERVICE_HOST/PORT). */
	const char *kubeconfig;
	const char *context; /* NULL: current-context */
	const char *server;  /* overrides the cluster's server URL; with
	                      * kubeconfig NULL and no configuration
	                      * found, used alone without credentials */
	int insecure;        /* skip TLS verification */
	al_http_opts http;   /* timeouts, retries, cancel (ca_file ignored: from
	                        kubeconfig) */
	const char *field_manager; /* default "airlock" */
} al_kube_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_KUBE_OPTS_INIT                                                      \
	{                                                                      \
		.version = AL_KUBE_OPTS_VERSION, .http = AL_HTTP_OPTS_INIT     \
	}

/*
 * A client for one API server. Thread-safe: every call may come from any
 * thread (an internal pool of http clients; the discovery cache has its
 * own lock).
 */
typedef struct al_kube al_kube;

/* Load credentials (bearer token, token file, client cert/key file or
 * data, CA file or data, insecure-skip-tls-verify) and prepare a client.
 * No request is made. Relative paths in a kubeconfig are relative to its
 * directory; *-data values are held in anonymous memory files (memfd,
 * read by libcurl through /proc/self/fd: nothing on disk, nothing left
 * by kill -9), else in private files (mode 0600 under $TMPDIR or /tmp,
 * "airlock-kube-<pid>-*") removed by al_kube_free or, when the process
 * died, by the next al_kube_new. exec and auth-provider users
 * are AL_EUNSUPPORTED. AL_ENOTFOUND when no configuration exists (or the
 * named kubeconfig or context does not), AL_EPARSE naming the kubeconfig
 * file (YAML errors with line:column). As in kubectl, a bearer token is
 * sent only to an https:// server (never over plain http); a token read
 * from a file is read again after a 401 (rotation). In-cluster:
 * $AIRLOCK_KUBE_SA_DIR, when set, replaces the service account directory
 * (for tests). docs/kube.md has the details. */
AL_EXPORT int al_kube_new(al_kube **out, const al_kube_opts *opts);
AL_EXPORT void al_kube_free(al_kube *k);
/* The field manager of this client's writes (borrowed). */
AL_EXPORT const char *al_kube_field_manager(const al_kube *k);
/* The server URL in use (borrowed). */
AL_EXPORT const char *al_kube_server(const al_kube *k);
/* The namespace used for namespaced objects that name none: the
 * context's namespace, the in-cluster namespace, else "default"
 * (borrowed). */
AL_EXPORT const char *al_kube_namespace(const al_kube *k);

/* What discovery says about a kind. */
typedef struct al_kube_resource {
	char *group_version; /* "v1", "apps/v1", "config.openshift.io/v1" */
	char *kind;
	char *plural; /* "deployments" */
	int namespaced;
	int has_status; /* a "<plural>/status" subresource exists */
} al_kube_resource;

AL_EXPORT void al_kube_resource_clear(al_kube_resource *r);

/*
 * Map apiVersion + kind to its REST resource via discovery (/api,
 * /apis, /api/v1, /apis/<gv>), cached per group-version for the life of
 * k; a kind missing from a cached group-version re-fetches it once (CRDs
 * created by an earlier manifest). AL_ENOTFOUND "no kind X in Y".
 */
AL_EXPORT int al_kube_discover(al_kube *k, const char *api_version,
                               const char *kind, al_kube_resource *out,
                               al_deadline dl);

/* DELETE one object (propagationPolicy=Background): 0 once the server
 * accepted the deletion, AL_ENOTFOUND when it did not exist (an
 * idempotent caller treats that as done). ns may be NULL for a
 * cluster-scoped kind (NULL for a namespaced kind: al_kube_namespace(k)).
 * Retries 409, 429, 5xx and connection errors with backoff until dl;
 * errors AL_EAUTH, AL_EPROTO, AL_ETIMEOUT, AL_ENET, AL_ECANCELED. */
AL_EXPORT int al_kube_delete(al_kube *k, const char *api_version,
                             const char *kind, const char *ns, const char *name,
                             al_deadline dl);

/* Apply, get, list, create and replace take and give JSON objects: the
 * library's own callers (the updater) use them through src/release/kube_int.h.
 */

AL_END_DECL

#endif
