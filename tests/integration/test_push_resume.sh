#!/usr/bin/env bash
# test_push_resume.sh: a push of a 48 MiB layer killed (-9) after two of its three chunks continues its upload session in the rerun; a cut chunk and a session the registry dropped start over cleanly.
# al-tier: slow
#
# Judged by what the proxy in front of docker-registry forwarded (request
# body bytes and requests, counted, never timed), by the upload session
# file under airlock/uploads, and by the digest the registry serves
# afterwards. Uploads go in 16 MiB PATCH chunks (the registry client's
# chunk size): 48 MiB is three.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

MIB=$((1024 * 1024))
SIZE=$((48 * MIB))
CHUNK=$((16 * MIB))
MAXREL=$((SIZE * 45 / 100))

# One image whose only layer is SIZE seeded pseudo-random bytes.
python3 "$AL_TOOLS/mkimage.py" "$T/src" quay.io/airlock-samples/big:1 "$SIZE" push-resume
want=$(al_digest_of "$T/src" quay.io/airlock-samples/big:1)

fault() { curl -sf "http://$P/_fault?$1" >/dev/null; }
stats_reset() { curl -sf "http://$P/_stats?reset=1" >/dev/null; }
# stat_of KEY: a value of the proxy's counters.
stat_of() { curl -sf "http://$P/_stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
injected() { curl -sf "http://$P/_stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["injected"][sys.argv[1]])' "$1"; }
proxy_log() { curl -sf "http://$P/_stats" | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["log"]))'; }
# session_offset STORE: the acknowledged offset of the kept upload session
# (0 when there is none).
session_offset() {
	python3 - "$1/airlock/uploads" <<'PY'
import glob, json, sys
offs = [json.load(open(f)).get("offset", 0) for f in glob.glob(sys.argv[1] + "/*.json")]
print(max(offs) if offs else 0)
PY
}
sessions() { find "$1/airlock/uploads" -name '*.json' 2>/dev/null | wc -l; }
# served REG REPO: the digest REG serves for REPO:1.
served() {
	curl -sfI -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
		"http://$1/v2/$2/manifests/1" | tr -d '\r' |
		awk 'tolower($1) == "docker-content-digest:" {print $2}'
}

# start_case NAME: a fresh registry, proxy and store for one case.
start_case() {
	al_start_registry "$T/reg-$1"
	R=$REG_ADDR
	al_start_proxy "$R"
	P=$PROXY_ADDR
	S=$T/store-$1
	cp -r "$T/src" "$S"
	PUSH=("$AIRLOCK" push --layout source --store "$S" --tls-verify=false --timeout 10m "docker://$P/mirror")
}

# killed_push: push until the proxy holds the third PATCH (the registry
# acknowledged two chunks, 32 MiB) and kill -9 the push there.
killed_push() {
	local pid i
	fault "kind=hang&method=PATCH&path=/blobs/uploads/&skip=2&times=1"
	"${PUSH[@]}" >"$T/killed.out" 2>&1 &
	pid=$!
	for i in $(seq 1 3000); do
		if [ "$(injected hang)" -ge 1 ] && [ "$(session_offset "$S")" -ge $((2 * CHUNK)) ]; then
			break
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	fault clear=1
}

# ------------------------------------------------ 1. kill -9 between chunks
start_case kill
killed_push
al_check "kill -9: the upload session is kept at two chunks" \
	test "$(session_offset "$S")" = $((2 * CHUNK))
stats_reset
al_run "$T/out" "$T/err" "${PUSH[@]}"
cat "$T/out" "$T/err"
al_check "kill -9: the rerun exits 0" test "$AL_RC" = 0
proxy_log | tee "$T/kill.log"
sent=$(stat_of request_bytes)
echo "kill -9: the rerun sent $sent bytes for a $SIZE byte layer (limit $MAXREL)"
al_check "kill -9: the rerun sent less than 45% of the layer" test "$sent" -lt "$MAXREL"
al_check "kill -9: the rerun asked the session's status" \
	grep -qE '^GET /v2/mirror/airlock-samples/big/blobs/uploads/[^ ]+ 204 ' "$T/kill.log"
al_check "kill -9: the rerun opened no new session" \
	test "$(grep -cE '^POST /v2/mirror/airlock-samples/big/blobs/uploads/' "$T/kill.log")" -le 1
al_check "kill -9: the registry serves the image with its digest" test "$(served "$R" mirror/airlock-samples/big)" = "$want"
al_check "kill -9: no upload session is left" test "$(sessions "$S")" = 0
# A session kept for a blob the registry has by now (a run killed between
# the upload's last answer and the session's removal) goes at the next
# HEAD of that blob.
layer=$(python3 - "$T/src" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/index.json"))["manifests"][0]["digest"][7:]
print(json.load(open(d + "/blobs/sha256/" + m))["layers"][0]["digest"])
PY
)
stale=$S/airlock/uploads/$(printf '%s\n%s\n%s' "$P" mirror/airlock-samples/big "$layer" | sha256sum | cut -c1-32).json
printf '{"location": "http://%s/v2/x/blobs/uploads/gone", "offset": 0}\n' "$P" >"$stale"
al_run "$T/out" "$T/err" "${PUSH[@]}" --recheck
al_check "kill -9: a rerun with --recheck exits 0" test "$AL_RC" = 0
al_check "kill -9: a session kept for a blob the registry has is removed" test ! -e "$stale"

# --------------------------------- 2. a session the registry dropped (404)
# The push killed as above, then the session cancelled at the registry:
# the rerun's status request answers 404 and the upload starts over.
start_case dropped
killed_push
loc=$(python3 - "$S/airlock/uploads" "$P" "$R" <<'PY'
import glob, json, sys
f = glob.glob(sys.argv[1] + "/*.json")[0]
print(json.load(open(f))["location"].replace(sys.argv[2], sys.argv[3]))
PY
)
curl -sf -X DELETE "$loc" >/dev/null || al_fail "dropped: the session cancelled at the registry"
stats_reset
al_run "$T/out" "$T/err" "${PUSH[@]}"
cat "$T/out" "$T/err"
al_check "dropped: the rerun exits 0" test "$AL_RC" = 0
proxy_log | tee "$T/dropped.log"
al_check "dropped: the status request answered 404" \
	grep -qE '^GET /v2/mirror/airlock-samples/big/blobs/uploads/[^ ]+ 404 ' "$T/dropped.log"
al_check "dropped: the whole layer was sent again" test "$(stat_of request_bytes)" -ge "$SIZE"
al_check "dropped: the registry serves the image with its digest" test "$(served "$R" mirror/airlock-samples/big)" = "$want"
al_check "dropped: no upload session is left" test "$(sessions "$S")" = 0

# ------------------------------------ 3. a connection cut inside a chunk
# The second chunk's connection is cut once 60% of the layer went out:
# docker-registry keeps the bytes it got and refuses the session's old
# state from then on, so the same run starts a new session and verifies.
start_case cut
fault "kind=cutreq&method=PATCH&path=/blobs/uploads/&skip=1&times=1&after=$((SIZE * 60 / 100 - CHUNK))"
stats_reset
al_run "$T/out" "$T/err" "${PUSH[@]}"
cat "$T/out" "$T/err"
al_check "cut: the push exits 0" test "$AL_RC" = 0
proxy_log | tee "$T/cut.log"
al_check "cut: the chunk was cut" test "$(injected cutreq)" = 1
sent=$(stat_of request_bytes)
echo "cut: the push sent $sent bytes for a $SIZE byte layer"
al_check "cut: at most the cut bytes and the layer once more were sent" \
	test "$sent" -le $((SIZE * 60 / 100 + SIZE + MIB))
al_check "cut: the registry serves the image with its digest" test "$(served "$R" mirror/airlock-samples/big)" = "$want"
al_check "cut: no upload session is left" test "$(sessions "$S")" = 0

al_finish
