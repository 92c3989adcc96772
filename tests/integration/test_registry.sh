#!/usr/bin/env bash
# test_registry.sh: registry A -> airlock mirror -> store -> airlock push -> registry B, digests checked with skopeo.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

layout=$AL_SOURCE_DIR/samples/layout
release=quay.io/airlock-samples/release:4.14.1-x86_64
store=$T/store

al_start_registry "$T/regA"
A=$REG_ADDR
al_check "samples/layout pushed to registry A with skopeo" al_push_layout "$layout" "$A"

cat >"$T/imageset.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $release
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: docker://$A/airlock-samples
YAML

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --config "$T/imageset.yaml" --store "$store" \
	--tls-verify=false --parallel 4
cat "$T/err"
al_check "airlock mirror from registry A exits 0" test "$AL_RC" = 0
al_check "mirror summary: 1 release, blobs transferred" \
	grep -qE '^mirrored 1 releases, [1-9][0-9]* images: transferred [1-9][0-9]* blobs \([1-9][0-9]* bytes\), 0 blobs already present$' \
	<(al_last_line "$T/out")
al_check "the store names exactly the images of samples/layout, same digests" \
	al_same_index "$layout" "$store"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$store"
al_check "airlock check on the mirrored store exits 0" test "$AL_RC" = 0

al_start_registry "$T/regB"
B=$REG_ADDR
al_run "$T/out" "$T/err" "$AIRLOCK" push --layout source --store "$store" "docker://$B/mirror" --tls-verify=false
cat "$T/err"
al_check "airlock push to registry B exits 0" test "$AL_RC" = 0
al_check "push summary line" \
	grep -qE '^pushed [1-9][0-9]* images: uploaded [1-9][0-9]* blobs \([1-9][0-9]* bytes\), [0-9]+ blobs already present or mounted$' \
	<(al_last_line "$T/out")

want=$("${SKOPEO[@]}" inspect --format '{{.Digest}}' "oci:$store:$release" 2>&1 || true)
got=$("${SKOPEO[@]}" inspect --no-tags --tls-verify=false --format '{{.Digest}}' \
	"docker://$B/mirror/airlock-samples/release:4.14.1-x86_64" 2>&1 || true)
echo "store: $want, registry B: $got"
al_check "release digest on B (skopeo) equals the store's (skopeo oci:)" \
	bash -c '[ -n "$1" ] && [ "$1" = "$2" ] && [ "$1" = "$3" ]' _ "$want" "$got" "$(al_digest_of "$layout" "$release")"

# Every component is on B by digest, manifest bytes unchanged.
bad=0
seen=0
while read -r name digest; do
	case $name in *@*) ;; *) continue ;; esac
	repo=${name#quay.io/}
	repo=${repo%@*}
	raw=$("${SKOPEO[@]}" inspect --raw --tls-verify=false "docker://$B/mirror/$repo@$digest" 2>/dev/null |
		sha256sum | cut -d' ' -f1)
	seen=$((seen + 1))
	[ "sha256:$raw" = "$digest" ] || { echo "component $name: got sha256:$raw"; bad=1; }
done < <(al_index_digests "$store" || true)
al_check "every component ($seen) is on B by digest with identical manifest bytes" \
	test "$bad" = 0 -a "$seen" = 6

al_check "skopeo copy from B into an oci dir works" \
	"${SKOPEO[@]}" copy -q --src-tls-verify=false \
	"docker://$B/mirror/airlock-samples/release:4.14.1-x86_64" "oci:$T/fromB:rel"
al_check "skopeo's copy from B keeps the digest" \
	test "$("${SKOPEO[@]}" inspect --format '{{.Digest}}' "oci:$T/fromB:rel" 2>/dev/null)" = "$want"

al_run "$T/out" "$T/err" "$AIRLOCK" push --layout source --store "$store" "docker://$B/mirror" --tls-verify=false
al_check "second push exits 0 and uploads nothing" \
	bash -c '[ "$1" = 0 ] && tail -n 1 "$2" | grep -qE "^pushed [0-9]+ images: uploaded 0 blobs \(0 bytes\)"' _ "$AL_RC" "$T/out"

al_run "$T/out" "$T/err" "$AIRLOCK" copy "docker://$B/mirror/airlock-samples/release:4.14.1-x86_64" \
	"oci:$T/acopy:rel" --tls-verify=false
al_check "airlock copy docker:// -> oci: exits 0" test "$AL_RC" = 0
al_check "airlock copy keeps the digest (skopeo reads the result)" \
	test "$("${SKOPEO[@]}" inspect --format '{{.Digest}}' "oci:$T/acopy:rel" 2>/dev/null)" = "$want"
al_run "$T/out" "$T/err" "$AIRLOCK" copy "oci:$layout:$release" \
	"docker://$B/copied/release:v1" --tls-verify=false
al_check "airlock copy oci: -> docker:// keeps the digest" \
	test "$("${SKOPEO[@]}" inspect --no-tags --tls-verify=false --format '{{.Digest}}' \
		"docker://$B/copied/release:v1" 2>/dev/null)" = "$want"

al_run "$T/mirrorsets.yaml" "$T/err" "$AIRLOCK" mirrorsets --layout source --store "$store" --registry "$B/mirror" -o -
al_check "mirrorsets exits 0" test "$AL_RC" = 0
al_check "mirrorsets writes an ImageDigestMirrorSet" grep -q "kind: ImageDigestMirrorSet" "$T/mirrorsets.yaml"
al_check "mirrorsets maps the source to registry B" \
	bash -c 'grep -qF "quay.io/airlock-samples" "$1" && grep -qF "$2/mirror/airlock-samples" "$1"' \
	_ "$T/mirrorsets.yaml" "$B"
al_run "$T/icsp.yaml" "$T/err" "$AIRLOCK" mirrorsets --layout source --store "$store" --registry "$B/mirror" --icsp -o -
al_check "mirrorsets --icsp writes an ImageContentSourcePolicy naming B" \
	bash -c '[ "$1" = 0 ] && grep -q "kind: ImageContentSourcePolicy" "$2" && grep -qF "$3/mirror" "$2"' \
	_ "$AL_RC" "$T/icsp.yaml" "$B"

# Several source repositories (mkrelease.py --multi-repo): every repository of
# the store is covered by a source of the IDMS, and its mirror on B is named.
python3 "$AL_TOOLS/mkrelease.py" --out "$T/multi" --version 4.14.2 --previous 4.14.1 \
	--components 4 --multi-repo --seed multi >/dev/null
al_check "multi-repo release pushed to registry A" al_push_layout "$T/multi" "$A"
sed 's/4[.]14[.]1-x86_64/4.14.2-x86_64/' "$T/imageset.yaml" >"$T/imageset2.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --config "$T/imageset2.yaml" --store "$T/store2" --tls-verify=false
cat "$T/err"
al_check "mirror of a release with two component repositories exits 0" test "$AL_RC" = 0
al_check "the store has both repositories' images" al_same_index "$T/multi" "$T/store2"
al_run "$T/ms2.yaml" "$T/err" "$AIRLOCK" mirrorsets --layout source --store "$T/store2" --registry "$B/mirror" -o -
al_check "mirrorsets for several repositories exits 0" test "$AL_RC" = 0
al_check "every repository of the store is covered by an IDMS source mirrored on B" \
	python3 - "$T/ms2.yaml" "$B/mirror" "$T/store2" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
mirror_base = sys.argv[2]
sources = re.findall(r"source:\s*\"?([^\s\"]+)", text)
repos = set()
for m in json.load(open(sys.argv[3] + "/index.json"))["manifests"]:
    name = m["annotations"]["org.opencontainers.image.ref.name"]
    repos.add(re.split(r"[@]|:(?=[^/]*$)", name)[0])
ok = bool(repos)
for r in sorted(repos):
    cover = [s for s in sources if r == s or r.startswith(s + "/")]
    want = mirror_base + "/" + (cover[0].split("/", 1)[1] if cover else "?")
    if not cover or want not in text:
        print("  repository %s: sources %s, wanted mirror %s" % (r, cover, want))
        ok = False
sys.exit(0 if ok else 1)
PY

al_finish
