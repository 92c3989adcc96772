#!/usr/bin/env bash
# test_verify_openssl.sh: airlock verify reads no OpenSSL configuration file unless OPENSSL_CONF names one (the start-up cut of docs/performance.md), and verifies the same either way.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

if ! command -v gpg >/dev/null 2>&1; then
	al_skip "gpg not found"
fi

export GNUPGHOME=$T/gnupg
mkdir -m 700 "$GNUPGHOME"
trap 'gpgconf --kill all >/dev/null 2>&1 || true; al__cleanup' EXIT
G=(gpg --batch --no-tty --quiet --pinentry-mode loopback --passphrase '')
"${G[@]}" --quick-gen-key 'Release <release@example.test>' rsa2048 sign never
"${G[@]}" --export release@example.test >"$T/keyring.gpg"
digest=sha256:$(printf 'airlock' | sha256sum | cut -d' ' -f1)
printf '{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"%s"},"identity":{"docker-reference":"quay.io/example/release:1.0"}},"optional":{}}' \
	"$digest" >"$T/payload.json"
"${G[@]}" -o "$T/sig" --sign "$T/payload.json"
not_grep() { ! grep -Eq "$1" "$2"; }
V=("$AIRLOCK" verify -q --signature "$T/sig" --digest "$digest" --keyring "$T/keyring.gpg")

al_check_fails "verify --signature accepts the signature" 0 env -u OPENSSL_CONF "${V[@]}"
al_check_fails "... and refuses it for another digest" 1 env -u OPENSSL_CONF \
	"$AIRLOCK" verify -q --signature "$T/sig" --digest "sha256:$(printf '0%.0s' $(seq 64))" \
	--keyring "$T/keyring.gpg"

# A configuration that makes every algorithm fetch fail (no provider
# answers to fips=yes): verify must then fail, which shows that a file
# named by OPENSSL_CONF is read.
cat >"$T/nofetch.cnf" <<'CNF'
openssl_conf = openssl_init
[openssl_init]
alg_section = evp_properties
[evp_properties]
default_properties = fips=yes
CNF
al_run "$T/out" "$T/err" env OPENSSL_CONF="$T/nofetch.cnf" "${V[@]}"
al_check "OPENSSL_CONF is read: a configuration no algorithm satisfies makes verify fail" \
	test "$AL_RC" != 0
cat "$T/err"
al_check "... with OpenSSL's reason in words (its error strings are loaded)" \
	grep -q "unsupported" "$T/err"

# A harmless configuration named by OPENSSL_CONF: verified as without one.
cat >"$T/plain.cnf" <<'CNF'
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
default = default_sect
[default_sect]
activate = 1
CNF
al_check_fails "verify with a plain OPENSSL_CONF accepts the signature" 0 \
	env OPENSSL_CONF="$T/plain.cnf" "${V[@]}"

# Without OPENSSL_CONF, no configuration file is opened (the system's
# openssl.cnf costs a third of the instructions of a verify process).
# LeakSanitizer cannot run under ptrace: in the sanitizer build the traced
# runs go without leak checking (the untraced runs above keep it).
if command -v strace >/dev/null 2>&1 && strace -o /dev/null true 2>/dev/null; then
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	env -u OPENSSL_CONF strace -f -e trace=open,openat -o "$T/trace" "${V[@]}"
	al_check "verify without OPENSSL_CONF opens no OpenSSL configuration file" \
		not_grep 'openssl\.cnf|\.cnf"' "$T/trace"
	env OPENSSL_CONF="$T/plain.cnf" strace -f -e trace=open,openat -o "$T/trace" "${V[@]}"
	al_check "... and with OPENSSL_CONF it opens that file" grep -q "plain.cnf" "$T/trace"
else
	al_skip_part "strace not usable here: the no-configuration-file check"
fi

al_finish
