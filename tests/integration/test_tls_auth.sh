#!/usr/bin/env bash
# test_tls_auth.sh: airlock push to a registry with htpasswd auth behind a self-signed TLS certificate.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

layout=$AL_SOURCE_DIR/samples/layout
release=quay.io/airlock-samples/release:4.14.1-x86_64
# The sample layout is a valid store; push from a copy so nothing can touch the original.
store=$T/store
cp -r "$layout" "$store"

al_check "self-signed CA and server certificate made" al_make_tls "$T/tls"
al_check "htpasswd file made" al_make_htpasswd "$T/htpasswd" airlock 's3cret-pass'
al_start_registry "$T/reg" --htpasswd "$T/htpasswd" --tls "$T/tls/server.crt" "$T/tls/server.key"
R=$REG_ADDR

# A containers auth.json for this registry only.
printf '{"auths":{"%s":{"auth":"%s"}}}\n' "$R" "$(printf 'airlock:s3cret-pass' | base64 -w0)" >"$T/auth.json"
printf '{"auths":{"%s":{"auth":"%s"}}}\n' "$R" "$(printf 'airlock:wrong' | base64 -w0)" >"$T/bad-auth.json"
mkdir -p "$T/certs"
cp "$T/tls/ca.crt" "$T/certs/ca.crt"

start=$SECONDS
al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$store" "docker://$R/secure" \
	--ca-file "$T/tls/ca.crt"
cat "$T/err"
al_check "push without credentials exits 3" test "$AL_RC" = 3
al_check "push without credentials: error names the registry $R" grep -qF "$R" "$T/err"
al_check "push without credentials: 'airlock: error:' on stderr" grep -q "^airlock: error:" "$T/err"

al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$store" "docker://$R/secure" \
	--ca-file "$T/tls/ca.crt" --authfile "$T/bad-auth.json"
al_check "push with a wrong password exits 3 naming the registry" \
	bash -c '[ "$1" = 3 ] && grep -qF "$2" "$3"' _ "$AL_RC" "$R" "$T/err"

al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$store" "docker://$R/secure" \
	--authfile "$T/auth.json"
cat "$T/err"
al_check "push without the CA exits 3" test "$AL_RC" = 3
al_check "push without the CA: error mentions the certificate" grep -qi "certificate" "$T/err"
al_check "failures were quick (under 60 s in total)" test $((SECONDS - start)) -lt 60

al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$store" "docker://$R/secure" \
	--authfile "$T/auth.json" --ca-file "$T/tls/ca.crt"
cat "$T/err"
al_check "push with --authfile and --ca-file exits 0" test "$AL_RC" = 0
al_check "push summary line" \
	grep -qE '^pushed [1-9][0-9]* images: uploaded [1-9][0-9]* blobs' <(al_last_line "$T/out")

want=$(al_digest_of "$layout" "$release")
got=$("${SKOPEO[@]}" inspect --no-tags --cert-dir "$T/certs" --creds 'airlock:s3cret-pass' \
	--format '{{.Digest}}' "docker://$R/secure/airlock-samples/release:4.14.1-x86_64" 2>&1 || true)
al_check "skopeo (verifying TLS, with credentials) sees the release with its digest" test "$got" = "$want"

# REGISTRY_AUTH_FILE is honoured like in podman/skopeo.
al_run "$T/out" "$T/err" env REGISTRY_AUTH_FILE="$T/auth.json" "$AIRLOCK" push --store "$store" \
	"docker://$R/secure" --ca-file "$T/tls/ca.crt"
al_check "push with REGISTRY_AUTH_FILE exits 0 and uploads nothing new" \
	bash -c '[ "$1" = 0 ] && tail -n 1 "$2" | grep -q "uploaded 0 blobs"' _ "$AL_RC" "$T/out"

# Mirror back through TLS + auth into a fresh store.
cat >"$T/imageset.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $release
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: docker://$R/secure/airlock-samples
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --store "$T/store2" \
	--authfile "$T/auth.json" --ca-file "$T/tls/ca.crt"
cat "$T/err"
al_check "mirror over TLS with auth exits 0" test "$AL_RC" = 0
al_check "mirrored store has the same images and digests as the sample" \
	al_same_index "$layout" "$T/store2"

al_finish
