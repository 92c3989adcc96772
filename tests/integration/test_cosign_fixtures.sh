#!/usr/bin/env bash
# test_cosign_fixtures.sh: signatures made by the real cosign (Go) and logged
# al-tier: quick
# in a real Rekor, from containers/image's test fixtures
# (tests/fixtures/containers-image-cosign, source and commit in its README),
# must get the verdicts containers/image's own tests give them: key-based,
# key + Rekor SET, Fulcio + Rekor with identity and issuer, wrong key, wrong
# Rekor key, missing required log entry, another identity or issuer, PKI
# (BYOPKI) with its email and another one, a good
# signature shown with another manifest.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TEST_COSIGN=$AL_BUILD_DIR/test_cosign
if [ ! -x "$TEST_COSIGN" ]; then
	al_fail "unit test driver '$TEST_COSIGN' is built"
	al_finish
fi
cd "$T"
mkdir -p "$T/cases"
al_check "the fixtures convert" \
	python3 "$AL_TOOLS/cimage_cosign_cases.py" "$AL_SOURCE_DIR/tests/fixtures/containers-image-cosign" "$T/cases"
# the digest and reference are per case; these two are not used
al_run "$T/out" "$T/err" "$TEST_COSIGN" --cases "$T/cases" "sha256:$(printf x | sha256sum | cut -c1-64)" unused/name
cat "$T/out"
al_check "airlock agrees with containers/image on every fixture" [ "$AL_RC" = 0 ]
al_check "the real Fulcio + Rekor signature verifies" grep -q '^ok   cimage-fulcio-rekor-valid: airlock ok' "$T/out"
al_check "the real key + Rekor SET verifies" grep -q '^ok   cimage-key-rekor-valid: airlock ok' "$T/out"
al_check "the real PKI (BYOPKI) signature verifies" grep -q '^ok   cimage-pki-valid: airlock ok' "$T/out"
al_check "13 cases ran" grep -q '^13 cases, 0 disagreements' "$T/out"
# the same signatures in a store, through airlock verify-image
AL_FX=$AL_SOURCE_DIR/tests/fixtures/containers-image-cosign
al_check "a store is built from the fixtures" python3 "$AL_TOOLS/cimage_cosign_store.py" "$AL_FX" "$T/store" \
	dir-img-cosign-pki-valid dir-img-cosign-fulcio-rekor-valid dir-img-cosign-key-rekor-valid dir-img-cosign-valid
VI=("$AIRLOCK" verify-image --store "$T/store")
al_run out err "${VI[@]}" --pki-ca "$AL_FX/pki_root_crts.pem" --pki-ca "$AL_FX/pki_intermediate_crts.pem" \
	--pki-email qiwan@redhat.com localhost:5000/test:latest
al_check "verify-image --pki-ca: the BYOPKI signature" grep -q "verified (signature 1, cosign tag, keyless: qiwan@redhat.com)" out
al_run out err "${VI[@]}" --pki-ca "$AL_FX/pki_root_crts.pem" --pki-ca "$AL_FX/pki_intermediate_crts.pem" \
	--pki-email someone@example.com localhost:5000/test:latest
al_check "verify-image --pki-ca with another email: exit 1" [ "$AL_RC" = 1 ]
al_run out err "${VI[@]}" --fulcio-root "$AL_FX/fulcio_v1.crt.pem" --rekor-key "$AL_FX/rekor.pub" \
	--certificate-identity mitr@redhat.com --certificate-oidc-issuer https://github.com/login/oauth \
	192.168.64.2:5000/cosign-signed/fulcio-rekor-1:latest
al_check "verify-image --fulcio-root: the real keyless signature" grep -q "keyless: mitr@redhat.com, logged in Rekor" out
al_run out err "${VI[@]}" --key "$AL_FX/cosign2.pub" --rekor-key "$AL_FX/rekor.pub" --require-tlog \
	192.168.64.2:5000/cosign-signed/key-1:latest
al_check "verify-image --key --require-tlog: the real key + Rekor signature" grep -q "logged in Rekor" out
al_run out err "${VI[@]}" --key "$AL_FX/cosign.pub" --require-tlog --rekor-key "$AL_FX/rekor.pub" \
	192.168.64.2:5000/cosign-signed-single-sample:latest
al_check "--require-tlog refuses the signature that was never logged" [ "$AL_RC" = 1 ]
cat >fulcio.yaml <<YAML
apiVersion: config.openshift.io/v1
kind: ClusterImagePolicy
metadata: {name: fulcio}
spec:
  scopes: [192.168.64.2:5000/cosign-signed]
  policy:
    rootOfTrust:
      policyType: FulcioCAWithRekor
      fulcioCAWithRekor:
        fulcioCAData: $(base64 -w0 "$AL_FX/fulcio_v1.crt.pem")
        rekorKeyData: $(base64 -w0 "$AL_FX/rekor.pub")
        fulcioSubject: {oidcIssuer: 'https://github.com/login/oauth', signedEmail: mitr@redhat.com}
    signedIdentity: {matchPolicy: MatchRepository}
YAML
al_run out err "${VI[@]}" --policy fulcio.yaml 192.168.64.2:5000/cosign-signed/fulcio-rekor-1:latest
al_check "a FulcioCAWithRekor ClusterImagePolicy accepts it" grep -q "accepted by ClusterImagePolicy/fulcio" out
al_run out err "${VI[@]}" --policy fulcio.yaml 192.168.64.2:5000/cosign-signed/key-1:latest
al_check "and refuses the key-signed image under the same scope" [ "$AL_RC" = 1 ]
al_finish
