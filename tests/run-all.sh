#!/bin/bash
# run-all.sh: build with -Werror and run every unit and integration test, then the same under ASan+UBSan, then a short libFuzzer run of each fuzz target (clang). Options run one stage or one tier (docs/testing.md).
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)

usage() {
	cat <<'EOF'
usage: tests/run-all.sh [--stage NAME]... [--label LABEL] [--jobs N] [--test-jobs N]

Builds each stage's configuration once (build-release, build-asan, build-fuzz)
and runs its tests with ctest. Without options: all three stages, every tier.

  --stage NAME    release (-Werror, RelWithDebInfo), asan (ASan+UBSan, -O1) or
                  fuzz (clang, libFuzzer); repeat for several
  --label LABEL   only the tests with this ctest label: quick, slow, timing,
                  unit, integration, fuzz-replay, fuzz, style
  --jobs N        build jobs (default: AL_JOBS or 2)
  --test-jobs N   tests run at once, timing tier apart (default:
                  AL_TEST_JOBS or 3: most tests wait on servers and disks,
                  not on the CPU)

The timing tier (tests that measure real time) runs after the others, one
test at a time, and only in the release stage: never under the sanitizers.
EOF
}

jobs=${AL_JOBS:-2}
test_jobs=${AL_TEST_JOBS:-3}
label=
stages=()
while [ $# -gt 0 ]; do
	case $1 in
	--stage) stages+=("${2:?--stage needs a name}"); shift 2 ;;
	--label) label=${2:?--label needs a label}; shift 2 ;;
	--jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
	--test-jobs) test_jobs=${2:?--test-jobs needs a number}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "run-all.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
[ ${#stages[@]} -gt 0 ] || stages=(release asan fuzz)
for s in "${stages[@]}"; do
	case $s in
	release | asan | fuzz) ;;
	*) echo "run-all.sh: unknown stage '$s' (release, asan or fuzz)" >&2; exit 2 ;;
	esac
done

summary=()
fail=0
started=$(date +%s)

# ctest_run DIR LOG ARGS...: ctest's own status; its output goes to LOG and
# the terminal.
ctest_run() {
	local dir=$1 log=$2
	shift 2
	ctest --test-dir "$dir" --output-on-failure --timeout 900 "$@" 2>&1 | tee -a "$log"
	return "${PIPESTATUS[0]}"
}

run_build() { # name, cmake flags...
	local name=$1; shift
	local dir="$src/build-$name" t0 rc=0
	mkdir -p "$dir"
	rm -f "$dir/ctest.log" # a failed build must not be counted with an earlier run's results
	t0=$(date +%s)
	echo "=== $name: configure and build ($*)"
	if ! cmake -S "$src" -B "$dir" -DAL_WERROR=ON "$@" >"$dir/configure.log" 2>&1; then
		cat "$dir/configure.log"; return 1
	fi
	if ! cmake --build "$dir" -j"$jobs" >"$dir/build.log" 2>&1; then
		grep -E -A5 "error|warning" "$dir/build.log" | head -100
		echo "build $name failed (log: $dir/build.log)"
		return 1
	fi
	echo "=== $name: built in $(($(date +%s) - t0)) s; tests"
	local log="$dir/ctest.log"
	: >"$log"
	if [ -n "$label" ]; then
		if [ "$label" = timing ]; then
			ctest_run "$dir" "$log" -j1 -L timing || rc=$?
		else
			ctest_run "$dir" "$log" -j"$test_jobs" -L "$label" -LE timing || rc=$?
			# the timing tests that also carry the label, apart and alone
			if [ "$(ctest --test-dir "$dir" -N -L "$label" -L timing | grep -c 'Test *#')" -gt 0 ]; then
				ctest_run "$dir" "$log" -j1 -L "$label" -L timing || rc=$?
			fi
		fi
	else
		ctest_run "$dir" "$log" -j"$test_jobs" -LE timing || rc=$?
		if [ "$(ctest --test-dir "$dir" -N -L timing | grep -c 'Test *#')" -gt 0 ]; then
			ctest_run "$dir" "$log" -j1 -L timing || rc=$?
		fi
	fi
	summary+=("$name: $(grep -E 'tests passed|tests failed' "$log" | tr '\n' ' ') ($(($(date +%s) - t0)) s with the build)")
	return "$rc"
}

for s in "${stages[@]}"; do
	case $s in
	release) run_build release -DCMAKE_BUILD_TYPE=RelWithDebInfo || fail=1 ;;
	asan)
		export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
		export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
		# -O1: the level ASan's documentation recommends (the same checks, less
		# CPU per test; measured: 667 s of ctest at -O1 against 690 s at -O0).
		run_build asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DAL_SANITIZE=ON || fail=1
		;;
	fuzz)
		# clang + libFuzzer + ASan/UBSan, only the library, the program and
		# tests/fuzz; each target runs AL_FUZZ_SECONDS (default 6) on a copy of
		# its corpus.
		export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
		export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
		run_build fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DAL_SANITIZE=ON -DAL_FUZZ=ON \
			-DAL_BUILD_TESTS=OFF -DAL_FUZZ_SECONDS="${AL_FUZZ_SECONDS:-6}" || fail=1
		;;
	esac
done

echo "=== summary ($(($(date +%s) - started)) s)"
for s in "${summary[@]}"; do echo "$s"; done
passed=0; failed=0; skipped=0
for s in "${stages[@]}"; do
	d=build-$s
	[ -f "$d/ctest.log" ] || continue
	# one line per ctest run in the log: "N tests failed out of M"
	while read -r f n; do
		failed=$((failed + f)); passed=$((passed + n - f))
	done < <(grep -Eo '[0-9]+ tests failed out of [0-9]+' "$d/ctest.log" | awk '{print $1, $NF}')
	# ctest counts a skipped test (exit 77) as not failed: count it apart.
	sk=$(grep -Ec '\(Skipped\)$' "$d/ctest.log" || true)
	skipped=$((skipped + sk)); passed=$((passed - sk))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$fail" -eq 0 ] && [ "$failed" -eq 0 ]
