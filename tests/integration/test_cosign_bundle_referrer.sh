#!/usr/bin/env bash
# test_cosign_bundle_referrer.sh: cosign's bundle-as-referrer storage (cosign
# al-tier: slow
# v3, v2.6 --new-bundle-format: a sigstore bundle v0.3 in an OCI 1.1
# referrer, artifactType application/vnd.dev.sigstore.bundle.v0.3+json,
# cosign specs/BUNDLE_SPEC.md) made with sigstore-js against the mock
# Fulcio and Rekor and pushed to a loopback docker-registry in cosign's own
# manifest shape; found, verified, mirrored, packed, unpacked, pushed and
# verified again. And the trusted root kept in the store: carried by pack
# and used on the far side when no other trust is given. Without node, npm
# or network this is a skip (77), never a pass.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
[ -x "${AL_REGISTRY_BIN:-/usr/bin/docker-registry}" ] || exit 77
NM=$("$AL_TOOLS/sigstore-setup.sh" "$AL_BUILD_DIR/sigstore-npm") || exit 77

PUSH=(python3 "$AL_TOOLS/cosign_push.py")
al_start_registry "$T/reg"
R=$REG_ADDR
cd "$T"
VI=("$AIRLOCK" verify-image --tls-verify=false)
SUBJ='https://github.com/example/release/.github/workflows/sign.yml@refs/heads/main'
ISS=https://oidc.airlock.test
ID=(--certificate-identity "$SUBJ" --certificate-oidc-issuer "$ISS")

D=$("${PUSH[@]}" image "$R" ex/app v1)
U=$("${PUSH[@]}" image "$R" ex/unsigned v1)
al_check "sigstore-js makes the bundles (mock Fulcio and Rekor)" \
	env NODE_PATH="$NM" node "$AL_TOOLS/sigstore_fixtures.js" fx "$D" "$R/ex/app"
al_check "the bundle is cosign's: an in-toto cosign/sign/v1 statement naming the digest only" python3 -c '
import base64, json, sys
b = json.load(open(sys.argv[1]))
assert b["mediaType"] == "application/vnd.dev.sigstore.bundle.v0.3+json", b["mediaType"]
e = b["dsseEnvelope"]
assert e["payloadType"] == "application/vnd.in-toto+json"
st = json.loads(base64.b64decode(e["payload"]))
assert st["predicateType"] == "https://sigstore.dev/cosign/sign/v1"
assert st["subject"] == [{"digest": {"sha256": sys.argv[2][7:]}, "annotations": {}}], st["subject"]
' fx/keyless-cosign-v3-bundle.bundle.json "$D"
# the trusted root of the mock instance (protobuf-specs trustedroot.proto)
python3 "$AL_TOOLS/sigstore_mock_root.py" fx >tr.json

REF=$("${PUSH[@]}" cosign-referrer "$R" ex/app "$D" fx/keyless-cosign-v3-bundle.bundle.json)
al_check "the referrer is cosign's shape: empty config, one bundle layer, subject, annotations" python3 -c '
import json, sys, urllib.request
reg, repo, ref, d = sys.argv[1:5]
r = urllib.request.Request("http://%s/v2/%s/manifests/%s" % (reg, repo, ref),
                           headers={"Accept": "application/vnd.oci.image.manifest.v1+json"})
m = json.loads(urllib.request.urlopen(r).read())
assert m["artifactType"] == "application/vnd.dev.sigstore.bundle.v0.3+json"
assert m["config"]["mediaType"] == "application/vnd.oci.empty.v1+json"
assert [l["mediaType"] for l in m["layers"]] == ["application/vnd.dev.sigstore.bundle.v0.3+json"]
assert m["subject"]["digest"] == d
assert m["annotations"]["dev.sigstore.bundle.predicateType"] == "https://sigstore.dev/cosign/sign/v1"
' "$R" ex/app "$REF" "$D"
# docker-registry 2.8 has no referrers API (cosign then writes the tag schema)
code=$(curl -s -o /dev/null -w '%{http_code}' "http://$R/v2/ex/app/referrers/$D")
echo "note: docker-registry answers GET /v2/<name>/referrers/<digest> with HTTP $code"
al_check "docker-registry has no referrers API (404): the tag schema is what holds the referrer" [ "$code" = 404 ]

al_run out err "${VI[@]}" --trusted-root tr.json "${ID[@]}" "docker://$R/ex/app:v1"
al_check "cosign's bundle referrer verifies (keyless, trusted root, SCT, Rekor SET)" \
	grep -q "^$R/ex/app@$D: verified (signature 1, bundle, keyless: $SUBJ, logged in Rekor" out
al_run out err "${VI[@]}" --trusted-root tr.json --certificate-identity https://github.com/mallory/x \
	--certificate-oidc-issuer "$ISS" "docker://$R/ex/app:v1"
al_check "another identity: refused (exit 1)" sh -c "[ $AL_RC = 1 ] && grep -q 'identity' err"
# a bundle for this image attached to another one: its statement names D
"${PUSH[@]}" cosign-referrer "$R" ex/unsigned "$U" fx/keyless-cosign-v3-bundle.bundle.json >/dev/null
al_run out err "${VI[@]}" --trusted-root tr.json "${ID[@]}" "docker://$R/ex/unsigned:v1"
al_check "the bundle attached to another image is refused there (digest mismatch)" \
	sh -c "[ $AL_RC = 1 ] && grep -q 'digest mismatch: the in-toto statement does not name' err"

# a registry with the referrers API (the shim in front of the same
# registry): the referrer is found through GET /v2/<name>/referrers/<digest>
python3 "$AL_TOOLS/referrers_shim.py" "$R" shim.port shim.log & SHIM_PID=$!
AL_PIDS+=("$SHIM_PID")
for _ in $(seq 100); do [ -s shim.port ] && break; sleep 0.1; done
S=127.0.0.1:$(cat shim.port)
al_run out err "${VI[@]}" --trusted-root tr.json "${ID[@]}" "docker://$S/ex/app:v1"
al_check "through the referrers API: cosign's bundle referrer verifies" \
	grep -q "^$S/ex/app@$D: verified (signature 1, bundle, keyless: $SUBJ" out
al_check "it was found through the referrers API, not the tag schema" \
	sh -c "grep -q '^GET /v2/ex/app/referrers/$D' shim.log && ! grep -q 'manifests/sha256-${D#sha256:}\$' shim.log"
al_run out err "$AIRLOCK" mirror --layout source --store "$T/sa" --tls-verify=false \
	--keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --image "docker://$S/ex/app:v1"
al_check "mirror through the referrers API carries the referrer" \
	sh -c "[ $AL_RC = 0 ] && grep -q 'sigstore: carried 1 signature artifact(s) of 1 image(s)' err && [ -f '$T/sa/blobs/sha256/${REF#sha256:}' ]"
al_run out err "$AIRLOCK" verify-image --store "$T/sa" --trusted-root tr.json "${ID[@]}" "$S/ex/app:v1"
al_check "what came through the referrers API verifies in the store" grep -q "verified (signature 1, bundle, keyless" out
al_stop "$SHIM_PID"
# a referrers API that lists the config's media type as artifactType, as
# go-containerregistry 0.14's registry does: the manifest's own is used
rm -f shim.port
python3 "$AL_TOOLS/referrers_shim.py" --config-artifact-type "$R" shim.port shim2.log & SHIM_PID=$!
AL_PIDS+=("$SHIM_PID")
for _ in $(seq 100); do [ -s shim.port ] && break; sleep 0.1; done
S=127.0.0.1:$(cat shim.port)
al_check "fixture: that listing names the config's media type" sh -c \
	"curl -s 'http://$S/v2/ex/app/referrers/$D' | grep -q '\"artifactType\": \"application/vnd.oci.empty.v1+json\"'"
al_run out err "${VI[@]}" --trusted-root tr.json "${ID[@]}" "docker://$S/ex/app:v1"
al_check "listed with the config's media type: the referrer is still found and verifies" \
	sh -c "grep -q '^$S/ex/app@$D: verified (signature 1, bundle, keyless: $SUBJ' out && grep -q '^GET /v2/ex/app/referrers/$D' shim2.log"
al_stop "$SHIM_PID"

# mirror carries the referrer with the image, beside it in the store
al_run out err "$AIRLOCK" mirror --layout source --store "$T/s" --tls-verify=false \
	--keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --image "docker://$R/ex/app:v1"
al_check "mirror: exit 0" [ "$AL_RC" = 0 ]
al_check "mirror carried the bundle referrer" grep -q "sigstore: carried 1 signature artifact(s) of 1 image(s)" err
al_check "the store keeps the referrer's manifest, digest unchanged" [ -f "$T/s/blobs/sha256/${REF#sha256:}" ]
al_check "the store's referrers index lists it with its artifactType and cosign's annotations" python3 -c '
import json, sys
store, name, ref = sys.argv[1:4]
idx = json.load(open(store + "/index.json"))
(e,) = [m for m in idx["manifests"] if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == name]
ri = json.load(open(store + "/blobs/sha256/" + e["digest"][7:]))
(c,) = ri["manifests"]
assert c["digest"] == ref, c
assert c["artifactType"] == "application/vnd.dev.sigstore.bundle.v0.3+json", c
assert c["annotations"]["dev.sigstore.bundle.predicateType"] == "https://sigstore.dev/cosign/sign/v1", c
assert c["annotations"]["dev.sigstore.bundle.content"] == "dsse-envelope", c
' "$T/s" "$R/ex/app:sha256-${D#sha256:}" "$REF"
al_run out err "$AIRLOCK" verify-image --store "$T/s" "${ID[@]}" "$R/ex/app:v1"
al_check "without trust given and none kept: a usage error (exit 2)" [ "$AL_RC" = 2 ]
al_run out err "$AIRLOCK" verify-image --store "$T/s" --trusted-root tr.json "${ID[@]}" "$R/ex/app:v1"
al_check "the mirrored referrer verifies in the store" grep -q "verified (signature 1, bundle, keyless" out

# the trusted root kept in the store, carried by pack, used on the far side
al_check "pack before the root is kept" "$AIRLOCK" pack -q --store "$T/s" -o "$T/vol0"
al_run out err "$AIRLOCK" verify-image --carry --store "$T/s" --tls-verify=false --trusted-root tr.json
al_check "verify-image --carry --trusted-root keeps the root in the store" \
	sh -c "[ $AL_RC = 0 ] && grep -q 'kept the trusted root tr.json (sha256:$(sha256sum tr.json | cut -c1-64))' out"
al_check "the kept root is the file, byte for byte, in airlock/releases.json" python3 -c '
import json, sys
doc = json.load(open(sys.argv[1] + "/airlock/releases.json"))
(r,) = doc["sigstore"]
assert r["name"] == "trusted-root" and r["content"] == open(sys.argv[2]).read(), r.keys()
' "$T/s" tr.json
cp "$T/s/airlock/releases.json" rel.before
al_check_fails "a file that is not a trusted root is not kept (input error)" 2 \
	"$AIRLOCK" verify-image --carry --store "$T/s" --tls-verify=false --trusted-root fx/rekor.pub
al_check "the root kept before stays" cmp -s rel.before "$T/s/airlock/releases.json"
al_run out err "$AIRLOCK" verify-image --store "$T/s" "${ID[@]}" "$R/ex/app:v1"
al_check "verify-image --store uses the kept root when no trust is given" \
	sh -c "[ $AL_RC = 0 ] && grep -q 'verified (signature 1, bundle, keyless' out"
al_check "a pack signing key" "$AIRLOCK" keygen -o "$T/pk"
al_check "pack the store with its kept root, signed" "$AIRLOCK" pack -q --sign "$T/pk.key" --store "$T/s" -o "$T/vol"
al_check "the pack's signed manifest names releases.json (with the root) by its SHA-256" python3 -c '
import glob, hashlib, json, sys
(mf,) = glob.glob(sys.argv[1] + "/airlock-*.json")
assert glob.glob(sys.argv[1] + "/airlock-*.json.sig"), "unsigned"
m = json.load(open(mf))
(e,) = [e for e in m["entries"] if e["path"] == "airlock/releases.json"]
assert e["sha256"] == hashlib.sha256(open(sys.argv[2] + "/airlock/releases.json", "rb").read()).hexdigest(), e
' "$T/vol" "$T/s"
al_check "unpack it on the far side (signature verified)" "$AIRLOCK" unpack --trust "$T/pk.pub" -q "$T/vol" --store "$T/far"
al_run out err "$AIRLOCK" verify-image --store "$T/far" "${ID[@]}" "$R/ex/app:v1"
al_check "far side: the carried referrer verifies with the carried root, no --trusted-root" \
	sh -c "[ $AL_RC = 0 ] && grep -q 'verified (signature 1, bundle, keyless: $SUBJ' out"
al_check "the far store's inventory lists the kept root by its digest" sh -c "
	'$AIRLOCK' inventory --store '$T/far' -o inv.json >/dev/null &&
	python3 -c 'import json,sys; (r,) = json.load(open(\"inv.json\"))[\"sigstore\"]; assert r[\"name\"] == \"trusted-root\" and r[\"digest\"] == sys.argv[1], r' sha256:$(sha256sum tr.json | cut -c1-64)"
al_run out err "$AIRLOCK" verify-image --store "$T/far" --certificate-identity https://github.com/mallory/x \
	--certificate-oidc-issuer "$ISS" "$R/ex/app:v1"
al_check "far side: another identity is refused with the carried root" [ "$AL_RC" = 1 ]
al_check "unpack the pack made before the root was kept" \
	"$AIRLOCK" unpack --accept-untrusted -q "$T/vol0" --store "$T/far0"
al_run out err "$AIRLOCK" verify-image --store "$T/far0" "${ID[@]}" "$R/ex/app:v1"
al_check "far side without a carried root: no trust, a usage error (exit 2)" [ "$AL_RC" = 2 ]
# a record edited after the pack was signed is refused, never used
python3 - "$T/far/airlock/releases.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["sigstore"][0]["content"] = doc["sigstore"][0]["content"].replace("rekor.airlock.test", "rekor.evil.test")
json.dump(doc, open(sys.argv[1], "w"))
PY
al_run out err "$AIRLOCK" verify-image --store "$T/far" "${ID[@]}" "$R/ex/app:v1"
al_check "a kept root whose text no longer matches its digest is refused" \
	sh -c "[ $AL_RC != 0 ] && grep -q 'does not match its digest' err"

# pushed to a mirror, the referrer is served through the tag schema again
al_check "push the mirrored store" "$AIRLOCK" push --layout source -q --store "$T/s" --tls-verify=false "docker://$R/mirror"
al_run out err "${VI[@]}" --identity ignore --trusted-root tr.json "${ID[@]}" "docker://$R/mirror/ex/app:v1"
al_check "the pushed referrer verifies at the mirror" \
	grep -q "^$R/mirror/ex/app@$D: verified (signature 1, bundle, keyless" out
al_finish
