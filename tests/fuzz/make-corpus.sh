#!/bin/bash
# make-corpus.sh: regenerate the seed corpus of every fuzz target from samples/ (usage: make-corpus.sh AIRLOCK-BINARY; regression inputs in corpus/*/crash-* are kept).
set -euo pipefail
airlock=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
c=$here/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sep=$'\n--airlock-fuzz-volume--\n'
rel=c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
sig=$src/samples/signatures/sha256=$rel/signature-1
for t in pgp sigpayload manifest ref imageset packmanifest volume; do
	mkdir -p "$c/$t"
	find "$c/$t" -type f -name 'seed-*' -delete
done

# pgp: the sample key (binary and armored), the sample signature (binary, armored, cut short)
cp "$src/samples/keys/release.gpg" "$c/pgp/seed-key.gpg"
export GNUPGHOME=$tmp/gnupg
mkdir -m 700 "$GNUPGHOME"
gpg -q --import "$src/samples/keys/release.gpg" 2>/dev/null
gpg -q --armor --export >"$c/pgp/seed-key.asc"
cp "$sig" "$c/pgp/seed-sig"
gpg -q --enarmor <"$sig" | sed 's/ARMORED FILE/MESSAGE/' >"$c/pgp/seed-sig.asc"
head -c 300 "$sig" >"$c/pgp/seed-sig-truncated"
# the same message without its compressed-data packet (old format, indeterminate length, ZIP)
python3 -c 'import sys, zlib; d = open(sys.argv[1], "rb").read(); assert d[0] == 0xa3 and d[1] == 1
sys.stdout.buffer.write(zlib.decompress(d[2:], -15))' "$sig" >"$c/pgp/seed-sig-uncompressed"
gpg -q --decrypt "$sig" >"$tmp/payload.json" 2>/dev/null
# keys of the other algorithms, each with a message it signed: KEYRING "\n--airlock-fuzz-message--\n" MESSAGE
for algo in ed25519 nistp256 rsa2048; do
	gpg -q --batch --pinentry-mode loopback --passphrase '' --quick-gen-key "fuzz-$algo <fuzz@example.invalid>" "$algo" sign 2050-01-01 2>/dev/null
	fpr=$(gpg --with-colons --list-keys "fuzz-$algo" | awk -F: '/^fpr/ {print $10; exit}')
	{
		gpg -q --export "$fpr"
		printf '\n--airlock-fuzz-message--\n'
		gpg -q --batch --pinentry-mode loopback --passphrase '' -u "$fpr" --digest-algo SHA256 --sign <"$tmp/payload.json"
	} >"$c/pgp/seed-pair-$algo"
done

# sigpayload: the sample's payload and hand-made variants
cp "$tmp/payload.json" "$c/sigpayload/seed-sample.json"
d="sha256:$rel"
printf '{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"%s"},"identity":{"docker-reference":"quay.io/airlock-samples/release:4.14.1-x86_64"}}}' "$d" >"$c/sigpayload/seed-minimal.json"
printf '{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"%s"},"identity":{"docker-reference":"busybox@%s"}},"optional":{"creator":"x","timestamp":1700000000,"extra":[1,{"a":null}]}}' "$d" "$d" >"$c/sigpayload/seed-optional.json"
printf '{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"%s"},"identity":{"docker-reference":"x"},"foo":1}}' "$d" >"$c/sigpayload/seed-unknown-field.json"
printf '{"critical":{"type":"atomic container signature","type":"x"}}' >"$c/sigpayload/seed-duplicate-key.json"

# manifest: real OCI manifests, config and index of the sample layout, a Docker list, broken ones
cp "$src/samples/layout/index.json" "$c/manifest/seed-layout-index.json"
cp "$src/samples/layout/blobs/sha256/$rel" "$c/manifest/seed-release-manifest.json"
cp "$src/samples/layout/blobs/sha256/a78a46c1974754438a7dade686a9b2f480fe3fc8ef615e691a7680b01769c21d" "$c/manifest/seed-blob-a78a.json"
printf '{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.list.v2+json","manifests":[{"mediaType":"application/vnd.docker.distribution.manifest.v2+json","digest":"%s","size":557,"platform":{"os":"linux","architecture":"arm","variant":"v7"}}]}' "$d" >"$c/manifest/seed-docker-list.json"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/x-test","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"%s","size":2},"layers":[],"subject":{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":557},"annotations":{"a":"b"}}' "$d" "$d" >"$c/manifest/seed-referrer.json"
printf '{"schemaVersion":1,"name":"x","tag":"y","fsLayers":[]}' >"$c/manifest/seed-schema1.json"
printf '{"schemaVersion":2,"config":{"digest":"sha256:zz","size":-1}}' >"$c/manifest/seed-bad.json"

# ref: docker references and image references
i=0
for r in busybox docker.io/library/busybox:latest index.docker.io/busybox "quay.io/airlock-samples/release:4.14.1-x86_64" \
	"localhost:5000/a/b/c:v1@$d" "[::1]:5000/x@$d" "docker://127.0.0.1:5000/mirror/release@$d" \
	"oci:/tmp/layout:quay.io/x/y:1" "oci:relative" "oci:/dir:" "Upper/Case" "a//b" "x:$(printf 't%.0s' {1..130})" \
	"busybox@md5:0123" "ftp://host/x"; do
	i=$((i + 1))
	printf '%s' "$r" >"$c/ref/seed-$i"
done

# imageset: the sample, a channel variant, errors
cp "$src/samples/imageset.yaml" "$c/imageset/seed-sample.yaml"
cat >"$c/imageset/seed-channels.yaml" <<'YAML'
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    architectures: [amd64, arm64]
    channels:
    - name: stable-4.15
      minVersion: 4.15.1
      maxVersion: "4.15.10"
      shortestPath: true
      type: okd
airlock:
  insecureRegistries: ["127.0.0.1:5000"]
  graph:
    url: http://127.0.0.1:8080/graph
    excludeConditional: true
  signatures:
    identityPolicy: repository
    timeout: 30s
YAML
printf 'kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  operators: []\n  bogus: 1\n' >"$c/imageset/seed-unknown.yaml"
printf 'a: &x [1, 2]\nb: *x\n' >"$c/imageset/seed-yaml-anchor.yaml"
# a real oc-mirror file whose channel has minVersion == maxVersion (NULL + 0
# in version.c's pre-release comparison before it was fixed)
cp "$src/tests/fixtures/oc-mirror-imagesets/tests/integration/testdata/imagesetconfigs/sparse_manifest/isc-archs-multi-release.yaml" \
	"$c/imageset/seed-ocmirror-archs-multi.yaml"
# oc-mirror v1's format in two documents; v2alpha1's platform fields
cat >"$c/imageset/seed-v1alpha2.yaml" <<'YAML'
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v1alpha2
archiveSize: 4
storageConfig:
  local:
    path: ./metadata
mirror:
  platform:
    channels:
    - name: stable-4.15
  blockedImages:
  - name: ^docker.io/library/(alpine|redis)
  samples:
  - name: ruby
---
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v1alpha2
archiveSize: 4
mirror:
  additionalImages:
  - name: registry.redhat.io/ubi9/ubi:latest
YAML
cat >"$c/imageset/seed-v2-platforms.yaml" <<'YAML'
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    kubeVirtContainer: true
    platforms:
    - os: linux
      architecture: s390x
    release: quay.io/openshift-release-dev/ocp-release:4.16.0-multi
  additionalImages:
  - name: quay.io/a/b:1
    platforms:
    - {os: linux, architecture: arm64}
YAML
printf -- '- !!str 1\n- "yes"\n- yes\n- 0x1F\n- -0.5e3\n- ~\n- {k: v, "n": null}\n- |\n  block\n---\n! x\n...\n' >"$c/imageset/seed-yaml-features.yaml"

# packmanifest and volume: packs of the sample store (one small, one with a blob split across volumes)
"$airlock" copy "oci:$src/samples/layout:quay.io/airlock-samples/ocp-v4.0-art-dev@sha256:7026db9f135613885a678be3b2a287ad01a12e62f37c4c6754a01fb7dfdd9437" \
	"oci:$tmp/small:quay.io/x/console:1" >/dev/null
mkdir -p "$tmp/small/signatures/sha256=$rel"
cp "$sig" "$tmp/small/signatures/sha256=$rel/"
"$airlock" pack --store "$tmp/small" -o "$tmp/p1" --volume-size 64K >/dev/null
"$airlock" copy "oci:$tmp/small:quay.io/x/console:1" "oci:$tmp/split:quay.io/x/console:1" >/dev/null
head -c 70000 /dev/zero | tr '\0' 'a' >"$tmp/big"
h=$(sha256sum "$tmp/big" | cut -d' ' -f1)
cp "$tmp/big" "$tmp/split/blobs/sha256/$h"
"$airlock" pack --store "$tmp/split" -o "$tmp/p2" --volume-size 64K >/dev/null
for p in p1 p2; do
	m=$(ls "$tmp/$p"/airlock-*.json)
	cp "$m" "$c/packmanifest/seed-$p.json"
	{
		cat "$m"
		for v in "$tmp/$p"/airlock-*-0*.tar; do printf '%s' "$sep"; cat "$v"; done
	} >"$c/volume/seed-$p"
done
# a pack whose first volume is cut short, and one without volumes
m=$(ls "$tmp/p1"/airlock-*.json)
{ cat "$m"; printf '%s' "$sep"; head -c 5000 "$tmp/p1"/airlock-*-0001.tar; } >"$c/volume/seed-truncated"
printf '{"airlockPack":1,"id":"fz","base":null,"volumes":[{"name":"airlock-fz-0001.tar","number":1,"size":0}],"entries":[{"path":"index.json","size":2,"sha256":"%s","volume":1}]}' \
	"$(printf '{}' | sha256sum | cut -d' ' -f1)" >"$c/packmanifest/seed-minimal.json"
printf '{"airlockPack":1,"id":"fz","volumes":[{"name":"airlock-fz-0001.tar","number":1,"size":1}],"entries":[{"path":"blobs/sha256/%s","size":4,"sha256":"%s","volume":1,"parts":[{"volume":1,"offset":0,"size":2,"sha256":"%s"},{"volume":1,"offset":2,"size":2,"sha256":"%s"}]}]}' \
	"$h" "$h" "$h" "$h" >"$c/packmanifest/seed-parts.json"
# a signed sequence (and an ill-typed one), and a sha512 blob split in two
e=$(printf '{}' | sha256sum | cut -d' ' -f1)
printf '{"airlockPack":1,"id":"fz","created":"2026-12-03T06:00:00Z","sequence":1796277523323,"base":null,"volumes":[{"name":"airlock-fz-0001.tar","number":1,"size":0}],"entries":[{"path":"index.json","size":2,"sha256":"%s","volume":1}]}' \
	"$e" >"$c/packmanifest/seed-sequence.json"
printf '{"airlockPack":1,"id":"fz","sequence":-1,"base":null,"volumes":[{"name":"airlock-fz-0001.tar","number":1,"size":0}],"entries":[{"path":"index.json","size":2,"sha256":"%s","volume":1}]}' \
	"$e" >"$c/packmanifest/seed-sequence-negative.json"
h5=$(printf 'abcd' | sha512sum | cut -d' ' -f1)
printf '{"airlockPack":1,"id":"fz","sequence":2,"volumes":[{"name":"airlock-fz-0001.tar","number":1,"size":1}],"entries":[{"path":"blobs/sha512/%s","size":4,"sha512":"%s","volume":1,"parts":[{"volume":1,"offset":0,"size":2,"sha256":"%s"},{"volume":1,"offset":2,"size":2,"sha256":"%s"}]}]}' \
	"$h5" "$h5" "$h" "$h" >"$c/packmanifest/seed-sha512.json"
du -sh "$c"
