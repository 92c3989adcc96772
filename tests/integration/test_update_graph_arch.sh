#!/bin/bash
# test_update_graph_arch.sh: the --via-cvo pre-flight's channel check reads the graph of the architecture the CVO would ask the update service for (getCurrentArchitecture / getDesiredArchitecture, GetUpdates' arch and its single-to-multi rule): the cluster's own (a control-plane Node's), multi for a multi payload.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update

S=$T/store
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }
up_store_add_release "$S" 4.14.2 "$AL_SOURCE_DIR/samples/release-manifests" || { al_fail "make release 4.14.2"; al_finish; }
D1=$(up_digest "$S" 4.14.1)
D2=$(up_digest "$S" 4.14.2)

UP_VIRTUAL_CLOCK=1 up_ks_start
up_ctl kinds '{"kinds": [{"group": "", "version": "v1", "kind": "Node", "plural": "nodes", "namespaced": false}]}' >/dev/null
K=(--kubeconfig "$T/kubeconfig" --operator-poll 50ms --tls-verify=false --via-cvo --dry-run)
seed() { up_ctl objects "{\"object\": $1}" >/dev/null; }
# graph ARCH EDGES: the store's graph of channel stable-4.14 for ARCH
graph() {
	mkdir -p "$S/airlock/graph"
	printf '{"nodes": [{"version": "4.14.1", "payload": "quay.io/airlock-samples/release@%s"}, {"version": "4.14.2", "payload": "quay.io/airlock-samples/release@%s"}], "edges": %s, "airlock": {"channel": "stable-4.14", "arch": "%s"}}' \
		"$D1" "$D2" "$2" "$1" >"$S/airlock/graph/stable-4.14-$1.json"
}
# cluster STATUS-ARCH DESIRED-UPDATE: ClusterVersion at 4.14.1 in channel stable-4.14
cluster() {
	up_ctl reset '{}' >/dev/null
	seed '{"apiVersion":"config.openshift.io/v1","kind":"ClusterVersion","metadata":{"name":"version"},"spec":{"clusterID":"x","channel":"stable-4.14"'"$2"'},"status":{"desired":{"version":"4.14.1","image":"quay.io/airlock-samples/release@'"$D1"'"'"$1"'},"history":[],"conditions":[]}}'
	up_seed_cvo 1
}
node() { # NAME ARCH ROLE
	seed '{"apiVersion":"v1","kind":"Node","metadata":{"name":"'"$1"'","labels":{"node-role.kubernetes.io/'"$3"'":""}},"status":{"nodeInfo":{"architecture":"'"$2"'"}}}'
}
chan_failed() { grep -q "pre-flight check failed: channel stable-4.14 has no update from 4.14.1 to 4.14.2" "$1"; }

# the edge 4.14.1 -> 4.14.2 only in the arm64 graph
graph amd64 '[]'
graph arm64 '[[0, 1]]'
graph multi '[]'

# --- the cluster's own architecture: a control-plane node's --------------------
cluster '' ''
node worker-0 amd64 worker
node master-0 arm64 control-plane
al_run "$T/o1" "$T/e1" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}"
al_check "arm64 cluster: the arm64 graph is read (its edge passes the channel check)" bash -c "grep -q 'channel stable-4.14: the graph of architecture arm64' '$T/e1' && ! grep -q 'pre-flight check failed: channel' '$T/e1'"
cluster '' ''
node master-0 amd64 master
al_run "$T/o2" "$T/e2" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}"
al_check "amd64 cluster: the amd64 graph (no edge) refuses the update" chan_failed "$T/e2"

# --- multi: the running payload is multi-architecture -------------------------
cluster ',"architecture":"Multi"' ''
node master-0 arm64 control-plane
al_run "$T/o3" "$T/e3" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}"
al_check "multi cluster: the multi graph is read, not the node's (no edge there)" chan_failed "$T/e3"
graph multi '[[0, 1]]'
al_run "$T/o3b" "$T/e3b" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}"
al_check "multi cluster: ... and with its edge the check passes" bash -c "grep -q 'channel stable-4.14: the graph of architecture multi' '$T/e3b' && ! grep -q 'pre-flight check failed: channel' '$T/e3b'"

# --- single to multi (spec.desiredUpdate.architecture Multi): only the current version
cluster '' ',"desiredUpdate":{"architecture":"Multi","version":"4.14.1"}'
node master-0 amd64 control-plane
al_run "$T/o4" "$T/e4" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}"
al_check "single to multi: another version is refused (GetUpdates offers only the current one)" grep -q "pre-flight check failed: a move to multi-architecture goes only to the current version's multi payload (4.14.1), not 4.14.2" "$T/e4"

al_finish
