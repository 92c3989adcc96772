#!/usr/bin/env bash
# test_serve_auth_bcrypt.sh: one htpasswd file made by `htpasswd -B -C 5` serves airlock serve --allow-push and docker-registry alike: the same user and password push to both with skopeo, a wrong password and an unknown user push to neither; a cost above 12 stops airlock's start naming FILE:LINE.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

if ! command -v htpasswd >/dev/null; then
	al_skip "htpasswd (apache2-utils) is not installed"
fi
htpasswd -cbB -C 5 "$T/htpasswd" pusher 'push pw' 2>/dev/null
htpasswd -bB -C 4 "$T/htpasswd" other 'other pw' 2>/dev/null
al_check "htpasswd -B wrote bcrypt (\$2y\$) lines" \
	bash -c '[ "$(grep -c "^[a-z]*:[\$]2y[\$]0[45][\$]" "$1")" = 2 ]' _ "$T/htpasswd"

# An empty store: the layout files only.
dst=$T/dst
mkdir -p "$dst/blobs/sha256"
printf '{"imageLayoutVersion":"1.0.0"}\n' >"$dst/oci-layout"
printf '{"schemaVersion":2,"manifests":[]}\n' >"$dst/index.json"

# Two small images in an OCI layout: "good" is pushed with the right
# password, "bad" with wrong ones; each has a layer of its own.
python3 - "$T/img" <<'PYEOF'
import gzip, hashlib, json, os, sys
d = sys.argv[1]
os.makedirs(d + "/blobs/sha256")
def put(b, mt):
    h = hashlib.sha256(b).hexdigest()
    open("%s/blobs/sha256/%s" % (d, h), "wb").write(b)
    return {"mediaType": mt, "digest": "sha256:" + h, "size": len(b)}
mans = []
for tag in ("good", "bad"):
    # gzip, so that skopeo sends the layer and the manifest unchanged
    raw = os.urandom(20000)
    layer = put(gzip.compress(raw, mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip")
    open("%s/%s.layer" % (d, tag), "w").write(layer["digest"])
    cfg = put(json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(raw).hexdigest()]}}).encode(),
              "application/vnd.oci.image.config.v1+json")
    man = put(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": cfg, "layers": [layer]}).encode(),
              "application/vnd.oci.image.manifest.v1+json")
    open("%s/%s.manifest" % (d, tag), "w").write(man["digest"])
    man["annotations"] = {"org.opencontainers.image.ref.name": tag}
    mans.append(man)
open(d + "/oci-layout", "w").write('{"imageLayoutVersion":"1.0.0"}')
json.dump({"schemaVersion": 2, "manifests": mans}, open(d + "/index.json", "w"))
PYEOF
good_man=$(cat "$T/img/good.manifest")
good_layer=$(cat "$T/img/good.layer")
bad_man=$(cat "$T/img/bad.manifest")
bad_layer=$(cat "$T/img/bad.layer")

# 'airlock serve' on a free port (lib.sh); sets SRV_ADDR and SRV_PID.
srv_start() { al_start_serve "$@"; }

srv_start --store "$dst" --allow-push --htpasswd "$T/htpasswd"
A=$SRV_ADDR
al_start_registry "$T/reg" --htpasswd "$T/htpasswd"
R=$REG_ADDR
regdata=$T/reg/data/docker/registry/v2

# What each holds: airlock's store by its index.json and blob files,
# docker-registry by its storage tree (tag links and blob data).
airlock_has_manifest() { grep -q "\"$1\"" "$dst/index.json"; }
airlock_has_blob() { test -f "$dst/blobs/sha256/${1#sha256:}"; }
reg_has_tag() { test "$(cat "$regdata/repositories/$1/_manifests/tags/$2/current/link" 2>/dev/null)" = "$3"; }
reg_has_blob() { local h=${1#sha256:}; test -f "$regdata/blobs/sha256/${h:0:2}/$h/data"; }

for target in "$A" "$R"; do
	al_run "$T/out" "$T/err" "${SKOPEO[@]}" copy --dest-tls-verify=false --dest-creds 'pusher:push pw' \
		"oci:$T/img:good" "docker://$target/apps/one:v1"
	al_check "skopeo copy to $target with the htpasswd -B user and password" test "$AL_RC" = 0
done
al_check "airlock's store holds the pushed manifest and its layer" \
	bash -c "$(declare -f airlock_has_manifest airlock_has_blob); dst=\$1; airlock_has_manifest \$2 && airlock_has_blob \$3" _ "$dst" "$good_man" "$good_layer"
al_check "docker-registry holds the same tag and layer" \
	bash -c "$(declare -f reg_has_tag reg_has_blob); regdata=\$1; reg_has_tag apps/one v1 \$2 && reg_has_blob \$3" _ "$regdata" "$good_man" "$good_layer"

# The cost-4 user too (a second line, another cost).
al_run "$T/out" "$T/err" "${SKOPEO[@]}" copy --dest-tls-verify=false --dest-creds 'other:other pw' \
	"oci:$T/img:good" "docker://$A/apps/other:v1"
al_check "the second htpasswd -B user (cost 4) pushes to airlock serve" test "$AL_RC" = 0

for creds in 'pusher:push PW' 'pusher:' 'nobody:push pw' 'other:push pw'; do
	for target in "$A" "$R"; do
		al_run "$T/out" "$T/err" "${SKOPEO[@]}" copy --dest-tls-verify=false --dest-creds "$creds" \
			"oci:$T/img:bad" "docker://$target/apps/two:v1"
		al_check "skopeo copy to $target as '${creds%%:*}' with a wrong password is refused" test "$AL_RC" != 0
	done
done
al_check "airlock's store holds nothing of the refused pushes" \
	bash -c "$(declare -f airlock_has_manifest airlock_has_blob); dst=\$1; ! airlock_has_manifest \$2 && ! airlock_has_blob \$3" _ "$dst" "$bad_man" "$bad_layer"
al_check "docker-registry holds nothing of them either" \
	bash -c "$(declare -f reg_has_blob); regdata=\$1; ! reg_has_blob \$2 && ! test -e \"\$regdata/repositories/apps/two\"" _ "$regdata" "$bad_layer"

# The same credentials again after the refusals (airlock remembers both
# answers): still accepted, and the wrong ones still refused.
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
al_check "the right password still opens the API after the wrong ones" test "$(code -u 'pusher:push pw' "http://$A/v2/")" = 200
al_check "a wrong password asked again is still 401" test "$(code -u 'pusher:push PW' "http://$A/v2/")" = 401
al_check "docker-registry agrees on both" \
	bash -c '[ "$(curl -s -o /dev/null -w "%{http_code}" -u "pusher:push pw" "http://$1/v2/")" = 200 ] && [ "$(curl -s -o /dev/null -w "%{http_code}" -u "pusher:push PW" "http://$1/v2/")" = 401 ]' _ "$R"

# A cost past the bound (12) stops the start, naming the file and line,
# with nothing served.
kill -TERM "$SRV_PID"
wait "$SRV_PID" || true
cp "$T/htpasswd" "$T/htpasswd13"
htpasswd -bB -C 13 "$T/htpasswd13" slow 'slow pw' 2>/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" serve --store "$dst" --listen 127.0.0.1:0 --allow-push --htpasswd "$T/htpasswd13"
al_check "an htpasswd -B -C 13 line stops the start naming FILE:3" \
	bash -c '[ "$1" != 0 ] && grep -qF "$2:3" "$3" && ! grep -q "^serving on" "$4"' _ "$AL_RC" "$T/htpasswd13" "$T/err" "$T/out"

al_finish
