#!/usr/bin/env bash
# test_abi_exports.sh: libairlock.so exports exactly the functions include/airlock declares AL_EXPORT, no more, no fewer.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v nm >/dev/null || al_skip "nm missing (Debian package binutils)"
command -v perl >/dev/null || al_skip "perl missing"
LIB=$AL_BUILD_DIR/libairlock.so
[ -f "$LIB" ] || {
	al_fail "no $LIB (the shared library is built with the project)"
	al_finish
}

# Declared: every 'AL_EXPORT ... al_name(' of the public headers (a
# declaration may span lines; comments are dropped first).
perl -0777 -ne 's{/\*.*?\*/}{}gs; s{^[ \t]*#(?:[^\n]*\\\n)*[^\n]*}{}mg; while (/\bAL_EXPORT\b[^;(]*?\b(\w+)\s*\(/g) { print "$1\n" }' \
	"$AL_SOURCE_DIR"/include/airlock/*.h | sort -u >"$T/declared"
# Exported: every symbol the library defines in its dynamic table.
nm -D --defined-only "$LIB" >"$T/nm"
awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' "$T/nm" | sort -u >"$T/exported"

comm -13 "$T/declared" "$T/exported" >"$T/undeclared"
comm -23 "$T/declared" "$T/exported" >"$T/missing"
echo "$(wc -l <"$T/declared") declared, $(wc -l <"$T/exported") exported"
al_check "some functions are declared" test -s "$T/declared"
if [ -s "$T/undeclared" ]; then
	al_fail "exported but declared in no public header: $(tr '\n' ' ' <"$T/undeclared")"
else
	al_pass "nothing exported that a public header does not declare"
fi
if [ -s "$T/missing" ]; then
	al_fail "declared AL_EXPORT but not exported: $(tr '\n' ' ' <"$T/missing")"
else
	al_pass "every declared function is exported"
fi
al_finish
