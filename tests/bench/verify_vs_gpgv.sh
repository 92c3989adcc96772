#!/usr/bin/env bash
# verify_vs_gpgv.sh: benchmark: 'airlock verify --signature' against 'gpgv' on the same N release signatures, as ratios.
#
# usage: tests/bench/verify_vs_gpgv.sh
# Environment:
#   AIRLOCK            the binary (default $AL_BUILD_DIR/airlock, AL_BUILD_DIR
#                      default build/; use a RelWithDebInfo build, not the
#                      sanitizer build)
#   BENCH_SIGNATURES   how many signatures (default 200)
#   BENCH_KEY          gpg key algorithm (default rsa4096, like Red Hat's
#                      release key; also rsa2048, ed25519, nistp256)
#   BENCH_REPEAT       interleaved rounds, each timing every mode once (default 3)
#   BENCH_KEEP=1       keep the work directory
#   AIRLOCK_BASE       optional: another airlock binary (say, the build before
#                      a change), timed as one more mode, 'base', in the same
#                      rounds; the report then gives airlock / base too
# Not run by ctest. Needs gpg and gpgv (Debian: gnupg, gpgv).
#
# In a temporary GNUPGHOME it makes one signing key, exports its public key
# as a binary keyring, and signs N simple-signing payloads ("atomic container
# signature", each for a different random digest) with 'gpg --sign' (a
# compressed message: one-pass signature, literal data, signature), the form
# of real release signatures. Then, in the same run and on a warm cache:
#   airlock: for each F: airlock verify --signature F --digest D --keyring K
#   gpgv:    for each F: gpgv --keyring K F
# Each is one process per signature, as a script checking signatures one by
# one would run them; both must accept every signature (the script checks
# the exit codes, and that airlock refuses a wrong digest). It prints the
# ratio airlock / gpgv as the median of BENCH_REPEAT interleaved rounds with
# its range (tests/bench/lib.sh), peak RSS, and what a process that
# does nothing costs (/bin/true in the same loop) and what starting airlock
# costs ('airlock help verify': load the libraries, print) and what loading
# libcrypto alone costs (a C program linked with -lcrypto that returns, built
# with cc when there is one) for scale. It also times
# one 'airlock verify --store' process verifying all N signatures of a
# synthetic store of N releases (the cost per signature without process
# start-up; gpgv has no such mode). With valgrind installed it ends with the
# instruction counts of one process of each (callgrind), which the load of a
# shared machine does not move; then the page faults of one process of each
# (GNU time) and the cost of one page fault on this machine.
set -euo pipefail
set -a # the timed run_* functions run in a child shell: they see exported variables

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AL_BUILD_DIR=${AL_BUILD_DIR:-$here/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
N=${BENCH_SIGNATURES:-200}
KEYALGO=${BENCH_KEY:-rsa4096}
REPEAT=${BENCH_REPEAT:-3}
AIRLOCK_BASE=${AIRLOCK_BASE:-}

[ -x "$AIRLOCK" ] || { echo "verify_vs_gpgv: AIRLOCK='$AIRLOCK' is not executable (build first or set AIRLOCK)" >&2; exit 2; }
for t in gpg gpgv; do
	command -v "$t" >/dev/null || { echo "verify_vs_gpgv: '$t' not found (apt-get install gnupg gpgv)" >&2; exit 2; }
done

W=$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench-verify.XXXXXX")
export GNUPGHOME=$W/gnupg
cleanup() {
	local rc=$?
	set +e
	gpgconf --kill all >/dev/null 2>&1
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $W" >&2; else rm -rf "$W"; fi
	exit $rc
}
trap cleanup EXIT
mkdir -m 700 "$GNUPGHOME" "$W/sigs"

echo "making a $KEYALGO key and $N signatures in $W ..." >&2
gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
	--quick-gen-key "airlock bench <bench@airlock.invalid>" "$KEYALGO" sign never 2>/dev/null
gpg --batch --export >"$W/keyring.gpg"

# digests: N random SHA-256 values, one per line
python3 -c 'import os, sys
for _ in range(int(sys.argv[1])):
    print("sha256:" + os.urandom(32).hex())' "$N" >"$W/digests"
i=0
while read -r d; do
	i=$((i + 1))
	printf '{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"%s"},"identity":{"docker-reference":"quay.io/openshift-release-dev/ocp-release:4.14.%d-x86_64"}},"optional":{"creator":"airlock bench","timestamp":%d}}' \
		"$d" "$i" "$(date +%s)" >"$W/payload"
	gpg --batch --quiet --yes --sign --output "$W/sigs/$i" "$W/payload"
done <"$W/digests"

# correctness first: every signature verifies with both tools, and airlock
# refuses a signature for another digest
i=0
while read -r d; do
	i=$((i + 1))
	"$AIRLOCK" verify -q --signature "$W/sigs/$i" --digest "$d" --keyring "$W/keyring.gpg" >/dev/null ||
		{ echo "airlock verify refused signature $i" >&2; exit 3; }
	gpgv --keyring "$W/keyring.gpg" "$W/sigs/$i" 2>/dev/null ||
		{ echo "gpgv refused signature $i" >&2; exit 3; }
done <"$W/digests"
if "$AIRLOCK" verify -q --signature "$W/sigs/1" --digest "sha256:$(printf '0%.0s' $(seq 64))" \
	--keyring "$W/keyring.gpg" >/dev/null 2>&1; then
	echo "airlock verify accepted a signature for another digest" >&2
	exit 3
fi

# the same signatures as a store of N releases, for one 'airlock verify
# --store' process that verifies them all (the per-signature cost without
# process start-up)
python3 - "$W" <<'PY'
import json, os, sys
w = sys.argv[1]
st = os.path.join(w, "store")
os.makedirs(os.path.join(st, "blobs", "sha256"))
os.makedirs(os.path.join(st, "airlock"))
with open(os.path.join(st, "oci-layout"), "w") as f:
    json.dump({"imageLayoutVersion": "1.0.0"}, f)
with open(os.path.join(st, "index.json"), "w") as f:
    json.dump({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []}, f)
rels = []
for i, d in enumerate(open(os.path.join(w, "digests")).read().split(), 1):
    sd = os.path.join(st, "signatures", "sha256=" + d[7:])
    os.makedirs(sd)
    os.link(os.path.join(w, "sigs", str(i)), os.path.join(sd, "signature-1"))
    rels.append({"version": "4.14.%d" % i, "digest": d, "components": 0,
                 "source": "quay.io/openshift-release-dev/ocp-release:4.14.%d-x86_64" % i})
with open(os.path.join(st, "airlock", "releases.json"), "w") as f:
    json.dump({"releases": rels}, f)
PY
"$AIRLOCK" verify -q --store "$W/store" --keyring "$W/keyring.gpg" --identity-policy exact >/dev/null ||
	{ echo "airlock verify --store refused the store of $N releases" >&2; exit 3; }

# The floor of any program linked with libcrypto: a process that loads
# libcrypto.so.3 and returns at once (its relocations and symbol bindings are
# most of what airlock's start-up costs beyond /bin/true; docs/performance.md).
# Built here with the C compiler when there is one; the mode is left out when
# there is not.
modes_extra=
if [ -n "$AIRLOCK_BASE" ]; then
	[ -x "$AIRLOCK_BASE" ] || { echo "verify_vs_gpgv: AIRLOCK_BASE='$AIRLOCK_BASE' is not executable" >&2; exit 2; }
	"$AIRLOCK_BASE" verify -q --signature "$W/sigs/1" --digest "$(head -n 1 "$W/digests")" \
		--keyring "$W/keyring.gpg" >/dev/null || { echo "AIRLOCK_BASE refused signature 1" >&2; exit 3; }
	modes_extra=base
fi
if command -v cc >/dev/null && printf '#include <openssl/crypto.h>\nint main(void) { return OPENSSL_version_major() == 0; }\n' >"$W/floor.c" &&
	cc -O2 -o "$W/floor" "$W/floor.c" -lcrypto 2>/dev/null; then
	modes_extra="$modes_extra crypto"
fi

# The modes (tests/bench/lib.sh times each once per round, rotating the order).
# loop NAME: one pass over every signature with one process each.
loop() {
	local i=0 d
	while read -r d; do
		i=$((i + 1))
		case $1 in
		airlock) "$AIRLOCK" verify -q --signature "$W/sigs/$i" --digest "$d" --keyring "$W/keyring.gpg" >/dev/null ;;
		base) "$AIRLOCK_BASE" verify -q --signature "$W/sigs/$i" --digest "$d" --keyring "$W/keyring.gpg" >/dev/null ;;
		gpgv) gpgv --keyring "$W/keyring.gpg" "$W/sigs/$i" 2>/dev/null ;;
		true) /bin/true "$W/sigs/$i" ;;
		start) "$AIRLOCK" help verify >/dev/null ;;
		crypto) "$W/floor" "$W/sigs/$i" ;;
		esac
	done <"$W/digests"
}
run_airlock() { loop airlock; }
run_base() { loop base; }
run_gpgv() { loop gpgv; }
run_true() { loop true; }
run_start() { loop start; }
run_crypto() { loop crypto; }
# store: one process verifying all N releases of the store
run_store() {
	"$AIRLOCK" verify -q --store "$W/store" --keyring "$W/keyring.gpg" --identity-policy exact >/dev/null
}

. "$here/tests/bench/lib.sh"
bench_init "$W/bench"
bench_rounds "$REPEAT" airlock gpgv true start store $modes_extra

echo "signatures: $N, key $KEYALGO, one process per signature, $REPEAT interleaved rounds, load $(bench_load)"
bench_ratio "verify, one process per signature" airlock gpgv
bench_ratio "airlock start-up alone (help verify) vs gpgv verifying" start gpgv
bench_ratio "a process doing nothing (/bin/true) vs gpgv verifying" true gpgv
[ ! -x "$W/floor" ] || bench_ratio "a process only loading libcrypto.so vs gpgv verifying" crypto gpgv
if [ -n "$AIRLOCK_BASE" ]; then
	bench_ratio "AIRLOCK_BASE, one process per signature" base gpgv
	bench_ratio "this airlock vs AIRLOCK_BASE" airlock base
fi
bench_ratio "one 'verify --store' for all $N vs gpgv one by one" store gpgv
echo "peak RSS MiB: airlock $(bench_rss airlock), gpgv $(bench_rss gpgv)"

# Instruction counts of one process each (valgrind --tool=callgrind): a
# figure the load of a shared machine does not move, unlike the times.
irefs() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
		awk '/refs:/ {gsub(",", "", $NF); printf "%.2f", $NF / 1e6}'
}
if command -v valgrind >/dev/null; then
	d1=$(head -n 1 "$W/digests")
	line="instructions, one signature (callgrind, millions): airlock $(irefs "$AIRLOCK" verify -q --signature "$W/sigs/1" --digest "$d1" --keyring "$W/keyring.gpg")"
	line="$line, gpgv $(irefs gpgv --keyring "$W/keyring.gpg" "$W/sigs/1")"
	[ -z "$AIRLOCK_BASE" ] || line="$line, AIRLOCK_BASE $(irefs "$AIRLOCK_BASE" verify -q --signature "$W/sigs/1" --digest "$d1" --keyring "$W/keyring.gpg")"
	[ ! -x "$W/floor" ] || line="$line, libcrypto.so alone $(irefs "$W/floor")"
	echo "$line"
fi

# Page faults of one process each (GNU time's %R: minor faults), the other
# figure the load does not move, and what one costs on this machine (a
# program touching 20,000 fresh pages): where a fault is dear (a
# paravirtualised guest: about 12 us, against well under 1 us on bare
# metal), the pages a process touches decide its time more than its
# instructions.
minflt() {
	/usr/bin/time -f '%R' -o "$W/minflt" "$@" >/dev/null 2>&1 || true
	tail -n 1 "$W/minflt"
}
d1=$(head -n 1 "$W/digests")
line="page faults, one signature: airlock $(minflt "$AIRLOCK" verify -q --signature "$W/sigs/1" --digest "$d1" --keyring "$W/keyring.gpg")"
line="$line, gpgv $(minflt gpgv --keyring "$W/keyring.gpg" "$W/sigs/1")"
[ -z "$AIRLOCK_BASE" ] || line="$line, AIRLOCK_BASE $(minflt "$AIRLOCK_BASE" verify -q --signature "$W/sigs/1" --digest "$d1" --keyring "$W/keyring.gpg")"
[ ! -x "$W/floor" ] || line="$line, libcrypto.so alone $(minflt "$W/floor")"
line="$line, /bin/true $(minflt /bin/true)"
echo "$line"
if command -v cc >/dev/null && cat >"$W/pf.c" <<'C' && cc -O2 -o "$W/pf" "$W/pf.c" 2>/dev/null; then
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
int main(void)
{
	enum { N = 20000 };
	struct timespec a, b;
	char *p = mmap(NULL, (size_t)N * 4096, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (size_t i = 0; i < N; i++)
		p[i * 4096] = 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / N);
	return 0;
}
C
	echo "one page fault on this machine (20,000 fresh pages touched): $("$W/pf") us"
fi
