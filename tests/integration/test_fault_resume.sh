#!/usr/bin/env bash
# test_fault_resume.sh: a 48 MiB layer cut at 60% (kill -9, a cut connection) is continued by the rerun with a Range request; a server that ignores ranges, and an unchanged rerun's request count.
# al-tier: slow
#
# Judged by what the proxy in front of the registry relayed (body bytes and
# requests, counted, never timed) and by what is on disk: the partial file
# under blobs/.partial, the finished store (airlock check, same digests as
# the source).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

SIZE=$((48 * 1024 * 1024))
CUT=$((SIZE * 60 / 100))
MAXREL=$((SIZE * 45 / 100))

# One image whose only layer is SIZE seeded pseudo-random bytes (the
# registry does not look into layers).
python3 - "$T/src" "$SIZE" <<'PY'
import hashlib, json, os, random, sys
out, size = sys.argv[1], int(sys.argv[2])
os.makedirs(out + "/blobs/sha256")
def put(data):
    h = hashlib.sha256(data).hexdigest()
    open(out + "/blobs/sha256/" + h, "wb").write(data)
    return "sha256:" + h
rng = random.Random("fault-resume")
layer = rng.randbytes(size)
cfg = json.dumps({"architecture": "amd64", "os": "linux",
                  "rootfs": {"type": "layers", "diff_ids": ["sha256:" + "0" * 64]}}).encode()
m = json.dumps({"schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                           "digest": put(cfg), "size": len(cfg)},
                "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                            "digest": put(layer), "size": len(layer)}]}).encode()
idx = {"schemaVersion": 2, "manifests": [{
    "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "digest": put(m), "size": len(m),
    "annotations": {"org.opencontainers.image.ref.name": "quay.io/airlock-samples/big:1"}}]}
json.dump(idx, open(out + "/index.json", "w"))
open(out + "/oci-layout", "w").write('{"imageLayoutVersion": "1.0.0"}')
PY
layer=$(python3 - "$T/src" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/index.json"))["manifests"][0]["digest"][7:]
print(json.load(open(d + "/blobs/sha256/" + m))["layers"][0]["digest"])
PY
)
partial_name=${layer/:/-}

al_start_registry "$T/reg"
R=$REG_ADDR
# airlock copy keeps the bytes (skopeo would compress the layer).
al_check "image with a 48 MiB layer pushed" "$AIRLOCK" copy --tls-verify=false \
	"oci:$T/src:quay.io/airlock-samples/big:1" "docker://$R/airlock-samples/big:1"
al_start_proxy "$R"
P=$PROXY_ADDR
echo "registry $R, proxy $P, layer $layer"

cat >"$T/images.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  additionalImages:
  - name: quay.io/airlock-samples/big:1
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: docker://$P/airlock-samples
YAML
MIRROR=("$AIRLOCK" mirror --allow-unsigned --config "$T/images.yaml" --tls-verify=false --timeout 10m --store)

fault() { curl -sf "http://$P/_fault?$1" >/dev/null; }
# stats KEY: a value of the proxy's counters; stats_reset zeroes them.
stats() { curl -sf "http://$P/_stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
stats_reset() { curl -sf "http://$P/_stats?reset=1" >/dev/null; }
# layer_log: the proxy's log lines for the layer (METHOD PATH STATUS BYTES RANGE).
layer_log() {
	curl -sf "http://$P/_stats" | python3 -c '
import json, sys
for l in json.load(sys.stdin)["log"]:
    if sys.argv[1] in l.split()[1]:
        print(l)' "$layer"
}
layer_bytes() { layer_log | awk '{n += $4} END {print n + 0}'; }
psize() { stat -c %s "$1/blobs/.partial/$partial_name" 2>/dev/null || echo 0; }

# wait_size STORE N PID: poll (bounded) until the partial file holds N
# bytes; fails early when PID exited.
wait_size() {
	local i
	for i in $(seq 1 3000); do
		[ "$(psize "$1")" -ge "$2" ] && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# rerun NAME STORE: rerun through a clean proxy; the layer must pass less
# than 45% of its bytes, with a Range request, and the store be complete.
rerun() {
	local name=$1 s=$2 got
	fault clear=1
	stats_reset
	al_run "$T/out" "$T/err" "${MIRROR[@]}" "$s"
	[ "$AL_RC" = 0 ] || cat "$T/out" "$T/err"
	al_check "$name: the rerun exits 0" test "$AL_RC" = 0
	got=$(layer_bytes)
	layer_log
	echo "$name: the rerun moved $got of $SIZE layer bytes (limit $MAXREL)"
	al_check "$name: the rerun moved less than 45% of the layer" test "$got" -lt "$MAXREL"
	al_check "$name: the rerun asked for the layer with a Range" \
		bash -c 'grep -q "bytes=$1-" <<<"$2"' _ "$CUT" "$(layer_log)"
	al_check "$name: the layer is in the store" test -f "$s/blobs/sha256/${layer#sha256:}"
	al_check "$name: no partial file is left" test ! -e "$s/blobs/.partial/$partial_name"
	al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$s"
	al_check "$name: airlock check is clean" test "$AL_RC" = 0
	al_check "$name: the store holds the image with its digest" al_same_index "$T/src" "$s"
}

# ---------------------------------------------------------- 1. kill -9 at 60%
# The proxy forwards 60% of the layer and then holds the connection open:
# the mirror is killed once the partial file holds exactly those bytes.
s=$T/s1
fault "kind=stall&path=/blobs/$layer&after=$CUT&times=1"
"${MIRROR[@]}" "$s" >"$T/killed.out" 2>&1 &
pid=$!
if wait_size "$s" "$CUT" "$pid"; then
	al_pass "kill -9: the partial file reached 60% of the layer"
else
	al_fail "kill -9: the partial file reached 60% of the layer (has $(psize "$s"))"
	cat "$T/killed.out"
fi
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
al_check "kill -9: the partial file survives with 60% of the layer" test "$(psize "$s")" = "$CUT"
al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$s"
al_check "kill -9: check lists the partial download" grep -q "$partial_name" "$T/check.out"
rerun "kill -9" "$s"

# ------------------------------------------------- unchanged rerun requests
# Six more small images in two more repositories. An unchanged rerun
# resolves each of the 7 tags once, lists each of the 3 repositories' tags
# once (signature tags asked only when listed) and probes the referrers
# API once: at most tags + 2 x repositories + 5 = 7 + 6 + 5 = 18 requests
# (before: 4 per image, 29).
python3 - "$T/small" <<'PY'
import hashlib, json, os, sys
out = sys.argv[1]
os.makedirs(out + "/blobs/sha256")
def put(data):
    h = hashlib.sha256(data).hexdigest()
    open(out + "/blobs/sha256/" + h, "wb").write(data)
    return "sha256:" + h
ents = []
for repo in ("a", "b"):
    for tag in ("1", "2", "3"):
        layer = ("layer %s:%s\n" % (repo, tag)).encode()
        cfg = json.dumps({"architecture": "amd64", "os": "linux", "tag": repo + tag}).encode()
        m = json.dumps({"schemaVersion": 2,
                        "mediaType": "application/vnd.oci.image.manifest.v1+json",
                        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                   "digest": put(cfg), "size": len(cfg)},
                        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                                    "digest": put(layer), "size": len(layer)}]}).encode()
        ents.append({"mediaType": "application/vnd.oci.image.manifest.v1+json",
                     "digest": put(m), "size": len(m),
                     "annotations": {"org.opencontainers.image.ref.name":
                                     "quay.io/airlock-samples/%s:%s" % (repo, tag)}})
json.dump({"schemaVersion": 2, "manifests": ents}, open(out + "/index.json", "w"))
open(out + "/oci-layout", "w").write('{"imageLayoutVersion": "1.0.0"}')
PY
for ref in a:1 a:2 a:3 b:1 b:2 b:3; do
	"$AIRLOCK" copy --tls-verify=false "oci:$T/small:quay.io/airlock-samples/$ref" \
		"docker://$R/airlock-samples/$ref" >/dev/null ||
		al_fail "small image $ref pushed"
	echo "  - name: quay.io/airlock-samples/$ref" >>"$T/more.yaml"
done
python3 - "$T/images.yaml" "$T/more.yaml" "$T/all.yaml" <<'PY'
import sys
cfg, more = open(sys.argv[1]).read(), open(sys.argv[2]).read()
mark = "  - name: quay.io/airlock-samples/big:1\n"
open(sys.argv[3], "w").write(cfg.replace(mark, mark + more))
PY
MIRROR_ALL=("$AIRLOCK" mirror --allow-unsigned --config "$T/all.yaml" --tls-verify=false --store "$s")
al_run "$T/out" "$T/err" "${MIRROR_ALL[@]}"
al_check "seven images mirrored" test "$AL_RC" = 0
stats_reset
al_run "$T/out" "$T/err" "${MIRROR_ALL[@]}"
al_check "unchanged rerun exits 0" test "$AL_RC" = 0
curl -sf "http://$P/_stats" | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["log"]))' >"$T/rerun.log"
cat "$T/rerun.log"
n=$(stats requests)
echo "unchanged rerun: $n requests (7 tags, 3 repositories: limit 7 + 2 x 3 + 5 = 18)"
al_check "unchanged rerun: at most 18 requests" test "$n" -le 18
al_check "unchanged rerun: each tag asked once" \
	test "$(grep -cE '^(GET|HEAD) /v2/airlock-samples/[a-z]+/manifests/[0-9] ' "$T/rerun.log")" = 7
al_check "unchanged rerun: no blob asked" test "$(grep -c '/blobs/' "$T/rerun.log")" = 0
al_check "unchanged rerun: no signature tag asked that the listing lacks" \
	test "$(grep -c '\.sig ' "$T/rerun.log")" = 0

# ------------------------------------------------- 2. connection cut at 60%
# The connection is closed after 60% of the layer (a FIN, so that every
# byte relayed arrives: a RST drops what sits in the socket buffers) and
# every later request for it fails: the run fails and keeps the partial
# file.
s=$T/s2
fault "kind=cut&path=/blobs/$layer&after=$CUT&times=1"
fault "kind=500&path=/blobs/$layer&method=GET&times=-1"
al_run "$T/out" "$T/err" "${MIRROR[@]}" "$s"
al_check "cut connection: the run fails" test "$AL_RC" != 0
al_check "cut connection: the partial file keeps 60% of the layer" test "$(psize "$s")" = "$CUT"
rerun "cut connection" "$s"

# --------------------------------- 3. a server that ignores the Range header
# The rerun starts over from byte 0 on the 200 and still verifies.
s=$T/s3
fault "kind=cut&path=/blobs/$layer&after=$CUT&times=1"
fault "kind=500&path=/blobs/$layer&method=GET&times=-1"
al_run "$T/out" "$T/err" "${MIRROR[@]}" "$s"
al_check "range ignored: the partial file keeps 60% of the layer" test "$(psize "$s")" = "$CUT"
fault clear=1
fault "kind=norange&path=/blobs/$layer&times=-1"
stats_reset
al_run "$T/out" "$T/err" "${MIRROR[@]}" "$s"
[ "$AL_RC" = 0 ] || cat "$T/out" "$T/err"
al_check "range ignored: the rerun exits 0" test "$AL_RC" = 0
al_check "range ignored: the whole layer came again" test "$(layer_bytes)" -ge "$SIZE"
al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --store "$s"
al_check "range ignored: airlock check is clean" test "$AL_RC" = 0
al_check "range ignored: no partial file is left" test ! -e "$s/blobs/.partial/$partial_name"

# ------------------------------------------- 4. check --gc removes partials
s=$T/s4
fault clear=1
fault "kind=cut&path=/blobs/$layer&after=$CUT&times=1"
fault "kind=500&path=/blobs/$layer&method=GET&times=-1"
al_run "$T/out" "$T/err" "${MIRROR[@]}" "$s"
al_check "gc: a partial file is there" test "$(psize "$s")" = "$CUT"
al_run "$T/check.out" "$T/check.err" "$AIRLOCK" check --gc --store "$s"
al_check "gc: check --gc removed the partial file" test ! -e "$s/blobs/.partial/$partial_name"
al_check "gc: and said so" grep -q "removed .*$partial_name" "$T/check.out"

al_finish
