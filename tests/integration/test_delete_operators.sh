#!/usr/bin/env bash
# test_delete_operators.sh: oc-mirror's DeleteImageSetConfiguration forms for catalogs on a store airlock mirrored: delete.operators[].packages (the package's images go, what a kept package depends on stays), a catalog pinned by digest without targetTag (mirrored, tagged with the digest's hex) found again by delete, and graph: true with no graph image.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v python3 >/dev/null || al_skip "python3 is needed for mkcatalog.py"

python3 "$AL_TOOLS/mkcatalog.py" "$T/src" quay.io/example/catalog:v1 --images >/dev/null
names() { # names STORE: the index.json names, sorted
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1] + "/index.json"))
print("\n".join(sorted(m.get("annotations", {}).get("org.opencontainers.image.ref.name", "") for m in d["manifests"])))' "$1"
}
isc() { # isc FILE CATALOG
	cat >"$1" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
    - catalog: docker://$2
      packages:
        - name: alpha
        - name: beta
airlock:
  sources:
    - prefix: quay.io/example
      location: oci:$T/src
EOF
}

# alpha (heads of stable and fast) and beta: beta 2.0.0 is beta's head,
# beta 1.1.0 what alpha 1.3.0 requires (olm.package.required)
isc "$T/isc.yaml" quay.io/example/catalog:v1
S=$T/store
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --store "$S" --config "$T/isc.yaml"
al_check "the catalog with alpha and beta is mirrored" test "$AL_RC" = 0
names "$S" >"$T/before"
al_check "the store holds 4 beta images" test "$(grep -c 'example/beta-' "$T/before")" = 4

# oc-mirror's form (tests/e2e/.../delete-config-72708.yaml): a package of
# a catalog, here every version of it (full: true)
cat >"$T/del.yaml" <<'EOF'
kind: DeleteImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
delete:
  operators:
  - catalog: docker://quay.io/example/catalog:v1
    full: true
    packages:
    - name: beta
EOF
al_run "$T/out" "$T/err" "$AIRLOCK" imageset check "$T/del.yaml"
al_check "imageset check reads the DeleteImageSetConfiguration" \
	grep -qF "accepted: DeleteImageSetConfiguration mirror.openshift.io/v2alpha1, 0 releases, 0 channels, 0 additional images, 1 operator catalogs (1 by package)" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$S" -c "$T/del.yaml"
cat "$T/out" "$T/err"
al_check "delete by package exits 0" test "$AL_RC" = 0
names "$S" >"$T/after"
al_check "2 beta images are gone (beta 2.0.0, bundle and operator)" \
	bash -c '[ "$(grep -c "example/beta-" "$1")" = 2 ] && [ "$(grep -c "^deleted name .*example/beta-" "$2")" = 2 ]' _ "$T/after" "$T/out"
al_check "what alpha requires (beta 1.1.0) stays" \
	bash -c 'for n in $(grep "example/beta-" "$1"); do grep -qxF "$n" "$2" || exit 1; done' _ "$T/after" "$T/before"
al_check "every alpha image, the shared kube-rbac-proxy and the catalog stay" \
	bash -c '[ "$(grep -c -e "example/alpha-" -e "kube-rbac-proxy" -e "catalog:v1" "$1")" = "$(grep -c -e "example/alpha-" -e "kube-rbac-proxy" -e "catalog:v1" "$2")" ]' _ "$T/after" "$T/before"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$S"
al_check "the store checks after the delete" test "$AL_RC" = 0

# a catalog pinned by digest, no targetTag: mirrored (it was refused with
# exit 3), tagged with the digest's hex as oc-mirror's destination
dg=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1] + "/index.json"))
print([m["digest"] for m in d["manifests"] if m.get("annotations", {}).get("org.opencontainers.image.ref.name", "").endswith("catalog:v1")][0])' "$T/src")
isc "$T/isc-d.yaml" "quay.io/example/catalog@$dg"
S2=$T/store2
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --store "$S2" --config "$T/isc-d.yaml"
cat "$T/err"
al_check "a catalog pinned by digest without targetTag is mirrored" test "$AL_RC" = 0
al_check "its rebuilt catalog is tagged with the digest's hex" \
	grep -qxF "quay.io/example/catalog:${dg#sha256:}" <(names "$S2")
cat >"$T/del-d.yaml" <<EOF
kind: DeleteImageSetConfiguration
apiVersion: mirror.openshift.io/v1alpha2
delete:
  platform:
    graph: true
  operators:
  - catalog: quay.io/example/catalog@$dg
    packages:
    - name: alpha
EOF
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$S2" -c "$T/del-d.yaml" --dry-run
cat "$T/out" "$T/err"
al_check "v1alpha2, by digest: the alpha heads would go, graph: true warns that there is no graph image" \
	bash -c '[ "$1" = 0 ] && grep -q "^would delete name .*example/alpha-bundle" "$2" && grep -q "no graph image" "$3"' _ "$AL_RC" "$T/out" "$T/err"

al_finish
