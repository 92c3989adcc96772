#!/usr/bin/env bash
# test_kubeserver.sh: checks tests/tools/kubeserver.py speaks the Kubernetes API the way the real kubectl expects (apply, get, status, faults, persistence).
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ! command -v kubectl >/dev/null 2>&1; then
	al_skip "kubectl is not installed, kubeserver.py is not checked against it"
fi
kubectl version --client 2>/dev/null | head -1 || true

TOKEN=kube-test-token
state=$T/state.json
KS_PID=

# Start kubeserver.py (extra arguments passed on); sets KS_PORT, KS_PID.
ks_start() {
	local pf=$T/ks.port i
	rm -f "$pf"
	python3 "$AL_TOOLS/kubeserver.py" --port-file "$pf" --token "$TOKEN" \
		--tls "$T/tls/server.crt" "$T/tls/server.key" \
		--state-file "$state" --co-delay 0.2 "$@" 2>>"$T/ks.log" &
	KS_PID=$!
	AL_PIDS+=("$KS_PID")
	for i in $(seq 1 100); do
		[ -s "$pf" ] && break
		sleep 0.1
	done
	KS_PORT=$(cat "$pf")
	KS=https://127.0.0.1:$KS_PORT
}

# kubectl sends a bearer token only over TLS (kubernetes/kubectl#744).
al_check "CA and server certificate made" al_make_tls "$T/tls"
ks_start
cat >"$T/kubeconfig" <<EOF
apiVersion: v1
kind: Config
current-context: test
clusters:
- name: test
  cluster:
    server: $KS
    certificate-authority: $T/tls/ca.crt
contexts:
- name: test
  context: {cluster: test, user: test}
users:
- name: test
  user: {token: $TOKEN}
EOF
export KUBECONFIG=$T/kubeconfig
# The server serves no OpenAPI documents: client-side validation is off.
K=(timeout 60 kubectl --request-timeout=20s)
A=("${K[@]}" apply --server-side --validate=false)

ctl() { # METHOD PATH [JSON]
	curl -sS --cacert "$T/tls/ca.crt" -X "$1" -H 'Content-Type: application/json' ${3:+--data "$3"} "$KS$2"
}

cat >"$T/ns-cm.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata:
  name: airlock-test
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: airlock-test
  labels: {app: airlock, tier: config}
data:
  mode: "first"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
  namespace: airlock-test
  labels: {app: other}
data:
  mode: "x"
EOF
al_check "kubectl apply --server-side creates a namespace and configmaps" \
	"${A[@]}" -f "$T/ns-cm.yaml"
al_check "kubectl get reads the value back" \
	test "$("${K[@]}" get cm -n airlock-test settings -o 'jsonpath={.data.mode}')" = first
rv1=$("${K[@]}" get cm -n airlock-test settings -o 'jsonpath={.metadata.resourceVersion}')
sed -i 's/"first"/"second"/' "$T/ns-cm.yaml"
al_check "kubectl apply --server-side updates" "${A[@]}" -f "$T/ns-cm.yaml"
rv2=$("${K[@]}" get cm -n airlock-test settings -o 'jsonpath={.metadata.resourceVersion}')
al_check "the update changed the value" \
	test "$("${K[@]}" get cm -n airlock-test settings -o 'jsonpath={.data.mode}')" = second
al_check "the update changed resourceVersion ($rv1 -> $rv2)" test "$rv1" != "$rv2"
"${A[@]}" -f "$T/ns-cm.yaml" >/dev/null
al_check "an unchanged apply keeps resourceVersion" \
	test "$("${K[@]}" get cm -n airlock-test settings -o 'jsonpath={.metadata.resourceVersion}')" = "$rv2"
al_check "kubectl get -l selects by label" \
	test "$("${K[@]}" get cm -n airlock-test -l app=airlock -o name)" = configmap/settings
al_check "kubectl get -l with != selects by label" \
	test "$("${K[@]}" get cm -n airlock-test -l 'app!=airlock' -o name)" = configmap/other
count_all_cms() { "${K[@]}" get cm -A -o name | grep -c configmap/; }
al_check "kubectl get -A lists across namespaces" test "$(count_all_cms)" = 2
managers() { "${K[@]}" get cm -n airlock-test settings --show-managed-fields -o 'jsonpath={.metadata.managedFields[*].manager}'; }
al_check "managedFields names kubectl's field manager" test "$(managers)" = kubectl

# Conflicts between field managers.
cat >"$T/cm-other.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: airlock-test}
data: {mode: "third"}
EOF
al_run "$T/out" "$T/err" "${A[@]}" --field-manager=someone-else -f "$T/cm-other.yaml"
al_check "another manager changing an owned field gets a conflict" test "$AL_RC" != 0
al_check "the conflict is reported as such" grep -qi conflict "$T/err"
al_check "--force-conflicts takes the field over" \
	"${A[@]}" --field-manager=someone-else --force-conflicts -f "$T/cm-other.yaml"
al_check "the forced value is stored" \
	test "$("${K[@]}" get cm -n airlock-test settings -o 'jsonpath={.data.mode}')" = third

# A namespaced object in a missing namespace.
cat >"$T/cm-nons.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: x, namespace: no-such-ns}
EOF
al_run "$T/out" "$T/err" "${A[@]}" -f "$T/cm-nons.yaml"
al_check "apply into a missing namespace fails" test "$AL_RC" != 0
al_check "the failure names the namespace" grep -q no-such-ns "$T/err"

# Authentication.
al_run "$T/out" "$T/err" "${K[@]}" --token=wrong get ns
al_check "a wrong token is refused" test "$AL_RC" != 0
al_check "kubectl reports Unauthorized" grep -qi unauthorized "$T/err"

# CRDs define kinds.
cat >"$T/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.io}
spec:
  group: example.io
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
EOF
cat >"$T/widget.yaml" <<'EOF'
apiVersion: example.io/v1
kind: Widget
metadata: {name: w1, namespace: airlock-test}
spec: {size: 3}
EOF
al_run "$T/out" "$T/err" "${A[@]}" -f "$T/widget.yaml"
al_check "a custom resource before its CRD is refused" test "$AL_RC" != 0
al_check "kubectl applies a CRD" "${A[@]}" -f "$T/crd.yaml"
al_check "then a custom resource of its kind" "${A[@]}" -f "$T/widget.yaml"
al_check "kubectl get widgets" \
	test "$("${K[@]}" get widgets -n airlock-test w1 -o 'jsonpath={.spec.size}')" = 3

# Status subresource: apply to it, and status sent to the main resource is ignored.
cat >"$T/cv.yaml" <<'EOF'
apiVersion: config.openshift.io/v1
kind: ClusterVersion
metadata: {name: version}
spec: {channel: stable-4.16}
status: {desired: {version: "ignored"}}
EOF
cat >"$T/cv-status.yaml" <<'EOF'
apiVersion: config.openshift.io/v1
kind: ClusterVersion
metadata: {name: version}
status: {desired: {version: "4.16.1"}}
EOF
al_check "apply a ClusterVersion" "${A[@]}" -f "$T/cv.yaml"
al_check "status in a main-resource apply is ignored" \
	test -z "$("${K[@]}" get clusterversion version -o 'jsonpath={.status.desired.version}')"
al_check "kubectl apply --subresource=status" "${A[@]}" --subresource=status -f "$T/cv-status.yaml"
al_check "the status was stored" \
	test "$("${K[@]}" get clusterversion version -o 'jsonpath={.status.desired.version}')" = 4.16.1
al_check "the spec is untouched by the status apply" \
	test "$("${K[@]}" get clusterversion version -o 'jsonpath={.spec.channel}')" = stable-4.16

# ClusterOperator simulation.
cat >"$T/co.yaml" <<'EOF'
apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata: {name: etcd}
status:
  versions:
  - {name: operator, version: "4.16.1"}
---
apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata: {name: sick}
status:
  versions:
  - {name: operator, version: "4.16.1"}
---
apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata: {name: pinned}
status:
  versions:
  - {name: operator, version: "4.16.1"}
EOF
ctl POST /_control/operator '{"name": "sick", "degraded": "disk full"}' >/dev/null
ctl POST /_control/operator '{"name": "pinned", "version": "4.15.9"}' >/dev/null
ctl POST /_control/operator '{"name": "etcd", "delay": 2}' >/dev/null
al_check "apply ClusterOperators" "${A[@]}" -f "$T/co.yaml"
co_field() { "${K[@]}" get co "$1" -o "jsonpath=$2"; }
al_check "right after the apply the operator reports no version yet" \
	test -z "$(co_field etcd '{.status.versions[0].version}')"
sleep 2.5
al_check "after the delay it reports the manifest's version" \
	test "$(co_field etcd '{.status.versions[0].version}')" = 4.16.1
al_check "and Available=True" \
	test "$(co_field etcd '{.status.conditions[?(@.type=="Available")].status}')" = True
al_check "and Degraded=False" \
	test "$(co_field etcd '{.status.conditions[?(@.type=="Degraded")].status}')" = False
al_check "a degraded operator reports Degraded=True" \
	test "$(co_field sick '{.status.conditions[?(@.type=="Degraded")].status}')" = True
al_check "with the message given" \
	test "$(co_field sick '{.status.conditions[?(@.type=="Degraded")].message}')" = "disk full"
al_check "and never the version" test -z "$(co_field sick '{.status.versions[0].version}')"
al_check "a pinned operator reports the control API's version" \
	test "$(co_field pinned '{.status.versions[0].version}')" = 4.15.9

# Fault injection (curl as the client: kubectl does not retry).
H=(--cacert "$T/tls/ca.crt" -H "Authorization: Bearer $TOKEN")
ctl POST /_control/fault '{"path": "/configmaps/settings$", "method": "GET", "status": 500, "times": 1}' >/dev/null
al_check "an injected 500 is served once" \
	test "$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" "$KS/api/v1/namespaces/airlock-test/configmaps/settings")" = 500
al_check "then the real answer" \
	test "$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" "$KS/api/v1/namespaces/airlock-test/configmaps/settings")" = 200
ctl POST /_control/fault '{"path": "/configmaps/other$", "status": 429, "retry_after": 7, "times": 1}' >/dev/null
retry_after() { curl -s -D - -o /dev/null "${H[@]}" "$KS/api/v1/namespaces/airlock-test/configmaps/other" | tr -d '\r' | grep -i '^retry-after:'; }
al_check "an injected 429 carries Retry-After" test "$(retry_after)" = "Retry-After: 7"
ctl POST /_control/fault '{"path": "^/api/v1/namespaces/airlock-test/configmaps$", "hang": true}' >/dev/null
start=$SECONDS
al_run "$T/out" "$T/err" curl -s --max-time 1 "${H[@]}" "$KS/api/v1/namespaces/airlock-test/configmaps"
al_check "a hang fault never answers (curl timed out)" test "$AL_RC" = 28
ctl POST /_control/faults/clear >/dev/null
al_check "after clearing faults the list answers" \
	test "$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" "$KS/api/v1/namespaces/airlock-test/configmaps")" = 200
ctl GET /_control/log >"$T/log.json"
al_check "the log is ordered and records statuses" python3 - "$T/log.json" <<'EOF'
import json, sys
reqs = json.load(open(sys.argv[1]))["requests"]
seqs = [r["seq"] for r in reqs]
assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), seqs
assert any(r["status"] == 500 and r["fault"] for r in reqs)
assert any(r["status"] is None for r in reqs)  # the hung request
patches = [r for r in reqs if r["method"] == "PATCH"]
assert patches and all(r["content_type"] == "application/apply-patch+yaml" for r in patches)
assert all(not r["path"].startswith("/_control/") for r in reqs)
EOF

# Persistence across a restart.
rv_before=$("${K[@]}" get cm -n airlock-test settings -o 'jsonpath={.metadata.resourceVersion}')
al_stop "$KS_PID"
ks_start --port "$KS_PORT" # the kubeconfig names this port
al_check "after a restart the objects are still there" \
	test "$("${K[@]}" get cm -n airlock-test settings -o 'jsonpath={.data.mode}')" = third
al_check "with the same resourceVersion ($rv_before)" \
	test "$("${K[@]}" get cm -n airlock-test settings -o 'jsonpath={.metadata.resourceVersion}')" = "$rv_before"
al_check "CRD kinds survive the restart" \
	test "$("${K[@]}" get widgets -n airlock-test w1 -o 'jsonpath={.spec.size}')" = 3
al_check "ClusterOperator status survives the restart" \
	test "$(co_field etcd '{.status.versions[0].version}')" = 4.16.1

# Deletion.
al_check "kubectl delete a configmap" "${K[@]}" delete cm -n airlock-test other
al_run "$T/out" "$T/err" "${K[@]}" get cm -n airlock-test other
al_check "a deleted object is gone" test "$AL_RC" != 0
al_check "deleting a namespace deletes its objects" "${K[@]}" delete ns airlock-test
al_check "nothing is left in it" \
	test "$(ctl GET /_control/objects | python3 -c 'import json,sys; print(sum(1 for o in json.load(sys.stdin)["items"] if o["metadata"].get("namespace") == "airlock-test"))')" = 0

# Kinds registered through the control API, seeded objects, merge patches.
ctl POST /_control/kinds '{"kinds": [{"group": "updates.airlock.io", "version": "v1alpha1", "kind": "UpdateStatus", "plural": "updatestatuses", "namespaced": false, "status": true}]}' >/dev/null
printf '%s\n' 'apiVersion: updates.airlock.io/v1alpha1' 'kind: UpdateStatus' \
	'metadata: {name: cluster}' 'spec: {desired: "4.16.1"}' >"$T/us.yaml"
al_check "a kind registered by the control API can be applied" "${A[@]}" -f "$T/us.yaml"
al_check "and patched (merge patch)" \
	"${K[@]}" patch updatestatus cluster --type=merge -p '{"spec":{"desired":"4.16.2"}}'
al_check "the merge patch is stored" \
	test "$("${K[@]}" get updatestatus cluster -o 'jsonpath={.spec.desired}')" = 4.16.2
ctl POST /_control/objects '{"object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seeded", "namespace": "default"}, "data": {"k": "v"}}}' >/dev/null
al_check "a seeded object is served" \
	test "$("${K[@]}" get cm -n default seeded -o 'jsonpath={.data.k}')" = v
ctl POST /_control/operator '{"name": "stuck", "never": true, "delay": 0}' >/dev/null
printf '%s\n' 'apiVersion: config.openshift.io/v1' 'kind: ClusterOperator' \
	'metadata: {name: stuck}' >"$T/stuck.yaml"
al_check "apply a ClusterOperator that never finishes" "${A[@]}" -f "$T/stuck.yaml"
sleep 0.5
al_check "it stays Progressing=True" \
	test "$(co_field stuck '{.status.conditions[?(@.type=="Progressing")].status}')" = True
al_check "without a version" test -z "$(co_field stuck '{.status.versions[0].version}')"
ctl POST /_control/reset >/dev/null
al_check "after a reset only the start namespaces are left" \
	test "$(ctl GET /_control/objects | python3 -c 'import json,sys; print(" ".join(sorted(o["metadata"]["name"] for o in json.load(sys.stdin)["items"])))')" = "default kube-public kube-system"
al_check "and the log is empty" \
	test "$(ctl GET /_control/log | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["requests"]))')" = 0

al_finish
