#!/bin/bash
# test_update_cvo_proxy.sh: the CVO's cluster proxy injection (lib/resourcebuilder modifyDeployment / modifyDaemonSet, updatePodSpecWithProxy) and quantities compared by value (lib/resourcemerge ensureResourceList, equality.Semantic) against the test API server.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update

S=$T/store
INC='include.release.openshift.io/self-managed-high-availability: "true"'
IMG="quay.io/x/y@sha256:$(printf '%064d' 7)"
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }

# 4.14.2: a Deployment asking for the proxy in a container and an init
# container, with quantities; a DaemonSet asking for it in one container
M=$T/m
mkdir -p "$M"
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: p\n  namespace: default\n  annotations:\n    %s\n    config.openshift.io/inject-proxy: c,init\nspec:\n  selector: {matchLabels: {app: p}}\n  template:\n    metadata: {labels: {app: p}}\n    spec:\n      initContainers: [{name: init, image: "%s"}]\n      containers:\n      - name: c\n        image: "%s"\n        resources: {requests: {memory: 1024Mi, cpu: "0.5"}, limits: {cpu: 1000m}}\n      - {name: other, image: "%s"}\n' "$INC" "$IMG" "$IMG" "$IMG" >"$M/0000_30_c_00_deployment.yaml"
printf 'apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ds\n  namespace: default\n  annotations:\n    %s\n    config.openshift.io/inject-proxy: c\nspec:\n  selector: {matchLabels: {app: ds}}\n  template:\n    metadata: {labels: {app: ds}}\n    spec: {containers: [{name: c, image: "%s", env: [{name: A, value: b}]}]}\n' "$INC" "$IMG" >"$M/0000_30_c_01_daemonset.yaml"
up_store_add_release "$S" 4.14.2 "$M" || { al_fail "make release 4.14.2"; al_finish; }
# 4.14.3: the annotation names a container the Deployment does not have
M3=$T/m3
mkdir -p "$M3"
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bad\n  namespace: default\n  annotations:\n    %s\n    config.openshift.io/inject-proxy: c,nothere\nspec:\n  selector: {matchLabels: {app: bad}}\n  template:\n    metadata: {labels: {app: bad}}\n    spec: {containers: [{name: c, image: "%s"}]}\n' "$INC" "$IMG" >"$M3/0000_30_c_00_deployment.yaml"
up_store_add_release "$S" 4.14.3 "$M3" || { al_fail "make release 4.14.3"; al_finish; }
# 4.14.4: the CVO's own Deployment (scaled to 0, so that airlock stays the
# updater), whose manifest says KUBERNETES_SERVICE_HOST 127.0.0.1
M4=$T/m4
mkdir -p "$M4"
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cluster-version-operator\n  namespace: openshift-cluster-version\n  annotations:\n    %s\nspec:\n  replicas: 0\n  selector: {matchLabels: {k8s-app: cluster-version-operator}}\n  template:\n    metadata: {labels: {k8s-app: cluster-version-operator}}\n    spec:\n      containers:\n      - name: cluster-version-operator\n        image: "%s"\n        env: [{name: KUBERNETES_SERVICE_HOST, value: 127.0.0.1}, {name: OTHER, value: x}]\n' "$INC" "$IMG" >"$M4/0000_00_cluster-version-operator_03_deployment.yaml"
up_store_add_release "$S" 4.14.4 "$M4" || { al_fail "make release 4.14.4"; al_finish; }
for v in 4.14.2 4.14.3 4.14.4; do
	up_sign "$S" "$(up_digest "$S" $v)" || { al_fail "sign $v"; al_finish; }
done

UP_VIRTUAL_CLOCK=1 up_ks_start --co-delay 0.05
K=(--kubeconfig "$T/kubeconfig" --operator-poll 100ms --keyring "$T/trusted.gpg" --state "$T/state.json" --sync-timeout 30s)
D=/apis/apps/v1/namespaces/default/deployments
DS=/apis/apps/v1/namespaces/default/daemonsets/ds
PROXY='{"object": {"apiVersion": "config.openshift.io/v1", "kind": "Proxy", "metadata": {"name": "cluster"}, "spec": {}, "status": {"httpProxy": "", "httpsProxy": "http://proxy.example:3129", "noProxy": ".cluster.local"}}}'
ENV="[('HTTP_PROXY', ''), ('HTTPS_PROXY', 'http://proxy.example:3129'), ('NO_PROXY', '.cluster.local')]"
envs() { up_obj "$1" "[(e[\"name\"], e.get(\"value\", \"\")) for e in (o[\"spec\"][\"template\"][\"spec\"][\"$2\"][$3].get(\"env\") or [])]"; }

# --- updatePodSpecWithProxy: the proxy's three variables, empty ones too
up_ctl objects "$PROXY" >/dev/null
al_run "$T/o1" "$T/e1" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}"
al_check "proxy: the update completes" [ "$AL_RC" = 0 ]
al_check "proxy: the named container gets HTTP_PROXY, HTTPS_PROXY, NO_PROXY" [ "$(envs $D/p containers 0)" = "$ENV" ]
al_check "proxy: the named init container gets them too" [ "$(envs $D/p initContainers 0)" = "$ENV" ]
al_check "proxy: a container the annotation does not name gets none" [ "$(envs $D/p containers 1)" = "[]" ]
al_check "proxy: a DaemonSet's variables come after its own" [ "$(envs $DS containers 0)" = "[('A', 'b'), $(echo "${ENV#[}")" ]

# --- ensureResourceList: the API server writes quantities canonically; the
# manifest's 1024Mi, "0.5" and 1000m are the same values, so nothing is
# written (the generation stays). The first reconcile writes the defaults
# the CVO adds to what it created (dnsPolicy, strategy, ...).
al_run "$T/o1b" "$T/e1b" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}"
python3 - "$KS_URL" <<'PY'
import json, sys, urllib.request
o = json.load(urllib.request.urlopen(sys.argv[1] + "/apis/apps/v1/namespaces/default/deployments/p"))
o["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"memory": "1Gi", "cpu": "500m"}, "limits": {"cpu": "1"}}
req = urllib.request.Request(sys.argv[1] + "/_control/objects", data=json.dumps({"object": o}).encode(), headers={"Content-Type": "application/json"}, method="POST")
urllib.request.urlopen(req).read()
PY
GEN=$(up_obj $D/p 'o["metadata"]["generation"]')
al_run "$T/o2" "$T/e2" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}"
al_check "quantities: reconciling completes" [ "$AL_RC" = 0 ]
al_check "quantities: 1Gi/500m/1 equal 1024Mi/0.5/1000m: the Deployment is not written" [ "$(up_obj $D/p 'o["metadata"]["generation"]')" = "$GEN" ]
al_check "quantities: ... and keeps the server's form" [ "$(up_obj $D/p 'o["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"]')" = 1Gi ]
al_check "proxy: reconciling does not add the variables twice" [ "$(envs $D/p containers 0)" = "$ENV" ]

# --- no Proxy object: nothing injected (the CVO tolerates NotFound)
up_ctl reset '{}' >/dev/null
rm -f "$T/state.json"
al_run "$T/o3" "$T/e3" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}"
al_check "no proxy: the update completes" [ "$AL_RC" = 0 ]
al_check "no proxy: no variables" [ "$(envs $D/p containers 0)" = "[]" ]

# --- a container the annotation names is missing: the task fails
up_ctl reset '{}' >/dev/null
rm -f "$T/state.json"
up_ctl objects "$PROXY" >/dev/null
al_run "$T/o4" "$T/e4" "$AIRLOCK" update --store "$S" --to 4.14.3 "${K[@]}"
al_check "missing container: the update fails (exit 3)" [ "$AL_RC" = 3 ]
al_check "missing container: ... naming it as the CVO does" grep -q 'requested injection for non-existent container: "nothere"' "$T/e4"
al_check "missing container: the Deployment is not written" [ "$(up_obj $D/bad 'o is None')" = True ]

# --- modifyDeployment on the CVO's own Deployment: KUBERNETES_SERVICE_HOST
# and _PORT from the Infrastructure's internal API load balancer
up_ctl reset '{}' >/dev/null
rm -f "$T/state.json"
up_ctl objects '{"object": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "openshift-cluster-version"}}}' >/dev/null
up_ctl objects '{"object": {"apiVersion": "config.openshift.io/v1", "kind": "Infrastructure", "metadata": {"name": "cluster"}, "spec": {}, "status": {"apiServerInternalURL": "https://api-int.example.com:6443"}}}' >/dev/null
al_run "$T/o5" "$T/e5" "$AIRLOCK" update --store "$S" --to 4.14.4 "${K[@]}"
al_check "internal load balancer: the update completes" [ "$AL_RC" = 0 ]
al_check "internal load balancer: the host replaced in place, the port appended" [ "$(envs /apis/apps/v1/namespaces/openshift-cluster-version/deployments/cluster-version-operator containers 0)" = "[('KUBERNETES_SERVICE_HOST', 'api-int.example.com'), ('OTHER', 'x'), ('KUBERNETES_SERVICE_PORT', '6443')]" ]
al_finish
