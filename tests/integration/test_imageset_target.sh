#!/usr/bin/env bash
# test_imageset_target.sh: additionalImages[].targetRepo / targetTag (oc-mirror v2's resolveTargetRepoTag): the image is stored, planned, packed and pushed under its target name, and the mirror sets map its source repository to the target repository.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v python3 >/dev/null || al_skip "python3 is needed for mkrelease.py"
command -v skopeo >/dev/null || al_skip "skopeo is not installed"
[ -x "$AL_REGISTRY_BIN" ] || al_skip "docker-registry is not installed"

prefix=quay.io/openshift-release-dev
python3 "$AL_SOURCE_DIR/tests/tools/mkrelease.py" --out "$T/src" --prefix "$prefix" \
	--components 2 --version 4.15.0 >/dev/null
read -r rel d1 d2 < <(python3 -c 'import json,sys
m = json.load(open(sys.argv[1]))["manifests"]
print(*[e["digest"] for e in m])' "$T/src/index.json")
al_check "the source layout has three images" test -n "$d2"

cat >"$T/isc.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  additionalImages:
  - name: $prefix/release:4.15.0-x86_64
    targetRepo: custom-ns/my-release
    targetTag: v1
  - name: $prefix/ocp-v4.0-art-dev@$d1
    targetRepo: tools/one
  - name: $prefix/ocp-v4.0-art-dev@$d2
    targetTag: tag-2
airlock:
  sources:
  - prefix: $prefix
    location: oci:$T/src
YAML
S=$T/store

# 1. the plan names the target as the destination
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$T/isc.yaml" --store "$S" --dry-run
cat "$T/err"
al_check "dry run exits 0" test "$AL_RC" = 0
al_check "mapping.txt maps the tagged source to its targetRepo:targetTag" \
	grep -qxF "docker://$prefix/release:4.15.0-x86_64=oci:$S:quay.io/custom-ns/my-release:v1" "$S/airlock/dry-run/mapping.txt"
al_check "mapping.txt keeps the digest of a digest source with only targetRepo" \
	grep -qxF "docker://$prefix/ocp-v4.0-art-dev@$d1=oci:$S:quay.io/tools/one@$d1" "$S/airlock/dry-run/mapping.txt"
al_check "mapping.txt names a digest source with targetTag by that tag" \
	grep -qxF "docker://$prefix/ocp-v4.0-art-dev@$d2=oci:$S:$prefix/ocp-v4.0-art-dev:tag-2" "$S/airlock/dry-run/mapping.txt"

# 2. the store holds the images under the target names, with their origin
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$T/isc.yaml" --store "$S"
cat "$T/err"
al_check "mirror exits 0" test "$AL_RC" = 0
al_check "the store names the release image quay.io/custom-ns/my-release:v1" \
	test "$(al_digest_of "$S" quay.io/custom-ns/my-release:v1)" = "$rel"
al_check "the store names the digest image under tools/one" \
	test "$(al_digest_of "$S" "quay.io/tools/one@$d1")" = "$d1"
al_check "the store names the tagged digest image :tag-2" \
	test "$(al_digest_of "$S" "$prefix/ocp-v4.0-art-dev:tag-2")" = "$d2"
names=$(al_layout_names "$S")
al_check "no entry keeps the source name" \
	test -z "$(printf '%s\n' "$names" | grep -F release:4.15.0-x86_64 || true)"
al_check "the entry records the reference it came from" \
	python3 -c 'import json,sys
m = [e for e in json.load(open(sys.argv[1]))["manifests"]
     if e["annotations"]["org.opencontainers.image.ref.name"] == "quay.io/custom-ns/my-release:v1"]
assert m[0]["annotations"]["io.airlock.image.origin"] == sys.argv[2], m' \
	"$S/index.json" "$prefix/release:4.15.0-x86_64"
al_check "skopeo reads the target name from the store" \
	"${SKOPEO[@]}" inspect --raw oci:"$S":quay.io/custom-ns/my-release:v1 >/dev/null

# 3. push puts them at the target repository and tag
al_start_registry "$T/reg"
al_run "$T/out" "$T/err" "$AIRLOCK" push --layout source --store "$S" "docker://$REG_ADDR/mirror" --tls-verify=false
cat "$T/err"
al_check "push exits 0" test "$AL_RC" = 0
inspect() {
	"${SKOPEO[@]}" inspect --no-tags --tls-verify=false --format '{{.Digest}}' "docker://$1"
}
al_check "skopeo finds the release image at mirror/custom-ns/my-release:v1" \
	test "$(inspect "$REG_ADDR/mirror/custom-ns/my-release:v1")" = "$rel"
al_check "skopeo finds the digest image at mirror/tools/one:sha256-<hex>" \
	test "$(inspect "$REG_ADDR/mirror/tools/one:sha256-${d1#sha256:}")" = "$d1"
al_check "skopeo finds the tagged image at :tag-2" \
	test "$(inspect "$REG_ADDR/mirror/openshift-release-dev/ocp-v4.0-art-dev:tag-2")" = "$d2"
al_check "nothing was pushed under the source repository of the release" \
	bash -c '! "${@}" 2>/dev/null' _ "${SKOPEO[@]}" inspect --raw --tls-verify=false \
	"docker://$REG_ADDR/mirror/openshift-release-dev/release:4.15.0-x86_64"

# 4. the mirror sets send the source repository to the target repository
al_run "$T/sets" "$T/err" "$AIRLOCK" mirrorsets --layout source --store "$S" --registry "$REG_ADDR/mirror"
cat "$T/err"
al_check "mirrorsets exits 0" test "$AL_RC" = 0
sets_map() { # FILE: "source mirror" for every IDMS entry, sorted
	python3 - "$1" <<'PY'
import sys, yaml
out = []
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "ImageDigestMirrorSet":
        for e in d["spec"]["imageDigestMirrors"]:
            out += ["%s %s" % (e["source"], m) for m in e["mirrors"]]
print("\n".join(sorted(out)))
PY
}
cat >"$T/want" <<EOF
$prefix/ocp-v4.0-art-dev $REG_ADDR/mirror/openshift-release-dev/ocp-v4.0-art-dev
$prefix/ocp-v4.0-art-dev $REG_ADDR/mirror/tools/one
$prefix/release $REG_ADDR/mirror/custom-ns/my-release
EOF
if python3 -c 'import yaml' 2>/dev/null; then
	sets_map "$T/sets" >"$T/got"
	al_check "the IDMS maps each source repository to its target repository" \
		diff -u "$T/want" "$T/got"
else
	al_skip_part "python3-yaml is not installed: IDMS entries not compared"
fi
al_check "no ITMS entry for a source the cluster pulls by digest only" \
	bash -c '! grep -q "source: quay.io/tools" "$1"' _ "$T/sets"

# 5. the origin travels with a pack
# (signed and imported with --trust: mirror sets leave out what an
# untrusted import named, docs/security.md "Marks of untrusted imports")
"$AIRLOCK" keygen -o "$T/packkey" >/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$S" -o "$T/vol" --sign "$T/packkey.key"
al_check "pack exits 0" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --trust "$T/packkey.pub" "$T/vol" --store "$T/far"
cat "$T/err"
al_check "unpack exits 0" test "$AL_RC" = 0
al_run "$T/sets2" "$T/err" "$AIRLOCK" mirrorsets --layout source --store "$T/far" --registry "$REG_ADDR/mirror"
al_check "the unpacked store gives the same mirror sets" diff -u "$T/sets" "$T/sets2"

al_finish
