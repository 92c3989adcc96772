#!/usr/bin/env bash
# test_untrusted_pack.sh: what an untrusted import wrote (issue 24, item 4 remainder) stays untrusted downstream: a pack signed from a store holding a forged signature, a moved tag and a forged release record carries none of them (judged by the volumes and by a far store that imports the pack with --trust); the forged release record is marked, listed by releases and check, and a trusted import of the release takes it out.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
src=$T/src
sig_hex=c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
sigdir=signatures/sha256=$sig_hex

pack_id() { sed -n 's/^pack \([A-Za-z0-9-]*\): .*/\1/p' "$1"; }
# versions of the release records of store $1, sorted, one a line
versions() {
	python3 -c 'import json,sys
print("\n".join(sorted(r["version"] for r in json.load(open(sys.argv[1]))["releases"])))' \
		"$1/airlock/releases.json"
}

# ---- staging: the sample release and its genuine signature, a signed pack
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
al_check "... with the release's genuine signature" test -s "$src/$sigdir/signature-1"
real_version=$(versions "$src")
"$AIRLOCK" keygen -o "$T/key" >/dev/null
tag=$(al_index_digests "$src" | awk '$1 !~ /@/ {print $1; exit}')
other=$(al_index_digests "$src" | awk -v t="$tag" '$1 != t {print $1; exit}')
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p1" --volume-size 64K --sign "$T/key.key"
p1=$(pack_id "$T/out")
al_check "a signed pack of the staging store ($p1)" test -n "$p1"

# ---- forged media under the genuine pack's id: a forged signature, the
# tag moved, the release record's version changed
cp -a "$src" "$T/evil"
printf 'a forged signature\n' >"$T/evil/$sigdir/signature-1"
al_retag "$T/evil" "$tag" "$other"
python3 - "$T/evil/airlock/releases.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["releases"]:
    r["version"] = "6.6.6"
json.dump(d, open(sys.argv[1], "w"))
EOF
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/evil" -o "$T/pe" --volume-size 64K
python3 "$AL_TOOLS/hostile_tar.py" forge "$T/pe" "$T/forged" "$p1" >/dev/null

# ---- the middle store: the genuine pack trusted, then the forged one accepted untrusted
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/mid" --trust "$T/key.pub"
al_check "the genuine pack imports with --trust (exit 0)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/forged" --store "$T/mid"
al_check "the forged pack imports with --accept-untrusted (exit 0)" test "$AL_RC" = 0
al_check "... the forged signature is signature-2" grep -q forged "$T/mid/$sigdir/signature-2"
al_check "... the tag moved" test "$(al_digest_of "$T/mid" "$tag")" = "$(al_digest_of "$T/evil" "$tag")"
al_check "... releases.json holds the forged record beside the genuine one" \
	test "$(versions "$T/mid" | tr '\n' ' ')" = "$(printf '%s\n6.6.6\n' "$real_version" | sort | tr '\n' ' ')"
al_check "... and the forged record is marked in airlock/untrusted.json" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if len(d.get("releases", [])) == 1 and d["releases"][0]["pack"] == sys.argv[2] else 1)' \
	"$T/mid/airlock/untrusted.json" "$p1"

# ---- releases and check show the untrusted record
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$T/mid"
al_check "releases shows the forged record as untrusted" grep -q '^6\.6\.6 .* untrusted ' "$T/out"
al_check "... and the genuine one as it was" bash -c \
	'grep "^$1 " "$2" | grep -vq untrusted' _ "$real_version" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$T/mid" --json
al_check "releases --json names the pack that wrote it" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
u = {r["version"]: r["untrusted_pack"] for r in d["releases"]}
sys.exit(0 if u["6.6.6"] == sys.argv[2] and u[sys.argv[3]] is None else 1)' "$T/out" "$p1" "$real_version"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/mid" --json
al_check "check --json lists the record under untrusted" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d["untrusted"] if x["kind"] == "release"]
sys.exit(0 if [x["version"] for x in r] == ["6.6.6"] else 1)' "$T/out"

# ---- 1. a signed pack of the middle store carries nothing the forged import wrote
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/mid" -o "$T/p2" --volume-size 64K --sign "$T/key.key"
p2=$(pack_id "$T/out")
al_check "the middle store packs (exit 0)" test "$AL_RC" = 0 -a -n "$p2"
al_check "... no volume holds the forged signature's bytes" \
	bash -c '! grep -aq "a forged signature" "$1"/airlock-*.tar' _ "$T/p2"
al_check "... nor the forged record" bash -c '! grep -aq "6\.6\.6" "$1"/airlock-*.tar' _ "$T/p2"
al_check "... the manifest lists signature-1 only" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
s = [e["path"] for e in m["entries"] if e["path"].startswith("signatures/")]
sys.exit(0 if s == [sys.argv[2] + "/signature-1"] else 1)' "$T/p2/airlock-$p2.json" "$sigdir"
al_check "... and stderr says three were left out" grep -q "left out 3 " "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p2" --store "$T/far" --trust "$T/key.pub"
al_check "the far store imports it with --trust (exit 0)" test "$AL_RC" = 0
al_check "... its signatures are the genuine one alone" bash -c \
	'test "$(ls "$1")" = signature-1 && cmp -s "$2/signature-1" "$1/signature-1"' _ "$T/far/$sigdir" "$src/$sigdir"
no_name() { ! al_digest_of "$1" "$2" >/dev/null 2>&1; }
others_as_staged() { diff <(al_index_digests "$1" | grep -v "^$3 ") <(al_index_digests "$2"); }
al_check "... the moved tag did not travel" no_name "$T/far" "$tag"
al_check "... every other name did, as staged" others_as_staged "$src" "$T/far" "$tag"
al_check "... and its releases.json holds the genuine record only" test "$(versions "$T/far")" = "$real_version"

# ---- 2. a trusted import of the release takes the forged record out
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/mid" --trust "$T/key.pub"
al_check "the genuine pack again with --trust (exit 0)" test "$AL_RC" = 0
al_check "... releases.json holds the genuine record only" test "$(versions "$T/mid")" = "$real_version"
al_check "... and no release mark is left (the forged signature-2 keeps its own)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d.get("releases") == [] and len(d["signatures"]) == 1 else 1)' "$T/mid/airlock/untrusted.json"
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$T/mid"
al_check "releases shows nothing untrusted" bash -c '! grep -q untrusted "$1"' _ "$T/out"
al_finish
