#!/usr/bin/env bash
# test_push_session_held.sh: check --gc keeps the upload session of a push that is running (the push holds its flock) and lists it as in use; once the push is gone (kill -9), the next check --gc removes it.
# al-tier: slow
#
# A push of a 48 MiB layer goes in 16 MiB PATCH chunks; the proxy in front
# of docker-registry holds the third PATCH, so the push waits there with its
# session file (airlock/uploads) acknowledged at two chunks. Judged by what
# is on disk and by check's listing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

MIB=$((1024 * 1024))
SIZE=$((48 * MIB))
CHUNK=$((16 * MIB))
# One image whose only layer is SIZE seeded pseudo-random bytes.
python3 "$AL_TOOLS/mkimage.py" "$T/src" quay.io/airlock-samples/big:1 "$SIZE" push-resume

fault() { curl -sf "http://$P/_fault?$1" >/dev/null; }
injected() { curl -sf "http://$P/_stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["injected"][sys.argv[1]])' "$1"; }
# session_offset STORE: the acknowledged offset of the kept upload session
# (0 when there is none).
session_offset() {
	python3 - "$1/airlock/uploads" <<'PY'
import glob, json, sys
offs = []
for f in glob.glob(sys.argv[1] + "/*.json"):
    try:
        offs.append(json.load(open(f)).get("offset", 0))
    except ValueError:
        pass
print(max(offs) if offs else 0)
PY
}
sessions() { find "$1/airlock/uploads" -name '*.json' 2>/dev/null | wc -l; }

al_start_registry "$T/reg"
R=$REG_ADDR
al_start_proxy "$R"
P=$PROXY_ADDR
S=$T/store
cp -r "$T/src" "$S"

fault "kind=hang&method=PATCH&path=/blobs/uploads/&skip=2&times=1"
"$AIRLOCK" push --layout source --store "$S" --tls-verify=false --timeout 10m "docker://$P/mirror" >"$T/push.out" 2>&1 &
pid=$!
AL_PIDS+=("$pid")
for i in $(seq 1 3000); do
	if [ "$(injected hang)" -ge 1 ] && [ "$(session_offset "$S")" -ge $((2 * CHUNK)) ]; then
		break
	fi
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
al_check "the push waits with its session at two chunks" test "$(session_offset "$S")" = $((2 * CHUNK))
al_check "the push is still running" kill -0 "$pid"
session=$(find "$S/airlock/uploads" -name '*.json' | head -n 1)

al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$S"
al_check "check lists the session as in use" \
	grep -qE "^unreferenced $session - upload session of sha256:[0-9a-f]{64} to $P/mirror/airlock-samples/big: $((2 * CHUNK)) of $SIZE bytes sent, .*, in use$" "$T/check.out"
al_run "$T/gc.out" "$T/gc.err" "$AIRLOCK" check --store "$S" --gc
al_check "check --gc exits 0" test "$AL_RC" = 0
al_check "check --gc keeps the session of the running push" test -s "$session"
al_check "gc's summary counts it in use" grep -qE '^kept to resume: 0 partial downloads \(0 bytes\), 1 upload sessions \([0-9]+ bytes\), 1 in use' "$T/gc.out"

kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
fault clear=1
al_check "the killed push left its session" test -s "$session"
al_run "$T/gc2.out" "$T/gc2.err" "$AIRLOCK" check --store "$S" --gc
al_check "check --gc exits 0 again" test "$AL_RC" = 0
al_check "with the push gone, gc removes the session" test ! -e "$session"
al_check "gc says so" grep -qF "removed $session - upload session" "$T/gc2.out"
al_finish
