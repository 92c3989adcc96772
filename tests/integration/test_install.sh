#!/usr/bin/env bash
# test_install.sh: `cmake --install --prefix P` gives a relocatable airlock.pc, and a program built against `pkg-config airlock` runs.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

command -v pkg-config >/dev/null 2>&1 || al_skip "pkg-config is not installed"
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || al_skip "no C compiler ($cc)"

prefix=$T/prefix
al_run "$T/install.out" "$T/install.err" cmake --install "$AL_BUILD_DIR" --prefix "$prefix"
al_check "cmake --install --prefix succeeds" test "$AL_RC" = 0
pc=$(find "$prefix" -name airlock.pc | head -1)
al_check "airlock.pc is installed under the prefix" test -n "$pc"
al_check "airlock.pc names no absolute prefix" sh -c "! grep -q '^prefix=/' '$pc'"

export PKG_CONFIG_PATH=$(dirname "$pc")
inc=$(pkg-config --variable=includedir airlock)
al_check "pkg-config's includedir holds airlock.h" test -f "$inc/airlock.h"
libdir=$(pkg-config --variable=libdir airlock)
al_check "pkg-config's libdir holds libairlock.so" test -e "$libdir/libairlock.so"

# A sanitizer build's library needs the same runtime in the program.
flags=()
if grep -q '^AL_SANITIZE:BOOL=ON' "$AL_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
	flags=(-fsanitize=address,undefined)
fi
# shellcheck disable=SC2046
al_run "$T/cc.out" "$T/cc.err" "$cc" -std=c11 -Wall -Werror "${flags[@]}" \
	-o "$T/list_store" "$AL_SOURCE_DIR/docs/examples/list_store.c" \
	$(pkg-config --cflags --libs airlock)
al_check "docs/examples/list_store.c builds against pkg-config airlock" test "$AL_RC" = 0
[ "$AL_RC" = 0 ] || cat "$T/cc.err"

store=$T/store
al_run /dev/null "$T/mirror.err" "$AIRLOCK" mirror -q --config "$AL_SOURCE_DIR/samples/imageset.yaml" --store "$store"
al_check "the sample store is mirrored" test "$AL_RC" = 0
al_run "$T/list.out" "$T/list.err" env LD_LIBRARY_PATH="$libdir" "$T/list_store" "$store"
al_check "the example lists the store" test "$AL_RC" = 0
al_check "the example's list matches index.json" \
	test "$(wc -l <"$T/list.out")" = "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["manifests"]))' "$store/index.json")"
al_check "the example runs against the installed library" \
	sh -c "LD_LIBRARY_PATH='$libdir' ldd '$T/list_store' | grep -q '$libdir/libairlock.so'"

# The installed tree moved elsewhere still builds: nothing in airlock.pc points back.
mv "$prefix" "$T/moved"
export PKG_CONFIG_PATH=$T/moved/${pc#"$prefix"/}
PKG_CONFIG_PATH=$(dirname "$PKG_CONFIG_PATH")
al_check "after moving the prefix, includedir follows" test -f "$(pkg-config --variable=includedir airlock)/airlock.h"

al_finish
