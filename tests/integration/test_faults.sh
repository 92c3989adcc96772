#!/usr/bin/env bash
# test_faults.sh: airlock mirror through faultproxy.py (5xx, 429, resets, stalls succeed with retries; a hang times out).
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

release=quay.io/airlock-samples/release:4.14.1-x86_64
al_start_registry "$T/reg"
R=$REG_ADDR
# Small, but with layers big enough (256 KiB) to be cut mid-body.
python3 "$AL_TOOLS/mkrelease.py" --out "$T/release" --components 3 --layer-size 262144 \
	--base-size 131072 --seed faults >/dev/null
al_check "synthetic release pushed to the registry" al_push_layout "$T/release" "$R"
al_start_proxy "$R"
P=$PROXY_ADDR
echo "registry $R, fault proxy $P"

cat >"$T/imageset.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $release
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: docker://$P/airlock-samples
YAML

# A layer blob of the first component: the target of body faults.
blob=$(python3 - "$T/release" <<'PY'
import json, sys
d = sys.argv[1]
idx = json.load(open(d + "/index.json"))["manifests"]
m = json.load(open(d + "/blobs/sha256/" + idx[1]["digest"][7:]))
print(m["layers"][-1]["digest"])
PY
)

fault() {
	curl -sf "http://$P/_fault?$1" >/dev/null
}
injected() {
	curl -sf "http://$P/_stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["injected"][sys.argv[1]])' "$1"
}

# scenario NAME TIMEOUT RULE...: fresh store, rules installed, mirror must succeed.
n=0
scenario() {
	local name=$1 timeout=$2 rule kind before after start
	shift 2
	n=$((n + 1))
	fault clear=1
	for rule in "$@"; do fault "$rule"; done
	kind=${1%%&*}
	kind=${kind#kind=}
	before=$(injected "$kind")
	start=$SECONDS
	al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --store "$T/s$n" \
		--tls-verify=false --timeout "$timeout"
	ELAPSED=$((SECONDS - start))
	cat "$T/err"
	after=$(injected "$kind")
	echo "$name: exit $AL_RC after ${ELAPSED}s, $((after - before)) '$kind' faults injected"
	al_check "$name: the fault was really injected" test "$after" -gt "$before"
	al_check "$name: mirror succeeds with retries" test "$AL_RC" = 0
	al_run "$T/check.out" "$T/err" "$AIRLOCK" check --store "$T/s$n"
	al_check "$name: airlock check is clean" test "$AL_RC" = 0
	al_check "$name: the store has every image with the right digest" \
		al_same_index "$T/release" "$T/s$n"
}

scenario "500 on blobs, 503 on a manifest" 30s \
	'kind=500&path=/blobs/sha256:&times=2' 'kind=503&path=/manifests/&method=GET&times=1'
scenario "429 with Retry-After: 1 on manifests" 30s 'kind=429&path=/manifests/&times=2'
al_check "429: the client waited for Retry-After (>= 1 s)" test "$ELAPSED" -ge 1
scenario "connection reset mid-blob" 30s "kind=reset&path=/blobs/$blob&after=65536&times=2"
scenario "connection reset on every blob once" 30s 'kind=reset&path=/blobs/&after=100&times=8'
scenario "mid-body stall (forever) on a blob, --timeout 5s" 5s "kind=stall&path=/blobs/$blob&after=100000&times=1"
al_check "stall: recovered within 60 s" test "$ELAPSED" -lt 60
scenario "short stall (2 s) on a blob" 10s "kind=stall&path=/blobs/$blob&after=1000&seconds=2&times=1"

# Push through the proxy: failed upload requests are retried.
fault clear=1
fault 'kind=500&path=/blobs/uploads/&method=POST&times=1'
fault 'kind=503&path=/blobs/uploads/.&method=PUT&times=1'
fault 'kind=503&path=/manifests/&method=PUT&times=1'
before=$(injected 503)
al_run "$T/out" "$T/err" "$AIRLOCK" push --layout source --store "$T/s1" "docker://$P/pushed" --tls-verify=false --timeout 30s
cat "$T/err"
al_check "push through 500/503 on uploads and manifests exits 0" test "$AL_RC" = 0
al_check "push: the faults were really injected" test "$(injected 503)" -gt "$before"
got=$("${SKOPEO[@]}" inspect --no-tags --tls-verify=false --format '{{.Digest}}' \
	"docker://$R/pushed/airlock-samples/release:4.14.1-x86_64" 2>/dev/null || true)
al_check "push: the registry has the release with its digest" \
	test "$got" = "$(al_digest_of "$T/release" "$release")"

# A registry that accepts and never answers: exit 3 within a bound. The
# bound is on airlock's own clock, the virtual one (docs/testing.md): a
# hang moves it to the deadline, so a loaded machine (ASan, 2 cores)
# cannot make the run look slow; curl's real timers against a hang are the
# timing tier's (unit test_http timing_hang_times_out).
fault clear=1
fault 'kind=hang&path=/manifests/&times=-1'
al_run_vclock "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --store "$T/hang" \
	--tls-verify=false --timeout 5s
ms=$AL_VMS
cat "$T/err"
echo "hang: exit $AL_RC after ${ms} ms of airlock's clock"
al_check "hang: mirror exits 3" test "$AL_RC" = 3
al_check "hang: ends in under 16 s of airlock's clock (about 3x --timeout 5s)" \
	test "$ms" -gt 0 -a "$ms" -lt 16000
al_check "hang: the error names the URL or the reference" \
	grep -qE "$P|airlock-samples/release" "$T/err"
al_check "hang: the error says it timed out" grep -qiE "time(d)? ?out|timeout" "$T/err"

al_finish
