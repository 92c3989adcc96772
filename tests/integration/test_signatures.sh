#!/usr/bin/env bash
# test_signatures.sh: airlock verify and airlock configmaps on a store mirrored from samples/, signed with a temporary gpg key.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

if ! command -v gpg >/dev/null 2>&1; then
	al_skip "gpg not found"
fi

store=$T/store
release=quay.io/airlock-samples/release:4.14.1-x86_64

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$AL_SOURCE_DIR/samples/imageset.yaml" --store "$store"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["releases"][0]["digest"])' \
	"$store/airlock/releases.json")
hex=${digest#sha256:}
al_check "releases.json names the release digest" test ${#hex} = 64

# Keys: a trusted Ed25519 key (armored keyring) and an untrusted RSA key.
export GNUPGHOME=$T/gnupg
mkdir -m 700 "$GNUPGHOME"
G=(gpg --batch --no-tty --quiet --pinentry-mode loopback --passphrase '')
"${G[@]}" --quick-gen-key 'Release <release@example.test>' ed25519 sign never
"${G[@]}" --quick-gen-key 'Other <other@example.test>' rsa2048 sign never
"${G[@]}" --export --armor release@example.test >"$T/trusted.asc"
"${G[@]}" --export other@example.test >"$T/other.gpg"
fpr=$("${G[@]}" --with-colons --list-keys release@example.test | awk -F: '/^fpr/{print $10; exit}')
trap 'gpgconf --kill all >/dev/null 2>&1 || true; al__cleanup' EXIT

payload() { # DIGEST REF
	printf '{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"%s"},"identity":{"docker-reference":"%s"}},"optional":{"creator":"airlock integration test","timestamp":%s}}' \
		"$1" "$2" "$(date +%s)"
}
payload "$digest" "$release" >"$T/payload.json"
"${G[@]}" -u release@example.test -o "$T/release.sig" --sign "$T/payload.json"
sigdir=$store/signatures/sha256=$hex
mkdir -p "$sigdir"
cp "$T/release.sig" "$sigdir/signature-1"

# verify --store
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$store" --keyring "$T/trusted.asc"
cat "$T/err"
al_check "verify exits 0 with a good signature" test "$AL_RC" = 0
al_check "verify prints the release, its digest and the key" \
	grep -q "^verified 4.14.1 $digest by $fpr" "$T/out"
al_check_fails "verify by version" 0 "$AIRLOCK" verify --store "$store" --keyring "$T/trusted.asc" -q 4.14.1
al_check_fails "verify by digest, exact identity" 0 \
	"$AIRLOCK" verify --store "$store" --keyring "$T/trusted.asc" --identity-policy exact -q "$digest"
al_check_fails "a release not in the store is a runtime error" 3 \
	"$AIRLOCK" verify --store "$store" --keyring "$T/trusted.asc" -q 9.9.9
al_check_fails "no --keyring for a release not from quay.io/openshift-release-dev: usage error" 2 \
	"$AIRLOCK" verify --store "$store"

al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$store" --keyring "$T/other.gpg"
al_check "an untrusted key fails verification (exit 1)" test "$AL_RC" = 1
al_check "... saying the signer is unknown" grep -q "unknown key" "$T/err"

al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$store" --keyring "$T/trusted.asc" \
	--identity quay.io/somebody/else:4.14.1
al_check "another repository fails the identity check (exit 1)" test "$AL_RC" = 1
al_check "... saying identity mismatch" grep -q "identity mismatch" "$T/err"

# verify --signature
al_check_fails "verify --signature FILE --digest" 0 \
	"$AIRLOCK" verify --signature "$T/release.sig" --digest "$digest" --keyring "$T/trusted.asc" --identity "$release"
al_run "$T/out" "$T/err" "$AIRLOCK" verify --signature "$T/release.sig" \
	--digest sha256:1111111111111111111111111111111111111111111111111111111111111111 --keyring "$T/trusted.asc"
al_check "a signature for another digest fails (exit 1)" test "$AL_RC" = 1
al_check "... saying digest mismatch" grep -q "digest mismatch: signature is for $digest" "$T/err"

# Key expiry (RFC 9580): a key made two years ago that expired a year ago signed while it was
# valid: verified, unless --strict-expiry (the key must be valid now). A revoked key never verifies.
now=$(date +%s)
"${G[@]}" --faked-system-time $((now - 2 * 366 * 86400)) \
	--quick-gen-key 'Expired <expired@example.test>' ed25519 sign 1y 2>/dev/null
"${G[@]}" --faked-system-time $((now - 540 * 86400)) -u expired@example.test \
	-o "$T/expired.sig" --sign "$T/payload.json" 2>/dev/null
"${G[@]}" --export expired@example.test >"$T/expired.gpg"
V=("$AIRLOCK" verify --signature "$T/expired.sig" --digest "$digest" --keyring "$T/expired.gpg" --identity "$release")
al_run "$T/out" "$T/err" "${V[@]}"
cat "$T/err"
al_check "signed while valid, key expired since: verified (exit 0)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "${V[@]}" --strict-expiry
al_check "--strict-expiry refuses the expired key (exit 1)" test "$AL_RC" = 1
al_check "... saying it expired" grep -q "expired on" "$T/err"
efpr=$("${G[@]}" --with-colons --list-keys expired@example.test | awk -F: '/^fpr/{print $10; exit}')
"${G[@]}" --import "$GNUPGHOME/openpgp-revocs.d/$efpr.rev" 2>/dev/null || {
	sed 's/^:-----BEGIN/-----BEGIN/' "$GNUPGHOME/openpgp-revocs.d/$efpr.rev" >"$T/e.rev"
	"${G[@]}" --import "$T/e.rev" 2>/dev/null
}
"${G[@]}" --export expired@example.test >"$T/revoked.gpg"
al_run "$T/out" "$T/err" "$AIRLOCK" verify --signature "$T/expired.sig" --digest "$digest" \
	--keyring "$T/expired.gpg" --keyring "$T/revoked.gpg" --identity "$release"
al_check "a revocation in any keyring file refuses the key whenever it signed (exit 1)" test "$AL_RC" = 1
al_check "... saying it is revoked" grep -q "is revoked" "$T/err"

# configmaps, oc-mirror's layout (the default: no push recorded): its one
# ConfigMap, as clusterresources GenerateSignatureConfigMap writes it
al_run "$T/out" "$T/err" "$AIRLOCK" configmaps --store "$store" -o "$T/ocm"
cat "$T/err"
al_check "configmaps (default layout) exits 0" test "$AL_RC" = 0
al_check "... oc-mirror's two files, no per-release file" \
	bash -c '[ "$(ls "$1" | tr "\n" " ")" = "signature-configmap.json signature-configmap.yaml " ]' _ "$T/ocm"
al_check "... mirrored-release-signatures, key sha256-<hex>-1 holding signature-1, in YAML and JSON" \
	python3 - "$T/ocm" "$hex" "$sigdir/signature-1" <<'PY'
import base64, json, os, sys, yaml
d, hexd, sig = sys.argv[1], sys.argv[2], open(sys.argv[3], "rb").read()
y = yaml.safe_load(open(os.path.join(d, "signature-configmap.yaml")))
j = json.load(open(os.path.join(d, "signature-configmap.json")))
for cm in (y, j):
    assert cm["kind"] == "ConfigMap" and cm["apiVersion"] == "v1", cm
    md = cm["metadata"]
    assert md["name"] == "mirrored-release-signatures", md
    assert md["namespace"] == "openshift-config-managed", md
    assert md["labels"] == {"release.openshift.io/verification-signatures": ""}, md
    assert md["annotations"]["createdBy"] == "airlock", md
    assert list(cm["binaryData"]) == ["sha256-%s-1" % hexd], cm["binaryData"]
    assert base64.b64decode(cm["binaryData"]["sha256-%s-1" % hexd]) == sig
PY
al_run "$T/ocm.json" "$T/err" "$AIRLOCK" configmaps --store "$store" -o - --json
al_check "configmaps -o - --json (default layout): the same ConfigMap as the file" \
	python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); a["metadata"]["annotations"].pop("createdAt"); b["metadata"]["annotations"].pop("createdAt"); sys.exit(a!=b)' \
	"$T/ocm.json" "$T/ocm/signature-configmap.json"
al_run "$T/out" "$T/err" "$AIRLOCK" configmaps --store "$store" -o - --layout tree
al_check "configmaps --layout tree: usage error (exit 2)" test "$AL_RC" = 2

# configmaps --layout source: one ConfigMap per release
al_run "$T/out" "$T/err" "$AIRLOCK" configmaps --store "$store" -o - --layout source
cat "$T/err"
al_check "configmaps -o - exits 0" test "$AL_RC" = 0
cp "$T/out" "$T/stream.yaml"
al_check "the stream is a ConfigMap in openshift-config-managed" \
	bash -c 'grep -q "^kind: ConfigMap$" "$1" && grep -q "^  namespace: openshift-config-managed$" "$1" &&
		grep -q "^    release.openshift.io/verification-signatures: '"''"'$" "$1" && grep -q "^  name: sha256-$2$" "$1"' \
	_ "$T/stream.yaml" "$hex"
al_check "binaryData sha256-<hex>-1 decodes to signature-1 byte for byte" \
	bash -c 'sed -n "s/^  sha256-$2-1: //p" "$1" | base64 -d | cmp -s - "$3"' _ "$T/stream.yaml" "$hex" "$sigdir/signature-1"
if command -v kubectl >/dev/null 2>&1; then
	# annotate --local parses the file without a cluster
	al_check "kubectl parses the YAML stream" \
		bash -c 'kubectl annotate --local -o json -f "$1" airlock.test/x=1 >"$2" 2>/dev/null' _ "$T/stream.yaml" "$T/kubectl.json"
	al_check "... and keeps the signature" python3 -c '
import base64, json, sys
cm = json.load(open(sys.argv[1]))
data = base64.b64decode(cm["binaryData"]["sha256-%s-1" % sys.argv[2]])
sys.exit(data != open(sys.argv[3], "rb").read())' "$T/kubectl.json" "$hex" "$sigdir/signature-1"
	# create --dry-run=client needs an API server for discovery: the test server.
	python3 "$AL_SOURCE_DIR/tests/tools/kubeserver.py" --port-file "$T/kube.port" >"$T/kube.log" 2>&1 &
	AL_PIDS+=("$!")
	for _ in $(seq 100); do [ -s "$T/kube.port" ] && break; sleep 0.1; done
	al_check "kubectl create --dry-run=client accepts the ConfigMap" \
		kubectl --server "http://127.0.0.1:$(cat "$T/kube.port")" create --dry-run=client --validate=false \
		-f "$T/stream.yaml" -o name
else
	al_skip_part "kubectl not on PATH: the kubectl check"
fi

al_run "$T/out" "$T/err" "$AIRLOCK" configmaps --store "$store" -o "$T/cms" --json --layout source
al_check "configmaps --json -o DIR exits 0" test "$AL_RC" = 0
al_check "the file is named like oc adm release mirror's" test -f "$T/cms/signature-sha256-${hex:0:16}.json"
al_check "the JSON ConfigMap holds the signature byte for byte" python3 -c '
import base64, json, sys
cm = json.load(open(sys.argv[1]))
assert cm["apiVersion"] == "v1" and cm["kind"] == "ConfigMap"
assert cm["metadata"]["name"] == "sha256-" + sys.argv[2]
assert cm["metadata"]["namespace"] == "openshift-config-managed"
assert cm["metadata"]["labels"] == {"release.openshift.io/verification-signatures": ""}
assert list(cm["binaryData"]) == ["sha256-%s-1" % sys.argv[2]]
sys.exit(base64.b64decode(cm["binaryData"]["sha256-%s-1" % sys.argv[2]]) != open(sys.argv[3], "rb").read())' \
	"$T/cms/signature-sha256-${hex:0:16}.json" "$hex" "$sigdir/signature-1"
al_check_fails "configmaps -o DIR writes YAML files" 0 "$AIRLOCK" configmaps --store "$store" -o "$T/cms" -q --layout source
al_check "the YAML file is there" test -f "$T/cms/signature-sha256-${hex:0:16}.yaml"
al_check "airlock check accepts the signatures directory" "$AIRLOCK" check --store "$store" -q

# tampering
python3 -c '
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[-1] ^= 1
open(p, "wb").write(bytes(b))' "$sigdir/signature-1"
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$store" --keyring "$T/trusted.asc"
cat "$T/err"
al_check "a tampered signature fails verification (exit 1)" test "$AL_RC" = 1
al_check "... and nothing is reported verified" test ! -s "$T/out"

# a second, good signature next to the bad one: verified by signature-2
cp "$T/release.sig" "$sigdir/signature-2"
al_check_fails "a good signature-2 verifies the release" 0 \
	"$AIRLOCK" verify --store "$store" --keyring "$T/trusted.asc" -q

rm -rf "$sigdir"
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$store" --keyring "$T/trusted.asc"
al_check "no signatures: verification fails (exit 1)" test "$AL_RC" = 1
al_check "... saying so" grep -q "no signatures" "$T/err"
al_check_fails "no signatures: configmaps exits 1" 1 "$AIRLOCK" configmaps --store "$store" -o -
al_check_fails "no signatures: configmaps --layout source exits 1" 1 "$AIRLOCK" configmaps --store "$store" -o - --layout source
rm -rf "$store/signatures"
al_check_fails "no signatures directory at all: still exit 1" 1 \
	"$AIRLOCK" verify --store "$store" --keyring "$T/trusted.asc" -q

al_finish
