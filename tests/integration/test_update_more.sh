#!/bin/bash
# test_update_more.sh: updater scenarios: a stuck ClusterOperator, kill -9 and resume, re-targeting mid-update, reconciling repairs drift.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update

S=$T/store
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }
up_plan "$S" || { al_fail "dry-run plan"; al_finish; }
UP_VIRTUAL_CLOCK=1 up_ks_start --co-delay 0.1
K=(--kubeconfig "$T/kubeconfig" --operator-poll 100ms --force)
NTASKS=$(up_py 'print(len(plan()))')

reset() {
	up_ctl reset '{}' >/dev/null
	rm -f "$T/state.json"
}

# --- 5. a ClusterOperator never reaches the version ------------------------
reset
up_ctl operator '{"name": "kube-apiserver", "version": "4.13.9"}' >/dev/null
al_run "$T/o5" "$T/e5" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state.json" --sync-timeout 2s
al_check "5: exit 3" [ "$AL_RC" = 3 ]
al_check "5: failure names the operator and versions" grep -q "cluster operator 'kube-apiserver' has not reached operator 4.14.1 (reports 4.13.9" "$T/e5"
al_check "5: the level blocks: level 30 not applied" [ "$(up_py 'print([p for p in present() if p[0] >= 30])')" = "[]" ]
al_check "5: state Updating, history Partial" [ "$(up_state "$T/state.json" '(s["state"], [h["state"] for h in s["history"]])')" = "('Updating', ['Partial'])" ]
reset
up_ctl operator '{"name": "kube-apiserver", "clear": true}' >/dev/null
up_ctl operator '{"name": "etcd", "degraded": "disk full"}' >/dev/null
al_run "$T/o5" "$T/e5" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state.json" --sync-timeout 2s
al_check "5: a Degraded operator blocks too" grep -q "cluster operator 'etcd' .*Degraded=True" "$T/e5"
up_ctl operator '{"name": "etcd", "clear": true}' >/dev/null

# --- 5b. --watch retries a failed update until it succeeds ------------------
reset
up_ctl operator '{"name": "etcd", "never": true}' >/dev/null
"$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state.json" --sync-timeout 1s --watch \
	>"$T/o5w" 2>"$T/e5w" &
UPID=$!
for i in $(seq 1 100); do grep -q "retrying in" "$T/e5w" 2>/dev/null && break; sleep 0.1; done
up_ctl operator '{"name": "etcd", "clear": true}' >/dev/null
rc=0
for i in $(seq 1 300); do kill -0 "$UPID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$UPID" 2>/dev/null; then kill "$UPID"; fi
wait "$UPID" || rc=$?
al_check "5b: --watch reported the failure and retried" grep -q "update to 4.14.1 failed: applied" "$T/e5w"
al_check "5b: --watch ends with success" [ "$rc" = 0 ]
al_check "5b: state Reconciling, one Completed entry" [ "$(up_state "$T/state.json" '(s["state"], [h["state"] for h in s["history"]])')" = "('Reconciling', ['Completed'])" ]

# --- 7. kill -9 during apply, restart resumes ---------------------------------
reset
up_ctl operator '{"name": "authentication", "delay": 30}' >/dev/null
"$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state.json" --sync-timeout 60s \
	>"$T/o7" 2>"$T/e7" &
UPID=$!
for i in $(seq 1 100); do grep -q "^level 30" "$T/e7" 2>/dev/null && break; sleep 0.1; done
sleep 0.3
kill -9 "$UPID"
wait "$UPID" 2>/dev/null || true
al_check "7: killed mid-apply, state file says Updating" [ "$(up_state "$T/state.json" '(s["state"], [h["state"] for h in s["history"]])')" = "('Updating', ['Partial'])" ]
al_check "7: not everything was applied" [ "$(up_py 'print(len(missing()) > 0)')" = True ]
up_ctl operator '{"name": "authentication", "clear": true}' >/dev/null
al_run "$T/o7" "$T/e7" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state.json" --sync-timeout 30s
al_check "7: restart resumes Updating (not Reconciling)" grep -q "state Updating; resuming update to 4.14.1" "$T/e7"
al_check "7: ... and completes" [ "$AL_RC" = 0 ]
al_check "7: one history entry, Completed" [ "$(up_state "$T/state.json" '(s["state"], [h["state"] for h in s["history"]])')" = "('Reconciling', ['Completed'])" ]
# without a state file the cluster's ClusterUpdate status is the record
rm -f "$T/state.json"
al_run "$T/o7" "$T/e7" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --sync-timeout 30s
al_check "7: the cluster status is read back when there is no state file" grep -q "state Reconciling; reconciling 4.14.1" "$T/e7"

# --- 8. re-target mid-update -------------------------------------------------
reset
if up_store_add_4142 "$S"; then
	up_ctl operator '{"name": "kube-apiserver", "delay": 30}' >/dev/null
	al_run "$T/o8" "$T/e8" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state.json" --sync-timeout 2s
	al_check "8: first update stopped mid-graph" [ "$(up_state "$T/state.json" '(s["state"], s["desired"]["version"])')" = "('Updating', '4.14.1')" ]
	up_ctl operator '{"name": "kube-apiserver", "clear": true}' >/dev/null
	al_run "$T/o8" "$T/e8" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --state "$T/state.json" --sync-timeout 30s
	al_check "8: re-targeting starts a new update" grep -q "state Updating; updating to 4.14.2" "$T/e8"
	al_check "8: ... which completes" [ "$AL_RC" = 0 ]
	al_check "8: history: 4.14.2 Completed, 4.14.1 stays Partial" [ "$(up_state "$T/state.json" '[(h["version"], h["state"]) for h in s["history"]]')" = "[('4.14.2', 'Completed'), ('4.14.1', 'Partial')]" ]
	al_check "8: state Reconciling towards 4.14.2" [ "$(up_state "$T/state.json" '(s["state"], s["desired"]["version"])')" = "('Reconciling', '4.14.2')" ]
	al_check "8: ClusterOperators report 4.14.2" [ "$(up_py 'print(sorted(set(v["version"] for o in objects().values() if o["kind"] == "ClusterOperator" for v in o["status"]["versions"])))')" = "['4.14.2']" ]
	# back to 4.14.1 from Reconciling 4.14.2: a new update again, never a reconcile
	al_run "$T/o8" "$T/e8" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state.json" --dry-run
	al_check "8: another target from Reconciling plans a new update" grep -q "mode: new update (Reconciling" "$T/o8"
else
	al_fail "8: make and mirror release 4.14.2"
fi

# --- 9. reconciling repairs drift, in shuffled order --------------------------
reset
al_run "$T/o9" "$T/e9" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state.json"
al_check "9: update completes" [ "$AL_RC" = 0 ]
curl -sf -X PATCH -H 'Content-Type: application/merge-patch+json' -d '{"data":{"config.yaml":"tampered"}}' \
	"$KS_URL/api/v1/namespaces/openshift-etcd-operator/configmaps/etcd-operator-config" >/dev/null
curl -sf -X DELETE "$KS_URL/api/v1/namespaces/openshift-network-operator/serviceaccounts/cluster-network-operator" >/dev/null
up_ctl log/clear '{}' >/dev/null
al_run "$T/o9" "$T/e9" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state.json" --seed 7 --parallel 4
al_check "9: reconcile exits 0" [ "$AL_RC" = 0 ]
al_check "9: reports 2 repairs" grep -q "reconciled 4.14.1: applied $NTASKS of $NTASKS, repaired 2" "$T/o9"
al_check "9: the changed ConfigMap is reported" grep -q "repaired drift: ConfigMap openshift-etcd-operator/etcd-operator-config" "$T/o9"
al_check "9: the deleted ServiceAccount is reported" grep -q "repaired drift: ServiceAccount openshift-network-operator/cluster-network-operator" "$T/o9"
al_check "9: the ConfigMap is repaired" [ "$(up_py 'print(objects()[("ConfigMap", "openshift-etcd-operator", "etcd-operator-config")]["data"]["config.yaml"] != "tampered")')" = True ]
al_check "9: nothing missing" [ "$(up_py 'print(missing())')" = "[]" ]
al_check "9: state stays Reconciling" [ "$(up_state "$T/state.json" '(s["state"], [h["state"] for h in s["history"]])')" = "('Reconciling', ['Completed'])" ]
# a reconcile error is reported as Failing and never leaves Reconciling
up_ctl fault '{"path": "configmaps/etcd-operator-config$", "method": "PATCH", "status": 422}' >/dev/null
al_run "$T/o9" "$T/e9" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state.json"
al_check "9: reconcile error exits 3" [ "$AL_RC" = 3 ]
al_check "9: ... names the manifest" grep -q "reconciling 4.14.1 failed: applied $((NTASKS - 1)) of $NTASKS; first errors: ConfigMap openshift-etcd-operator/etcd-operator-config" "$T/e9"
al_check "9: ... Failing=True, state still Reconciling" [ "$(up_state "$T/state.json" '(s["state"], [c["status"] for c in s["conditions"] if c["type"] == "Failing"])')" = "('Reconciling', ['True'])" ]
up_ctl faults/clear '{}' >/dev/null

al_finish
