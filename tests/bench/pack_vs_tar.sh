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
# Every mode is timed once per round, in interleaved rounds whose order
# rotates (tests/bench/lib.sh), on a warm page cache (the store is read once
# first), on the same file system; the ratios are medians over the rounds
# with their range. airlock fsyncs each volume and
# each imported blob; tar does not, so the table also shows tar followed by
# sync(1) for comparison.
set -euo pipefail
set -a # the timed run_* functions run in a child shell: they see exported variables

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

# Inputs the read-side modes share, made once: a reference tar and a
# reference pack (the write-side modes write elsewhere each round).
(cd "$store" && tar -cf "$B/ref.tar" -T "$B/files")
"$AIRLOCK" pack -q --store "$store" -o "$B/ref-pack" >/dev/null
rm -f "$store"/airlock/packs/*

prep_tar_cf() { rm -f "$B/plain.tar"; }
run_tar_cf() { cd "$store" && tar -cf "$B/plain.tar" -T "$B/files"; }
prep_tar_cf_sync() { rm -f "$B/plain.tar"; }
run_tar_cf_sync() { cd "$store" && tar -cf "$B/plain.tar" -T "$B/files" && sync "$B/plain.tar"; }
run_sha256sum() { cd "$store" && xargs -a "$B/files" sha256sum >/dev/null; }
prep_airlock_pack() { rm -rf "$B/pack" "$store"/airlock/packs/*; }
run_airlock_pack() { "$AIRLOCK" pack -q --store "$store" -o "$B/pack"; }
prep_tar_xf() { rm -rf "$B/x"; mkdir -p "$B/x"; }
run_tar_xf() { tar -xf "$B/ref.tar" -C "$B/x"; }
prep_tar_xf_sync() { rm -rf "$B/x"; mkdir -p "$B/x"; }
run_tar_xf_sync() { tar -xf "$B/ref.tar" -C "$B/x" && sync -f "$B/x"; }
prep_airlock_unpack() { rm -rf "$B/far"; }
run_airlock_unpack() { "$AIRLOCK" unpack -q "$B/ref-pack" --store "$B/far"; }

. "$here/tests/bench/lib.sh"
ROUNDS=${BENCH_ROUNDS:-${REPEAT:-3}}
bench_init "$B/bench"
echo "load before: $(bench_load); $ROUNDS rounds"
bench_rounds "$ROUNDS" tar_cf tar_cf_sync sha256sum airlock_pack tar_xf tar_xf_sync airlock_unpack

# the far store must be what we packed
if [ "$(cd "$store" && find blobs/sha256 -type f | sort)" != "$(cd "$B/far" && find blobs/sha256 -type f | sort)" ]; then
	echo "unpacked store differs from the source" >&2
	exit 1
fi

echo "store: $nfiles files, $bytes bytes; $ROUNDS interleaved rounds, load $(bench_load)"
bench_ratio "pack / tar -cf (target <= 1.00)" airlock_pack tar_cf
bench_ratio "pack / (tar -cf + sync)" airlock_pack tar_cf_sync
bench_ratio "unpack, verified and fsynced / tar -xf (target <= 1.30)" airlock_unpack tar_xf
bench_ratio "unpack / (tar -xf + sync) (target <= 1.00)" airlock_unpack tar_xf_sync
echo "peak RSS MiB: pack $(bench_rss airlock_pack), unpack $(bench_rss airlock_unpack), tar -cf $(bench_rss tar_cf)"
