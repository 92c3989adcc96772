#!/usr/bin/env bash
# test_quarantine_base.sh: a delta pack whose base is still quarantined is refused (issue 24, item 4 remainder) with --trust, without it and with --accept-untrusted: nothing is written (every file of the store, quarantine included, as before), and the message names the base and the --promote to run; once the base is promoted, the delta imports.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
src=$T/src
sig_hex=c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
sigdir=signatures/sha256=$sig_hex

pack_id() { sed -n 's/^pack \([A-Za-z0-9-]*\): .*/\1/p' "$1"; }
# Every file and directory of store $1 (the lock aside), with the
# SHA-256 of each file.
state() {
	(cd "$1" && find . ! -name lock | LC_ALL=C sort | while read -r f; do
		if [ -f "$f" ]; then sha256sum "$f"; else echo "dir $f"; fi
	done)
}

# ---- staging: a signed pack, then a signed delta on it
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
"$AIRLOCK" keygen -o "$T/key" >/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p1" --volume-size 64K --sign "$T/key.key"
p1=$(pack_id "$T/out")
printf 'a second signature\n' >"$src/$sigdir/signature-2"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/pd" --volume-size 64K --since "$p1" --sign "$T/key.key"
pd=$(pack_id "$T/out")
al_check "a signed pack ($p1) and a signed delta on it ($pd)" test -n "$p1" -a -n "$pd"

# ---- the base imported without --trust: quarantined
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/far"
al_check "the base without --trust is quarantined (exit 0)" \
	bash -c 'test "$1" = 0 && test -d "$2/airlock/quarantine/$3"' _ "$AL_RC" "$T/far" "$p1"
state "$T/far" >"$T/before"

# ---- the delta, in each mode, is refused and writes nothing
for mode in "--trust $T/key.pub" "" "--accept-untrusted"; do
	# shellcheck disable=SC2086
	al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/pd" --store "$T/far" $mode
	al_check "the delta (${mode%% *}) is refused: exit 3" test "$AL_RC" = 3
	state "$T/far" >"$T/after"
	al_check "... nothing was written (the store and its quarantine as they were)" \
		diff -u "$T/before" "$T/after"
	al_check "... the message names the quarantined base and the --promote to run" \
		grep -q -- "--promote $p1" "$T/err"
done
al_check "... and the delta is not quarantined" test ! -e "$T/far/airlock/quarantine/$pd"

# ---- promoted, the base is the store's: the delta imports
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --promote "$p1" --store "$T/far" --trust "$T/key.pub"
al_check "the base promoted with its key (exit 0)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/pd" --store "$T/far" --trust "$T/key.pub"
al_check "then the delta imports with --trust (exit 0)" test "$AL_RC" = 0
al_check "... with its new signature" cmp -s "$src/$sigdir/signature-2" "$T/far/$sigdir/signature-2"
al_check "... and nothing quarantined" test ! -e "$T/far/airlock/quarantine"
al_finish
