#!/usr/bin/env bash
# test_mirror_signatures.sh: airlock mirror fetches, verifies and stores release signatures; unsigned or unverifiable releases are refused.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
release=quay.io/airlock-samples/release:4.14.1-x86_64
digest=sha256:c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807

# 1. The bundled sample: keyring and signature store from samples/imageset.yaml.
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$T/ok"
cat "$T/err"
al_check "sample mirror with its keyring exits 0" test "$AL_RC" = 0
al_check "releases.json records the release as verified, with the key" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["releases"][0]
assert r["verified"] is True and len(r["verifiedBy"]) == 40, r' "$T/ok/airlock/releases.json"
al_check "the verified signature was saved in STORE/signatures" \
	cmp "$samples/signatures/sha256=${digest#sha256:}/signature-1" "$T/ok/signatures/sha256=${digest#sha256:}/signature-1"
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$T/ok"
al_check "airlock releases shows it verified" grep -qE '^4\.14\.1 .* verified' "$T/out"

# A configuration without signature settings, reading the sample layout.
cat >"$T/plain.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $release
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: oci:$samples/layout
YAML

# A key that did not sign the release.
export GNUPGHOME=$T/gnupg
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
	--quick-gen-key "other <other@airlock.invalid>" rsa2048 sign never 2>/dev/null
gpg --batch --export >"$T/other.gpg"

# 2. Wrong key: refused (exit 1), nothing of the release left named in the store.
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/plain.yaml" --store "$T/bad" \
	--keyring "$T/other.gpg" --signature-store "$samples/signatures"
cat "$T/err"
al_check "a release signed by an untrusted key is refused with exit 1" test "$AL_RC" = 1
al_check "the error says no verified signature" grep -q "no verified signature" "$T/err"
al_check "the error names the unknown key" grep -qi "unknown key" "$T/err"
al_check "the refused release is not in index.json" python3 -c '
import json, sys
names = [m.get("annotations", {}).get("org.opencontainers.image.ref.name") for m in json.load(open(sys.argv[1] + "/index.json"))["manifests"]]
assert sys.argv[2] not in names, names' "$T/bad" "$release"
al_check "no component was mirrored" test "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["manifests"]))' "$T/bad/index.json")" = 0

# 3. --allow-unsigned mirrors it and records it as unverified.
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/plain.yaml" --store "$T/unsigned" \
	--keyring "$T/other.gpg" --signature-store "$samples/signatures" --allow-unsigned
al_check "--allow-unsigned mirrors it (exit 0)" test "$AL_RC" = 0
al_check "recorded as verified: false" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["releases"][0]
assert r["verified"] is False, r' "$T/unsigned/airlock/releases.json"
al_check "a warning says it was mirrored unverified" grep -q "allow-unsigned" "$T/err"

# 4. Bounded retrieval: a store that hangs costs at most --signature-timeout.
python3 "$AL_SOURCE_DIR/tests/tools/sigserver.py" --root "$samples/signatures" --port-file "$T/sig.port" &
AL_PIDS+=("$!")
for _ in $(seq 100); do [ -s "$T/sig.port" ] && break; sleep 0.1; done
S=127.0.0.1:$(cat "$T/sig.port")
al_run_vclock "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/plain.yaml" --store "$T/hang" \
	--keyring "$samples/keys/release.gpg" --signature-store "http://$S/hang" --signature-timeout 2s
ms=$AL_VMS
cat "$T/err"
echo "hanging store only: exit $AL_RC after $ms ms of airlock's clock"
al_check "a hanging store alone: refused (exit 1)" test "$AL_RC" = 1
al_check "a hanging store alone: ends at the 2 s budget (airlock's clock)" test "$ms" -ge 2000 -a "$ms" -le 2500
al_check "a hanging store alone: the error says it timed out" grep -qiE "timed out|timeout" "$T/err"
al_run_vclock "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/plain.yaml" --store "$T/both" \
	--keyring "$samples/keys/release.gpg" --signature-store "http://$S/hang" \
	--signature-store "http://$S/files" --signature-timeout 20s
ms=$AL_VMS
echo "hanging store + good HTTP store: exit $AL_RC after $ms ms of airlock's clock"
al_check "a good HTTP store next to a hanging one: verified (exit 0)" test "$AL_RC" = 0
al_check "a good HTTP store next to a hanging one: no wait for the hanging one (airlock's clock)" test "$ms" -lt 1000
al_check "the signature fetched over HTTP was saved" \
	test -s "$T/both/signatures/sha256=${digest#sha256:}/signature-1"

# --require-all: the hanging store must answer too, so the release is refused within the budget.
al_run_vclock "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/plain.yaml" --store "$T/all" \
	--keyring "$samples/keys/release.gpg" --signature-store "http://$S/hang" \
	--signature-store "http://$S/files" --signature-timeout 2s --require-all
ms=$AL_VMS
echo "--require-all with a hanging store: exit $AL_RC after $ms ms of airlock's clock"
al_check "--require-all with a hanging store: refused (exit 1)" test "$AL_RC" = 1
al_check "--require-all with a hanging store: ends at the 2 s budget (airlock's clock)" test "$ms" -ge 2000 -a "$ms" -le 2500
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/plain.yaml" --store "$T/all2" \
	--keyring "$samples/keys/release.gpg" --signature-store "http://$S/files" \
	--signature-store "$samples/signatures" --require-all
al_check "--require-all with two good stores: verified (exit 0)" test "$AL_RC" = 0

# 5. A rerun verifies from STORE/signatures alone (no store configured).
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/plain.yaml" --store "$T/both" \
	--keyring "$samples/keys/release.gpg"
al_check "a rerun verifies from the signatures already in the store" test "$AL_RC" = 0
al_finish
