#!/usr/bin/env bash
# pack_vs_tar.sh: benchmark: airlock pack / unpack against tar -cf (+ sha256sum) and tar -xf on the same store, as ratios.
#
# usage: tests/bench/pack_vs_tar.sh [STORE]
#   STORE   an existing store or OCI layout; default: a ~1 GB synthetic release
#           made with tests/tools/mkrelease.py (--components 150 --layer-size
#           6000000 --base-size 50000000 --gzip-level 1) in a scratch directory.
# Environment: AIRLOCK (the binary; default $AL_BUILD_DIR/airlock, build it
# with -DCMAKE_BUILD_TYPE=RelWithDebInfo, not the sanitizer build),
# BENCH_DIR (scratch directory, default a mktemp under /tmp; removed at exit
# unless BENCH_KEEP=1). Not run by ctest. Needs about 5x the store's size
# free in BENCH_DIR.
#
# Every run is made on a warm page cache (the store is read once first), in
# the same session, on the same file system. airlock fsyncs each volume and
# each imported blob; tar does not, so the table also shows tar followed by
# sync(1) for comparison.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AL_BUILD_DIR=${AL_BUILD_DIR:-$here/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
B=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench.XXXXXX")}
mkdir -p "$B"
cleanup() { [ "${BENCH_KEEP:-0}" = 1 ] && echo "kept $B" || rm -rf "$B"; }
trap cleanup EXIT

store=${1:-}
if [ -z "$store" ]; then
	store=$B/store
	echo "making a synthetic release store in $store ..."
	python3 "$here/tests/tools/mkrelease.py" --out "$store" --components 150 \
		--layer-size 6000000 --base-size 50000000 --gzip-level 1 >/dev/null
fi
[ -x "$AIRLOCK" ] || { echo "AIRLOCK='$AIRLOCK' is not executable" >&2; exit 2; }

# the files pack carries, relative to the store
(cd "$store" && { find blobs/sha256 -type f; ls signatures/*/* airlock/releases.json 2>/dev/null || true; echo index.json; } | LC_ALL=C sort) >"$B/files"
bytes=$(cd "$store" && xargs -a "$B/files" stat -c %s | awk '{s+=$1} END {print s}')
nfiles=$(wc -l <"$B/files")
echo "store: $store: $nfiles files, $bytes bytes"
(cd "$store" && xargs -a "$B/files" cat >/dev/null)   # warm the cache

# run NAME PREP CMD...: run PREP (untimed: remove the last run's output,
# then sync so one run's write-back does not land on the next), then time
# CMD; the best of $REPEAT runs goes into t_NAME (s) and r_NAME (peak KiB).
REPEAT=${REPEAT:-3}
run() {
	local name=$1 prep=$2 i best="" rss=0 secs r
	shift 2
	for ((i = 0; i < REPEAT; i++)); do
		bash -c "$prep"
		sync
		/usr/bin/time -f '%e %M' -o "$B/time.$name" "$@" >"$B/out.$name" 2>"$B/err.$name" || {
			echo "$name failed:" >&2
			cat "$B/err.$name" >&2
			exit 1
		}
		read -r secs r <"$B/time.$name"
		if [ -z "$best" ] || awk -v a="$secs" -v b="$best" 'BEGIN {exit !(a < b)}'; then
			best=$secs
		fi
		[ "$r" -gt "$rss" ] && rss=$r
	done
	eval "t_$name=$best r_$name=$rss"
	printf '  %-22s %8.2f s  %7.1f MB/s  peak RSS %6d KiB\n' "$name" "$best" \
		"$(awk -v b="$bytes" -v s="$best" 'BEGIN {print (s > 0 ? b / s / 1e6 : 0)}')" "$rss"
}

echo "runs (best of $REPEAT):"
run tar_cf "rm -f '$B/plain.tar'" bash -c 'cd "$1" && tar -cf "$2/plain.tar" -T "$3"' _ "$store" "$B" "$B/files"
run tar_cf_sync "rm -f '$B/plain.tar'" bash -c 'cd "$1" && tar -cf "$2/plain.tar" -T "$3" && sync "$2/plain.tar"' _ "$store" "$B" "$B/files"
run sha256sum ":" bash -c 'cd "$1" && xargs -a "$2" sha256sum >/dev/null' _ "$store" "$B/files"
run airlock_pack "rm -rf '$B/pack' '$store'/airlock/packs/*" "$AIRLOCK" pack -q --store "$store" -o "$B/pack"
run tar_xf "rm -rf '$B/x'; mkdir -p '$B/x'" tar -xf "$B/plain.tar" -C "$B/x"
run tar_xf_sync "rm -rf '$B/x'; mkdir -p '$B/x'" bash -c 'tar -xf "$1/plain.tar" -C "$1/x" && sync -f "$1/x"' _ "$B"
run airlock_unpack "rm -rf '$B/far'" "$AIRLOCK" unpack -q "$B/pack" --store "$B/far"

# the far store must be what we packed
if [ "$(cd "$store" && find blobs/sha256 -type f | sort)" != "$(cd "$B/far" && find blobs/sha256 -type f | sort)" ]; then
	echo "unpacked store differs from the source" >&2
	exit 1
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }
echo "ratios (lower is better for airlock):"
echo "  pack / tar -cf                    $(ratio "$t_airlock_pack" "$t_tar_cf")   (target <= 1.00)"
echo "  pack / (tar -cf + sync)           $(ratio "$t_airlock_pack" "$t_tar_cf_sync")"
echo "  pack / (tar -cf + sha256sum)      $(ratio "$t_airlock_pack" "$(awk -v a="$t_tar_cf" -v b="$t_sha256sum" 'BEGIN {print a + b}')")"
echo "  unpack (verified) / tar -xf       $(ratio "$t_airlock_unpack" "$t_tar_xf")   (target <= 1.30)"
echo "  unpack (verified) / (tar -xf + sync) $(ratio "$t_airlock_unpack" "$t_tar_xf_sync")"
echo "  peak RSS: pack $r_airlock_pack KiB, unpack $r_airlock_unpack KiB (tar -cf $r_tar_cf KiB)"
