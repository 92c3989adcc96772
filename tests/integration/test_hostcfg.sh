#!/usr/bin/env bash
# test_hostcfg.sh: the host's container configuration (auth files and credential helpers, certs.d, registries.conf), airlock and skopeo on the same files.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

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
printf '{"auths":{"%s":{"auth":"%s"}}}\n' "$R" "$(printf 'airlock:s3cret-pass' | base64 -w0)" >"$T/seed-auth.json"
al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$store" "docker://$R/secure" \
	--ca-file "$T/tls/ca.crt" --authfile "$T/seed-auth.json"
al_check "registry seeded (push with explicit flags)" test "$AL_RC" = 0

# The host's configuration: the CA in ~/.config/containers/certs.d/HOST:PORT,
# credentials only through a credential helper named in $DOCKER_CONFIG; the
# runtime auth.json knows another registry only (the search must go on).
mkdir -p "$HOME/.config/containers/certs.d/$R" "$T/dc" "$T/bin" "$XDG_RUNTIME_DIR/containers"
cp "$T/tls/ca.crt" "$HOME/.config/containers/certs.d/$R/ca.crt"
printf '{"auths":{"other.example":{"auth":"%s"}}}\n' "$(printf 'x:y' | base64 -w0)" \
	>"$XDG_RUNTIME_DIR/containers/auth.json"
printf '{"auths":{},"credHelpers":{"%s":"test"}}\n' "$R" >"$T/dc/config.json"
cat >"$T/bin/docker-credential-test" <<'SH'
#!/bin/sh
host=$(cat)
echo "$1 $host" >>"$0.log"
printf '{"ServerURL":"%s","Username":"airlock","Secret":"s3cret-pass"}' "$host"
SH
chmod +x "$T/bin/docker-credential-test"
export PATH="$T/bin:$PATH"

ref="docker://$R/secure/airlock-samples/$tag"
al_run "$T/out" "$T/err" env DOCKER_CONFIG="$T/dc" "$AIRLOCK" copy "$ref" "oci:$T/copy1:x"
cat "$T/err"
al_check "airlock copy with no flags (certs.d + credential helper) exits 0" test "$AL_RC" = 0
al_check "the helper was asked for the registry" grep -qx "get $R" "$T/bin/docker-credential-test.log"
got=$(DOCKER_CONFIG="$T/dc" "${SKOPEO[@]}" inspect --no-tags --format '{{.Digest}}' "$ref" 2>&1 || true)
al_check "skopeo on the same configuration agrees ($want)" test "$got" = "$want"

# Without the helper entry: both refuse; airlock names the files it searched.
al_run "$T/out" "$T/err" "$AIRLOCK" copy "$ref" "oci:$T/copy2:x"
cat "$T/err"
al_check "no credentials: airlock exits 3" test "$AL_RC" = 3
al_check "no credentials: the message lists the files searched" \
	grep -qF "$XDG_RUNTIME_DIR/containers/auth.json" "$T/err"
al_check "no credentials: skopeo fails too" bash -c '! "$@" >/dev/null 2>&1' _ \
	"${SKOPEO[@]}" inspect --no-tags "$ref"

# Namespaced credentials in ~/.docker/config.json (most specific first).
mkdir -p "$HOME/.docker"
printf '{"auths":{"%s":{"auth":"%s"},"%s/secure/airlock-samples":{"auth":"%s"}}}\n' \
	"$R" "$(printf 'airlock:wrong' | base64 -w0)" \
	"$R" "$(printf 'airlock:s3cret-pass' | base64 -w0)" >"$HOME/.docker/config.json"
al_run "$T/out" "$T/err" "$AIRLOCK" copy "$ref" "oci:$T/copy3:x"
al_check "a namespaced entry beats the host entry (airlock)" test "$AL_RC" = 0
got=$("${SKOPEO[@]}" inspect --no-tags --format '{{.Digest}}' "$ref" 2>&1 || true)
al_check "a namespaced entry beats the host entry (skopeo)" test "$got" = "$want"

# registries.conf: a mirror for a name that does not resolve, tried first.
# ~/.config/containers/registries.conf is read by both (skopeo 1.9.3 has no
# CONTAINERS_REGISTRIES_CONF; airlock's reading of it is checked at the end).
RC=$HOME/.config/containers/registries.conf
cat >"$RC" <<TOML
[[registry]]
prefix = "quay.io/airlock-samples"
location = "quay.io/airlock-samples"
mirror-by-digest-only = false

[[registry.mirror]]
location = "$R/secure/airlock-samples"
TOML
al_run "$T/out" "$T/err" "$AIRLOCK" copy "docker://$release" "oci:$T/copy4:x"
cat "$T/err"
al_check "airlock copy through the registries.conf mirror exits 0" test "$AL_RC" = 0
al_check "the mirror is reported" grep -qF "pulled from mirror '$R/secure/airlock-samples/release'" "$T/err"
got=$("${SKOPEO[@]}" inspect --no-tags --format '{{.Digest}}' "docker://$release" 2>&1 || true)
al_check "skopeo pulls the same digest through the mirror" test "$got" = "$want"

# Blocked: both refuse; airlock names the file.
printf '[[registry]]\nlocation = "%s"\nblocked = true\n' "$R" >"$RC"
al_run "$T/out" "$T/err" "$AIRLOCK" copy "$ref" "oci:$T/copy5:x"
cat "$T/err"
al_check "a blocked registry is refused naming the file" \
	bash -c '[ "$1" != 0 ] && grep -q "blocked in .*registries.conf:1" "$2"' _ "$AL_RC" "$T/err"
al_check "skopeo refuses the blocked registry too" bash -c '! "$@" >/dev/null 2>&1' _ \
	"${SKOPEO[@]}" inspect --no-tags "$ref"

# A file airlock cannot read: file:line, and no transfer.
printf '[[registry]]\nlocation = "x"\ninsecure = 1\n' >"$T/registries.conf"
al_run "$T/out" "$T/err" env CONTAINERS_REGISTRIES_CONF="$T/registries.conf" \
	"$AIRLOCK" copy "$ref" "oci:$T/copy6:x"
al_check "an unreadable registries.conf names file:line" grep -qF "registries.conf': line 3" "$T/err"

al_finish
