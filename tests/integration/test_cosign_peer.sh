#!/usr/bin/env bash
# test_cosign_peer.sh: cosign signatures and sigstore bundles made by the real
# al-tier: slow
# sigstore-js packages (a mock Fulcio and Rekor) must get the same verdict
# from airlock as from @sigstore/verify, case by case (good and adversarial).
# The packages come from the npm registry into the build tree; without node,
# npm or network this is a skip (77), never a pass.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NM=$("$AL_TOOLS/sigstore-setup.sh" "$AL_BUILD_DIR/sigstore-npm") || exit 77
TEST_COSIGN=$AL_BUILD_DIR/test_cosign
if [ ! -x "$TEST_COSIGN" ]; then
	al_fail "unit test driver '$TEST_COSIGN' is built"
	al_finish
fi
DIGEST=sha256:$(printf 'airlock cosign peer' | sha256sum | cut -c1-64)
REF=quay.io/example/release:4.16.0

al_check "sigstore-js makes the fixtures" \
	env NODE_PATH="$NM" node "$AL_TOOLS/sigstore_fixtures.js" "$T/fx" "$DIGEST" "$REF"
al_run "$T/cases.out" "$T/cases.err" "$TEST_COSIGN" --cases "$T/fx" "$DIGEST" "$REF"
cat "$T/cases.out"
al_check "airlock and @sigstore/verify agree on every case" [ "$AL_RC" = 0 ]
n=$(grep -c '^ok  ' "$T/cases.out" || true)
al_check "at least 40 cases ran ($n)" [ "$n" -ge 40 ]
al_check "good keyless bundle accepted by both" grep -q '^ok   keyless-bundle: airlock ok, peer ok' "$T/cases.out"
al_check "expired certificate refused by both" grep -q '^ok   keyless-expired-bundle: airlock refused: .*expired.*peer fail' "$T/cases.out"
al_finish
