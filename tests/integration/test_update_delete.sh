#!/bin/bash
# test_update_delete.sh: manifests annotated release.openshift.io/delete remove their object (absent is done), in order, and reconciling removes one that came back.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update

S=$T/store
M=$T/manifests
INC='include.release.openshift.io/self-managed-high-availability: "true"'
cp -r "$AL_SOURCE_DIR/samples/release-manifests" "$M"
# level 50, after the console operator's own config: one object that exists
# in the cluster, one that never did; a kind whose CRD is absent too
cat >"$M/0000_50_console-operator_08_cleanup.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: console-legacy
  namespace: openshift-console-operator
  annotations:
    $INC
    release.openshift.io/delete: "true"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: never-existed
  namespace: openshift-console-operator
  annotations:
    $INC
    release.openshift.io/delete: "true"
---
apiVersion: example.invalid/v1
kind: Gone
metadata:
  name: old-widget
  annotations:
    $INC
    release.openshift.io/delete: "true"
EOF
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }
up_store_add_release "$S" 4.14.3 "$M" || { al_fail "make and mirror release 4.14.3"; al_finish; }
UP_VIRTUAL_CLOCK=1 up_ks_start --co-delay 0.05
K=(--kubeconfig "$T/kubeconfig" --operator-poll 100ms --force --state "$T/state.json")
CM=$KS_URL/api/v1/namespaces/openshift-console-operator/configmaps

# the object to remove, created by someone else before the update
plant() {
	curl -sf -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
		-d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"openshift-console-operator"}}' \
		"$KS_URL/api/v1/namespaces/openshift-console-operator?fieldManager=test" >/dev/null &&
		curl -sf -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
			-d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"console-legacy","namespace":"openshift-console-operator"},"data":{"a":"b"}}' \
			"$CM/console-legacy?fieldManager=test" >/dev/null
}
status_of() { curl -s -o /dev/null -w '%{http_code}' "$1"; }

al_check "the object to delete is planted" plant
al_check "... and is there" [ "$(status_of "$CM/console-legacy")" = 200 ]

al_run "$T/plan" "$T/eplan" "$AIRLOCK" update --store "$S" --to 4.14.3 --dry-run --force
al_check "dry run: the deletions are in the plan, marked" grep -q "delete ConfigMap openshift-console-operator/console-legacy (0000_50_console-operator_08_cleanup.yaml #1)" "$T/plan"
al_check "dry run: ... the cluster is untouched" [ "$(status_of "$CM/console-legacy")" = 200 ]

al_run "$T/o1" "$T/e1" "$AIRLOCK" update --store "$S" --to 4.14.3 "${K[@]}" --sync-timeout 60s
al_check "update with deletions completes" [ "$AL_RC" = 0 ]
al_check "the planted ConfigMap is gone" [ "$(status_of "$CM/console-legacy")" = 404 ]
al_check "the console operator's own ConfigMap is applied" [ "$(status_of "$CM/console-operator-config")" = 200 ]
al_check "deletions count as applied tasks" grep -Eq "update to 4.14.3 completed: applied ([0-9]+) of \1" "$T/o1" "$T/e1"
al_check "history Completed, state Reconciling" [ "$(up_state "$T/state.json" '(s["state"], [h["state"] for h in s["history"]])')" = "('Reconciling', ['Completed'])" ]
# the DELETE came after level 50's earlier manifests and before level 70
al_check "the DELETE is ordered within its level" python3 - "$KS_URL" <<'EOF'
import json, sys, urllib.request
log = json.load(urllib.request.urlopen(sys.argv[1] + "/_control/log"))["requests"]
idx = {}
for i, r in enumerate(log):
    p = r["path"].split("?")[0]
    if r["method"] == "DELETE" and p.endswith("/configmaps/console-legacy"):
        idx.setdefault("delete", i)
    if r["method"] == "PATCH" and p.endswith("/configmaps/console-operator-config"):
        idx.setdefault("own", i)
    if r["method"] == "PATCH" and "/namespaces/openshift-network-operator" in p:
        idx.setdefault("level70", i)
assert idx["own"] < idx["delete"] < idx["level70"], idx
EOF

# it comes back: reconciling deletes it again and says so
al_check "the ConfigMap is planted again" plant
al_run "$T/o2" "$T/e2" "$AIRLOCK" update --store "$S" --to 4.14.3 "${K[@]}" --sync-timeout 60s --seed 7
al_check "reconcile succeeds" [ "$AL_RC" = 0 ]
al_check "reconcile reports the removal as a repair" grep -q "repaired drift: delete ConfigMap openshift-console-operator/console-legacy" "$T/o2"
al_check "... and it is gone again" [ "$(status_of "$CM/console-legacy")" = 404 ]

# a deletion that fails for good fails the update and names the manifest
up_ctl reset '{}' >/dev/null
rm -f "$T/state.json"
up_ctl fault '{"path": "/api/v1/namespaces/openshift-console-operator/configmaps/console-legacy", "method": "DELETE", "status": 403}' >/dev/null
al_run "$T/o3" "$T/e3" "$AIRLOCK" update --store "$S" --to 4.14.3 "${K[@]}" --sync-timeout 20s
al_check "a refused DELETE fails the update (exit 3)" [ "$AL_RC" = 3 ]
al_check "... naming the manifest" grep -q "delete ConfigMap openshift-console-operator/console-legacy (0000_50_console-operator_08_cleanup.yaml #1)" "$T/e3"
al_check "... state Updating, history Partial" [ "$(up_state "$T/state.json" '(s["state"], [h["state"] for h in s["history"]])')" = "('Updating', ['Partial'])" ]

al_finish
