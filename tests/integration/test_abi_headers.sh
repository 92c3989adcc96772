#!/usr/bin/env bash
# test_abi_headers.sh: each public header compiles alone, as C11 and as C++ (libgit2's header test).
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CC=${CC:-gcc}
CXX=${CXX:-g++}
command -v "$CC" >/dev/null || al_skip "no C compiler ($CC)"
command -v "$CXX" >/dev/null || al_skip "no C++ compiler ($CXX): Debian package g++"

INC=$AL_SOURCE_DIR/include
headers=("$INC"/airlock.h "$INC"/airlock/*.h)
for h in "${headers[@]}"; do
	rel=${h#"$INC"/}
	printf '#include "%s"\n' "$rel" >"$T/one.c"
	# twice: the include guard holds
	printf '#include "%s"\n#include "%s"\n' "$rel" "$rel" >"$T/one.cc"
	al_check "$rel compiles alone as C11" \
		"$CC" -std=c11 -fsyntax-only -Wall -Wextra -Wpedantic -Werror \
		-I "$INC" "$T/one.c"
	al_check "$rel compiles alone as C++" \
		"$CXX" -fsyntax-only -Wall -Wextra -Werror -I "$INC" "$T/one.cc"
done

# The declarations have C linkage in C++: a call from C++ links against
# the C library's unmangled name (no extern "C" gives _Z10al_versionv).
cat >"$T/link.cc" <<'CC'
#include "airlock.h"
int main() { return al_version() == nullptr; }
CC
if "$CXX" -c -I "$INC" -o "$T/link.o" "$T/link.cc"; then
	syms=$(nm "$T/link.o")
	al_check "C++ calls al_version by its C name" \
		grep -qE '^ +U al_version$' <<<"$syms"
else
	al_fail "airlock.h does not compile as C++"
fi
al_finish
