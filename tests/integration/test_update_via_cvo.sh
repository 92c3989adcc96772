#!/bin/bash
# test_update_via_cvo.sh: airlock update --via-cvo on a cluster whose CVO runs (the test API server simulates one): a pre-flight that changes nothing and names what to run, spec.desiredUpdate by digest, and the watch's outcomes (Completed, Failing, rejected release, Partial at the deadline, retarget by someone else).
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update
[ -x /usr/bin/docker-registry ] || al_skip "no docker-registry"

S=$T/store
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }
for v in 4.14.2 4.15.0; do
	up_store_add_release "$S" $v "$AL_SOURCE_DIR/samples/release-manifests" || { al_fail "make release $v"; al_finish; }
done
for v in 4.14.1 4.14.2 4.15.0; do
	up_sign "$S" "$(up_digest "$S" $v)" || { al_fail "sign $v"; al_finish; }
done
D2=$(up_digest "$S" 4.14.2)
D3=$(up_digest "$S" 4.15.0)

al_start_registry "$T/registry"
UP_VIRTUAL_CLOCK=1 up_ks_start
up_ctl kinds '{"kinds": [
 {"group": "config.openshift.io", "version": "v1", "kind": "ImageDigestMirrorSet", "plural": "imagedigestmirrorsets", "namespaced": false},
 {"group": "config.openshift.io", "version": "v1", "kind": "ImageTagMirrorSet", "plural": "imagetagmirrorsets", "namespaced": false}]}' >/dev/null
K=(--kubeconfig "$T/kubeconfig" --operator-poll 50ms --keyring "$T/trusted.gpg" --tls-verify=false --via-cvo)
seed() { up_ctl objects "{\"object\": $1}" >/dev/null; }
# seed FILE: every document of a YAML stream or JSON List into the server
seed_file() {
	python3 - "$1" "$KS_URL" <<'EOPY'
import json, sys, urllib.request, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
items = []
for d in docs:
    items += d["items"] if d.get("kind") == "List" else [d]
for o in items:
    req = urllib.request.Request(sys.argv[2] + "/_control/objects", data=json.dumps({"object": o}).encode(),
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()
EOPY
}
cluster() {
	up_ctl reset '{}' >/dev/null
	for ns in openshift-config openshift-config-managed; do
		seed "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}"
	done
	up_seed_cv 4.14.1 '[{"state": "Completed", "version": "4.14.1", "image": "quay.io/airlock-samples/release@'"$(up_digest "$S" 4.14.1)"'", "startedTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T01:00:00Z", "verified": true}]'
	up_seed_cvo 1
}
desired() { up_obj $CV_PATH '(o["spec"].get("desiredUpdate") or {}).get("image", "none")'; }

# --- 1. pre-flight: nothing in the mirror, no signature in the cluster -------
cluster
up_ctl cvo '{"enabled": true, "delay": 0.1}' >/dev/null
al_run "$T/o1" "$T/e1" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}"
al_check "pre-flight: a cluster that cannot take the release is refused (exit 3)" [ "$AL_RC" = 3 ]
al_check "pre-flight: the release image is missing where the cluster pulls it from: run airlock push" grep -q "quay.io/airlock-samples/release@$D2 is not where the cluster pulls it from.*airlock push" "$T/e1"
al_check "pre-flight: ... no mirror set maps it" grep -q "no ImageDigestMirrorSet or ImageContentSourcePolicy maps it" "$T/e1"
al_check "pre-flight: no signature in the cluster: run airlock configmaps" grep -q "no signature for $D2 in the cluster's ConfigMaps.*airlock configmaps" "$T/e1"
al_check "pre-flight: nothing was changed (no spec.desiredUpdate)" [ "$(desired)" = none ]

# --- 2. the whole disconnected path: push, mirror sets, signature ConfigMaps --
al_run "$T/op" "$T/ep" "$AIRLOCK" push --layout source --store "$S" --tls-verify=false -q "docker://$REG_ADDR/mirror"
al_check "push the store into the mirror registry" [ "$AL_RC" = 0 ]
"$AIRLOCK" mirrorsets --store "$S" -o "$T/mirrorsets.yaml" >/dev/null 2>&1
"$AIRLOCK" configmaps --store "$S" --json -o - 4.14.2 4.15.0 >"$T/cms.json" 2>/dev/null
al_check "mirrorsets and configmaps written" bash -c "[ -s '$T/mirrorsets.yaml' ] && [ -s '$T/cms.json' ]"
cluster
seed_file "$T/mirrorsets.yaml"
seed_file "$T/cms.json"
up_ctl cvo '{"enabled": true, "delay": 0.1}' >/dev/null
al_run "$T/o2" "$T/e2" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --dry-run
al_check "dry run: the pre-flight passes and nothing is requested" bash -c "[ $AL_RC = 0 ] && grep -q 'pre-flight passed' '$T/e2' && [ '$(desired)' = none ]"
# chosen automatically: a running CVO, neither --via-cvo nor --take-over
KA=()
for x in "${K[@]}"; do [ "$x" = --via-cvo ] || KA+=("$x"); done
al_run "$T/o2a" "$T/e2a" "$AIRLOCK" update --store "$S" --to 4.14.2 "${KA[@]}" --dry-run
al_check "automatic: a running CVO makes the run go through it (pre-flight, dry run)" bash -c "[ $AL_RC = 0 ] && grep -q 'updating through it (as --via-cvo)' '$T/e2a' && grep -q 'pre-flight passed' '$T/e2a' && [ '$(desired)' = none ]"
al_run "$T/o2" "$T/e2" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --cvo-timeout 30s
al_check "the CVO completes the update: exit 0" [ "$AL_RC" = 0 ]
al_check "requested by digest in spec.desiredUpdate, not forced" [ "$(up_obj $CV_PATH '(o["spec"]["desiredUpdate"]["image"], o["spec"]["desiredUpdate"]["version"], o["spec"]["desiredUpdate"]["force"])')" = "('quay.io/airlock-samples/release@$D2', '4.14.2', False)" ]
al_check "the history entry for that image is Completed" [ "$(up_obj $CV_PATH '[(h["version"], h["state"]) for h in o["status"]["history"]][:1]')" = "[('4.14.2', 'Completed')]" ]
al_check "the run names the CVO" grep -q "completed by the cluster's cluster-version-operator" "$T/o2"

# --- 2c. the channel: the store's graph of ClusterVersion spec.channel --------
graph() { # EDGES
	mkdir -p "$S/airlock/graph"
	printf '{"nodes": [{"version": "4.14.2", "payload": "quay.io/airlock-samples/release@%s"}, {"version": "4.15.0", "payload": "quay.io/airlock-samples/release@%s"}], "edges": %s, "airlock": {"channel": "stable-4.15", "arch": "amd64"}}' \
		"$D2" "$D3" "$1" >"$S/airlock/graph/stable-4.15-amd64.json"
}
curl -sf "$KS_URL$CV_PATH" | python3 -c 'import json,sys
o = json.load(sys.stdin)
o["spec"]["channel"] = "stable-4.15"
print(json.dumps({"object": o}))' | curl -sf -X POST -H 'Content-Type: application/json' -d @- "$KS_URL/_control/objects" >/dev/null
graph '[]'
al_run "$T/o2c" "$T/e2c" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}" --dry-run
al_check "channel: no update 4.14.2 -> 4.15.0 in the channel's graph refuses (exit 3)" [ "$AL_RC" = 3 ]
al_check "channel: ... naming the channel" grep -q "channel stable-4.15 has no update from 4.14.2 to 4.15.0" "$T/e2c"
graph '[[0, 1]]'
al_run "$T/o2c" "$T/e2c" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}" --dry-run
al_check "channel: with the edge the pre-flight passes" [ "$AL_RC" = 0 ]
rm -f "$S/airlock/graph/stable-4.15-amd64.json"

# --- 3. a failing operator: exit 3 with the CVO's reason -----------------------
up_ctl cvo '{"enabled": true, "delay": 0.1, "fail": {"reason": "ClusterOperatorNotAvailable", "message": "Cluster operator etcd is not available"}}' >/dev/null
al_run "$T/o3" "$T/e3" "$AIRLOCK" update --store "$S" --to 4.15.0 "${K[@]}" --cvo-timeout 30s
al_check "Failing: exit 3" [ "$AL_RC" = 3 ]
al_check "Failing: ... with the CVO's reason and message" grep -q "Failing=True (ClusterOperatorNotAvailable): Cluster operator etcd is not available" "$T/e3"

# --- 2s. the signature from spec.signatureStores (no ConfigMap) -------------
cluster
seed_file "$T/mirrorsets.yaml"
SPF=$T/sig-port
python3 "$AL_TOOLS/sigserver.py" --root "$S/signatures" --port-file "$SPF" 2>>"$T/sigserver.log" &
AL_PIDS+=("$!")
for i in $(seq 1 100); do [ -s "$SPF" ] && break; sleep 0.05; done
curl -sf "$KS_URL$CV_PATH" | python3 -c 'import json,sys
o = json.load(sys.stdin)
o["spec"]["signatureStores"] = [{"url": "http://127.0.0.1:'"$(cat "$SPF")"'/files"}]
print(json.dumps({"object": o}))' | curl -sf -X POST -H 'Content-Type: application/json' -d @- "$KS_URL/_control/objects" >/dev/null
al_run "$T/o2s" "$T/e2s" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --dry-run
al_check "signatureStores: a store that answers with a verifying signature passes the pre-flight" bash -c "[ $AL_RC = 0 ] && grep -q \"signature verified (spec.signatureStores\" '$T/e2s'"

# --- 4. the CVO rejects the release (its keys do not verify it) ---------------
cluster
seed_file "$T/mirrorsets.yaml"
seed_file "$T/cms.json"
up_ctl cvo '{"enabled": true, "delay": 0.1, "untrusted": true}' >/dev/null
al_run "$T/o4" "$T/e4" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --cvo-timeout 30s
al_check "rejected: exit 3" [ "$AL_RC" = 3 ]
al_check "rejected: ... naming ReleaseAccepted=False and the CVO's reason" grep -q "the CVO rejected 4.14.2: ReleaseAccepted=False (RetrievePayload): Retrieving payload failed" "$T/e4"

# --- 5. Partial at the deadline ----------------------------------------------
cluster
seed_file "$T/mirrorsets.yaml"
seed_file "$T/cms.json"
up_ctl cvo '{"enabled": true, "never": true}' >/dev/null
al_run "$T/o5" "$T/e5" "$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --cvo-timeout 1s
al_check "deadline: a Partial entry at the deadline is exit 3" [ "$AL_RC" = 3 ]
al_check "deadline: ... saying so" grep -q "the CVO's update to 4.14.2 is Partial at the deadline" "$T/e5"

# --- 6. someone else retargets the cluster ------------------------------------
cluster
seed_file "$T/mirrorsets.yaml"
seed_file "$T/cms.json"
up_ctl cvo '{"enabled": true, "never": true}' >/dev/null
"$AIRLOCK" update --store "$S" --to 4.14.2 "${K[@]}" --cvo-timeout 60s >"$T/o6" 2>"$T/e6" &
UPID=$!
for i in $(seq 1 200); do
	[ "$(up_obj $CV_PATH '[h["state"] for h in o["status"]["history"]][:1]')" = "['Partial']" ] && break
	sleep 0.05
done
curl -sf "$KS_URL$CV_PATH" | python3 -c 'import json,sys
o = json.load(sys.stdin)
o["spec"]["desiredUpdate"] = {"version": "4.15.0", "image": "quay.io/airlock-samples/release@'"$D3"'", "force": False}
print(json.dumps({"object": o}))' | curl -sf -X POST -H 'Content-Type: application/json' -d @- "$KS_URL/_control/objects" >/dev/null
set +e
wait "$UPID"
RC6=$?
set -e
al_check "retarget: someone else's desiredUpdate ends the watch with exit 3" [ "$RC6" = 3 ]
al_check "retarget: ... naming the new target" grep -q "retargeted by someone else: spec.desiredUpdate is now 'quay.io/airlock-samples/release@$D3'" "$T/e6"

al_finish
