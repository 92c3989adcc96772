#!/usr/bin/env bash
# test_fault_kill.sh: kill -9 at seeded random points of mirror, pack, unpack and update; each followed by `airlock check`, a rerun and a comparison with an uninterrupted run.
# al-tier: slow
#
# Invariants after every kill: `airlock check` finds nothing corrupt or
# missing (zero corrupt blobs accepted: the index names only complete
# images); a rerun completes with exactly the digests of an uninterrupted
# run (zero lost images); a pack directory holds a manifest only for a
# finished pack; the updater's --state file and ClusterUpdate status never
# say Completed/Reconciling unless every task applied.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock

seed=${AL_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "seed: $seed (set AL_TEST_SEED=$seed to repeat)"
kills=${AL_FAULT_KILLS:-4}

# delays SEED_SALT REF_MS: $kills kill delays (seconds) spread over a run.
delays() {
	python3 -c '
import random, sys
rng = random.Random("%s-%s" % (sys.argv[1], sys.argv[2]))
ms, k = max(int(sys.argv[3]), 50), int(sys.argv[4])
for i in range(k):
    lo, hi = i / k, (i + 1) / k
    print("%.3f" % (ms * rng.uniform(0.05 + 0.9 * lo, 0.05 + 0.9 * hi) / 1000.0))
' "$seed" "$1" "$2" "$kills"
}

# kill_after SECONDS OUT CMD...: run CMD, kill -9 it after SECONDS; sets KILLED
# (yes when it was still running).
kill_after() {
	local d=$1 out=$2 pid
	shift 2
	[ -x "$1" ] || { al_fail "kill_after: '$1' is not a program"; return 1; }
	"$@" >"$out" 2>&1 &
	pid=$!
	sleep "$d"
	KILLED=no
	if kill -9 "$pid" 2>/dev/null; then KILLED=yes; fi
	wait "$pid" 2>/dev/null || true
}

ms_since() {
	echo $(( ($(date +%s%N) - $1) / 1000000 ))
}

blobs_of() {
	(cd "$1/blobs/sha256" && ls | grep -E '^[0-9a-f]{64}$')
}

# check_clean DESC STORE: airlock check exits 0 (nothing missing or corrupt).
check_clean() {
	al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$2"
	al_check "$1: airlock check is clean" test "$AL_RC" = 0
	[ "$AL_RC" = 0 ] || cat "$T/check.out" "$T/check.err"
}

same_as_ref() {
	al_check "$1: same images and digests as the uninterrupted run" al_same_index "$T/ref" "$2"
	al_check "$1: same blobs as the uninterrupted run" diff <(blobs_of "$T/ref") <(blobs_of "$2")
}

# ------------------------------------------------------------------ mirror
ncomp=${AL_FAULT_COMPONENTS:-8}
al_start_registry "$T/reg"
R=$REG_ADDR
python3 "$AL_TOOLS/mkrelease.py" --out "$T/release" --components "$ncomp" \
	--layer-size 2500000 --base-size 2000000 --gzip-level 1 --seed "kill-$seed" >/dev/null
al_check "synthetic release ($ncomp components, ~$((ncomp * 5 / 2 + 2)) MB) pushed" \
	al_push_layout "$T/release" "$R"
al_release_imageset "$T/imageset.yaml" "docker://$R/airlock-samples"
# Arrays, not functions: kill -9 must hit airlock itself, not a subshell.
MIRROR=("$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --tls-verify=false --store)
t0=$(date +%s%N)
al_run "$T/out" "$T/err" "${MIRROR[@]}" "$T/ref"
ref_ms=$(ms_since "$t0")
al_check "uninterrupted mirror exits 0 (${ref_ms} ms)" test "$AL_RC" = 0
al_check "uninterrupted mirror has every image of the release" al_same_index "$T/release" "$T/ref"

interrupted=0
k=0
for d in $(delays mirror "$ref_ms"); do
	k=$((k + 1))
	s=$T/mirror$k
	kill_after "$d" "$T/killed.out" "${MIRROR[@]}" "$s"
	grep -q '^mirrored ' "$T/killed.out" || interrupted=$((interrupted + 1))
	echo "mirror kill $k after ${d}s (still running: $KILLED)"
	if [ -e "$s/oci-layout" ]; then
		check_clean "mirror kill $k: before the rerun" "$s"
	fi
	al_run "$T/out" "$T/err" "${MIRROR[@]}" "$s"
	al_check "mirror kill $k (${d}s): rerun exits 0" test "$AL_RC" = 0
	[ "$AL_RC" = 0 ] || cat "$T/err"
	check_clean "mirror kill $k: after the rerun" "$s"
	same_as_ref "mirror kill $k" "$s"
	rm -rf "$s"
done
al_check "mirror: at least one run was cut short ($interrupted of $k)" test "$interrupted" -ge 1

# -------------------------------------------------------------------- pack
vs=1M
t0=$(date +%s%N)
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/ref" -o "$T/packref" --volume-size "$vs"
pack_ms=$(ms_since "$t0")
al_check "uninterrupted pack exits 0 (${pack_ms} ms, $(ls "$T/packref" | grep -c '\.tar$') volumes)" \
	test "$AL_RC" = 0

# unpack_into DESC PACKDIR STORE: unpack must exit 0, and the store equal the reference.
unpack_into() {
	al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$2" --store "$3"
	al_check "$1: unpack exits 0" test "$AL_RC" = 0
	[ "$AL_RC" = 0 ] || cat "$T/err"
	check_clean "$1" "$3"
	same_as_ref "$1" "$3"
}

k=0
for d in $(delays pack "$pack_ms"); do
	k=$((k + 1))
	o=$T/pack$k
	kill_after "$d" "$T/killed.out" "$AIRLOCK" pack --store "$T/ref" -o "$o" --volume-size "$vs"
	echo "pack kill $k after ${d}s (still running: $KILLED)"
	nman=$(ls "$o" 2>/dev/null | grep -cE '^airlock-[^/]*[0-9a-f]\.json$' || true)
	if [ "$nman" != 0 ]; then
		# The manifest is written last: a pack that has one is whole.
		unpack_into "pack kill $k: the finished pack" "$o" "$T/u$k"
		rm -rf "$T/u$k"
	else
		al_pass "pack kill $k: the interrupted pack left no manifest"
		al_check "pack kill $k: unpack refuses the manifest-less directory" \
			bash -c '! "$1" unpack --accept-untrusted "$2" --store "$3" >/dev/null 2>&1' _ "$AIRLOCK" "$o" "$T/u$k"
		rm -rf "$T/u$k"
	fi
	check_clean "pack kill $k: the source store" "$T/ref"
	rm -rf "$o"
	al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/ref" -o "$o" --volume-size "$vs"
	al_check "pack kill $k: a rerun exits 0" test "$AL_RC" = 0
	unpack_into "pack kill $k: the rerun's pack" "$o" "$T/u$k"
	rm -rf "$o" "$T/u$k"
done

# ------------------------------------------------------------------ unpack
rm -rf "$T/uref"
t0=$(date +%s%N)
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/packref" --store "$T/uref"
unpack_ms=$(ms_since "$t0")
al_check "uninterrupted unpack exits 0 (${unpack_ms} ms)" test "$AL_RC" = 0
rm -rf "$T/uref"
k=0
for d in $(delays unpack "$unpack_ms"); do
	k=$((k + 1))
	u=$T/unpack$k
	kill_after "$d" "$T/killed.out" "$AIRLOCK" unpack --accept-untrusted "$T/packref" --store "$u"
	echo "unpack kill $k after ${d}s (still running: $KILLED)"
	if [ -e "$u/oci-layout" ]; then
		check_clean "unpack kill $k: before the rerun" "$u"
		al_check "unpack kill $k: the index names only images of the pack" python3 -c '
import json, sys
ref = {(m["digest"]) for m in json.load(open(sys.argv[1] + "/index.json"))["manifests"]}
got = {(m["digest"]) for m in json.load(open(sys.argv[2] + "/index.json"))["manifests"]}
assert got <= ref, got - ref' "$T/ref" "$u"
	fi
	unpack_into "unpack kill $k: rerun" "$T/packref" "$u"
	rm -rf "$u"
done

# ------------------------------------------------------------------ update
S=$T/ustore
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }
D=$(up_digest "$S" 4.14.1)
up_sign "$S" "$D" || { al_fail "sign the sample release with gpg"; al_finish; }
up_plan "$S" || { al_fail "dry-run plan"; al_finish; }
KS_STATE=$T/cluster.json
up_ks_start --co-delay 0.3 --state-file "$KS_STATE"
NTASKS=$(up_py 'print(len(plan()))')
UPDATE=("$AIRLOCK" update --store "$S" --to 4.14.1 --kubeconfig "$T/kubeconfig"
	--operator-poll 100ms --keyring "$T/trusted.gpg" --state "$T/state.json" --sync-timeout 60s)
t0=$(date +%s%N)
al_run "$T/out" "$T/err" "${UPDATE[@]}"
update_ms=$(ms_since "$t0")
al_check "uninterrupted update completes (${update_ms} ms)" grep -q "completed: applied $NTASKS of $NTASKS" "$T/out"

# not_falsely_done DESC: neither record says Completed/Reconciling unless
# every manifest of the plan is in the cluster and every operator reports 4.14.1.
not_falsely_done() {
	local desc=$1 file cluster all
	file=$(up_state "$T/state.json" '"%s %s" % (s["state"], [h["state"] for h in s["history"]])' 2>/dev/null || echo "none")
	cluster=$(up_py 'u = get("/apis/airlock.io/v1alpha1/clusterupdates/cluster").get("status", {})
print("%s %s" % (u.get("state"), [h.get("state") for h in u.get("history", [])]))' 2>/dev/null || echo "none")
	all=$(up_py 'objs = objects()
cos = [o for o in objs.values() if o["kind"] == "ClusterOperator"]
print("yes" if not missing() and cos and all(v.get("version") == "4.14.1" for o in cos for v in o.get("status", {}).get("versions", [])) else "no")')
	echo "$desc: state file: $file; cluster: $cluster; everything applied: $all"
	case "$file $cluster" in
	*Reconciling*|*Completed*)
		al_check "$desc: Completed/Reconciling only with every task applied" test "$all" = yes ;;
	*)
		al_pass "$desc: not recorded as Completed" ;;
	esac
}

k=0
for d in $(delays update "$update_ms"); do
	k=$((k + 1))
	up_ctl reset '{}' >/dev/null
	rm -f "$T/state.json"
	kill_after "$d" "$T/killed.out" "${UPDATE[@]}"
	echo "update kill $k after ${d}s (still running: $KILLED)"
	if [ $((k % 2)) = 1 ]; then
		# The "cluster" dies too and comes back from its state file.
		kill -9 "$KS_PID" 2>/dev/null || true
		wait "$KS_PID" 2>/dev/null || true
		up_ks_start --co-delay 0.3 --state-file "$KS_STATE"
	fi
	not_falsely_done "update kill $k"
	al_run "$T/out" "$T/err" "${UPDATE[@]}"
	al_check "update kill $k: a rerun completes (or reconciles)" \
		grep -qE "completed: applied $NTASKS of $NTASKS|reconciled 4.14.1: applied $NTASKS of $NTASKS" "$T/out"
	[ "$AL_RC" = 0 ] || cat "$T/err"
	al_check "update kill $k: state Reconciling, newest entry Completed" \
		test "$(up_state "$T/state.json" '"%s %s" % (s["state"], s["history"][0]["state"])')" = "Reconciling Completed"
	al_check "update kill $k: exactly one history entry (the resumed one)" \
		test "$(up_state "$T/state.json" 'len(s["history"])')" = 1
	not_falsely_done "update kill $k: after the rerun"
done

al_finish
