#!/usr/bin/env bash
# test_cosign_referrers_ggcr.sh: cosign's bundle-as-referrer flow against a
# al-tier: slow
# registry of another implementation with the OCI 1.1 referrers API:
# go-containerregistry's pkg/registry (Debian bookworm-backports 0.14.0,
# built by tests/tools/ggcr-setup.sh). Its referrers API lists a manifest
# with the config's media type as artifactType (the image-spec 1.1 release
# candidates' rule), not the manifest's: airlock takes the manifest's own,
# so cosign's referrer is found through the API, verified and mirrored.
# Without go, the package, node, npm or network this is a skip (77).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
GGCR=$("$AL_TOOLS/ggcr-setup.sh" "$AL_BUILD_DIR/ggcr") || al_skip "no go-containerregistry registry (golang-go, bookworm-backports)"
NM=$("$AL_TOOLS/sigstore-setup.sh" "$AL_BUILD_DIR/sigstore-npm") || al_skip "no sigstore-js (node, npm)"

PUSH=(python3 "$AL_TOOLS/cosign_push.py")
cd "$T"
"$GGCR" >ggcr.out 2>ggcr.err &
G_PID=$!
AL_PIDS+=("$G_PID")
for _ in $(seq 100); do
	grep -q '^serving on ' ggcr.out 2>/dev/null && break
	kill -0 "$G_PID" 2>/dev/null || break
	sleep 0.1
done
G=$(sed -n 's/^serving on //p' ggcr.out)
al_check "go-containerregistry's registry is up" test -n "$G"
SUBJ='https://github.com/example/release/.github/workflows/sign.yml@refs/heads/main'
ISS=https://oidc.airlock.test
ID=(--certificate-identity "$SUBJ" --certificate-oidc-issuer "$ISS")
VI=("$AIRLOCK" verify-image --tls-verify=false --trusted-root tr.json "${ID[@]}")
BUNDLE=application/vnd.dev.sigstore.bundle.v0.3+json

D=$("${PUSH[@]}" image "$G" ex/app v1)
al_check "sigstore-js makes the bundles (mock Fulcio and Rekor)" \
	env NODE_PATH="$NM" node "$AL_TOOLS/sigstore_fixtures.js" fx "$D" "$G/ex/app"
python3 "$AL_TOOLS/sigstore_mock_root.py" fx >tr.json
REF=$("${PUSH[@]}" cosign-referrer "$G" ex/app "$D" fx/keyless-cosign-v3-bundle.bundle.json)
curl -s "http://$G/v2/ex/app/referrers/$D" >ggcr.list
al_check "its referrers API lists cosign's referrer" python3 -c '
import json, sys
(d,) = json.load(open("ggcr.list"))["manifests"]
assert d["digest"] == sys.argv[1], d
print("note: go-containerregistry lists it with artifactType %s, annotations %s" % (d.get("artifactType"), sorted(d.get("annotations", {}))))
' "$REF"

al_run out err "${VI[@]}" -v "docker://$G/ex/app:v1"
al_check "through its referrers API: cosign's bundle referrer verifies" \
	grep -q "^$G/ex/app@$D: verified (signature 1, bundle, keyless: $SUBJ" out
al_check "found through the referrers API" grep -q '1 signature artifact(s), 1 candidate(s), referrers API' err
al_run out err "${VI[@]}" --certificate-identity https://github.com/mallory/x "docker://$G/ex/app:v1"
al_check "another identity is refused (exit 1)" [ "$AL_RC" = 1 ]

al_run out err "$AIRLOCK" mirror --layout source --tls-verify=false --store s \
	--keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --trusted-root tr.json --image "docker://$G/ex/app:v1"
al_check "mirror from it carries the referrer and verifies it under the root" \
	sh -c "[ $AL_RC = 0 ] && grep -q 'sigstore: carried 1 signature artifact(s) of 1 image(s)' err && grep -q 'sigstore trusted root: 1 image(s) verified' err"
al_check "the store's referrers index gives the manifest's artifactType" python3 -c '
import json, sys
name, ref, at = sys.argv[1:4]
idx = json.load(open("s/index.json"))
(e,) = [m for m in idx["manifests"] if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == name]
(c,) = json.load(open("s/blobs/sha256/" + e["digest"][7:]))["manifests"]
assert c["digest"] == ref and c["artifactType"] == at, c
' "$G/ex/app:sha256-${D#sha256:}" "$REF" "$BUNDLE"
al_run out err "$AIRLOCK" verify-image --store s "${ID[@]}" "$G/ex/app:v1"
al_check "what came through it verifies in the store with the kept root" grep -q "verified (signature 1, bundle, keyless" out
al_stop "$G_PID"
al_finish
