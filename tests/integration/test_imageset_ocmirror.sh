#!/usr/bin/env bash
# test_imageset_ocmirror.sh: every real ImageSetConfiguration of the oc-mirror repository (tests/fixtures/oc-mirror-imagesets) gets the verdict of expected.tsv from 'airlock imageset check': accepted with what airlock makes of it, or refused with the reason and position.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

F=$AL_SOURCE_DIR/tests/fixtures/oc-mirror-imagesets
want=$F/expected.tsv
got=$T/got.tsv
# the files, copied so that paths in messages are relative to the copy
cp -r "$F" "$T/f"
cd "$T/f"
find . -name '*.yaml' -o -name '*.yml' | sed 's|^\./||' | LC_ALL=C sort >"$T/files"
al_check "the fixture holds the oc-mirror files (141)" test "$(wc -l <"$T/files")" -ge 141
: >"$got"
while IFS= read -r f; do
	al_run "$T/out" "$T/err" "$AIRLOCK" imageset check -q "$f"
	if [ "$AL_RC" = 0 ]; then
		v=$(sed "s|$T/f/||g; s|^$f: ||" "$T/out")
	else
		# the first line of the error without "airlock: error: 'F' is
		# refused: F:" so that the position and reason remain
		v="refused (exit $AL_RC): $(head -1 "$T/err" | sed "s|$T/f/||g; s|^airlock: error: '$f' is refused: $f:||")"
	fi
	printf '%s\t%s\n' "$f" "$v" >>"$got"
done <"$T/files"
if [ "${AL_REGEN:-0}" = 1 ]; then
	cp "$got" "$want"
	echo "wrote $want"
fi
al_check "expected.tsv lists every file" \
	cmp -s <(cut -f1 "$want") "$T/files"
if diff -u "$want" "$got" >"$T/diff"; then
	al_pass "every file's verdict matches expected.tsv"
else
	cat "$T/diff"
	al_fail "verdicts differ from expected.tsv (AL_REGEN=1 rewrites it)"
fi
n=$(wc -l <"$got")
ok=$(grep -c $'\taccepted' "$got" || true)
echo "$n files: $ok accepted, $((n - ok)) refused"
# a refusal always says where and why
al_check "every refusal has line:column and a reason" \
	bash -c '! grep $'"'"'\trefused'"'"' "$1" | grep -vqE $'"'"'\trefused \(exit [23]\): [0-9]+:[0-9]+: .+'"'"'' _ "$got"
# the command itself: several files give the worst status; usage errors
al_run "$T/out" "$T/err" "$AIRLOCK" imageset check "$AL_SOURCE_DIR/samples/imageset.yaml" "$T/missing.yaml"
al_check "a missing file: exit 2, 'cannot read' naming it" \
	bash -c '[ "$1" = 2 ] && grep -q "airlock: error: cannot read .*missing.yaml" "$2"' _ "$AL_RC" "$T/err"
al_check "the other file is still checked" grep -q "samples/imageset.yaml: accepted: " "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" imageset lint x.yaml
al_check "an unknown subcommand is a usage error" \
	bash -c '[ "$1" = 2 ] && grep -q "unknown subcommand .lint." "$2"' _ "$AL_RC" "$T/err"
al_finish
