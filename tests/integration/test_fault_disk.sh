#!/usr/bin/env bash
# test_fault_disk.sh: disk full (small tmpfs, else the failwrite.c LD_PRELOAD shim) and permission faults for mirror, pack, unpack, check and push.
# al-tier: quick
#
# A full disk must give exit 3 and a message naming the path and "No space
# left on device"; nothing half-written may be trusted (`airlock check` stays
# clean, a pack directory holds no manifest); once space is freed a rerun
# succeeds with the digests of an undisturbed run. A store that cannot be
# written or a blob that cannot be read gives a clear error naming the path.
# Tests run as root, where permissions do not bind: the permission cases run
# airlock as `nobody` (setpriv), else through the shim (EACCES).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

# Force the shim with AL_FAULT_SHIM=1 (to test the fallback where mounting works).
use_shim=${AL_FAULT_SHIM:-0}
SHIM=$T/failwrite.so
if ! cc -shared -fPIC -o "$SHIM" "$AL_TOOLS/failwrite.c" -ldl 2>"$T/cc.err"; then
	cat "$T/cc.err"
	SHIM=
fi
# The sanitizer runtime must come first unless told otherwise.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

MOUNTS=()
cleanup_mounts() {
	local m
	for m in "${MOUNTS[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}
trap 'cleanup_mounts; al__cleanup' EXIT

# full_start DIR BYTES: make DIR a file system with about BYTES (a number) free.
# Sets FULL (tmpfs or shim) and FULL_ENV (env words for the command).
full_start() {
	local dir=$1 bytes=$2
	mkdir -p "$dir"
	FULL_ENV=()
	if [ "$use_shim" != 1 ] && mount -t tmpfs -o "size=$bytes" tmpfs "$dir" 2>/dev/null; then
		MOUNTS+=("$dir")
		FULL=tmpfs
	elif [ -n "$SHIM" ]; then
		FULL=shim
		FULL_ENV=(env LD_PRELOAD="$SHIM" AL_FAIL_DIR="$(cd "$dir" && pwd)" AL_FAIL_MODE=enospc
			AL_FAIL_BYTES="$bytes")
	else
		al_fail "neither a tmpfs mount nor the failwrite shim is available"
		al_finish
	fi
}

# full_free DIR: give DIR plenty of room.
full_free() {
	if [ "$FULL" = tmpfs ]; then
		mount -o remount,size=256m "$1"
	fi
	FULL_ENV=()
}

blobs_of() {
	(cd "$1/blobs/sha256" && ls | grep -E '^[0-9a-f]{64}$')
}
check_clean() {
	al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$2"
	al_check "$1: airlock check is clean" test "$AL_RC" = 0
	[ "$AL_RC" = 0 ] || cat "$T/check.out" "$T/check.err"
}
same_as_ref() {
	al_check "$1: same images and digests as the undisturbed run" al_same_index "$T/ref" "$2"
	al_check "$1: same blobs as the undisturbed run" diff <(blobs_of "$T/ref") <(blobs_of "$2")
}
# index_subset STORE: every entry of STORE's index is in the reference's.
index_subset() {
	[ -e "$1/index.json" ] || return 0
	python3 -c 'import json, sys
def rows(d):
    return {(m.get("annotations", {}).get("org.opencontainers.image.ref.name"), m["digest"])
            for m in json.load(open(d + "/index.json"))["manifests"]}
extra = rows(sys.argv[2]) - rows(sys.argv[1])
sys.exit("not in the reference: %s" % sorted(extra) if extra else 0)' "$T/ref" "$1"
}
# enospc DESC DIR: the last al_run failed with exit 3 naming DIR and ENOSPC.
enospc() {
	cat "$T/err"
	al_check "$1: exit 3" test "$AL_RC" = 3
	al_check "$1: says 'No space left on device'" grep -q "No space left on device" "$T/err"
	al_check "$1: names a path under the full directory" grep -qF "$2" "$T/err"
	al_check "$1: one 'airlock: error:' line, no crash" \
		bash -c 'grep -q "^airlock: error: " "$1" && ! grep -qiE "sanitizer|segmentation|abort" "$1"' _ "$T/err"
}

# A synthetic release (~5 MB) in a loopback registry; the reference store.
al_start_registry "$T/reg"
R=$REG_ADDR
python3 "$AL_TOOLS/mkrelease.py" --out "$T/release" --components 4 --layer-size 1000000 \
	--base-size 500000 --gzip-level 1 --seed disk >/dev/null
al_check "synthetic release pushed" al_push_layout "$T/release" "$R"
al_release_imageset "$T/imageset.yaml" "docker://$R/airlock-samples"
MIRROR=("$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --tls-verify=false --store)
al_run "$T/out" "$T/err" "${MIRROR[@]}" "$T/ref"
al_check "undisturbed mirror exits 0" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/ref" -o "$T/pack" --volume-size 1M
al_check "undisturbed pack exits 0" test "$AL_RC" = 0

# ------------------------------------------------------------- disk full
# mirror into a store with room for about half of the release. The
# up-front space check refuses first (says so, exit 3, nothing written);
# --no-space-check then reaches the real ENOSPC, which is what this test is
# about (test_lifecycle_plan.sh covers the check itself).
full_start "$T/m" 2097152
echo "disk full via: $FULL"
if [ "$FULL" = tmpfs ]; then
	# (the shim fails writes; statvfs still sees the real free space)
	al_run "$T/out" "$T/err" "${MIRROR[@]}" "$T/m/store"
	al_check "mirror into a full store: the space check refuses (exit 3)" test "$AL_RC" = 3
	al_check "mirror into a full store: the refusal names the bytes" grep -q "not enough space on" "$T/err"
fi
al_run "$T/out" "$T/err" "${FULL_ENV[@]}" "${MIRROR[@]}" "$T/m/store" --no-space-check
enospc "mirror into a full store" "$T/m/store"
if [ -e "$T/m/store/oci-layout" ]; then
	check_clean "mirror into a full store: what it left" "$T/m/store"
fi
al_check "mirror into a full store: the release is not recorded as mirrored" bash -c \
	'! grep -q "4.14.1" "$1/airlock/releases.json" 2>/dev/null' _ "$T/m/store"
al_check "mirror into a full store: index.json names only complete images of the reference" \
	index_subset "$T/m/store"
full_free "$T/m"
al_run "$T/out" "$T/err" "${MIRROR[@]}" "$T/m/store"
al_check "mirror after space was freed: exit 0" test "$AL_RC" = 0
[ "$AL_RC" = 0 ] || cat "$T/err"
check_clean "mirror after space was freed" "$T/m/store"
same_as_ref "mirror after space was freed" "$T/m/store"

# pack onto full media.
full_start "$T/p" 2097152
al_run "$T/out" "$T/err" "${FULL_ENV[@]}" "$AIRLOCK" pack --store "$T/ref" -o "$T/p/out" --volume-size 1M \
	--no-space-check
enospc "pack onto full media" "$T/p/out"
al_check "pack onto full media: no pack manifest left (nothing to trust)" \
	bash -c '! ls "$1" 2>/dev/null | grep -qE "^airlock-.*[0-9a-f]\.json$"' _ "$T/p/out"
check_clean "pack onto full media: the source store" "$T/ref"
full_free "$T/p"
rm -rf "$T/p/out"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/ref" -o "$T/p/out" --volume-size 1M
al_check "pack after space was freed: exit 0" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/p/out" --store "$T/p/check"
al_check "pack after space was freed: it unpacks" test "$AL_RC" = 0
same_as_ref "pack after space was freed" "$T/p/check"

# unpack into a full store.
full_start "$T/u" 2097152
al_run "$T/out" "$T/err" "${FULL_ENV[@]}" "$AIRLOCK" unpack --accept-untrusted "$T/pack" --store "$T/u/store" \
	--no-space-check
enospc "unpack into a full store" "$T/u/store"
if [ -e "$T/u/store/oci-layout" ]; then
	check_clean "unpack into a full store: what it left" "$T/u/store"
	al_check "unpack into a full store: index.json names only complete images of the reference" \
		index_subset "$T/u/store"
fi
full_free "$T/u"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/pack" --store "$T/u/store"
al_check "unpack after space was freed: exit 0" test "$AL_RC" = 0
[ "$AL_RC" = 0 ] || cat "$T/err"
check_clean "unpack after space was freed" "$T/u/store"
same_as_ref "unpack after space was freed" "$T/u/store"

# ------------------------------------------------------------- permissions
# AS: how to run airlock without the right to write DIR / read FILE.
if [ "$use_shim" != 1 ] && setpriv --reuid=65534 --regid=65534 --clear-groups "$AIRLOCK" --version >/dev/null 2>&1 &&
	! setpriv --reuid=65534 --regid=65534 --clear-groups touch "$T/probe" 2>/dev/null; then
	PERM=nobody
else
	PERM=shim
fi
echo "permission faults via: $PERM"
# as_denied DIR [READ_SUBSTRING] CMD...: run CMD unable to write under DIR
# (and unable to read files whose path contains READ_SUBSTRING).
as_denied() {
	local dir=$1 rd=$2
	shift 2
	if [ "$PERM" = nobody ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		env LD_PRELOAD="$SHIM" AL_FAIL_DIR="$dir" AL_FAIL_MODE=eacces AL_FAIL_READ="$rd" "$@"
	fi
}
chmod 755 "$T"
cp -a "$T/ref" "$T/ro"
if [ "$PERM" = nobody ]; then
	chmod -R a+rX "$T/ro" "$T/pack"
fi
before=$(cd "$T/ro" && find . -type f | sort | xargs sha256sum)

# A store nobody may write: mirror, unpack into it.
al_run "$T/out" "$T/err" as_denied "$T/ro" "" "$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" \
	--tls-verify=false --store "$T/ro"
cat "$T/err"
al_check "mirror into a read-only store: exit 3" test "$AL_RC" = 3
al_check "mirror into a read-only store: 'Permission denied' naming the store" \
	bash -c 'grep -q "Permission denied" "$1" && grep -qF "$2" "$1"' _ "$T/err" "$T/ro"
al_run "$T/out" "$T/err" as_denied "$T/ro" "" "$AIRLOCK" unpack --accept-untrusted "$T/pack" --store "$T/ro"
cat "$T/err"
al_check "unpack into a read-only store: exit 3" test "$AL_RC" = 3
al_check "unpack into a read-only store: 'Permission denied' naming the store" \
	bash -c 'grep -q "Permission denied" "$1" && grep -qF "$2" "$1"' _ "$T/err" "$T/ro"
al_check "the read-only store is unchanged" \
	test "$before" = "$(cd "$T/ro" && find . -type f | sort | xargs sha256sum)"

# pack (from a store it may use) to an output directory nobody may write.
cp -a "$T/ref" "$T/unr"
mkdir -p "$T/ro-out" "$T/pk"
[ "$PERM" = nobody ] && chown -R 65534:65534 "$T/unr" "$T/pk"
al_run "$T/out" "$T/err" as_denied "$T/ro-out" "" "$AIRLOCK" pack --store "$T/unr" -o "$T/ro-out" --volume-size 1M
cat "$T/err"
al_check "pack to a read-only directory: exit 3" test "$AL_RC" = 3
al_check "pack to a read-only directory: 'Permission denied' naming it" \
	bash -c 'grep -q "Permission denied" "$1" && grep -qF "$2" "$1"' _ "$T/err" "$T/ro-out"
al_check "pack to a read-only directory: nothing written" test -z "$(ls -A "$T/ro-out")"

# An unreadable blob: check, pack and push say so and name it. The store is
# otherwise writable (its lock), the blob alone unreadable.
as_unreadable() {
	local dir=$1 rd=$2
	shift 2
	if [ "$PERM" = nobody ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		env LD_PRELOAD="$SHIM" AL_FAIL_DIR="$dir" AL_FAIL_MODE=eread AL_FAIL_READ="$rd" "$@"
	fi
}
victim=$(python3 -c 'import json,sys
m = json.load(open(sys.argv[1] + "/index.json"))["manifests"][0]["digest"]
print(json.load(open(sys.argv[1] + "/blobs/sha256/" + m[7:]))["layers"][0]["digest"][7:])' "$T/unr")
chmod 000 "$T/unr/blobs/sha256/$victim"
al_run "$T/out" "$T/err" as_unreadable "$T/unr" "$victim" "$AIRLOCK" check --store "$T/unr"
cat "$T/out" "$T/err"
al_check "check with an unreadable blob: does not exit 0" test "$AL_RC" != 0
al_check "check with an unreadable blob: names the blob" grep -q "$victim" "$T/out" "$T/err"
al_check "check with an unreadable blob: says 'Permission denied'" grep -q "Permission denied" "$T/out" "$T/err"
al_run "$T/out" "$T/err" as_unreadable "$T/unr" "$victim" "$AIRLOCK" pack --store "$T/unr" -o "$T/pk" --volume-size 1M
cat "$T/err"
al_check "pack with an unreadable blob: exit 3" test "$AL_RC" = 3
al_check "pack with an unreadable blob: 'Permission denied' naming the blob" \
	bash -c 'grep -q "Permission denied" "$1" && grep -q "$2" "$1"' _ "$T/err" "$victim"
al_check "pack with an unreadable blob: no pack manifest" \
	bash -c '! ls "$1" 2>/dev/null | grep -qE "^airlock-.*[0-9a-f]\.json$"' _ "$T/pk"
al_run "$T/out" "$T/err" as_unreadable "$T/unr" "$victim" "$AIRLOCK" push --store "$T/unr" \
	"docker://$R/denied" --tls-verify=false
cat "$T/err"
al_check "push with an unreadable blob: exit 3" test "$AL_RC" = 3
al_check "push with an unreadable blob: 'Permission denied' naming the blob" \
	bash -c 'grep -q "Permission denied" "$1" && grep -q "$2" "$1"' _ "$T/err" "$victim"
chmod 644 "$T/unr/blobs/sha256/$victim"

al_finish
