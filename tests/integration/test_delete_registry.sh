#!/usr/bin/env bash
# test_delete_registry.sh: airlock delete --registry on a loopback docker-registry (deletes enabled) that airlock push filled: the deleted manifests answer 404, the kept ones stay, a rerun counts what is gone, and the registry's garbage collection then frees only the deleted release's blobs.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v python3 >/dev/null || al_skip "python3 is needed for mkrelease.py"
[ -x "$AL_REGISTRY_BIN" ] || al_skip "docker-registry is not installed"
command -v skopeo >/dev/null || al_skip "skopeo is not installed"

. "$(dirname "${BASH_SOURCE[0]}")/delete_lib.sh"

store=$T/store
if ! mkstore "$store"; then
	cat "$T/mirror.out"
	al_fail "the store with both releases is mirrored"
	al_finish
fi
al_start_registry "$T/reg"
R=$REG_ADDR
dst=docker://$R/mirror
al_run "$T/out" "$T/err" "$AIRLOCK" push --layout source --store "$store" "$dst" --tls-verify=false
cat "$T/err"
al_check "airlock push of the store exits 0" test "$AL_RC" = 0

# where push put a store name: REGISTRY/REPO -> R/mirror/REPO
at() { local n=${1#*/}; echo "docker://$R/mirror/$n"; }
repo_of() { local n=${1#*/}; n=${n%@*}; echo "$R/mirror/${n%:*}"; }
there() { "${SKOPEO[@]}" inspect --raw --tls-verify=false "$1" >/dev/null 2>"$T/skopeo.err"; }
all_there() {
	local r
	for r; do there "$r" || return 1; done
}
all_gone() {
	local r
	for r; do gone "$r" || return 1; done
}
gone() {
	! there "$1" && grep -qiE 'manifest unknown|not found|404' "$T/skopeo.err"
}
a_dig_ref=docker://$(repo_of "$rel_a")@$dig_a
al_check "before: 4.14.1 is in the registry by tag and by digest" \
	all_there "$(at "$rel_a")" "$a_dig_ref"
al_check "before: its own component is there" there "$(at "$oauth")"

al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" --registry "$dst" --tls-verify=false --dry-run 4.14.1
cat "$T/out" "$T/err"
al_check "dry run with --registry exits 0" test "$AL_RC" = 0
al_check "dry run names the release manifest there" \
	grep -qxF "would delete manifest $(repo_of "$rel_a")@$dig_a" "$T/out"
al_check "dry run names the component manifest there" \
	grep -qxF "would delete manifest $(repo_of "$oauth")@${oauth#*@}" "$T/out"
al_check "dry run names two manifests and no other" test "$(grep -c '^would delete manifest ' "$T/out")" = 2
al_check "after the dry run the registry still has 4.14.1" there "$(at "$rel_a")"

find "$T/reg/data" -path '*/blobs/sha256/*/data' | sort >"$T/reg-blobs.before"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" --registry "$dst" --tls-verify=false 4.14.1
cat "$T/out" "$T/err"
al_check "delete --registry exits 0" test "$AL_RC" = 0
al_check "delete names the two manifests it deleted there" test "$(grep -c '^deleted manifest ' "$T/out")" = 2
al_check "delete says the registry's own gc frees the blobs" \
	grep -qF "deleted 2 manifests from the registry (0 were gone already)" "$T/err"
al_check "the release's tag answers not found" gone "$(at "$rel_a")"
al_check "the release's digest answers not found" gone "$a_dig_ref"
al_check "its own component answers not found" gone "$(at "$oauth")"
al_check "4.14.2 is still there by tag" there "$(at "$rel_b")"
shared_ok=1
for n in $b_names; do
	case $n in *@*) there "$(at "$n")" || shared_ok=0 ;; esac
done
al_check "the components 4.14.2 shares with 4.14.1 are still there" test "$shared_ok" = 1
al_check "the additional images are still there" all_there "$(at "$x_tag")" "$(at "$x_comp")"
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$store"
al_check "the store no longer lists 4.14.1" bash -c '! grep -q "4\.14\.1" "$1" && grep -q "4\.14\.2" "$1"' _ "$T/out"

# the registry's gc frees exactly the blobs only 4.14.1 used
if "$AL_REGISTRY_BIN" garbage-collect "$T/reg/config.yml" >"$T/gc.log" 2>&1; then
	find "$T/reg/data" -path '*/blobs/sha256/*/data' | sort >"$T/reg-blobs.after"
	sed 's|.*/sha256/../\([0-9a-f]*\)/data|sha256:\1|' "$T/reg-blobs.before" | sort >"$T/b1"
	sed 's|.*/sha256/../\([0-9a-f]*\)/data|sha256:\1|' "$T/reg-blobs.after" | sort >"$T/b2"
	comm -23 "$T/b1" "$T/b2" >"$T/reg-freed"
	al_check "docker-registry garbage-collect then frees the blobs only 4.14.1 used" \
		diff "$T/freed" "$T/reg-freed"
	al_check "4.14.2 still reads whole after the gc" \
		"${SKOPEO[@]}" copy -q --src-tls-verify=false "$(at "$rel_b")" "oci:$T/copy:b"
else
	cat "$T/gc.log"
	al_fail "docker-registry garbage-collect runs"
fi

# a rerun after an interruption: a manifest already gone counts as gone
curl -fsS -X DELETE "http://$R/v2/$(repo_of "$rel_b" | cut -d/ -f2-)/manifests/$dig_b" >/dev/null
al_check "fixture: 4.14.2's release manifest deleted by hand" gone "$(at "$rel_b")"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" --registry "$dst" --tls-verify=false 4.14.2
cat "$T/out" "$T/err"
al_check "delete of a release the registry half lost exits 0" test "$AL_RC" = 0
al_check "it counts the manifest that was gone already" \
	grep -qE "deleted [0-9]+ manifests from the registry \(1 were gone already\)" "$T/err"
al_check "the shared components went with the last release that used them" \
	gone "$(at "$(printf '%s\n' $b_names | grep -m1 @)")"
al_check "the additional images are still there" all_there "$(at "$x_tag")" "$(at "$x_comp")"

# a push with --max-nested-paths: delete finds the manifests where that
# push put them (its record in airlock/pushes.json)
store2=$T/store2
# a multi-platform image: an index and two platform manifests
multi=$extra/multi:1
read -r multi_idx multi_kids < <(python3 - "$T/src" "$multi" <<'PY'
import hashlib, json, sys
root, name = sys.argv[1], sys.argv[2]
def put(data):
    d = hashlib.sha256(data).hexdigest()
    open(root + "/blobs/sha256/" + d, "wb").write(data)
    return {"digest": "sha256:" + d, "size": len(data)}
kids = []
for arch in ("amd64", "arm64"):
    layer = put(("layer of %s\n" % arch).encode())
    cfg = put(json.dumps({"architecture": arch, "os": "linux",
                          "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]}}).encode())
    m = put(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                        "config": dict(cfg, mediaType="application/vnd.oci.image.config.v1+json"),
                        "layers": [dict(layer, mediaType="application/vnd.oci.image.layer.v1.tar")]}).encode())
    kids.append(dict(m, mediaType="application/vnd.oci.image.manifest.v1+json",
                     platform={"architecture": arch, "os": "linux"}))
idx = put(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                      "manifests": kids}).encode())
top = json.load(open(root + "/index.json"))
top["manifests"].append(dict(idx, mediaType="application/vnd.oci.image.index.v1+json",
                             annotations={"org.opencontainers.image.ref.name": name}))
top["manifests"].append(dict(idx, mediaType="application/vnd.oci.image.index.v1+json",
                             annotations={"org.opencontainers.image.ref.name": name.rsplit(":", 1)[0] + ":2"}))
json.dump(top, open(root + "/index.json", "w"))
print(idx["digest"], ",".join(k["digest"] for k in kids))
PY
)
cat >"$T/is-m.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  additionalImages:
  - name: $extra/multi@${multi_kids%,*}
  - name: $multi
  - name: $extra/multi:2
airlock:
  sources:
  - prefix: $extra
    location: oci:$T/src
YAML
# --parallel 1: the store names images as their transfers complete, so only
# a serial mirror lists the child (queued first) before its index in
# index.json, the order the fixture below needs; in parallel the order
# varies from run to run.
if mkstore "$store2" && "$AIRLOCK" mirror --layout source --allow-unsigned --parallel 1 -c "$T/is-m.yaml" --store "$store2" >>"$T/mirror.out" 2>&1; then
	al_run "$T/out" "$T/err" "$AIRLOCK" push --layout source --store "$store2" "docker://$R/n1/n2" --max-nested-paths 2 --tls-verify=false
	[ "$AL_RC" = 0 ] || cat "$T/out" "$T/err"
	al_check "push --max-nested-paths 2 exits 0" test "$AL_RC" = 0
	nested="docker://$R/n1/n2-airlock-delete-release@$dig_a"
	al_check "fixture: 4.14.1 is at n1/n2-airlock-delete-release" there "$nested"
	al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store2" --registry "docker://$R/n1/n2" --tls-verify=false 4.14.1
	cat "$T/out" "$T/err"
	al_check "delete after a nested push: exit 0, 2 manifests deleted, none gone already" \
		bash -c '[ "$1" = 0 ] && grep -qF "deleted 2 manifests from the registry (0 were gone already)" "$2"' _ "$AL_RC" "$T/err"
	al_check "delete after a nested push: the release answers not found there" gone "$nested"
	al_check "delete after a nested push: 4.14.2 is still there" \
		there "docker://$R/n1/n2-airlock-delete-release:4.14.2-x86_64"
	# an image and its cosign signature (tag scheme) go together
	sig_at="docker://$R/n1/n2-airlock-extra-release:${x_sig##*:}"
	al_check "fixture: the signature of $x_tag was pushed" there "$sig_at"
	al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store2" --registry "docker://$R/n1/n2" --tls-verify=false --image "$x_tag"
	cat "$T/out" "$T/err"
	al_check "--image with its signature: exit 0, 2 manifests deleted there" \
		bash -c '[ "$1" = 0 ] && grep -qF "deleted 2 manifests from the registry (0 were gone already)" "$2"' _ "$AL_RC" "$T/err"
	al_check "--image: the image answers not found" gone "docker://$R/n1/n2-airlock-extra-release:9.9.9-x86_64"
	al_check "--image: its signature answers not found" gone "$sig_at"
	al_check "--image: the other additional image is still there" \
		there "docker://$R/n1/n2-airlock-extra-ocp-v4.0-art-dev@${x_comp#*@}"
	# an index goes before its children, even a child that has a name of
	# its own (listed first in index.json) and goes too
	al_check "fixture: the first child is named in the store before the index" \
		python3 -c 'import json,sys
n = [m["annotations"]["org.opencontainers.image.ref.name"] for m in json.load(open(sys.argv[1]))["manifests"]]
sys.exit(not (sys.argv[2] in n and sys.argv[3] in n and n.index(sys.argv[2]) < n.index(sys.argv[3])))' \
		"$store2/index.json" "$extra/multi@${multi_kids%,*}" "$multi"
	m_repo="$R/n1/n2-airlock-extra-multi"
	al_check "fixture: the index and both children were pushed" \
		all_there "docker://$m_repo@$multi_idx" "docker://$m_repo@${multi_kids%,*}" "docker://$m_repo@${multi_kids#*,}"
	# a tag whose manifest a kept tag of the same repository also has:
	# deleting by digest would take both, so it is left, with a warning
	al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store2" --registry "docker://$R/n1/n2" --tls-verify=false \
		--image "$extra/multi:2"
	cat "$T/out" "$T/err"
	al_check "a tag sharing its manifest with a kept tag: exit 0, nothing deleted there, a warning says so" \
		bash -c '[ "$1" = 0 ] && ! grep -q "^deleted manifest" "$2" && grep -qF "warning: registry: $3@$4 left: a kept image of that repository has the same manifest (its tag '"'"'2'"'"' stays there too)" "$5"' \
		_ "$AL_RC" "$T/out" "$R/n1/n2-airlock-extra-multi" "$multi_idx" "$T/err"
	there "docker://$R/n1/n2-airlock-extra-multi:1" || cat "$T/skopeo.err"
	al_check "the kept tag is still there" there "docker://$R/n1/n2-airlock-extra-multi:1"
	al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store2" --registry "docker://$R/n1/n2" --tls-verify=false \
		--image "$multi" --image "$extra/multi@${multi_kids%,*}"
	cat "$T/out" "$T/err"
	al_check "a multi-platform image: exit 0, 3 manifests deleted there" \
		bash -c '[ "$1" = 0 ] && grep -qF "deleted 3 manifests from the registry (0 were gone already)" "$2"' _ "$AL_RC" "$T/err"
	al_check "a multi-platform image: the index is deleted first" \
		test "$(grep -m1 '^deleted manifest ' "$T/out")" = "deleted manifest $m_repo@$multi_idx"
	al_check "a multi-platform image: the index and both children answer not found" \
		all_gone "docker://$m_repo@$multi_idx" "docker://$m_repo@${multi_kids%,*}" "docker://$m_repo@${multi_kids#*,}"

	# the wrong prefix: every manifest is missing there, and it says so
	al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store2" --registry "docker://$R/elsewhere" --tls-verify=false --image "$x_comp"
	cat "$T/err"
	al_check "a registry prefix the store was not pushed to: a warning naming it" \
		bash -c '[ "$1" = 0 ] && grep -qF "warning: none of the 1 manifests was in docker://$2/elsewhere" "$3"' _ "$AL_RC" "$R" "$T/err"
else
	cat "$T/mirror.out"
	al_fail "the second store is mirrored"
fi

# a registry that does not allow deletes (HTTP 405): exit 3 with the hint,
# the store unchanged (REGISTRY_* only for the registry's own environment)
al_stop "$REG_PID"
REGISTRY_STORAGE_DELETE_ENABLED=false al_start_registry "$T/reg405"
dst=docker://$REG_ADDR/mirror
al_run "$T/out" "$T/err" "$AIRLOCK" push --layout source --store "$store" "$dst" --tls-verify=false
al_check "push into the registry without deletes exits 0" test "$AL_RC" = 0
sums=$(store_sums "$store")
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" --registry "$dst" --tls-verify=false --image "$x_tag"
cat "$T/err"
al_check "HTTP 405: exit 3, the hint names REGISTRY_STORAGE_DELETE_ENABLED" \
	bash -c '[ "$1" = 3 ] && grep -q "HTTP 405.*REGISTRY_STORAGE_DELETE_ENABLED=true" "$2"' _ "$AL_RC" "$T/err"
al_check "HTTP 405: the store unchanged" test "$sums" = "$(store_sums "$store")"
al_check "HTTP 405: the image is still in the registry" there "$dst/airlock-extra/release:9.9.9-x86_64"

# a registry that no longer answers: exit 3, the store unchanged
al_stop "$REG_PID"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" --registry "$dst" --tls-verify=false --image "$x_tag"
cat "$T/err"
al_check "a registry that does not answer: exit 3, the store unchanged" \
	bash -c '[ "$1" = 3 ] && [ "$2" = "$3" ]' _ "$AL_RC" "$sums" "$(store_sums "$store")"

al_finish
