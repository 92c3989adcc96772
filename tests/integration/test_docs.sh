#!/usr/bin/env bash
# test_docs.sh: every command has a documentation page and a man page, and the man pages are up to date with the pages.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

cmds=$("$AIRLOCK" --help | awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
al_check "airlock --help lists commands" test -n "$cmds"
for c in $cmds; do
	[ "$c" = help ] && continue
	al_check "$c: airlock help $c exits 0" "$AIRLOCK" help "$c"
	al_check "$c: docs/commands/$c.md exists" test -s "$AL_SOURCE_DIR/docs/commands/$c.md"
	al_check "$c: docs/man/airlock-$c.1 exists" test -s "$AL_SOURCE_DIR/docs/man/airlock-$c.1"
done
al_check "the man pages match docs/commands (md2man.py --check)" \
	python3 "$AL_SOURCE_DIR/docs/man/md2man.py" --check
al_finish
