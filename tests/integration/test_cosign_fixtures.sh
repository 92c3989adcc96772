#!/usr/bin/env bash
# test_cosign_fixtures.sh: signatures made by the real cosign (Go) and logged
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
al_finish
