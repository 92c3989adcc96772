#!/bin/bash
# run-all.sh: build with -Werror and run every unit and integration test, then the same under ASan+UBSan, then a short libFuzzer run of each fuzz target (clang). Options run one stage or one tier (docs/testing.md).
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)

usage() {
	cat <<'EOF'
usage: tests/run-all.sh [--stage NAME]... [--label LABEL] [--jobs N] [--test-jobs N]

Builds each stage's configuration once (build-release, build-asan, build-fuzz)
and runs its tests with ctest. Without options: all three stages, every
test; when the asan stage runs too, the release stage runs the unit suites,
the quick and timing tiers and the scripts labelled "unsanitized" (the
rest of the slow tier runs under ASan only).

  --stage NAME    release (-Werror, RelWithDebInfo), asan (ASan+UBSan, -O1) or
                  fuzz (clang, libFuzzer); repeat for several
  --label LABEL   only the tests with this ctest label: quick, slow, timing,
                  unit, integration, fuzz-replay, fuzz, style
  --jobs N        build jobs (default: AL_JOBS or 2)
  --test-jobs N   tests run at once, timing tier apart (default:
                  AL_TEST_JOBS or 3: most tests wait on servers and disks,
                  not on the CPU)

The timing tier (tests that measure real time) runs one test at a time,
and only in the release stage: never under the sanitizers. With several
stages it runs beside the others, from the end of the release build: its
bounds allow for a loaded machine, and its tests mostly wait.
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

fail=0
started=$(date +%s)
for s in build-release build-asan build-fuzz; do rm -f "$src/$s/summary.line" "$src/$s/timing.line"; done

# ctest_run DIR LOG ARGS...: ctest's own status; its output goes to LOG and,
# unless QUIET is set, to the terminal.
ctest_run() {
	local dir=$1 log=$2
	shift 2
	if [ -n "${QUIET:-}" ]; then
		ctest --test-dir "$dir" --output-on-failure --timeout 900 "$@" >>"$log" 2>&1
	else
		ctest --test-dir "$dir" --output-on-failure --timeout 900 "$@" 2>&1 | tee -a "$log"
		return "${PIPESTATUS[0]}"
	fi
}

stage_flags() { # the configuration of stage $1, one flag per line
	case $1 in
	# -g1 (line tables: every backtrace keeps its files and lines) instead
	# of -g in the three stages: about a quarter of each build's compile
	# time (docs/testing.md, "The suite's time").
	release) printf '%s\n' -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" ;;
	# -O1: the level ASan's documentation recommends (the same checks, less
	# CPU per test; measured: 667 s of ctest at -O1 against 690 s at -O0).
	asan) printf '%s\n' -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g1 -O1" -DAL_SANITIZE=ON ;;
	# clang + libFuzzer + ASan/UBSan, only the library, the program and
	# tests/fuzz; each target runs AL_FUZZ_SECONDS (default 6) on a copy of
	# its corpus.
	fuzz) printf '%s\n' -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-gline-tables-only -DAL_SANITIZE=ON -DAL_FUZZ=ON \
		-DAL_BUILD_TESTS=OFF "-DAL_FUZZ_SECONDS=${AL_FUZZ_SECONDS:-6}" ;;
	esac
}

# stage_build NAME: configure and build build-NAME with -Werror; its time
# goes to build-NAME/build.secs.
stage_build() {
	local name=$1 dir="$src/build-$1" t0 flags=()
	mapfile -t flags < <(stage_flags "$name")
	mkdir -p "$dir"
	rm -f "$dir/ctest.log" "$dir/timing.log" "$dir/build.secs" # a failed build must not be counted with an earlier run's results
	t0=$(date +%s)
	echo "=== $name: configure and build (${flags[*]})"
	if ! cmake -S "$src" -B "$dir" -DAL_WERROR=ON "${flags[@]}" >"$dir/configure.log" 2>&1; then
		cat "$dir/configure.log"
		echo "$name: configure failed" >"$dir/summary.line"
		return 1
	fi
	if ! cmake --build "$dir" -j"$jobs" >"$dir/build.log" 2>&1; then
		grep -E -A5 "error|warning" "$dir/build.log" | head -100
		echo "build $name failed (log: $dir/build.log)"
		echo "$name: build failed (log: $dir/build.log)" >"$dir/summary.line"
		return 1
	fi
	echo $(($(date +%s) - t0)) >"$dir/build.secs"
	echo "=== $name: built in $(cat "$dir/build.secs") s"
}

# stage_tests NAME PART: run stage NAME's tests; PART "main" runs all but
# the timing tier, "timing" only that tier (one test at a time), "all" both.
# --label narrows either part. The timing part alone keeps its own files
# (timing.log, timing.secs, timing.line), so that it can run beside "main".
stage_tests() {
	local name=$1 part=$2 dir="$src/build-$1" t0 rc=0 log n secs pre=
	[ -f "$dir/build.secs" ] || return 1
	[ "$part" = timing ] && pre=timing.
	log="$dir/${pre:-ctest.}log"
	[ -f "$log" ] || : >"$log"
	t0=$(date +%s)
	if [ "$part" != timing ] && [ "$label" != timing ]; then
		if [ -n "$label" ]; then
			echo "=== $name: tests labelled $label"
			ctest_run "$dir" "$log" -j"$test_jobs" -L "$label" -LE timing || rc=$?
		elif [ "$name" = release ] && [ -n "${release_subset:-}" ]; then
			echo "=== $name: the unit suites, the quick tier and the scripts with checks only outside the sanitizers (the asan stage runs every test)"
			ctest_run "$dir" "$log" -j"$test_jobs" -L 'quick|unit|unsanitized' -LE timing || rc=$?
		else
			echo "=== $name: tests"
			ctest_run "$dir" "$log" -j"$test_jobs" -LE timing || rc=$?
		fi
	fi
	if [ "$part" != main ] && [ "$name" = release ]; then
		n=$(ctest --test-dir "$dir" -N -L timing ${label:+-L "$label"} | grep -c 'Test *#' || true)
		if [ "$n" -gt 0 ]; then
			echo "=== $name: the timing tier, one test at a time"
			ctest_run "$dir" "$log" -j1 -L timing ${label:+-L "$label"} || rc=$?
		fi
	fi
	secs=$(($(date +%s) - t0 + $(cat "$dir/${pre:-tests.}secs" 2>/dev/null || echo 0)))
	echo "$secs" >"$dir/${pre:-tests.}secs"
	if [ -n "$pre" ]; then
		echo "$name timing tier: $(grep -E 'tests passed|tests failed' "$log" | tr '\n' ' ')(tests $secs s)" >"$dir/timing.line"
	else
		echo "$name: $(grep -E 'tests passed|tests failed' "$log" | tr '\n' ' ')(build $(cat "$dir/build.secs") s, tests $secs s)" >"$dir/summary.line"
	fi
	return "$rc"
}

# Order: release, asan, fuzz. One stage runs alone. With several, each
# next build runs (at low priority) while the one before builds and runs
# its tests, since most tests wait on servers, disks and deadlines rather
# than on the CPU; the fuzz stage (its build and its time-boxed runs) runs
# beside the asan tests; the release timing tier runs beside the rest from
# the end of the release build (its bounds allow for a loaded machine).
order=()
for s in release asan fuzz; do
	for t in "${stages[@]}"; do [ "$t" = "$s" ] && { order+=("$s"); break; }; done
done
for s in "${order[@]}"; do rm -f "$src/build-$s/tests.secs" "$src/build-$s/timing.secs"; done
case $(printf '%s ' "${order[@]}") in
*asan* | *fuzz*)
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
	;;
esac

# With the asan stage in the run, the release stage runs the unit suites,
# the quick tier and the scripts with checks that run only outside the
# sanitizers (label "unsanitized"); the slow tier's other scripts run under
# ASan alone, where each test runs anyway (docs/testing.md, "Stages").
release_subset=
case " ${order[*]} " in
*" release "*) case " ${order[*]} " in *" asan "*) [ -n "$label" ] || release_subset=1 ;; esac ;;
esac

# The background stages run these functions in a child shell.
export -f stage_flags stage_build stage_tests ctest_run
export src jobs test_jobs label release_subset

if [ ${#order[@]} -eq 1 ]; then
	stage_build "${order[0]}" && stage_tests "${order[0]}" all || fail=1
else
	fuzz_pid= timing_pid= first_pid=
	second=${order[1]}
	if [ "$second" != fuzz ]; then
		mkdir -p "$src/build-$second"
		echo "=== $second: building beside the ${order[0]} build and tests (log: build-$second/build.log)"
		nice -n 10 bash -c 'stage_build "$1"' _ "$second" >"$src/build-$second/stage.log" 2>&1 &
		first_pid=$!
	fi
	stage_build "${order[0]}" || fail=1
	if [ "${order[0]}" = release ] && [ -f "$src/build-release/build.secs" ] &&
		{ [ -z "$label" ] || [ "$label" = timing ]; }; then
		echo "=== release: the timing tier beside the rest (log: build-release/timing.log)"
		QUIET=1 bash -c 'stage_tests release timing' >"$src/build-release/timing.stage.log" 2>&1 &
		timing_pid=$!
	fi
	for i in "${!order[@]}"; do
		cur=${order[$i]} next=${order[$((i + 1))]:-} build_pid=
		[ -z "$next" ] || mkdir -p "$src/build-$next"
		if [ "$i" = 0 ] && [ -n "$first_pid" ]; then
			build_pid=$first_pid
		elif [ "$next" = fuzz ]; then
			echo "=== fuzz: build and runs beside the $cur tests (log: build-fuzz/stage.log)"
			nice -n 10 env QUIET=1 bash -c 'stage_build fuzz && stage_tests fuzz all' >"$src/build-fuzz/stage.log" 2>&1 &
			fuzz_pid=$!
		elif [ -n "$next" ]; then
			echo "=== $next: building beside the $cur tests (log: build-$next/build.log)"
			nice -n 10 bash -c 'stage_build "$1"' _ "$next" >"$src/build-$next/stage.log" 2>&1 &
			build_pid=$!
		fi
		if [ "$cur" != fuzz ] || [ -z "$fuzz_pid" ]; then
			stage_tests "$cur" main || fail=1
		fi
		if [ -n "$build_pid" ]; then
			wait "$build_pid" || { fail=1; cat "$src/build-$next/stage.log"; }
		fi
		[ "$next" = fuzz ] && break
	done
	if [ -n "$fuzz_pid" ]; then
		wait "$fuzz_pid" || { fail=1; tail -n 200 "$src/build-fuzz/stage.log"; cat "$src/build-fuzz/ctest.log" 2>/dev/null | tail -n 200; }
	fi
	if [ -n "$timing_pid" ]; then
		wait "$timing_pid" || { fail=1; tail -n 200 "$src/build-release/timing.log" 2>/dev/null; }
	fi
fi

echo "=== summary ($(($(date +%s) - started)) s)"
for s in "${order[@]}"; do
	cat "$src/build-$s/summary.line" 2>/dev/null || echo "$s: did not run"
	[ ! -f "$src/build-$s/timing.line" ] || cat "$src/build-$s/timing.line"
done
passed=0; failed=0; skipped=0
for s in "${order[@]}"; do
	for lg in "build-$s/ctest.log" "build-$s/timing.log"; do
		[ -f "$lg" ] || continue
		# one line per ctest run in the log: "N tests failed out of M"
		while read -r f n; do
			failed=$((failed + f)); passed=$((passed + n - f))
		done < <(grep -Eo '[0-9]+ tests failed out of [0-9]+' "$lg" | awk '{print $1, $NF}')
		# ctest counts a skipped test (exit 77) as not failed: count it apart.
		sk=$(grep -Ec '\(Skipped\)$' "$lg" || true)
		skipped=$((skipped + sk)); passed=$((passed - sk))
	done
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$fail" -eq 0 ] && [ "$failed" -eq 0 ]
