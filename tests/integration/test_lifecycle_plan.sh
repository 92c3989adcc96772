#!/usr/bin/env bash
# test_lifecycle_plan.sh: mirror --dry-run (mapping.txt, missing.txt, bytes to transfer from manifests) and the free-space checks of mirror, pack and unpack.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

layout=$AL_SOURCE_DIR/samples/layout
release=quay.io/airlock-samples/release:4.14.1-x86_64
SHIM=$T/fakestatvfs.so
if ! cc -shared -fPIC -o "$SHIM" "$AL_TOOLS/fakestatvfs.c" -ldl 2>"$T/cc.err"; then
	cat "$T/cc.err"
	SHIM=
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

cat >"$T/imageset.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $release
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: oci:$layout
YAML

# What the plan must say, computed from the layout itself: every distinct
# config and layer digest of every image, with its size.
read -r want_blobs want_bytes < <(python3 - "$layout" <<'PY'
import json, sys
root = sys.argv[1]
def blob(d):
    return json.load(open(root + "/blobs/sha256/" + d.split(":")[1]))
seen = {}
for m in json.load(open(root + "/index.json"))["manifests"]:
    man = blob(m["digest"])
    for d in [man["config"]] + man["layers"]:
        seen[d["digest"]] = d["size"]
print(len(seen), sum(seen.values()))
PY
)
echo "layout: $want_blobs distinct blobs, $want_bytes bytes"

store=$T/store
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned -c "$T/imageset.yaml" --store "$store" --dry-run
cat "$T/out" "$T/err"
al_check "dry run on an empty store exits 0" test "$AL_RC" = 0
al_check "dry run: 7 images, none in the store" grep -q '^plan: 7 images (7 not in the store, 0 failed)' "$T/out"
al_check "dry run: bytes to transfer are the layout's distinct blobs ($want_blobs, $want_bytes bytes)" \
	grep -q "^to transfer: $want_blobs blobs, $want_bytes bytes " "$T/out"
al_check "dry run names where the lists went" grep -q "^mapping: $store/airlock/dry-run/mapping.txt\$" "$T/out"
al_check "mapping.txt: 7 lines SOURCE=DESTINATION (oc-mirror's format)" \
	test "$(grep -cE '^docker://quay\.io/airlock-samples/[^=]+=oci:'"$store"':quay\.io/airlock-samples/' "$store/airlock/dry-run/mapping.txt")" = 7
al_check "mapping.txt names the release by tag" \
	grep -qxF "docker://$release=oci:$store:$release" "$store/airlock/dry-run/mapping.txt"
al_check "missing.txt lists all 7 (the store had nothing)" \
	test "$(wc -l <"$store/airlock/dry-run/missing.txt")" = 7
al_check "a dry run names nothing in the store's index" \
	test "$(al_index_digests "$store" | grep -c . || true)" = 0
prefetched=$(sed -n 's/.*already fetched by the plan: \([0-9]*\) bytes.*/\1/p' "$T/out")

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned -c "$T/imageset.yaml" --store "$store"
cat "$T/out"
al_check "the real mirror after the dry run exits 0" test "$AL_RC" = 0
got=$(sed -n 's/^mirrored .*transferred [0-9]* blobs (\([0-9]*\) bytes).*/\1/p' "$T/out")
al_check "what the mirror transferred plus what the plan fetched is the plan's figure" \
	test "$((got + prefetched))" = "$want_bytes"
al_check "the mirrored store is what the layout holds" al_same_index "$layout" "$store"

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned -c "$T/imageset.yaml" --store "$store" --dry-run="$T/plan"
al_check "dry run into a directory of its own exits 0" test "$AL_RC" = 0
al_check "after the mirror: nothing to transfer" grep -q '^to transfer: 0 blobs, 0 bytes ' "$T/out"
al_check "after the mirror: missing.txt is empty, mapping.txt still lists 7" \
	bash -c 'test ! -s "$1/missing.txt" && test "$(wc -l <"$1/mapping.txt")" = 7' _ "$T/plan"

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned -c "$T/imageset.yaml" --store "$T/s3" \
	--image "oci:$T/nolayout:x" --dry-run
al_check "an image that does not resolve: dry run exits 3 and names it" \
	bash -c '[ "$1" = 3 ] && grep -q "nolayout" "$2" && grep -q "^plan: 8 images (8 not in the store, 1 failed)" "$3"' _ "$AL_RC" "$T/err" "$T/out"
al_check "the failed image is in missing.txt" grep -q "^oci:$T/nolayout:x=" "$T/s3/airlock/dry-run/missing.txt"

if [ -z "$SHIM" ]; then
	al_skip_part "free-space checks: the statvfs shim does not build here"
	al_finish
fi

# A file system with 8192 bytes free (the shim's statvfs).
al_run "$T/out" "$T/err" env LD_PRELOAD="$SHIM" AL_FAKE_FREE=8192 \
	"$AIRLOCK" mirror --allow-unsigned -c "$T/imageset.yaml" --store "$T/small"
cat "$T/err"
al_check "a mirror that cannot fit is refused up front, exit 3" test "$AL_RC" = 3
al_check "the refusal names what is needed and what is free" \
	grep -qE "not enough space on '$T/small': the selection needs [0-9]+ more bytes, the file system has 8192 bytes free" "$T/err"
al_check "the refused mirror named nothing" test "$(al_index_digests "$T/small" | grep -c . || true)" = 0
al_run "$T/out" "$T/err" env LD_PRELOAD="$SHIM" AL_FAKE_FREE=8192 \
	"$AIRLOCK" mirror --allow-unsigned -c "$T/imageset.yaml" --store "$T/small" --no-space-check
al_check "--no-space-check mirrors anyway" bash -c '[ "$1" = 0 ]' _ "$AL_RC"
al_run "$T/out" "$T/err" env LD_PRELOAD="$SHIM" AL_FAKE_FREE=8192 \
	"$AIRLOCK" mirror --allow-unsigned -c "$T/imageset.yaml" --store "$T/small"
al_check "a mirror with nothing left to fetch passes the check" test "$AL_RC" = 0
al_run "$T/out" "$T/err" env LD_PRELOAD="$SHIM" AL_FAKE_FREE=8192 \
	"$AIRLOCK" mirror --allow-unsigned -c "$T/imageset.yaml" --store "$T/s4" --dry-run
al_check "a dry run that would not fit says so, exit 3" \
	bash -c '[ "$1" = 3 ] && grep -q "the selection does not fit" "$2"' _ "$AL_RC" "$T/err"

al_run "$T/out" "$T/err" env LD_PRELOAD="$SHIM" AL_FAKE_FREE=8192 \
	"$AIRLOCK" pack --store "$store" -o "$T/media"
cat "$T/err"
al_check "pack refuses output that cannot fit, exit 3, naming both figures" \
	bash -c '[ "$1" = 3 ] && grep -qE "not enough space for the pack on .*: [0-9]+ bytes needed, 8192 bytes free" "$2"' _ "$AL_RC" "$T/err"
al_check "the refused pack wrote no volume" bash -c '! ls "$1"/*.tar >/dev/null 2>&1' _ "$T/media"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$store" -o "$T/media"
al_check "pack with room exits 0" test "$AL_RC" = 0
al_run "$T/out" "$T/err" env LD_PRELOAD="$SHIM" AL_FAKE_FREE=8192 \
	"$AIRLOCK" unpack --accept-untrusted "$T/media" --store "$T/far"
cat "$T/err"
al_check "unpack refuses an import that cannot fit, exit 3, naming both figures" \
	bash -c '[ "$1" = 3 ] && grep -qE "not enough space for the import on .*: [0-9]+ bytes needed, 8192 bytes free" "$2"' _ "$AL_RC" "$T/err"
al_check "the refused import wrote no blob" \
	test "$(find "$T/far/blobs/sha256" -type f 2>/dev/null | wc -l)" = 0
al_run "$T/out" "$T/err" env LD_PRELOAD="$SHIM" AL_FAKE_FREE=8192 \
	"$AIRLOCK" unpack --accept-untrusted "$T/media" --store "$T/far" --no-space-check
al_check "unpack --no-space-check imports" test "$AL_RC" = 0
al_check "the far store holds what was packed" al_same_index "$store" "$T/far"
al_finish
