#!/usr/bin/env bash
# test_cosign_mirror_root.sh: mirror --trusted-root: the signatures a mirror
# al-tier: slow
# carries are checked against the Sigstore trusted root while mirroring and
# the root is kept in the store as verify-image --carry keeps it; pack
# carries it, the far side verifies with it. A root the signatures refute
# fails the mirror (exit 1) and is not kept. Keyless bundles from
# sigstore-js (mock Fulcio, Rekor, CT log) in cosign v3's referrer shape;
# without node, npm or network this is a skip (77), never a pass.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
[ -x "${AL_REGISTRY_BIN:-/usr/bin/docker-registry}" ] || exit 77
NM=$("$AL_TOOLS/sigstore-setup.sh" "$AL_BUILD_DIR/sigstore-npm") || exit 77

PUSH=(python3 "$AL_TOOLS/cosign_push.py")
al_start_registry "$T/reg"
R=$REG_ADDR
cd "$T"
SUBJ='https://github.com/example/release/.github/workflows/sign.yml@refs/heads/main'
ISS=https://oidc.airlock.test
ID=(--certificate-identity "$SUBJ" --certificate-oidc-issuer "$ISS")
KR=(--keyring "$AL_SOURCE_DIR/samples/keys/release.gpg")

D=$("${PUSH[@]}" image "$R" ex/app v1)
K=$("${PUSH[@]}" image "$R" ex/keyed v1)
"${PUSH[@]}" image "$R" ex/unsigned v1 >/dev/null
al_check "sigstore-js makes the bundles (mock Fulcio and Rekor)" \
	env NODE_PATH="$NM" node "$AL_TOOLS/sigstore_fixtures.js" fx "$D" "$R/ex/app"
python3 "$AL_TOOLS/sigstore_mock_root.py" fx >tr.json
# the same instance's logs with another Fulcio CA: the signatures refute it
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout other-ca.key \
	-out other-ca.pem -subj /CN=other-fulcio -days 3650 \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
python3 "$AL_TOOLS/sigstore_mock_root.py" fx --fulcio other-ca.pem >wrong.json
"${PUSH[@]}" cosign-referrer "$R" ex/app "$D" fx/keyless-cosign-v3-bundle.bundle.json >/dev/null
# a key-based tag-scheme signature: a trusted root holds no key for it
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out k.pem 2>/dev/null
"${PUSH[@]}" sig "$R" ex/keyed "$K" k.pem "$R/ex/keyed" >/dev/null
IMGS=(--image "docker://$R/ex/app:v1" --image "docker://$R/ex/keyed:v1" --image "docker://$R/ex/unsigned:v1")
MIRROR=("$AIRLOCK" mirror --layout source --tls-verify=false "${KR[@]}")
kept() { # the trusted-root record of store $1 (its content), or nothing
	python3 -c '
import json, os, sys
p = sys.argv[1] + "/airlock/releases.json"
doc = json.load(open(p)) if os.path.exists(p) else {}
for r in doc.get("sigstore") or []:
    if r["name"] == "trusted-root":
        sys.stdout.write(r["content"])
' "$1"
}

# inputs refused before anything is fetched: a usage error (exit 2)
al_check_fails "a --trusted-root that is not a trusted root: exit 2" 2 \
	"${MIRROR[@]}" --store s0 --trusted-root fx/rekor.pub "${IMGS[@]}"
al_check "nothing was mirrored" test ! -e s0/index.json
al_check_fails "--trusted-root with --no-sigstore: exit 2" 2 \
	"${MIRROR[@]}" --store s0 --no-sigstore --trusted-root tr.json "${IMGS[@]}"

# the wrong root: the keyless signature is refused, the mirror fails
al_run out err "${MIRROR[@]}" --store sw --trusted-root wrong.json "${IMGS[@]}"
al_check "a root the signatures refute fails the mirror (exit 1)" [ "$AL_RC" = 1 ]
al_check "the refused image is named, with the chain's reason" \
	grep -q "$R/ex/app:v1: signature 1: certificate does not verify against the Fulcio roots" err
al_check "the counts: 0 verified, 1 refused, 2 not checked" \
	grep -q 'sigstore trusted root: 0 image(s) verified, 1 refused, 2 not checked' err
al_check "the refuted root is not kept" test -z "$(kept sw)"
al_run out err "${MIRROR[@]}" --json --store sj --trusted-root wrong.json "${IMGS[@]}"
al_check "--json: the same counts under sigstore.trusted_root, not kept" python3 -c '
import json, sys
d = json.load(open("out"))
assert d["exit"] == 1, d["exit"]
assert d["sigstore"]["trusted_root"] == {"verified": 0, "refused": 1, "unchecked": 2, "kept": False}, d["sigstore"]
'

# the right root: verified while mirroring, kept in the store
al_run out err "${MIRROR[@]}" --store s --trusted-root tr.json "${IMGS[@]}"
al_check "mirror --trusted-root: exit 0" [ "$AL_RC" = 0 ]
al_check "the carried keyless signature verified under the root; the key-based and unsigned ones not checked" \
	grep -q 'sigstore trusted root: 1 image(s) verified, 0 refused, 2 not checked' err
kept s >kept.json
al_check "the root is kept in the store byte for byte (airlock/releases.json \"sigstore\")" cmp -s kept.json tr.json
al_check "its record names the file and its SHA-256" python3 -c '
import hashlib, json, sys
(r,) = json.load(open("s/airlock/releases.json"))["sigstore"]
assert r["digest"] == "sha256:" + hashlib.sha256(open("tr.json", "rb").read()).hexdigest(), r
assert r["source"] == "tr.json" and r["mediaType"].startswith("application/vnd.dev.sigstore.trustedroot+json"), r
'
al_run out err "$AIRLOCK" verify-image --store s "${ID[@]}" "$R/ex/app:v1"
al_check "verify-image --store uses the root the mirror kept" \
	sh -c "[ $AL_RC = 0 ] && grep -q 'verified (signature 1, bundle, keyless: $SUBJ' out"
# a rerun with the wrong root leaves the right one kept
al_run out err "${MIRROR[@]}" --store s --trusted-root wrong.json "${IMGS[@]}"
al_check "a later refuted root fails (exit 1)" [ "$AL_RC" = 1 ]
kept s >kept.json
al_check "and the root kept before stays" cmp -s kept.json tr.json
al_run out err "${MIRROR[@]}" --store sa --allow-unsigned --trusted-root wrong.json "${IMGS[@]}"
al_check "--allow-unsigned: the refusal is a warning (exit 0)" \
	sh -c "[ $AL_RC = 0 ] && grep -q 'allowed (--allow-unsigned): $R/ex/app:v1' err"
kept sa >kept.json
al_check "and the root is kept, as asked" cmp -s kept.json wrong.json

# pack carries it under the signed manifest; the far side uses it
al_check "a pack signing key" "$AIRLOCK" keygen -o pk
al_check "pack the mirrored store, signed" "$AIRLOCK" pack -q --sign pk.key --store s -o vol
al_check "unpack on the far side (signature verified)" "$AIRLOCK" unpack --trust pk.pub -q vol --store far
al_run out err "$AIRLOCK" verify-image --store far "${ID[@]}" "$R/ex/app:v1"
al_check "far side: the carried signature verifies with the root the mirror kept, no --trusted-root" \
	sh -c "[ $AL_RC = 0 ] && grep -q 'verified (signature 1, bundle, keyless: $SUBJ' out && grep -q 'using the trusted root kept in the store' err"
al_run out err "$AIRLOCK" verify-image --store far --certificate-identity https://github.com/mallory/x \
	--certificate-oidc-issuer "$ISS" "$R/ex/app:v1"
al_check "far side: another identity is refused" [ "$AL_RC" = 1 ]
al_finish
