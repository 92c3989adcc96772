#!/bin/bash
# test_update_preconditions.sh: the CVO's preconditions before a new update (ClusterVersionUpgradeable with admin acks, ClusterVersionRollback, ClusterVersionGiantHop) and --force recorded as acceptedRisks.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update

S=$T/store
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }
for v in 4.15.0 4.16.0 4.14.0 4.14.2; do
	up_store_add_release "$S" $v "$AL_SOURCE_DIR/samples/release-manifests" || { al_fail "make release $v"; al_finish; }
done
for v in 4.14.1 4.15.0 4.16.0 4.14.0 4.14.2; do
	up_sign "$S" "$(up_digest "$S" $v)" || { al_fail "sign $v"; al_finish; }
done
up_plan "$S" || { al_fail "dry-run plan"; al_finish; }
UP_VIRTUAL_CLOCK=1 up_ks_start --co-delay 0.1
K=(--kubeconfig "$T/kubeconfig" --operator-poll 100ms --keyring "$T/trusted.gpg" --state "$T/state.json")

reset() {
	up_ctl reset '{}' >/dev/null
	rm -f "$T/state.json"
	up_seed_cv 4.14.1 '[{"state": "Completed", "version": "4.14.1", "image": "quay.io/openshift-release-dev/ocp-release@sha256:'"$(printf '%064d' 1)"'", "startedTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T01:00:00Z", "verified": true}]'
}

# --- ClusterVersionUpgradeable: Upgradeable=False blocks a minor update ----
reset
up_co_upgradeable cloud-credential "credentials need an admin ack"
al_run "$T/o1" "$T/e1" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}"
al_check "Upgradeable: a minor update is refused (exit 3)" [ "$AL_RC" = 3 ]
al_check "Upgradeable: the refusal names the precondition and the reason" grep -q 'Precondition "ClusterVersionUpgradeable" failed because of "ClusterOperatorNotUpgradeable"' "$T/e1"
al_check "Upgradeable: ... the operator, its condition and its message" grep -q "Cluster operator cloud-credential should not be upgraded between minor versions: Upgradeable=False (AdminAckRequired): credentials need an admin ack" "$T/e1"
al_check "Upgradeable: ... and says how to go on" grep -q "use --force to apply anyway" "$T/e1"
al_check "Upgradeable: nothing applied" [ "$(up_py 'print(len(present()))')" = 0 ]
al_check "Upgradeable: no history entry" [ "$(up_state "$T/state.json" '(s["state"], s["history"])')" = "('Initializing', [])" ]
al_check "Upgradeable: ClusterVersion says ReleaseAccepted=False PreconditionChecks" [ "$(up_obj $CV_PATH '[(c["status"], c["reason"]) for c in o["status"]["conditions"] if c["type"] == "ReleaseAccepted"]')" = "[('False', 'PreconditionChecks')]" ]
al_check "Upgradeable: ClusterVersion says Upgradeable=False for the operator" [ "$(up_obj $CV_PATH '[(c["status"], c["reason"]) for c in o["status"]["conditions"] if c["type"] == "Upgradeable"]')" = "[('False', 'ClusterOperatorNotUpgradeable')]" ]
al_check "Upgradeable: the cluster's history is kept" [ "$(up_obj $CV_PATH '[(h["version"], h["state"]) for h in o["status"]["history"]]')" = "[('4.14.1', 'Completed')]" ]
# a patch update within the minor passes (upgradeable.go: patchOnly)
al_run "$T/o1" "$T/e1" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --dry-run
al_check "Upgradeable: a patch update is not blocked" [ "$AL_RC" = 0 ]
# the ClusterVersion's own Upgradeable=False (not written by airlock) blocks too
reset
up_ctl objects '{"object": {"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": {"name": "version"}, "spec": {"clusterID": "x"}, "status": {"desired": {"version": "4.14.1", "image": "i"}, "history": [], "conditions": [{"type": "Upgradeable", "status": "False", "reason": "ClusterVersionOverridesSet", "message": "overrides prevent upgrades", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}}' >/dev/null
al_run "$T/o1" "$T/e1" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}"
al_check "Upgradeable: the ClusterVersion's own condition blocks (exit 3)" [ "$AL_RC" = 3 ]
al_check "Upgradeable: ... naming its reason and message" grep -q 'failed because of "ClusterVersionOverridesSet": ClusterVersion version says Upgradeable=False: overrides prevent upgrades' "$T/e1"

# --- admin acks (pkg/risk/adminack): a gate of the current minor blocks a minor update ----
reset
up_ctl objects '{"object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "admin-gates", "namespace": "openshift-config-managed"}, "data": {"ack-4.14-kube-1.28-api-removals-in-4.15": "Kubernetes 1.28 removes APIs", "ack-4.13-old": "an older minor: not applicable"}}}' >/dev/null
up_ctl objects '{"object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "admin-acks", "namespace": "openshift-config"}, "data": {"ack-4.14-kube-1.28-api-removals-in-4.15": "yes"}}}' >/dev/null
al_run "$T/o8" "$T/e8" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}"
al_check "admin ack: an unacknowledged gate refuses 4.14 -> 4.15 (exit 3)" [ "$AL_RC" = 3 ]
al_check "admin ack: the refusal names the gate and its text" grep -q 'failed because of "AdminAckRequired": Kubernetes 1.28 removes APIs (gate ack-4.14-kube-1.28-api-removals-in-4.15' "$T/e8"
al_check "admin ack: ... and the command that acknowledges it" grep -q "patch configmap admin-acks" "$T/e8"
al_check "admin ack: only the gate of the current minor" bash -c "! grep -q ack-4.13-old '$T/e8'"
al_check "admin ack: nothing applied" [ "$(up_py 'print(len(present()))')" = 0 ]
al_check "admin ack: ClusterVersion says ReleaseAccepted=False PreconditionChecks" [ "$(up_obj $CV_PATH '[(c["status"], c["reason"]) for c in o["status"]["conditions"] if c["type"] == "ReleaseAccepted"]')" = "[('False', 'PreconditionChecks')]" ]
al_run "$T/o8" "$T/e8" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --dry-run
al_check "admin ack: a patch update is not blocked" [ "$AL_RC" = 0 ]
up_ctl objects '{"object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "admin-acks", "namespace": "openshift-config"}, "data": {"ack-4.14-kube-1.28-api-removals-in-4.15": "true"}}}' >/dev/null
al_run "$T/o8" "$T/e8" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}" --dry-run
al_check "admin ack: acknowledged (\"true\"), the minor update passes" [ "$AL_RC" = 0 ]

# --- --force: forced through, recorded as acceptedRisks in history ----------
reset
up_co_upgradeable cloud-credential "credentials need an admin ack"
al_run "$T/o2" "$T/e2" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}" --force
al_check "force: the update proceeds and completes" [ "$AL_RC" = 0 ]
al_check "force: the accepted risk is reported" grep -q "accepted risks (recorded in history): Forced through blocking failures" "$T/e2"
al_check "force: the state file's history entry records acceptedRisks" [ "$(up_state "$T/state.json" '"Forced through blocking failures: Precondition \"ClusterVersionUpgradeable\"" in s["history"][0]["acceptedRisks"]')" = True ]
al_check "force: ... the ClusterUpdate record too" [ "$(up_obj $CU_PATH '"ClusterOperatorNotUpgradeable" in o["status"]["history"][0]["acceptedRisks"]')" = True ]
al_check "force: ... and the ClusterVersion history (status.history[0].acceptedRisks)" [ "$(up_obj $CV_PATH '(o["status"]["history"][0]["version"], o["status"]["history"][0]["state"], "cloud-credential" in o["status"]["history"][0]["acceptedRisks"])')" = "('4.15.0', 'Completed', True)" ]
# a later run (reconciling) keeps the accepted risk: it is in history, not in a condition
al_run "$T/o2" "$T/e2" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}"
al_check "force: a rerun reconciles" [ "$AL_RC" = 0 ]
al_check "force: ... and the history still says what was accepted" [ "$(up_obj $CV_PATH '"cloud-credential" in o["status"]["history"][0]["acceptedRisks"]')" = True ]

# --- after an update airlock completed, its record is the current version ------
reset
al_run "$T/o7" "$T/e7" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}"
al_check "record: 4.14.1 completes" [ "$AL_RC" = 0 ]
# an operator of the payload now says Upgradeable=False (the object as the
# operator would report it)
up_co_upgradeable etcd "etcd is defragmenting"
al_run "$T/o7" "$T/e7" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}"
al_check "record: 4.14.1 -> 4.15.0 is refused while etcd says Upgradeable=False" bash -c "[ $AL_RC = 3 ] && grep -q 'Cluster operator etcd should not be upgraded between minor versions: Upgradeable=False (AdminAckRequired): etcd is defragmenting' '$T/e7'"
al_check "record: ... the record still says Reconciling 4.14.1" [ "$(up_state "$T/state.json" '(s["state"], s["desired"]["version"], [h["state"] for h in s["history"]])')" = "('Reconciling', '4.14.1', ['Completed'])" ]
al_check "record: ... and ClusterVersion Upgradeable=False names etcd" [ "$(up_obj $CV_PATH '[c["message"] for c in o["status"]["conditions"] if c["type"] == "Upgradeable"]')" = "['Cluster operator etcd should not be upgraded between minor versions: etcd is defragmenting']" ]
al_run "$T/o7" "$T/e7" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}"
al_check "record: a patch update 4.14.1 -> 4.14.2 proceeds" [ "$AL_RC" = 0 ]

# --- ClusterVersionGiantHop: more than one minor ahead ----------------------
reset
al_run "$T/o3" "$T/e3" "$AIRLOCK" update --store "$S" --to 4.16.0 "${K[@]}"
al_check "GiantHop: skipping a minor version is refused (exit 3)" [ "$AL_RC" = 3 ]
al_check "GiantHop: the refusal names the precondition" grep -q 'Precondition "ClusterVersionGiantHop" failed because of "MultipleMinorVersionsUpdate": 4.16.0 is more than one minor version beyond the current target 4.14.1' "$T/e3"
al_check "GiantHop: nothing applied" [ "$(up_py 'print(len(present()))')" = 0 ]

# --- ClusterVersionRollback: a downgrade --------------------------------------
reset
al_run "$T/o4" "$T/e4" "$AIRLOCK" update --store "$S" --to 4.14.0 "${K[@]}"
al_check "Rollback: a downgrade is refused (exit 3)" [ "$AL_RC" = 3 ]
al_check "Rollback: the refusal names the precondition" grep -q 'Precondition "ClusterVersionRollback" failed because of "LowDesiredVersion": 4.14.0 is less than the current target 4.14.1' "$T/e4"
al_run "$T/o4" "$T/e4" "$AIRLOCK" update --store "$S" --to 4.14.0 "${K[@]}" --force
al_check "Rollback: forced, it proceeds" [ "$AL_RC" = 0 ]
al_check "Rollback: ... recorded as an accepted risk" [ "$(up_state "$T/state.json" '"LowDesiredVersion" in s["history"][0]["acceptedRisks"]')" = True ]
# several failed checks: Summarize's "Multiple precondition checks failed"
reset
up_co_upgradeable etcd "backup"
up_co_upgradeable network "migration"
al_run "$T/o5" "$T/e5" "$AIRLOCK" update --store "$S" --to 4.16.0 "${K[@]}"
al_check "several failures are listed together" grep -q "Multiple precondition checks failed" "$T/e5"
al_check "... each operator named" bash -c "grep -q 'Cluster operator etcd' '$T/e5' && grep -q 'Cluster operator network' '$T/e5' && grep -q ClusterVersionGiantHop '$T/e5'"

# --- preconditions are for a new update only: resuming is not re-checked ------
reset
up_ctl operator '{"name": "kube-apiserver", "never": true}' >/dev/null
al_run "$T/o6" "$T/e6" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}" --sync-timeout 2s
al_check "resume: the first run fails mid-update" [ "$(up_state "$T/state.json" 's["state"]')" = Updating ]
up_ctl operator '{"name": "kube-apiserver", "clear": true}' >/dev/null
up_co_upgradeable etcd "appeared during the update"
al_run "$T/o6" "$T/e6" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}"
al_check "resume: an update already accepted resumes and completes" [ "$AL_RC" = 0 ]

al_finish
