#!/usr/bin/env bash
# test_layout_commands.sh: the commands that name registry paths follow oc-mirror v2's layout by default, through the one mapping push uses (src/transfer/layout.c): mirror --dry-run's mapping.txt names where mirror --to then puts each image, delete --registry removes the manifests from openshift/release-images and openshift/release (the layout of the store's last push, or --layout), and push and mirror --to always write the cluster resources (STORE/airlock/cluster-resources without --cluster-resources, left with this run's files only, as oc-mirror's emptied working-dir/cluster-resources; an unchanged file is not rewritten).
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

release=quay.io/openshift-release-dev/release:4.14.38-x86_64
python3 "$AL_TOOLS/mkrelease.py" --out "$T/rel" --prefix quay.io/openshift-release-dev \
	--version 4.14.38 --components 2 --seed layoutcmd >/dev/null
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
al_start_registry "$T/reg"
R=$REG_ADDR
exists() { "${SKOPEO[@]}" inspect --raw --tls-verify=false "$1" >/dev/null 2>&1; }

# ------------------------------------------------ mirror --dry-run --to
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --store "$T/a" \
	--tls-verify=false --to "docker://$R/ocm" --dry-run="$T/dry"
cat "$T/err"
al_check "dry run with --to: exit 0" test "$AL_RC" = 0
al_check "mapping.txt: the release at openshift/release-images:<its tag> (prepareTag)" \
	grep -qx "docker://$release=docker://$R/ocm/openshift/release-images:4.14.38-x86_64" "$T/dry/mapping.txt"
al_check "mapping.txt: each of the 2 components at openshift/release:<tag>-<name>" \
	bash -c '[ "$(grep -c "=docker://$1/ocm/openshift/release:4.14.38-x86_64-[a-z-]*$" "$2")" = 2 ]' _ "$R" "$T/dry/mapping.txt"
al_check "mapping.txt: nothing at a source path" \
	bash -c '! grep -q "=docker://$1/ocm/openshift-release-dev/" "$2"' _ "$R" "$T/dry/mapping.txt"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --store "$T/a" \
	--tls-verify=false --to "docker://$R/ocm" --dry-run="$T/drysrc" --layout source --max-nested-paths 2
al_check "dry run --layout source --max-nested-paths 2: the release at its joined source path" \
	grep -qx "docker://$release=docker://$R/ocm-openshift-release-dev-release:4.14.38-x86_64" "$T/drysrc/mapping.txt"

# -------------------------------------- mirror --to: where mapping.txt said
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --store "$T/a" \
	--tls-verify=false --to "docker://$R/ocm"
cat "$T/err"
al_check "mirror --to: exit 0" test "$AL_RC" = 0
missing=0
while IFS='=' read -r _ dst; do
	exists "$dst" || { echo "not at $dst"; missing=$((missing + 1)); }
done <"$T/dry/mapping.txt"
al_check "every destination of the dry run's mapping.txt is in the registry after mirror --to" test "$missing" = 0
cr=$T/a/airlock/cluster-resources
al_check "mirror --to without --cluster-resources: oc-mirror's files in STORE/airlock/cluster-resources" \
	bash -c 'test -s "$1/idms-oc-mirror.yaml" && test -s "$1/itms-oc-mirror.yaml"' _ "$cr"
al_check "... for --to's registry: idms-release-0 mirrors to $R/ocm/openshift/release" \
	bash -c 'grep -q "^  name: idms-release-0$" "$2" && grep -q -- "- $1/ocm/openshift/release$" "$2"' _ "$R" "$cr/idms-oc-mirror.yaml"

# --------------------------------------------------- push, store b (source)
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --store "$T/b"
al_check "mirror into store b: exit 0" test "$AL_RC" = 0
mkdir -p "$T/b/airlock/cluster-resources"
echo stale >"$T/b/airlock/cluster-resources/cs-gone.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$T/b" --tls-verify=false --layout source "docker://$R/src"
cat "$T/err"
al_check "push --layout source: exit 0" test "$AL_RC" = 0
al_check "push without --cluster-resources: airlock's files in STORE/airlock/cluster-resources" \
	test -s "$T/b/airlock/cluster-resources/idms-airlock.yaml"
al_check "... an earlier run's file removed (oc-mirror's setupWorkingDir)" \
	test ! -e "$T/b/airlock/cluster-resources/cs-gone.yaml"
# An unchanged rerun rewrites no resource (only createdAt would differ):
# the same file (inode) stays, and a file it does not write goes again.
ino=$(stat -c %i "$T/b/airlock/cluster-resources/idms-airlock.yaml")
echo stale >"$T/b/airlock/cluster-resources/cs-gone.yaml"
sleep 1 # a new createdAt, to the second
al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$T/b" --tls-verify=false --layout source "docker://$R/src"
al_check "push again: exit 0" test "$AL_RC" = 0
al_check "... the unchanged mirror set is not rewritten (inode $ino)" \
	test "$(stat -c %i "$T/b/airlock/cluster-resources/idms-airlock.yaml")" = "$ino"
al_check "... and the file it did not write is removed" \
	test ! -e "$T/b/airlock/cluster-resources/cs-gone.yaml"
al_check "push --cluster-resources DIR: nothing removed there" bash -c '
	mkdir -p "$1" && echo mine >"$1/keep.txt" &&
	"$3" push --store "$2" --tls-verify=false --layout source --cluster-resources "$1" "docker://$4/src" >/dev/null 2>&1 &&
	test -s "$1/keep.txt" && test -s "$1/idms-airlock.yaml"' _ "$T/mine" "$T/b" "$AIRLOCK" "$R"

# ---------------------------------------------------- delete --registry
digest=$(al_digest_of "$T/rel" "$release")
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$T/a" --tls-verify=false --registry "docker://$R/ocm" --dry-run 4.14.38
cat "$T/err"
al_check "delete --dry-run --registry (the last push's layout, oc-mirror's): exit 0" test "$AL_RC" = 0
al_check "... the release manifest in openshift/release-images" \
	grep -qx "would delete manifest $R/ocm/openshift/release-images@$digest" "$T/out"
al_check "... the 2 components in openshift/release" \
	bash -c '[ "$(grep -c "^would delete manifest $1/ocm/openshift/release@sha256:" "$2")" = 2 ]' _ "$R" "$T/out"
al_check "... no manifest at a source path" bash -c '! grep "^would delete manifest" "$1" | grep -q "openshift-release-dev"' _ "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$T/a" --tls-verify=false --registry "docker://$R/ocm" --dry-run --layout source 4.14.38
al_check "delete --layout source: the source paths" \
	grep -qx "would delete manifest $R/ocm/openshift-release-dev/release@$digest" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$T/a" --layout source 4.14.38
al_check "delete --layout without --registry: usage error (exit 2)" test "$AL_RC" = 2

al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$T/a" --tls-verify=false --registry "docker://$R/ocm" 4.14.38
cat "$T/err"
al_check "delete --registry: exit 0" test "$AL_RC" = 0
al_check "... the release is gone from openshift/release-images" \
	bash -c '! "${@:2}" inspect --raw --tls-verify=false "docker://$1/ocm/openshift/release-images@'"$digest"'" >/dev/null 2>&1' \
	_ "$R" "${SKOPEO[@]}"
left=0
while IFS='=' read -r _ dst; do
	if exists "$dst"; then echo "still at $dst"; left=$((left + 1)); fi
done <"$T/dry/mapping.txt"
al_check "... and nothing mapping.txt named is left" test "$left" = 0
al_check "none was reported already gone (they were where it looked)" \
	grep -q "deleted 3 manifests from the registry (0 were gone already)" "$T/err"

al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$T/b" --tls-verify=false --registry "docker://$R/src" 4.14.38
al_check "delete from store b (pushed --layout source, recorded): exit 0" test "$AL_RC" = 0
al_check "... the release is gone from its source path" \
	bash -c '! "${@:2}" inspect --raw --tls-verify=false "docker://$1/src/openshift-release-dev/release:4.14.38-x86_64" >/dev/null 2>&1' \
	_ "$R" "${SKOPEO[@]}"

al_finish
