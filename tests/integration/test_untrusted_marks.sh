#!/usr/bin/env bash
# test_untrusted_marks.sh: what unpack --accept-untrusted writes is marked per file (issue 24): forged media (a forged signature-1, a moved tag) imported untrusted, then the genuine pack with --trust: the genuine signature replaces the forged one (none beside it), the marks go, configmaps never ships a forged byte, verify counts only what verifies against the key, check and inventory show the marks while they stand.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
src=$T/src
sig_hex=c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
sigdir=signatures/sha256=$sig_hex
keyring=$samples/keys/release.gpg

pack_id() { sed -n 's/^pack \([A-Za-z0-9-]*\): .*/\1/p' "$1"; }
forged_b64=$(printf 'a forged signature\n' | base64 -w0)

# ---- staging: the sample release with its genuine (OpenPGP) signature
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
al_check "... with the release's genuine signature" test -s "$src/$sigdir/signature-1"
genuine_b64=$(base64 -w0 <"$src/$sigdir/signature-1")
"$AIRLOCK" keygen -o "$T/key" >/dev/null
tag=$(al_index_digests "$src" | awk '$1 !~ /@/ {print $1; exit}')
other=$(al_index_digests "$src" | awk -v t="$tag" '$1 != t {print $1; exit}')
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p1" --volume-size 64K --sign "$T/key.key"
p1=$(pack_id "$T/out")

# ---- forged media under the genuine pack's id: a forged signature-1, the tag moved
cp -a "$src" "$T/evil"
printf 'a forged signature\n' >"$T/evil/$sigdir/signature-1"
al_retag "$T/evil" "$tag" "$other"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/evil" -o "$T/pe" --volume-size 64K
python3 "$AL_TOOLS/hostile_tar.py" forge "$T/pe" "$T/forged" "$p1" >/dev/null

# ---- 1. forged first, accepted untrusted: marked
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/forged" --store "$T/far"
al_check "the forged pack imports with --accept-untrusted (exit 0)" test "$AL_RC" = 0
al_check "... its signature-1 is the forged one" grep -q forged "$T/far/$sigdir/signature-1"
al_check "... marked in airlock/untrusted.json" python3 -c '
import json, sys, hashlib
d = json.load(open(sys.argv[1]))
h = hashlib.sha256(b"a forged signature\n").hexdigest()
s = [m for m in d["signatures"] if m["sha256"] == h and m["release"] == "sha256:" + sys.argv[2]]
t = [m for m in d["tags"] if m["name"] == sys.argv[3]]
sys.exit(0 if s and t else 1)' "$T/far/airlock/untrusted.json" "$sig_hex" "$tag"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/far"
al_check "check exits 0 and lists the untrusted signature" \
	grep -q "^untrusted signature $sigdir/signature-1: written by pack $p1" "$T/out"
al_check "... and the untrusted tag" grep -qF "untrusted tag $tag -> " "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/far" --json
al_check "check --json lists both under \"untrusted\", with every name it set (names by digest too)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = [x for x in d["untrusted"] if x["kind"] == "signature"]
t = [x["name"] for x in d["untrusted"] if x["kind"] == "tag"]
sys.exit(0 if len(s) == 1 and sorted(t) == sorted(sys.argv[2].split()) else 1)' "$T/out" \
	"$(al_index_digests "$T/evil" | awk '{print $1}')"
al_run "$T/out" "$T/err" "$AIRLOCK" inventory --store "$T/far" -o "$T/inv.json"
al_check "inventory lists the signature under untrusted, not under signatures" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = sys.argv[2]
sys.exit(0 if [s["path"] for s in d["untrusted"]["signatures"]] == [p]
         and p not in [s["path"] for s in d["signatures"]] else 1)' "$T/inv.json" "$sigdir/signature-1"
al_run "$T/out" "$T/err" "$AIRLOCK" configmaps --store "$T/far" -o "$T/cm1"
al_check "configmaps ships no forged byte" bash -c '! grep -rq "$1" "$2" 2>/dev/null' _ "$forged_b64" "$T/cm1"
al_check "... says it left the signature out (exit 1: none left)" test "$AL_RC" = 1
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$T/far" --keyring "$keyring"
al_check "verify does not count the forged signature (exit 1)" test "$AL_RC" = 1

# ---- 2. the genuine pack with --trust replaces it and clears the marks
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/far" --trust "$T/key.pub"
al_check "the genuine pack imports with --trust (exit 0)" test "$AL_RC" = 0
al_check "... signature-1 is the genuine one" cmp "$src/$sigdir/signature-1" "$T/far/$sigdir/signature-1"
al_check "... with no forged one beside it" test "$(ls "$T/far/$sigdir")" = signature-1
al_check "... the tag names the genuine image" \
	test "$(al_digest_of "$T/far" "$tag")" = "$(al_digest_of "$src" "$tag")"
al_check "... and no mark is left" test ! -e "$T/far/airlock/untrusted.json"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/far"
al_check "check is clean and lists nothing untrusted" \
	bash -c 'test "$1" = 0 && ! grep -q "^untrusted" "$2"' _ "$AL_RC" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" configmaps --store "$T/far" -o "$T/cm2"
al_check "configmaps exits 0 and ships the genuine signature" \
	bash -c 'test "$1" = 0 && grep -rq "$2" "$3"' _ "$AL_RC" "$genuine_b64" "$T/cm2"
al_check "... and no forged byte" bash -c '! grep -rq "$1" "$2"' _ "$forged_b64" "$T/cm2"
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$T/far" --keyring "$keyring"
al_check "verify passes with the genuine signature (exit 0)" test "$AL_RC" = 0

# ---- 3. genuine first, forged after: the forged one is added as signature-2 and marked
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/far2" --trust "$T/key.pub"
al_check "the genuine pack imports (exit 0)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/forged" --store "$T/far2"
al_check "the forged pack then imports untrusted (exit 0)" test "$AL_RC" = 0
al_check "... the genuine signature-1 stays" cmp "$src/$sigdir/signature-1" "$T/far2/$sigdir/signature-1"
al_check "... the forged one is signature-2" grep -q forged "$T/far2/$sigdir/signature-2"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/far2"
al_check "check lists signature-2 as untrusted, not signature-1" bash -c \
	'grep -q "^untrusted signature $1/signature-2:" "$2" && ! grep -q "$1/signature-1:" "$2"' _ "$sigdir" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" configmaps --store "$T/far2" -o "$T/cm3"
al_check "configmaps ships the genuine signature only (exit 0)" \
	bash -c 'test "$1" = 0 && grep -rq "$2" "$3" && ! grep -rq "$4" "$3"' _ "$AL_RC" "$genuine_b64" "$T/cm3" "$forged_b64"
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$T/far2" --keyring "$keyring"
al_check "verify passes on the genuine signature (exit 0)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/far2" --trust "$T/key.pub"
al_check "the genuine pack again with --trust (exit 0)" test "$AL_RC" = 0
al_check "... moves the tag back and clears its mark" bash -c \
	'test "$1" = "$2" && ! grep -q "\"$3\"" "$4/airlock/untrusted.json"' _ \
	"$(al_digest_of "$T/far2" "$tag")" "$(al_digest_of "$src" "$tag")" "$tag" "$T/far2"
al_finish
