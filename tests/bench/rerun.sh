#!/usr/bin/env bash
# rerun.sh: an unchanged rerun against the first run, for mirror and for push, sigstore discovery on (issue 29's target: the rerun takes at most 5% of the first run): times in interleaved rounds, and the reproducible figures (requests through a counting proxy, instructions under callgrind).
# Not run by ctest. See tests/bench/README.md.
#
# A release of BENCH_COMPONENTS (default 100) component images, each with a
# BENCH_LAYER_SIZE (default 1 MB) layer of its own on a BENCH_BASE_SIZE
# (default 8 MB) base layer they share, is pushed to a loopback docker-registry (tests/tools/registry.sh); every
# BENCH_SIGN_EVERY-th component (default 10) and the release image get a
# cosign "sha256-<hex>.sig" signature (tests/tools/cosign_push.py), so that
# sigstore discovery (on by default) has tags to list and signatures to
# carry. Four modes:
#   mirror_first  airlock mirror of the release into an empty store
#   mirror_rerun  the same mirror into a store that already holds it
#   push_first    airlock push of that store (a fresh copy: no push record)
#                 into a repository prefix not used before
#   push_rerun    the same push again, into the prefix it already went to
# Counted first (deterministic, untimed): the requests each mode makes,
# through tests/tools/faultproxy.py (/_stats), and with BENCH_CALLGRIND=1
# (the default) the instructions airlock executes in each mode under
# valgrind --tool=callgrind (the client's work only; the registry's is not
# counted). Then timed: BENCH_ROUNDS interleaved rounds (default 5;
# 0 counts only) and the ratio rerun / first run, median [range].
set -euo pipefail
set -a # the timed run_* functions run in a child shell: they see exported variables

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AL_SOURCE_DIR=${AL_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
AL_BUILD_DIR=${AL_BUILD_DIR:-$AL_SOURCE_DIR/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
N=${BENCH_COMPONENTS:-100}
# bytes of each component's own layer and of the base layer they share:
# the first run moves them, an unchanged rerun does not (the issue's
# release: 151 components, 6 MB layers, a 64 MB base)
LAYER=${BENCH_LAYER_SIZE:-1000000}
BASE=${BENCH_BASE_SIZE:-8000000}
EVERY=${BENCH_SIGN_EVERY:-10}
ROUNDS=${BENCH_ROUNDS:-5}
PARALLEL=${BENCH_PARALLEL:-8}
CALLGRIND=${BENCH_CALLGRIND:-1}
# 1: the source registry also carries a "sha256-<hex>" tag per component
# (what airlock push and oc-mirror add for digest-pinned images); 0 (the
# default): like quay.io, it does not
DIGEST_TAGS=${BENCH_DIGEST_TAGS:-0}

[ -x "$AIRLOCK" ] || { echo "rerun: AIRLOCK='$AIRLOCK' is not executable" >&2; exit 2; }
if [ "$CALLGRIND" = 1 ] && ! command -v valgrind >/dev/null; then
	echo "rerun: valgrind missing (Debian package valgrind); BENCH_CALLGRIND=0 skips the instruction counts" >&2
	exit 2
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/airlock-rerunbench.XXXXXX")
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
	--layer-size "$LAYER" --base-size "$BASE" --gzip-level 1 --seed rerunbench >/dev/null
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
seedflags=(--no-digest-tags)
[ "$DIGEST_TAGS" = 1 ] && seedflags=()
"$AIRLOCK" push -q --layout source "${seedflags[@]}" --store "$W/seed" --tls-verify=false "docker://$R" >/dev/null
bench_sign_every "$W/seed" "$R" "$EVERY" "$W"
bench_release_imageset "$W/reg.yaml" "$R"

# The store push reads: the release with its signatures, mirrored once
# (so it carries the release cache, airlock/cache/, as any store mirror
# wrote does: push_first reads only the release's payload layer too).
"$AIRLOCK" mirror -q --allow-unsigned --parallel "$PARALLEL" --tls-verify=false \
	--config "$W/reg.yaml" --store "$W/pushsrc" >/dev/null
images=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["manifests"]))' "$W/pushsrc/index.json")

# a repository prefix never pushed to before, for each first push
fresh_prefix() {
	local n
	n=$(($(cat "$W/prefix.count" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$W/prefix.count"
	echo "first$n"
}

# mirror_cmd STORE REGISTRY, push_cmd STORE REGISTRY PREFIX: the commands
# every mode runs (counted and timed alike; RUNNER, when set, runs airlock:
# valgrind).
mirror_cmd() {
	local yaml=$W/mirror-$2.yaml
	[ -f "$yaml" ] || bench_release_imageset "$yaml" "$2"
	${RUNNER:-} "$AIRLOCK" mirror -q --allow-unsigned --parallel "$PARALLEL" --tls-verify=false \
		--config "$yaml" --store "$1"
}
push_cmd() {
	${RUNNER:-} "$AIRLOCK" push -q --parallel "$PARALLEL" --store "$1" --tls-verify=false "docker://$2/$3"
}

# counted runs: requests through the proxy, instructions under callgrind
python3 "$AL_SOURCE_DIR/tests/tools/faultproxy.py" --upstream "$R" --port-file "$W/proxy.port" &
PROXY_PID=$!
for _ in $(seq 100); do [ -s "$W/proxy.port" ] && break; sleep 0.1; done
P=127.0.0.1:$(cat "$W/proxy.port")
declare -A REQ INS
# measure KEY CMD...: the requests CMD makes through the proxy (their log
# is kept in $W/requests.KEY)
measure() {
	local key=$1
	shift
	curl -sf "http://$P/_stats?reset=1" >/dev/null
	"$@" >/dev/null
	curl -sf "http://$P/_stats" >"$W/stats.json"
	python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["log"]))' "$W/stats.json" >"$W/requests.$key"
	REQ[$key]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$W/stats.json")
}
# instructions KEY CMD...: CMD run under callgrind (airlock's own
# instructions, every thread), directly against the registry
instructions() {
	local key=$1 out=$W/callgrind.$1
	shift
	RUNNER="valgrind --tool=callgrind --callgrind-out-file=$out" "$@" >/dev/null 2>"$W/callgrind.$key.log"
	INS[$key]=$(awk '/^(summary|totals):/ {print $2; exit}' "$out")
}
log "counting requests"
rm -rf "$W/cstore"
measure mirror-first mirror_cmd "$W/cstore" "$P"
measure mirror-rerun mirror_cmd "$W/cstore" "$P"
rm -rf "$W/cpush"
cp -r "$W/pushsrc" "$W/cpush"
measure push-first push_cmd "$W/cpush" "$P" counted
measure push-rerun push_cmd "$W/cpush" "$P" counted
if [ "$CALLGRIND" = 1 ]; then
	log "counting instructions (valgrind --tool=callgrind: a few minutes)"
	rm -rf "$W/gstore"
	instructions mirror-first mirror_cmd "$W/gstore" "$R"
	instructions mirror-rerun mirror_cmd "$W/gstore" "$R"
	rm -rf "$W/gpush"
	cp -r "$W/pushsrc" "$W/gpush"
	instructions push-first push_cmd "$W/gpush" "$R" ground
	instructions push-rerun push_cmd "$W/gpush" "$R" ground
fi
rm -rf "$W/seed" "$W/cstore" "$W/cpush" "$W/gstore" "$W/gpush" # disk

# timed modes
prep_mirror_first() { rm -rf "$W/store-first"; }
run_mirror_first() { mirror_cmd "$W/store-first" "$R"; }
prep_mirror_rerun() { [ -d "$W/store-rerun" ] || mirror_cmd "$W/store-rerun" "$R"; }
run_mirror_rerun() { mirror_cmd "$W/store-rerun" "$R"; }
prep_push_first() {
	rm -rf "$W/push-first"
	cp -r "$W/pushsrc" "$W/push-first"
	fresh_prefix >"$W/prefix.push_first"
}
run_push_first() { push_cmd "$W/push-first" "$R" "$(cat "$W/prefix.push_first")"; }
prep_push_rerun() {
	[ -d "$W/push-rerun" ] && return 0
	cp -r "$W/pushsrc" "$W/push-rerun"
	push_cmd "$W/push-rerun" "$R" rerun
}
run_push_rerun() { push_cmd "$W/push-rerun" "$R" rerun; }

blobbytes=$(du -sb "$W/pushsrc/blobs" | cut -f1)
echo "images: $images in the store ($((N + 1)) in the release, $signed signed), $blobbytes bytes of blobs, --parallel $PARALLEL, load $(bench_load)"
for k in mirror-first mirror-rerun push-first push-rerun; do
	printf 'requests %-13s %6d\n' "$k" "${REQ[$k]}"
done
for w in mirror push; do
	printf 'requests %s rerun / first run: %.4f\n' "$w" "$(echo "${REQ[$w-rerun]} / ${REQ[$w-first]}" | bc -l)"
done
if [ "$CALLGRIND" = 1 ]; then
	for k in mirror-first mirror-rerun push-first push-rerun; do
		printf 'instructions %-13s %14d\n' "$k" "${INS[$k]}"
	done
	for w in mirror push; do
		printf 'instructions %s rerun / first run: %.4f\n' "$w" "$(echo "${INS[$w-rerun]} / ${INS[$w-first]}" | bc -l)"
	done
fi
[ "$ROUNDS" -gt 0 ] || exit 0
bench_init "$W/bench"
log "load before: $(bench_load); $ROUNDS rounds"
bench_rounds "$ROUNDS" mirror_first mirror_rerun push_first push_rerun
bench_ratio "mirror, unchanged rerun vs first run (target <= 0.05)" mirror_rerun mirror_first
bench_ratio "push, unchanged rerun vs first run (target <= 0.05)" push_rerun push_first
for m in mirror_first mirror_rerun push_first push_rerun; do
	printf 'median seconds %-13s %s\n' "$m" "$(sort -n "$W/bench/times/$m" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
echo "load after: $(bench_load)"
