#!/usr/bin/env bash
# test_fault_tcp.sh: tcpfault.py between airlock and the registry, a signature store and the kube test server (reset, stall, drip, truncate, wrong Content-Length, bit flip, 5xx bursts).
# al-tier: timing
#
# Every scenario must end in one of two ways: success with a clean
# `airlock check` and exactly the digests of an undisturbed run, or a clear
# error (exit 3 or 1, "airlock: error:") within a time bound, leaving a store
# that `airlock check` finds clean and that a rerun without faults completes.
# Never a corrupt blob or signature accepted, never an update Completed when a
# task did not apply.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock

seed=${AL_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "seed: $seed (set AL_TEST_SEED=$seed to repeat)"

# tf_start NAME UPSTREAM: start tcpfault.py with rules file $T/NAME.rules;
# sets TF_ADDR, TF_PID.
tf_start() {
	local name=$1 upstream=$2 pf=$T/$1.port i
	: >"$T/$name.rules"
	python3 "$AL_TOOLS/tcpfault.py" --upstream "$upstream" --port-file "$pf" \
		--rules "$T/$name.rules" --stats-file "$T/$name.stats" --seed "$seed" -v \
		2>>"$T/tcpfault-$name.log" &
	TF_PID=$!
	AL_PIDS+=("$TF_PID")
	for i in $(seq 1 50); do
		if [ -s "$pf" ]; then
			TF_ADDR=127.0.0.1:$(cat "$pf")
			return 0
		fi
		sleep 0.1
	done
	al_fail "tcpfault.py starts in front of $upstream"
	al_finish
}

# tf_rules NAME RULE...: replace the schedule (read for each new connection).
tf_rules() {
	local name=$1
	shift
	printf '%s\n' "$@" >"$T/$name.rules.tmp"
	mv -f "$T/$name.rules.tmp" "$T/$name.rules"
}

# tf_injected NAME: faults injected so far by that proxy.
tf_injected() {
	python3 -c 'import json,sys
try:
    print(sum(json.load(open(sys.argv[1]))["injected"].values()))
except OSError:
    print(0)' "$T/$1.stats"
}

# ok_or_clear_error DESC BOUND_S: judge the last al_run (AL_RC, $T/err,
# ELAPSED); sets OUTCOME to ok or error.
ok_or_clear_error() {
	local desc=$1 bound=$2
	if [ "$AL_RC" = 0 ]; then
		OUTCOME=ok
		al_pass "$desc: succeeded (exit 0)"
	elif { [ "$AL_RC" = 3 ] || [ "$AL_RC" = 1 ]; } && grep -q '^airlock: error: ' "$T/err"; then
		OUTCOME=error
		al_pass "$desc: clear error (exit $AL_RC: $(grep -m1 '^airlock: error: ' "$T/err" | cut -c1-400))"
	else
		OUTCOME=error
		al_fail "$desc: neither success nor a clear error (exit $AL_RC)"
		cat "$T/err"
	fi
	al_check "$desc: ended within ${bound}s (took ${ELAPSED}s)" test "$ELAPSED" -le "$bound"
}

timed_run() {
	local start=$SECONDS
	al_run "$@"
	ELAPSED=$((SECONDS - start))
}

# ---------------------------------------------------------------- registry
release=quay.io/airlock-samples/release:4.14.1-x86_64
al_start_registry "$T/reg"
R=$REG_ADDR
python3 "$AL_TOOLS/mkrelease.py" --out "$T/release" --components 3 --layer-size 262144 \
	--base-size 131072 --seed "tcpfault" >/dev/null
al_check "synthetic release pushed to the registry" al_push_layout "$T/release" "$R"
tf_start reg "$R"
P=$TF_ADDR
echo "registry $R, tcpfault $P"

imageset() {
	cat <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $release
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: docker://$1/airlock-samples
YAML
}
imageset "$R" >"$T/direct.yaml"
imageset "$P" >"$T/proxied.yaml"

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/direct.yaml" \
	--store "$T/ref" --tls-verify=false
al_check "undisturbed mirror exits 0" test "$AL_RC" = 0
blobs_of() {
	(cd "$1/blobs/sha256" && ls | grep -E '^[0-9a-f]{64}$')
}

# store_is_ref DESC STORE: clean check, same index and blobs as the reference.
store_is_ref() {
	local desc=$1 s=$2
	al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$s"
	al_check "$desc: airlock check is clean" test "$AL_RC" = 0
	[ "$AL_RC" = 0 ] || cat "$T/check.out" "$T/check.err"
	al_check "$desc: same images and digests as the undisturbed run" al_same_index "$T/ref" "$s"
	al_check "$desc: same blobs as the undisturbed run" diff <(blobs_of "$T/ref") <(blobs_of "$s")
}

n=0
# mirror_scenario NAME TIMEOUT BOUND RULE...
mirror_scenario() {
	local name=$1 timeout=$2 bound=$3 before s
	shift 3
	n=$((n + 1))
	s=$T/m$n
	tf_rules reg "$@"
	before=$(tf_injected reg)
	timed_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/proxied.yaml" \
		--store "$s" --tls-verify=false --timeout "$timeout"
	tf_rules reg
	echo "mirror/$name: exit $AL_RC after ${ELAPSED}s"
	al_check "mirror/$name: the fault was injected" test "$(tf_injected reg)" -gt "$before"
	ok_or_clear_error "mirror/$name" "$bound"
	if [ "$OUTCOME" = ok ]; then
		store_is_ref "mirror/$name" "$s"
	else
		al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$s"
		al_check "mirror/$name: the failed store holds nothing corrupt" test "$AL_RC" = 0
		al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/proxied.yaml" \
			--store "$s" --tls-verify=false
		al_check "mirror/$name: a rerun without faults exits 0" test "$AL_RC" = 0
		store_is_ref "mirror/$name rerun" "$s"
	fi
	rm -rf "$s"
}

blob='^GET\s/v2/airlock-samples/\S*/blobs/sha256:'
mirror_scenario "reset mid-blob" 10s 60 "fault=reset match=$blob after=70000 times=3"
mirror_scenario "reset before any answer (x2)" 10s 60 "fault=reset times=2"
mirror_scenario "stall 3 s mid-blob" 10s 60 "fault=stall match=$blob after=50000 seconds=3 times=2"
mirror_scenario "stall forever mid-blob, --timeout 4s" 4s 60 \
	"fault=stall match=$blob after=100000 times=2"
mirror_scenario "slow drip (1 byte/ms, 3000 bytes)" 10s 60 \
	"fault=drip match=$blob after=2000 bytes=3000 ms=1 times=3"
mirror_scenario "truncated blob body" 10s 60 "fault=truncate match=$blob after=100000 times=3"
mirror_scenario "truncated manifest" 10s 60 "fault=truncate match=/manifests/ after=200 times=2"
mirror_scenario "Content-Length one short on blobs" 5s 60 "fault=badlen match=$blob delta=-1 times=2"
mirror_scenario "Content-Length too long on blobs" 4s 60 "fault=badlen match=$blob delta=+100 times=2"
mirror_scenario "Content-Length short on a manifest" 5s 60 \
	"fault=badlen match=GET.*/manifests/ delta=-3 times=1"
mirror_scenario "one flipped byte in a blob" 10s 60 "fault=flip match=$blob after=150000 times=1"
mirror_scenario "one flipped byte in a manifest" 10s 60 "fault=flip match=GET.*/manifests/sha256: after=10 times=1"
mirror_scenario "burst of 2 x 503" 10s 60 "fault=5xx status=503 times=2"
mirror_scenario "burst of 6 x 503" 10s 60 "fault=5xx status=503 times=6"
# A random schedule may draw no fault at all over a short run (one run in a
# hundred at p=0.3 over a dozen requests), and the scenario asserts that a
# fault was injected: the first request is always faulted, the rest at random.
mirror_scenario "random 500s (p=0.3)" 10s 90 "fault=5xx status=500 times=1" \
	"fault=5xx status=500 prob=0.3 times=-1"
mirror_scenario "flipped byte in every blob (forever)" 10s 60 "fault=flip match=$blob after=400 times=-1"

# ------------------------------------------------------------------- push
push_n=0
# push_scenario NAME BOUND RULE...: push the reference store through the proxy.
push_scenario() {
	local name=$1 bound=$2 before dst got want
	shift 2
	push_n=$((push_n + 1))
	dst=pushed$push_n
	tf_rules reg "$@"
	before=$(tf_injected reg)
	timed_run "$T/out" "$T/err" "$AIRLOCK" push --layout source --store "$T/ref" "docker://$P/$dst" \
		--tls-verify=false --timeout 10s
	tf_rules reg
	echo "push/$name: exit $AL_RC after ${ELAPSED}s"
	al_check "push/$name: the fault was injected" test "$(tf_injected reg)" -gt "$before"
	ok_or_clear_error "push/$name" "$bound"
	if [ "$OUTCOME" != ok ]; then
		al_run "$T/out" "$T/err" "$AIRLOCK" push --layout source --store "$T/ref" "docker://$P/$dst" --tls-verify=false
		al_check "push/$name: a rerun without faults exits 0" test "$AL_RC" = 0
	fi
	# What the registry holds, read back directly (not through the proxy).
	rm -rf "$T/back"
	imageset "$R/$dst" >"$T/back.yaml"
	al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/back.yaml" \
		--store "$T/back" --tls-verify=false
	al_check "push/$name: the pushed images mirror back" test "$AL_RC" = 0
	al_check "push/$name: the registry has the same digests as the store" al_same_index "$T/ref" "$T/back"
	got=$("${SKOPEO[@]}" inspect --raw --tls-verify=false "docker://$R/$dst/airlock-samples/release:4.14.1-x86_64" 2>/dev/null |
		sha256sum | cut -d' ' -f1)
	want=$(al_digest_of "$T/ref" "$release")
	al_check "push/$name: skopeo reads the release with its digest" test "sha256:$got" = "$want"
}

push_scenario "reset after the upload PUT was sent" 60 "fault=reset match=PUT.*/blobs/uploads/ times=2"
# The registry finished the upload; only the answer was lost (the retry finds
# the session gone and the blob there): no rerun needed.
al_check "push/reset after the upload PUT: recovered by itself" test "$OUTCOME" = ok
push_scenario "503 burst" 60 "fault=5xx status=503 times=3"
push_scenario "truncated answer to the upload POST" 60 "fault=truncate match=^POST after=20 times=2"
push_scenario "reset after the manifest PUT" 60 "fault=reset match=PUT.*/manifests/ times=1"
al_check "push/reset after the manifest PUT: recovered by itself" test "$OUTCOME" = ok

# -------------------------------------------------------- signature store
samples=$AL_SOURCE_DIR/samples
sdigest=sha256:c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
python3 "$AL_TOOLS/sigserver.py" --root "$samples/signatures" --port-file "$T/sigsrv.port" \
	2>>"$T/sigserver.log" &
AL_PIDS+=($!)
for i in $(seq 1 50); do [ -s "$T/sigsrv.port" ] && break; sleep 0.1; done
tf_start sig "127.0.0.1:$(cat "$T/sigsrv.port")"
SP=$TF_ADDR
cat >"$T/plain.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $release
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: oci:$samples/layout
YAML
sig_n=0
# sig_scenario NAME BOUND RULE...
sig_scenario() {
	local name=$1 bound=$2 before s
	shift 2
	sig_n=$((sig_n + 1))
	s=$T/sig$sig_n
	tf_rules sig "$@"
	before=$(tf_injected sig)
	timed_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/plain.yaml" --store "$s" \
		--keyring "$samples/keys/release.gpg" --signature-store "http://$SP/files"
	tf_rules sig
	echo "signatures/$name: exit $AL_RC after ${ELAPSED}s"
	al_check "signatures/$name: the fault was injected" test "$(tf_injected sig)" -gt "$before"
	ok_or_clear_error "signatures/$name" "$bound"
	if [ "$OUTCOME" = ok ]; then
		al_check "signatures/$name: the stored signature is the original" \
			cmp "$samples/signatures/sha256=${sdigest#sha256:}/signature-1" \
			"$s/signatures/sha256=${sdigest#sha256:}/signature-1"
		al_check "signatures/$name: releases.json says verified" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["releases"][0]["verified"] is True' "$s/airlock/releases.json"
	else
		al_check "signatures/$name: refused, the release is not in index.json" python3 -c '
import json, sys
names = [m.get("annotations", {}).get("org.opencontainers.image.ref.name") for m in json.load(open(sys.argv[1] + "/index.json"))["manifests"]]
assert sys.argv[2] not in names, names' "$s" "$release"
		al_check "signatures/$name: no signature stored" \
			test ! -e "$s/signatures/sha256=${sdigest#sha256:}/signature-1"
	fi
	al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$s"
	al_check "signatures/$name: airlock check is clean" test "$AL_RC" = 0
	rm -rf "$s"
}
sig_scenario "one reset" 60 "fault=reset match=signature-1 times=1"
sig_scenario "resets (x3)" 60 "fault=reset match=signature-1 times=3"
sig_scenario "one 503" 60 "fault=5xx status=503 times=1"
sig_scenario "truncated signature" 60 "fault=truncate match=signature-1 after=300 times=-1"
sig_scenario "flipped signature byte" 60 "fault=flip match=signature-1 after=400 times=-1"
sig_scenario "Content-Length short" 60 "fault=badlen match=signature-1 delta=-7 times=-1"
sig_scenario "stalled forever" 60 "fault=stall match=signature-1 after=150 times=-1"

# ------------------------------------------------------------ kube server
S=$T/ustore
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }
D=$(up_digest "$S" 4.14.1)
up_sign "$S" "$D" || { al_fail "sign the sample release with gpg"; al_finish; }
up_plan "$S" || { al_fail "dry-run plan"; al_finish; }
up_ks_start --co-delay 0.05
tf_start kube "${KS_URL#http://}"
sed "s#$KS_URL#http://$TF_ADDR#" "$T/kubeconfig" >"$T/kubeconfig.proxied"
NTASKS=$(up_py 'print(len(plan()))')
kube_n=0
# kube_scenario NAME BOUND RULE...: update from scratch through the proxy.
kube_scenario() {
	local name=$1 bound=$2 before st hist
	shift 2
	kube_n=$((kube_n + 1))
	up_ctl reset '{}' >/dev/null
	rm -f "$T/state.json"
	tf_rules kube "$@"
	before=$(tf_injected kube)
	timed_run "$T/out" "$T/err" "$AIRLOCK" update --store "$S" --to 4.14.1 \
		--kubeconfig "$T/kubeconfig.proxied" --operator-poll 100ms --keyring "$T/trusted.gpg" \
		--state "$T/state.json" --sync-timeout 15s
	tf_rules kube
	echo "update/$name: exit $AL_RC after ${ELAPSED}s"
	al_check "update/$name: the fault was injected" test "$(tf_injected kube)" -gt "$before"
	ok_or_clear_error "update/$name" "$bound"
	st=$(up_state "$T/state.json" 's["state"]' 2>/dev/null || echo none)
	hist=$(up_state "$T/state.json" '[h["state"] for h in s["history"]]' 2>/dev/null || echo none)
	if [ "$OUTCOME" = ok ]; then
		al_check "update/$name: every manifest is in the cluster" test "$(up_py 'print(missing())')" = "[]"
		al_check "update/$name: state Reconciling, history Completed" \
			test "$st $hist" = "Reconciling ['Completed']"
	else
		al_check "update/$name: failed run is not Completed/Reconciling (state $st, history $hist)" \
			bash -c 'case "$1" in *Reconciling*|*Completed*) exit 1;; esac' _ "$st $hist"
		al_run "$T/out" "$T/err" "$AIRLOCK" update --store "$S" --to 4.14.1 \
			--kubeconfig "$T/kubeconfig" --operator-poll 100ms --keyring "$T/trusted.gpg" \
			--state "$T/state.json"
		al_check "update/$name: a rerun without faults completes" \
			grep -q "completed: applied $NTASKS of $NTASKS" "$T/out"
	fi
	al_check "update/$name: the cluster object agrees with the state file" \
		test "$(up_py 'print(get("/apis/airlock.io/v1alpha1/clusterupdates/cluster")["status"]["state"])' 2>/dev/null)" = \
		"$(up_state "$T/state.json" 's["state"]' 2>/dev/null)"
}
kube_scenario "resets on PATCH" 60 "fault=reset match=^PATCH times=4"
kube_scenario "503 burst" 60 "fault=5xx status=503 times=5"
kube_scenario "truncated answers" 60 "fault=truncate match=^PATCH after=40 times=3"
kube_scenario "Content-Length short on GETs" 60 "fault=badlen match=^GET delta=-2 times=3"
kube_scenario "random resets (p=0.2)" 60 "fault=reset times=1" "fault=reset prob=0.2 times=-1"
kube_scenario "every PATCH refused with 500 (forever)" 60 "fault=5xx status=500 match=^PATCH times=-1"

al_finish
