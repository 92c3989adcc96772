#!/bin/sh
# sigstore-conformance-client.sh: the sigstore-conformance suite's client
# command-line protocol (docs/cli_protocol.md of sigstore/sigstore-conformance)
# over airlock's blob mode, so the suite's own assets (or the suite itself,
# given this script as its entrypoint) run against airlock:
#   verify-bundle [--staging] --bundle FILE
#       (--certificate-identity ID --certificate-oidc-issuer URL | --key KEY)
#       [--trusted-root FILE] FILE_OR_DIGEST
# becomes
#   airlock verify-image --trusted-root ROOT [--key KEY]
#       [--certificate-identity ID --certificate-oidc-issuer URL]
#       --bundle FILE --artifact FILE
# ROOT is --trusted-root, else $AL_SIGSTORE_TRUSTED_ROOT (the public-good
# instance's trusted root: the suite's default). Signing, --staging and a
# "sha256:" digest in place of the file are not supported: exit 2.
set -u
AIRLOCK=${AIRLOCK:-airlock}
[ $# -ge 1 ] || { echo "usage: $0 verify-bundle ..." >&2; exit 2; }
cmd=$1
shift
case $cmd in
verify-bundle) ;;
*) echo "$0: '$cmd' is not supported (verification only)" >&2; exit 2 ;;
esac
bundle= key= id= issuer= root=${AL_SIGSTORE_TRUSTED_ROOT:-}
while [ $# -gt 1 ]; do
	case $1 in
	--staging) echo "$0: --staging is not supported (offline)" >&2; exit 2 ;;
	--bundle) bundle=$2; shift 2 ;;
	--key) key=$2; shift 2 ;;
	--certificate-identity) id=$2; shift 2 ;;
	--certificate-oidc-issuer) issuer=$2; shift 2 ;;
	--trusted-root) root=$2; shift 2 ;;
	*) echo "$0: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ $# -eq 1 ] || { echo "$0: give FILE_OR_DIGEST" >&2; exit 2; }
input=$1
case $input in
sha256:*)
	if [ ! -e "$input" ]; then
		echo "$0: a digest in place of the artifact is not supported" >&2
		exit 2
	fi ;;
esac
[ -n "$bundle" ] && [ -n "$root" ] || {
	echo "$0: --bundle and a trusted root are needed" >&2; exit 2; }
set -- --trusted-root "$root" --bundle "$bundle" --artifact "$input"
[ -n "$key" ] && set -- "$@" --key "$key"
[ -n "$id" ] && set -- "$@" --certificate-identity "$id"
[ -n "$issuer" ] && set -- "$@" --certificate-oidc-issuer "$issuer"
exec "$AIRLOCK" verify-image "$@"
