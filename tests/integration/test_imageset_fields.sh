#!/usr/bin/env bash
# test_imageset_fields.sh: oc-mirror's fields at mirror time: kubeVirtContainer mirrors the KubeVirt image the release's coreos-bootimages ConfigMap names, blockedImages keeps matching images out, architectures the release lacks are reported, archiveSize becomes pack's volume size, storageConfig.local.path is the store.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v python3 >/dev/null || al_skip "python3 is needed for mkrelease.py"

mk=$AL_SOURCE_DIR/tests/tools/mkrelease.py
prefix=quay.io/openshift-release-dev
# the KubeVirt image: one image of another synthetic layout
python3 "$mk" --out "$T/kv" --prefix "$prefix" --components 1 --seed kubevirt \
	--version 4.15.0 >/dev/null
kv=$(python3 -c 'import json,sys
for m in json.load(open(sys.argv[1]))["manifests"]:
    n = m["annotations"]["org.opencontainers.image.ref.name"]
    if "ocp-v4.0-art-dev" in n: print(m["digest"]); break' "$T/kv/index.json")
al_check "the KubeVirt image has a digest" test -n "$kv"
mkdir -p "$T/manifests"
sed "s|sha256:729265d5ef6ed6a45bcd55c46877e3acb9eae3f49c78cd795d5b53aa85e3775b|$kv|" \
	"$AL_SOURCE_DIR/tests/fixtures/oc-mirror-bootimages/0000_50_installer_coreos-bootimages.yaml" \
	>"$T/manifests/0000_50_installer_coreos-bootimages.yaml"
al_check "the ConfigMap names it" grep -q "$kv" "$T/manifests/0000_50_installer_coreos-bootimages.yaml"
python3 "$mk" --out "$T/rel" --prefix "$prefix" --components 2 --manifests "$T/manifests" \
	--version 4.15.0 >/dev/null
# the layout the mirror reads holds the release and, by digest, the KubeVirt image
cp -n "$T/kv/blobs/sha256/"* "$T/rel/blobs/sha256/"
python3 - "$T/rel/index.json" "$T/kv/index.json" "$kv" <<'PY'
import json, sys
rel, kv, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
rel["manifests"] += [m for m in kv["manifests"] if m["digest"] == d]
json.dump(rel, open(sys.argv[1], "w"))
PY
release=$prefix/release:4.15.0-x86_64

write_cfg() { # FILE EXTRA-MIRROR-YAML [TOP-LEVEL-YAML]
	cat >"$1" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
${3:-}
mirror:
  platform:
    release: $release
    kubeVirtContainer: true
$2
airlock:
  sources:
  - prefix: $prefix
    location: oci:$T/rel
YAML
}

# 1. kubeVirtContainer, architectures the release lacks, archiveSize
write_cfg "$T/a.yaml" "    architectures: [arm64]" "archiveSize: 1"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/a.yaml" --store "$T/s1" --allow-unsigned --no-default-keys --no-default-store
cat "$T/err"
al_check "mirror with kubeVirtContainer exits 0" test "$AL_RC" = 0
al_check "the KubeVirt image is in the store" test -f "$T/s1/blobs/sha256/${kv#sha256:}"
al_check "the KubeVirt image is named in index.json" grep -q "$kv" "$T/s1/index.json"
al_check "the log says which image the release named" \
	grep -q "kubeVirtContainer: $release names $prefix/ocp-v4.0-art-dev@$kv" "$T/err"
al_check "architecture arm64 that the release lacks is reported" \
	grep -q "release $release provides only amd64, not arm64" "$T/err"
al_check "archiveSize is recorded for pack" \
	grep -q '"packVolumeSize": 1073741824' "$T/s1/airlock/defaults.json"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/s1" -o "$T/pack"
al_check "pack exits 0" test "$AL_RC" = 0
al_check "pack takes archiveSize as its volume size" \
	grep -q "volume size 1.0 GiB: the imageset's archiveSize" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/s1" -o "$T/pack2" --volume-size 64M
al_check "--volume-size still wins" bash -c '! grep -q "archiveSize" "$1"' _ "$T/err"

# 2. blockedImages keeps the KubeVirt image out (as oc-mirror's excludeImages)
comp=$(python3 -c 'import json,sys
for m in json.load(open(sys.argv[1]))["manifests"]:
    n = m["annotations"]["org.opencontainers.image.ref.name"]
    if "ocp-v4.0-art-dev" in n and m["digest"] != sys.argv[2]: print(m["digest"]); break' "$T/rel/index.json" "$kv")
write_cfg "$T/b.yaml" "  blockedImages:
  - name: \"ocp-v4.0-art-dev@${kv}\$\"
  - name: \"${comp#sha256:}\""
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/b.yaml" --store "$T/s2" --allow-unsigned --no-default-keys --no-default-store
cat "$T/err"
al_check "mirror with the KubeVirt image blocked exits 0" test "$AL_RC" = 0
al_check "the blocked KubeVirt image is not in the store" test ! -e "$T/s2/blobs/sha256/${kv#sha256:}"
al_check "the warning names the pattern" \
	grep -q "KubeVirt image $prefix/ocp-v4.0-art-dev@$kv is not mirrored: it matches mirror.blockedImages" "$T/err"
al_check "the release itself was mirrored" grep -q "4.15.0" "$T/s2/airlock/releases.json"
al_check "a blocked component is reported, and mirrored (a release stays whole)" \
	bash -c 'grep -q "of release $1 matches mirror.blockedImages .* and was mirrored all the same" "$2" &&
		test -f "$3/blobs/sha256/${4#sha256:}"' _ "$release" "$T/err" "$T/s2" "$comp"

# 3. a blocked additional image; samples are reported as not mirrored
cat >"$T/c.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v1alpha2
storageConfig:
  local:
    path: s3
mirror:
  additionalImages:
  - name: $prefix/ocp-v4.0-art-dev@$kv
  blockedImages:
  - name: art-dev
  samples:
  - name: ruby
airlock:
  sources:
  - prefix: $prefix
    location: oci:$T/rel
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/c.yaml" --allow-unsigned --no-default-keys --no-default-store
cat "$T/err"
al_check "an imageset whose only image is blocked has nothing to mirror (exit 2)" test "$AL_RC" = 2
al_check "the blocked image is named" grep -q "image $prefix/ocp-v4.0-art-dev@$kv is not mirrored" "$T/err"
al_check "samples are reported as not mirrored" grep -q "mirror.samples: sample images are not mirrored" "$T/err"
sed -i 's/  - name: art-dev/  - name: nothing-matches-this/' "$T/c.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/c.yaml" --allow-unsigned --no-default-keys --no-default-store
al_check "without --store, storageConfig.local.path (relative to the file) is the store" \
	bash -c '[ "$1" = 0 ] && test -f "$2/s3/blobs/sha256/${3#sha256:}"' _ "$AL_RC" "$T" "$kv"

# 4. a release without the ConfigMap: kubeVirtContainer fails, saying why
write_cfg "$T/d.yaml" ""
sed -i "s|oci:$T/rel|oci:$T/kv|; s|release: $release|release: $prefix/release:4.15.0-x86_64|" "$T/d.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/d.yaml" --store "$T/s4" --allow-unsigned --no-default-keys --no-default-store
cat "$T/err"
al_check "kubeVirtContainer with a release that names no KubeVirt image fails" test "$AL_RC" != 0
al_check "the error names the missing ConfigMap" \
	grep -q "kubeVirtContainer: release-manifests/0000_50_installer_coreos-bootimages.yaml is not in the release" "$T/err"
# 5. additionalImages[].platforms: one platform is that entry of the index
python3 - "$T/multi" <<'PY'
import hashlib, json, os, sys
out = sys.argv[1]
os.makedirs(out + "/blobs/sha256", exist_ok=True)
def blob(b):
    d = hashlib.sha256(b).hexdigest()
    open("%s/blobs/sha256/%s" % (out, d), "wb").write(b)
    return "sha256:" + d, len(b)
kids = []
for arch in ("amd64", "arm64"):
    layer = blob(("layer of %s\n" % arch).encode() * 64)
    cfg = blob(json.dumps({"architecture": arch, "os": "linux",
                           "rootfs": {"type": "layers", "diff_ids": [layer[0]]}}).encode())
    m = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cfg[0], "size": cfg[1]},
                    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer[0], "size": layer[1]}]}).encode()
    md = blob(m)
    kids.append({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md[0], "size": md[1],
                 "platform": {"os": "linux", "architecture": arch}})
    open("%s/%s" % (out, arch), "w").write(layer[0] + "\n")
idx = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                       "manifests": kids}).encode())
json.dump({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.index.v1+json",
           "digest": idx[0], "size": idx[1],
           "annotations": {"org.opencontainers.image.ref.name": "quay.io/multi/tool:1"}}]},
          open(out + "/index.json", "w"))
open(out + "/oci-layout", "w").write('{"imageLayoutVersion":"1.0.0"}')
PY
cat >"$T/e.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  additionalImages:
  - name: quay.io/multi/tool:1
    platforms:
    - os: linux
      architecture: arm64
airlock:
  sources:
  - prefix: quay.io/multi
    location: oci:$T/multi
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/e.yaml" --store "$T/s5"
cat "$T/err"
al_check "an additional image with one platform is mirrored (exit 0)" test "$AL_RC" = 0
arm=$(cat "$T/multi/arm64") amd=$(cat "$T/multi/amd64")
al_check "its arm64 layer is in the store" test -f "$T/s5/blobs/sha256/${arm#sha256:}"
al_check "its amd64 layer is not" test ! -e "$T/s5/blobs/sha256/${amd#sha256:}"
al_check "the store names it" grep -q "quay.io/multi/tool:1" "$T/s5/index.json"
al_finish
