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

/* 1 when lib/resourcemerge has an Ensure function for the kind (group ""
 * for the core API): al_update_merge applies its rules. */
int al_update_merge_kind(const char *group, const char *kind);

/*
 * The object to apply for required when live (NULL: the object does not
 * exist) is in the cluster, by the CVO's merge rules (lib/resourcemerge):
 * EnsureObjectMeta (labels, annotations: live keys required lacks are kept;
 * ownerReferences of other uids kept), EnsureConfigMap (data and
 * binaryData keys kept the same way), EnsureDeployment (replicas missing:
 * 1; paused and minReadySeconds overwritten, absent meaning false and 0;
 * the RollingUpdate 25%/25% strategy default), EnsureJob (backoffLimit 6,
 * completionMode NonIndexed, suspend false when missing), EnsureClusterRole
 * (with an aggregationRule the live rules stay). *out: a new object
 * (caller decrefs). AL_ENOMEM.
 */
int al_update_merge(json_t **out, const json_t *required, const json_t *live,
                    const char *group, const char *kind);

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
