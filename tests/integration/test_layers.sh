#!/usr/bin/env bash
# test_layers.sh: the util layer (CMakeLists.txt AL_UTIL_MODULES, docs/architecture.md "Layers") includes no header and calls no function from above it; no library file includes the umbrella airlock.h.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v nm >/dev/null || al_skip "nm missing (Debian package binutils)"
SRC=$AL_SOURCE_DIR/src
INC=$AL_SOURCE_DIR/include/airlock

# The util modules, as the build lists them.
mods=$(sed -n 's/^set(AL_UTIL_MODULES \(.*\))$/\1/p' "$AL_SOURCE_DIR/CMakeLists.txt")
al_check "CMakeLists.txt lists the util modules (AL_UTIL_MODULES)" test -n "$mods"

# A header of the util layer: common.h (the status type, the version),
# a util module's public or internal header, and array_int.h (buf's arrays).
util_header() {
	local h=$1 m
	case $h in
	common.h | array_int.h) return 0 ;;
	esac
	for m in $mods; do
		[ "$h" = "$m.h" ] || [ "$h" = "${m}_int.h" ] && return 0
	done
	return 1
}

# The util sources and every project header they reach; each quoted
# include must be a util header, and no util file may include the
# libraries of the layers above (libcurl, libarchive, libmicrohttpd).
queue=()
for m in $mods; do
	al_check "src/$m.c exists" test -f "$SRC/$m.c"
	queue+=("$SRC/$m.c")
done
declare -A seen=()
bad=0
while [ ${#queue[@]} -gt 0 ]; do
	f=${queue[0]}
	queue=("${queue[@]:1}")
	[ -n "${seen[$f]:-}" ] && continue
	seen[$f]=1
	rel=${f#"$AL_SOURCE_DIR"/}
	while IFS= read -r inc; do
		h=${inc#airlock/}
		if ! util_header "$h"; then
			al_fail "$rel includes \"$inc\", above the util layer"
			bad=1
			continue
		fi
		if [ -f "$INC/$h" ]; then
			queue+=("$INC/$h")
		elif [ -f "$SRC/$h" ]; then
			queue+=("$SRC/$h")
		else
			al_fail "$rel includes \"$inc\", which is no header of the tree"
			bad=1
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*<(curl/|archive|microhttpd)' "$f"; then
		al_fail "$rel includes a library of the layers above (curl, archive, microhttpd)"
		bad=1
	fi
done
[ "$bad" = 0 ] && al_pass "the util layer's ${#seen[@]} files include only util headers"

# The umbrella header is for clients: a library source or public header
# includes the module headers it uses, never include/airlock.h.
umb=$(grep -lE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](airlock/)?airlock\.h[">]' \
	"$SRC"/*.c "$SRC"/*.h "$INC"/*.h 2>/dev/null || true)
if [ -n "$umb" ]; then
	al_fail "library files include the umbrella airlock.h: $(echo $umb | sed "s|$AL_SOURCE_DIR/||g")"
else
	al_pass "no library file includes the umbrella airlock.h"
fi

# Calls: every al_ symbol al_util's objects use is defined by one of them.
list=$AL_BUILD_DIR/al_util_objects.txt
if [ ! -s "$list" ]; then
	al_fail "no $list (CMakeLists.txt writes it for the al_util object library)"
	al_finish
fi
mapfile -t objs <"$list"
al_check "al_util has one object per util module" test "${#objs[@]}" = "$(echo $mods | wc -w)"
nm -A "${objs[@]}" >"$T/nm"
awk '$(NF-1) ~ /^[A-Z]$/ && $(NF-1) != "U" && $(NF-1) != "W" && $(NF-1) != "V" { print $NF }' "$T/nm" | sort -u >"$T/defined"
awk '$(NF-1) == "U" && $NF ~ /^al_/ { f = $1; sub(/:$/, "", f); sub(/.*\//, "", f); print $NF " (" f ")" }' "$T/nm" | sort -u >"$T/used"
: >"$T/above"
while read -r sym from; do
	grep -qx "$sym" "$T/defined" || echo "$sym $from" >>"$T/above"
done <"$T/used"
if [ -s "$T/above" ]; then
	al_fail "util objects call functions from above the util layer: $(tr '\n' ' ' <"$T/above")"
else
	al_pass "al_util's objects call no al_ function defined above them ($(wc -l <"$T/used") calls between them)"
fi
al_finish
