#!/usr/bin/env bash
# test_cli.sh: the command line's surface: --help for every command, the common flags, option suggestions, the exit-code map and the worst-status rule.
# al-tier: quick
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

# Every command takes the common flags -q, -v and --log-format, with --help
# and with a trivial input that fails at run time (exit 3, never 2: the
# flags were accepted).
for cmd in mirror push copy check mirrorsets verify configmaps graph releases pack unpack inventory keygen update "catalog filter" verify-image; do
	# shellcheck disable=SC2086
	al_run "$T/out" "$T/err" "$AIRLOCK" $cmd -q -v --log-format=json --help
	cmd=${cmd%% *}
	al_check "$cmd -q -v --log-format=json --help exits 0 with its usage" \
		bash -c '[ "$1" = 0 ] && grep -qiE "usage:.*$2" "$3"' _ "$AL_RC" "$cmd" "$T/out"
	al_check "$cmd --help lists --log-format and -v" \
		bash -c 'grep -q -- "--log-format" "$1" && grep -q -- "--verbose" "$1"' _ "$T/out"
done
nostore=$T/no-such-store
fails=(
	"check --store $nostore"
	"verify --store $nostore"
	"configmaps --store $nostore -o $T/cm"
	"releases --store $nostore"
	"inventory --store $nostore"
	"mirrorsets --store $nostore --registry mirror.example"
	"pack --store $nostore -o $T/p"
	"unpack --store $T/u $T/no-such-pack"
	"keygen -o $T/no-such-dir/key"
	"push --store $nostore docker://127.0.0.1:9"
	"copy oci:$T/no-such-layout:x oci:$T/dst:y"
	"graph --store $nostore -o $T/g"
	"mirror --store $T/m --allow-unsigned oci:$T/no-such-layout:x"
	"update --store $nostore --to 4.14.1"
	"catalog list --store $nostore"
	"verify-image --carry --store $nostore"
)
for f in "${fails[@]}"; do
	# shellcheck disable=SC2086
	al_run "$T/out" "$T/err" "$AIRLOCK" $f -q -v --log-format=json
	al_check "airlock $f -q -v --log-format=json: a runtime error (exit 3, got $AL_RC)" test "$AL_RC" = 3
	al_check "airlock $f: no option refused" bash -c '! grep -q "option" "$1"' _ "$T/err"
done

# -v turns on the library's debug log, --log-format=json makes it JSON,
# -q leaves only errors.
cp -r "$AL_SOURCE_DIR/samples/layout" "$T/pstore"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/pstore" -o "$T/pv" -v --log-format=json
al_check "pack -v --log-format=json: exit 0" test "$AL_RC" = 0
al_check "pack -v --log-format=json logs debug lines as JSON" grep -q '^{"level":"debug","msg":' "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/pstore" -o "$T/pq" --log-format=json
al_check "pack without -v logs no debug line" bash -c '! grep -q "\"debug\"" "$1"' _ "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/pstore" -o "$T/pq2" -q
al_check "pack -q: nothing on stderr" test ! -s "$T/err"

# A mistyped option names the nearest one, in every command.
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --kerying x --store "$T/s"
al_check "mirror --kerying: exit 2" test "$AL_RC" = 2
al_check "mirror --kerying: did you mean '--keyring'?" \
	grep -qF "unknown option '--kerying'; did you mean '--keyring'?" "$T/err"
al_check "mirror --kerying: says how to get help" grep -qF "try 'airlock mirror --help'" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" verify --stroe "$T/s"
al_check "verify --stroe: did you mean '--store'?" grep -qF "did you mean '--store'?" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" update --sync-timout 1m --store "$T/s" --to 1
al_check "update --sync-timout: did you mean '--sync-timeout'?" grep -qF "did you mean '--sync-timeout'?" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" check --log-fromat=json --store "$T/s"
al_check "check --log-fromat=json: did you mean '--log-format'?" grep -qF "unknown option '--log-fromat'; did you mean '--log-format'?" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" check --frobnicate --store "$T/s"
al_check "check --frobnicate: exit 2, no suggestion for a name near nothing" \
	bash -c '[ "$1" = 2 ] && grep -qF "unknown option '"'"'--frobnicate'"'"'" "$2" && ! grep -q "did you mean" "$2"' _ "$AL_RC" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store
al_check "check --store with no value: exit 2, 'needs a value'" \
	bash -c '[ "$1" = 2 ] && grep -qF "option '"'"'--store'"'"' needs a value" "$2"' _ "$AL_RC" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" check --quiet=yes --store "$T/s"
al_check "check --quiet=yes: exit 2, 'takes no value'" \
	bash -c '[ "$1" = 2 ] && grep -qF "takes no value" "$2"' _ "$AL_RC" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" check -Z --store "$T/s"
al_check "check -Z: exit 2, names '-Z'" \
	bash -c '[ "$1" = 2 ] && grep -qF "unknown option '"'"'-Z'"'"'" "$2"' _ "$AL_RC" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --log-format=xml --store "$T/s"
al_check "mirror --log-format=xml: exit 2, names the value" \
	bash -c '[ "$1" = 2 ] && grep -qF "xml" "$2"' _ "$AL_RC" "$T/err"

# One exit-code map: an argument the library refuses at run time is exit
# 3 (it was exit 2 before for some commands), a failed update is exit 3.
al_run "$T/out" "$T/err" "$AIRLOCK" check --store ''
al_check "check --store '': the library's refusal is a runtime error (exit 3)" test "$AL_RC" = 3
al_run "$T/out" "$T/err" "$AIRLOCK" inventory --store ''
al_check "inventory --store '': exit 3" test "$AL_RC" = 3
al_run "$T/out" "$T/err" "$AIRLOCK" update --store '' --to 4.14.1
al_check "update that cannot run: exit 3, never 2" test "$AL_RC" = 3

# The worst status of many items (docs/commands.md): 1 (verification)
# outranks 2 (usage), which outranks 3 (runtime), whatever the order.
al_run /dev/null "$T/err" "$AIRLOCK" mirror -q --config "$AL_SOURCE_DIR/samples/imageset.yaml" --store "$T/w"
al_check "mirror of the samples for the worst-status store: exit 0" test "$AL_RC" = 0
python3 - "$T/w/airlock/releases.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["releases"][0]
d["releases"].insert(0, dict(r, version="4.14.0", digest="sha256:" + "0" * 64))
d["releases"].append(dict(r, version="4.14.2", digest="not-a-digest"))
json.dump(d, open(sys.argv[1], "w"))
PY
key=$AL_SOURCE_DIR/samples/keys/release.gpg
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$T/w" --keyring "$key"
al_check "verify: a release without signatures (1) and one with a broken digest (3): exit 1" test "$AL_RC" = 1
al_check "verify: the good release is still verified" grep -q "^verified 4.14.1" "$T/out"
al_check "verify: both failures are named" \
	bash -c 'grep -q "4.14.0.*no signatures" "$1" && grep -q "4.14.2" "$1"' _ "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$T/w" --keyring "$key" 4.14.2 4.14.1 4.14.0
al_check "verify, releases named in another order: exit 1" test "$AL_RC" = 1
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$T/w" --keyring "$key" 4.14.2 4.14.1
al_check "verify: a broken digest alone beside a verified release: exit 3" test "$AL_RC" = 3
al_run "$T/out" "$T/err" "$AIRLOCK" configmaps --store "$T/w" -o "$T/cmw"
al_check "configmaps: no signatures (1) and a broken digest (3): exit 1" test "$AL_RC" = 1
al_check "configmaps: the good release is written" test -n "$(ls "$T/cmw")"

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
