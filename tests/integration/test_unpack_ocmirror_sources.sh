#!/usr/bin/env bash
# test_unpack_ocmirror_sources.sh: what an oc-mirror v2 archive import records: a release chosen through channels gets its real source and channel from the update graph the archive carries (oc-mirror's own test graph), operator images theirs from the carried catalog, the mirror sets name them and not oc-mirror's cache; the carried catalog is recorded as mirror records one, marked untrusted, so the mirror sets put its images in idms-operator-0 and leave the catalog image out; the release record is marked untrusted (releases, check, inventory, pack leave it out) until a trusted import of the release replaces it.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v python3 >/dev/null || al_skip "python3 is needed for the archive tools"

samples=$AL_SOURCE_DIR/samples
mkarch=$AL_TOOLS/ocmirror_archive.py
graph=$AL_SOURCE_DIR/tests/data/ocmirror/working-dir-fake/hold-release/cincinnati-graph-data/amd64-stable-4.13.json
src=$T/src
rel_hex=c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
payload=quay.io/openshift-release-dev/ocp-release@sha256:$rel_hex
GD=working-dir/hold-release/cincinnati-graph-data

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0

# ---- a release oc-mirror chose through channels: the archive holds it at
# openshift/release-images:<tag>, its components at
# openshift/release:<tag>-<name>, the configuration names only the
# channel, and working-dir carries the update graph oc-mirror read
renames=$(python3 - "$src" "$rel_hex" <<'PY'
import gzip, io, json, sys, tarfile
store, rel = sys.argv[1], sys.argv[2]
m = json.load(open("%s/blobs/sha256/%s" % (store, rel)))
layer = m["layers"][-1]["digest"].split(":")[1]
with tarfile.open(fileobj=io.BytesIO(gzip.decompress(open("%s/blobs/sha256/%s" % (store, layer), "rb").read()))) as t:
    refs = json.load(t.extractfile("release-manifests/image-references"))
seen = set()
for tag in refs["spec"]["tags"]:
    img = tag["from"]["name"]
    if img not in seen:
        seen.add(img)
        print("--rename=%s=openshift/release:4.14.1-x86_64-%s" % (img, tag["name"]))
PY
)
# oc-mirror's graph, its node 4.13.9 made the sample release
python3 - "$graph" "$T/amd64-stable-4.13.json" "$rel_hex" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
(n,) = [n for n in g["nodes"] if n["version"] == "4.13.9"]
n["version"] = "4.14.1"
n["payload"] = "quay.io/openshift-release-dev/ocp-release@sha256:" + sys.argv[3]
json.dump(g, open(sys.argv[2], "w"))
PY
printf '{"nodes": [' >"$T/amd64-broken.json"
cat >"$T/isc-channels.yaml" <<'YAML'
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    channels:
    - name: stable-4.13
      minVersion: 4.13.9
      maxVersion: 4.13.9
YAML
# shellcheck disable=SC2086 # one option a word
python3 "$mkarch" "$src" "$T/chan" --isc "$T/isc-channels.yaml" $renames \
	--rename quay.io/airlock-samples/release:4.14.1-x86_64=openshift/release-images:4.14.1-x86_64 \
	--file "$GD/amd64-stable-4.13.json=$T/amd64-stable-4.13.json" \
	--file "$GD/amd64-broken.json=$T/amd64-broken.json"
D=$T/dst
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/chan" --store "$D"
cat "$T/err"
al_check "unpack of a release chosen through channels: exit 0 (a graph that does not parse is only a warning)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" releases --json --store "$D"
al_check "releases --json: the release's source is its graph node's payload, its channel the graph's, the time the archive's, untrusted (pack oc-mirror)" \
	python3 - "$T/out" "$payload" <<'PY'
import json, sys
(r,) = json.load(open(sys.argv[1]))["releases"]
assert r["version"] == "4.14.1", r
assert r["source"] == sys.argv[2], r
assert r["channels"] == ["stable-4.13"], r
assert r["mirrored"] == "2026-12-05T00:00:00Z", r
assert r["components"] == 6, r
assert r["signatures"] == "unchecked", r
assert r["untrusted_pack"] == "oc-mirror", r
PY
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$D"
al_check "releases: SIGNATURES untrusted, CHANNELS stable-4.13" \
	grep -qE "^4\.14\.1 +sha256:$rel_hex +6 +untrusted +- +stable-4\.13$" "$T/out"
al_check "untrusted.json marks that record (its canonical JSON) under pack oc-mirror" \
	python3 - "$D" "$rel_hex" <<'PY'
import hashlib, json, sys
store, rel = sys.argv[1], sys.argv[2]
(rec,) = json.load(open(store + "/airlock/releases.json"))["releases"]
want = hashlib.sha256(json.dumps(rec, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
m = json.load(open(store + "/airlock/untrusted.json"))
assert m["releases"] == [{"release": "sha256:" + rel, "sha256": want, "pack": "oc-mirror"}], m["releases"]
PY
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$D"
al_check "check lists the untrusted release record" grep -q "^untrusted release record sha256:$rel_hex (4.14.1)" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" inventory --json --store "$D"
al_check "inventory --json lists the record under untrusted" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["inventory"]["untrusted"]["releases"]
sys.exit(0 if [(x["release"], x["pack"]) for x in r] == [("sha256:" + sys.argv[2], "oc-mirror")] else 1)' "$T/out" "$rel_hex"
# (the archives' names are marked untrusted: mapped with --push-untrusted)
al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --push-untrusted --store "$D" --registry mirror.example:5000/ocm -o "$T/ms-chan.yaml"
al_check "mirrorsets: exit 0, and no source is oc-mirror's cache" \
	bash -c '[ "$1" = 0 ] && ! grep -q "localhost:55000" "$2"' _ "$AL_RC" "$T/ms-chan.yaml"
al_check "mirrorsets: the graph's payload repository to openshift/release-images, in idms-release-0" \
	python3 - "$T/ms-chan.yaml" <<'PY'
import sys
docs = open(sys.argv[1]).read().split("\n---\n")
(rel,) = [d for d in docs if "name: idms-release-0" in d]
assert "- mirrors:\n    - mirror.example:5000/ocm/openshift/release-images\n    source: quay.io/openshift-release-dev/ocp-release\n" in rel, rel
assert "- mirrors:\n    - mirror.example:5000/ocm/openshift/release\n    source: quay.io/airlock-samples/ocp-v4.0-art-dev\n" in rel, rel
PY
al_run "$T/out" "$T/err" "$AIRLOCK" configmaps --store "$D" -o "$T/cm"
al_check "configmaps: the signature the archive carried is left out (exit 1, the release left with none)" \
	bash -c '[ "$1" = 1 ] && ! grep -rqs "sha256-$2-1" "$3"' _ "$AL_RC" "$rel_hex" "$T/cm"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/chan" --store "$D"
al_check "the same archives again: one record still" \
	python3 -c 'import json,sys; sys.exit(len(json.load(open(sys.argv[1]))["releases"]) != 1)' "$D/airlock/releases.json"
# oc-mirror's next archives (a delta) carry its whole cache tree again
# shellcheck disable=SC2086 # one option a word
python3 "$mkarch" "$src" "$T/chan2" --isc "$T/isc-channels.yaml" $renames \
	--rename quay.io/airlock-samples/release:4.14.1-x86_64=openshift/release-images:4.14.1-x86_64 \
	--file "$GD/amd64-stable-4.13.json=$T/amd64-stable-4.13.json" --time 2026-12-06T00:00:00Z
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/chan2" --store "$D"
al_check "later archives naming the release again (another time): exit 0, the first record alone" \
	python3 - "$AL_RC" "$D/airlock/releases.json" <<'PY'
import json, sys
(r,) = json.load(open(sys.argv[2]))["releases"]
sys.exit(0 if sys.argv[1] == "0" and r["mirrored"] == "2026-12-05T00:00:00Z" else 1)
PY

# ---- a release named in platform.release: its record's source is that
# reference, so verify matches the signature's identity (repository
# policy) against it, not against oc-mirror's cache
cat >"$T/isc-rel.yaml" <<'YAML'
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-samples/release:4.14.1-x86_64
YAML
# shellcheck disable=SC2086 # one option a word
python3 "$mkarch" "$src" "$T/rel" --isc "$T/isc-rel.yaml" $renames \
	--rename quay.io/airlock-samples/release:4.14.1-x86_64=openshift/release-images:4.14.1-x86_64
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/rel" --store "$T/dst-rel"
al_check "unpack of a release named in platform.release: exit 0" test "$AL_RC" = 0
al_check "its record's source is the configuration's reference" python3 -c '
import json, sys
(r,) = json.load(open(sys.argv[1]))["releases"]
sys.exit(0 if r["source"] == "quay.io/airlock-samples/release:4.14.1-x86_64" and "channels" not in r else 1)' \
	"$T/dst-rel/airlock/releases.json"
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$T/dst-rel" --no-default-keys --keyring "$samples/keys/release.gpg"
al_check "verify with the sample key: the carried signature's identity matches the source (exit 0)" \
	bash -c '[ "$1" = 0 ] && grep -q "^verified 4.14.1 sha256:$2" "$3"' _ "$AL_RC" "$rel_hex" "$T/out"

# ---- pack leaves the marked record out
"$AIRLOCK" keygen -o "$T/key" >/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$D" -o "$T/pd" --volume-size 64K --sign "$T/key.key"
al_check "a signed pack of the import exits 0" test "$AL_RC" = 0
al_check "... no volume holds the oc-mirror record (its time)" \
	bash -c '! grep -aq "2026-12-05T00:00:00Z" "$1"/airlock-*.tar' _ "$T/pd"

# ---- a trusted import of the release replaces the marked record
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/ps" --volume-size 64K --sign "$T/key.key"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/ps" --store "$D" --trust "$T/key.pub"
al_check "the sample store's signed pack imports with --trust (exit 0)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" releases --json --store "$D"
al_check "releases --json: the trusted record alone, verified, no untrusted pack" \
	python3 - "$T/out" <<'PY'
import json, sys
(r,) = json.load(open(sys.argv[1]))["releases"]
assert r["source"] == "quay.io/airlock-samples/release:4.14.1-x86_64", r
assert r["signatures"] == "verified", r
assert r["untrusted_pack"] is None, r
PY
al_check "... and no release mark is left" python3 -c '
import json, sys
sys.exit(0 if json.load(open(sys.argv[1])).get("releases") == [] else 1)' "$D/airlock/untrusted.json"

# ---- a name whose tag claims a digest it does not hold gets no origin
# from a reference pinned to that digest
add=quay.io/airlock-samples/ocp-v4.0-art-dev@sha256:7026db9f135613885a678be3b2a287ad01a12e62f37c4c6754a01fb7dfdd9437
cat >"$T/isc-add.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  additionalImages:
  - name: $add
YAML
python3 "$mkarch" "$src" "$T/lie" --isc "$T/isc-add.yaml" \
	--rename "quay.io/airlock-samples/release:4.14.1-x86_64=airlock-samples/ocp-v4.0-art-dev:sha256-${add##*:}"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/lie" --store "$T/dst-lie"
al_check "unpack: exit 0" test "$AL_RC" = 0
origin_of() { # STORE NAME: the origin recorded on NAME, or nothing
	python3 -c 'import json,sys
for m in json.load(open(sys.argv[1] + "/index.json"))["manifests"]:
    a = m.get("annotations", {})
    if a.get("org.opencontainers.image.ref.name") == sys.argv[2]:
        print(a.get("io.airlock.image.origin", ""))' "$1" "$2"
}
al_check "the tag holding another manifest has no origin" \
	test -z "$(origin_of "$T/dst-lie" "localhost:55000/airlock-samples/ocp-v4.0-art-dev:sha256-${add##*:}")"

# ---- operator images: the cache names them REPO:sha256-<hex>; the
# catalog the archive carries names each by its real reference
python3 "$AL_TOOLS/mkcatalog.py" "$T/cat" quay.io/example/catalog:v1 --images >/dev/null
cat >"$T/isc-op.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
    - catalog: docker://quay.io/example/catalog:v1
      packages:
        - name: alpha
airlock:
  sources:
    - prefix: quay.io/example
      location: oci:$T/cat
EOF
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --store "$T/osrc" --config "$T/isc-op.yaml"
al_check "mirror of a catalog's package alpha exits 0" test "$AL_RC" = 0
python3 "$mkarch" "$T/osrc" "$T/op" --digest-tags --isc "$T/isc-op.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/op" --store "$T/odst"
cat "$T/err"
al_check "unpack of the operator archive: exit 0" test "$AL_RC" = 0
al_check "every operator image (REPO:sha256-<hex>) has its real reference as origin, the catalog its configuration's" \
	python3 - "$T/osrc" "$T/odst" <<'PY'
import json, sys
def names(store):
    out = {}
    for m in json.load(open(store + "/index.json"))["manifests"]:
        a = m.get("annotations", {})
        out[a.get("org.opencontainers.image.ref.name", "")] = (m["digest"], a.get("io.airlock.image.origin"))
    return out
src, dst = names(sys.argv[1]), names(sys.argv[2])
ops = [n for n in src if "@sha256:" in n]
assert len(ops) >= 4, src
for n in ops:
    repo, d = n.split("@")
    cache = "localhost:55000/" + repo.split("/", 1)[1] + ":sha256-" + d.split(":")[1]
    assert dst[cache] == (d, n), (cache, dst.get(cache), n)
assert dst["localhost:55000/example/catalog:v1"][1] == "quay.io/example/catalog:v1", dst
PY
al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --push-untrusted --store "$T/odst" --registry mirror.example:5000/ocm -o "$T/ms-op.yaml"
al_check "mirrorsets of the operator import: exit 0, no source is oc-mirror's cache, quay.io/example (namespace scope) is" \
	bash -c '[ "$1" = 0 ] && ! grep -q "localhost:55000" "$2" && grep -qx "    source: quay.io/example" "$2"' _ "$AL_RC" "$T/ms-op.yaml"
cp "$T/err" "$T/ms-op.err"

# ---- the catalog record: as mirror writes one (the sample store's), its
# images by the names the import gave them, marked untrusted
al_check "releases.json records the catalog as mirror does: oc-mirror's cache name, digest, source, target, counts, the archives' time, its images by their names in the store" \
	python3 - "$T/osrc" "$T/odst" <<'PY'
import json, sys
(s,) = json.load(open(sys.argv[1] + "/airlock/releases.json"))["catalogs"]
(d,) = json.load(open(sys.argv[2] + "/airlock/releases.json"))["catalogs"]
assert d["name"] == "localhost:55000/example/catalog:v1", d
for k in ("digest", "source", "targetCatalog", "targetTag", "packages", "bundles"):
    assert d[k] == s[k], (k, d[k], s[k])
assert d["mirrored"] == "2026-12-05T00:00:00Z", d
assert "sourceName" not in d and "sourceDigest" not in d, d
want = sorted("localhost:55000/%s:sha256-%s" % (n.split("/", 1)[1].split("@")[0], n.split(":")[-1]) for n in s["images"])
assert len(want) >= 4 and d["images"] == want, (d["images"], want)
PY
al_check "untrusted.json marks the catalog record (its canonical JSON) under pack oc-mirror" \
	python3 - "$T/odst" <<'PY'
import hashlib, json, sys
(rec,) = json.load(open(sys.argv[1] + "/airlock/releases.json"))["catalogs"]
want = hashlib.sha256(json.dumps(rec, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
m = json.load(open(sys.argv[1] + "/airlock/untrusted.json"))
assert m["catalogs"] == [{"name": rec["name"], "sha256": want, "pack": "oc-mirror"}], m["catalogs"]
PY
al_run "$T/out" "$T/err" "$AIRLOCK" catalogs --store "$T/odst"
al_check "catalogs lists it: 2 packages, 3 bundles, 7 images, PACK untrusted, the configuration's source" \
	grep -qE '^localhost:55000/example/catalog:v1 +sha256:[0-9a-f]{64} +2 +3 +7 +untrusted +docker://quay\.io/example/catalog:v1$' "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --store "$T/osrc" --registry mirror.example:5000/ocm -o "$T/ms-osrc.yaml"
al_check "mirrorsets of the import: oc-mirror's idms-operator-0 alone, as the mirrored store's, no mirror set names the catalog image, no CatalogSource for the untrusted record (warned)" \
	python3 - "$T/ms-op.yaml" "$T/ms-osrc.yaml" "$T/ms-op.err" <<'PY'
import re, sys
def docs(p):
    out = {}
    for d in open(p).read().split("---\n"):
        k, n = re.search(r"^kind: (\S+)$", d, re.M), re.search(r"^  name: (\S+)$", d, re.M)
        if k and n:
            out[(k.group(1), n.group(1))] = re.sub(r'createdAt: "[^"]*"', "", d)
    return out
imp, src = docs(sys.argv[1]), docs(sys.argv[2])
assert list(imp) == [("ImageDigestMirrorSet", "idms-operator-0")], list(imp)
assert imp[("ImageDigestMirrorSet", "idms-operator-0")] == src[("ImageDigestMirrorSet", "idms-operator-0")], (imp, src)
assert ("CatalogSource", "cs-catalog-v1") in src, list(src)
assert "catalog" not in "".join(imp.values()), imp
assert "catalog localhost:55000/example/catalog:v1: its record was written by an untrusted import, left out" in open(sys.argv[3]).read()
PY
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/op" --store "$T/odst"
al_check "the same archives again: exit 0, one catalog record, one mark" \
	python3 - "$AL_RC" "$T/odst" <<'PY'
import json, sys
assert sys.argv[1] == "0"
assert len(json.load(open(sys.argv[2] + "/airlock/releases.json"))["catalogs"]) == 1
assert len(json.load(open(sys.argv[2] + "/airlock/untrusted.json"))["catalogs"]) == 1
PY

# ---- targetCatalog and targetTag, the catalog as fetched carried too: the
# record names the rebuilt one by its target, the fetched one as its source,
# and neither gets a mirror set entry
cp -r "$T/osrc" "$T/osrc2"
python3 - "$T/osrc2" <<'PY'
import json, sys
st = sys.argv[1]
d = json.load(open(st + "/airlock/releases.json"))["catalogs"][0]["sourceDigest"]
raw = open(st + "/blobs/sha256/" + d.split(":")[1], "rb").read()
idx = json.load(open(st + "/index.json"))
idx["manifests"].append({"mediaType": json.loads(raw)["mediaType"], "digest": d, "size": len(raw),
                         "annotations": {"org.opencontainers.image.ref.name": "quay.io/example/catalog:orig"}})
json.dump(idx, open(st + "/index.json", "w"))
PY
cat >"$T/isc-tgt.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
    - catalog: docker://quay.io/example/catalog:v1
      targetCatalog: mirrored/catalog
      targetTag: filtered
      packages:
        - name: alpha
EOF
python3 "$mkarch" "$T/osrc2" "$T/op2" --digest-tags --isc "$T/isc-tgt.yaml" \
	--rename quay.io/example/catalog:v1=mirrored/catalog:filtered \
	--rename quay.io/example/catalog:orig=example/catalog:v1
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/op2" --store "$T/odst2"
al_check "unpack of a catalog with targetCatalog/targetTag, the fetched catalog carried: exit 0" test "$AL_RC" = 0
al_check "its record: the target's cache name, the fetched catalog as sourceName/sourceDigest, targetCatalog/targetTag" \
	python3 - "$T/osrc" "$T/odst2" <<'PY'
import json, sys
(s,) = json.load(open(sys.argv[1] + "/airlock/releases.json"))["catalogs"]
(d,) = json.load(open(sys.argv[2] + "/airlock/releases.json"))["catalogs"]
assert d["name"] == "localhost:55000/mirrored/catalog:filtered", d
assert (d["digest"], d["sourceDigest"]) == (s["digest"], s["sourceDigest"]), d
assert d["sourceName"] == "localhost:55000/example/catalog:v1", d
assert (d["targetCatalog"], d["targetTag"]) == ("mirrored/catalog", "filtered"), d
assert len(d["images"]) == len(s["images"]), d
PY
al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --push-untrusted --store "$T/odst2" --registry mirror.example:5000/ocm -o "$T/ms-op2.yaml"
al_check "mirrorsets: idms-operator-0 alone, as the mirrored store's; neither catalog in a mirror set" \
	python3 - "$T/ms-op2.yaml" "$T/ms-osrc.yaml" <<'PY'
import re, sys
def idms(p):
    return [re.sub(r'createdAt: "[^"]*"', "", d) for d in open(p).read().split("---\n") if d.startswith("apiVersion")
            and "kind: CatalogSource" not in d and "kind: ClusterCatalog" not in d]
imp, src = idms(sys.argv[1]), idms(sys.argv[2])
assert imp == src and len(imp) == 1 and "name: idms-operator-0" in imp[0], (imp, src)
PY

# ---- a configured catalog whose cache name holds no catalog: a warning,
# no record
bundle=$(python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1] + "/airlock/releases.json"))["catalogs"][0]["images"])[0])' "$T/osrc")
sed 's|quay.io/example/catalog:v1|quay.io/example/notcat:v1|' "$T/isc-op.yaml" >"$T/isc-notcat.yaml"
python3 "$mkarch" "$T/osrc" "$T/op3" --digest-tags --isc "$T/isc-notcat.yaml" --rename "$bundle=example/notcat:v1"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/op3" --store "$T/odst3"
al_check "a configured catalog that is not one: exit 0, said, no catalog record" \
	python3 - "$AL_RC" "$T/odst3" "$T/err" <<'PY'
import json, os, sys
assert sys.argv[1] == "0"
rj = sys.argv[2] + "/airlock/releases.json"
assert not os.path.exists(rj) or json.load(open(rj)).get("catalogs", []) == []
assert "catalog 'localhost:55000/example/notcat:v1': not a file-based catalog: not recorded" in open(sys.argv[3]).read()
PY

al_finish
