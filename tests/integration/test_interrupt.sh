#!/usr/bin/env bash
# test_interrupt.sh: kill -9 airlock mirror at random moments; a rerun completes and the store equals an uninterrupted one.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

seed=${AL_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "seed: $seed (set AL_TEST_SEED=$seed to repeat)"
# ~100 MB: 24 components of 4 MB sharing a 4 MB base.
ncomp=${AL_INTERRUPT_COMPONENTS:-24}
lsize=${AL_INTERRUPT_LAYER_SIZE:-4000000}

al_start_registry "$T/reg"
R=$REG_ADDR
python3 "$AL_TOOLS/mkrelease.py" --out "$T/release" --components "$ncomp" \
	--layer-size "$lsize" --base-size 4000000 --gzip-level 1 --previous 4.14.0 \
	--seed "interrupt-$seed" >/dev/null
al_check "synthetic release ($ncomp components) pushed to the registry" \
	al_push_layout "$T/release" "$R"

al_release_imageset "$T/imageset.yaml" "docker://$R/airlock-samples"
mirror() {
	"$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --store "$1" --tls-verify=false
}

# The reference: an uninterrupted mirror, also timed to place the kills.
t0=$(date +%s%N)
al_run "$T/out" "$T/err" mirror "$T/ref"
t1=$(date +%s%N)
cat "$T/err"
al_check "uninterrupted mirror exits 0" test "$AL_RC" = 0
ref_ms=$(( (t1 - t0) / 1000000 ))
echo "uninterrupted mirror took ${ref_ms} ms"
al_check "uninterrupted mirror has every image of the release" \
	al_same_index "$T/release" "$T/ref"

# Kill points spread over the run (early, middle, late), jittered by the seed.
delays=$(python3 -c '
import random, sys
rng = random.Random(int(sys.argv[1]))
ms = max(int(sys.argv[2]), 300)
for lo, hi in ((0.05, 0.25), (0.3, 0.6), (0.6, 0.9)):
    print("%.3f" % (ms * rng.uniform(lo, hi) / 1000.0))
' "$seed" "$ref_ms")

n=0
interrupted=0
for d in $delays; do
	n=$((n + 1))
	s=$T/store$n
	echo "run $n: kill -9 after ${d}s"
	"$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --store "$s" --tls-verify=false \
		>"$T/killed$n.out" 2>&1 &
	pid=$!
	sleep "$d"
	killed=no
	if kill -9 "$pid" 2>/dev/null; then killed=yes; fi
	wait "$pid" 2>/dev/null || true
	# It was really cut short when it never printed its summary line.
	if grep -q '^mirrored ' "$T/killed$n.out"; then
		echo "run $n: finished before the kill"
	else
		echo "run $n: interrupted (killed=$killed)"
		interrupted=$((interrupted + 1))
	fi
	al_run "$T/out" "$T/err" mirror "$s"
	cat "$T/err"
	al_check "run $n (kill after ${d}s): rerun exits 0" test "$AL_RC" = 0
	al_run "$T/check.out" "$T/err" "$AIRLOCK" check --store "$s"
	al_check "run $n: airlock check exits 0" test "$AL_RC" = 0
	[ "$AL_RC" = 0 ] || cat "$T/check.out"
	al_check "run $n: index.json names the same digests as the uninterrupted store" \
		al_same_index "$T/ref" "$s"
	al_check "run $n: same blobs as the uninterrupted store" \
		diff <(cd "$T/ref/blobs/sha256" && ls) <(cd "$s/blobs/sha256" && ls | grep -E '^[0-9a-f]{64}$')
	al_run "$T/out" "$T/err" mirror "$s"
	al_check "run $n: a further rerun transfers 0 blobs" \
		bash -c '[ "$1" = 0 ] && tail -n 1 "$2" | grep -q "transferred 0 blobs"' _ "$AL_RC" "$T/out"
	rm -rf "$s"
done
al_check "at least one run was killed before it finished ($interrupted of $n)" test "$interrupted" -ge 1

al_finish
