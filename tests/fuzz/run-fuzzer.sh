#!/bin/bash
# run-fuzzer.sh: run one libFuzzer binary for a bounded time on a copy of its seed corpus (ctest's "fuzz" entries; usage: run-fuzzer.sh BINARY CORPUS-DIR WORK-DIR SECONDS).
set -uo pipefail
bin=$1 corpus=$2 work=$3 secs=$4
name=$(basename "$bin")
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
# libFuzzer adds new inputs to its first corpus directory: a copy, never the source tree
cp "$corpus"/* "$work/corpus/"
# the pack targets create a store per input and fsync: tmpfs makes them several times faster
if [ -z "${AL_FUZZ_TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	export AL_FUZZ_TMPDIR=/dev/shm
fi
# a smaller quarantine keeps the RSS well under -rss_limit_mb on long runs
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}:abort_on_error=0:quarantine_size_mb=64
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$bin" -max_total_time="$secs" -rss_limit_mb=512 -timeout=5 -max_len=262144 -print_final_stats=1 \
	-artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/fuzz.log" 2>&1
rc=$?
grep -E '^(#[0-9]+ +DONE|Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/fuzz.log" | tail -4
if [ "$rc" -ne 0 ]; then
	tail -60 "$work/fuzz.log"
	echo "$name: libFuzzer exited with $rc; reproducer(s):"
	ls -d "$work/artifacts/"*
	echo "replay one with: $bin FILE (or replay_${name#fuzz_} FILE); once fixed, commit it as $corpus/crash-<what>"
	exit 1
fi
echo "$name: no crash in ${secs}s ($(ls "$work/corpus" | wc -l) corpus inputs now, log $work/fuzz.log)"
