#!/usr/bin/env bash
# test_index_children.sh: an index listing one 1 MiB child 2000 times is copied, mirrored and pushed with bounded memory (peak RSS measured); each distinct child is fetched once.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
[ -x /usr/bin/time ] || { echo "skip: no GNU time"; exit 77; }
[ -x "${AL_REGISTRY_BIN:-/usr/bin/docker-registry}" ] || { echo "skip: no docker-registry"; exit 77; }

# Peak RSS bound (KiB). Sanitizer builds carry shadow memory and a
# quarantine of freed blocks: a looser bound, still far below what keeping
# every child costs (2000 x 1 MiB).
limit=$((64 * 1024))
if al_sanitized; then
	limit=$((128 * 1024))
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16
fi

al_start_registry "$T/reg"
A=$REG_ADDR

# One config, one layer, one child manifest padded to 1 MiB by an
# annotation, and an index listing that child 2000 times.
python3 - "$A" >"$T/digests" <<'EOF'
import hashlib, json, sys, urllib.request
base = "http://" + sys.argv[1]
repo = "bounds/repeated"

def req(method, url, data=None, headers=None):
    r = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    return urllib.request.urlopen(r, timeout=30)

def blob(data):
    d = "sha256:" + hashlib.sha256(data).hexdigest()
    loc = req("POST", base + "/v2/%s/blobs/uploads/" % repo).headers["Location"]
    if loc.startswith("/"):
        loc = base + loc
    sep = "&" if "?" in loc else "?"
    req("PUT", loc + sep + "digest=" + d, data,
        {"Content-Type": "application/octet-stream"})
    return {"digest": d, "size": len(data)}

def manifest(ref, body, mt):
    req("PUT", base + "/v2/%s/manifests/%s" % (repo, ref), body, {"Content-Type": mt})
    return "sha256:" + hashlib.sha256(body).hexdigest()

cfg = blob(json.dumps({"architecture": "amd64", "os": "linux",
                       "rootfs": {"type": "layers", "diff_ids": []}}).encode())
layer = blob(b"not really a tar, nobody unpacks it here" * 64)
child = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
         "config": dict(cfg, mediaType="application/vnd.oci.image.config.v1+json"),
         "layers": [dict(layer, mediaType="application/vnd.oci.image.layer.v1.tar+gzip")],
         "annotations": {"airlock.test/padding": "x" * (1 << 20)}}
cb = json.dumps(child, separators=(",", ":")).encode()
cd = manifest("child", cb, child["mediaType"])
entry = {"mediaType": child["mediaType"], "digest": cd, "size": len(cb),
         "platform": {"architecture": "amd64", "os": "linux"}}
index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
         "manifests": [entry] * 2000}
ib = json.dumps(index, separators=(",", ":")).encode()
idg = manifest("v1", ib, index["mediaType"])
print(cd, idg)
EOF
read -r child index <"$T/digests"
echo "child $child, index $index (2000 entries)"

# A guard for a regression: cap the address space so that a copy that
# keeps every child fails quickly instead of taking the machine's memory
# (not under ASan, which reserves terabytes of address space).
cap() {
	if [ "$limit" = $((64 * 1024)) ]; then
		(ulimit -v $((1536 * 1024)) && exec "$@")
	else
		"$@"
	fi
}

# Peak RSS in KiB of a command (GNU time -v), its exit status in AL_RC.
peak() {
	local what=$1
	shift
	AL_RC=0
	cap /usr/bin/time -v -o "$T/time.$what" "$@" >"$T/out.$what" 2>"$T/err.$what" || AL_RC=$?
	cat "$T/err.$what"
	RSS=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$T/time.$what")
	# a run that failed measured nothing worth comparing
	[ "$AL_RC" = 0 ] || RSS=999999999
	echo "$what: exit $AL_RC, peak RSS $RSS KiB (bound $limit KiB)"
}

peak copy "$AIRLOCK" copy "docker://$A/bounds/repeated:v1" "oci:$T/layout:idx" --tls-verify=false
al_check "copy of the repeated-child index exits 0" test "$AL_RC" = 0
al_check "copy: peak RSS under the bound" test "${RSS:-999999999}" -lt "$limit"
al_check "copy: the layout names the index" test "$(al_digest_of "$T/layout" idx)" = "$index"
al_check "copy: the child is in the layout" test -s "$T/layout/blobs/sha256/${child#sha256:}"

cat >"$T/imageset.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  additionalImages:
  - name: $A/bounds/repeated:v1
YAML
peak mirror "$AIRLOCK" mirror --config "$T/imageset.yaml" --store "$T/store" --tls-verify=false --allow-unsigned
al_check "mirror of the repeated-child index exits 0" test "$AL_RC" = 0
al_check "mirror: peak RSS under the bound" test "${RSS:-999999999}" -lt "$limit"
al_check "mirror: the store names the index" test "$(al_digest_of "$T/store" "$A/bounds/repeated:v1")" = "$index"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/store"
al_check "mirror: the store checks clean" test "$AL_RC" = 0

peak push "$AIRLOCK" push --store "$T/store" "docker://$A/pushed" --tls-verify=false
al_check "push of the repeated-child index exits 0" test "$AL_RC" = 0
al_check "push: peak RSS under the bound" test "${RSS:-999999999}" -lt "$limit"
got=$(python3 - "$A" <<'EOF'
import hashlib, sys, urllib.request
r = urllib.request.Request("http://%s/v2/pushed/bounds/repeated/manifests/v1" % sys.argv[1],
                           headers={"Accept": "application/vnd.oci.image.index.v1+json"})
print("sha256:" + hashlib.sha256(urllib.request.urlopen(r, timeout=30).read()).hexdigest())
EOF
)
al_check "push: the registry serves the same index" test "$got" = "$index"
al_finish
