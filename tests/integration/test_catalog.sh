#!/usr/bin/env bash
# test_catalog.sh: airlock catalog filter on generated catalog images: selection, images, rebuilt image read by umoci, resources, errors.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

if ! command -v umoci >/dev/null || ! command -v python3 >/dev/null; then
	echo "SKIP: umoci (Debian package umoci) or python3 missing"
	exit 77
fi

S=$T/store
python3 "$AL_TOOLS/mkcatalog.py" "$S" quay.io/example/catalog:v1 >/dev/null
python3 "$AL_TOOLS/mkcatalog.py" "$S" quay.io/example/old-index:v4.10 --sqlite >/dev/null

cat >"$T/isc.yaml" <<'EOF'
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
    - catalog: docker://quay.io/example/catalog:v1
      targetTag: v1-filtered
      packages:
        - name: alpha
EOF

# heads of alpha's channels (stable 1.3.0, fast 2.0.0-rc.1) and, for
# alpha 1.3.0's olm.package.required beta >=1.0.0 <2.0.0, beta 1.1.0:
# bundle + operator image each, plus the kube-rbac-proxy alpha 1.3.0 uses
al_run "$T/out" "$T/err" "$AIRLOCK" catalog filter --store "$S" --config "$T/isc.yaml" \
	--fbc "$T/fbc" --resources "$T/res" --registry 127.0.0.1:5000/mirror
al_check "catalog filter exits 0" test "$AL_RC" = 0
al_check "7 images listed" test "$(wc -l <"$T/out")" = 7
al_check "the images are by digest" bash -c '! grep -v "@sha256:[0-9a-f]\{64\}$" "$1"' _ "$T/out"
for want in alpha-bundle alpha-operator beta-bundle beta-operator kube-rbac-proxy; do
	al_check "images include $want" grep -q "/$want@" "$T/out"
done
al_check "no gamma, no stale image" bash -c '! grep -qE "gamma|stale" "$1"' _ "$T/out"
al_check "the rebuilt catalog is tagged in the store" \
	bash -c 'al_digest_of() { python3 -c "import json,sys; print([m[\"digest\"] for m in json.load(open(sys.argv[1]+\"/index.json\"))[\"manifests\"] if m.get(\"annotations\",{}).get(\"org.opencontainers.image.ref.name\")==sys.argv[2]][0])" "$1" "$2"; }; al_digest_of "$1" quay.io/example/catalog:v1-filtered' _ "$S"
al_check "filtered FBC written per package" \
	test -f "$T/fbc/catalog-v1-filtered/alpha/catalog.json" -a \
	-f "$T/fbc/catalog-v1-filtered/beta/catalog.json" -a \
	! -e "$T/fbc/catalog-v1-filtered/gamma"

# an independent reader: umoci
umoci unpack --rootless --image "$S:quay.io/example/catalog:v1-filtered" "$T/bundle" >/dev/null 2>&1 &&
	al_pass "umoci unpacks the rebuilt catalog" || al_fail "umoci unpacks the rebuilt catalog"
(cd "$T/bundle/rootfs" 2>/dev/null && find configs | sort) >"$T/files" || true
printf 'configs\nconfigs/alpha\nconfigs/alpha/catalog.json\nconfigs/beta\nconfigs/beta/catalog.json\n' >"$T/want"
al_check "the unpacked image holds the filtered catalog only (no stale files)" diff -u "$T/want" "$T/files"
al_check "the serving cache is gone" test ! -e "$T/bundle/rootfs/tmp/cache"
al_check "the unpacked catalog.json equals the --fbc output" \
	cmp "$T/bundle/rootfs/configs/alpha/catalog.json" "$T/fbc/catalog-v1-filtered/alpha/catalog.json"
al_check "umoci sees the label and a command without --cache-dir" \
	bash -c 'python3 - "$1" <<'"'"'PY'"'"'
import json, sys
c = json.load(open(sys.argv[1] + "/config.json"))
args = c["process"]["args"]
assert args == ["/bin/opm", "serve", "/configs"], args
PY' _ "$T/bundle"
al_check "the store checks clean after the rebuild" "$AIRLOCK" check --store "$S"

al_check "CatalogSource written" grep -q "image: 127.0.0.1:5000/mirror/example/catalog:v1-filtered" \
	"$T/res/cs-catalog-v1-filtered.yaml"
al_check "ClusterCatalog written" grep -q "ref: 127.0.0.1:5000/mirror/example/catalog:v1-filtered" \
	"$T/res/cc-catalog-v1-filtered.yaml"

# a second run is deterministic: the same rebuilt digest
d1=$(python3 -c 'import json,sys; print([m["digest"] for m in json.load(open(sys.argv[1]))["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"].endswith("v1-filtered")][0])' "$S/index.json")
"$AIRLOCK" catalog filter --store "$S" --config "$T/isc.yaml" >/dev/null 2>&1 || true
d2=$(python3 -c 'import json,sys; print([m["digest"] for m in json.load(open(sys.argv[1]))["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"].endswith("v1-filtered")][0])' "$S/index.json")
al_check "rebuilding again gives the same digest" test "$d1" = "$d2"

# the rebuilt catalog keeps its digest in a loopback registry
if command -v docker-registry >/dev/null && command -v skopeo >/dev/null; then
	al_start_registry "$T/reg"
	al_check "airlock push of the store" "$AIRLOCK" push --layout source -q --store "$S" --tls-verify=false "docker://$REG_ADDR/mirror"
	got=$("${SKOPEO[@]}" inspect --tls-verify=false --raw "docker://$REG_ADDR/mirror/example/catalog:v1-filtered" | sha256sum | cut -d' ' -f1)
	al_check "the pushed catalog has the store's digest" test "sha256:$got" = "$d2"
	al_check "skopeo reads the pushed catalog's config label" bash -c \
		'"${@:2}" inspect --tls-verify=false "docker://$1/mirror/example/catalog:v1-filtered" | grep -q "operators.operatorframework.io.index.configs.v1"' \
		_ "$REG_ADDR" "${SKOPEO[@]}"
	al_stop "$REG_PID"
else
	echo "note: docker-registry or skopeo missing: the push is not checked"
fi

# --mirror: fetch the catalog and every image it needs (airlock.sources
# reads quay.io/example from a layout with real images)
python3 "$AL_TOOLS/mkcatalog.py" "$T/src" quay.io/example/catalog:v1 --images >/dev/null
cat >"$T/isc-m.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
    - catalog: docker://quay.io/example/catalog:v1
      targetTag: v1-filtered
      packages:
        - name: alpha
airlock:
  sources:
    - prefix: quay.io/example
      location: oci:$T/src
EOF
al_run "$T/out" "$T/err" "$AIRLOCK" catalog filter --mirror --store "$T/m" --config "$T/isc-m.yaml"
al_check "catalog filter --mirror into a new store exits 0" test "$AL_RC" = 0
al_check "7 images mirrored" grep -q "7 images, 14 blobs transferred" "$T/err"
al_check "every listed image is in the store by digest" bash -c '
	for i in $(cat "$1"); do grep -q "\"${i#*@}\"" "$2/index.json" || exit 1; done' _ "$T/out" "$T/m"
al_check "the mirrored store checks clean (the source catalog kept under its name)" \
	bash -c '"$1" check --store "$2" | grep -q " 0 missing, 0 corrupt, 0 unreferenced"' _ "$AIRLOCK" "$T/m"
al_run "$T/ms" "$T/err" "$AIRLOCK" mirrorsets --layout source --store "$T/m" --registry 127.0.0.1:5000/mirror
al_check "the ImageDigestMirrorSet gains the operator repositories" bash -c '
	grep -q "source: quay.io/example/alpha-bundle" "$1" &&
	grep -q "source: quay.io/example/beta-operator" "$1" &&
	grep -q "127.0.0.1:5000/mirror/example/openshift4/kube-rbac-proxy" "$1"' _ "$T/ms"
al_run "$T/out2" "$T/err2" "$AIRLOCK" catalog filter --mirror --store "$T/m" --config "$T/isc-m.yaml"
al_check "a second --mirror transfers nothing" grep -q "7 images, 0 blobs transferred (0 B), 14 already present" "$T/err2"

# an oci: catalog (a layout on disk), with --mirror
sed -e "s|docker://quay.io/example/catalog:v1|oci:$T/src:quay.io/example/catalog:v1|" \
	-e "s|targetTag: v1-filtered|targetCatalog: olm/example-catalog\n      targetTag: v1|" "$T/isc-m.yaml" >"$T/isc-oci.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" catalog filter --mirror --store "$T/o" --config "$T/isc-oci.yaml"
al_check "an oci: catalog filters and mirrors" test "$AL_RC" = 0
al_check "... tagged localhost/olm/example-catalog:v1" \
	bash -c '"$1" catalog list --store "$2" | grep -q "^localhost/olm/example-catalog:v1 sha256:[0-9a-f]* fbc packages=2 bundles=3$"' _ "$AIRLOCK" "$T/o"
al_check "... with the same 7 images" test "$(wc -l <"$T/out")" = 7

# a catalog update: the delta pack carries only the new catalog layers
U=$T/ustore
python3 "$AL_TOOLS/mkcatalog.py" "$U" quay.io/example/catalog:v1 >/dev/null
"$AIRLOCK" catalog filter --store "$U" --config "$T/isc.yaml" >"$T/img1" 2>/dev/null
al_check "first pack" bash -c '"$1" pack -q --store "$2" -o "$3" >/dev/null' _ "$AIRLOCK" "$U" "$T/p1"
id1=$(ls "$T/p1"/airlock-*.json | sed 's/.*airlock-\(.*\)\.json/\1/')
python3 "$AL_TOOLS/mkcatalog.py" "$U" quay.io/example/catalog:v2 --update >/dev/null
sed 's/catalog:v1/catalog:v2/' "$T/isc.yaml" >"$T/isc2.yaml"
"$AIRLOCK" catalog filter --store "$U" --config "$T/isc2.yaml" >"$T/img2" 2>/dev/null
al_check "after the update the new head alpha 1.4.0 is selected" \
	bash -c 'comm -13 "$1" "$2" | grep -q alpha-bundle' _ "$T/img1" "$T/img2"
al_check "the images that left are alpha 1.3.0's only" \
	test "$(comm -23 "$T/img1" "$T/img2" | wc -l)" = 2
al_check "delta pack" bash -c '"$1" pack -q --store "$2" -o "$3" --since "$4" >/dev/null' _ "$AIRLOCK" "$U" "$T/p2" "$id1"
# new: the update's layer, config and manifest; the rebuilt catalog's
# layer, config and manifest. Every base and older catalog layer is shared.
al_check "the delta holds 6 blobs (two new layers, configs, manifests) and the index" \
	python3 - "$T/p2" <<'PY'
import glob, json, sys
m = json.load(open(glob.glob(sys.argv[1] + "/airlock-*.json")[0]))
paths = sorted(e["path"] for e in m["entries"])
blobs = [p for p in paths if p.startswith("blobs/")]
assert len(blobs) == 6 and "index.json" in paths, paths
PY

# images named by tag are listed, with a warning (catalogs pin digests)
python3 "$AL_TOOLS/mkcatalog.py" "$T/tags" quay.io/example/catalog:v1 --tag-refs >/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" catalog filter --dry-run --store "$T/tags" --config "$T/isc.yaml"
al_check "tag references: exit 0, 7 images" bash -c '[ "$1" = 0 ] && [ "$(wc -l <"$2")" = 7 ]' _ "$AL_RC" "$T/out"
al_check "tag references: a warning says so" grep -q "airlock: warning: .*7 images are referenced by tag, not digest" "$T/err"
al_check "digest references: no such warning" bash -c '! "$1" catalog filter --dry-run --store "$2" --config "$3" 2>&1 >/dev/null | grep -q "referenced by tag"' _ "$AIRLOCK" "$S" "$T/isc.yaml"

# errors
sed 's/name: alpha/name: nosuch/' "$T/isc.yaml" >"$T/bad-pkg.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" catalog filter --store "$S" --config "$T/bad-pkg.yaml"
al_check "unknown package exits 2" test "$AL_RC" = 2
al_check "unknown package is named with what exists" \
	grep -q "package 'nosuch' not found in the catalog; it has alpha, beta, gamma" "$T/err"

sed 's/- name: alpha/- name: alpha\n          headsOnly: true/' "$T/isc.yaml" >"$T/bad-field.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" catalog filter --store "$S" --config "$T/bad-field.yaml"
al_check "unknown field exits 2" test "$AL_RC" = 2
al_check "unknown field named with file:line" grep -q "bad-field.yaml:9:11: unknown field 'headsOnly'" "$T/err"

sed 's|quay.io/example/catalog:v1|quay.io/example/old-index:v4.10|' "$T/isc.yaml" >"$T/sqlite.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" catalog filter --store "$S" --config "$T/sqlite.yaml"
# a catalog of a kind airlock does not support (AL_EUNSUPPORTED) is exit 1
# under the one exit-code map (docs/commands.md), as an unsupported
# signature or media type
al_check "SQLite catalog exits 1" test "$AL_RC" = 1
al_check "SQLite catalog refused with a message saying so" grep -q "SQLite-based catalog" "$T/err"

# 'airlock mirror' with mirror.operators[]: test_mirror_operators.sh

al_run "$T/out" "$T/err" "$AIRLOCK" catalog list --store "$S"
al_check "catalog list exits 0" test "$AL_RC" = 0
al_check "catalog list shows the source catalog" \
	grep -q "^quay.io/example/catalog:v1 sha256:[0-9a-f]* fbc packages=3 bundles=11$" "$T/out"
al_check "catalog list shows the rebuilt catalog" \
	grep -q "^quay.io/example/catalog:v1-filtered $d2 fbc packages=2 bundles=3$" "$T/out"
al_check "catalog list marks the SQLite catalog" \
	grep -q "^quay.io/example/old-index:v4.10 sha256:[0-9a-f]* sqlite (not supported)$" "$T/out"

al_run "$T/out" "$T/err" "$AIRLOCK" catalog --help
al_check "catalog --help exits 0 with usage" bash -c '[ "$1" = 0 ] && grep -q "usage: airlock catalog" "$2"' _ "$AL_RC" "$T/out"

al_finish
