#!/usr/bin/env bash
# test_release_cache.sh: a mirror leaves airlock/cache/release-*.json, a rerun (a new process) reads only the layers it names, never the release image's base layer, a read-only push writes none, and a wrong entry is read past.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

python3 "$AL_SOURCE_DIR/tests/tools/mkrelease.py" --out "$T/layout" --components 2 \
	--layer-size 1000 --base-size 20000 --seed release-cache >/dev/null
al_release_imageset "$T/isc.yaml" "oci:$T/layout"
mirror() {
	al_run "$T/out" "$T/err" "$AIRLOCK" mirror -q --allow-unsigned --no-sigstore \
		--config "$T/isc.yaml" --store "$T/s"
}

mirror
al_check "the first mirror succeeds" test "$AL_RC" = 0
entries=("$T"/s/airlock/cache/release-sha256-*_linux-amd64.json)
al_check "it leaves one release cache entry" test "${#entries[@]}" = 1 -a -f "${entries[0]}"
entry=${entries[0]}
cp "$entry" "$T/entry.good"
# the layer the entry calls bare (the base layer) and the payload layer
read -r bare payload < <(python3 - "$entry" <<'EOF'
import json, sys
e = json.load(open(sys.argv[1]))
bare = [l["digest"] for l in e["layers"] if not l["payload"]]
pay = [l["digest"] for l in e["layers"] if l["payload"]]
assert len(bare) == 1 and len(pay) == 1, e
print(bare[0].split(":")[1], pay[0].split(":")[1])
EOF
)
al_check "the entry names the release image's two layers" test -n "$bare" -a -n "$payload"

# The base layer's bytes spoiled in place (same size): a process that
# opened it would refuse the release (its digest no longer matches).
blob=$T/s/blobs/sha256/$bare
chmod u+w "$blob"
cp "$blob" "$T/base.good"
python3 -c 'import os, sys; n = os.path.getsize(sys.argv[1]); open(sys.argv[1], "r+b").write(b"x" * n)' "$blob"
mirror
al_check "a rerun with the entry does not open the base layer (exit 0)" test "$AL_RC" = 0
mv "$entry" "$T/entry.moved"
mirror
al_check "without the entry the rerun reads the base layer and refuses it" test "$AL_RC" != 0
al_check "the refusal names the base layer" grep -q "$bare" "$T/err"
mv "$T/entry.moved" "$entry"
cp "$T/base.good" "$blob"

# A wrong entry: the payload said to be in the base layer alone. Every
# layer is read instead, the release is right, and the entry is mended.
python3 - "$entry" <<'EOF'
import json, sys
e = json.load(open(sys.argv[1]))
for l in e["layers"]:
    l["payload"] = not l["payload"]
json.dump(e, open(sys.argv[1], "w"))
EOF
mirror
al_check "a rerun past a wrong entry succeeds" test "$AL_RC" = 0
al_check "the release is recorded, version 4.14.1" python3 - "$T/s/airlock/releases.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["releases"]
assert len(r) == 1 and r[0].get("version") == "4.14.1", r
EOF
al_check "the wrong entry is written again as the first run wrote it" cmp -s "$entry" "$T/entry.good"

# check (without --gc) opens the store read-only and the release through
# al_mirror_check: it needs no entry and writes none.
rm -rf "$T/s/airlock/cache"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/s"
al_check "a read-only check of the store succeeds without an entry" test "$AL_RC" = 0
al_check "and writes no cache entry" test ! -e "$T/s/airlock/cache"

al_finish
