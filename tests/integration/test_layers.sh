#!/usr/bin/env bash
# test_layers.sh: the library's folders (CMakeLists.txt AL_FOLDERS, docs/architecture.md "Layers") include no header and call no function from a folder above their own; src/util uses none of the network, archive or HTTP-server libraries; no library file includes the umbrella airlock.h.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v nm >/dev/null || al_skip "nm missing (Debian package binutils)"
SRC=$AL_SOURCE_DIR/src
INC=$AL_SOURCE_DIR/include/airlock

# The folders, bottom to top, as the build lists them.
folders=$(tr '\n' ' ' <"$AL_SOURCE_DIR/CMakeLists.txt" |
	sed -n 's/.*set(AL_FOLDERS \([^)]*\)).*/\1/p' | tr -s ' ')
al_check "CMakeLists.txt lists the library's folders (AL_FOLDERS)" test -n "$folders"
declare -A rank=()
i=0
for f in $folders; do
	al_check "src/$f is a folder" test -d "$SRC/$f"
	rank[$f]=$i
	i=$((i + 1))
done

# Every .c and .h of src/ is in one of the folders (src/lazy and src/keys
# are the program's and the build's, not the library's).
stray=$(find "$SRC" -name '*.[ch]' ! -path "$SRC/lazy/*" ! -path "$SRC/keys/*" |
	while read -r p; do
		d=${p#"$SRC"/}
		d=${d%%/*}
		[ -n "${rank[$d]:-}" ] || echo "${p#"$AL_SOURCE_DIR"/}"
	done)
if [ -n "$stray" ]; then
	al_fail "library files outside the folders: $stray"
else
	al_pass "every library file is in a folder of AL_FOLDERS"
fi

# The folder a header belongs to: an internal header by where it is, a
# public header airlock/X.h by the folder of its module X (X.c); a public
# header names another as "X.h" or "airlock/X.h".
declare -A hfolder=()
for f in $folders; do
	for p in "$SRC/$f"/*.[ch]; do
		b=${p##*/}
		case $b in
		*.h) hfolder[$b]=$f ;;
		*.c) hfolder[airlock/${b%.c}.h]=$f ;;
		esac
	done
done
# (The answer is left in HF: no subshell per include.)
header_folder() {
	local h=$1 file=$2
	if [ -z "${hfolder[$h]:-}" ] && [ "${file#"$INC"/}" != "$file" ]; then
		h=airlock/$h
	fi
	HF=${hfolder[$h]:-}
}

# Includes: a file of folder F (and a public header of F's modules)
# includes only headers of F and the folders below it.
: >"$T/up"
check_includes() {
	local file=$1 own=$2 inc hf
	while IFS= read -r inc; do
		header_folder "$inc" "$file"
		hf=$HF
		if [ -z "$hf" ]; then
			echo "${file#"$AL_SOURCE_DIR"/} includes \"$inc\", which no folder holds" >>"$T/up"
		elif [ "${rank[$hf]}" -gt "${rank[$own]}" ]; then
			echo "${file#"$AL_SOURCE_DIR"/} ($own) includes \"$inc\" ($hf)" >>"$T/up"
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
}
nfiles=0
for f in $folders; do
	for p in "$SRC/$f"/*.[ch]; do
		check_includes "$p" "$f"
		nfiles=$((nfiles + 1))
	done
done
for p in "$INC"/*.h; do
	header_folder "airlock/${p##*/}" ""
	own=$HF
	if [ -z "$own" ]; then
		echo "include/airlock/${p##*/} names no module of a folder" >>"$T/up"
		continue
	fi
	check_includes "$p" "$own"
	nfiles=$((nfiles + 1))
done
if [ -s "$T/up" ]; then
	al_fail "includes that go up a folder: $(cat "$T/up")"
else
	al_pass "the $nfiles files of the folders and public headers include nothing from a folder above"
fi

# The util layer uses none of the libraries of the layers above.
lib=$(grep -lE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<(curl/|archive|microhttpd)' \
	"$SRC"/util/*.[ch] 2>/dev/null || true)
if [ -n "$lib" ]; then
	al_fail "src/util includes libcurl, libarchive or libmicrohttpd: $lib"
else
	al_pass "src/util includes none of libcurl, libarchive, libmicrohttpd"
fi

# The umbrella header is for clients: a library source or public header
# includes the module headers it uses, never include/airlock.h.
umb=$(grep -lE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](airlock/)?airlock\.h[">]' \
	"$SRC"/*/*.[ch] "$INC"/*.h 2>/dev/null || true)
if [ -n "$umb" ]; then
	al_fail "library files include the umbrella airlock.h: $(echo $umb | sed "s|$AL_SOURCE_DIR/||g")"
else
	al_pass "no library file includes the umbrella airlock.h"
fi

# Calls: every al_ symbol a folder's objects use is defined by an object
# of that folder or of one below it.
: >"$T/below"
: >"$T/calls_up"
ncalls=0
for f in $folders; do
	list=$AL_BUILD_DIR/al_${f}_objects.txt
	if [ ! -s "$list" ]; then
		al_fail "no $list (CMakeLists.txt writes it for the object library al_$f)"
		continue
	fi
	mapfile -t objs <"$list"
	nm -A "${objs[@]}" >"$T/nm"
	awk '$(NF-1) ~ /^[A-Z]$/ && $(NF-1) != "U" && $(NF-1) != "W" && $(NF-1) != "V" { print $NF }' "$T/nm" >>"$T/below"
	sort -u -o "$T/below" "$T/below"
	awk '$(NF-1) == "U" && $NF ~ /^al_/ { f = $1; sub(/:$/, "", f); sub(/.*\//, "", f); print $NF " " f }' "$T/nm" | sort -u >"$T/used"
	ncalls=$((ncalls + $(wc -l <"$T/used")))
	awk -v f="$f" 'NR == FNR { d[$1] = 1; next } !($1 in d) { o = $2; sub(/\.o$/, "", o); print $1 " (" o ", " f ")" }' \
		"$T/below" "$T/used" >>"$T/calls_up"
done
if [ -s "$T/calls_up" ]; then
	al_fail "calls to a function defined in a folder above: $(tr '\n' ' ' <"$T/calls_up")"
else
	al_pass "no folder's objects call an al_ function defined above them ($ncalls distinct calls checked)"
fi
al_finish
