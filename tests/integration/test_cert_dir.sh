#!/usr/bin/env bash
# test_cert_dir.sh: --cert-dir DIR (skopeo's and podman's flag, containers/image DockerCertPath): *.crt CAs and a *.cert/*.key client pair for every registry, replacing certs.d; airlock and skopeo on the same directory, a TLS + htpasswd registry and one that requires a client certificate.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
[ -x "$AL_REGISTRY_BIN" ] || al_skip "docker-registry is not installed"
command -v skopeo >/dev/null || al_skip "skopeo is not installed"
command -v openssl >/dev/null || al_skip "openssl is not installed"
command -v htpasswd >/dev/null || al_skip "htpasswd is not installed"

layout=$AL_SOURCE_DIR/samples/layout
release=quay.io/airlock-samples/release:4.14.1-x86_64
tag=release:4.14.1-x86_64
store=$T/store
cp -r "$layout" "$store"
want=$(al_digest_of "$layout" "$release")

al_check "CA and server certificate made" al_make_tls "$T/tls"
al_check "htpasswd made" al_make_htpasswd "$T/htpasswd" airlock 's3cret-pass'
al_start_registry "$T/reg" --htpasswd "$T/htpasswd" --tls "$T/tls/server.crt" "$T/tls/server.key"
R=$REG_ADDR
printf '{"auths":{"%s":{"auth":"%s"}}}\n' "$R" "$(printf 'airlock:s3cret-pass' | base64 -w0)" >"$T/auth.json"
mkdir -p "$T/cd" "$T/empty"
cp "$T/tls/ca.crt" "$T/cd/test-ca.crt"

# 1. push, copy, mirror with the CA from --cert-dir
al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$store" "docker://$R/secure" \
	--authfile "$T/auth.json" --cert-dir "$T/cd"
cat "$T/err"
al_check "push --cert-dir exits 0" test "$AL_RC" = 0
ref="docker://$R/secure/airlock-samples/$tag"
got=$("${SKOPEO[@]}" inspect --no-tags --cert-dir "$T/cd" --authfile "$T/auth.json" \
	--format '{{.Digest}}' "$ref" 2>&1 || true)
al_check "skopeo --cert-dir on the same directory sees the pushed digest" test "$got" = "$want"
al_run "$T/out" "$T/err" "$AIRLOCK" copy "$ref" "oci:$T/copy:x" --authfile "$T/auth.json" --cert-dir "$T/cd"
cat "$T/err"
al_check "copy --cert-dir exits 0" test "$AL_RC" = 0
al_check "copy --cert-dir got the digest" test "$(al_digest_of "$T/copy" x)" = "$want"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --image "${ref#docker://}" --store "$T/m" \
	--authfile "$T/auth.json" --cert-dir "$T/cd"
cat "$T/err"
al_check "mirror --cert-dir exits 0" test "$AL_RC" = 0

# 2. without it the CA is unknown
al_run "$T/out" "$T/err" "$AIRLOCK" copy "$ref" "oci:$T/copy2:x" --authfile "$T/auth.json"
al_check "copy without --cert-dir exits 3" test "$AL_RC" = 3
al_check "the error is about the certificate" grep -qi "certificate" "$T/err"

# 3. --cert-dir replaces certs.d, for airlock as for skopeo
mkdir -p "$HOME/.config/containers/certs.d/$R"
cp "$T/tls/ca.crt" "$HOME/.config/containers/certs.d/$R/ca.crt"
al_run "$T/out" "$T/err" "$AIRLOCK" copy "$ref" "oci:$T/copy3:x" --authfile "$T/auth.json"
al_check "certs.d alone works (airlock)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" copy "$ref" "oci:$T/copy4:x" --authfile "$T/auth.json" --cert-dir "$T/empty"
al_check "an empty --cert-dir overrides certs.d (airlock exits 3)" test "$AL_RC" = 3
al_check "an empty --cert-dir overrides certs.d (skopeo fails too)" bash -c '! "$@" >/dev/null 2>&1' _ \
	"${SKOPEO[@]}" inspect --no-tags --cert-dir "$T/empty" --authfile "$T/auth.json" "$ref"
rm -rf "$HOME/.config/containers/certs.d"

# 4. refusals
al_run "$T/out" "$T/err" "$AIRLOCK" copy "$ref" "oci:$T/copy5:x" --cert-dir "$T/missing"
al_check "a missing --cert-dir is a usage error (exit 2)" test "$AL_RC" = 2
al_check "... naming it" grep -qF "'$T/missing' is not a directory" "$T/err"
mkdir -p "$T/half"
cp "$T/tls/ca.crt" "$T/half/ca.crt"
cp "$T/tls/server.crt" "$T/half/client.cert"
al_run "$T/out" "$T/err" "$AIRLOCK" copy "$ref" "oci:$T/copy6:x" --authfile "$T/auth.json" --cert-dir "$T/half"
cat "$T/err"
al_check "a .cert without its .key is refused (exit 3)" test "$AL_RC" = 3
al_check "... naming the missing key" grep -qF "missing key client.key" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" graph --config /dev/null --cert-dir "$T/cd"
al_check "graph refuses --cert-dir (no registry): exit 2" test "$AL_RC" = 2

# 5. a registry that requires a client certificate signed by the CA
openssl req -newkey rsa:2048 -nodes -subj "/CN=airlock client" \
	-keyout "$T/tls/client.key" -out "$T/tls/client.csr" >/dev/null 2>&1
printf 'extendedKeyUsage=clientAuth\n' >"$T/tls/client.ext"
openssl x509 -req -in "$T/tls/client.csr" -CA "$T/tls/ca.crt" -CAkey "$T/tls/ca.key" \
	-CAcreateserial -days 2 -extfile "$T/tls/client.ext" -out "$T/tls/client.cert" >/dev/null 2>&1
al_check "client certificate made" test -s "$T/tls/client.cert"
mkdir -p "$T/mtls/data"
port=$(al_free_port)
cat >"$T/mtls/config.yml" <<YML
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $T/mtls/data
http:
  addr: 127.0.0.1:$port
  secret: airlock-test-secret
  tls:
    certificate: $T/tls/server.crt
    key: $T/tls/server.key
    clientcas:
    - $T/tls/ca.crt
YML
"$AL_REGISTRY_BIN" serve "$T/mtls/config.yml" >"$T/mtls/registry.log" 2>&1 &
M_PID=$!
AL_PIDS+=("$M_PID")
M=127.0.0.1:$port
up=0
for _ in $(seq 1 50); do
	if curl -s -o /dev/null --cacert "$T/tls/ca.crt" --cert "$T/tls/client.cert" \
		--key "$T/tls/client.key" "https://$M/v2/"; then
		up=1
		break
	fi
	sleep 0.1
done
al_check "the client-certificate registry answers" test "$up" = 1
mkdir -p "$T/client"
cp "$T/tls/ca.crt" "$T/client/ca.crt"
cp "$T/tls/client.cert" "$T/client/client.cert"
cp "$T/tls/client.key" "$T/client/client.key"
al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$store" "docker://$M/m" --cert-dir "$T/client"
cat "$T/err"
al_check "push with the client pair from --cert-dir exits 0" test "$AL_RC" = 0
got=$("${SKOPEO[@]}" inspect --no-tags --cert-dir "$T/client" --format '{{.Digest}}' \
	"docker://$M/m/airlock-samples/$tag" 2>&1 || true)
al_check "skopeo --cert-dir with the same pair sees the pushed digest" test "$got" = "$want"
al_run "$T/out" "$T/err" "$AIRLOCK" copy "docker://$M/m/airlock-samples/$tag" "oci:$T/copy7:x" --cert-dir "$T/cd"
al_check "without the client pair the registry refuses (exit 3)" test "$AL_RC" = 3
al_check "skopeo without the client pair fails too" bash -c '! "$@" >/dev/null 2>&1' _ \
	"${SKOPEO[@]}" inspect --no-tags --cert-dir "$T/cd" "docker://$M/m/airlock-samples/$tag"

al_finish
