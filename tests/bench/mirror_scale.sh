#!/usr/bin/env bash
# mirror_scale.sh: airlock mirror of 100 / 1,000 / 10,000 small images from an on-disk OCI layout: time per image and peak RSS at each size, in interleaved rounds.
# Not run by ctest. See tests/bench/README.md.
#
# Each size is a synthetic release (tests/tools/mkrelease.py) of N component
# images with a small unique layer each, read through `airlock.sources` from
# an OCI layout, so that the cost measured is the per-image cost of the
# store (index updates, blob commits, fsyncs), not the network. The peer of
# each size is the smallest size measured in the same rounds: the report is
# the time per image of size N over the time per image of the smallest size
# (1.00 = constant cost per image), median [range] over the rounds.
set -euo pipefail
set -a # the timed run_* functions run in a child shell: they see exported variables

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AL_SOURCE_DIR=${AL_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
AL_BUILD_DIR=${AL_BUILD_DIR:-$AL_SOURCE_DIR/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
SIZES=${BENCH_SIZES:-100 1000 10000}
ROUNDS=${BENCH_ROUNDS:-3}
PARALLEL=${BENCH_PARALLEL:-8}
LAYER=${BENCH_LAYER_SIZE:-2000}

[ -x "$AIRLOCK" ] || { echo "mirror_scale: AIRLOCK='$AIRLOCK' is not executable" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/airlock-scale.XXXXXX")
cleanup() { if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi; }
trap cleanup EXIT
. "$here/lib.sh"
log() { echo "bench: $*" >&2; }

modes=()
for n in $SIZES; do
	log "generating a release of $n components ($LAYER bytes each)"
	python3 "$AL_SOURCE_DIR/tests/tools/mkrelease.py" --out "$W/src-$n/layout" --components "$n" \
		--layer-size "$LAYER" --base-size 4096 --gzip-level 1 --seed "scale-$n" >/dev/null
	cat >"$W/src-$n/imageset.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-samples/release:4.14.1-x86_64
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: "oci:layout"
YAML
	eval "prep_n$n() { rm -rf \"\$W/store-$n\"; }"
	eval "run_n$n() { \"\$AIRLOCK\" mirror -q --allow-unsigned --parallel \"\$PARALLEL\" --config \"\$W/src-$n/imageset.yaml\" --store \"\$W/store-$n\"; }"
	modes+=("n$n")
done

bench_init "$W/bench"
log "load before: $(bench_load); $ROUNDS rounds over: $SIZES"
bench_rounds "$ROUNDS" "${modes[@]}"
for n in $SIZES; do
	got=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["manifests"]))' "$W/store-$n/index.json")
	[ "$got" -ge "$n" ] || { log "store-$n holds $got images, fewer than $n"; exit 3; }
done

echo "mirror of N small images from an OCI layout, --parallel $PARALLEL, load $(bench_load)"
python3 - "$W/bench/times" $SIZES <<'PY'
import statistics, sys
d, sizes = sys.argv[1], [int(x) for x in sys.argv[2:]]
t = {n: [float(l.split()[0]) for l in open(f"{d}/n{n}")] for n in sizes}
rss = {n: max(int(l.split()[1]) for l in open(f"{d}/n{n}")) / 1024 for n in sizes}
base = sizes[0]
for n in sizes:
    per = [t[n][i] / (n + 1) for i in range(len(t[n]))]
    ref = [t[base][i] / (base + 1) for i in range(len(t[base]))]
    r = sorted(per[i] / ref[i] for i in range(min(len(per), len(ref))))
    print(f"  {n:6d} images: time per image / at {base} = {statistics.median(r):.2f} [{r[0]:.2f}-{r[-1]:.2f}],"
          f" {statistics.median(per) * 1000:.2f} ms per image, peak RSS {rss[n]:.1f} MiB")
PY
