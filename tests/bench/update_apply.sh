#!/usr/bin/env bash
# update_apply.sh: times 'airlock update' of a 600-manifest, 40-component, 20-level payload against kubeserver.py with 20 ms per request, next to the ideal.
# Not run by ctest. docs/updater.md explains the figures. Prints ratios measured in this run only.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AL_SOURCE_DIR=${AL_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
AL_BUILD_DIR=${AL_BUILD_DIR:-$AL_SOURCE_DIR/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
TOOLS=$AL_SOURCE_DIR/tests/tools
MANIFESTS=${BENCH_MANIFESTS:-600}
COMPONENTS=${BENCH_COMPONENTS:-40}
LEVELS=${BENCH_LEVELS:-20}
LATENCY_MS=${BENCH_LATENCY_MS:-20}
SERIAL=${BENCH_SERIAL:-1}   # also time --parallel 1

if [ ! -x "$AIRLOCK" ]; then
	echo "update_apply: AIRLOCK='$AIRLOCK' is not executable (build first or set AIRLOCK)" >&2
	exit 2
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench-update.XXXXXX")
export HOME=$W/home
mkdir -p "$HOME"
KS_PID=
cleanup() {
	local rc=$?
	set +e
	[ -n "$KS_PID" ] && kill "$KS_PID" 2>/dev/null && wait "$KS_PID" 2>/dev/null
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $W" >&2; else rm -rf "$W"; fi
	exit $rc
}
trap cleanup EXIT

echo "payload: $MANIFESTS manifests, $COMPONENTS components, $LEVELS levels" >&2
python3 "$TOOLS/mkpayload.py" --out "$W/manifests" --levels "$LEVELS" --components "$COMPONENTS" \
	--manifests "$MANIFESTS" >"$W/summary.json"
python3 "$TOOLS/mkrelease.py" --out "$W/layout" --version 9.9.0 --prefix quay.io/airlock-bench --components 2 \
	--manifests "$W/manifests" --seed bench >/dev/null
cat >"$W/imageset.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-bench/release:9.9.0-x86_64
airlock:
  sources:
  - prefix: quay.io/airlock-bench
    location: "oci:$W/layout"
EOF
"$AIRLOCK" mirror --allow-unsigned --config "$W/imageset.yaml" --store "$W/store" -q >/dev/null

# kubeserver with Nagle off (see tests/integration/update_lib.sh)
python3 -c 'import sys, socketserver
sys.path.insert(0, sys.argv.pop(1))
socketserver.StreamRequestHandler.disable_nagle_algorithm = True
import kubeserver
kubeserver.main()' "$TOOLS" --port-file "$W/port" 2>"$W/kubeserver.log" &
KS_PID=$!
for i in $(seq 1 100); do [ -s "$W/port" ] && break; sleep 0.1; done
URL=http://127.0.0.1:$(cat "$W/port")
cat >"$W/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: b, cluster: {server: "$URL"}}]
contexts: [{name: b, context: {cluster: b, user: b}}]
current-context: b
users: [{name: b, user: {}}]
EOF
ctl() { curl -sf -X POST -H 'Content-Type: application/json' -d "$2" "$URL/_control/$1" >/dev/null; }

# one timed update from scratch; prints seconds and the request count
timed() {
	ctl reset '{}'
	[ "$LATENCY_MS" -gt 0 ] && ctl fault "{\"path\": \".*\", \"latency_ms\": $LATENCY_MS}"
	rm -f "$W/state.json"
	local t0 t1
	t0=$(date +%s%N)
	"$AIRLOCK" update --store "$W/store" --to 9.9.0 --kubeconfig "$W/kubeconfig" --force \
		--state "$W/state.json" --sync-timeout 30m -q "$@" >"$W/out" 2>"$W/err" || {
		cat "$W/err" >&2
		exit 3
	}
	t1=$(date +%s%N)
	local n
	n=$(curl -sf "$URL/_control/log" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["requests"]))')
	echo "$(( (t1 - t0) / 1000000 )) $n"
}

read -r wall_par req_par < <(timed)
grep -q "completed: applied $MANIFESTS of $MANIFESTS" "$W/out" || { echo "update did not complete" >&2; cat "$W/out" "$W/err" >&2; exit 3; }
if [ "$SERIAL" = 1 ]; then
	read -r wall_ser req_ser < <(timed --parallel 1)
else
	wall_ser=0 req_ser=0
fi

python3 - "$W/summary.json" "$LATENCY_MS" "$wall_par" "$req_par" "$wall_ser" "$req_ser" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
lat = int(sys.argv[2])
wall_par, req_par, wall_ser, req_ser = (int(x) for x in sys.argv[3:7])
slowest = sum(max(l["components"].values()) for l in s["levels"])
ideal = slowest * lat
serial = s["manifests"] * lat
print("manifests %d, levels %d, per-request latency %d ms" % (s["manifests"], len(s["levels"]), lat))
print("ideal (sum over levels of the slowest component's serial latency): %d manifests, %.2f s" % (slowest, ideal / 1000))
print("airlock update, default --parallel: %.2f s, %d requests, ratio to ideal %.2fx" % (wall_par / 1000, req_par, wall_par / ideal))
if wall_ser:
    print("airlock update, --parallel 1:      %.2f s, %d requests, ratio to ideal %.2fx (all manifests serially: %.2f s)" % (wall_ser / 1000, req_ser, wall_ser / ideal, serial / 1000))
EOF
