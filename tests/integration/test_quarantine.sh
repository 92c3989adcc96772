#!/usr/bin/env bash
# test_quarantine.sh: unpack without --trust goes to the store's quarantine (issue 24, item 4): unsigned and wrong-key media never touch the store's tags, signatures or records, configmaps ships none of their bytes, check and inventory list them, promote with the right key only, drop; a trusted import is unaffected and removes the quarantine of its pack id.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
src=$T/src
sig_hex=c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
sigdir=signatures/sha256=$sig_hex

pack_id() { sed -n 's/^pack \([A-Za-z0-9-]*\): .*/\1/p' "$1"; }
# The store's own state: every file but the quarantine, the lock and the
# index journal, with its SHA-256.
state() {
	(cd "$1" && find . -type f ! -path './airlock/quarantine/*' ! -name lock ! -name index.journal |
		LC_ALL=C sort | xargs sha256sum)
}

# ---- a staging store with a release signature, the real key and another
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
mkdir -p "$src/$sigdir"
printf 'the real detached signature\n' >"$src/$sigdir/signature-1"
"$AIRLOCK" keygen -o "$T/key" >/dev/null
"$AIRLOCK" keygen -o "$T/other" >/dev/null
tag=$(al_index_digests "$src" | awk '$1 !~ /@/ {print $1; exit}')
other=$(al_index_digests "$src" | awk -v t="$tag" '$1 != t {print $1; exit}')
al_check "the sample store has a tag ($tag) and another image ($other)" test -n "$tag" -a -n "$other"

al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p1" --volume-size 64K --sign "$T/key.key"
p1=$(pack_id "$T/out")

# ---- hostile media: the tag moved, a forged signature, the release record
# changed; unsigned (pu), signed by another key (pw), and one claiming the
# real pack's id (forged)
cp -a "$src" "$T/evil"
printf 'a forged signature\n' >"$T/evil/$sigdir/signature-1"
al_retag "$T/evil" "$tag" "$other"
python3 - "$T/evil/airlock/releases.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d.get("releases", []):
    r["version"] = "6.6.6"
json.dump(d, open(sys.argv[1], "w"))
EOF
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/evil" -o "$T/pu" --volume-size 64K
pu=$(pack_id "$T/out")
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/evil" -o "$T/pw" --volume-size 64K --sign "$T/other.key"
pw=$(pack_id "$T/out")
python3 "$AL_TOOLS/hostile_tar.py" forge "$T/pu" "$T/forged" "$p1" >/dev/null
al_check "three hostile packs ($pu, $pw, forged $p1)" test -n "$pu" -a -n "$pw"

# ---- the trusted import is unaffected
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/far" --trust "$T/key.pub"
al_check "the trusted pack imports (exit 0)" test "$AL_RC" = 0
al_check "... into the store itself" al_same_index "$src" "$T/far"
al_check "... with nothing quarantined" test ! -e "$T/far/airlock/quarantine"
state "$T/far" >"$T/state-before"
al_check "... and its release signature" grep -q real "$T/far/$sigdir/signature-1"

# ---- an unsigned volume: quarantined, the store untouched
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/pu" --store "$T/far"
al_check "an unsigned pack without --trust: exit 0" test "$AL_RC" = 0
al_check "... reported as quarantined" grep -q "^quarantined $pu: " "$T/out"
al_check "... held in STORE/airlock/quarantine/$pu" test -f "$T/far/airlock/quarantine/$pu/store/index.json"
state "$T/far" >"$T/state-after"
al_check "... and not one file of the store changed (tags, signatures, records)" \
	diff -u "$T/state-before" "$T/state-after"
al_check "... the trusted tag still names the real image" \
	test "$(al_digest_of "$T/far" "$tag")" = "$(al_digest_of "$src" "$tag")"

# ---- a volume signed by another key: refused with --trust, quarantined without
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/pw" --store "$T/far" --trust "$T/key.pub"
al_check "a pack signed by another key, with --trust: exit 1" test "$AL_RC" = 1
al_check "... nothing of it quarantined" test ! -e "$T/far/airlock/quarantine/$pw"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/pw" --store "$T/far"
al_check "... without --trust: quarantined (exit 0)" test "$AL_RC" = 0 -a -d "$T/far/airlock/quarantine/$pw"
state "$T/far" >"$T/state-after"
al_check "... and the store unchanged" diff -u "$T/state-before" "$T/state-after"

# ---- no command uses the quarantine: configmaps ships the real signature only
al_run "$T/out" "$T/err" "$AIRLOCK" configmaps --store "$T/far" -o "$T/cm"
al_check "configmaps exits 0" test "$AL_RC" = 0
al_check "... its ConfigMap holds the real signature" \
	grep -rq "$(printf 'the real detached signature\n' | base64 -w0)" "$T/cm"
al_check "... and no forged byte" bash -c '! grep -rq "$1" "$2"' _ \
	"$(printf 'a forged signature\n' | base64 -w0)" "$T/cm"
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$T/far"
al_check "releases does not list the forged record" bash -c '! grep -q 6.6.6 "$1"' _ "$T/out"

# ---- check and inventory show it
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/far"
al_check "check exits 0 (a quarantine is not a store problem)" test "$AL_RC" = 0
al_check "... and lists the unsigned pack" grep -q "^quarantined $pu: [0-9]* images, unsigned" "$T/out"
al_check "... and the other key's pack" grep -q "^quarantined $pw: [0-9]* images, signed" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" inventory --store "$T/far" -o "$T/inv.json"
al_check "inventory lists both under quarantined, neither under packs" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
q = sorted(x["id"] for x in d["quarantined"])
sys.exit(0 if q == sorted(sys.argv[2:4]) and sys.argv[2] not in d["packs"] and sys.argv[3] not in d["packs"] else 1)' \
	"$T/inv.json" "$pu" "$pw"

# ---- promotion needs the key that signed it
al_check_fails "--promote without a key is a usage error" 2 "$AIRLOCK" unpack --promote "$pu" --store "$T/far"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --promote "$pu" --store "$T/far" --trust "$T/key.pub"
al_check "promoting the unsigned pack with the real key: exit 1" test "$AL_RC" = 1
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --promote "$pw" --store "$T/far" --trust "$T/key.pub"
al_check "promoting the other key's pack with the real key: exit 1" test "$AL_RC" = 1
state "$T/far" >"$T/state-after"
al_check "... the store unchanged" diff -u "$T/state-before" "$T/state-after"
al_check "... both still quarantined" test -d "$T/far/airlock/quarantine/$pu" -a -d "$T/far/airlock/quarantine/$pw"

# ---- drop
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --drop "$pu" --store "$T/far"
al_check "--drop exits 0" test "$AL_RC" = 0 -a ! -e "$T/far/airlock/quarantine/$pu"
al_check_fails "dropping it again: not found (exit 3)" 3 "$AIRLOCK" unpack --drop "$pu" --store "$T/far"
al_check_fails "--drop of a malformed id is refused" 3 "$AIRLOCK" unpack --drop "../../x" --store "$T/far"
"$AIRLOCK" unpack --drop "$pw" --store "$T/far" >/dev/null
al_check "with the last one dropped, no quarantine directory is left" test ! -e "$T/far/airlock/quarantine"

# ---- the first review's poisoning case: forged media of the real pack id
# first, then the real pack with --trust
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/forged" --store "$T/far3"
al_check "the forged pack claiming $p1 is quarantined" test "$AL_RC" = 0 -a -d "$T/far3/airlock/quarantine/$p1"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/far3" --trust "$T/key.pub"
al_check "the real pack then imports with --trust (exit 0)" test "$AL_RC" = 0
al_check "... its tags" al_same_index "$src" "$T/far3"
al_check "... the real signature as signature-1" grep -q real "$T/far3/$sigdir/signature-1"
al_check "... and no other signature" test "$(ls "$T/far3/$sigdir")" = signature-1
al_check "... the quarantine of $p1 removed" test ! -e "$T/far3/airlock/quarantine/$p1"
al_run "$T/out" "$T/err" "$AIRLOCK" configmaps --store "$T/far3" -o "$T/cm3"
al_check "... configmaps ships no forged byte" bash -c '! grep -rq "$1" "$2"' _ \
	"$(printf 'a forged signature\n' | base64 -w0)" "$T/cm3"

# ---- a genuine pack unpacked without --trust, promoted with its key
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/far4"
al_check "the real pack without --trust: quarantined" test "$AL_RC" = 0 -a -d "$T/far4/airlock/quarantine/$p1"
al_check "... the store names no image" test "$(al_index_digests "$T/far4")" = ""
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/forged" --store "$T/far4"
al_check "another manifest under the same id is refused while one is quarantined (exit 3)" test "$AL_RC" = 3
al_check "... naming --drop" grep -q -- "--drop $p1" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --promote "$p1" --store "$T/far4" --trust "$T/other.pub"
al_check "promoting with another key: exit 1" test "$AL_RC" = 1 -a -d "$T/far4/airlock/quarantine/$p1"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --promote "$p1" --store "$T/far4" --trust "$T/key.pub"
al_check "promoting with its key: exit 0" test "$AL_RC" = 0
al_check "... the images are in the store" al_same_index "$src" "$T/far4"
al_check "... with the release signature" cmp "$src/$sigdir/signature-1" "$T/far4/$sigdir/signature-1"
al_check "... the import record says trusted" \
	python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["trusted"] is True else 1)' \
	"$T/far4/airlock/imported/$p1.json"
al_check "... the quarantine is gone" test ! -e "$T/far4/airlock/quarantine"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/far4"
al_check "... and check is clean" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/far4"
al_check "unpacking it again without --trust: already imported, nothing quarantined" \
	test "$AL_RC" = 0 -a ! -e "$T/far4/airlock/quarantine"

# ---- --accept-untrusted: into the store, recorded untrusted
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/pu" --store "$T/far5" --accept-untrusted
al_check "--accept-untrusted imports into the store (exit 0)" test "$AL_RC" = 0
al_check "... its images in the index" al_same_index "$T/evil" "$T/far5"
al_check "... the record says untrusted" \
	python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["trusted"] is False else 1)' \
	"$T/far5/airlock/imported/$pu.json"
al_check_fails "--trust and --accept-untrusted together are a usage error" 2 \
	"$AIRLOCK" unpack "$T/pu" --store "$T/far5" --accept-untrusted --trust "$T/key.pub"

# ---- a delta (--since) quarantined: its base is the store's, read only
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
cp -a "$src" "$T/src6"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/big.yaml" --allow-unsigned --store "$T/src6"
al_check "a second release mirrored into a copy of the staging store" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/src6" -o "$T/pd" --volume-size 256K --since "$p1" --sign "$T/key.key"
pd=$(pack_id "$T/out")
al_check "a signed --since $p1 delta ($pd)" test -n "$pd"
"$AIRLOCK" unpack "$T/p1" --store "$T/far6" --trust "$T/key.pub" >/dev/null
state "$T/far6" >"$T/state6-before"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/pd" --store "$T/far6"
al_check "the delta without --trust is quarantined (exit 0)" \
	bash -c 'test "$1" = 0 && grep -q "^quarantined $2: " "$3"' _ "$AL_RC" "$pd" "$T/out"
state "$T/far6" >"$T/state6-after"
al_check "... nothing of it entered the store" diff -u "$T/state6-before" "$T/state6-after"
al_check "... its new images are whole in the quarantine with the store's blobs" \
	grep -q "quay.io/airlock-big/release:4.15.0-x86_64" "$T/far6/airlock/quarantine/$pd/store/index.json"
al_check "... and no blob of the base was copied there" bash -c '
	for b in "$1"/blobs/sha256/*; do
		test ! -e "$2/blobs/sha256/${b##*/}" || exit 1
	done' _ "$T/far6" "$T/far6/airlock/quarantine/$pd/store"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/far6"
al_check "check lists the quarantined delta" grep -q "^quarantined $pd: [1-9][0-9]* images, signed" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --promote "$pd" --store "$T/far6" --trust "$T/key.pub"
al_check "promoting the delta with its key: exit 0" test "$AL_RC" = 0
al_check "... the store is now the grown staging store" al_same_index "$T/src6" "$T/far6"
al_check "... the quarantine is gone" test ! -e "$T/far6/airlock/quarantine"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/far6"
al_check "... and check is clean" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/pd" --store "$T/far7"
al_check "a delta whose base this store never imported is still refused (exit 3)" test "$AL_RC" = 3
al_finish
