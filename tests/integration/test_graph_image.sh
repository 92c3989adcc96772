#!/usr/bin/env bash
# test_graph_image.sh: mirror.platform.graph: true on the samples -> graph-data image (umoci unpack = 'airlock graph -o', digests) -> pack -> unpack -> push to a loopback registry -> UpdateService and catalog resources checked against their CRDs.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

for tool in umoci docker-registry skopeo python3; do
	command -v "$tool" >/dev/null || al_skip "$tool is not installed"
done
python3 -c 'import yaml' 2>/dev/null || al_skip "python3-yaml is not installed"

samples=$AL_SOURCE_DIR/samples
crd=$AL_SOURCE_DIR/tests/fixtures/cincinnati-operator/updateservice.operator.openshift.io_updateservices.yaml
crds=$AL_SOURCE_DIR/tests/data/crds
gname=localhost/openshift/graph-image:latest
rel=sha256:c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807

# An operator catalog (its images in $T/src) so that the cluster resources
# have catalog files too.
python3 "$AL_TOOLS/mkcatalog.py" "$T/src" quay.io/example/catalog:v1 --images >/dev/null

# The channel's graph as the update service would answer it: the sample
# release 4.14.1 and a 4.14.0 that was not mirrored.
cat >"$T/graph.json" <<JSON
{"nodes": [
  {"version": "4.14.0", "payload": "quay.io/airlock-samples/release@sha256:1111111111111111111111111111111111111111111111111111111111111111", "metadata": {}},
  {"version": "4.14.1", "payload": "quay.io/airlock-samples/release@$rel", "metadata": {}}],
 "edges": [[0, 1]], "conditionalEdges": []}
JSON
isc() { # isc FILE GRAPH
	cat >"$1" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    graph: $2
    channels:
    - name: stable-4.14
      minVersion: 4.14.1
      maxVersion: 4.14.1
  operators:
  - catalog: docker://quay.io/example/catalog:v1
    packages:
    - name: alpha
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: oci:$samples/layout
  - prefix: quay.io/example
    location: oci:$T/src
  signatures:
    keyrings: [$samples/keys/release.gpg]
    stores: [$samples/signatures]
YAML
}
isc "$T/isc.yaml" true
S=$T/store

# 1. mirror: the graph image is built from the saved graph, no network
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$T/isc.yaml" --graph-file "$T/graph.json" --store "$S"
cat "$T/err"
al_check "mirror with platform.graph: true exits 0" test "$AL_RC" = 0
al_check "the run names the graph image and its digest" \
	grep -q "graph image $gname: sha256:[0-9a-f]\{64\} (1 channels, 1 versions" "$T/err"
al_check "the store names $gname" grep -q "\"$gname\"" "$S/index.json"
d1=$(al_digest_of "$S" "$gname")
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$S"
al_check "airlock check is clean with the graph image" test "$AL_RC" = 0

# 2. the image: one gzip layer, diff_id and digests right, oc-mirror's command
al_check "manifest, config and layer digests, diff_ids, rootfs, history, Cmd" python3 - "$S" "$d1" <<'PY'
import gzip, hashlib, json, sys
store, digest = sys.argv[1], sys.argv[2]
def blob(d):
    data = open(f"{store}/blobs/sha256/{d.split(':')[1]}", "rb").read()
    assert "sha256:" + hashlib.sha256(data).hexdigest() == d, d
    return data
m = json.loads(blob(digest))
assert m["schemaVersion"] == 2 and m["mediaType"] == "application/vnd.oci.image.manifest.v1+json", m
assert m["config"]["mediaType"] == "application/vnd.oci.image.config.v1+json"
c = blob(m["config"]["digest"]); assert len(c) == m["config"]["size"]
c = json.loads(c)
assert len(m["layers"]) == 1, m["layers"]
l = m["layers"][0]
assert l["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip", l
data = blob(l["digest"]); assert len(data) == l["size"]
assert c["rootfs"] == {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(gzip.decompress(data)).hexdigest()]}, c["rootfs"]
assert len(c["history"]) == 1 and c["architecture"] == "amd64" and c["os"] == "linux", c
assert c["config"]["Cmd"] == ["/bin/bash", "-c", "exec cp -rp /var/lib/cincinnati-graph-data/* /var/lib/cincinnati/graph-data"], c["config"]
PY

# 3. umoci unpacks it to the tree 'airlock graph -o' writes, file by file
al_check "umoci unpack of the graph image" umoci unpack --rootless --image "$S:$gname" "$T/bundle"
al_run "$T/out" "$T/err" "$AIRLOCK" graph --store "$S" -o "$T/gd"
al_check "airlock graph -o exits 0" test "$AL_RC" = 0
root=$T/bundle/rootfs/var/lib/cincinnati-graph-data
(cd "$T/gd" && find . -mindepth 1 | sort) >"$T/want.lst"
(cd "$root" && find . -mindepth 1 | sort) >"$T/got.lst"
al_check "the layer holds the same paths as 'airlock graph -o'" cmp -s "$T/want.lst" "$T/got.lst"
al_check "the tree has channels/stable-4.14.yaml" \
	grep -qx './channels/stable-4.14.yaml' "$T/got.lst"
same=1
while read -r f; do
	[ -f "$T/gd/$f" ] || continue
	cmp -s "$T/gd/$f" "$root/$f" || { echo "differs: $f"; same=0; }
done <"$T/want.lst"
al_check "every file has the same bytes" test "$same" = 1
al_check "the channel lists the mirrored 4.14.1 only" bash -c "grep -q '4.14.1' '$root/channels/stable-4.14.yaml' && ! grep -q '4.14.0' '$root/channels/stable-4.14.yaml'"
al_check "nothing above /var/lib/cincinnati-graph-data but its parents" \
	test "$(cd "$T/bundle/rootfs" && find . -mindepth 1 -maxdepth 3 | sort | tr '\n' ' ')" = "./var ./var/lib ./var/lib/cincinnati-graph-data "

# 4. the same store and graph give the same image (and --json names it)
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$T/isc.yaml" --graph-file "$T/graph.json" --store "$S" --json
al_check "a second mirror builds the same digest" test "$(al_digest_of "$S" "$gname")" = "$d1"
al_check "mirror --json has graph_image with its name and digest" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["graph_image"] == {"name": sys.argv[2], "digest": sys.argv[3]}, d.get("graph_image")' "$T/out" "$gname" "$d1"

# 5. carried like any image: pack, unpack
# signed and imported with --trust: what an untrusted import writes is
# left out of the cluster resources (docs/security.md)
"$AIRLOCK" keygen -o "$T/packkey" >/dev/null
al_check "pack the store" "$AIRLOCK" pack -q --store "$S" -o "$T/vol" --sign "$T/packkey.key"
al_check "unpack it on the far side" "$AIRLOCK" unpack --trust "$T/packkey.pub" -q "$T/vol" --store "$T/far"
al_check "the far store names the graph image with the same digest" test "$(al_digest_of "$T/far" "$gname")" = "$d1"
# 'airlock graph --image' builds the same image from the same store
al_run "$T/out" "$T/err" "$AIRLOCK" graph --store "$S" --image
al_check "airlock graph --image exits 0" test "$AL_RC" = 0
al_check "and prints the same digest" grep -q "^graph image $gname $d1: 1 channels, 1 versions, 0 blocked edges$" "$T/out"
al_check_fails "graph --image with -o is a usage error" 2 "$AIRLOCK" graph --store "$S" --image -o "$T/x"

# 6. push from the far side, with the cluster resources
al_start_registry "$T/reg"
R=$REG_ADDR
al_run "$T/out" "$T/err" "$AIRLOCK" push --layout source --store "$T/far" --tls-verify=false "docker://$R/mirror" --cluster-resources "$T/cr"
cat "$T/err"
al_check "push with --cluster-resources exits 0" test "$AL_RC" = 0
got=$("${SKOPEO[@]}" inspect --tls-verify=false --format '{{.Digest}}' "docker://$R/mirror/openshift/graph-image:latest" 2>"$T/skopeo.err" || true)
al_check "the registry serves mirror/openshift/graph-image:latest with the store's digest" test "$got" = "$d1"
al_check "skopeo copies the pushed graph image back" "${SKOPEO[@]}" copy -q --src-tls-verify=false \
	"docker://$R/mirror/openshift/graph-image:latest" "oci:$T/back:g"
al_check "umoci unpacks the copy from the registry" umoci unpack --rootless --image "$T/back:g" "$T/bundle2"
al_check "the registry's copy holds the same tree" diff -r "$T/gd" "$T/bundle2/rootfs/var/lib/cincinnati-graph-data"

us=$T/cr/updateservice-airlock.yaml
al_check "cluster-resources has updateservice-airlock.yaml" test -s "$us"
al_check "the UpdateService validates against the cincinnati-operator CRD" python3 "$AL_TOOLS/crdcheck.py" "$crd" "$us"
al_check "spec.releases is the pushed release repository, graphDataImage the pushed image" python3 - "$us" "$R" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1])); r = sys.argv[2]
assert d["apiVersion"] == "updateservice.operator.openshift.io/v1" and d["kind"] == "UpdateService", d
assert d["metadata"] == {"name": "update-service-airlock", "namespace": "openshift-update-service"}, d["metadata"]
assert d["spec"] == {"replicas": 2, "releases": f"{r}/mirror/airlock-samples/release",
                     "graphDataImage": f"{r}/mirror/openshift/graph-image:latest"}, d["spec"]
PY
al_check "the release is in spec.releases' repository" bash -c '"${@}" >/dev/null' _ "${SKOPEO[@]}" inspect --tls-verify=false --raw \
	"docker://$R/mirror/airlock-samples/release@$rel"
al_check "the IDMS does not redirect the graph image" bash -c "! grep -q graph-image '$T/cr/idms-airlock.yaml'"
cs=$(ls "$T/cr"/cs-*.yaml 2>/dev/null | head -1 || true)
cc=$(ls "$T/cr"/cc-*.yaml 2>/dev/null | head -1 || true)
al_check "cluster-resources has a CatalogSource and a ClusterCatalog file" test -n "$cs" -a -n "$cc"
al_check "the CatalogSource validates against its CRD" python3 "$AL_TOOLS/crdcheck.py" "$crds/operators.coreos.com_catalogsources.yaml" "$cs"
al_check "the ClusterCatalog validates against its CRD" python3 "$AL_TOOLS/crdcheck.py" "$crds/olm.operatorframework.io_clustercatalogs.yaml" "$cc"
al_check "the CatalogSource points at the pushed catalog" grep -q "image: $R/mirror/example/catalog:v1" "$cs"

# the schema check can fail
sed 's/replicas: 2/replicas: 0/' "$us" >"$T/bad1.yaml"
al_check_fails "crdcheck refuses replicas 0" 1 python3 "$AL_TOOLS/crdcheck.py" "$crd" "$T/bad1.yaml"
sed 's/releases:/release:/' "$us" >"$T/bad2.yaml"
al_check_fails "crdcheck refuses a misspelt field (and the missing releases)" 1 python3 "$AL_TOOLS/crdcheck.py" "$crd" "$T/bad2.yaml"

# 7. oc-mirror's names
al_run "$T/out" "$T/err" "$AIRLOCK" push --layout source -q --store "$T/far" --tls-verify=false "docker://$R/mirror" --cluster-resources "$T/cr2" --oc-mirror-names
al_check "push --oc-mirror-names exits 0" test "$AL_RC" = 0
al_check "oc-mirror's updateService.yaml, named update-service-oc-mirror" \
	bash -c "grep -q 'name: update-service-oc-mirror' '$T/cr2/updateService.yaml'"
al_check "updateService.yaml validates against the CRD" python3 "$AL_TOOLS/crdcheck.py" "$crd" "$T/cr2/updateService.yaml"

# 8. without graph: true, no graph image and no UpdateService
isc "$T/isc2.yaml" false
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$T/isc2.yaml" --graph-file "$T/graph.json" --store "$T/plain" \
	--cluster-resources "$T/cr3" --registry "$R/mirror"
al_check "mirror with graph: false exits 0" test "$AL_RC" = 0
al_check "graph: false builds no graph image" bash -c "! grep -q graph-image '$T/plain/index.json'"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$T/isc2.yaml" --graph-file "$T/graph.json" --store "$T/plain" --json
al_check "and mirror --json has no graph_image" python3 -c '
import json, sys
assert "graph_image" not in json.load(open(sys.argv[1]))' "$T/out"
al_check "and writes no UpdateService" test ! -e "$T/cr3/updateservice-airlock.yaml"
al_check "mirror --cluster-resources writes the catalog files too" bash -c "ls '$T/cr3'/cs-*.yaml '$T/cr3'/cc-*.yaml >/dev/null"
# 9. on oc-mirror's base image when the store holds it: a stand-in for
# registry.access.redhat.com/ubi9/ubi:latest (a sample component image)
base=registry.access.redhat.com/ubi9/ubi:latest
comp=$(al_layout_names "$samples/layout" | grep '@sha256:' | head -1)
al_check "a stand-in base image in a layout" "${SKOPEO[@]}" copy -q "oci:$samples/layout:$comp" "oci:$T/ubi:$base"
isc "$T/isc3.yaml" true
sed -i "s|^  sources:|  sources:\n  - prefix: registry.access.redhat.com\n    location: oci:$T/ubi|" "$T/isc3.yaml"
sed -i "s|^  operators:|  additionalImages:\n  - name: $base\n  operators:|" "$T/isc3.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$T/isc3.yaml" --graph-file "$T/graph.json" --store "$T/based"
cat "$T/err"
al_check "mirror with the base image exits 0" test "$AL_RC" = 0
al_check "no warning about a missing base" bash -c "! grep -q 'is not in the store' '$T/err'"
al_check "the graph image is the base's layers plus the graph-data layer" python3 - "$T/based" "$(al_digest_of "$T/based" "$gname")" "$(al_digest_of "$T/based" "$base")" <<'PY'
import json, sys
store, g, b = sys.argv[1:4]
def j(d):
    return json.load(open(f"{store}/blobs/sha256/{d.split(':')[1]}"))
gm, bm = j(g), j(b)
assert [l["digest"] for l in gm["layers"][:-1]] == [l["digest"] for l in bm["layers"]], (gm, bm)
gc, bc = j(gm["config"]["digest"]), j(bm["config"]["digest"])
assert gc["rootfs"]["diff_ids"][:-1] == bc["rootfs"]["diff_ids"]
assert len(gc["rootfs"]["diff_ids"]) == len(gm["layers"])
assert gc["config"]["Cmd"][0] == "/bin/bash"
PY
al_check "umoci unpacks the based image" umoci unpack --rootless --image "$T/based:$gname" "$T/bundle3"
al_check "with the same graph-data tree" diff -r "$T/gd" "$T/bundle3/rootfs/var/lib/cincinnati-graph-data"
# 10. graph: true with no release to describe: an error that says why
cat >"$T/isc4.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    graph: true
  additionalImages:
  - name: $comp
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: oci:$samples/layout
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$T/isc4.yaml" --store "$T/norel"
al_check "graph: true without a release exits 3" test "$AL_RC" = 3
al_check "and says the store holds no release" grep -q "building the graph image (mirror.platform.graph): the store holds no release" "$T/err"
al_check "no graph image is named" bash -c "! grep -q graph-image '$T/norel/index.json'"
# 11. samples/imageset.yaml as it is, with graph: true: no network, the
# image is built; no channel lists the release, which is said
sed 's|^    release: \(.*\)|    release: \1\n    graph: true|' "$samples/imageset.yaml" >"$T/samples-graph.yaml"
sed -i "s|oci:layout|oci:$samples/layout|; s|- keys/|- $samples/keys/|; s|^    - signatures|    - $samples/signatures|" "$T/samples-graph.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$T/samples-graph.yaml" --store "$T/sg"
al_check "samples/imageset.yaml with graph: true exits 0" test "$AL_RC" = 0
al_check "the graph image is built (0 channels)" grep -q "graph image $gname: sha256:[0-9a-f]\{64\} (0 channels" "$T/err"
al_check "and a warning says no channel lists the release" grep -q "no channel lists a mirrored release" "$T/err"
al_check "umoci unpacks it to the empty layout" bash -c "umoci unpack --rootless --image '$T/sg:$gname' '$T/b4' >/dev/null && test -s '$T/b4/rootfs/var/lib/cincinnati-graph-data/version' && test -d '$T/b4/rootfs/var/lib/cincinnati-graph-data/channels'"
al_finish
