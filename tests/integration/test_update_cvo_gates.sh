#!/bin/bash
# test_update_cvo_gates.sh: the CVO's update gates and merge rules (issue 26), each scenario named after the CVO function it follows: overrides (library-go Include, ClusterVersionOverridesCondition), the delete annotation (ValidDeleteAnnotation), per-kind merges (lib/resourcemerge Ensure*), implicitly enabled capabilities (GetImplicitlyEnabledCapabilities), ClusterVersion status reasons (status.go).
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update

S=$T/store
INC='include.release.openshift.io/self-managed-high-availability: "true"'
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }

# --- payloads (tests/data/cvo-gates/README.md: the CVO cases they follow) ---
M=$T/m
mkdir -p "$M"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\n  namespace: default\n  annotations:\n    %s\ndata:\n  k1: release\n' "$INC" >"$M/0000_10_a_00_cm.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: taken\n  namespace: default\n  annotations:\n    %s\ndata:\n  a: release\n' "$INC" >"$M/0000_10_a_01_taken.yaml"
printf 'apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: unmanaged-co\n  annotations:\n    %s\nstatus:\n  versions:\n  - name: operator\n    version: "0.0.1-snapshot"\n' "$INC" >"$M/0000_20_b_00_clusteroperator.yaml"
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: default\n  annotations:\n    %s\nspec:\n  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d}}\n    spec: {containers: [{name: c, image: "quay.io/x/y@sha256:%064d"}]}\n' "$INC" 7 >"$M/0000_30_c_00_deployment.yaml"
for v in 4.14.2 4.15.0; do
	up_store_add_release "$S" $v "$M" || { al_fail "make release $v"; al_finish; }
done
# 4.14.3: a delete annotation whose value is not "true"
M3=$T/m3
mkdir -p "$M3"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: victim\n  namespace: default\n  annotations:\n    %s\n    release.openshift.io/delete: "yes"\n' "$INC" >"$M3/0000_10_a_00_victim.yaml"
up_store_add_release "$S" 4.14.3 "$M3" || { al_fail "make release 4.14.3"; al_finish; }
# 4.14.4: the ConfigMap 4.14.2 applies without a capability is now under
# Console (GetImplicitlyEnabledCapabilities)
M4=$T/m4
cp -r "$M" "$M4"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\n  namespace: default\n  annotations:\n    %s\n    capability.openshift.io/name: Console\ndata:\n  k1: moved\n' "$INC" >"$M4/0000_10_a_00_cm.yaml"
up_store_add_release "$S" 4.14.4 "$M4" || { al_fail "make release 4.14.4"; al_finish; }
for v in 4.14.2 4.14.3 4.14.4 4.15.0; do
	up_sign "$S" "$(up_digest "$S" $v)" || { al_fail "sign $v"; al_finish; }
done

UP_VIRTUAL_CLOCK=1 up_ks_start --co-delay 0.05
K=(--kubeconfig "$T/kubeconfig" --operator-poll 100ms --keyring "$T/trusted.gpg" --state "$T/state.json")
reset() {
	up_ctl reset '{}' >/dev/null
	rm -f "$T/state.json"
}
seed() { up_ctl objects "{\"object\": $1}" >/dev/null; }
CM=/api/v1/namespaces/default/configmaps
FM=airlock-update # cmd_update.c field manager

# --- overrides: library-go Include (getOverrideForManifest) and the
# precondition's ClusterVersionOverridesCondition ----------------------------
seed_overrides() {
	seed '{"apiVersion":"config.openshift.io/v1","kind":"ClusterVersion","metadata":{"name":"version"},"spec":{"clusterID":"x","overrides":[{"kind":"ConfigMap","group":"","namespace":"default","name":"taken","unmanaged":true},{"kind":"ClusterOperator","group":"config.openshift.io","namespace":"","name":"unmanaged-co","unmanaged":true},{"kind":"ConfigMap","group":"","namespace":"default","name":"owned","unmanaged":false}]},"status":{"desired":{"version":"4.14.1","image":"i"},"history":[{"state":"Completed","version":"4.14.1","image":"i","verified":true,"startedTime":"2026-01-01T00:00:00Z","completionTime":"2026-01-01T01:00:00Z"}],"conditions":[]}}'
	seed '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"taken","namespace":"default"},"data":{"a":"admin"}}'
}
reset
seed_overrides
al_run "$T/o1" "$T/e1" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}"
al_check "overrides: an unmanaged override refuses a minor update (exit 3)" [ "$AL_RC" = 3 ]
al_check "overrides: ... as ClusterVersionOverridesSet" grep -q 'Precondition "ClusterVersionUpgradeable" failed because of "ClusterVersionOverridesSet": Disabling ownership via cluster version overrides prevents upgrades' "$T/e1"
al_check "overrides: ... nothing applied" [ "$(up_obj $CM/owned 'o is None')" = True ]
reset
seed_overrides
up_ctl operator '{"name": "unmanaged-co", "never": true}' >/dev/null
al_run "$T/o2" "$T/e2" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --sync-timeout 30s
al_check "overrides: a patch update is not refused, and completes" [ "$AL_RC" = 0 ]
al_check "overrides: the unmanaged ConfigMap is not written (the admin's data stays)" [ "$(up_obj $CM/taken 'o["data"]')" = "{'a': 'admin'}" ]
al_check "overrides: the unmanaged ClusterOperator is neither written nor waited for" [ "$(up_obj /apis/config.openshift.io/v1/clusteroperators/unmanaged-co 'o is None')" = True ]
al_check "overrides: an override with unmanaged: false changes nothing" [ "$(up_obj $CM/owned 'o["data"]["k1"]')" = release ]
al_run "$T/o2p" "$T/e2p" "$AIRLOCK" update --store "$S" --to 4.14.2 --dry-run --force -q --kubeconfig "$T/kubeconfig"
al_check "overrides: the plan lists what was left out and why" grep -q 'ConfigMap default/taken (0000_10_a_01_taken.yaml #1): unmanaged (ClusterVersion spec.overrides)' "$T/o2p"

# --- the delete annotation: lib/resourcedelete ValidDeleteAnnotation ---------
reset
seed '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"victim","namespace":"default"},"data":{"x":"1"}}'
al_run "$T/o3" "$T/e3" "$AIRLOCK" update --store "$S" --to 4.14.3 "${K[@]}" --sync-timeout 30s
al_check "delete: a value other than \"true\" fails the update (exit 3)" [ "$AL_RC" = 3 ]
al_check "delete: ... with the CVO's error" grep -qF 'invalid delete annotation "release.openshift.io/delete" value: "yes"' "$T/e3"
al_check "delete: the object is untouched (neither deleted nor applied)" [ "$(up_obj $CM/victim '(o["data"], "release.openshift.io/delete" in (o["metadata"].get("annotations") or {}))')" = "({'x': '1'}, False)" ]

# --- per-kind merges: lib/resourcemerge EnsureConfigMap, EnsureDeployment,
# ensurePodTemplateSpec / ensurePodSpec / ensureContainer ----------------------
reset
# as the previous release applied it (airlock's field manager): k0 is a key
# the new manifest dropped, which server-side apply alone would remove
curl -sf -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
	-d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owned","namespace":"default","labels":{"admin":"yes"}},"data":{"k0":"kept","k1":"old"}}' \
	"$KS_URL/api/v1/namespaces/default/configmaps/owned?fieldManager=$FM&force=true" >/dev/null
# the live Deployment as an admin changed it: a sidecar container, an env
# var, a pull policy, a scheduler and a toleration the manifest lacks
seed '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"default"},"spec":{"replicas":3,"paused":true,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d","admin":"yes"}},"spec":{"schedulerName":"custom","tolerations":[{"key":"admin","operator":"Exists"}],"containers":[{"name":"c","image":"old","imagePullPolicy":"Always","env":[{"name":"X","value":"admin"}]},{"name":"sidecar","image":"s"}]}}}}'
# another writer wins the first replace: a 409, read, merge and write again
up_ctl fault '{"path": "/deployments/d$", "method": "PUT", "status": 409, "times": 1}' >/dev/null
up_ctl log/clear '{}' >/dev/null
al_run "$T/o4" "$T/e4" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --sync-timeout 30s
up_ctl faults/clear '{}' >/dev/null
al_check "merge: the update completes" [ "$AL_RC" = 0 ]
al_check "merge: the Deployment is replaced (PUT), conditionally: a 409 is read and written again" [ "$(curl -sf "$KS_URL/_control/log" | python3 -c 'import json,sys
print([(e["method"], e["status"]) for e in json.load(sys.stdin)["requests"] if e["path"].endswith("/deployments/d") and e["method"] != "GET"])')" = "[('PUT', 409), ('PUT', 200)]" ]
al_check "merge: EnsureConfigMap: a data key the manifest does not have stays, the manifest's own win" [ "$(up_obj $CM/owned 'sorted(o["data"].items())')" = "[('k0', 'kept'), ('k1', 'release')]" ]
al_check "merge: EnsureObjectMeta: a label the manifest does not have stays" [ "$(up_obj $CM/owned 'o["metadata"]["labels"]["admin"]')" = yes ]
al_check "merge: EnsureDeployment: replicas missing in the manifest become 1, paused becomes false" [ "$(up_obj /apis/apps/v1/namespaces/default/deployments/d '(o["spec"]["replicas"], bool(o["spec"].get("paused")))')" = "(1, False)" ]
D_PATH=/apis/apps/v1/namespaces/default/deployments/d
al_check "merge: ensureContainers: a container the manifest does not have is removed, the manifest's image wins" [ "$(up_obj $D_PATH '[(c["name"], c["image"][-4:]) for c in o["spec"]["template"]["spec"]["containers"]]')" = "[('c', '0007')]" ]
al_check "merge: ensureEnvVar: the container's env is the manifest's (none)" [ "$(up_obj $D_PATH 'o["spec"]["template"]["spec"]["containers"][0].get("env")')" = None ]
al_check "merge: ensureContainer: a field the CVO does not own (imagePullPolicy) stays" [ "$(up_obj $D_PATH 'o["spec"]["template"]["spec"]["containers"][0].get("imagePullPolicy")')" = Always ]
al_check "merge: ensurePodSpec: schedulerName and tolerations the manifest lacks stay, dnsPolicy defaults to ClusterFirst, terminationGracePeriodSeconds to 30" [ "$(up_obj $D_PATH '(lambda s: (s.get("schedulerName"), s.get("tolerations"), s.get("dnsPolicy"), s.get("terminationGracePeriodSeconds")))(o["spec"]["template"]["spec"])')" = "('custom', [{'key': 'admin', 'operator': 'Exists'}], 'ClusterFirst', 30)" ]
al_check "merge: ensurePodTemplateSpec: a template label the manifest lacks stays" [ "$(up_obj $D_PATH 'o["spec"]["template"]["metadata"]["labels"]')" = "{'app': 'd', 'admin': 'yes'}" ]
GEN=$(up_obj $D_PATH 'o["metadata"]["generation"]')
# a second run of the same release (reconciling) keeps it so
al_run "$T/o4" "$T/e4" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --sync-timeout 30s
al_check "merge: reconciling keeps the kept key" [ "$(up_obj $CM/owned 'o["data"].get("k0")')" = kept ]
al_check "merge: reconciling an unchanged Deployment writes nothing (its generation stays)" [ "$(up_obj $D_PATH 'o["metadata"]["generation"]')" = "$GEN" ]

# --- implicitly enabled capabilities: GetImplicitlyEnabledCapabilities ------
reset
D2=$(up_digest "$S" 4.14.2)
seed '{"apiVersion":"config.openshift.io/v1","kind":"ClusterVersion","metadata":{"name":"version"},"spec":{"clusterID":"x","capabilities":{"baselineCapabilitySet":"None"}},"status":{"desired":{"version":"4.14.2","image":"quay.io/airlock-samples/release@'"$D2"'"},"history":[{"state":"Completed","version":"4.14.2","image":"quay.io/airlock-samples/release@'"$D2"'","verified":true,"startedTime":"2026-01-01T00:00:00Z","completionTime":"2026-01-01T01:00:00Z"}],"capabilities":{"enabledCapabilities":[],"knownCapabilities":["Console","Insights"]},"conditions":[]}}'
seed '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owned","namespace":"default"},"data":{"k1":"release"}}'
al_run "$T/o5" "$T/e5" "$AIRLOCK" update --store "$S" --to 4.14.4 "${K[@]}" --sync-timeout 30s
al_check "implicit: the update completes" [ "$AL_RC" = 0 ]
al_check "implicit: the capability is enabled implicitly, and said so" grep -q "capabilities enabled implicitly: Console" "$T/e5"
al_check "implicit: the object moved under it is still applied (new content)" [ "$(up_obj $CM/owned 'o["data"]["k1"]')" = moved ]
al_check "implicit: ClusterVersion status.capabilities.enabledCapabilities records it" [ "$(up_obj $CV_PATH 'o["status"]["capabilities"]["enabledCapabilities"]')" = "['Console']" ]
al_check "implicit: ... and the known capabilities stay" [ "$(up_obj $CV_PATH 'o["status"]["capabilities"]["knownCapabilities"]')" = "['Console', 'Insights']" ]

# --- ClusterVersion status: pkg/cvo/status.go, task.go reasonForPayloadSyncError
seed_cv() {
	seed '{"apiVersion":"config.openshift.io/v1","kind":"ClusterVersion","metadata":{"name":"version"},"spec":{"clusterID":"x"},"status":{"desired":{"version":"4.14.1","image":"i"},"history":[],"conditions":[]}}'
}
cond() { up_obj $CV_PATH '[(c["status"], c["reason"]) for c in o["status"]["conditions"] if c["type"] == "'"$1"'"]'; }
reset
seed_cv
up_ctl fault '{"path": "/configmaps/owned$", "method": "PATCH", "status": 403}' >/dev/null
al_run "$T/o6" "$T/e6" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --sync-timeout 30s
al_check "status: a 403 fails the update (exit 3)" [ "$AL_RC" = 3 ]
al_check "status: Failing carries UpdatePayloadResourceForbidden" [ "$(cond Failing)" = "[('True', 'UpdatePayloadResourceForbidden')]" ]
al_check "status: ... and so does Progressing" [ "$(cond Progressing)" = "[('True', 'UpdatePayloadResourceForbidden')]" ]
al_check "status: RetrievedUpdates=False written when nothing set it" [ "$(up_obj $CV_PATH '[c["status"] for c in o["status"]["conditions"] if c["type"] == "RetrievedUpdates"]')" = "['False']" ]
al_check "status: the 4.14.2 entry is Partial without completionTime" [ "$(up_obj $CV_PATH '[(h["version"], h["state"], h["completionTime"]) for h in o["status"]["history"]]')" = "[('4.14.2', 'Partial', None)]" ]
# a new update supersedes the Partial entry: it gets its completionTime
up_ctl faults/clear '{}' >/dev/null
al_run "$T/o7" "$T/e7" "$AIRLOCK" update --store "$S" --to 4.14.4 "${K[@]}" --sync-timeout 30s
al_check "status: the retarget to 4.14.4 completes" [ "$AL_RC" = 0 ]
al_check "status: the superseded 4.14.2 entry stays Partial and gets its completionTime" [ "$(up_obj $CV_PATH '[(h["version"], h["state"], h["completionTime"] is not None) for h in o["status"]["history"]]')" = "[('4.14.4', 'Completed', True), ('4.14.2', 'Partial', True)]" ]
al_check "status: Failing is cleared" [ "$(up_obj $CV_PATH '[c["status"] for c in o["status"]["conditions"] if c["type"] == "Failing"]')" = "['False']" ]
# an operator that is not available: ClusterOperatorNotAvailable
reset
seed_cv
up_ctl operator '{"name": "unmanaged-co", "delay": 3600}' >/dev/null
up_ctl status-sim '{"kind": "ClusterOperator", "name": "unmanaged-co", "steps": [{"after": 0, "status": {"versions": [{"name": "operator", "version": "4.14.2"}], "conditions": [{"type": "Available", "status": "False", "reason": "NoPods", "message": "no pods"}, {"type": "Degraded", "status": "False"}]}}]}' >/dev/null
# 4 s: the levels before the operator apply well within it, even under ASan on a loaded machine
al_run "$T/o8" "$T/e8" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --sync-timeout 4s
al_check "status: an operator not available fails the update at the deadline (exit 3)" [ "$AL_RC" = 3 ]
al_check "status: Failing carries ClusterOperatorNotAvailable" [ "$(cond Failing)" = "[('True', 'ClusterOperatorNotAvailable')]" ]
# someone else's RetrievedUpdates stays
curl -sf "$KS_URL$CV_PATH" | python3 -c 'import json,sys
o = json.load(sys.stdin)
o["status"]["conditions"] = [c for c in o["status"]["conditions"] if c["type"] != "RetrievedUpdates"] + [{"type": "RetrievedUpdates", "status": "True", "reason": "Fetched", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]
print(json.dumps({"object": o}))' | curl -sf -X POST -H 'Content-Type: application/json' -d @- "$KS_URL/_control/objects" >/dev/null
up_ctl operator '{"name": "unmanaged-co", "clear": true}' >/dev/null
up_ctl status-sim '{"kind": "ClusterOperator", "name": "unmanaged-co", "clear": true}' >/dev/null
al_run "$T/o9" "$T/e9" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --sync-timeout 30s
al_check "status: the resumed update completes" [ "$AL_RC" = 0 ]
al_check "status: a RetrievedUpdates written by someone else stays" [ "$(cond RetrievedUpdates)" = "[('True', 'Fetched')]" ]

al_finish
