#!/usr/bin/env bash
# test_redhat_keys.sh: the Red Hat release keys as users have them (library-go's SHA-1 copy, cluster-update-keys' file and ConfigMap, directories), the shipped default keys and signature store, and the verify usage rules, on the real 4.15.0 signature.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

data=$AL_SOURCE_DIR/tests/data/redhat
samples=$AL_SOURCE_DIR/samples
sig=$data/ocp-release-4.15.0-x86_64.sig
digest=sha256:0da6316466d60a3a4535d5fed3589feb0391989982fba59d47d4c729912d6363
ref=quay.io/openshift-release-dev/ocp-release:4.15.0-x86_64
rk2=567E347AD0044ADE55BA8A5F199E2F91FD431D51
lg=$data/library-go-redhat.txt
cuk=$data/verifier-public-key-redhat-release
cm=$data/cluster-update-keys-configmap.yaml
V=("$AIRLOCK" verify --signature "$sig" --digest "$digest" --identity "$ref")

# 1. library-go's copy (SHA-1 self-signature from 2009): accepted, with a warning naming the key.
al_run "$T/out" "$T/err" "${V[@]}" --keyring "$lg"
cat "$T/err"
al_check "library-go's SHA-1 copy of release key 2 verifies 4.15.0" test "$AL_RC" = 0
al_check "the result names release key 2" grep -q "by $rk2" "$T/out"
al_check "a warning names the key and says SHA-1" \
	grep -qE "warning: key $rk2 .*release key 2.*SHA-1 self-signature" "$T/err"

# 2. Both copies, in both orders: the same result, and no SHA-1 warning (the SHA-256 copy decides).
for order in "$lg $cuk" "$cuk $lg"; do
	set -- $order
	al_run "$T/out" "$T/err" "${V[@]}" --keyring "$1" --keyring "$2"
	al_check "two copies ($(basename "$1") first): verified" test "$AL_RC" = 0
	al_check "two copies ($(basename "$1") first): no SHA-1 warning" \
		test "$(grep -c 'SHA-1' "$T/err" || true)" = 0
done

# 3. The forms clusters ship: the ConfigMap YAML as committed, a directory, a mounted ConfigMap.
al_run "$T/out" "$T/err" "${V[@]}" --keyring "$cm"
al_check "the cluster-update-keys ConfigMap YAML is a keyring" test "$AL_RC" = 0
mkdir -p "$T/keys" && cp "$lg" "$cuk" "$T/keys/"
al_run "$T/out" "$T/err" "${V[@]}" --keyring "$T/keys"
al_check "a directory of key files is a keyring" test "$AL_RC" = 0
mkdir -p "$T/mnt/..2026_01_01"
cp "$cuk" "$T/mnt/..2026_01_01/verifier-public-key-redhat"
echo https://mirror.example/sigs >"$T/mnt/..2026_01_01/store-openshift-official-release"
(cd "$T/mnt" && ln -s ..2026_01_01 ..data && ln -s ..data/verifier-public-key-redhat . &&
	ln -s ..data/store-openshift-official-release .)
al_run "$T/out" "$T/err" "${V[@]}" --keyring "$T/mnt"
al_check "a mounted ConfigMap directory is a keyring (store-* skipped)" test "$AL_RC" = 0
echo 'kind: Secret' >"$T/junk.yaml"
al_run "$T/out" "$T/err" "${V[@]}" --keyring "$T/junk.yaml"
al_check "a file that holds no key is refused naming it (exit 2: a keyring is configuration, as for mirror and update)" test "$AL_RC" = 2
al_check "the error names the file" grep -q "junk.yaml" "$T/err"

# 4. No --keyring: the shipped Red Hat keys, for Red Hat's releases only.
al_run "$T/out" "$T/err" "${V[@]}"
al_check "no --keyring: the shipped keys verify 4.15.0" test "$AL_RC" = 0
al_check "no --keyring: by release key 2" grep -q "by $rk2" "$T/out"
al_check "the shipped keys carry no SHA-1 warning" test ! -s "$T/err"
al_check_fails "--no-default-keys without --keyring is a usage error" 2 "${V[@]}" --no-default-keys -q
al_check_fails "shipped keys for another registry's release: usage error" 2 \
	"$AIRLOCK" verify --signature "$sig" --digest "$digest" --identity quay.io/example/release:4.15.0 -q
al_check_fails "an --identity that does not parse is a usage error" 2 \
	"$AIRLOCK" verify --signature "$sig" --digest "$digest" --keyring "$cuk" --identity 'Not A Ref' -q
al_check_fails "--strict-expiry changes nothing for a key that never expires" 0 "${V[@]}" --strict-expiry -q

# 5. mirror: a release under quay.io/openshift-release-dev (read from a local layout) is looked up in
# Red Hat's signature store too (here a loopback server: AIRLOCK_REDHAT_SIGNATURE_STORE), and with no
# --keyring checked against the shipped keys.
shex=c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
mkdir -p "$T/rh-layout"
cp "$samples/layout/oci-layout" "$T/rh-layout/"
ln -s "$samples/layout/blobs" "$T/rh-layout/blobs"
sed 's#quay.io/airlock-samples/release:#quay.io/openshift-release-dev/ocp-release:#' \
	"$samples/layout/index.json" >"$T/rh-layout/index.json"
cat >"$T/rh.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/openshift-release-dev/ocp-release:4.14.1-x86_64
airlock:
  sources:
  - prefix: quay.io/openshift-release-dev
    location: oci:$T/rh-layout
  - prefix: quay.io/airlock-samples
    location: oci:$samples/layout
YAML
python3 "$AL_TOOLS/sigserver.py" --root "$samples/signatures" --port-file "$T/sig.port" &
AL_PIDS+=("$!")
for _ in $(seq 100); do [ -s "$T/sig.port" ] && break; sleep 0.1; done
S=127.0.0.1:$(cat "$T/sig.port")
export AIRLOCK_REDHAT_SIGNATURE_STORE=http://$S/files
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/rh.yaml" --store "$T/s1" \
	--keyring "$samples/keys/release.gpg" --identity-policy ignore
cat "$T/err"
al_check "mirror of a Red Hat release finds its signature in the default store" test "$AL_RC" = 0
curl -s "http://$S/_log" >"$T/log"
al_check "the default store was asked for sha256=<hex>/signature-1" \
	grep -q "^/files/sha256=$shex/signature-1" "$T/log"
al_check "the signature from the default store is saved" test -s "$T/s1/signatures/sha256=$shex/signature-1"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/rh.yaml" --store "$T/s2" \
	--keyring "$samples/keys/release.gpg" --identity-policy ignore --no-default-store
al_check "--no-default-store: no signature anywhere, refused (exit 1)" test "$AL_RC" = 1
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/rh.yaml" --store "$T/s3" --identity-policy ignore
cat "$T/err"
al_check "no --keyring for a Red Hat release: checked with the shipped keys (exit 1, not 2)" test "$AL_RC" = 1
al_check "no --keyring: the sample's key is unknown to the shipped keys" grep -qi "unknown key" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/rh.yaml" --store "$T/s4" --no-default-keys
al_check "--no-default-keys and no --keyring: usage error" test "$AL_RC" = 2

# Channels whose update service names releases elsewhere: the shipped keys do not apply.
cat >"$T/graph.json" <<JSON
{"nodes": [{"version": "4.14.1", "payload": "quay.io/airlock-samples/release@sha256:$shex", "metadata": {}}],
 "edges": [], "conditionalEdges": []}
JSON
cat >"$T/ch.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    channels:
    - name: stable-4.14
      minVersion: 4.14.1
      maxVersion: 4.14.1
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: oci:$samples/layout
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/ch.yaml" --graph-file "$T/graph.json" --store "$T/s5"
cat "$T/err"
al_check "channels naming other releases, no --keyring: usage error (exit 2)" test "$AL_RC" = 2
al_check "... saying the shipped keys do not apply" grep -q "not under quay.io/openshift-release-dev" "$T/err"
asked=$(curl -s "http://$S/_log" | wc -l)
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$T/ch.yaml" --graph-file "$T/graph.json" --store "$T/s6" \
	--keyring "$samples/keys/release.gpg" --signature-store "$samples/signatures" --identity-policy ignore
al_check "the same channels with --keyring: verified (exit 0)" test "$AL_RC" = 0
al_check "Red Hat's store is not asked for releases that are not Red Hat's" \
	test "$(curl -s "http://$S/_log" | wc -l)" = "$asked"

# verify --store: the release recorded from quay.io/openshift-release-dev takes the shipped keys.
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$T/s1" --identity-policy ignore
al_check "verify --store, no --keyring: shipped keys, sample key unknown (exit 1)" test "$AL_RC" = 1
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$T/s1" --identity-policy ignore --keyring "$samples/keys/release.gpg"
al_check "verify --store with the sample key: verified" test "$AL_RC" = 0
# The flags exist on every command that checks signatures.
for c in verify mirror update; do
	"$AIRLOCK" "$c" --help >"$T/help"
	al_check "$c --help lists --strict-expiry and --no-default-keys" \
		bash -c 'grep -q -- --strict-expiry "$1" && grep -q -- --no-default-keys "$1"' _ "$T/help"
done
al_finish
