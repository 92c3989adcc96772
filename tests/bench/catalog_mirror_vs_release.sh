#!/usr/bin/env bash
# catalog_mirror_vs_release.sh: benchmark: mirroring a filtered operator catalog (airlock mirror with mirror.operators[]) against mirroring a release (airlock mirror) of about the same bytes, per byte, from OCI layouts.
#
# usage: tests/bench/catalog_mirror_vs_release.sh
# Environment: AIRLOCK (default $AL_BUILD_DIR/airlock, a release build),
# BENCH_IMAGE_SIZE (bytes of incompressible data per operator/related
# image, default 8000000), BENCH_PAIRS (default 5), BENCH_DIR (scratch,
# removed at exit unless BENCH_KEEP=1). Needs python3 and GNU time. Not run
# by ctest.
#
# The catalog (tests/tools/mkcatalog.py --images --image-size N) selects
# alpha's channel heads and, as a dependency, beta 1.1.0: 7 images (3
# bundles of a few KB, 4 images of N bytes). The release
# (tests/tools/mkrelease.py) has 4 components of N bytes on a 1 MB base.
# Both are read through airlock.sources from OCI layouts into a fresh
# store each run, so the figures compare airlock's own work (hashing,
# writing, fsync, the catalog's read/filter/rebuild) per byte, without a
# network. The catalog is mirrored by 'airlock mirror' (mirror.operators[]:
# fetch, filter, mirror the images, rebuild, record). Pairs are
# interleaved (catalog, release, catalog, ...); printed: the load average,
# the median seconds per MB of each and the median ratio catalog/release
# with its range.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AL_BUILD_DIR=${AL_BUILD_DIR:-$here/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
SIZE=${BENCH_IMAGE_SIZE:-8000000}
PAIRS=${BENCH_PAIRS:-5}
B=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench.XXXXXX")}
mkdir -p "$B"
cleanup() { [ "${BENCH_KEEP:-0}" = 1 ] && echo "kept $B" || rm -rf "$B"; }
trap cleanup EXIT
[ -x "$AIRLOCK" ] || { echo "AIRLOCK='$AIRLOCK' is not executable" >&2; exit 2; }

python3 "$here/tests/tools/mkcatalog.py" "$B/cat" quay.io/example/catalog:v1 --images --image-size "$SIZE" >/dev/null
python3 "$here/tests/tools/mkrelease.py" --out "$B/rel" --components 4 --layer-size "$SIZE" \
	--base-size 1000000 --gzip-level 1 >/dev/null
cat >"$B/cat.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
    - catalog: docker://quay.io/example/catalog:v1
      targetTag: v1-filtered
      packages:
        - name: alpha
airlock:
  sources:
    - prefix: quay.io/example
      location: oci:$B/cat
YAML
cat >"$B/rel.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-samples/release:4.14.1-x86_64
airlock:
  sources:
    - prefix: quay.io/airlock-samples
      location: oci:$B/rel
YAML
cat "$B"/cat/blobs/sha256/* "$B"/rel/blobs/sha256/* >/dev/null   # warm the cache

# run NAME CMD...: into a fresh store; prints "seconds bytes-of-blobs"
run() {
	local name=$1
	shift
	rm -rf "$B/store.$name"
	/usr/bin/time -f '%e' -o "$B/t.$name" "$@" --store "$B/store.$name" >/dev/null 2>"$B/err.$name" || {
		echo "$name failed:" >&2
		tail -n 5 "$B/err.$name" >&2
		exit 3
	}
	echo "$(cat "$B/t.$name") $(du -sb "$B/store.$name/blobs" | cut -f1)"
}
: >"$B/pairs"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((i = 0; i < PAIRS; i++)); do
	c=$(run cat "$AIRLOCK" mirror -q --config "$B/cat.yaml")
	r=$(run rel "$AIRLOCK" mirror -q --allow-unsigned --config "$B/rel.yaml")
	echo "$c $r" >>"$B/pairs"
done
echo "load average before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
{ cs[NR] = $1 / ($2 / 1e6); rs[NR] = $3 / ($4 / 1e6); q[NR] = cs[NR] / rs[NR]; cb = $2; rb = $4 }
function med(a, n,   i, j, t, b) { for (i = 1; i <= n; i++) b[i] = a[i]
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
	return (n % 2) ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2 }
function mn(a, n,   i, x) { x = a[1]; for (i = 2; i <= n; i++) if (a[i] < x) x = a[i]; return x }
function mx(a, n,   i, x) { x = a[1]; for (i = 2; i <= n; i++) if (a[i] > x) x = a[i]; return x }
END {
	printf "catalog mirror: %.1f MB into the store, median %.4f s/MB\n", cb / 1e6, med(cs, NR)
	printf "release mirror: %.1f MB into the store, median %.4f s/MB\n", rb / 1e6, med(rs, NR)
	printf "per-byte ratio catalog/release: median %.2f (range %.2f-%.2f, %d interleaved pairs)\n", med(q, NR), mn(q, NR), mx(q, NR), NR
}' "$B/pairs"
