#!/usr/bin/env bash
# test_layout_ocmirror.sh: oc-mirror v2's layout by default: a synthetic release mirrored, its mirror sets equal to oc-mirror's expected ones byte for byte (tests/data/ocmirror-resources), push and mirror --to putting the release at openshift/release-images:<tag> and its components at openshift/release:<tag>-<name>, --layout source keeping the source paths.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

fixtures=$AL_SOURCE_DIR/tests/data/ocmirror-resources
release=quay.io/openshift-release-dev/release:4.14.38-x86_64
python3 "$AL_TOOLS/mkrelease.py" --out "$T/rel" --prefix quay.io/openshift-release-dev \
	--version 4.14.38 --components 2 --seed layout >/dev/null
cat >"$T/imageset.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $release
airlock:
  sources:
  - prefix: quay.io/openshift-release-dev
    location: "oci:$T/rel"
YAML
store=$T/store
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --store "$store" \
	--cluster-resources "$T/cr" --registry myregistry/mynamespace
cat "$T/err"
al_check "mirror with --cluster-resources: exit 0" test "$AL_RC" = 0

# normalise what oc-mirror and airlock write differently on purpose: the
# time and the two provenance annotations (README.md)
norm() {
	sed -E -e 's/^(    createdAt: )"[^"]*"$/\1"CREATED_AT"/' \
		-e 's/^(    createdBy: ).*$/\1CREATED_BY/' \
		-e 's/^(    oc-mirror_version: ).*$/\1VERSION/' "$1"
}
for f in idms-oc-mirror.yaml itms-oc-mirror.yaml; do
	al_check "$f: oc-mirror's file name, written by default" test -f "$T/cr/$f"
	norm "$T/cr/$f" >"$T/$f.norm" 2>/dev/null || true
	al_check "$f equals oc-mirror's expected output byte for byte (times normalised)" \
		diff -u "$fixtures/$f" "$T/$f.norm"
done
al_check "no airlock-named mirror sets beside them" \
	bash -c '! ls "$1" | grep -q airlock' _ "$T/cr"

# the bundled sample release, signed: oc-mirror's one signature ConfigMap
samples=$AL_SOURCE_DIR/samples
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$T/samples" \
	--cluster-resources "$T/crs" --registry myregistry/mynamespace
cat "$T/err"
al_check "samples with --cluster-resources: exit 0" test "$AL_RC" = 0
al_check "signature-configmap.yaml and .json (oc-mirror's files), no per-release file" \
	bash -c 'test -s "$1/signature-configmap.yaml" && test -s "$1/signature-configmap.json" && ! ls "$1" | grep -q "^signature-sha256"' _ "$T/crs"
al_check "the ConfigMap is oc-mirror's: its name, namespace, label, annotations, key sha256-<hex>-1 holding the signature" \
	python3 - "$T/crs" "$samples/signatures" <<'PY'
import base64, json, os, sys, yaml
d, sigdir = sys.argv[1], sys.argv[2]
y = yaml.safe_load(open(os.path.join(d, "signature-configmap.yaml")))
j = json.load(open(os.path.join(d, "signature-configmap.json")))
for cm in (y, j):
    assert cm["apiVersion"] == "v1" and cm["kind"] == "ConfigMap", cm
    md = cm["metadata"]
    assert md["name"] == "mirrored-release-signatures", md
    assert md["namespace"] == "openshift-config-managed", md
    assert md["labels"] == {"release.openshift.io/verification-signatures": ""}, md
    assert sorted(md["annotations"]) == ["createdAt", "createdBy", "oc-mirror_version"], md
    (sub,) = os.listdir(sigdir)
    hexd = sub.split("=", 1)[1]
    want = open(os.path.join(sigdir, sub, "signature-1"), "rb").read()
    assert list(cm["binaryData"]) == ["sha256-%s-1" % hexd], cm["binaryData"].keys()
    assert base64.b64decode(cm["binaryData"]["sha256-%s-1" % hexd]) == want
PY

# mirrorsets --layout source: one object named airlock, source paths
al_run "$T/src.yaml" "$T/err" "$AIRLOCK" mirrorsets --store "$store" \
	--registry myregistry/mynamespace --layout source -o -
al_check "mirrorsets --layout source: the source repository under the prefix" \
	grep -q -- '- myregistry/mynamespace/openshift-release-dev/release$' "$T/src.yaml"
al_check "mirrorsets --layout source: one object named airlock" \
	bash -c '[ "$(grep -c "^  name: airlock$" "$1")" = 2 ]' _ "$T/src.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --store "$store" --registry r.example --layout tree -o -
al_check "--layout tree: usage error (exit 2)" test "$AL_RC" = 2

# ------------------------------------------------------------- push
al_start_registry "$T/reg"
R=$REG_ADDR
al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$store" --tls-verify=false "docker://$R/ocm"
cat "$T/err"
al_check "push (default layout): exit 0" test "$AL_RC" = 0
want=$(al_digest_of "$T/rel" "$release")
got=$("${SKOPEO[@]}" inspect --no-tags --tls-verify=false --format '{{.Digest}}' \
	"docker://$R/ocm/openshift/release-images:4.14.38-x86_64" 2>&1 || true)
al_check "the release is at openshift/release-images:4.14.38-x86_64 with its digest" \
	bash -c '[ -n "$1" ] && [ "$1" = "$2" ]' _ "$want" "$got"
"${SKOPEO[@]}" list-tags --tls-verify=false "docker://$R/ocm/openshift/release" >"$T/tags.json" 2>&1 || true
cat "$T/tags.json"
al_check "the 2 components are at openshift/release:4.14.38-x86_64-<name>" \
	python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["Tags"]; sys.exit(not (len(t)==2 and all(x.startswith("4.14.38-x86_64-") for x in t)))' "$T/tags.json"
al_check "nothing at the source path" \
	bash -c '! "${@:2}" inspect --raw --tls-verify=false "docker://$1/ocm/openshift-release-dev/release:4.14.38-x86_64" >/dev/null 2>&1' \
	_ "$R" "${SKOPEO[@]}"
al_run "$T/ms.yaml" "$T/err" "$AIRLOCK" mirrorsets --store "$store" -o -
al_check "mirrorsets from the push record: oc-mirror's objects for R/ocm" \
	bash -c 'grep -q "^  name: idms-release-0$" "$2" && grep -q -- "- $1/ocm/openshift/release-images$" "$2"' _ "$R" "$T/ms.yaml"

al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$store" --tls-verify=false --layout source "docker://$R/src"
al_check "push --layout source: exit 0" test "$AL_RC" = 0
al_check "push --layout source: the release at its source path" \
	bash -c '"${@:2}" inspect --raw --tls-verify=false "docker://$1/src/openshift-release-dev/release:4.14.38-x86_64" >/dev/null' \
	_ "$R" "${SKOPEO[@]}"
al_run "$T/ms2.yaml" "$T/err" "$AIRLOCK" mirrorsets --store "$store" -o -
al_check "mirrorsets after push --layout source follows the record" \
	grep -q -- "- $R/src/openshift-release-dev/release$" "$T/ms2.yaml"

# ------------------------------------------------------- mirror --to
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --store "$T/store2" \
	--tls-verify=false --to "docker://$R/to"
cat "$T/err"
al_check "mirror --to: exit 0" test "$AL_RC" = 0
al_check "mirror --to: the release at openshift/release-images" \
	bash -c '"${@:2}" inspect --raw --tls-verify=false "docker://$1/to/openshift/release-images:4.14.38-x86_64" >/dev/null' \
	_ "$R" "${SKOPEO[@]}"

al_finish
