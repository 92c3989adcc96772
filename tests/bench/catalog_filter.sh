#!/usr/bin/env bash
# catalog_filter.sh: benchmark: airlock catalog filter on a 5,000-bundle catalog image against reading the same FBC with python3 json (and jq), as median ratios of interleaved pairs.
#
# usage: tests/bench/catalog_filter.sh
# Environment: AIRLOCK (default $AL_BUILD_DIR/airlock; use a release build,
# not the sanitizer one), BENCH_BUNDLES (default 5000), BENCH_PAIRS
# (default 7), BENCH_DIR (scratch, removed at exit unless BENCH_KEEP=1),
# BENCH_BUNDLE_OBJECTS=1 (every bundle of package big carries the real
# olm.bundle.object data of a Red Hat bundle, about 66 KB, as bundles of
# Red Hat's index do: mkcatalog.py --bundle-objects).
# Needs python3, GNU time, umoci (to unpack the FBC for the peers); jq is
# measured when installed. Not run by ctest.
#
# What is timed, each as one process, in interleaved pairs (airlock, peer,
# airlock, peer, ...) on a warm page cache:
#   airlock   airlock catalog filter --dry-run: read the catalog image from
#             the store (stream and hash every layer, gunzip, untar), parse
#             every FBC file, validate the model, filter package big by
#             channel range 1.100.0..1.400.9 at 5,000 bundles, the same
#             share at other sizes (upgrade graph with replaces,
#             skips, skipRange) plus the other packages' heads, list images;
#   python    python3: json.JSONDecoder.raw_decode over every file of the
#             unpacked FBC directory (parsing only: no model, no filter);
#   jq        jq -c . over the same files (parsing and re-printing).
# The ratio is airlock / peer per pair; printed: the median and the range.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AL_BUILD_DIR=${AL_BUILD_DIR:-$here/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
N=${BENCH_BUNDLES:-5000}
PAIRS=${BENCH_PAIRS:-7}
B=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench.XXXXXX")}
mkdir -p "$B"
cleanup() { [ "${BENCH_KEEP:-0}" = 1 ] && echo "kept $B" || rm -rf "$B"; }
trap cleanup EXIT
[ -x "$AIRLOCK" ] || { echo "AIRLOCK='$AIRLOCK' is not executable" >&2; exit 2; }
command -v umoci >/dev/null || { echo "umoci missing (apt-get install umoci)" >&2; exit 2; }

objects=
[ "${BENCH_BUNDLE_OBJECTS:-0}" = 0 ] ||
	objects="--bundle-objects $here/tests/data/catalogs/oc-mirror-olm-artifacts/configs/aws-load-balancer-operator/catalog.json"
python3 "$here/tests/tools/mkcatalog.py" "$B/store" quay.io/example/big:v1 --bundles "$N" $objects >/dev/null
umoci unpack --rootless --image "$B/store:quay.io/example/big:v1" "$B/unpacked" >/dev/null 2>&1
fbc=$B/unpacked/rootfs/configs
bytes=$(find "$fbc" -type f -name 'catalog.*' -printf '%s\n' | awk '{s+=$1} END {print s}')
echo "catalog: $N bundles in package big + 3 small packages${objects:+ (real olm.bundle.object data in every bundle of big)}; FBC $bytes bytes; load $(cut -d' ' -f1-3 /proc/loadavg)"

# the channel range: the same share of package big at any N (1.100.0 to
# 1.400.9 of 5,000 bundles: 10 a minor version)
lo=$((N / 50))
hi=$((N * 2 / 25))
cat >"$B/isc.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
    - catalog: quay.io/example/big:v1
      packages:
        - name: big
          channels:
            - name: stable
              minVersion: 1.$lo.0
              maxVersion: 1.$hi.9
        - name: alpha
        - name: gamma
YAML
cat >"$B/read.py" <<'PY'
import json, os, sys
dec = json.JSONDecoder()
n = 0
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        if not f.startswith("catalog."):
            continue
        s = open(os.path.join(root, f), encoding="utf-8").read()
        if not s.lstrip().startswith("{"):
            continue  # the one YAML package: python's stdlib has no YAML
        i = 0
        while True:
            while i < len(s) and s[i].isspace():
                i += 1
            if i >= len(s):
                break
            _, i = dec.raw_decode(s, i)
            n += 1
print(n)
PY
"$AIRLOCK" catalog filter --store "$B/store" --config "$B/isc.yaml" --dry-run >"$B/images" 2>/dev/null
echo "airlock selects $(wc -l <"$B/images") images"
cat "$fbc"/*/catalog.* >/dev/null

timeit() { # OUT CMD...: "seconds peakKiB" into OUT
	local out=$1
	shift
	/usr/bin/time -f '%e %M' -o "$out" "$@" >/dev/null 2>&1
}
peers=(python)
command -v jq >/dev/null && peers+=(jq)
for peer in "${peers[@]}"; do
	: >"$B/pairs.$peer"
	for ((i = 0; i < PAIRS; i++)); do
		timeit "$B/t.a" "$AIRLOCK" catalog filter --store "$B/store" --config "$B/isc.yaml" --dry-run
		case $peer in
		python) timeit "$B/t.p" python3 "$B/read.py" "$fbc" ;;
		jq) timeit "$B/t.p" bash -c 'for f in "$1"/*/catalog.json; do jq -c . "$f"; done' _ "$fbc" ;;
		esac
		read -r ta ra <"$B/t.a"
		read -r tp rp <"$B/t.p"
		echo "$ta $ra $tp $rp" >>"$B/pairs.$peer"
	done
	awk -v peer="$peer" '
	{ ta[NR]=$1; ra[NR]=$2; tp[NR]=$3; rp[NR]=$4; r[NR]=($3 > 0 ? $1/$3 : 0); m[NR]=($4 > 0 ? $2/$4 : 0) }
	function med(a, n,   i, j, t, b) { for (i = 1; i <= n; i++) b[i] = a[i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
		return (n % 2) ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2 }
	function mn(a, n,   i, x) { x = a[1]; for (i = 2; i <= n; i++) if (a[i] < x) x = a[i]; return x }
	function mx(a, n,   i, x) { x = a[1]; for (i = 2; i <= n; i++) if (a[i] > x) x = a[i]; return x }
	END {
		printf "airlock vs %s (%d interleaved pairs):\n", peer, NR
		printf "  airlock: median %.3f s, peak RSS median %d KiB\n", med(ta, NR), med(ra, NR)
		printf "  %-7s median %.3f s, peak RSS median %d KiB\n", peer ":", med(tp, NR), med(rp, NR)
		printf "  time ratio airlock/%s: median %.2f (range %.2f-%.2f)\n", peer, med(r, NR), mn(r, NR), mx(r, NR)
		printf "  RSS ratio airlock/%s:  median %.2f (range %.2f-%.2f)\n", peer, med(m, NR), mn(m, NR), mx(m, NR)
	}' "$B/pairs.$peer"
done
