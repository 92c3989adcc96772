#!/usr/bin/env bash
# mirror_scale.sh: airlock mirror of 100 / 1,000 / 10,000 small images (and optionally operator catalogs of thousands of bundles) from an on-disk OCI layout: time per image and peak RSS at each size, in interleaved rounds.
# Not run by ctest. See tests/bench/README.md.
#
# Each size is a synthetic release (tests/tools/mkrelease.py) of N component
# images with a small unique layer each, read through `airlock.sources` from
# an OCI layout, so that the cost measured is the per-image cost of the
# store (index updates, blob commits, fsyncs), not the network. The peer of
# each size is the smallest size measured in the same rounds: the report is
# the time per image of size N over the time per image of the smallest size
# (1.00 = constant cost per image), median [range] over the rounds.
#
# BENCH_CATALOG_BUNDLES (default empty: none) adds, for each size N, a mode
# cN: an operator catalog (tests/tools/mkcatalog.py --bundles N --images:
# package big, N bundles in channel stable, each a bundle, an operator and
# 3 operand images) mirrored with mirror.operators[] (full: true, package
# big: every bundle, not only the channel head) from an OCI layout through
# `airlock.sources`, in the same rounds. Its time per image (the catalog's
# selected images plus the catalog) is compared with the smallest release
# size's, or with the smallest catalog's when BENCH_SIZES is set empty.
# BENCH_BUNDLE_OBJECTS=1 gives every bundle the real olm.bundle.object
# data of a Red Hat bundle (mkcatalog.py --bundle-objects, from
# tests/data/catalogs: about 66 KB a bundle, as in Red Hat's operator
# index), so that the catalog's size, not only its image count, is real.
set -euo pipefail
set -a # the timed run_* functions run in a child shell: they see exported variables

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AL_SOURCE_DIR=${AL_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
AL_BUILD_DIR=${AL_BUILD_DIR:-$AL_SOURCE_DIR/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
SIZES=${BENCH_SIZES-100 1000 10000}
CATALOGS=${BENCH_CATALOG_BUNDLES:-}
ROUNDS=${BENCH_ROUNDS:-3}
PARALLEL=${BENCH_PARALLEL:-8}
LAYER=${BENCH_LAYER_SIZE:-2000}
LAYERS=${BENCH_LAYERS:-1}
objects=
[ "${BENCH_BUNDLE_OBJECTS:-0}" = 0 ] ||
	objects="--bundle-objects $AL_SOURCE_DIR/tests/data/catalogs/oc-mirror-olm-artifacts/configs/aws-load-balancer-operator/catalog.json"

[ -x "$AIRLOCK" ] || { echo "mirror_scale: AIRLOCK='$AIRLOCK' is not executable" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/airlock-scale.XXXXXX")
cleanup() { if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi; }
trap cleanup EXIT
. "$here/lib.sh"
log() { echo "bench: $*" >&2; }

[ -n "${SIZES// /}${CATALOGS// /}" ] || { echo "mirror_scale: nothing to measure (BENCH_SIZES and BENCH_CATALOG_BUNDLES empty)" >&2; exit 2; }
modes=()
for n in $SIZES; do
	log "generating a release of $n components ($LAYERS unique layer(s) of $LAYER bytes each)"
	python3 "$AL_SOURCE_DIR/tests/tools/mkrelease.py" --out "$W/src-$n/layout" --components "$n" \
		--layers "$LAYERS" --layer-size "$LAYER" --base-size 4096 --gzip-level 1 --seed "scale-$n" >/dev/null
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
for n in $CATALOGS; do
	log "generating a catalog of $n bundles (about $((5 * n)) images)"
	python3 "$AL_SOURCE_DIR/tests/tools/mkcatalog.py" "$W/cat-$n/layout" quay.io/example/big-catalog:v1 \
		--bundles "$n" --images $objects >/dev/null
	bench_catalog_imageset "oci:layout" >"$W/cat-$n/imageset.yaml"
	eval "prep_c$n() { rm -rf \"\$W/cstore-$n\"; }"
	eval "run_c$n() { \"\$AIRLOCK\" mirror -q --parallel \"\$PARALLEL\" --config \"\$W/cat-$n/imageset.yaml\" --store \"\$W/cstore-$n\"; }"
	modes+=("c$n")
done

bench_init "$W/bench"
log "load before: $(bench_load); $ROUNDS rounds over: ${modes[*]}"
bench_rounds "$ROUNDS" "${modes[@]}"
for n in $SIZES; do
	got=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["manifests"]))' "$W/store-$n/index.json")
	[ "$got" -ge "$n" ] || { log "store-$n holds $got images, fewer than $n"; exit 3; }
done
# each catalog: all N bundles recorded, at least 4 images a bundle, all of
# them in the store; the number of images mirrored (selected + the catalog)
# goes to cN.images for the report
for n in $CATALOGS; do
	python3 - "$W/cstore-$n" "$n" >"$W/bench/c$n.images" <<'PY' || { log "cstore-$n: the catalog's images are not all there"; exit 3; }
import json, sys
s, n = sys.argv[1], int(sys.argv[2])
cats = json.load(open(s + "/airlock/releases.json"))["catalogs"]
names = {m["digest"] for m in json.load(open(s + "/index.json"))["manifests"]}
if len(cats) != 1 or cats[0]["bundles"] != n or len(cats[0]["images"]) < 4 * n:
    sys.exit("cstore-%d: %s bundles, %d images recorded, want %d bundles, >= %d images"
             % (n, cats[0]["bundles"] if cats else "no catalog", len(cats[0]["images"]) if cats else 0, n, 4 * n))
missing = [i for i in cats[0]["images"] if i.split("@")[1] not in names]
if missing:
    sys.exit("cstore-%d: %d images not in index.json, e.g. %s" % (n, len(missing), missing[0]))
print(len(cats[0]["images"]) + 1)
PY
done

echo "mirror of N small images ($LAYERS unique layer(s) each, $((LAYERS + 2)) blobs an image) from an OCI layout, --parallel $PARALLEL, load $(bench_load)"
[ -z "${CATALOGS// /}" ] || echo "catalogs of N bundles: mirror.operators[] (full: true, package big), from an OCI layout${objects:+; every bundle with the real olm.bundle.object data of a Red Hat bundle}"
# the report's arguments: MODE:IMAGES (images mirrored, the time's divisor)
args=()
for n in $SIZES; do args+=("n$n:$((n + 1))"); done
for n in $CATALOGS; do args+=("c$n:$(cat "$W/bench/c$n.images")"); done
python3 - "$W/bench/times" "${args[@]}" <<'PY'
import statistics, sys
d = sys.argv[1]
modes = [(a.split(":")[0], int(a.split(":")[1])) for a in sys.argv[2:]]
t = {m: [float(l.split()[0]) for l in open(f"{d}/{m}")] for m, _ in modes}
rss = {m: max(int(l.split()[1]) for l in open(f"{d}/{m}")) / 1024 for m, _ in modes}
imgs = dict(modes)
n = lambda m: int(m[1:])
rel = [m for m, _ in modes if m[0] == "n"]
cat = [m for m, _ in modes if m[0] == "c"]
base = min(rel or cat, key=n)  # the smallest release size, else the smallest catalog
bname = str(n(base)) if base[0] == "n" else f"catalog {n(base)}"
ref = [x / imgs[base] for x in t[base]]
for m, k in modes:
    per = [x / k for x in t[m]]
    r = sorted(per[i] / ref[i] for i in range(min(len(per), len(ref))))
    what = f"{n(m):6d} images" if m[0] == "n" else f"catalog {n(m)} bundles, {k} images"
    print(f"  {what}: time per image / at {bname} = {statistics.median(r):.2f} [{r[0]:.2f}-{r[-1]:.2f}],"
          f" {statistics.median(per) * 1000:.2f} ms per image, peak RSS {rss[m]:.1f} MiB")
PY
