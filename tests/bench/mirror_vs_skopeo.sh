#!/usr/bin/env bash
# mirror_vs_skopeo.sh: times airlock mirror against a skopeo copy loop on a synthetic release in a loopback registry.
# Not run by ctest. See tests/bench/README.md. Prints ratios measured in this run only.
set -euo pipefail

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
if [ ! -x /usr/bin/time ]; then
	echo "mirror_vs_skopeo: installing GNU time (Debian package 'time')" >&2
	apt-get install -y -q time >/dev/null
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench.XXXXXX")
export HOME=$W/home XDG_RUNTIME_DIR=$W/run
unset REGISTRY_AUTH_FILE DOCKER_CONFIG
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
printf '{"default":[{"type":"insecureAcceptAnything"}]}\n' >"$W/policy.json"
SKOPEO=(skopeo --policy "$W/policy.json")

. "$AL_SOURCE_DIR/tests/tools/registry.sh"
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

# measure NAME CMD...: runs CMD under GNU time; sets SECS and RSS_KB.
measure() {
	local name=$1
	shift
	/usr/bin/time -v -o "$W/$name.time" "$@" >"$W/$name.out" 2>"$W/$name.err" || {
		echo "bench: '$name' failed:" >&2
		tail -n 20 "$W/$name.err" >&2
		exit 3
	}
	SECS=$(awk -F': ' '/Elapsed \(wall clock\)/ {
		n = split($2, p, ":"); s = 0
		for (i = 1; i <= n; i++) s = s * 60 + p[i]
		print s }' "$W/$name.time")
	RSS_KB=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$W/$name.time")
	log "$name: ${SECS}s, peak RSS $((RSS_KB / 1024)) MiB"
}

measure airlock-first "$AIRLOCK" mirror --allow-unsigned --config "$W/imageset.yaml" --store "$W/store" \
	--tls-verify=false --parallel "$PARALLEL"
a_first=$SECS a_rss=$RSS_KB
tail -n 1 "$W/airlock-first.out" >&2
measure airlock-rerun "$AIRLOCK" mirror --allow-unsigned --config "$W/imageset.yaml" --store "$W/store" \
	--tls-verify=false --parallel "$PARALLEL"
a_rerun=$SECS a_rerun_rss=$RSS_KB
tail -n 1 "$W/airlock-rerun.out" >&2
"$AIRLOCK" check --store "$W/store" >"$W/check.out" || { log "airlock check failed"; tail -n 5 "$W/check.out" >&2; exit 3; }

# skopeo sync cannot copy untagged (by-digest) component images, so skopeo
# copies each image in a loop (sequentially, as a script would), all into one
# OCI layout so the shared base layer is stored once.
{
	echo 'set -e'
	for n in $names; do
		printf '%q ' "${SKOPEO[@]}" copy -q --src-tls-verify=false \
			"docker://$R/${n#*/}" "oci:$W/skopeo:$n"
		echo
	done
} >"$W/skopeo-loop.sh"
measure skopeo-loop bash "$W/skopeo-loop.sh"
s_time=$SECS s_rss=$RSS_KB

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo "images: $(echo "$names" | wc -l), blobs: $((total / 1048576)) MiB, airlock --parallel $PARALLEL"
echo "airlock first / skopeo copy loop (time): $(ratio "$a_first" "$s_time")"
echo "airlock rerun / airlock first (time):    $(ratio "$a_rerun" "$a_first")"
echo "peak RSS MiB: airlock first $((a_rss / 1024)), airlock rerun $((a_rerun_rss / 1024)), skopeo (largest single process) $((s_rss / 1024))"
echo "airlock peak RSS / skopeo peak RSS:      $(ratio "$a_rss" "$s_rss")"
