#!/usr/bin/env bash
# test_mirror_ocmirror_forms.sh: oc-mirror v2's command lines work in airlock mirror (file://DIR, --from, --workspace, --v2, --dest-tls-verify, --since) as airlock's own mirror/pack/unpack/push, and oc-mirror flags airlock spells otherwise are refused naming the equivalent.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

isc=$AL_SOURCE_DIR/samples/imageset.yaml
release_repo=airlock-samples/release
release_digest=sha256:c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
cache_store=$HOME/.oc-mirror/airlock-store

# the digest of REF on the test registry (plain HTTP)
reg_digest() {
	"${SKOPEO[@]}" inspect --raw --tls-verify=false "docker://$1" 2>/dev/null | sha256sum | sed 's/^/sha256:/; s/ .*//'
}
pack_base() { # the "base" of the only pack manifest in DIR ("null" for a full pack)
	python3 -c 'import json,glob,sys; print(json.dumps(json.load(open(glob.glob(sys.argv[1]+"/airlock-*.json")[0])).get("base")))' "$1"
}

# ---- mirror to disk: -c ISC file://DIR (--v2 accepted and ignored)
al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$isc" file://"$T/disk" --v2
al_check "mirror -c ISC file://DIR exits 0" test "$AL_RC" = 0
al_check "DIR holds one pack" test "$(find "$T/disk" -name 'airlock-*.json' | wc -l)" = 1
al_check "the store sits beside oc-mirror's cache (\$HOME/.oc-mirror)" \
	test "$(al_digest_of "$cache_store" "quay.io/$release_repo:4.14.1-x86_64")" = "$release_digest"
al_check "the first mirror to disk is a full pack" test "$(pack_base "$T/disk")" = null
# oc-mirror's setupWorkingDir makes it in every workflow; mirror to disk
# writes nothing there (executor.go RunMirrorToDisk)
al_check "mirror to disk: DIR/working-dir/cluster-resources made, empty" \
	bash -c 'test -d "$1" && test -z "$(ls -A "$1")"' _ "$T/disk/working-dir/cluster-resources"

al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$isc" file://"$T/disk"
al_check "a second mirror to disk exits 0" test "$AL_RC" = 0
al_check "it replaces the earlier pack in DIR (one set, as oc-mirror)" \
	test "$(find "$T/disk" -name 'airlock-*.json' | wc -l)" = 1
al_check "and is a delta since the previous one (oc-mirror's history)" test "$(pack_base "$T/disk")" != null

al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$isc" file://"$T/disk" --since 2000-01-01
al_check "--since a date before every pack exits 0" test "$AL_RC" = 0
al_check "--since a date before every pack makes a full pack" test "$(pack_base "$T/disk")" = null

# ---- disk to mirror: --from file://DIR docker://REG
al_start_registry "$T/reg"
R=$REG_ADDR
# the registry speaks plain HTTP, which airlock refuses unless told: the
# push succeeds only through --dest-tls-verify=false
echo stale >"$T/disk/working-dir/cluster-resources/cs-gone.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$isc" --from file://"$T/disk" docker://"$R/d2m" --store "$T/far" \
	--dest-tls-verify=false --v2
al_check "disk to mirror exits 0" test "$AL_RC" = 0
al_check "the far store got the pack" test "$(al_digest_of "$T/far" "quay.io/$release_repo:4.14.1-x86_64")" = "$release_digest"
# where oc-mirror v2 puts a release (the default layout, docs/push.md)
al_check "the release is on the registry, at oc-mirror's path, with its digest" \
	test "$(reg_digest "$R/d2m/openshift/release-images:4.14.1-x86_64")" = "$release_digest"
al_check "cluster resources are in DIR/working-dir/cluster-resources" \
	bash -c "ls '$T/disk/working-dir/cluster-resources/' | grep -q ."
al_check "... an earlier run's file removed first (setupWorkingDir)" \
	test ! -e "$T/disk/working-dir/cluster-resources/cs-gone.yaml"
al_check "... and none in the store's own directory (one place)" \
	test ! -e "$T/far/airlock/cluster-resources"

# ---- disk to mirror from oc-mirror's own archives
python3 "$AL_TOOLS/ocmirror_archive.py" "$cache_store" "$T/ocm"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --from file://"$T/ocm" docker://"$R/ocm" --store "$T/far2" --dest-tls-verify=false
al_check "disk to mirror of oc-mirror archives exits 0" test "$AL_RC" = 0
al_check "their release lands where oc-mirror would push it" \
	test "$(reg_digest "$R/ocm/$release_repo:4.14.1-x86_64")" = "$release_digest"

# ---- mirror to mirror: --workspace file://DIR docker://REG
al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$isc" --workspace file://"$T/ws" docker://"$R/m2m" --dest-tls-verify=false
al_check "mirror to mirror exits 0" test "$AL_RC" = 0
al_check "the release is on the registry, at oc-mirror's path" test "$(reg_digest "$R/m2m/openshift/release-images:4.14.1-x86_64")" = "$release_digest"
al_check "cluster resources are in WORKSPACE/working-dir/cluster-resources" \
	bash -c "grep -lq '$R/m2m' '$T/ws/working-dir/cluster-resources/'*"

# ---- refused, as oc-mirror refuses, or with airlock's equivalent named
refused() { # DESC WORD ARGS...: exit 2 and WORD in the message
	local desc=$1 word=$2
	shift 2
	al_run "$T/out" "$T/err" "$AIRLOCK" mirror "$@"
	al_check "$desc: exit 2" test "$AL_RC" = 2
	al_check "$desc: names $word" grep -qF -- "$word" "$T/err"
}
refused "file:// with --from" "--from" -c "$isc" --from file://"$T/disk" file://"$T/x"
refused "file:// with --workspace" "--workspace" -c "$isc" --workspace file://"$T/ws" file://"$T/x"
refused "docker:// with neither --from nor --workspace" "--to docker://$R/x" -c "$isc" docker://"$R/x"
refused "docker:// with both --from and --workspace" "exclude" -c "$isc" --from file://"$T/disk" --workspace file://"$T/ws" docker://"$R/x"
refused "--from without file://" "file://" -c "$isc" --from "$T/disk" docker://"$R/x"
refused "--workspace without file://" "file://" -c "$isc" --workspace "$T/ws" docker://"$R/x"
refused "--since not a date" "yyyy-MM-dd" -c "$isc" --since 12/01/2026 file://"$T/x"
refused "mirror to disk without -c" "--config" file://"$T/x"
refused "--parallel-images" "--parallel N" -c "$isc" --parallel-images 4 file://"$T/x"
refused "--remove-signatures" "--no-sigstore" -c "$isc" --remove-signatures file://"$T/x"
refused "--ignore-release-signature" "--allow-unsigned" -c "$isc" --ignore-release-signature file://"$T/x"
refused "--src-tls-verify" "--tls-verify=false" -c "$isc" --src-tls-verify=false file://"$T/x"
refused "--dest-tls-verify without --to in airlock's form" "--to" -c "$isc" --store "$T/s" --dest-tls-verify=false
al_check "nothing was written for a refused command" test ! -e "$T/x"

al_finish
