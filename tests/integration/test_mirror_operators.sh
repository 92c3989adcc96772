#!/usr/bin/env bash
# test_mirror_operators.sh: airlock mirror with mirror.operators[] (two catalogs and a release in one run) -> store records -> pack -> unpack -> push to a loopback registry; a catalog update and a --since delta; refusals.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

if ! command -v python3 >/dev/null; then
	echo "SKIP: python3 missing"
	exit 77
fi

# Sources: two generated catalogs whose every image is a real image in the
# layout $T/src (mkcatalog.py --images), and a synthetic release in
# $T/release; airlock.sources reads them there.
python3 "$AL_TOOLS/mkcatalog.py" "$T/src" quay.io/example/catalog:v1 --images >/dev/null
python3 "$AL_TOOLS/mkcatalog.py" "$T/src" quay.io/example/big-catalog:v1 --bundles 20 --images >/dev/null
python3 "$AL_TOOLS/mkrelease.py" --out "$T/release" --components 3 --layer-size 20000 \
	--base-size 10000 --seed ops >/dev/null
rel=$(al_layout_names "$T/release" | grep release: | head -1)

isc() { # isc FILE CATALOG-TAG: the imageset of this test
	cat >"$1" <<EOF2
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $rel
  operators:
    - catalog: docker://quay.io/example/catalog:$2
      targetTag: $2-filtered
      packages:
        - name: alpha
    - catalog: docker://quay.io/example/big-catalog:v1
      targetCatalog: mirror/big
      packages:
        - name: big
          channels:
            - name: stable
              minVersion: 1.1.0
airlock:
  sources:
    - prefix: quay.io/example
      location: oci:$T/src
    - prefix: ${rel%%/release*}
      location: oci:$T/release
EOF2
}
isc "$T/isc.yaml" v1

# 1. one mirror run: the release and both catalogs
S=$T/store
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --parallel 3 --store "$S" --config "$T/isc.yaml"
al_check "mirror with 2 catalogs and a release exits 0" test "$AL_RC" = 0
al_check "the release is mirrored" grep -q "^mirrored 1 releases" "$T/out"
# alpha: heads of stable (1.3.0) and fast (2.0.0-rc.1), beta 1.1.0 for
# alpha 1.3.0's olm.package.required: 3 bundles, 7 images (bundle +
# operator each, kube-rbac-proxy once)
al_check "catalog 1: 2 packages, 3 bundles, 7 images, rebuilt and named" \
	grep -q "^catalog quay.io/example/catalog:v1 -> quay.io/example/catalog:v1-filtered sha256:[0-9a-f]\{64\}: 2 packages, 3 bundles, 7 images$" "$T/out"
# big stable with minVersion 1.1.0: 1.1.0 .. 1.1.9 (the chain from the head
# 1.1.9 down to 1.1.0; 1.0.x are below the range): 10 bundles, each a
# bundle, an operator and 3 operand images
al_check "catalog 2: 1 package, 10 bundles, 50 images, under targetCatalog" \
	grep -q "^catalog quay.io/example/big-catalog:v1 -> quay.io/mirror/big:v1 sha256:[0-9a-f]\{64\}: 1 packages, 10 bundles, 50 images$" "$T/out"
al_check "progress: per-catalog selection logged" \
	grep -q "catalog 'quay.io/example/big-catalog:v1': 1 packages, 10 bundles, 50 images selected" "$T/err"
al_check "every catalog image is in the store by digest" python3 - "$S" <<'PY'
import json, sys
s = sys.argv[1]
doc = json.load(open(s + "/airlock/releases.json"))
names = {m["digest"] for m in json.load(open(s + "/index.json"))["manifests"]}
cats = doc["catalogs"]
assert [c["name"] for c in cats] == ["quay.io/example/catalog:v1-filtered", "quay.io/mirror/big:v1"], cats
assert [len(c["images"]) for c in cats] == [7, 50]
for c in cats:
    assert c["digest"] in names and c["sourceDigest"] in names, c
    for i in c["images"]:
        assert i.split("@")[1] in names, i
assert cats[1]["targetCatalog"] == "mirror/big" and cats[1]["targetTag"] == "v1"
assert cats[0]["packages"] == 2 and cats[0]["bundles"] == 3
PY
al_run "$T/out2" "$T/err2" "$AIRLOCK" mirror --layout source --allow-unsigned --store "$S" --config "$T/isc.yaml"
al_check "a rerun transfers nothing" grep -q "transferred 0 blobs (0 bytes)" "$T/out2"
al_check "... and names the same rebuilt catalogs (deterministic)" \
	bash -c 'diff <(grep ^catalog "$1") <(grep ^catalog "$2")' _ "$T/out" "$T/out2"

al_run "$T/cats" "$T/err" "$AIRLOCK" catalogs --store "$S"
al_check "airlock catalogs lists both" bash -c '
	grep -qE "^quay.io/example/catalog:v1-filtered +sha256:[0-9a-f]{64} +2 +3 +7 +- +docker://quay.io/example/catalog:v1$" "$1" &&
	grep -qE "^quay.io/mirror/big:v1 +sha256:[0-9a-f]{64} +1 +10 +50 +- +docker://quay.io/example/big-catalog:v1$" "$1"' _ "$T/cats"
al_check "check is clean" bash -c '"$1" check --store "$2" | grep -q " 0 missing, 0 corrupt, 0 unreferenced"' _ "$AIRLOCK" "$S"

# a recorded catalog's images are roots: untagged, they are still checked
# and a gc keeps them
cp -a "$S" "$T/roots"
python3 - "$T/roots" <<'PY'
import json, sys
p = sys.argv[1] + "/index.json"
idx = json.load(open(p))
idx["manifests"] = [m for m in idx["manifests"]
                    if "big-operand" not in m.get("annotations", {}).get("org.opencontainers.image.ref.name", "")]
json.dump(idx, open(p, "w"))
PY
al_check "untagged catalog images stay referenced (no unreferenced blob)" \
	bash -c '"$1" check --store "$2" | grep -q " 0 missing, 0 corrupt, 0 unreferenced"' _ "$AIRLOCK" "$T/roots"
rm -f "$T/roots/blobs/sha256/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["catalogs"][1]["images"][0].split(":")[-1])' "$T/roots/airlock/releases.json")"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/roots"
al_check "a missing catalog image is reported naming the catalog" \
	grep -q "of catalog quay.io/mirror/big:v1" "$T/out" "$T/err"

# mirror sets: operator repositories, CatalogSource and ClusterCatalog
al_run "$T/ms" "$T/err" "$AIRLOCK" mirrorsets --layout source --store "$S" --registry 127.0.0.1:5000/mirror
al_check "IDMS gains the operator repositories" bash -c '
	grep -q "source: quay.io/example/alpha-bundle" "$1" &&
	grep -q "source: quay.io/example/big-operand-2" "$1"' _ "$T/ms"
al_check "a CatalogSource per catalog" bash -c '
	grep -q "image: 127.0.0.1:5000/mirror/example/catalog:v1-filtered" "$1" &&
	grep -q "image: 127.0.0.1:5000/mirror/mirror/big:v1" "$1" &&
	[ "$(grep -c "^kind: CatalogSource" "$1")" = 2 ]' _ "$T/ms"
al_check "a ClusterCatalog per catalog" bash -c '
	grep -q "ref: 127.0.0.1:5000/mirror/mirror/big:v1" "$1" &&
	[ "$(grep -c "^kind: ClusterCatalog" "$1")" = 2 ]' _ "$T/ms"
al_check "the mirrorsets output parses as YAML documents" python3 - "$T/ms" <<'PY'
import sys
try:
    import yaml
except ImportError:
    sys.exit(0)
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = sorted(d["kind"] for d in docs)
assert kinds.count("CatalogSource") == 2 and kinds.count("ClusterCatalog") == 2, kinds
assert "ImageDigestMirrorSet" in kinds, kinds
PY

# 2. pack, unpack: the catalog records travel
# signed and imported with --trust: push and mirrorsets leave out what
# an untrusted import named (docs/security.md "Marks of untrusted imports")
"$AIRLOCK" keygen -o "$T/packkey" >/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" pack -q --store "$S" -o "$T/p1" --sign "$T/packkey.key"
al_check "full pack exits 0" test "$AL_RC" = 0
id1=$(ls "$T/p1"/airlock-*.json | sed 's/.*airlock-\(.*\)\.json/\1/')
F=$T/far
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --trust "$T/packkey.pub" "$T/p1" --store "$F"
al_check "unpack exits 0" test "$AL_RC" = 0
al_run "$T/fcats" "$T/err" "$AIRLOCK" catalogs --store "$F"
al_check "the far store records both catalogs" \
	bash -c 'diff <(sed "s/  *[^ ]*  *docker:/ docker:/" "$1" | awk "{print \$1, \$2, \$3, \$4, \$5}") <(awk "{print \$1, \$2, \$3, \$4, \$5}" "$2")' _ "$T/cats" "$T/fcats"
al_check "the far store checks clean" bash -c '"$1" check --store "$2" | grep -q " 0 missing, 0 corrupt, 0 unreferenced"' _ "$AIRLOCK" "$F"
al_run "$T/cats" "$T/err" "$AIRLOCK" catalogs --store "$S"
al_check "the source store names the pack that carried each catalog" \
	bash -c '[ "$(grep -c " $2 " "$1")" = 2 ]' _ "$T/cats" "$id1"

# 3. push from the far store: the rebuilt catalogs and bundles keep digests
if command -v docker-registry >/dev/null && command -v skopeo >/dev/null; then
	al_start_registry "$T/reg"
	al_check "airlock push of the far store" "$AIRLOCK" push --layout source -q --store "$F" --tls-verify=false "docker://$REG_ADDR/mirror"
	al_check "pushed catalogs and their images keep their digests" python3 - "$F" "$REG_ADDR" <<'PY'
import json, subprocess, sys, hashlib
s, reg = sys.argv[1], sys.argv[2]
doc = json.load(open(s + "/airlock/releases.json"))
def raw(ref):
    return subprocess.run(["skopeo", "inspect", "--tls-verify=false", "--raw", "docker://" + ref],
                          check=True, capture_output=True).stdout
for c in doc["catalogs"]:
    repo = c["name"].split("/", 1)[1]
    got = "sha256:" + hashlib.sha256(raw("%s/mirror/%s" % (reg, repo))).hexdigest()
    assert got == c["digest"], (c["name"], got)
    for i in c["images"][:5]:
        r, d = i.split("@")
        b = raw("%s/mirror/%s@%s" % (reg, r.split("/", 1)[1], d))
        assert "sha256:" + hashlib.sha256(b).hexdigest() == d, i
PY
else
	echo "note: docker-registry or skopeo missing: the push is not checked"
fi

# 4. a catalog update: v2 adds alpha 1.4.0 at the head of stable
python3 "$AL_TOOLS/mkcatalog.py" "$T/src" quay.io/example/catalog:v2 --update --images >/dev/null
isc "$T/isc2.yaml" v2
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --store "$S" --config "$T/isc2.yaml"
al_check "mirror after the catalog update exits 0" test "$AL_RC" = 0
al_check "the updated catalog selects alpha 1.4.0 (still 3 bundles, 7 images)" \
	grep -q "^catalog quay.io/example/catalog:v2 -> quay.io/example/catalog:v2-filtered sha256:[0-9a-f]\{64\}: 2 packages, 3 bundles, 7 images$" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" pack -q --store "$S" -o "$T/p2" --since "$id1" --sign "$T/packkey.key"
al_check "delta pack exits 0" test "$AL_RC" = 0
# new blobs: alpha 1.4.0's bundle and operator images (layer, config and
# manifest each: 6), the updated catalog (its 4th layer, config,
# manifest: 3) and the rebuilt v2 catalog (its layer, config, manifest: 3)
al_check "the delta carries only the new bundles and the new catalog layers (12 blobs)" \
	python3 - "$T/p2" "$S" <<'PY'
import glob, json, sys
m = json.load(open(glob.glob(sys.argv[1] + "/airlock-*.json")[0]))
blobs = sorted(e["path"] for e in m["entries"] if e["path"].startswith("blobs/"))
assert len(blobs) == 12, blobs
PY
# the same delta from the far store's inventory (--have)
al_check "the far store's inventory lists its catalogs" python3 - "$("$AIRLOCK" inventory --store "$F" -o "$T/have.json" && echo "$T/have.json")" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
assert sorted(c["name"] for c in inv["catalogs"]) == ["quay.io/example/catalog:v1-filtered", "quay.io/mirror/big:v1"], inv["catalogs"]
PY
al_run "$T/out" "$T/err" "$AIRLOCK" pack -q --store "$S" -o "$T/p3" --have "$T/have.json"
al_check "a --have delta carries the same 12 blobs" python3 - "$T/p2" "$T/p3" <<'PY'
import glob, json, sys
def blobs(d):
    m = json.load(open(glob.glob(d + "/airlock-*.json")[0]))
    return sorted(e["path"] for e in m["entries"] if e["path"].startswith("blobs/"))
assert blobs(sys.argv[1]) == blobs(sys.argv[2]) and len(blobs(sys.argv[2])) == 12
PY
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --trust "$T/packkey.pub" "$T/p2" --store "$F"
al_check "unpack of the delta exits 0" test "$AL_RC" = 0
al_run "$T/fcats" "$T/err" "$AIRLOCK" catalogs --store "$F"
al_check "the far store records the updated catalog too" \
	grep -qE "^quay.io/example/catalog:v2-filtered +sha256:[0-9a-f]{64} +2 +3 +7 " "$T/fcats"
al_check "the far store checks clean after the delta" bash -c '"$1" check --store "$2" | grep -q " 0 missing, 0 corrupt, 0 unreferenced"' _ "$AIRLOCK" "$F"

# 5. failures: a catalog with a missing image is not named and fails the run
cp -a "$T/src" "$T/src-broken"
python3 - "$T/src-broken" <<'PY'
import json, sys
p = sys.argv[1] + "/index.json"
idx = json.load(open(p))
idx["manifests"] = [m for m in idx["manifests"]
                    if "big-operand-1" not in m.get("annotations", {}).get("org.opencontainers.image.ref.name", "")]
json.dump(idx, open(p, "w"))
PY
sed "s|oci:$T/src\$|oci:$T/src-broken|" "$T/isc.yaml" >"$T/isc-broken.yaml"
for b in $(python3 -c 'import json,sys; [print(i.split(":")[-1]) for i in json.load(open(sys.argv[1]))["catalogs"][1]["images"] if "big-operand-1@" in i]' "$S/airlock/releases.json"); do
	rm -f "$T/src-broken/blobs/sha256/$b"
done
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --store "$T/b" --config "$T/isc-broken.yaml"
al_check "a catalog whose images fail: exit 3" test "$AL_RC" = 3
al_check "... the other catalog and the release are mirrored" bash -c '
	grep -q "^mirrored 1 releases" "$1" &&
	grep -q "^catalog quay.io/example/catalog:v1 -> quay.io/example/catalog:v1-filtered " "$1"' _ "$T/out"
al_check "... the failed catalog says how many images failed" \
	grep -q "^catalog quay.io/example/big-catalog:v1: failed (10 of 50 images failed)$" "$T/out"
al_check "... each failed image is named with its catalog" \
	grep -q "^airlock: error: quay.io/example/big-operand-1@sha256:[0-9a-f]* (image of catalog 'quay.io/example/big-catalog:v1')" "$T/err"
al_check "... and the rebuilt catalog is neither named nor recorded" bash -c '
	! grep -q "quay.io/mirror/big:v1" "$1/index.json" &&
	[ "$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))[\"catalogs\"]))" "$1/airlock/releases.json")" = 1 ]' _ "$T/b"

# a filter that matches nothing: named with file:line and what exists
sed 's/- name: alpha/- name: nosuch/' "$T/isc.yaml" >"$T/isc-nosuch.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --store "$T/n" --config "$T/isc-nosuch.yaml"
al_check "an unknown package fails the run" test "$AL_RC" != 0
al_check "... naming file:line, the package and what exists" \
	grep -q "isc-nosuch.yaml:7: .*package 'nosuch' not found in the catalog; it has alpha, beta, gamma" "$T/err"

# fields airlock cannot honour are refused with file:line:col, never ignored
sed 's/      targetTag: v1-filtered/      targetTag: v1-filtered\n      targetName: other/' "$T/isc.yaml" >"$T/isc-field.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --store "$T/f" --config "$T/isc-field.yaml"
al_check "an unsupported operator field: exit 2" test "$AL_RC" = 2
al_check "... named with file:line:col" grep -q "isc-field.yaml:9:7: .*targetName" "$T/err"
al_check "... and nothing was mirrored" test ! -e "$T/f/index.json"

# operators only (no release, no keyring needed)
cat >"$T/isc-only.yaml" <<EOF2
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
    - catalog: oci:$T/src:quay.io/example/catalog:v1
      targetCatalog: olm/example-catalog
      targetTag: v1
      packages:
        - name: alpha
airlock:
  sources:
    - prefix: quay.io/example
      location: oci:$T/src
EOF2
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --store "$T/only" --config "$T/isc-only.yaml"
al_check "an oci: catalog alone, no keyring: exit 0" test "$AL_RC" = 0
al_check "... rebuilt as localhost/olm/example-catalog:v1" \
	grep -q "^catalog localhost/olm/example-catalog:v1 -> localhost/olm/example-catalog:v1 sha256:[0-9a-f]*: 2 packages, 3 bundles, 7 images$" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --store "$T/only2" --image "oci:$T/src:quay.io/example/catalog:v1"
al_check "additional images alone need no keyring either" test "$AL_RC" = 0

al_finish
