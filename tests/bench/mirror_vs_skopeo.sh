#!/usr/bin/env bash
# mirror_vs_skopeo.sh: airlock mirror against the fastest working skopeo mode and a parallel curl + openssl floor, in interleaved rounds on a loopback registry.
# Not run by ctest. See tests/bench/README.md. Prints ratios measured in this run only.
set -euo pipefail
set -a # the timed run_* functions run in a child shell: they see exported variables

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AL_SOURCE_DIR=${AL_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
AL_BUILD_DIR=${AL_BUILD_DIR:-$AL_SOURCE_DIR/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
COMPONENTS=${BENCH_COMPONENTS:-150}
LAYER_SIZE=${BENCH_LAYER_SIZE:-6000000}     # unique bytes per component image
BASE_SIZE=${BENCH_BASE_SIZE:-64000000}      # one base layer shared by every image
PARALLEL=${BENCH_PARALLEL:-4}
SEED=${BENCH_SEED:-bench}

if [ ! -x "$AIRLOCK" ]; then
	echo "mirror_vs_skopeo: AIRLOCK='$AIRLOCK' is not executable (build first or set AIRLOCK)" >&2
	exit 2
fi
ROUNDS=${BENCH_ROUNDS:-3}

W=$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench.XXXXXX")
export HOME=$W/home XDG_RUNTIME_DIR=$W/run
unset REGISTRY_AUTH_FILE DOCKER_CONFIG
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
printf '{"default":[{"type":"insecureAcceptAnything"}]}\n' >"$W/policy.json"
SKOPEO=(skopeo --policy "$W/policy.json")

. "$AL_SOURCE_DIR/tests/tools/registry.sh"
. "$AL_SOURCE_DIR/tests/bench/lib.sh"
cleanup() {
	local rc=$?
	set +e
	al_registry_stop
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi
	exit $rc
}
trap cleanup EXIT

log() { echo "bench: $*" >&2; }

log "generating $COMPONENTS components x $LAYER_SIZE bytes + shared base $BASE_SIZE bytes"
python3 "$AL_SOURCE_DIR/tests/tools/mkrelease.py" --out "$W/release" --components "$COMPONENTS" \
	--layer-size "$LAYER_SIZE" --base-size "$BASE_SIZE" --gzip-level 1 --seed "$SEED" >/dev/null
total=$(du -sb "$W/release/blobs" | cut -f1)
log "release: $((total / 1048576)) MiB of blobs"

al_registry_start "$W/reg" || exit 3
R=$AL_REGISTRY_ADDR
names=$(python3 -c '
import json, sys
for m in json.load(open(sys.argv[1] + "/index.json"))["manifests"]:
    print(m["annotations"]["org.opencontainers.image.ref.name"])' "$W/release")
log "pushing $(echo "$names" | wc -l) images to $R with skopeo"
for n in $names; do
	"${SKOPEO[@]}" copy -q --dest-tls-verify=false "oci:$W/release:$n" "docker://$R/${n#*/}"
done

cat >"$W/imageset.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-samples/release:4.14.1-x86_64
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: docker://$R/airlock-samples
YAML

# The modes, each timed once per round (tests/bench/lib.sh rotates the order).
# airlock: a first mirror into an empty store.
prep_airlock() { rm -rf "$W/store"; }
run_airlock() {
	"$AIRLOCK" mirror -q --allow-unsigned --config "$W/imageset.yaml" --store "$W/store" \
		--tls-verify=false --parallel "$PARALLEL"
}
# airlock_rerun: the same mirror again on the store the last first run left.
prep_airlock_rerun() { [ -d "$W/store" ] || run_airlock; }
run_airlock_rerun() { run_airlock; }
# skopeo_loop: one skopeo copy per image, one after another, into one layout
# (skopeo sync copies tags; release components are referenced by digest).
prep_skopeo_loop() { rm -rf "$W/skopeo"; }
run_skopeo_loop() { bash "$W/skopeo-loop.sh"; }
# skopeo_par: $PARALLEL loops side by side, each into a layout of its own
# (several skopeo processes writing one layout corrupt its index.json).
prep_skopeo_par() { rm -rf "$W"/skopeo-par-*; }
run_skopeo_par() {
	local i
	for ((i = 0; i < PARALLEL; i++)); do bash "$W/par-$i.sh" & done
	wait
}
# floor: every unique blob and manifest fetched once with curl and hashed
# with openssl, $PARALLEL at a time: the network and hashing cost alone.
run_floor() {
	xargs -a "$W/floor.list" -P "$PARALLEL" -n 2 sh -c \
		'curl -sf "http://$R/v2/$0/blobs/$1" | openssl dgst -sha256 >/dev/null'
}

# The scripts the skopeo modes run, and the floor's (repository, digest) list.
i=0
: >"$W/skopeo-loop.sh"
for ((p = 0; p < PARALLEL; p++)); do : >"$W/par-$p.sh"; done
for n in $names; do
	cmd=$(printf '%q ' "${SKOPEO[@]}" copy -q --src-tls-verify=false "docker://$R/${n#*/}")
	echo "$cmd oci:$W/skopeo:$n || exit 1" >>"$W/skopeo-loop.sh"
	echo "$cmd oci:$W/skopeo-par-$((i % PARALLEL)):$n || exit 1" >>"$W/par-$((i % PARALLEL)).sh"
	i=$((i + 1))
done
python3 - "$W/release" >"$W/floor.list" <<'PY'
import json, sys
root = sys.argv[1]
seen = set()
def blob(d):
    return json.load(open(f"{root}/blobs/{d.replace(':', '/')}"))
for m in json.load(open(f"{root}/index.json"))["manifests"]:
    repo = m["annotations"]["org.opencontainers.image.ref.name"].split("/", 1)[1].split(":")[0].split("@")[0]
    man = blob(m["digest"])
    for d in [m["digest"], man["config"]["digest"]] + [l["digest"] for l in man["layers"]]:
        if d not in seen:
            seen.add(d)
            print(repo, d)
PY

bench_init "$W/bench"
log "load before: $(bench_load); $ROUNDS rounds"
bench_rounds "$ROUNDS" airlock airlock_rerun skopeo_loop skopeo_par floor
"$AIRLOCK" check --store "$W/store" >"$W/check.out" || { log "airlock check failed"; tail -n 5 "$W/check.out" >&2; exit 3; }
for ((p = 0; p < PARALLEL; p++)); do
	[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["manifests"]))' "$W/skopeo-par-$p/index.json")" -gt 0 ] ||
		{ log "skopeo_par layout $p is empty"; exit 3; }
done

echo "images: $(echo "$names" | wc -l), blobs: $((total / 1048576)) MiB, --parallel $PARALLEL, load $(bench_load) (before: see stderr)"
bench_ratio "mirror vs skopeo" airlock skopeo_loop skopeo_par
bench_ratio "mirror vs the curl + openssl floor" airlock floor
bench_ratio "no-change rerun vs first run" airlock_rerun airlock
echo "peak RSS MiB: airlock $(bench_rss airlock), rerun $(bench_rss airlock_rerun), skopeo (one process) $(bench_rss skopeo_loop)"
