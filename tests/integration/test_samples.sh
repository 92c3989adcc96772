#!/usr/bin/env bash
# test_samples.sh: the README's main job, mirroring samples/imageset.yaml into an empty store with no network.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
layout=$samples/layout
release=quay.io/airlock-samples/release:4.14.1-x86_64
store=$T/store

# The committed layout is what regenerate.sh makes from the manifests.
al_check "samples/regenerate.sh reproduces samples/layout byte for byte" \
	bash -c 'bash "$1/regenerate.sh" "$2" >/dev/null && diff -r "$3" "$2"' _ "$samples" "$T/regen" "$layout"

before=$(cd "$layout" && find . -type f -exec sha256sum {} + | sort)

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$store"
cat "$T/err"
al_check "airlock mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
al_check "summary line: 1 release, bytes transferred, nothing already present" \
	grep -qE '^mirrored 1 releases, [0-9]+ images: transferred [1-9][0-9]* blobs \([1-9][0-9]* bytes\), 0 blobs already present$' \
	<(al_last_line "$T/out")
al_check "every blob of samples/layout is in the store, byte for byte" \
	bash -c 'for f in "$1"/blobs/sha256/*; do cmp -s "$f" "$2/blobs/sha256/${f##*/}" || exit 1; done' _ "$layout" "$store"
al_check "the store is an OCI layout" grep -q '"imageLayoutVersion"' "$store/oci-layout"
al_check "mirroring did not modify samples/layout" \
	test "$before" = "$(cd "$layout" && find . -type f -exec sha256sum {} + | sort)"

al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$store"
al_check "airlock check on the new store exits 0" test "$AL_RC" = 0
al_check "check summary: 0 missing, 0 corrupt" \
	grep -qE '^checked [1-9][0-9]* images, [1-9][0-9]* blobs: 0 missing, 0 corrupt, [0-9]+ unreferenced$' \
	<(al_last_line "$T/out")

want=$(al_digest_of "$layout" "$release")
got=$("${SKOPEO[@]}" inspect --format '{{.Digest}}' "oci:$store:$release" 2>"$T/err" || true)
al_check "skopeo inspect oci:STORE:$release gives the sample's digest ($want)" test "$got" = "$want"

# Every image of the sample (release and components) is named in the store.
absent=$(comm -23 <(al_index_digests "$layout") <(al_index_digests "$store"))
al_check "the store's index names every image of samples/layout with its digest" test -z "$absent"

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$store"
al_check "rerun exits 0" test "$AL_RC" = 0
al_check "rerun transfers nothing (transferred 0 blobs)" \
	grep -qE '^mirrored 1 releases, [0-9]+ images: transferred 0 blobs \(0 bytes\), [1-9][0-9]* blobs already present$' \
	<(al_last_line "$T/out")

# check finds what is missing or corrupt, one line each: damage the unique
# layers of two component images (leaves, so nothing hides them).
read -r victim gone < <(python3 - "$layout" <<'PY'
import json, sys
d = sys.argv[1]
idx = json.load(open(d + "/index.json"))["manifests"]
comps = [m["digest"] for m in idx if "@" in m["annotations"]["org.opencontainers.image.ref.name"]]
layers = [json.load(open(d + "/blobs/sha256/" + c[7:]))["layers"][-1]["digest"][7:] for c in comps[:2]]
print(*layers)
PY
)
if [ -f "$store/blobs/sha256/$victim" ]; then printf 'x' >>"$store/blobs/sha256/$victim"; fi
rm -f "$store/blobs/sha256/$gone"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$store"
al_check "check on a damaged store exits 1" test "$AL_RC" = 1
al_check "check lists 'corrupt sha256:$victim'" grep -qE "^corrupt sha256:$victim( |\$)" "$T/out"
al_check "check lists 'missing sha256:$gone'" grep -qE "^missing sha256:$gone( |\$)" "$T/out"
al_check "check summary counts 1 missing, 1 corrupt" \
	grep -qE '^checked [0-9]+ images, [0-9]+ blobs: 1 missing, 1 corrupt, [0-9]+ unreferenced$' <(al_last_line "$T/out")

al_finish
