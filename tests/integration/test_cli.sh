#!/usr/bin/env bash
# test_cli.sh: the command line's surface: --help for every command, exit codes for usage and config errors.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

for cmd in mirror push copy check mirrorsets; do
	al_run "$T/out" "$T/err" "$AIRLOCK" "$cmd" --help
	al_check "airlock $cmd --help exits 0" test "$AL_RC" = 0
	al_check "airlock $cmd --help prints usage naming '$cmd' on stdout" \
		grep -qiE "usage:.*$cmd" "$T/out"
	al_run "$T/out" "$T/err" "$AIRLOCK" help "$cmd"
	al_check "airlock help $cmd exits 0 and prints usage" \
		bash -c '[ "$1" = 0 ] && grep -qi "usage" "$2"' _ "$AL_RC" "$T/out"
done

al_run "$T/out" "$T/err" "$AIRLOCK" --version
al_check "airlock --version exits 0 and prints something" \
	bash -c '[ "$1" = 0 ] && [ -s "$2" ]' _ "$AL_RC" "$T/out"

al_run "$T/out" "$T/err" "$AIRLOCK" frobnicate
al_check "unknown command exits 2" test "$AL_RC" = 2
al_check "unknown command: 'airlock: error:' on stderr naming it" \
	grep -q "airlock: error:.*frobnicate" "$T/err"

al_run "$T/out" "$T/err" "$AIRLOCK"
al_check "no command exits 2" test "$AL_RC" = 2

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --no-such-flag --store "$T/s"
al_check "mirror --no-such-flag exits 2" test "$AL_RC" = 2
al_check "bad flag is named on stderr" grep -q -- "no-such-flag" "$T/err"

al_run "$T/out" "$T/err" "$AIRLOCK" check
al_check "check without --store exits 2" test "$AL_RC" = 2

al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$AL_SOURCE_DIR/samples/layout"
al_check "push without a destination exits 2" test "$AL_RC" = 2

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --parallel abc --store "$T/s" \
	--config "$AL_SOURCE_DIR/samples/imageset.yaml"
al_check "mirror --parallel abc exits 2" test "$AL_RC" = 2

al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --store "$AL_SOURCE_DIR/samples/layout"
al_check "mirrorsets without --registry exits 2" test "$AL_RC" = 2

al_run "$T/out" "$T/err" "$AIRLOCK" copy oci:"$AL_SOURCE_DIR/samples/layout":x
al_check "copy with one argument exits 2" test "$AL_RC" = 2

# An unknown field: line 5, column 5 (1-based, like every compiler).
cfg=$T/unknown-field.yaml
cat >"$cfg" <<'YAML'
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    releases: quay.io/airlock-samples/release:4.14.1-x86_64
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$cfg" --store "$T/s1"
al_check "unknown config field exits 2" test "$AL_RC" = 2
al_check "unknown config field: message has '$cfg:5:5' and the field" \
	bash -c 'grep -qF "$1:5:5" "$2" && grep -q "releases" "$2"' _ "$cfg" "$T/err"
al_check "nothing was written for a bad config" test ! -e "$T/s1/index.json"

# A YAML syntax error: the position is reported as file:line:column.
cfg=$T/syntax.yaml
printf 'kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  platform: [unclosed\n  other: 1\n' >"$cfg"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$cfg" --store "$T/s2"
al_check "YAML syntax error exits 2" test "$AL_RC" = 2
al_check "YAML syntax error: message has file:line:column" \
	grep -qE "$(printf '%s' "$cfg" | sed 's/[.]/[.]/g'):[0-9]+:[0-9]+" "$T/err"

# The wrong kind is a config error too.
cfg=$T/kind.yaml
printf 'kind: ConfigMap\napiVersion: mirror.openshift.io/v2alpha1\n' >"$cfg"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$cfg" --store "$T/s3"
al_check "wrong kind exits 2" test "$AL_RC" = 2
al_check "wrong kind: message names the file" grep -qF "$cfg" "$T/err"

# A bad image reference in the config, with its position.
cfg=$T/badref.yaml
cat >"$cfg" <<'YAML'
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  additionalImages:
  - name: "quay.io/UPPER/Case::bad"
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$cfg" --store "$T/s4"
al_check "bad image reference in config exits 2" test "$AL_RC" = 2
al_check "bad image reference: message has '$cfg:5:'" grep -qF "$cfg:5:" "$T/err"

# Releases are refused without trusted keys unless --allow-unsigned.
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --store "$T/s5" quay.io/airlock-samples/release:4.14.1-x86_64
al_check "mirror of a release without --keyring or --allow-unsigned exits 2" test "$AL_RC" = 2
al_check "the error says how to give trusted keys" grep -q -- "--keyring" "$T/err"
al_check "nothing was written without trusted keys" test ! -e "$T/s5/index.json"

# Results that cannot be written are a runtime error, never exit 0.
if [ -w /dev/full ]; then
	al_run /dev/null "$T/err" sh -c "'$AIRLOCK' --help >/dev/full"
	al_check "--help into /dev/full exits 3" test "$AL_RC" = 3
	al_check "the error says the results could not be written" grep -q "cannot write the results" "$T/err"
	al_run /dev/null "$T/err" "$AIRLOCK" mirror -q --config "$AL_SOURCE_DIR/samples/imageset.yaml" --store "$T/s6"
	al_run /dev/null "$T/err" sh -c "'$AIRLOCK' releases --store '$T/s6' >/dev/full"
	al_check "releases into /dev/full exits 3" test "$AL_RC" = 3
else
	al_skip_part "/dev/full is not writable here"
fi

# Start-up: with AL_LAZY_LOAD (the default), commands without network or
# archive work never load libcurl or libarchive; those that need them do.
if grep -q '^AL_LAZY_LOAD:BOOL=ON' "$AL_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
	sig=$(ls "$AL_SOURCE_DIR"/samples/signatures/sha256=*/signature-1 | head -1)
	hex=${sig%/signature-1}; hex=${hex##*sha256=}
	loaded() { LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -Eo 'file=lib(curl|archive)[^ ]*' | sort -u | tr '\n' ' ' || true; }
	libs=$(loaded "$AIRLOCK" verify --signature "$sig" --digest "sha256:$hex" --keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --identity-policy ignore)
	al_check "verify --signature loads neither libcurl nor libarchive (loaded: '$libs')" test -z "$libs"
	libs=$(loaded "$AIRLOCK" help mirror)
	al_check "help loads neither libcurl nor libarchive (loaded: '$libs')" test -z "$libs"
	libs=$(loaded "$AIRLOCK" mirror -q --config "$AL_SOURCE_DIR/samples/imageset.yaml" --store "$T/s7")
	al_check "mirror loads libarchive when it reads the release payload (loaded: '$libs')" sh -c "echo '$libs' | grep -q libarchive"
	al_run /dev/null /dev/null "$AIRLOCK" verify --signature "$sig" --digest "sha256:$hex" --keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --identity-policy ignore
	al_check "verify --signature still verifies the sample signature" test "$AL_RC" = 0
else
	al_skip_part "the program was built with AL_LAZY_LOAD=OFF"
fi

al_finish
