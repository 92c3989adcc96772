#!/usr/bin/env bash
# test_verified_kept.sh: an unsigned image served under a verified release's tag never untags or re-points it; check and check --gc keep the verified release.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v skopeo >/dev/null || { echo "skip: no skopeo"; exit 77; }
[ -x "${AL_REGISTRY_BIN:-/usr/bin/docker-registry}" ] || { echo "skip: no docker-registry"; exit 77; }

samples=$AL_SOURCE_DIR/samples
name=quay.io/airlock-samples/release:4.14.1-x86_64
signed=sha256:c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
store=$T/store

al_start_registry "$T/reg"
A=$REG_ADDR
al_push_layout "$samples/layout" "$A"

cat >"$T/imageset.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $name
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: docker://$A/airlock-samples
YAML
sigargs=(--keyring "$samples/keys/release.gpg" --signature-store "$samples/signatures" --tls-verify=false)

# 1. The signed release, verified.
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/imageset.yaml" --store "$store" "${sigargs[@]}"
cat "$T/err"
al_check "the signed release mirrors and verifies (exit 0)" test "$AL_RC" = 0
al_check "the release name refers to the signed manifest" test "$(al_digest_of "$store" "$name")" = "$signed"

# 2. The registry now serves an unsigned release image under the same tag:
# the signed manifest with one more annotation (same config and layers).
cp -r "$samples/layout" "$T/evil"
chmod -R u+w "$T/evil"
unsigned=$(python3 - "$T/evil" "$name" "$signed" <<'EOF'
import hashlib, json, sys
root, name, signed = sys.argv[1:4]
m = json.load(open("%s/blobs/sha256/%s" % (root, signed.split(":")[1])))
m.setdefault("annotations", {})["airlock.test/unsigned"] = "yes"
b = json.dumps(m, separators=(",", ":")).encode()
d = hashlib.sha256(b).hexdigest()
open("%s/blobs/sha256/%s" % (root, d), "wb").write(b)
idx = json.load(open(root + "/index.json"))
for e in idx["manifests"]:
    if e.get("annotations", {}).get("org.opencontainers.image.ref.name") == name:
        e["digest"] = "sha256:" + d
        e["size"] = len(b)
json.dump(idx, open(root + "/index.json", "w"))
print("sha256:" + d)
EOF
)
"${SKOPEO[@]}" copy -q --dest-tls-verify=false "oci:$T/evil:$name" "docker://$A/airlock-samples/release:4.14.1-x86_64"
served=$("${SKOPEO[@]}" inspect --no-tags --tls-verify=false --format '{{.Digest}}' \
	"docker://$A/airlock-samples/release:4.14.1-x86_64")
al_check "the registry serves the unsigned manifest under the tag" test "$served" = "$unsigned"

cp "$store/airlock/releases.json" "$T/releases.before"
al_index_digests "$store" >"$T/index.before"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/imageset.yaml" --store "$store" "${sigargs[@]}"
cat "$T/err"
al_check "the unsigned release is refused (exit 1)" test "$AL_RC" = 1
al_check "the refusal says what the store kept (name and verified digest)" \
	grep -qF "keeps '$name' at $signed (verified by" "$T/err"
al_check "the release name still refers to the signed manifest" test "$(al_digest_of "$store" "$name")" = "$signed"
al_index_digests "$store" >"$T/index.after"
al_check "index.json is exactly as it was" cmp "$T/index.before" "$T/index.after"
al_check "no index entry names the unsigned manifest" bash -c '! grep -qF "$1" "$2"' _ "$unsigned" "$T/index.after"
al_check "the verified release's record in releases.json stays" python3 -c '
import json, sys
rs = json.load(open(sys.argv[1]))["releases"]
assert [r["digest"] for r in rs] == [sys.argv[2]], rs
assert rs[0]["verified"] is True, rs' "$store/airlock/releases.json" "$signed"

al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$store"
cat "$T/out"
al_check "check after the refusal: clean (exit 0)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$store" --gc
cat "$T/out"
al_check "check --gc after the refusal: exit 0" test "$AL_RC" = 0
al_check "check --gc kept the signed release manifest" test -f "$store/blobs/sha256/${signed#sha256:}"
al_check "check --gc removed the unsigned manifest nothing names" test ! -e "$store/blobs/sha256/${unsigned#sha256:}"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$store"
al_check "check after gc: clean (exit 0)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$store" --keyring "$samples/keys/release.gpg"
cat "$T/out" "$T/err"
al_check "the kept release still verifies after gc (exit 0)" test "$AL_RC" = 0

# 3. --allow-unsigned: the unsigned release is stored, but under its digest;
# the verified release keeps its name.
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/imageset.yaml" --store "$store" "${sigargs[@]}" --allow-unsigned
cat "$T/err"
al_check "--allow-unsigned: exit 0" test "$AL_RC" = 0
al_check "--allow-unsigned: the name still refers to the signed manifest" test "$(al_digest_of "$store" "$name")" = "$signed"
al_check "--allow-unsigned: the unsigned release is named by digest" \
	test "$(al_digest_of "$store" "quay.io/airlock-samples/release@$unsigned")" = "$unsigned"
al_check "--allow-unsigned: a warning says the verified one keeps the name" grep -qF "keeps the verified $signed" "$T/err"
al_check "--allow-unsigned: both releases recorded, the signed one still verified" python3 -c '
import json, sys
rs = {r["digest"]: r for r in json.load(open(sys.argv[1]))["releases"]}
assert rs[sys.argv[2]]["verified"] is True and rs[sys.argv[3]]["verified"] is False, rs' \
	"$store/airlock/releases.json" "$signed" "$unsigned"

# 4. The same tag asked for as an additional image (not verified at all):
# refused, the name kept.
cat >"$T/additional.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  additionalImages:
  - name: $name
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: docker://$A/airlock-samples
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/additional.yaml" --store "$store" "${sigargs[@]}"
cat "$T/err"
al_check "an additional image under a verified release's name: refused (exit 1)" test "$AL_RC" = 1
al_check "the refusal names the verified release it keeps" grep -qF "names the verified release $signed" "$T/err"
al_check "the name still refers to the signed manifest" test "$(al_digest_of "$store" "$name")" = "$signed"
# 5. The verified release mirrored again without keys (--allow-unsigned):
# its record is not downgraded to unverified.
cat >"$T/bydigest.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-samples/release@$signed
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: docker://$A/airlock-samples
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/bydigest.yaml" --store "$store" --tls-verify=false --allow-unsigned
cat "$T/err"
al_check "the verified release without keys: exit 0" test "$AL_RC" = 0
al_check "the verified release without keys: its record stays verified" python3 -c '
import json, sys
rs = {r["digest"]: r for r in json.load(open(sys.argv[1]))["releases"]}
assert rs[sys.argv[2]]["verified"] is True and len(rs[sys.argv[2]]["verifiedBy"]) == 40, rs' \
	"$store/airlock/releases.json" "$signed"
al_check "the verified release without keys: a warning says so" grep -q "its record stays verified" "$T/err"
al_check "the name still refers to the signed manifest" test "$(al_digest_of "$store" "$name")" = "$signed"

al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$store" --gc
al_check "check --gc at the end: exit 0" test "$AL_RC" = 0
al_check "the signed release manifest survived every step" test -f "$store/blobs/sha256/${signed#sha256:}"
al_finish
