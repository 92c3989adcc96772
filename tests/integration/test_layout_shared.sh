#!/usr/bin/env bash
# test_layout_shared.sh: a component two releases share gets a tag per release under oc-mirror v2's layout (openshift/release:<release tag>-<name>, prepareM2DCopyBatch makes one copy per release): push and mirror --to give both tags, mirror --dry-run's mapping.txt names both, the mirror sets map its repository once, and delete --registry of one release keeps what the other still places.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v python3 >/dev/null || al_skip "python3 is needed for mkrelease.py"
[ -x "$AL_REGISTRY_BIN" ] || al_skip "docker-registry is not installed"
command -v skopeo >/dev/null || al_skip "skopeo is not installed"

# 4.14.1 (cluster-version-operator, etcd, hyperkube, oauth-server) and
# 4.14.2 (the first three: the same images)
. "$(dirname "${BASH_SOURCE[0]}")/delete_lib.sh"

store=$T/store
if ! mkstore "$store"; then
	cat "$T/mirror.out"
	al_fail "the store with both releases is mirrored"
	al_finish
fi
al_start_registry "$T/reg"
R=$REG_ADDR
there() { "${SKOPEO[@]}" inspect --raw --tls-verify=false "$1" >/dev/null 2>"$T/skopeo.err"; }
digest_at() { "${SKOPEO[@]}" inspect --raw --tls-verify=false "$1" 2>/dev/null | sha256sum | cut -d' ' -f1; }
shared="cluster-version-operator etcd hyperkube"

# ---------------------------------------------------- mirror --dry-run --to
cat >"$T/sources.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror: {}
airlock:
  sources:
  - prefix: $prefix
    location: oci:$T/src
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned -c "$T/sources.yaml" --store "$T/plan" \
	--to "docker://$R/ocm" --dry-run="$T/dry" "$rel_a" "$rel_b"
cat "$T/err"
al_check "dry run of both releases with --to: exit 0" test "$AL_RC" = 0
n_ok=0
for c in $shared; do
	src=$(grep -m1 "=docker://$R/ocm/openshift/release:4.14.1-x86_64-$c\$" "$T/dry/mapping.txt" | cut -d= -f1) || true
	[ -n "$src" ] && grep -qxF "$src=docker://$R/ocm/openshift/release:4.14.2-x86_64-$c" "$T/dry/mapping.txt" &&
		n_ok=$((n_ok + 1))
done
al_check "mapping.txt: each shared component from one source to a tag of each release" test "$n_ok" = 3
al_check "mapping.txt: 4.14.1's own component to its tag only" \
	bash -c '[ "$(grep -c "openshift/release:4.14.[12]-x86_64-oauth-server$" "$1")" = 1 ]' _ "$T/dry/mapping.txt"
al_check "mapping.txt: 2 releases + 4 + 3 component tags, one line each" \
	test "$(grep -c "=docker://$R/ocm/openshift/release" "$T/dry/mapping.txt")" = 9

# ------------------------------------------------------------------- push
al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$store" --tls-verify=false "docker://$R/ocm"
cat "$T/err"
al_check "push (oc-mirror's layout, the default): exit 0" test "$AL_RC" = 0
n_ok=0
for c in $shared; do
	a=$(digest_at "docker://$R/ocm/openshift/release:4.14.1-x86_64-$c")
	b=$(digest_at "docker://$R/ocm/openshift/release:4.14.2-x86_64-$c")
	if there "docker://$R/ocm/openshift/release:4.14.1-x86_64-$c" &&
		there "docker://$R/ocm/openshift/release:4.14.2-x86_64-$c" && [ "$a" = "$b" ]; then
		n_ok=$((n_ok + 1))
	else
		echo "component $c: 4.14.1 tag $a, 4.14.2 tag $b"
	fi
done
al_check "each shared component has both releases' tags, one manifest" test "$n_ok" = 3
al_check "4.14.1's own component has its tag" there "docker://$R/ocm/openshift/release:4.14.1-x86_64-oauth-server"
al_check "... and no 4.14.2 tag" bash -c '! "${@:2}" inspect --raw --tls-verify=false "docker://$1/ocm/openshift/release:4.14.2-x86_64-oauth-server" >/dev/null 2>&1' \
	_ "$R" "${SKOPEO[@]}"
al_check "both releases in openshift/release-images" \
	bash -c 'for t in 4.14.1-x86_64 4.14.2-x86_64; do "${@:2}" inspect --raw --tls-verify=false "docker://$1/ocm/openshift/release-images:$t" >/dev/null || exit 1; done' \
	_ "$R" "${SKOPEO[@]}"
al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$store" --tls-verify=false --json "docker://$R/ocm"
al_check "push --json: a destination per place (2 releases, 7 component tags, 2 additional images, 1 signature)" \
	python3 - "$T/out" "$R" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
dest = [i["destination"] for i in doc["images"]]
rel = [d for d in dest if "/openshift/release:" in d]
assert len(rel) == 7 and len(set(rel)) == 7, rel
assert len(dest) == 12 and len(set(dest)) == 12, dest
assert all(i["status"] == "pushed" for i in doc["images"]), doc["images"]
PY

# ------------------------------------------------------------- mirror sets
al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --store "$store" --registry "docker://$R/ocm" -o "$T/ms.yaml"
cat "$T/err"
al_check "mirrorsets: exit 0" test "$AL_RC" = 0
al_check "mirrorsets: the component repository mapped to openshift/release once" \
	python3 - "$T/ms.yaml" "$R" "$prefix" <<'PY'
import sys
text, reg, prefix = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
want = "  - mirrors:\n    - %s/ocm/openshift/release\n    source: %s/ocp-v4.0-art-dev\n" % (reg, prefix)
assert text.count(want) == 1, text
assert text.count("- %s/ocm/openshift/release\n" % reg) == 1, text
PY

# ----------------------------------------------------- delete --registry
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" --tls-verify=false --registry "docker://$R/ocm" 4.14.1
cat "$T/out" "$T/err"
al_check "delete --registry 4.14.1: exit 0" test "$AL_RC" = 0
al_check "... deleted the release and its own component, nothing else" \
	grep -qF "deleted 2 manifests from the registry (0 were gone already)" "$T/err"
al_check "... 4.14.1 is gone from openshift/release-images" \
	bash -c '! "${@:2}" inspect --raw --tls-verify=false "docker://$1/ocm/openshift/release-images:4.14.1-x86_64" >/dev/null 2>&1' \
	_ "$R" "${SKOPEO[@]}"
al_check "... its own component's tag is gone" \
	bash -c '! "${@:2}" inspect --raw --tls-verify=false "docker://$1/ocm/openshift/release:4.14.1-x86_64-oauth-server" >/dev/null 2>&1' \
	_ "$R" "${SKOPEO[@]}"
n_ok=0
for c in $shared; do
	there "docker://$R/ocm/openshift/release:4.14.2-x86_64-$c" && n_ok=$((n_ok + 1))
done
al_check "... 4.14.2 keeps the tag of every component it shared" test "$n_ok" = 3
al_check "... and its release" there "docker://$R/ocm/openshift/release-images:4.14.2-x86_64"
al_check "4.14.2 reads whole after the delete" \
	"${SKOPEO[@]}" copy -q --src-tls-verify=false "docker://$R/ocm/openshift/release:4.14.2-x86_64-etcd" "oci:$T/copy:etcd"

al_finish
