#!/bin/bash
# test_update_cvo_rules.sh: the Cluster Version Operator's load, order and completion rules on real payload names and the CVO's own manifests, each scenario named after the CVO behaviour it checks.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update

S=$T/store
DATA=$AL_SOURCE_DIR/tests/data
INC='include.release.openshift.io/self-managed-high-availability: "true"'
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }

# --- payloads -----------------------------------------------------------
# 4.14.2: real file names (tests/data/cvo-payload), manifests/ and release-manifests/
python3 "$AL_TOOLS/mkpayload.py" --names "$DATA/cvo-payload/names.txt" \
	--names "$DATA/cvo-payload/names-extra.txt" --out "$T/real" >/dev/null
up_store_add_release "$S" 4.14.2 "$T/real/release-manifests" "$T/real/manifests" ||
	{ al_fail "make release 4.14.2 (real names)"; al_finish; }

# 4.14.3: the CVO's real install/ as manifests/, the samples (without the
# CVO's own files, which a real release carries in manifests/ only)
M3=$T/m3
cp -r "$AL_SOURCE_DIR/samples/release-manifests" "$M3"
rm -f "$M3"/0000_00_cluster-version-operator_00_namespace.yaml "$M3"/0000_00_cluster-version-operator_02_roles.yaml \
	"$M3"/0000_00_cluster-version-operator_03_deployment.yaml "$M3"/0000_90_cluster-version-operator_02_servicemonitor.yaml
up_store_add_release "$S" 4.14.3 "$M3" "$DATA/cvo-install" || { al_fail "make release 4.14.3 (CVO install/)"; al_finish; }

# 4.14.4: the waiting rules: a CRD and its custom resource, a Job barrier,
# Deployments, ClusterOperators whose status the test writes
M4=$T/m4
mkdir -p "$M4"
cat >"$M4/0000_10_widgets_00_crd.yaml" <<EOF
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.airlock.io
  annotations:
    $INC
spec:
  group: example.airlock.io
  scope: Cluster
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true, storage: true}]
EOF
cat >"$M4/0000_10_widgets_01_widget.yaml" <<EOF
apiVersion: example.airlock.io/v1
kind: Widget
metadata:
  name: w1
  annotations:
    $INC
EOF
cm() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: default\n  annotations:\n    %s\n' "$1" "$INC"; }
cm a0 >"$M4/0000_50_a_00.yaml"
cm a1 >"$M4/0000_50_a_01.yaml"
cat >"$M4/0000_50_b_00_job.yaml" <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: default
  annotations:
    $INC
spec: {}
EOF
cm b1 >"$M4/0000_50_b_01.yaml"
cm c0 >"$M4/0000_50_c_00.yaml"
cat >"$M4/0000_60_d_00_deployment.yaml" <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  namespace: default
  annotations:
    $INC
spec: {replicas: 1}
EOF
cat >"$M4/0000_70_e_00_clusteroperator.yaml" <<EOF
apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata:
  name: e
  annotations:
    $INC
status:
  versions:
  - name: operator
    version: "0.0.1-snapshot"
EOF
up_store_add_release "$S" 4.14.4 "$M4" || { al_fail "make release 4.14.4"; al_finish; }

# 4.14.5: a ClusterOperator manifest without status.versions
M5=$T/m5
mkdir -p "$M5"
cm x0 >"$M5/0000_10_x_00.yaml"
printf 'apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: nov\n  annotations:\n    %s\n' "$INC" \
	>"$M5/0000_20_nov_00_clusteroperator.yaml"
up_store_add_release "$S" 4.14.5 "$M5" || { al_fail "make release 4.14.5"; al_finish; }

# 4.14.6: the same object in two files
M6=$T/m6
mkdir -p "$M6"
cm same >"$M6/0000_10_x_00_first.yaml"
cm same >"$M6/0000_20_y_00_second.yaml"
up_store_add_release "$S" 4.14.6 "$M6" || { al_fail "make release 4.14.6"; al_finish; }

# --- 1. ByNumberAndComponent + SplitOnJobs on a real payload, task by task
plan_of() { "$AIRLOCK" update --store "$S" --to "$1" --dry-run --force -q "${@:2}" >"$T/plan.$1.txt" 2>"$T/plan.$1.err"; }
al_check "1: dry-run plan of the real-names payload" plan_of 4.14.2
al_check "1: the payload has 200+ manifests" [ "$(grep -c '^    ' "$T/plan.4.14.2.txt")" -gt 200 ]
al_run "$T/g1" "$T/g1e" python3 "$AL_TOOLS/cvograph.py" --payload "$T/real" --plan "$T/plan.4.14.2.txt"
cat "$T/g1"
al_check "1: ByNumberAndComponent/SplitOnJobs graph equals the CVO's, task by task" [ "$AL_RC" = 0 ]
# the comparison can fail: the old rule (unmatched names after the last level)
python3 - "$T/plan.4.14.2.txt" "$T/plan.old.txt" <<'EOPY'
import sys
lines = open(sys.argv[1]).read().split("\n")
i = [k for k, l in enumerate(lines) if "consoleclidownload" in l][0]
moved = lines.pop(i)
lines += ["unnumbered: 1 serial group, 1 manifests", "  component -: 1 manifests", moved]
open(sys.argv[2], "w").write("\n".join(lines))
EOPY
al_check_fails "1: the comparison catches unmatched names moved after the last level" 1 \
	python3 "$AL_TOOLS/cvograph.py" --payload "$T/real" --plan "$T/plan.old.txt"
al_check "1: a name the CVO's pattern does not match runs in place (0000_10_consoleclidownload.crd.yaml right after 0000_10_config-operator_02_config.clusterrole.yaml)" \
	python3 -c 'import re,sys
keys = [m.group(1) for m in (re.search(r"\((\S+) #\d+\)$", l.rstrip()) for l in open(sys.argv[1])) if m]
i = keys.index("0000_10_consoleclidownload.crd.yaml")
sys.exit(0 if keys[i - 1] == "0000_10_config-operator_02_config.clusterrole.yaml" else 1)' "$T/plan.4.14.2.txt"
al_check "1: manifests/ (the CVO's own) come first" \
	python3 -c 'import re,sys
keys = [m.group(1) for m in (re.search(r"\((\S+) #\d+\)$", l.rstrip()) for l in open(sys.argv[1])) if m]
sys.exit(0 if keys[0].startswith("manifests/") and not any(k.startswith("manifests/") for k in keys[20:]) else 1)' "$T/plan.4.14.2.txt"
al_check "1: Default feature set: one of the five clusterversions CRD variants" \
	[ "$(grep -c '^    .*clusterversions-' "$T/plan.4.14.2.txt")" = 1 ]
al_check "1: ... the Default one" grep -q '^    .*clusterversions-Default.crd.yaml' "$T/plan.4.14.2.txt"
al_check "1: the plan lists the variants left out, with the reason" \
	grep -q '^  - .*clusterversions-TechPreviewNoUpgrade.crd.yaml #1): feature set (release.openshift.io/feature-set: TechPreviewNoUpgrade)' "$T/plan.4.14.2.txt"
al_check "1b: dry-run with --feature-set TechPreviewNoUpgrade --capabilities ''" \
	plan_of 4.14.2 --feature-set TechPreviewNoUpgrade --capabilities ''
al_run "$T/g1b" "$T/g1be" python3 "$AL_TOOLS/cvograph.py" --payload "$T/real" --plan "$T/plan.4.14.2.txt" \
	--feature-set TechPreviewNoUpgrade --capabilities ''
cat "$T/g1b"
al_check "1b: the graph equals the CVO's for TechPreviewNoUpgrade and no capabilities" [ "$AL_RC" = 0 ]
al_check "1b: the TechPreviewNoUpgrade variant" grep -q '^    .*clusterversions-TechPreviewNoUpgrade.crd.yaml' "$T/plan.4.14.2.txt"
al_check "1b: no console-operator manifest without the Console capability" [ "$(grep -c '^    .*0000_50_console-operator_' "$T/plan.4.14.2.txt")" = 0 ]
al_check "1b: ... and no console ClusterOperator to wait for" [ "$(grep -c '^    ClusterOperator console-operator ' "$T/plan.4.14.2.txt")" = 0 ]
al_check "1b: ... listed as left out: capability not enabled" \
	grep -q '^  - ClusterOperator console-operator (0000_50_console-operator_08-clusteroperator.yaml #1): capability not enabled (capability.openshift.io/name: Console)' "$T/plan.4.14.2.txt"

al_run "$T/o1u" "$T/e1u" "$AIRLOCK" update --store "$S" --to 4.14.2 --dry-run --force --feature-set TechPreview
al_check "1u: an unknown --feature-set is a usage error (exit 2)" [ "$AL_RC" = 2 ]
al_check "1u: ... naming it" grep -q "unknown feature set 'TechPreview'" "$T/e1u"
al_run "$T/o1c" "$T/e1c" "$AIRLOCK" update --store "$S" --to 4.14.2 --dry-run --force -q --capabilities Console,Consol
al_check "1u: an unknown capability is warned about" grep -q "capability 'Consol' is not known" "$T/e1c"

UP_VIRTUAL_CLOCK=1 up_ks_start --co-delay 0.05 --job-delay 1.0
K=(--kubeconfig "$T/kubeconfig" --operator-poll 100ms --force)
reset() {
	up_ctl reset '{}' >/dev/null
	rm -f "$T/state.json"
}
seed() { up_ctl objects "{\"object\": $1}" >/dev/null; }
log_json() { curl -sf "$KS_URL/_control/log" >"$T/log.json"; }

# --- 2. feature set and capabilities come from the cluster -----------------
reset
seed '{"apiVersion":"config.openshift.io/v1","kind":"FeatureGate","metadata":{"name":"cluster"},"spec":{"featureSet":"TechPreviewNoUpgrade"}}'
seed '{"apiVersion":"config.openshift.io/v1","kind":"ClusterVersion","metadata":{"name":"version"},"spec":{"capabilities":{"baselineCapabilitySet":"None","additionalEnabledCapabilities":["marketplace"]}},"status":{"capabilities":{"enabledCapabilities":["marketplace","Insights"]}}}'
up_ctl operator '{"name": "console-operator", "never": true}' >/dev/null
al_run "$T/o2" "$T/e2" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --sync-timeout 60s
al_check "2: the update with the cluster's feature set and capabilities completes" [ "$AL_RC" = 0 ]
al_check "2: FeatureGate cluster spec.featureSet decides: the TechPreviewNoUpgrade CRD variant applied" \
	[ "$(up_py 'print([o["metadata"]["annotations"].get("release.openshift.io/feature-set") for o in get("/_control/objects")["items"] if o["kind"] == "CustomResourceDefinition" and "clusterversions" in o["metadata"]["name"]])')" = "['TechPreviewNoUpgrade']" ]
al_check "2: a disabled capability's manifests are skipped (Console)" \
	[ "$(up_py 'print(len([o for o in get("/_control/objects")["items"] if "console-operator" in o["metadata"]["name"]]))')" = 0 ]
al_check "2: ... its ClusterOperator is not waited for (it would never be ready)" \
	[ "$(up_py 'print([o["metadata"]["name"] for o in get("/_control/objects")["items"] if o["kind"] == "ClusterOperator" and o["metadata"]["name"] == "console-operator"])')" = "[]" ]
al_check "2: an enabled capability's manifests are applied (marketplace)" \
	[ "$(up_py 'print(len([o for o in get("/_control/objects")["items"] if "operator-marketplace" in o["metadata"]["name"]]) > 0)')" = True ]
al_check "2: an implicitly enabled capability (status.enabledCapabilities) stays enabled (Insights)" \
	[ "$(up_py 'print(len([o for o in get("/_control/objects")["items"] if "insights-operator" in o["metadata"]["name"]]) > 0)')" = True ]
al_check "2: the filters are reported" grep -q "filters: feature set TechPreviewNoUpgrade" "$T/e2"
reset
al_run "$T/o2b" "$T/e2b" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --sync-timeout 60s \
	--feature-set Default --capabilities marketplace
al_check "2b: --feature-set and --capabilities override the cluster" [ "$AL_RC" = 0 ]
al_check "2b: the Default CRD variant" \
	[ "$(up_py 'print([o["metadata"]["annotations"].get("release.openshift.io/feature-set") for o in get("/_control/objects")["items"] if o["kind"] == "CustomResourceDefinition" and "clusterversions" in o["metadata"]["name"]])')" = "['Default']" ]
al_check "2b: Insights not enabled by the flag: skipped" \
	[ "$(up_py 'print(len([o for o in get("/_control/objects")["items"] if "insights-operator" in o["metadata"]["name"]]))')" = 0 ]

# --- 3. the image's manifests/ (the CVO's own install/) --------------------
reset
up_ctl kinds '{"kinds": [
 {"group": "networking.k8s.io", "version": "v1", "kind": "NetworkPolicy", "plural": "networkpolicies", "namespaced": true},
 {"group": "operator.openshift.io", "version": "v1alpha1", "kind": "ClusterVersionOperator", "plural": "clusterversionoperators", "namespaced": false},
 {"group": "monitoring.coreos.com", "version": "v1", "kind": "ServiceMonitor", "plural": "servicemonitors", "namespaced": true},
 {"group": "monitoring.coreos.com", "version": "v1", "kind": "PrometheusRule", "plural": "prometheusrules", "namespaced": true}]}' >/dev/null
for ns in openshift-config openshift-config-managed; do
	seed "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}"
done
# the gates of this release: ClusterUpdateAcceptRisks is not enabled
seed '{"apiVersion":"config.openshift.io/v1","kind":"FeatureGate","metadata":{"name":"cluster"},"spec":{},"status":{"featureGates":[{"version":"4.14.3","enabled":[{"name":"SomethingElse"}],"disabled":[{"name":"ClusterUpdateAcceptRisks"}]}]}}'
D3=$(up_digest "$S" 4.14.3)
al_run "$T/o3" "$T/e3" "$AIRLOCK" update --store "$S" --to 4.14.3 "${K[@]}" --sync-timeout 60s
al_check "3: the release with the CVO's manifests/ completes" [ "$AL_RC" = 0 ]
dep() { up_py 'd = get("/apis/apps/v1/namespaces/openshift-cluster-version/deployments/cluster-version-operator"); print('"$1"')'; }
al_check "3: manifests/ is loaded: the CVO Deployment is applied" dep '"ok"'
al_check "3: {{.ReleaseImage}} rendered to the release's pull spec" \
	[ "$(dep 'd["spec"]["template"]["spec"]["containers"][0]["image"]')" = "quay.io/airlock-samples/release@$D3" ]
al_check "3: {{ .ClusterProfile }} rendered" \
	[ "$(dep '[e["value"] for e in d["spec"]["template"]["spec"]["containers"][0]["env"] if e["name"] == "CLUSTER_PROFILE"][0]')" = self-managed-high-availability ]
al_check "3: string literals rendered ({{ \"{{ \$labels.name }}\" }} gives {{ \$labels.name }})" \
	up_py 'import json; r = get("/apis/monitoring.coreos.com/v1/namespaces/openshift-cluster-version/prometheusrules/cluster-version-operator"); sys.exit(0 if "{{ $labels.name }}" in json.dumps(r) and "{{ \"{{" not in json.dumps(r) else 1)'
al_check "3: feature-set TechPreviewNoUpgrade manifests left out on a Default cluster (openshift-lightspeed)" \
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$KS_URL/api/v1/namespaces/openshift-lightspeed")" = 404 ]
al_check "3: feature-gate ClusterUpdateAcceptRisks not enabled: its PrometheusRule left out" \
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$KS_URL/apis/monitoring.coreos.com/v1/namespaces/openshift-cluster-version/prometheusrules/cluster-version-operator-accept-risks")" = 404 ]
log_json
al_check "3: manifests/ applied before release-manifests/ (the CVO Namespace is the first manifest)" \
	python3 -c 'import json,sys
p = [r["path"] for r in json.load(open(sys.argv[1]))["requests"] if r["method"] == "PATCH" and "airlock.io" not in r["path"] and not r["path"].endswith("/status")]
sys.exit(0 if p and p[0].endswith("/namespaces/openshift-cluster-version") else 1)' "$T/log.json"

al_check "3: the gates of the release the cluster runs (none completed: the target)" grep -q "feature gates of 4.14.3" "$T/e3"
# 3g: extractEnabledGates takes the entry of the version the cluster runs:
# ClusterVersion says 4.14.1 completed, whose gates enable ClusterUpdateAcceptRisks
reset
up_ctl kinds '{"kinds": [
 {"group": "networking.k8s.io", "version": "v1", "kind": "NetworkPolicy", "plural": "networkpolicies", "namespaced": true},
 {"group": "operator.openshift.io", "version": "v1alpha1", "kind": "ClusterVersionOperator", "plural": "clusterversionoperators", "namespaced": false},
 {"group": "monitoring.coreos.com", "version": "v1", "kind": "ServiceMonitor", "plural": "servicemonitors", "namespaced": true},
 {"group": "monitoring.coreos.com", "version": "v1", "kind": "PrometheusRule", "plural": "prometheusrules", "namespaced": true}]}' >/dev/null
for ns in openshift-config openshift-config-managed; do
	seed "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}"
done
seed '{"apiVersion":"config.openshift.io/v1","kind":"ClusterVersion","metadata":{"name":"version"},"spec":{},"status":{"history":[{"version":"4.14.1","state":"Completed"}]}}'
seed '{"apiVersion":"config.openshift.io/v1","kind":"FeatureGate","metadata":{"name":"cluster"},"spec":{},"status":{"featureGates":[{"version":"4.14.1","enabled":[{"name":"ClusterUpdateAcceptRisks"}]},{"version":"4.14.3","enabled":[]}]}}'
al_run "$T/o3g" "$T/e3g" "$AIRLOCK" update --store "$S" --to 4.14.3 "${K[@]}" --sync-timeout 60s
al_check "3g: the update completes" [ "$AL_RC" = 0 ]
al_check "3g: extractEnabledGates: the gates of the running release (4.14.1) are used" grep -q "feature gates of 4.14.1" "$T/e3g"
al_check "3g: ... so the ClusterUpdateAcceptRisks PrometheusRule is applied" \
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$KS_URL/apis/monitoring.coreos.com/v1/namespaces/openshift-cluster-version/prometheusrules/cluster-version-operator-accept-risks")" = 200 ]

# --- 4. waiting rules ----------------------------------------------------
reset
up_ctl status-sim '{"kind": "CustomResourceDefinition", "name": "widgets.example.airlock.io", "steps": [
 {"after": 0, "status": {"conditions": [{"type": "Established", "status": "False", "reason": "Installing", "message": "the names are being accepted"}]}},
 {"after": 1.0, "status": {"conditions": [{"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": ""}]}}]}' >/dev/null
al_run "$T/o4" "$T/e4" "$AIRLOCK" update --store "$S" --to 4.14.4 "${K[@]}" --sync-timeout 30s
al_check "4: the update completes" [ "$AL_RC" = 0 ]
log_json
al_check "4: checkCustomResourceDefinitionHealth: the CRD was waited for until Established" \
	grep -q "waiting: CustomResourceDefinition widgets.example.airlock.io Established=False, Installing" "$T/e4"
al_check "4: the custom resource is applied only after its CRD is Established (one attempt, no 404)" \
	python3 -c 'import json,sys
L = json.load(open(sys.argv[1]))["requests"]
crd = [r for r in L if r["method"] == "PATCH" and r["path"].endswith("/customresourcedefinitions/widgets.example.airlock.io")]
w = [r for r in L if "/widgets/w1" in r["path"]]
sys.exit(0 if crd and w and all(r["status"] == 200 or r["status"] == 201 for r in w) and w[0]["time"] - crd[0]["time"] >= 0.9 else 1)' "$T/log.json"
al_check "4: SplitOnJobs: what comes before the Job in its level is done before it starts" \
	python3 -c 'import json,sys
L = [r for r in json.load(open(sys.argv[1]))["requests"] if r["method"] == "PATCH"]
t = {r["path"].rsplit("/", 1)[1]: r for r in L}
sys.exit(0 if t["a1"]["end"] <= t["migrate"]["time"] else 1)' "$T/log.json"
al_check "4: SplitOnJobs: nothing after the Job starts before it completes (1 s)" \
	python3 -c 'import json,sys
L = [r for r in json.load(open(sys.argv[1]))["requests"] if r["method"] == "PATCH"]
t = {r["path"].rsplit("/", 1)[1]: r for r in L}
sys.exit(0 if t["c0"]["time"] - t["migrate"]["time"] >= 0.9 and t["b1"]["time"] - t["migrate"]["time"] >= 0.9 else 1)' "$T/log.json"

reset
up_ctl status-sim '{"kind": "Job", "name": "migrate", "steps": [{"after": 0, "status": {"active": 0, "failed": 1, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]}}]}' >/dev/null
al_run "$T/o4j" "$T/e4j" "$AIRLOCK" update --store "$S" --to 4.14.4 "${K[@]}" --sync-timeout 20s
al_check "4j: checkJobHealth: a failed Job fails the update" [ "$AL_RC" = 3 ]
al_check "4j: ... at once, naming the reason" grep -q 'job default/migrate: deadline exceeded, reason: "BackoffLimitExceeded"' "$T/e4j"
al_check "4j: ... and nothing after the Job was applied" [ "$(curl -s -o /dev/null -w '%{http_code}' "$KS_URL/api/v1/namespaces/default/configmaps/c0")" = 404 ]

for case in "ReplicaFailure|{\"type\": \"ReplicaFailure\", \"status\": \"True\", \"reason\": \"FailedCreate\", \"message\": \"exceeded quota\"}|has a replica failure FailedCreate: exceeded quota" \
	"ProgressDeadlineExceeded|{\"type\": \"Progressing\", \"status\": \"False\", \"reason\": \"ProgressDeadlineExceeded\", \"message\": \"ReplicaSet d-1 has timed out progressing\"}|is Progressing=False: ProgressDeadlineExceeded: ReplicaSet d-1 has timed out progressing"; do
	IFS='|' read -r what cond msg <<<"$case"
	reset
	up_ctl status-sim "{\"kind\": \"Deployment\", \"name\": \"d\", \"steps\": [{\"after\": 0, \"status\": {\"conditions\": [$cond]}}]}" >/dev/null
	al_run "$T/o4d" "$T/e4d" "$AIRLOCK" update --store "$S" --to 4.14.4 "${K[@]}" --sync-timeout 3s
	al_check "4d: checkDeploymentHealth: $what holds the update (exit 3)" [ "$AL_RC" = 3 ]
	al_check "4d: ... reported: deployment default/d $msg" grep -q "deployment default/d $msg" "$T/e4d"
	al_check "4d: ... the next level is not applied" [ "$(curl -s -o /dev/null -w '%{http_code}' "$KS_URL/apis/config.openshift.io/v1/clusteroperators/e")" = 404 ]
done
reset
up_ctl status-sim '{"kind": "Deployment", "name": "d", "steps": [{"after": 0, "status": {"conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": "exceeded quota"}]}}, {"after": 1.0, "status": {"conditions": [{"type": "Available", "status": "True"}, {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}}]}' >/dev/null
al_run "$T/o4r" "$T/e4r" "$AIRLOCK" update --store "$S" --to 4.14.4 "${K[@]}" --sync-timeout 20s
al_check "4d: a Deployment that recovers lets the update complete" [ "$AL_RC" = 0 ]

# --- 5. when a ClusterOperator is done: checkOperatorHealth -----------------
co_case() { # NAME STATUS_JSON EXPECTED_MESSAGE
	reset
	up_ctl operator '{"name": "e", "delay": 3600}' >/dev/null
	up_ctl status-sim "{\"kind\": \"ClusterOperator\", \"name\": \"e\", \"steps\": [{\"after\": 0, \"status\": $2}]}" >/dev/null
	# 6 s: the levels before e's must apply within it under ASan on a
	# loaded machine (2 s was once used up before e was reached)
	al_run "$T/o5" "$T/e5" "$AIRLOCK" update --store "$S" --to 4.14.4 "${K[@]}" --sync-timeout 6s
	al_check "5: checkOperatorHealth: $1 does not complete the update" [ "$AL_RC" = 3 ]
	al_check "5: ... reported: $3" grep -qF "$3" "$T/e5"
}
V='"versions": [{"name": "operator", "version": "4.14.4"}]'
co_case "a missing Degraded condition" "{$V, \"conditions\": [{\"type\": \"Available\", \"status\": \"True\"}]}" \
	"cluster operator 'e' is degraded (ClusterOperatorDegraded): Degraded=missing (no Degraded condition)"
co_case "Degraded=Unknown" "{$V, \"conditions\": [{\"type\": \"Available\", \"status\": \"True\"}, {\"type\": \"Degraded\", \"status\": \"Unknown\", \"reason\": \"NoData\"}]}" \
	"Degraded=Unknown: NoData"
co_case "Degraded=True" "{$V, \"conditions\": [{\"type\": \"Available\", \"status\": \"True\"}, {\"type\": \"Degraded\", \"status\": \"True\", \"reason\": \"DiskFull\", \"message\": \"disk is full\"}]}" \
	"Degraded=True: DiskFull, disk is full"
co_case "Available=False" "{$V, \"conditions\": [{\"type\": \"Available\", \"status\": \"False\", \"reason\": \"NoPods\", \"message\": \"no pods\"}, {\"type\": \"Degraded\", \"status\": \"False\"}]}" \
	"is not available (ClusterOperatorNotAvailable): Available=False: NoPods: no pods"
co_case "an older version" "{\"versions\": [{\"name\": \"operator\", \"version\": \"4.14.1\"}], \"conditions\": [{\"type\": \"Available\", \"status\": \"True\"}, {\"type\": \"Degraded\", \"status\": \"False\"}]}" \
	"has not reached operator 4.14.4 (reports 4.14.1"
reset
up_ctl operator '{"name": "e", "delay": 3600}' >/dev/null
up_ctl status-sim "{\"kind\": \"ClusterOperator\", \"name\": \"e\", \"steps\": [{\"after\": 0, \"status\": {$V, \"conditions\": [{\"type\": \"Available\", \"status\": \"True\"}, {\"type\": \"Degraded\", \"status\": \"False\"}]}}]}" >/dev/null
al_run "$T/o5" "$T/e5" "$AIRLOCK" update --store "$S" --to 4.14.4 "${K[@]}" --sync-timeout 10s
al_check "5: versions reached, Available=True, Degraded=False: done" [ "$AL_RC" = 0 ]
reset
al_run "$T/o5n" "$T/e5n" "$AIRLOCK" update --store "$S" --to 4.14.5 "${K[@]}" --sync-timeout 20s
al_check "5: a ClusterOperator manifest without status.versions never completes (exit 3)" [ "$AL_RC" = 3 ]
al_check "5: ... at once, as ClusterOperatorNoVersions" grep -q "cluster operator 'nov' does not declare expected versions (ClusterOperatorNoVersions)" "$T/e5n"

# --- 6. duplicates: library-go's duplicate resource -------------------------
reset
al_run "$T/o6" "$T/e6" "$AIRLOCK" update --store "$S" --to 4.14.6 "${K[@]}" --sync-timeout 10s
al_check "6: a payload with the same object twice is refused (exit 3)" [ "$AL_RC" = 3 ]
al_check "6: ... naming both files" grep -q "duplicate resource .*'0000_10_x_00_first.yaml' document 1 and '0000_20_y_00_second.yaml' document 1" "$T/e6"
al_check "6: ... nothing applied" [ "$(curl -s -o /dev/null -w '%{http_code}' "$KS_URL/api/v1/namespaces/default/configmaps/same")" = 404 ]

al_finish
