#!/usr/bin/env bash
# test_unpack_kill.sh: unpack (--trust, into the quarantine, and --promote) killed with -9 at a random point after a reported progress line (read through a pipe, never timed): no half-imported image is ever visible, the import record appears only when the import completed, and the rerun finishes without importing again what was already in place (issue 24, item 3; issue 29).
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

seed=${AL_TEST_SEED:-$RANDOM}
echo "seed: $seed (set AL_TEST_SEED=$seed to repeat)"
RANDOM=$seed
samples=$AL_SOURCE_DIR/samples
src=$T/src

pack_id() { sed -n 's/^pack \([A-Za-z0-9-]*\): .*/\1/p' "$1"; }
blobs_of() { (cd "$1/blobs/sha256" 2>/dev/null && ls | grep -E '^[0-9a-f]{64}$' || true); }
# the progress lines of unpack -v: one per entry read, per tag, the record
progress_re='unpack: (entry .* (read|taken from the quarantine)|tagged |pack .* recorded)'

# ---- a staging store: the sample release and one with 300 KB layers, so
# that 64 KiB volumes split blobs into parts
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of the sample release exits 0" test "$AL_RC" = 0
python3 "$AL_TOOLS/mkrelease.py" --out "$T/big" --prefix quay.io/airlock-big --version 4.15.0 \
	--components 2 --layer-size 300000 --base-size 20000 --gzip-level 1 >/dev/null
cat >"$T/big.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-big/release:4.15.0-x86_64
airlock:
  sources:
  - prefix: quay.io/airlock-big
    location: "oci:$T/big"
EOF
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/big.yaml" --allow-unsigned --store "$src"
al_check "mirror of a release with 300 KB layers exits 0" test "$AL_RC" = 0
"$AIRLOCK" keygen -o "$T/key" >/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p" --volume-size 64K --sign "$T/key.key"
id=$(pack_id "$T/out")
al_check "a signed pack of 64 KiB volumes ($id)" test -n "$id"
# slots: what unpack counts as entries imported (a split blob's parts each)
nslots=$(python3 -c 'import json,sys; print(sum(max(1, len(e.get("parts", []))) for e in json.load(open(sys.argv[1]))["entries"]))' "$T/p/airlock-$id.json")
# present_slots STORE: the slots of the pack's blobs STORE holds
present_slots() { python3 -c '
import json, os, sys
n = 0
for e in json.load(open(sys.argv[1]))["entries"]:
    if e["path"].startswith("blobs/") and os.path.isfile(os.path.join(sys.argv[2], e["path"])):
        n += max(1, len(e.get("parts", [])))
print(n)' "$T/p/airlock-$id.json" "$1"; }

# the uninterrupted import, and how many progress lines it reports
al_run "$T/out" "$T/ref.log" "$AIRLOCK" unpack "$T/p" --store "$T/ref" --trust "$T/key.pub" -v
al_check "the uninterrupted import exits 0" test "$AL_RC" = 0
nlines=$(grep -cE "$progress_re" "$T/ref.log" || true)
al_check "it reports progress lines ($nlines) on stderr with -v" test "$nlines" -gt 10

# kill_at N STORE ARGS...: run unpack -v ARGS on STORE, its stderr read
# through a pipe, and kill -9 it once the N-th progress line arrived; sets
# KILLED=yes when it was killed before it finished.
kill_at() {
	local n=$1 store=$2 pid line count=0
	shift 2
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	"$AIRLOCK" unpack "$@" --store "$store" -v 2>"$T/fifo" >"$T/kill.out" &
	pid=$!
	KILLED=no
	while IFS= read -r line; do
		if [[ $line =~ $progress_re ]]; then
			count=$((count + 1))
			if [ "$count" -eq "$n" ] && kill -9 "$pid" 2>/dev/null; then
				KILLED=yes
			fi
		fi
	done <"$T/fifo"
	wait "$pid" 2>/dev/null || true
	if [ "$KILLED" = yes ] && grep -q "^unpacked " "$T/kill.out"; then
		KILLED=no # it had finished before the signal
	fi
}

ok=1
recorded_early=0
redone=0
for round in 1 2 3 4; do
	store=$T/far$round
	kills=""
	for attempt in 1 2; do
		n=$((RANDOM % nlines + 1))
		kill_at "$n" "$store" "$T/p" --trust "$T/key.pub"
		kills="$kills $n:$KILLED"
		[ "$KILLED" = yes ] || break
		al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$store"
		if [ "$AL_RC" != 0 ]; then
			echo "round $round: after a kill at line $n, check: $(cat "$T/check.out" "$T/check.err")"
			ok=0
		fi
		# the record says complete: every name of the pack is there
		if [ -e "$store/airlock/imported/$id.json" ] && ! al_same_index "$T/ref" "$store"; then
			echo "round $round: an import record before the index was complete"
			recorded_early=1
		fi
	done
	present=$(present_slots "$store")
	al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p" --store "$store" --trust "$T/key.pub"
	echo "round $round: kills at$kills; $present slots of the pack's blobs were in place; rerun: $(cat "$T/out")"
	if [ "$AL_RC" != 0 ]; then
		cat "$T/err"
		ok=0
		continue
	fi
	imported=$(sed -n 's/^unpacked [^:]*: \([0-9]*\) entries imported.*/\1/p' "$T/out")
	imported=${imported:-0}
	if [ $((imported + present)) -gt "$nslots" ]; then
		echo "round $round: the rerun imported $imported entries of $nslots, $present were in place"
		redone=1
	fi
	al_same_index "$T/ref" "$store" || { echo "round $round: index differs"; ok=0; }
	diff <(blobs_of "$T/ref") <(blobs_of "$store") >/dev/null || { echo "round $round: blobs differ"; ok=0; }
	cmp -s "$T/ref/airlock/releases.json" "$store/airlock/releases.json" || { echo "round $round: releases.json differs"; diff "$T/ref/airlock/releases.json" "$store/airlock/releases.json" | head -5; ok=0; }
	test ! -e "$store/airlock/unpack" || { echo "round $round: airlock/unpack left"; ok=0; }
done
al_check "after kill -9 at random progress lines: check clean, the rerun completes to the uninterrupted store (seed $seed)" test "$ok" = 1
al_check "... no import record while the import was unfinished" test "$recorded_early" = 0
al_check "... and the rerun imported nothing that was in place already" test "$redone" = 0

# ---- the quarantine (no --trust) and --promote, killed the same way
ok=1
for round in 1 2 3; do
	store=$T/q$round
	n=$((RANDOM % nlines + 1))
	kill_at "$n" "$store" "$T/p"
	qkill=$KILLED
	al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$store"
	[ "$AL_RC" = 0 ] || ok=0
	if [ -n "$(al_index_digests "$store")" ]; then
		echo "round $round: the store names an image before promotion"
		ok=0
	fi
	al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p" --store "$store"
	[ "$AL_RC" = 0 ] || { cat "$T/err"; ok=0; }
	n=$((RANDOM % nlines + 1))
	kill_at "$n" "$store" --promote "$id" --trust "$T/key.pub"
	pkill=$KILLED
	al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$store"
	[ "$AL_RC" = 0 ] || { cat "$T/check.out"; ok=0; }
	if [ "$pkill" = yes ]; then
		al_run "$T/out" "$T/err" "$AIRLOCK" unpack --promote "$id" --store "$store" --trust "$T/key.pub"
		if [ "$AL_RC" != 0 ]; then
			# killed after the store recorded it: the pack is imported
			al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p" --store "$store" --trust "$T/key.pub"
		fi
		[ "$AL_RC" = 0 ] || { cat "$T/err"; ok=0; }
	fi
	echo "round $round: quarantine kill: $qkill, promote kill at line $n: $pkill"
	al_same_index "$T/ref" "$store" || { echo "round $round: index differs"; ok=0; }
	test ! -e "$store/airlock/quarantine" || { ls -la "$store/airlock/quarantine"; ok=0; }
done
al_check "quarantine and --promote killed at random progress lines: the rerun completes, nothing is left quarantined (seed $seed)" test "$ok" = 1
# a promote killed between the rename that takes its quarantine away and
# the removal of what was renamed leaves STORE/airlock/quarantine/.gone-ID
# (seen in one seed of the loop above); the next unpack of any pack sweeps it
mkdir -p "$T/q1/airlock/quarantine/.gone-$id/store"
echo left >"$T/q1/airlock/quarantine/.gone-$id/store/x"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p" --store "$T/q1" --trust "$T/key.pub"
al_check "a removal's leftover (.gone-ID) is swept by the next unpack, even one that imports nothing" \
	sh -c "[ $AL_RC = 0 ] && [ ! -e '$T/q1/airlock/quarantine' ]"
al_finish
