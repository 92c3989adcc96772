/* update_int.h (internal): what the updater's files share: the jansson
 * form of a task's object, the cluster's capabilities. (The state machine,
 * update_state.c, is public API and stays declared in airlock/update.h:
 * al_update_choose_mode, al_update_next_state, al_update_next_hstate,
 * al_update_outcome_of, al_update_failure_message and the state names.) */
#ifndef AL_UPDATE_INT_H
#define AL_UPDATE_INT_H

#include <stdint.h>

#include <jansson.h>
#include "airlock/update.h"

/* The json_t behind a task's object (the same object). */
static inline json_t *al_update__obj(const al_update_task *t)
{
	return (json_t *)(void *)(uintptr_t)t->obj;
}

static inline al_update_object *al_update__opaque(json_t *v)
{
	return (al_update_object *)(void *)v;
}

/*
 * The enabled capabilities of a cluster as the CVO computes them
 * (lib/capability SetCapabilities): the baseline set of cv->spec.capabilities
 * (default vCurrent; an unknown set name is AL_EINVAL), plus
 * additionalEnabledCapabilities, plus status.capabilities.enabledCapabilities
 * (capabilities once enabled stay enabled: implicitly enabled). cv is a
 * config.openshift.io/v1 ClusterVersion. *out is a NULL-terminated array of
 * borrowed/static strings (free the array only), *n its length.
 */
int al_update_cluster_capabilities(const json_t *cv, const char ***out,
                                   size_t *n);

/*
 * The administrator acknowledgements the CVO requires (pkg/risk/adminack
 * checkAdminGate): gates is the data of ConfigMap
 * openshift-config-managed/admin-gates, acks the data of
 * openshift-config/admin-acks (NULL when that ConfigMap is absent). A gate
 * key must match ^ack-([4-5][.][0-9]{1,})-[^-]; one whose major.minor is
 * current's blocks unless acks sets it to exactly "true". Appends one
 * blocker per blocking gate to bl[*nb] (room for json_object_size(gates)
 * more), sorted by key: kind "AdminAck", name the key (borrowed from
 * gates), reason AdminAckRequired (message the gate's text),
 * AdminAckGateEmpty (a gate without text) or AdminAckGateInvalid (a key
 * of another format). A current version that does not parse adds none
 * (the preconditions check nothing then either).
 */
void al_update_admin_ack_blockers(const char *current, const json_t *gates,
                                  const json_t *acks, al_update_blocker *bl,
                                  size_t *nb);

/*
 * A resource quantity's value as k8s.io/apimachinery pkg/api/resource
 * ParseQuantity makes it, exactly: sign * dig[0..ndig) * 10^exp (decimal
 * digits, most significant first, none leading or trailing), after its
 * rounding up to 10^-9 and, for binary suffixes, its cap at 2^63-1.
 */
#define AL_UPDATE_QTY_MAX_LEN 256
typedef struct al_update_qty {
	int sign; /* -1, 0 (the value 0), 1 */
	int64_t exp;
	size_t ndig;
	unsigned char dig[AL_UPDATE_QTY_MAX_LEN + 24];
} al_update_qty;

/* ParseQuantity on s[0..len) (suffixes n u m "" k M G T P E, Ki Mi Gi Ti
 * Pi Ei, e<int>/E<int>; no white space). AL_EPARSE for what it refuses,
 * AL_ELIMIT beyond AL_UPDATE_QTY_MAX_LEN bytes. */
int al_update_qty_parse(al_update_qty *out, const char *s, size_t len);

/* Quantity.Cmp: -1, 0 or 1. */
int al_update_qty_cmp(const al_update_qty *a, const al_update_qty *b);

/* equality.Semantic on two JSON quantities (strings as
 * Quantity.UnmarshalJSON reads them, white space around them ignored, or
 * numbers): 1 equal values, 0 different ones, -1 when either is not a
 * quantity (the caller compares them as written). Sets no error. */
int al_update_qty_json_equal(const json_t *a, const json_t *b);

/* How airlock follows lib/resourcemerge for a kind (al_update_merge_kind). */
enum {
	AL_UPDATE_MERGE_NONE = 0,  /* no Ensure function: applied as it is */
	AL_UPDATE_MERGE_APPLY = 1, /* al_update_merge, then server-side apply */
	AL_UPDATE_MERGE_LIVE = 2   /* al_update_merge_live on the object read,
	                            * then a replace conditional on its
	                            * resourceVersion */
};

/* How the kind (group "" for the core API) is merged: AL_UPDATE_MERGE_*. */
int al_update_merge_kind(const char *group, const char *kind);

/*
 * The object to apply for required when live (NULL: the object does not
 * exist) is in the cluster, by the CVO's merge rules (lib/resourcemerge):
 * EnsureObjectMeta (labels, annotations: live keys required lacks are kept;
 * ownerReferences of other uids kept), EnsureConfigMap (data and
 * binaryData keys kept the same way), EnsureClusterRole (with an
 * aggregationRule the live rules stay). For an AL_UPDATE_MERGE_LIVE kind:
 * a copy of live merged by al_update_merge_live (required itself when
 * live is NULL: the CVO creates the manifest as it is). *out: a new
 * object (caller decrefs). AL_ENOMEM, AL_EINVAL (al_update_merge_live).
 */
int al_update_merge(json_t **out, const json_t *required, const json_t *live,
                    const char *group, const char *kind);

/*
 * The CVO's merge on the existing object (lib/resourceapply Apply*v1 and
 * the Ensure* they call) for an AL_UPDATE_MERGE_LIVE kind: live (the
 * object read from the cluster) is changed in place where the CVO's
 * rules own a field, everything else in it stays; *modified is 1 when
 * anything changed (the CVO writes nothing otherwise). Deployment:
 * EnsureDeployment (ensureReplicasDefault, ensureStrategyDefault,
 * ensurePodTemplateSpec); DaemonSet: EnsureDaemonSet; Job: EnsureJob
 * (ensureJobSpecDefault); CronJob: EnsureCronJob; Service: ApplyServicev1
 * (EnsureServicePorts, EnsureServiceType, the selector). Pod templates
 * follow ensurePodSpec: containers matched by name (ensureContainer:
 * image, command, args, env, envFrom, resources, ports by name, volume
 * mounts by path, liveness and readiness probes with their defaults,
 * security context), volumes by name with their source defaults,
 * tolerations, affinity, pod security context, dnsPolicy ClusterFirst and
 * terminationGracePeriodSeconds 30 when the manifest names none. "Equal"
 * is equality.Semantic.DeepEqual as far as JSON tells it (an absent member
 * equals its zero value). AL_EINVAL for a Job manifest with
 * spec.selector (the CVO panics on it) or a kind of another class,
 * AL_ENOMEM.
 */
int al_update_merge_live(json_t *live, const json_t *required,
                         const char *group, const char *kind, int *modified);

/* One rule of al_update_merge_live alone, on parent (the object that
 * holds the field), for the CVO's unit cases: part "PodSpec" (parent is
 * the existing pod spec, required the manifest's), "Tolerations"
 * (parent["tolerations"], required a list), "EnvVar" (parent["env"]),
 * "ServicePorts" (parent["ports"]), "ServiceType" (parent["type"]).
 * AL_EINVAL for another part. */
int al_update_merge_part(json_t *parent, const json_t *required,
                         const char *part, int *modified);

/*
 * The containers a Deployment or DaemonSet (group "apps") asks the cluster
 * proxy for (lib/resourcebuilder modifyDeployment / modifyDaemonSet): its
 * non-empty annotation config.openshift.io/inject-proxy (borrowed from
 * obj), else NULL (any other kind too).
 */
const char *al_update_proxy_containers(const json_t *obj, const char *group,
                                       const char *kind);

/*
 * updatePodSpecWithProxy on obj's spec.template.spec: when proxy (a
 * config.openshift.io/v1 Proxy, NULL when there is none) has any of
 * status.httpProxy, httpsProxy, noProxy, every container and init
 * container named by one of names' comma-separated pieces gets HTTP_PROXY,
 * HTTPS_PROXY and NO_PROXY (in that order, empty ones too) appended to its
 * env. AL_EINVAL "requested injection for non-existent container" for a
 * piece no container has (obj may then be half changed: the caller drops
 * it), AL_ENOMEM. Without proxy values nothing changes and nothing is
 * checked, as the CVO's.
 */
int al_update_inject_proxy(json_t *obj, const char *names, const json_t *proxy);

/* The CVO's own Deployment (pkg/internal DefaultCVONamespace,
 * DefaultDeploymentName; its container is DefaultContainerName, the same
 * name). */
#define AL_UPDATE_CVO_NAMESPACE "openshift-cluster-version"
#define AL_UPDATE_CVO_NAME "cluster-version-operator"

/* 1 when obj (group, kind) is the CVO's own Deployment, which
 * resourcebuilder modifyDeployment points at the internal API load
 * balancer. */
int al_update_is_cvo_deployment(const json_t *obj, const char *group,
                                const char *kind);

/*
 * The host and port of an Infrastructure's status.apiServerInternalURL as
 * modifyDeployment takes them (url.Parse's host, then net.SplitHostPort; a
 * host without a port is the whole host, brackets included, and an empty
 * port). host and port are "" when the URL has no authority. AL_EINVAL for
 * what SplitHostPort refuses otherwise (too many colons, a bad ']'),
 * AL_ELIMIT when a part does not fit hcap / pcap.
 */
int al_update_split_lb_url(const char *url, char *host, size_t hcap, char *port,
                           size_t pcap);

/*
 * updatePodSpecWithInternalLoadBalancerKubeService on a pod spec: when
 * host is not empty, every container and init container named by names
 * (comma separated) gets KUBERNETES_SERVICE_PORT (port, "443" when empty)
 * and KUBERNETES_SERVICE_HOST set where its env has them, else appended
 * in that order. AL_EINVAL "requested injection for non-existent
 * container" for a name no container has, AL_ENOMEM.
 */
int al_update_kube_service(json_t *spec, const char *names, const char *host,
                           const char *port);

/*
 * The capabilities an update enables implicitly (lib/manifest
 * GetImplicitlyEnabledCapabilities): for each manifest of the next release
 * (next_all: loaded without the capability filter) under capabilities,
 * when the current release (current: loaded with the cluster's filters)
 * applies the same object (group, kind, namespace, name), the next
 * manifest's capabilities that the current one does not have and that are
 * not enabled. *out: a NULL-terminated list of new strings (caller frees
 * each and the array; NULL when none), *n its length. AL_ENOMEM.
 */
int al_update_implicit_capabilities(const al_update_graph *next_all,
                                    const al_update_graph *current,
                                    const char *const *enabled, size_t nen,
                                    char ***out, size_t *n);

/* 1 when release-metadata (the payload's release-manifests/release-metadata,
 * meta[0..len)) says release.openshift.io/architecture "multi": a
 * multi-architecture payload (pkg/payload loadReleaseMetadata), else 0. */
int al_update_release_multi(const uint8_t *meta, size_t len);

/*
 * The architecture of the update graph the CVO asks the update service for
 * (pkg/cvo/availableupdates.go getDesiredArchitecture,
 * getCurrentArchitecture; pkg/cincinnati GetUpdates: "Multi" is queried as
 * "multi"): spec.desiredUpdate.architecture "Multi", or a target payload
 * that is multi-architecture (target_multi), gives "multi"; else the
 * current one: "multi" when status.desired.architecture is "Multi", else
 * cluster_arch (the CVO's GOARCH: amd64, arm64, ppc64le, s390x). cv is the
 * ClusterVersion. *migrating is 1 for a single- to multi-architecture move,
 * where GetUpdates offers only the current version's multi payload.
 * Returns cluster_arch or a static string.
 */
const char *al_update_graph_arch(const json_t *cv, int target_multi,
                                 const char *cluster_arch, int *migrating);

/*
 * The reason the CVO gives a failed task in Failing and Progressing
 * (pure): a ClusterOperator or workload reason named in msg
 * (ClusterOperatorNotAvailable, ClusterOperatorDegraded, ...,
 * WorkloadNotProgressing), else pkg/payload reasonForPayloadSyncError's
 * word for the API answer in msg and rc (UpdatePayloadResourceForbidden for
 * a 403, ...Unauthorized, ...NotFound, ...Conflict, ...Invalid,
 * ...ClusterOverloaded, ...ClusterError, ...ClusterDown), else
 * UpdatePayloadFailed. Static string.
 */
const char *al_update_failure_reason(int rc, const char *msg);

#endif
