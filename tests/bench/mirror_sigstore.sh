#!/usr/bin/env bash
# mirror_sigstore.sh: the cost of carrying sigstore signatures by default: airlock mirror of a synthetic release from a loopback registry with and without --no-sigstore, requests counted and times in interleaved rounds.
# Not run by ctest. See tests/bench/README.md.
#
# A release of BENCH_COMPONENTS (default 100) small component images is
# pushed to a loopback docker-registry (tests/tools/registry.sh) with
# airlock push; every BENCH_SIGN_EVERY-th component (default 10) and the
# release image get a cosign "sha256-<hex>.sig" signature
# (tests/tools/cosign_push.py). Requests are counted once per mode through
# tests/tools/faultproxy.py (no fault rules: /_stats); times are taken
# directly against the registry: a first mirror into an empty store and a
# no-change rerun, each with sigstore (the default) and with --no-sigstore.
set -euo pipefail
set -a # the timed run_* functions run in a child shell: they see exported variables

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AL_SOURCE_DIR=${AL_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
AL_BUILD_DIR=${AL_BUILD_DIR:-$AL_SOURCE_DIR/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
N=${BENCH_COMPONENTS:-100}
EVERY=${BENCH_SIGN_EVERY:-10}
ROUNDS=${BENCH_ROUNDS:-3}
PARALLEL=${BENCH_PARALLEL:-8}

[ -x "$AIRLOCK" ] || { echo "mirror_sigstore: AIRLOCK='$AIRLOCK' is not executable" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/airlock-sigbench.XXXXXX")
PROXY_PID=
cleanup() {
	[ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null
	al_registry_stop
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
. "$here/lib.sh"
. "$AL_SOURCE_DIR/tests/tools/registry.sh"
log() { echo "bench: $*" >&2; }

al_registry_start "$W/reg" >/dev/null
R=$AL_REGISTRY_ADDR
log "registry $R; a release of $N components, every ${EVERY}th signed"
python3 "$AL_SOURCE_DIR/tests/tools/mkrelease.py" --out "$W/layout" --components "$N" \
	--layer-size 2000 --base-size 4096 --gzip-level 1 --seed sigbench >/dev/null
cat >"$W/local.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-samples/release:4.14.1-x86_64
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: "oci:$W/layout"
YAML
"$AIRLOCK" mirror -q --allow-unsigned --no-sigstore --config "$W/local.yaml" --store "$W/seed" >/dev/null
"$AIRLOCK" push -q --layout source --no-digest-tags --store "$W/seed" --tls-verify=false "docker://$R" >/dev/null
bench_sign_every "$W/seed" "$R" "$EVERY" "$W"
bench_release_imageset "$W/reg.yaml" "$R"

# requests: one first run and one rerun per mode, through a counting proxy
python3 "$AL_SOURCE_DIR/tests/tools/faultproxy.py" --upstream "$R" --port-file "$W/proxy.port" &
PROXY_PID=$!
for _ in $(seq 100); do [ -s "$W/proxy.port" ] && break; sleep 0.1; done
P=127.0.0.1:$(cat "$W/proxy.port")
bench_release_imageset "$W/proxy.yaml" "$P"
count() { curl -sf "http://$P/_stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])'; }
declare -A REQ
for mode in on off; do
	flag=
	[ $mode = off ] && flag=--no-sigstore
	rm -rf "$W/cstore"
	for run in first rerun; do
		a=$(count)
		"$AIRLOCK" mirror -q --allow-unsigned $flag --parallel "$PARALLEL" --tls-verify=false \
			--config "$W/proxy.yaml" --store "$W/cstore" >/dev/null
		b=$(count)
		REQ[$mode-$run]=$((b - a)) # faultproxy does not count its /_stats calls
	done
done

prep_on() { rm -rf "$W/store-on"; }
run_on() { "$AIRLOCK" mirror -q --allow-unsigned --parallel "$PARALLEL" --tls-verify=false --config "$W/reg.yaml" --store "$W/store-on"; }
prep_off() { rm -rf "$W/store-off"; }
run_off() { "$AIRLOCK" mirror -q --allow-unsigned --no-sigstore --parallel "$PARALLEL" --tls-verify=false --config "$W/reg.yaml" --store "$W/store-off"; }
prep_on_rerun() { [ -d "$W/store-on" ] || run_on; }
run_on_rerun() { run_on; }
prep_off_rerun() { [ -d "$W/store-off" ] || run_off; }
run_off_rerun() { run_off; }

bench_init "$W/bench"
log "load before: $(bench_load); $ROUNDS rounds"
bench_rounds "$ROUNDS" on off on_rerun off_rerun
sigs=$(grep -o "sha256-[0-9a-f]*\.sig" "$W/store-on/index.json" | wc -l)
[ "$sigs" = "$signed" ] || { log "store-on holds $sigs .sig tags, $signed were pushed"; exit 3; }

images=$((N + 1))
echo "images: $images ($signed signed), --parallel $PARALLEL, load $(bench_load)"
for k in on-first off-first on-rerun off-rerun; do
	printf 'requests %-9s %6d (%.2f per image)\n' "$k" "${REQ[$k]}" "$(echo "${REQ[$k]} / $images" | bc -l)"
done
bench_ratio "first mirror, sigstore on vs --no-sigstore" on off
bench_ratio "no-change rerun, sigstore on vs --no-sigstore" on_rerun off_rerun
for m in on off on_rerun off_rerun; do
	printf 'median seconds %-9s %s\n' "$m" "$(sort -n "$W/bench/times/$m" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
