#!/usr/bin/env bash
# test_sigstore_conformance.sh: the bundle-verification assets of
# al-tier: slow
# sigstore-conformance (tests/fixtures/sigstore-conformance, commit in its
# README) run through tests/tools/sigstore-conformance-client.sh, the suite's
# client protocol over `airlock verify-image --bundle --artifact`: every case
# must come out as the suite says (a name ending in _fail is refused, every
# other verified), except the ones differences.txt lists with their reason,
# which must still differ.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

F=$AL_SOURCE_DIR/tests/fixtures/sigstore-conformance
CLIENT=$AL_TOOLS/sigstore-conformance-client.sh
ID="https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main"
ISSUER="https://token.actions.githubusercontent.com"
export AL_SIGSTORE_TRUSTED_ROOT=$F/trusted-root-public-good.json

declare -A known=()
nknown=0
while read -r name reason; do
	case $name in '' | '#'*) continue ;; esac
	known[$name]=$reason
	nknown=$((nknown + 1))
done <"$F/differences.txt"

total=0 agree=0
for d in "$F"/cases/*/; do
	name=$(basename "$d")
	total=$((total + 1))
	art=$F/cases/a.txt
	[ -f "$d/artifact" ] && art=$d/artifact
	id=$ID iss=$ISSUER
	[ -f "$d/identity" ] && id=$(cat "$d/identity")
	[ -f "$d/issuer" ] && iss=$(cat "$d/issuer")
	args=(verify-bundle --bundle "$d/bundle.sigstore.json")
	if [ -f "$d/key.pub" ]; then
		args+=(--key "$d/key.pub")
	else
		args+=(--certificate-identity "$id" --certificate-oidc-issuer "$iss")
	fi
	[ -f "$d/trusted_root.json" ] && args+=(--trusted-root "$d/trusted_root.json")
	al_run "$T/$name.out" "$T/$name.err" "$CLIENT" "${args[@]}" "$art"
	want=0
	case $name in *_fail) want=1 ;; esac
	got=0
	[ "$AL_RC" = 0 ] || got=1
	# a refusal is exit 1 (refused) or 2 (trust input refused): never a
	# crash or a runtime error
	if [ "$got" = 1 ] && [ "$AL_RC" -gt 3 ]; then
		al_fail "$name: exits $AL_RC (crash?): $(cat "$T/$name.err")"
		continue
	fi
	if [ -n "${known[$name]:-}" ]; then
		if [ "$got" != "$want" ]; then
			al_pass "$name differs as recorded: ${known[$name]}"
		else
			al_fail "$name now agrees: remove it from differences.txt"
		fi
		continue
	fi
	if [ "$got" = "$want" ]; then
		agree=$((agree + 1))
		al_pass "$name: $([ "$want" = 0 ] && echo verified || echo refused)"
	else
		al_fail "$name: exit $AL_RC, the suite expects $([ "$want" = 0 ] && echo success || echo failure): $(cat "$T/$name.err")"
	fi
done
echo "sigstore-conformance: $agree of $total cases agree, $nknown recorded differences"
al_check "all 70 cases of the pinned commit ran ($total)" [ "$total" = 70 ]
# keyless trust without an identity would accept any certificate Fulcio
# issued: a usage error, before anything is read
al_check_fails "--trusted-root without an identity or key is refused" 2 \
	"$AIRLOCK" verify-image --trusted-root "$AL_SIGSTORE_TRUSTED_ROOT" \
	--bundle "$F/cases/happy-path-v0.3/bundle.sigstore.json" \
	--artifact "$F/cases/a.txt"
al_finish
