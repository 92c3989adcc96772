#!/usr/bin/env bash
# test_cosign_referrers_serve.sh: cosign's bundle-as-referrer flow against a
# al-tier: slow
# registry with a real OCI 1.1 referrers API, airlock serve --allow-push:
# the image and cosign v3's referrer pushed into it (the PUT answered with
# OCI-Subject, so no referrers tag is written, as go-containerregistry
# remote.Write does), found through GET /v2/<name>/referrers/<digest>,
# verified, mirrored; and what it lists and what the mirror carries compared
# with the same referrer read through tests/tools/referrers_shim.py in front
# of docker-registry 2.8 (which has no referrers API). Keyless bundle from
# sigstore-js (mock Fulcio, Rekor, CT log); without node, npm or network
# this is a skip (77), never a pass.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
[ -x "${AL_REGISTRY_BIN:-/usr/bin/docker-registry}" ] || exit 77
NM=$("$AL_TOOLS/sigstore-setup.sh" "$AL_BUILD_DIR/sigstore-npm") || exit 77

PUSH=(python3 "$AL_TOOLS/cosign_push.py")
export SOURCE_DATE_EPOCH=1764892800
al_start_registry "$T/reg"
R=$REG_ADDR
cd "$T"
SUBJ='https://github.com/example/release/.github/workflows/sign.yml@refs/heads/main'
ISS=https://oidc.airlock.test
ID=(--certificate-identity "$SUBJ" --certificate-oidc-issuer "$ISS")
VI=("$AIRLOCK" verify-image --tls-verify=false --trusted-root tr.json "${ID[@]}")
MIRROR=("$AIRLOCK" mirror --layout source --tls-verify=false
	--keyring "$AL_SOURCE_DIR/samples/keys/release.gpg")

# the shim side: docker-registry with the tag schema, the API in front
D=$("${PUSH[@]}" image "$R" ex/app v1)
al_check "sigstore-js makes the bundles (mock Fulcio and Rekor)" \
	env NODE_PATH="$NM" node "$AL_TOOLS/sigstore_fixtures.js" fx "$D" "$R/ex/app"
python3 "$AL_TOOLS/sigstore_mock_root.py" fx >tr.json
REF=$("${PUSH[@]}" cosign-referrer "$R" ex/app "$D" fx/keyless-cosign-v3-bundle.bundle.json)
python3 "$AL_TOOLS/referrers_shim.py" "$R" shim.port shim.log &
SHIM_PID=$!
AL_PIDS+=("$SHIM_PID")
for _ in $(seq 100); do [ -s shim.port ] && break; sleep 0.1; done
S=127.0.0.1:$(cat shim.port)

# the serve side: an empty store taking pushes with a bearer token
mkdir -p push/blobs/sha256
printf '{"imageLayoutVersion":"1.0.0"}\n' >push/oci-layout
printf '{"schemaVersion":2,"manifests":[]}\n' >push/index.json
TOKEN=tok-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$TOKEN" >tokens
"$AIRLOCK" serve --store push --listen 127.0.0.1:0 --allow-push --token-file tokens \
	--access-log serve.log >serve.out 2>serve.err &
SRV_PID=$!
AL_PIDS+=("$SRV_PID")
for _ in $(seq 100); do
	grep -q '^serving on ' serve.out 2>/dev/null && break
	kill -0 "$SRV_PID" 2>/dev/null || break
	sleep 0.1
done
A=$(sed -n 's/^serving on //p' serve.out)
al_check "airlock serve --allow-push is up" test -n "$A"

D2=$(AL_PUSH_TOKEN=$TOKEN "${PUSH[@]}" image "$A" ex/app v1)
al_check "the image pushed into serve has the same digest" [ "$D2" = "$D" ]
REF2=$(AL_PUSH_TOKEN=$TOKEN "${PUSH[@]}" cosign-referrer "$A" ex/app "$D" fx/keyless-cosign-v3-bundle.bundle.json)
al_check "the referrer pushed into serve is the same manifest (same digest)" [ "$REF2" = "$REF" ]
al_check "serve answered its PUT with OCI-Subject: no referrers tag was written" python3 -c '
import json, sys
idx = json.load(open("push/index.json"))
names = [m.get("annotations", {}).get("org.opencontainers.image.ref.name", "") for m in idx["manifests"]]
assert not any(":sha256-" in n for n in names), names
assert any(m["digest"] == sys.argv[1] for m in idx["manifests"]), "the referrer is not in the store"
' "$REF"

# both APIs list the referrer; what serve lists and what the shim lists
curl -s "http://$A/v2/ex/app/referrers/$D" >serve.list
curl -s "http://$S/v2/ex/app/referrers/$D" >shim.list
al_check "serve's referrers API and the shim list the same referrer (digest, media type, size, artifactType)" python3 -c '
import json, sys
def key(f):
    doc = json.load(open(f))
    assert doc["mediaType"] == "application/vnd.oci.image.index.v1+json", doc
    return sorted((d["digest"], d["mediaType"], d["size"], d.get("artifactType")) for d in doc["manifests"])
a, b = key("serve.list"), key("shim.list")
assert a == b and len(a) == 1 and a[0][0] == sys.argv[1], (a, b)
' "$REF"
al_check "filtered by artifactType, both still list it (OCI-Filters-Applied)" sh -c "
	curl -s -D h1 -o l1 'http://$A/v2/ex/app/referrers/$D?artifactType=application/vnd.dev.sigstore.bundle.v0.3%2Bjson' &&
	grep -qi '^OCI-Filters-Applied: artifactType' h1 && grep -q '$REF' l1"
python3 -c '
import json
for f in ("serve.list", "shim.list"):
    (d,) = json.load(open(f))["manifests"]
    print("note: %s lists annotations: %s" % (f, sorted(d.get("annotations", {}))))
'

# verify-image finds it through serve's API, never asking for the tag
: >serve.log
al_run out err "${VI[@]}" -v "docker://$A/ex/app:v1"
al_check "through serve's referrers API: cosign's bundle referrer verifies" \
	grep -q "^$A/ex/app@$D: verified (signature 1, bundle, keyless: $SUBJ" out
al_check "verify-image says it used the referrers API" grep -q 'referrers API' err
al_check "serve saw GET .../referrers/<digest> and no request for the sha256-<hex> tag" python3 -c '
import json, sys
paths = [json.loads(l)["path"] for l in open("serve.log") if l.strip()]
assert "/v2/ex/app/referrers/" + sys.argv[1] in paths, paths
assert "/v2/ex/app/manifests/sha256-" + sys.argv[1][7:] not in paths, paths
' "$D"

# mirror from each: the same referrers index in the store
al_run out err "${MIRROR[@]}" --store sv --image "docker://$A/ex/app:v1"
al_check "mirror from serve carries the referrer" \
	sh -c "[ $AL_RC = 0 ] && grep -q 'sigstore: carried 1 signature artifact(s) of 1 image(s)' err"
al_run out err "${MIRROR[@]}" --store ss --image "docker://$S/ex/app:v1"
al_check "mirror from the shim carries the referrer" \
	sh -c "[ $AL_RC = 0 ] && grep -q 'sigstore: carried 1 signature artifact(s) of 1 image(s)' err"
al_check "both stores hold the same referrers index (children, artifactType, cosign's annotations)" python3 -c '
import json, sys
def index(store, name):
    idx = json.load(open(store + "/index.json"))
    (e,) = [m for m in idx["manifests"] if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == name]
    return json.load(open(store + "/blobs/sha256/" + e["digest"][7:]))
a = index("sv", sys.argv[1] + "/ex/app:sha256-" + sys.argv[3][7:])
b = index("ss", sys.argv[2] + "/ex/app:sha256-" + sys.argv[3][7:])
assert a == b, (a, b)
(c,) = a["manifests"]
assert c["digest"] == sys.argv[4] and c["annotations"]["dev.sigstore.bundle.content"] == "dsse-envelope", c
' "$A" "$S" "$D" "$REF"
al_run out err "$AIRLOCK" verify-image --store sv --trusted-root tr.json "${ID[@]}" "$A/ex/app:v1"
al_check "what came from serve verifies in the store" grep -q "verified (signature 1, bundle, keyless" out
al_run out err "${VI[@]}" --certificate-identity https://github.com/mallory/x "docker://$A/ex/app:v1"
al_check "through serve, another identity is refused (exit 1)" [ "$AL_RC" = 1 ]
al_stop "$SRV_PID"
al_stop "$SHIM_PID"
al_finish
