#!/usr/bin/env bash
# test_check_kept.sh: airlock check lists the partial downloads and push upload sessions a store keeps to resume (count, bytes, age); check --gc removes the stale ones and keeps those a running airlock holds (their flock).
# al-tier: quick
#
# Judged by what is on disk after each run and by the listing check prints
# (paths and the summary's counts). The "running airlock" is this shell
# holding the file's flock (flock(1)), as a push holds its session file and
# a mirror its partial download; check runs with that descriptor closed.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v flock >/dev/null || al_skip "flock missing (Debian package util-linux)"

# A store with one image (any OCI layout opens as a store).
S=$T/store
python3 "$AL_TOOLS/mkimage.py" "$S" quay.io/airlock-samples/kept:1 1100

# session FILE DIGEST OFFSET: an upload session as push keeps it.
session() {
	mkdir -p "$(dirname "$1")"
	printf '{"airlockUpload": 1, "registry": "registry.local:5000", "repository": "mirror/big", "digest": "%s", "size": 50331648, "location": "http://registry.local:5000/v2/mirror/big/blobs/uploads/u1", "offset": %s}\n' "$2" "$3" >"$1"
}
mkdir -p "$S/blobs/.partial"
stale_partial=$S/blobs/.partial/sha256-$(printf 'a%.0s' $(seq 64))
held_partial=$S/blobs/.partial/sha256-$(printf 'b%.0s' $(seq 64))
head -c $((2 * 1024 * 1024)) /dev/zero >"$stale_partial"
head -c $((1024 * 1024)) /dev/zero >"$held_partial"
stale_session=$S/airlock/uploads/0123456789abcdef0123456789abcdef.json
held_session=$S/airlock/uploads/fedcba9876543210fedcba9876543210.json
session "$stale_session" "sha256:$(printf 'c%.0s' $(seq 64))" 33554432
session "$held_session" "sha256:$(printf 'd%.0s' $(seq 64))" 16777216
touch -d '3 days ago' "$stale_partial" "$stale_session"

# check (read-only) lists all four, with bytes and age
al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$S"
al_check "check exits 0 (kept files are no problem)" test "$AL_RC" = 0
for f in "$stale_partial" "$held_partial" "$stale_session" "$held_session"; do
	al_check "check lists $(basename "$f")" grep -qF "unreferenced $f - " "$T/check.out"
done
al_check "the partial download's bytes and age are listed" \
	grep -qF "unreferenced $stale_partial - partial download of 2097152 bytes, 3 d old" "$T/check.out"
al_check "the upload session's progress and age are listed" \
	grep -qF "upload session of sha256:$(printf 'c%.0s' $(seq 64)) to registry.local:5000/mirror/big: 33554432 of 50331648 bytes sent" "$T/check.out"
al_check "the summary counts two partial downloads and two upload sessions" \
	grep -qE '^kept to resume: 2 partial downloads \(3145728 bytes\), 2 upload sessions \([0-9]+ bytes\), 0 in use, the oldest 2[0-9]{5} s old' "$T/check.out"
al_run "$T/check.json" "$T/check.err" "$AIRLOCK" check --store "$S" --json
al_check "check --json lists four kept files" \
	test "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["kept"]))' "$T/check.json")" = 4

# hold one partial download and one session, as a running mirror and push
# do, then gc
exec 8<"$held_partial" 9<"$held_session"
flock -x -n 8
flock -x -n 9
al_run "$T/gc.out" "$T/gc.err" "$AIRLOCK" check --store "$S" --gc 8<&- 9<&-
al_check "check --gc exits 0" test "$AL_RC" = 0
al_check "gc removed the stale partial download" test ! -e "$stale_partial"
al_check "gc removed the stale upload session" test ! -e "$stale_session"
al_check "gc kept the partial download a writer holds" test -s "$held_partial"
al_check "gc kept the upload session a push holds" test -s "$held_session"
al_check "gc says it removed the two" test "$(grep -c '^removed ' "$T/gc.out")" = 2
al_check "gc's summary: what is left is in use" \
	grep -qE '^kept to resume: 1 partial downloads \(1048576 bytes\), 1 upload sessions \([0-9]+ bytes\), 2 in use' "$T/gc.out"
al_check "the image is untouched" test "$(al_digest_of "$S" quay.io/airlock-samples/kept:1)" != ""

# released (the airlock holding them ended): the next gc removes them
exec 8<&- 9<&-
al_run "$T/gc2.out" "$T/gc2.err" "$AIRLOCK" check --store "$S" --gc
al_check "check --gc exits 0 again" test "$AL_RC" = 0
al_check "the released partial download is gone" test ! -e "$held_partial"
al_check "the released upload session is gone" test ! -e "$held_session"
al_check "nothing is left to list" sh -c "! grep -q '^kept to resume' '$T/gc2.out'"
al_run "$T/check2.out" "$T/check2.err" "$AIRLOCK" check --store "$S"
al_check "the store checks clean afterwards" test "$AL_RC" = 0
al_finish
