#!/usr/bin/env bash
# test_push_rerun.sh: an unchanged push rerun asks one HEAD per image (the pushed-images record), and a registry that lost or moved a tag gets the image again.
# al-tier: quick
#
# Judged by what a request-counting proxy in front of docker-registry saw
# (requests, methods, paths; never timed) and by what the registry serves
# afterwards (the digest under each tag).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

layout=$AL_SOURCE_DIR/samples/layout
store=$T/store
cp -r "$layout" "$store"
nimg=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["manifests"]))' "$layout/index.json")

al_start_registry "$T/reg"
R=$REG_ADDR
al_start_proxy "$R"
P=$PROXY_ADDR
PUSH=("$AIRLOCK" push --layout source --store "$store" --tls-verify=false "docker://$P/mirror")

stats_reset() { curl -sf "http://$P/_stats?reset=1" >/dev/null; }
# rerun_log FILE: the proxy's log since the last reset, one request a line
# (METHOD PATH STATUS BYTES RANGE REQBYTES).
rerun_log() {
	curl -sf "http://$P/_stats" | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["log"]))' >"$1"
}
# head_digest REPO REF: the digest the registry (not the proxy) serves.
head_digest() {
	curl -sfI -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
		"http://$R/v2/$1/manifests/$2" | tr -d '\r' |
		awk 'tolower($1) == "docker-content-digest:" {print $2}'
}
release_digest=$(al_digest_of "$layout" quay.io/airlock-samples/release:4.14.1-x86_64)

# ---------------------------------------------------------- first push
al_run "$T/out" "$T/err" "${PUSH[@]}"
cat "$T/out" "$T/err"
al_check "first push exits 0" test "$AL_RC" = 0
al_check "the store records what the registry holds" \
	python3 - "$store/airlock/pushed.json" "$P" "$nimg" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["registries"][sys.argv[2]]
sys.exit(len(d) != int(sys.argv[3]) or
         not all(v.startswith("sha256:") for v in d.values()))
PY

# ---------------------------------------------------- unchanged rerun
stats_reset
al_run "$T/out" "$T/err" "${PUSH[@]}"
cat "$T/out" "$T/err"
al_check "unchanged rerun exits 0" test "$AL_RC" = 0
rerun_log "$T/rerun.log"
cat "$T/rerun.log"
n=$(wc -l <"$T/rerun.log")
echo "unchanged push rerun: $n requests for $nimg images (limit: $nimg, one HEAD each)"
al_check "unchanged rerun: at most one request per image" test "$n" -le "$nimg"
al_check "unchanged rerun: one manifest HEAD per image" \
	test "$(grep -cE '^HEAD /v2/mirror/.*/manifests/' "$T/rerun.log")" = "$nimg"
al_check "unchanged rerun: no blob asked" test "$(grep -c '/blobs/' "$T/rerun.log")" = 0
al_check "unchanged rerun: nothing written" test "$(grep -cE '^(PUT|POST|PATCH) ' "$T/rerun.log")" = 0
al_check "unchanged rerun: the summary says so" \
	grep -qE "^pushed $nimg images: uploaded 0 blobs \(0 bytes\), 0 blobs already present or mounted, $nimg images unchanged$" \
	<(al_last_line "$T/out")
al_run "$T/out.json" "$T/err" "${PUSH[@]}" --json
al_check "unchanged rerun with --json exits 0" test "$AL_RC" = 0
al_check "--json counts the images unchanged" test \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stats"]["images_unchanged"])' "$T/out.json")" = "$nimg"

# -------------------------------------- a tag the registry lost comes back
# The release's manifest deleted in the registry: its HEAD answers 404,
# and that image (only) is pushed again: blobs asked, manifest sent.
curl -sf -X DELETE "http://$R/v2/mirror/airlock-samples/release/manifests/$release_digest" >/dev/null ||
	al_fail "release manifest deleted in the registry"
al_check "the registry no longer serves the release" \
	test -z "$(head_digest mirror/airlock-samples/release 4.14.1-x86_64)"
stats_reset
al_run "$T/out" "$T/err" "${PUSH[@]}"
cat "$T/out" "$T/err"
al_check "rerun after a deleted manifest exits 0" test "$AL_RC" = 0
rerun_log "$T/lost.log"
cat "$T/lost.log"
al_check "the release is served again with its digest" \
	test "$(head_digest mirror/airlock-samples/release 4.14.1-x86_64)" = "$release_digest"
al_check "its manifest was sent again" \
	grep -qE '^PUT /v2/mirror/airlock-samples/release/manifests/4.14.1-x86_64 201 ' "$T/lost.log"
al_check "only the release's repository was written" \
	test "$(grep -E '^(PUT|POST|PATCH) ' "$T/lost.log" | grep -vc '/v2/mirror/airlock-samples/release/')" = 0
al_check "the other images were confirmed unchanged" \
	grep -qE "images unchanged$" <(al_last_line "$T/out")

# ----------------------------------------- a tag moved by someone else
# The release tag made to name another manifest (the release's config
# without its layers): the HEAD answers another digest and the release is
# pushed again.
other=$(python3 - "$layout" "$release_digest" "http://$R/v2/mirror/airlock-samples/release/manifests/4.14.1-x86_64" <<'PY'
import hashlib, json, sys, urllib.request
layout, digest, url = sys.argv[1:]
m = json.load(open(layout + "/blobs/sha256/" + digest[7:]))
m["layers"] = []
data = json.dumps(m).encode()
req = urllib.request.Request(url, data=data, method="PUT",
    headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"})
urllib.request.urlopen(req)
print("sha256:" + hashlib.sha256(data).hexdigest())
PY
)
al_check "the release tag now names another manifest" \
	test "$(head_digest mirror/airlock-samples/release 4.14.1-x86_64)" = "$other"
stats_reset
al_run "$T/out" "$T/err" "${PUSH[@]}"
cat "$T/out" "$T/err"
al_check "rerun after a moved tag exits 0" test "$AL_RC" = 0
al_check "the release tag names the store's manifest again" \
	test "$(head_digest mirror/airlock-samples/release 4.14.1-x86_64)" = "$release_digest"

# ------------------------------------------------------------- --recheck
# Asked to check, the record is not used: every blob is asked again.
stats_reset
al_run "$T/out" "$T/err" "${PUSH[@]}" --recheck
al_check "push --recheck exits 0" test "$AL_RC" = 0
rerun_log "$T/recheck.log"
echo "push --recheck (every blob asked, every manifest sent): $(wc -l <"$T/recheck.log") requests"
al_check "push --recheck asks for the blobs" grep -qE '^HEAD /v2/mirror/.*/blobs/sha256:' "$T/recheck.log"
al_check "push --recheck sends the manifests" grep -qE '^PUT /v2/mirror/.*/manifests/' "$T/recheck.log"

# ------------------------------------------------------------ --no-record
stats_reset
rm -f "$store/airlock/pushed.json"
al_run "$T/out" "$T/err" "${PUSH[@]}" --no-record
al_check "push --no-record exits 0" test "$AL_RC" = 0
al_check "push --no-record keeps no pushed-images record" test ! -e "$store/airlock/pushed.json"

al_finish
