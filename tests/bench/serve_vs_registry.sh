#!/usr/bin/env bash
# serve_vs_registry.sh: benchmark: airlock serve against Debian's docker-registry serving the same release to 50 concurrent pullers, as median ratios of interleaved rounds, and each server's peak RSS.
#
# usage: tests/bench/serve_vs_registry.sh
# Environment: AIRLOCK (default $AL_BUILD_DIR/airlock; a release build, not
# the sanitizer one), BENCH_PULLERS (default 50), BENCH_ROUNDS (default 5),
# BENCH_COMPONENTS (default 20), BENCH_LAYER_SIZE (bytes per component
# layer, default 8000000), BENCH_BASE_SIZE (default 20000000), BENCH_TLS=1
# (both servers over TLS with a --make-cert CA: no sendfile then),
# BENCH_KEEP=1 (keep the scratch directory). Needs python3, curl, skopeo,
# docker-registry and GNU time. Not run by ctest; run it on an idle machine.
#
# The release (tests/tools/mkrelease.py, an OCI layout) is itself the store
# airlock serves (any OCI layout opens as a store); skopeo copies every
# image of it into docker-registry under the same repository names (the
# host dropped, as al_push_target does). What is timed, per server, in
# rounds whose order alternates: BENCH_PULLERS curl processes at once, each
# fetching every manifest and blob of the release over one kept-alive
# connection (curl -K), as the nodes of a cluster pull one release at the
# same time. Printed: each round's seconds (detail log), the median ratio
# airlock / docker-registry with its range, and each server's peak RSS
# (VmHWM of the server process over all rounds).
set -euo pipefail

AL_SOURCE_DIR=${AL_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
AL_BUILD_DIR=${AL_BUILD_DIR:-$AL_SOURCE_DIR/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
if [ ! -x "$AIRLOCK" ]; then
	echo "serve_vs_registry: AIRLOCK='$AIRLOCK' is not executable (build first or set AIRLOCK)" >&2
	exit 2
fi
PULLERS=${BENCH_PULLERS:-50}
ROUNDS=${BENCH_ROUNDS:-5}
COMPONENTS=${BENCH_COMPONENTS:-20}
LAYER_SIZE=${BENCH_LAYER_SIZE:-8000000}
BASE_SIZE=${BENCH_BASE_SIZE:-20000000}

W=$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench.XXXXXX")
export HOME=$W/home XDG_RUNTIME_DIR=$W/run
unset REGISTRY_AUTH_FILE DOCKER_CONFIG
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
printf '{"default":[{"type":"insecureAcceptAnything"}]}\n' >"$W/policy.json"
SKOPEO=(skopeo --policy "$W/policy.json")

. "$AL_SOURCE_DIR/tests/tools/registry.sh"
. "$AL_SOURCE_DIR/tests/bench/lib.sh"
SERVE_PID=
cleanup() {
	local rc=$?
	set +e
	al_registry_stop
	if [ -n "$SERVE_PID" ]; then
		kill "$SERVE_PID"
		wait "$SERVE_PID"
	fi
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi
	exit $rc
}
trap cleanup EXIT

log() { echo "bench: $*" >&2; }

log "generating $COMPONENTS components x $LAYER_SIZE bytes + shared base $BASE_SIZE bytes"
python3 "$AL_SOURCE_DIR/tests/tools/mkrelease.py" --out "$W/store" --components "$COMPONENTS" \
	--layer-size "$LAYER_SIZE" --base-size "$BASE_SIZE" --gzip-level 1 --seed 1 >/dev/null
log "release: $(($(du -sb "$W/store/blobs" | cut -f1) / 1048576)) MiB of blobs"

tls_reg=()
tls_srv=()
scheme=http
if [ "${BENCH_TLS:-0}" = 1 ]; then
	"$AIRLOCK" serve --make-cert "$W/tls" >/dev/null
	tls_reg=(--tls "$W/tls/server.crt" "$W/tls/server.key")
	tls_srv=(--tls-cert "$W/tls/server.crt" --tls-key "$W/tls/server.key")
	scheme=https
fi

al_registry_start "$W/reg" "${tls_reg[@]}" || exit 3
REG=$AL_REGISTRY_ADDR
REG_PID=$AL_REGISTRY_PID
names=$(python3 -c '
import json, sys
for m in json.load(open(sys.argv[1] + "/index.json"))["manifests"]:
    print(m["annotations"]["org.opencontainers.image.ref.name"])' "$W/store")
log "copying $(echo "$names" | wc -l) images into docker-registry at $REG with skopeo"
for n in $names; do
	"${SKOPEO[@]}" copy -q --dest-tls-verify=false "oci:$W/store:$n" "docker://$REG/${n#*/}"
done

"$AIRLOCK" serve --store "$W/store" --listen 127.0.0.1:0 --access-log /dev/null \
	--max-connections 512 --per-ip 256 "${tls_srv[@]}" >"$W/serve.out" 2>"$W/serve.err" &
SERVE_PID=$!
for i in $(seq 1 100); do
	grep -q '^serving on ' "$W/serve.out" && break
	sleep 0.1
done
SRV=$(sed -n 's/^serving on //p' "$W/serve.out")
[ -n "$SRV" ] || { cat "$W/serve.err" >&2; exit 3; }

# One curl config per server: every manifest and blob of the release.
for which in srv reg; do
	addr=$SRV
	[ "$which" = reg ] && addr=$REG
	python3 - "$W/store" "$scheme://$addr" >"$W/$which.curl" <<'EOF'
import json, os, sys
store, base = sys.argv[1], sys.argv[2]
print('header = "Accept: application/vnd.oci.image.manifest.v1+json, '
      'application/vnd.oci.image.index.v1+json, '
      'application/vnd.docker.distribution.manifest.v2+json"')
for m in json.load(open(os.path.join(store, "index.json")))["manifests"]:
    name = m["annotations"]["org.opencontainers.image.ref.name"]
    repo = name.split("/", 1)[1].split("@")[0].rsplit(":", 1)[0]
    print('url = "%s/v2/%s/manifests/%s"\noutput = "/dev/null"' % (base, repo, m["digest"]))
    man = json.load(open(os.path.join(store, "blobs", "sha256", m["digest"][7:])))
    for d in [man["config"]] + man["layers"]:
        print('url = "%s/v2/%s/blobs/%s"\noutput = "/dev/null"' % (base, repo, d["digest"]))
EOF
done
log "$(grep -c '^url' "$W/srv.curl") requests per puller, $PULLERS pullers at once"

pullers() {
	local cfg=$1 i pids=() rc=0
	for ((i = 0; i < PULLERS; i++)); do
		curl -sf --cacert "$W/tls/ca.crt" -K "$cfg" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=1
	done
	return $rc
}
export PULLERS W
run_airlock() { pullers "$W/srv.curl"; }
run_registry() { pullers "$W/reg.curl"; }
export -f pullers
[ -f "$W/tls/ca.crt" ] || { mkdir -p "$W/tls" && touch "$W/tls/ca.crt"; }

bench_init "$W"
echo "serve_vs_registry: $PULLERS pullers, $COMPONENTS components, $scheme, load $(bench_load)"
bench_rounds "$ROUNDS" airlock registry
bench_ratio "time for $PULLERS concurrent pulls" airlock registry
hwm() { awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
echo "peak RSS: airlock serve $(hwm "$SERVE_PID") MiB, docker-registry $(hwm "$REG_PID") MiB"
