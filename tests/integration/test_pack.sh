#!/usr/bin/env bash
# test_pack.sh: removable media end to end: mirror -> pack (several volumes, signed) -> unpack -> check; deltas, resumption, hostile volumes, kill -9.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

if ! "$AIRLOCK" pack --help >/dev/null 2>&1; then
	al_fail "airlock has a 'pack' command (main.c lists cmd_pack, cmd_unpack, cmd_inventory, cmd_keygen)"
	al_finish
fi

samples=$AL_SOURCE_DIR/samples
src=$T/src
sig_hex=c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807

# "path sha256" of every blob and signature of a store, sorted.
listing() {
	(cd "$1" && find blobs/sha256 signatures -type f 2>/dev/null | LC_ALL=C sort | xargs -r sha256sum)
}
same_store() {
	al_same_index "$1" "$2" && [ "$(listing "$1")" = "$(listing "$2")" ]
}
check_clean() {
	"$AIRLOCK" check --store "$1" >"$T/check.out" 2>&1 &&
		grep -qE '^checked [1-9][0-9]* images, [1-9][0-9]* blobs: 0 missing, 0 corrupt' "$T/check.out"
}
pack_id() { # the id from pack's summary line
	sed -n 's/^pack \([A-Za-z0-9-]*\): .*/\1/p' "$1"
}
manifest_blobs() { # blob paths a manifest lists, sorted
	python3 -c 'import json,sys; print("\n".join(sorted(e["path"] for e in json.load(open(sys.argv[1]))["entries"] if e["path"].startswith("blobs/"))))' "$1"
}

# ---- the source store: the sample mirror job plus a release signature
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
mkdir -p "$src/signatures/sha256=$sig_hex"
[ -s "$src/signatures/sha256=$sig_hex/signature-1" ] || printf 'a detached signature\n' >"$src/signatures/sha256=$sig_hex/signature-1"

al_run "$T/out" "$T/err" "$AIRLOCK" keygen -o "$T/key"
al_check "keygen exits 0" test "$AL_RC" = 0
al_check "keygen: private key is mode 0600" test "$(stat -c %a "$T/key.key")" = 600
al_check "keygen: public key is PEM" grep -q 'BEGIN PUBLIC KEY' "$T/key.pub"
al_check_fails "keygen refuses to overwrite" 3 "$AIRLOCK" keygen -o "$T/key"
"$AIRLOCK" keygen -o "$T/other" >/dev/null

# ---- full pack, small volumes, signed
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p1" --volume-size 64K --sign "$T/key.key"
al_check "pack exits 0" test "$AL_RC" = 0
p1=$(pack_id "$T/out")
nvol=$(ls "$T/p1"/airlock-"$p1"-*.tar | wc -l)
al_check "pack wrote several volumes ($nvol)" test "$nvol" -ge 2
al_check "every volume is at most 64 KiB" \
	bash -c 'for f in "$1"/*.tar; do [ "$(stat -c %s "$f")" -le 65536 ] || exit 1; done' _ "$T/p1"
al_check "manifest and signature written" test -s "$T/p1/airlock-$p1.json" -a -s "$T/p1/airlock-$p1.json.sig"
al_check "the store records the pack" test -s "$src/airlock/packs/$p1.json"
al_check "bsdtar -tvf lists every volume" \
	bash -c 'for f in "$1"/*.tar; do bsdtar -tvf "$f" | grep -q airlock-volume.json || exit 1; done' _ "$T/p1"
al_check "GNU tar -tvf lists every volume" \
	bash -c 'for f in "$1"/*.tar; do tar -tvf "$f" | grep -q airlock-volume.json || exit 1; done' _ "$T/p1"
al_check "GNU tar lists the signature entry" \
	bash -c 'cat "$1"/*.tar | tar -tf - -i | grep -q "^signatures/sha256=$2/signature-1$"' _ "$T/p1" "$sig_hex"

al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/f1" --trust "$T/key.pub"
cat "$T/err"
al_check "unpack --trust of the signed pack exits 0" test "$AL_RC" = 0
al_check "unpack summary line" grep -qE "^unpacked $p1: [1-9][0-9]* entries imported" "$T/out"
al_check "airlock check on the unpacked store is clean" check_clean "$T/f1"
al_check "same index, blobs and signatures as the source" same_store "$src" "$T/f1"
al_check "signature carried" test -s "$T/f1/signatures/sha256=$sig_hex/signature-1"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/p1" --store "$T/f1"
al_check "unpacking the same pack again exits 0 (already imported)" \
	bash -c '[ "$1" = 0 ] && grep -q "already imported" "$2"' _ "$AL_RC" "$T/out"

# ---- signatures refused
al_check_fails "unpack --trust with another key exits 1" 1 "$AIRLOCK" unpack "$T/p1" --store "$T/f-bad" --trust "$T/other.pub"
al_check "a pack whose signature does not verify imports nothing" \
	bash -c '[ -z "$(ls "$1/blobs/sha256" 2>/dev/null)" ]' _ "$T/f-bad"

# ---- new content (a release with 3 MB layers) and deltas
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
python3 "$AL_TOOLS/mkrelease.py" --out "$T/big" --prefix quay.io/airlock-big --version 4.15.0 \
	--components 2 --layer-size 3000000 --base-size 200000 --gzip-level 1 >/dev/null
before=$(ls "$src/blobs/sha256" | sort)
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/big.yaml" --allow-unsigned --store "$src"
al_check "mirror of a second release exits 0" test "$AL_RC" = 0
new_blobs=$(comm -13 <(printf '%s\n' "$before") <(ls "$src/blobs/sha256" | sort) | sed 's|^|blobs/sha256/|')

al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p2" --volume-size 1M --since "$p1"
al_check "pack --since exits 0" test "$AL_RC" = 0
p2=$(pack_id "$T/out")
al_check "the --since delta carries exactly the new blobs" \
	test "$(manifest_blobs "$T/p2/airlock-$p2.json")" = "$new_blobs"
al_check "a 3 MB blob is split across 1 MiB volumes" \
	python3 -c 'import json,sys; sys.exit(0 if any(len(e.get("parts",[]))>1 for e in json.load(open(sys.argv[1]))["entries"]) else 1)' "$T/p2/airlock-$p2.json"

al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/p2" --store "$T/nobase"
al_check "a delta whose base was never imported is refused (exit 3)" test "$AL_RC" = 3
al_check "... with a message naming the base" grep -q "never imported" "$T/err"
al_check "... and nothing imported" bash -c '[ -z "$(ls "$1/blobs/sha256" 2>/dev/null)" ]' _ "$T/nobase"

al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/p2" --store "$T/f1"
al_check "unpack of the delta on top of its base exits 0" test "$AL_RC" = 0
al_check "base + delta: check clean" check_clean "$T/f1"
al_check "base + delta gives the source store" same_store "$src" "$T/f1"

al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p3" --volume-size 1M
p3=$(pack_id "$T/out")
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/p3" --store "$T/f3"
al_check "full pack of the grown store imports" test "$AL_RC" = 0
al_check "base + delta equals one full pack" same_store "$T/f1" "$T/f3"

# --have: the far side's inventory decides
"$AIRLOCK" unpack --accept-untrusted "$T/p1" --store "$T/f4" >/dev/null
al_run "$T/inv.json" "$T/err" "$AIRLOCK" inventory --store "$T/f4"
al_check "inventory exits 0 and names the imported pack" grep -q "\"$p1\"" "$T/inv.json"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p4" --volume-size 1M --have "$T/inv.json"
p4=$(pack_id "$T/out")
al_check "pack --have carries exactly what the far side lacks" \
	test "$(manifest_blobs "$T/p4/airlock-$p4.json")" = "$new_blobs"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/p4" --store "$T/f4"
al_check "unpack of the --have delta exits 0" test "$AL_RC" = 0
al_check "inventory + --have delta gives the source store" same_store "$src" "$T/f4"

# ---- volumes one by one, in reverse order, over several runs
n3=$(ls "$T/p3"/*.tar | wc -l)
ok=1
for ((v = n3; v >= 1; v--)); do
	rm -rf "$T/disk"
	mkdir "$T/disk"
	[ "$v" = "$n3" ] && cp "$T/p3/airlock-$p3.json" "$T/disk/"
	cp "$T/p3/airlock-$p3-$(printf %04d "$v").tar" "$T/disk/"
	al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/disk" --store "$T/f5"
	if [ "$v" -gt 1 ]; then
		[ "$AL_RC" = 3 ] && grep -q "^missing airlock-$p3-0001.tar$" "$T/out" || ok=0
	else
		[ "$AL_RC" = 0 ] || ok=0
	fi
done
al_check "volumes over $n3 runs in reverse order: missing ones named, exit 3 until the last" test "$ok" = 1
al_check "... then the store equals the source" same_store "$src" "$T/f5"
al_check "... and check is clean" check_clean "$T/f5"

# ---- hostile and broken media: each refused, naming volume and entry
for case in traversal absolute symlink hardlink device unlisted duplicate oversized truncated flipped otherpack othermanifest; do
	rm -rf "$T/h" "$T/fh"
	read -r vol entry < <(python3 "$AL_TOOLS/hostile_tar.py" "$case" "$T/p1" "$T/h")
	al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/h" --store "$T/fh"
	al_check "hostile '$case': exit 1" test "$AL_RC" = 1
	al_check "hostile '$case': the error names '$vol' and '$entry'" \
		bash -c 'grep -qF "$1" "$3" && grep -qF "$2" "$3"' _ "$vol" "$entry" "$T/err"
	al_check "hostile '$case': nothing written outside the store, no image named" \
		bash -c '[ ! -e "$1/evil-traversal" ] && [ ! -e "$1/../evil-traversal" ] && [ ! -e /tmp/airlock-evil-absolute ] &&
			 { [ ! -e "$2/index.json" ] || ! grep -q ref.name "$2/index.json"; }' _ "$T" "$T/fh"
done

# ---- kill -9 during unpack at random points, then rerun
seed=${AL_TEST_SEED:-$RANDOM}
echo "kill -9 seed: $seed (set AL_TEST_SEED=$seed to repeat)"
RANDOM=$seed
ok=1
for round in 1 2 3 4; do
	rm -rf "$T/fk"
	for attempt in 1 2 3; do
		delay=$(printf '0.%03d' $((RANDOM % 150)))
		"$AIRLOCK" unpack --accept-untrusted "$T/p3" --store "$T/fk" >/dev/null 2>&1 &
		pid=$!
		sleep "$delay"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		echo "round $round: kill -9 after ${delay}s"
	done
	"$AIRLOCK" unpack --accept-untrusted "$T/p3" --store "$T/fk" >"$T/out" 2>"$T/err" || { ok=0; cat "$T/err"; }
	check_clean "$T/fk" && same_store "$src" "$T/fk" || ok=0
done
al_check "after kill -9 at random points, a rerun completes and the store is clean (seed $seed)" test "$ok" = 1

al_check_fails "pack without --store is a usage error" 2 "$AIRLOCK" pack -o "$T/x"
al_check_fails "pack --volume-size 1K is a usage error" 2 "$AIRLOCK" pack --store "$src" -o "$T/x" --volume-size 1K
al_check_fails "unpack without a directory is a usage error" 2 "$AIRLOCK" unpack --accept-untrusted --store "$T/x"

al_finish
