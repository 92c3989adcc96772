# lib.sh: shared harness for the integration scripts (temp dir, servers stopped by PID, checks, summary line).
#
# Source it first thing after `set -euo pipefail`:
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# Environment (set by ctest): AIRLOCK (the binary), AL_SOURCE_DIR, AL_BUILD_DIR.
# Gives:
#   $T                      a fresh temporary directory, removed at exit
#                           (kept when AL_TEST_KEEP=1)
#   al_check DESC CMD...    run CMD; count and print a pass or a failure
#   al_check_fails DESC CODE CMD...  CMD must exit exactly CODE
#   al_pass DESC / al_fail DESC      record a result by hand
#   al_run OUT ERR CMD...   run CMD with stdout/stderr to files, print its
#                           status in $AL_RC (never aborts the script)
#   al_finish               print "N passed, N failed" and exit (1 if any failed)
#   al_start_registry DIR [--htpasswd F] [--tls CERT KEY]
#                           start docker-registry; sets REG_ADDR, REG_PID
#   al_start_proxy UPSTREAM [RULE...]  start faultproxy.py; sets PROXY_ADDR, PROXY_PID
#   al_stop PID             stop one server we started
#   al_push_layout LAYOUT ADDR   copy every image of an OCI layout into the
#                           registry at ADDR with skopeo: a name
#                           quay.io/NS/REPO[:tag|@digest] goes to ADDR/NS/REPO
#   al_index_digests DIR    print "NAME DIGEST" for every entry of DIR/index.json, sorted
#   al_digest_of DIR NAME   print the digest of NAME in DIR/index.json
#   al_retag DIR NAME LIKE  point tag NAME of store DIR at the image of tag LIKE
#   al_release_imageset FILE LOCATION  an ImageSetConfiguration of the sample
#                           release (quay.io/airlock-samples) read from LOCATION
#   al_same_index DIR1 DIR2 both index.json files name the same images and digests
#   al_require_airlock      record a failure and finish when AIRLOCK is not executable
#   al_sanitized            true when AIRLOCK is a sanitizer (ASan) build
#
# Under pipefail, `PRODUCER | grep -q` (or `| head`) fails at random when
# grep exits before PRODUCER has written everything (SIGPIPE, status 141):
# capture the output first, or test inside `bash -c` (no pipefail there).

AL_SOURCE_DIR=${AL_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
AL_BUILD_DIR=${AL_BUILD_DIR:-$AL_SOURCE_DIR/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
AL_TOOLS=$AL_SOURCE_DIR/tests/tools
export AL_SOURCE_DIR AL_BUILD_DIR AIRLOCK

AL_PASSED=0
AL_FAILED=0
AL_PIDS=()
AL_RC=0

# Tools must not read the invoking user's credentials or policy. (Never
# export REGISTRY_*: docker-registry reads those as configuration.)
T=$(mktemp -d "${TMPDIR:-/tmp}/airlock-it.XXXXXX")
export HOME=$T/home XDG_RUNTIME_DIR=$T/run
unset REGISTRY_AUTH_FILE DOCKER_CONFIG
# Nor the host's CAs and proxies: a test names the CAs and servers it uses
# (CMakeLists.txt unsets the same for every test it runs).
unset SSL_CERT_FILE SSL_CERT_DIR http_proxy https_proxy HTTPS_PROXY all_proxy ALL_PROXY \
	no_proxy NO_PROXY
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
# skopeo needs a signature policy; an accept-anything one scoped to this test.
printf '{"default":[{"type":"insecureAcceptAnything"}]}\n' >"$T/policy.json"
SKOPEO=(skopeo --policy "$T/policy.json")

# registry.sh (owned by the registry engineer) starts docker-registry.
. "$AL_TOOLS/registry.sh"

al_stop() {
	local pid=$1
	[ -n "$pid" ] || return 0
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

al__cleanup() {
	local rc=$? pid
	set +e
	for pid in "${AL_PIDS[@]}"; do
		al_stop "$pid"
	done
	if [ "${AL_TEST_KEEP:-0}" = 1 ]; then
		echo "kept $T"
	else
		rm -rf "$T"
	fi
	return $rc
}
trap al__cleanup EXIT
trap 'exit 130' INT TERM

al_pass() {
	AL_PASSED=$((AL_PASSED + 1))
	echo "ok: $1"
}

al_fail() {
	AL_FAILED=$((AL_FAILED + 1))
	echo "FAIL: $1"
}

al_check() {
	local desc=$1
	shift
	if "$@"; then
		al_pass "$desc"
	else
		al_fail "$desc (command: $*)"
	fi
}

al_check_fails() {
	local desc=$1 want=$2 rc=0
	shift 2
	"$@" || rc=$?
	if [ "$rc" = "$want" ]; then
		al_pass "$desc"
	else
		al_fail "$desc (exit $rc, wanted $want; command: $*)"
	fi
}

al_run() {
	local out=$1 err=$2
	shift 2
	AL_RC=0
	"$@" >"$out" 2>"$err" || AL_RC=$?
	return 0
}

# al_run_vclock OUT ERR CMD...: al_run with airlock on its virtual clock
# (AIRLOCK_TEST_CLOCK, docs/testing.md), one fresh timeline per call;
# AL_VMS is then the time airlock's clock moved during the run, in ms. A
# bound on a deadline or budget is checked on it, so that a loaded machine
# cannot make a run look slow (a hang moves the clock to its deadline).
al_run_vclock() {
	local out=$1 err=$2 start=1000000000000000
	shift 2
	echo "$start" >"$T/.vclock"
	al_run "$out" "$err" env AIRLOCK_TEST_CLOCK="virtual:$T/.vclock" "$@"
	AL_VMS=$(($(cat "$T/.vclock") - start))
}

# A part of a test that cannot run here: counted and printed, and the test
# then ends as skipped (77) unless something failed.
al_skip_part() {
	AL_SKIPPED=$((${AL_SKIPPED:-0} + 1))
	echo "SKIP: $1"
}

al_finish() {
	if [ "${AL_SKIPPED:-0}" -gt 0 ]; then
		echo "$AL_PASSED passed, $AL_FAILED failed, $AL_SKIPPED skipped"
		[ "$AL_FAILED" = 0 ] || exit 1
		exit 77
	fi
	echo "$AL_PASSED passed, $AL_FAILED failed"
	[ "$AL_FAILED" = 0 ] && [ "$AL_PASSED" -gt 0 ]
	exit $?
}

# A test that cannot run here (a tool is missing) says why and exits 77:
# ctest reports it as skipped (SKIP_RETURN_CODE), never as passed.
al_skip() {
	echo "SKIP: $1"
	echo "$AL_PASSED passed, $AL_FAILED failed, 1 skipped"
	exit 77
}

al_require_airlock() {
	if [ ! -x "$AIRLOCK" ]; then
		al_fail "AIRLOCK='$AIRLOCK' is not an executable"
		al_finish
	fi
}

al_sanitized() {
	local libs
	libs=$(ldd "$AIRLOCK" 2>/dev/null || true)
	case $libs in
	*libasan*) return 0 ;;
	*) return 1 ;;
	esac
}

al_start_registry() {
	if ! al_registry_start "$@"; then
		al_fail "docker-registry starts in $1"
		al_finish
	fi
	REG_ADDR=$AL_REGISTRY_ADDR
	REG_PID=$AL_REGISTRY_PID
	AL_PIDS+=("$REG_PID")
	# Forget it in registry.sh so a later al_registry_start keeps it running.
	AL_REGISTRY_PID=
}

al_start_proxy() {
	local upstream=$1 pf i rule args=()
	shift
	for rule in "$@"; do
		args+=(--fault "$rule")
	done
	pf=$(mktemp "$T/proxy-port.XXXXXX")
	rm -f "$pf"
	python3 "$AL_TOOLS/faultproxy.py" --upstream "$upstream" --port-file "$pf" \
		-v "${args[@]}" 2>>"$T/faultproxy.log" &
	PROXY_PID=$!
	AL_PIDS+=("$PROXY_PID")
	for i in $(seq 1 50); do
		if [ -s "$pf" ]; then
			PROXY_ADDR=127.0.0.1:$(cat "$pf")
			return 0
		fi
		sleep 0.1
	done
	al_fail "faultproxy starts"
	al_finish
}

# al_start_serve ARGS...: 'airlock serve --listen 127.0.0.1:0 ARGS' on a
# free port, stopped at exit; sets SRV_ADDR and SRV_PID (its stderr goes to
# $T/serve.err, shown when it does not start).
al_start_serve() {
	local out=$T/serve-$RANDOM.out i
	"$AIRLOCK" serve --listen 127.0.0.1:0 "$@" >"$out" 2>>"$T/serve.err" &
	SRV_PID=$!
	AL_PIDS+=("$SRV_PID")
	for i in $(seq 1 100); do
		if grep -q '^serving on ' "$out" 2>/dev/null; then
			SRV_ADDR=$(sed -n 's/^serving on //p' "$out")
			return 0
		fi
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
	done
	al_fail "airlock serve starts"
	cat "$T/serve.err"
	al_finish
}

# Names of every image of an OCI layout, one a line.
al_layout_names() {
	python3 - "$1" <<'EOF'
import json, sys
for m in json.load(open(sys.argv[1] + "/index.json"))["manifests"]:
    print(m.get("annotations", {}).get("org.opencontainers.image.ref.name", ""))
EOF
}

al_push_layout() {
	local layout=$1 addr=$2 name
	for name in $(al_layout_names "$layout"); do
		"${SKOPEO[@]}" copy -q --dest-tls-verify=false \
			"oci:$layout:$name" "docker://$addr/${name#*/}" || return 1
	done
}

al_index_digests() {
	python3 - "$1" <<'EOF'
import json, sys
rows = set()
try:
    idx = json.load(open(sys.argv[1] + "/index.json"))
except (OSError, ValueError) as e:
    sys.stderr.write("al_index_digests: %s\n" % e)
    sys.exit(1)
for m in idx["manifests"]:
    rows.add("%s %s" % (m.get("annotations", {}).get("org.opencontainers.image.ref.name", ""), m["digest"]))
print("\n".join(sorted(rows)))
EOF
}

al_digest_of() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
try:
    idx = json.load(open(sys.argv[1] + "/index.json"))
except (OSError, ValueError) as e:
    sys.stderr.write("al_digest_of: %s\n" % e)
    sys.exit(1)
for m in idx["manifests"]:
    if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == sys.argv[2]:
        print(m["digest"])
        break
else:
    sys.exit(1)
EOF
}

# True when DIR1 and DIR2 name the same images with the same digests (and
# at least one); prints both lists when they differ.
al_same_index() {
	local a b
	a=$(al_index_digests "$1") || return 1
	b=$(al_index_digests "$2") || return 1
	[ -n "$a" ] && [ "$a" = "$b" ] && return 0
	diff <(printf '%s\n' "$a") <(printf '%s\n' "$b") | sed 's/^/  /'
	return 1
}

# Point tag $2 of the store $1 at the descriptor of tag $3 (a retag, as a
# newer mirror would, or as a forger would).
al_retag() {
	python3 - "$1/index.json" "$2" "$3" <<'EOF'
import json, sys
path, name, like = sys.argv[1:]
idx = json.load(open(path))
key = "org.opencontainers.image.ref.name"
src = [m for m in idx["manifests"] if m.get("annotations", {}).get(key) == like][0]
for m in idx["manifests"]:
    if m.get("annotations", {}).get(key) == name:
        for k in ("mediaType", "digest", "size"):
            m[k] = src[k]
json.dump(idx, open(path, "w"), indent=1)
EOF
}

# al_release_imageset FILE LOCATION: an ImageSetConfiguration of the sample
# release, whose quay.io/airlock-samples images airlock.sources reads from
# LOCATION (oci:DIR or docker://HOST/airlock-samples), into FILE.
al_release_imageset() {
	cat >"$1" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-samples/release:4.14.1-x86_64
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: "$2"
YAML
}

# Last line of a file (the CLI's summary line).
al_last_line() {
	tail -n 1 "$1"
}
