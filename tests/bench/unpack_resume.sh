#!/usr/bin/env bash
# unpack_resume.sh: what a rerun of an interrupted unpack reads again: bytes read from the pack's volumes (strace, every read of a volume file summed) by an uninterrupted unpack and by the rerun after a kill -9 at about half of the import, against the volumes' size. Counted, not timed.
# Not run by ctest. See tests/bench/README.md.
#
# A synthetic release (tests/tools/mkrelease.py: BENCH_COMPONENTS, default
# 8, components with a BENCH_LAYER_SIZE, default 8 MB, layer each) is
# mirrored from a layout, packed signed into BENCH_VOLUME_SIZE (default
# 16M) volumes, and unpacked with --trust: once whole, and once killed -9
# when BENCH_KILL_AT percent (default 50) of its "unpack: entry ... read"
# progress lines arrived (read through a pipe), then rerun. Each run is
# traced with strace -f -y -e trace=read,pread64,readv,preadv (the byte
# counts of reads whose descriptor is a volume file of the pack are
# summed). Needs strace and python3.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AL_SOURCE_DIR=${AL_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
AL_BUILD_DIR=${AL_BUILD_DIR:-$AL_SOURCE_DIR/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
N=${BENCH_COMPONENTS:-8}
LAYER=${BENCH_LAYER_SIZE:-8000000}
VOL=${BENCH_VOLUME_SIZE:-16M}
AT=${BENCH_KILL_AT:-50}

[ -x "$AIRLOCK" ] || { echo "unpack_resume: AIRLOCK='$AIRLOCK' is not executable" >&2; exit 2; }
command -v strace >/dev/null || { echo "unpack_resume: strace missing (Debian package strace)" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/airlock-unpackbench.XXXXXX")
cleanup() { if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi; }
trap cleanup EXIT
log() { echo "bench: $*" >&2; }

python3 "$AL_SOURCE_DIR/tests/tools/mkrelease.py" --out "$W/layout" --prefix quay.io/airlock-big \
	--version 4.15.0 --components "$N" --layer-size "$LAYER" --base-size 1000000 --gzip-level 0 \
	--seed unpackbench >/dev/null
cat >"$W/is.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-big/release:4.15.0-x86_64
airlock:
  sources:
  - prefix: quay.io/airlock-big
    location: "oci:$W/layout"
YAML
"$AIRLOCK" mirror -q --allow-unsigned --config "$W/is.yaml" --store "$W/src" >/dev/null
"$AIRLOCK" keygen -o "$W/key" >/dev/null
"$AIRLOCK" pack -q --store "$W/src" -o "$W/p" --volume-size "$VOL" --sign "$W/key.key" >/dev/null
volbytes=$(find "$W/p" -type f -name 'airlock-*' -printf '%s\n' | awk '{s += $1} END {print s}')
nvol=$(find "$W/p" -type f -name 'airlock-*' | wc -l)

# volume_reads TRACE: the bytes read from files under the pack directory
volume_reads() {
	python3 - "$1" "$W/p/" <<'PY'
import re, sys
pat = re.compile(r'^(?:\[pid\s+\d+\]\s+|\d+\s+)?(?:read|pread64|readv|preadv)\(\d+<([^>]*)>.*\)\s+=\s+(\d+)')
total = 0
for line in open(sys.argv[1], errors="replace"):
    m = pat.match(line)
    if m and m.group(1).startswith(sys.argv[2]):
        total += int(m.group(2))
print(total)
PY
}
traced() {
	local trace=$1
	shift
	strace -f -y -qq -e trace=read,pread64,readv,preadv -e signal=none -o "$trace" "$@"
}

log "whole unpack"
traced "$W/whole.trace" "$AIRLOCK" unpack "$W/p" --store "$W/whole" --trust "$W/key.pub" >/dev/null
whole=$(volume_reads "$W/whole.trace")

# the killed run, traced too: killed after AT% of its progress lines
lines=$("$AIRLOCK" unpack "$W/p" --store "$W/count" --trust "$W/key.pub" -v 2>&1 >/dev/null |
	grep -cE 'unpack: entry .* read' || true)
n=$((lines * AT / 100))
[ "$n" -ge 1 ] || n=1
log "killing the import at progress line $n of $lines"
mkfifo "$W/fifo"
traced "$W/killed.trace" "$AIRLOCK" unpack "$W/p" --store "$W/far" --trust "$W/key.pub" -v 2>"$W/fifo" >/dev/null &
pid=$!
count=0
killed=no
while IFS= read -r line; do
	if [[ $line =~ unpack:\ entry\ .*\ read ]]; then
		count=$((count + 1))
		if [ "$count" -eq "$n" ]; then
			# the airlock process: the child of strace, the
			# child of the background shell
			st=$(pgrep -P "$pid" -x strace || true)
			child=
			[ -n "$st" ] && child=$(pgrep -P "$st" -x airlock || true)
			[ -n "$child" ] && kill -9 "$child" && killed=yes
		fi
	fi
done <"$W/fifo"
wait "$pid" 2>/dev/null || true
[ "$killed" = yes ] || { log "the import finished before the kill"; exit 3; }
before=$(volume_reads "$W/killed.trace")
traced "$W/rerun.trace" "$AIRLOCK" unpack "$W/p" --store "$W/far" --trust "$W/key.pub" >"$W/rerun.out"
rerun=$(volume_reads "$W/rerun.trace")
"$AIRLOCK" check -q --store "$W/far" >/dev/null || { log "the resumed store does not check clean"; exit 3; }

pct() { echo "scale=1; 100 * $1 / $2" | bc; }
echo "volumes: $nvol, $volbytes bytes (--volume-size $VOL, $N components of $LAYER bytes)"
echo "whole unpack read from the volumes: $whole bytes ($(pct "$whole" "$volbytes")% of the volumes)"
echo "killed at entry line $n of $lines, having read $before bytes ($(pct "$before" "$volbytes")%)"
echo "the rerun read: $rerun bytes ($(pct "$rerun" "$volbytes")% of the volumes; killed + rerun = $(pct $((before + rerun)) "$volbytes")%)"
echo "rerun: $(tail -n 1 "$W/rerun.out")"
