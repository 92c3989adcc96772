#!/usr/bin/env bash
# test_serve_push.sh: airlock serve --allow-push: skopeo and airlock push fill a store through it (htpasswd and bearer credentials); chunked uploads by the spec; hostile pushes refused with nothing written; SIGTERM mid-upload leaves no blob.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
src=$T/src
dst=$T/dst

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$samples/imageset.yaml" --store "$src"
al_check "the source store is filled from samples/" test "$AL_RC" = 0

# An empty store: the layout files only.
mkdir -p "$dst/blobs/sha256"
printf '{"imageLayoutVersion":"1.0.0"}\n' >"$dst/oci-layout"
printf '{"schemaVersion":2,"manifests":[]}\n' >"$dst/index.json"

# Credentials as Apache's htpasswd writes them: $apr1$ (-m) and $5$ (-2).
if ! command -v htpasswd >/dev/null; then
	al_skip "htpasswd (apache2-utils) is not installed"
fi
htpasswd -cbm "$T/htpasswd" pusher 'push pw' 2>/dev/null
htpasswd -b2 "$T/htpasswd" other 'other pw' 2>/dev/null
TOKEN=tok-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '# push tokens\n%s\n' "$TOKEN" >"$T/tokens"
CREDS=(-u 'pusher:push pw')

# 'airlock serve' on a free port (lib.sh); sets SRV_ADDR and SRV_PID.
srv_start() { al_start_serve "$@"; }

# Every file of a store with its digest (the lock and the journal aside).
store_state() {
	(cd "$1" && find . -type f ! -path './airlock/lock' ! -path './airlock/index.journal' -print0 | sort -z | xargs -0 -r sha256sum)
}

al_check_fails "--allow-push without credentials is a usage error" 2 \
	"$AIRLOCK" serve --store "$dst" --listen 127.0.0.1:0 --allow-push
printf 'pusher:$apr1$IUqMIBhg$FHv6hfzs8q.gjDpTQEGyd/\neve:$2x$05$jT3FrvQUt/EHhKpz4g214OHSSHtZmFB8yYfG8h3oeimSum2VNXenC\n' >"$T/bcrypt"
al_run "$T/out" "$T/err" "$AIRLOCK" serve --store "$dst" --listen 127.0.0.1:0 --allow-push --htpasswd "$T/bcrypt"
al_check "an unsupported htpasswd line (\$2x\$) stops the start (exit 3) naming FILE:LINE" \
	bash -c '[ "$1" = 3 ] && grep -qF "$2:2" "$3"' _ "$AL_RC" "$T/bcrypt" "$T/err"

srv_start --store "$dst" --allow-push --htpasswd "$T/htpasswd" --token-file "$T/tokens" \
	--max-blob-size 4000000 --max-uploads 4 --access-log "$T/access.log"
A=$SRV_ADDR
PUSH_PID=$SRV_PID
U=http://$A
code() { curl -s --path-as-is -o /dev/null -w '%{http_code}' "$@"; }
# The value of header $1 in the answer to curl "$@" (without the body).
hdr() {
	local h=$1
	shift
	curl -s --path-as-is -o /dev/null -D - "$@" | tr -d '\r' | sed -n "s/^$h: //Ip" | head -n 1
}

store_state "$dst" >"$T/state.before"

# ---- hostile pushes: nothing written ----
blobf=$T/blob.bin
head -c 300 /dev/urandom >"$blobf"
bd=sha256:$(sha256sum "$blobf" | cut -d' ' -f1)
al_check "an unauthenticated POST is 401" test "$(code -X POST "$U/v2/x/y/blobs/uploads/")" = 401
al_check "the 401 challenges Basic (one challenge, with an htpasswd file)" \
	bash -c 'h=$(curl -s -D - -o /dev/null -X POST "$1/v2/x/blobs/uploads/"); grep -qi "^WWW-Authenticate: Basic realm=" <<<"$h" && ! grep -qi "^WWW-Authenticate: Bearer" <<<"$h"' _ "$U"
al_check "the API check without credentials is 401 too (clients learn the challenge there)" test "$(code "$U/v2/")" = 401
al_check "with credentials it is 200" test "$(code "${CREDS[@]}" "$U/v2/")" = 200
al_check "a wrong password is 401" test "$(code -u 'pusher:nope' -X POST "$U/v2/x/blobs/uploads/")" = 401
oloc=$(hdr Location -u 'other:other pw' -X POST "$U/v2/x/blobs/uploads/")
al_check "the \$5\$ user (htpasswd -2) opens a session" bash -c '[[ "$1" == /v2/x/blobs/uploads/* ]] && grep -q "^other:[\$]5[\$]" "$2"' _ "$oloc" "$T/htpasswd"
al_check "and ends it" test "$(code -u 'other:other pw' -X DELETE "$U$oloc")" = 204
al_check "an unknown user is 401" test "$(code -u 'nobody:push pw' -X POST "$U/v2/x/blobs/uploads/")" = 401
al_check "a wrong bearer token is 401" test "$(code -H "Authorization: Bearer ${TOKEN}x" -X POST "$U/v2/x/blobs/uploads/")" = 401
al_check "an unauthenticated monolithic upload is 401" \
	test "$(code -X POST --data-binary @"$blobf" "$U/v2/x/blobs/uploads/?digest=$bd")" = 401
al_check "an unauthenticated manifest PUT is 401" \
	test "$(code -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary '{}' "$U/v2/x/manifests/evil")" = 401
for n in "..%2f..%2fx" "a/../b" "a/./b" "A/b" "a//b" "-a" "a_" "%2e%2e"; do
	c=$(code "${CREDS[@]}" -X POST "$U/v2/$n/blobs/uploads/")
	al_check "a push to the name '$n' is refused ($c)" bash -c '[ "$1" = 400 ] || [ "$1" = 404 ] || [ "$1" = 405 ]' _ "$c"
done
c=$(code "${CREDS[@]}" -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary '{}' "$U/v2/x/manifests/..%2f..%2findex.json")
al_check "a manifest PUT to a tag with path tricks is refused ($c)" bash -c '[ "$1" = 400 ] || [ "$1" = 404 ]' _ "$c"
al_check "a monolithic upload with a wrong digest is 400" \
	test "$(code "${CREDS[@]}" -X POST --data-binary @"$blobf" "$U/v2/x/blobs/uploads/?digest=sha256:$(printf '%064d' 0)")" = 400
al_check "a digest other than sha256 is 400" \
	test "$(code "${CREDS[@]}" -X POST --data-binary @"$blobf" "$U/v2/x/blobs/uploads/?digest=sha512:$(printf '%0128d' 0)")" = 400
head -c 4000001 /dev/zero >"$T/big"
al_check "an upload past --max-blob-size is 413 before its body" \
	test "$(code "${CREDS[@]}" -X POST --data-binary @"$T/big" "$U/v2/x/blobs/uploads/?digest=sha256:$(sha256sum "$T/big" | cut -d' ' -f1)")" = 413
loc=$(hdr Location "${CREDS[@]}" -X POST "$U/v2/x/blobs/uploads/")
al_check "a PATCH with a malformed Content-Range is 416" \
	test "$(code "${CREDS[@]}" -X PATCH -H 'Content-Range: 5-abc' --data-binary @"$blobf" "$U$loc")" = 416
al_check "a PATCH that does not start at the session's offset is 416" \
	test "$(code "${CREDS[@]}" -X PATCH -H 'Content-Range: 10-309' --data-binary @"$blobf" "$U$loc")" = 416
al_check "a PATCH whose Content-Range disagrees with its length is 416" \
	test "$(code "${CREDS[@]}" -X PATCH -H 'Content-Range: 0-9' --data-binary @"$blobf" "$U$loc")" = 416
al_check "another user's session under another name is 404" \
	test "$(code "${CREDS[@]}" -X PATCH --data-binary @"$blobf" "$U/v2/other/blobs/uploads/${loc##*/}")" = 404
al_check "a session id with path tricks is 404" \
	test "$(code "${CREDS[@]}" -X PATCH --data-binary @"$blobf" "$U/v2/x/blobs/uploads/..%2f..%2findex.json")" = 404
al_check "the upload with the wrong digest at PUT is 400" \
	test "$(code "${CREDS[@]}" -X PUT --data-binary @"$blobf" "$U$loc?digest=sha256:$(printf '%064d' 1)")" = 400
al_check "the session is gone after a failed PUT (404)" test "$(code "${CREDS[@]}" "$U$loc")" = 404
cfg=$(printf '{"architecture":"amd64","os":"linux"}' | tee "$T/cfg.json" | sha256sum | cut -d' ' -f1)
python3 - "$bd" "$cfg" >"$T/man-missing.json" <<'EOF'
import json, sys
print(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + sys.argv[2], "size": 37},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": sys.argv[1], "size": 300}]},
    separators=(",", ":")), end="")
EOF
al_check "a manifest naming blobs the store lacks is 400" \
	test "$(code "${CREDS[@]}" -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary @"$T/man-missing.json" "$U/v2/x/manifests/v1")" = 400
al_check "a manifest PUT by a digest it does not have is 400" \
	test "$(code "${CREDS[@]}" -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary @"$T/man-missing.json" "$U/v2/x/manifests/sha256:$(printf '%064d' 2)")" = 400
al_check "a manifest that is not JSON is 400" \
	test "$(code "${CREDS[@]}" -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary 'not json' "$U/v2/x/manifests/v1")" = 400
head -c 4200000 /dev/zero | tr '\0' ' ' >"$T/bigman"
al_check "a manifest past 4 MiB is 413" \
	test "$(code "${CREDS[@]}" -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary @"$T/bigman" "$U/v2/x/manifests/v1")" = 413
al_check "DELETE of a manifest is refused (405)" test "$(code "${CREDS[@]}" -X DELETE "$U/v2/x/manifests/v1")" = 405
for i in 1 2 3 4; do
	hdr Location "${CREDS[@]}" -X POST "$U/v2/x/blobs/uploads/" >>"$T/sessions"
done
al_check "a session past --max-uploads is 429" test "$(code "${CREDS[@]}" -X POST "$U/v2/x/blobs/uploads/")" = 429
bad=0
while read -r l; do
	[ "$(code "${CREDS[@]}" -X DELETE "$U$l")" = 204 ] || bad=$((bad + 1))
done <"$T/sessions"
al_check "DELETE ends the sessions (204)" test "$bad" = 0
DELETE_LOC=$(head -n 1 "$T/sessions")
al_check "a deleted session is 404" test "$(code "${CREDS[@]}" "$U$DELETE_LOC")" = 404
al_check "nothing was written to the store by the refused pushes" diff "$T/state.before" <(store_state "$dst")
al_check "no temporary upload file is left" bash -c '[ -z "$(ls -A "$1/blobs/.tmp" 2>/dev/null)" ]' _ "$dst"

# ---- chunked upload, as the distribution spec describes it ----
loc=$(hdr Location "${CREDS[@]}" -X POST "$U/v2/x/blobs/uploads/")
al_check "POST opens a session: a Location under the repository" bash -c '[[ "$1" == /v2/x/blobs/uploads/* ]]' _ "$loc"
head -c 100 "$blobf" >"$T/c1"
tail -c +101 "$blobf" | head -c 100 >"$T/c2"
tail -c +201 "$blobf" >"$T/c3"
r=$(hdr Range "${CREDS[@]}" -X PATCH -H 'Content-Type: application/octet-stream' -H 'Content-Range: 0-99' --data-binary @"$T/c1" "$U$loc")
al_check "PATCH 0-99 answers Range 0-99" test "$r" = 0-99
al_check "the second chunk, out of order, is 416 with Range 0-99" \
	bash -c 'h=$(curl -s -D - -o /dev/null "${@:3}" -X PATCH -H "Content-Range: 150-249" --data-binary @"$1" "$2" | tr -d "\r"); grep -q "^HTTP/1.1 416" <<<"$h" && grep -qi "^Range: 0-99$" <<<"$h"' _ "$T/c2" "$U$loc" "${CREDS[@]}"
r=$(hdr Range "${CREDS[@]}" -X PATCH -H 'Content-Range: bytes 100-199' --data-binary @"$T/c2" "$U$loc")
al_check "PATCH 100-199 answers Range 0-199" test "$r" = 0-199
al_check "GET of the session: 204 with Range 0-199 and Docker-Upload-UUID" \
	bash -c 'h=$(curl -s -D - -o /dev/null "${@:2}" "$1" | tr -d "\r"); grep -q "^HTTP/1.1 204" <<<"$h" && grep -qi "^Range: 0-199$" <<<"$h" && grep -qi "^Docker-Upload-UUID: [0-9a-f]\{32\}$" <<<"$h"' _ "$U$loc" "${CREDS[@]}"
al_check "PUT with the last chunk and the digest is 201" \
	test "$(code "${CREDS[@]}" -X PUT -H 'Content-Range: 200-299' --data-binary @"$T/c3" "$U$loc?digest=$bd")" = 201
al_check "the chunked blob is in the store, byte for byte" cmp -s "$blobf" "$dst/blobs/sha256/${bd#sha256:}"
al_check "and served" cmp -s "$blobf" <(curl -s "$U/v2/x/blobs/$bd")
al_check "a monolithic POST of the config is 201" \
	test "$(code "${CREDS[@]}" -X POST -H 'Content-Type: application/octet-stream' --data-binary @"$T/cfg.json" "$U/v2/x/blobs/uploads/?digest=sha256:$cfg")" = 201
al_check "a mount of a blob the store has is 201" \
	test "$(code "${CREDS[@]}" -X POST "$U/v2/y/blobs/uploads/?mount=$bd&from=x")" = 201
mloc=$(hdr Location "${CREDS[@]}" -X POST "$U/v2/y/blobs/uploads/?mount=sha256:$(printf '%064d' 3)&from=x")
al_check "a mount of an unknown blob opens an upload instead (202, Location)" bash -c '[[ "$1" == /v2/y/blobs/uploads/* ]]' _ "$mloc"
code "${CREDS[@]}" -X DELETE "$U$mloc" >/dev/null
md=sha256:$(sha256sum "$T/man-missing.json" | cut -d' ' -f1)
al_check "the manifest, its blobs now there, PUT by tag with a bearer token: 201" \
	bash -c '[ "$(curl -s -o /dev/null -D "$4" -w "%{http_code}" -H "Authorization: Bearer $1" -X PUT -H "Content-Type: application/vnd.oci.image.manifest.v1+json" --data-binary @"$2" "$3")" = 201 ]' \
	_ "$TOKEN" "$T/man-missing.json" "$U/v2/x/manifests/v1" "$T/put.hdr"
al_check "its answer names the digest" grep -qi "^Docker-Content-Digest: $md" "$T/put.hdr"
al_check "the pushed tag is served at once, the same bytes" cmp -s "$T/man-missing.json" <(curl -s "$U/v2/x/manifests/v1")
al_check "index.json names it under the push mapping (localhost/x:v1)" \
	test "$(al_digest_of "$dst" localhost/x:v1)" = "$md"
al_check "PUT by digest is 201" \
	test "$(code "${CREDS[@]}" -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary @"$T/man-missing.json" "$U/v2/y/manifests/$md")" = 201
al_check "and served by digest under that repository" test "$(code "$U/v2/y/manifests/$md")" = 200
al_check "a Content-Type with parameters is taken (201)" \
	test "$(code "${CREDS[@]}" -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json; charset=utf-8' --data-binary @"$T/man-missing.json" "$U/v2/y/manifests/v2")" = 201
al_check "a Content-Type of another manifest type than the body's is 400" \
	test "$(code "${CREDS[@]}" -X PUT -H 'Content-Type: application/vnd.oci.image.index.v1+json' --data-binary @"$T/man-missing.json" "$U/v2/y/manifests/v3")" = 400
# An artifact whose subject is that manifest (a cosign signature or
# sigstore bundle pushed the OCI 1.1 way): OCI-Subject, then referrers.
printf '{}' >"$T/empty.json"
code "${CREDS[@]}" -X POST --data-binary @"$T/empty.json" "$U/v2/x/blobs/uploads/?digest=sha256:$(sha256sum "$T/empty.json" | cut -d' ' -f1)" >/dev/null
python3 - "$md" "$(stat -c %s "$T/man-missing.json")" "sha256:$(sha256sum "$T/empty.json" | cut -d' ' -f1)" >"$T/art.json" <<'EOF'
import json, sys
e = {"mediaType": "application/vnd.oci.empty.v1+json", "digest": sys.argv[3], "size": 2}
print(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "artifactType": "application/vnd.dev.sigstore.bundle.v0.3+json", "config": e, "layers": [e],
    "subject": {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": sys.argv[1], "size": int(sys.argv[2])}},
    separators=(",", ":")), end="")
EOF
ad=sha256:$(sha256sum "$T/art.json" | cut -d' ' -f1)
al_check "an artifact with a subject, PUT by digest: 201 with OCI-Subject" \
	bash -c 'h=$(curl -s -D - -o /dev/null "${@:4}" -X PUT -H "Content-Type: application/vnd.oci.image.manifest.v1+json" --data-binary @"$1" "$2" | tr -d "\r"); grep -q "^HTTP/1.1 201" <<<"$h" && grep -qi "^OCI-Subject: $3$" <<<"$h"' \
	_ "$T/art.json" "$U/v2/x/manifests/$ad" "$md" "${CREDS[@]}"
al_check "the referrers of the manifest list the pushed artifact" \
	bash -c 'curl -s "$1/v2/x/referrers/$2" | grep -q "$3"' _ "$U" "$md" "$ad"

# ---- real clients ----
python3 - "$T/img" <<'EOF'
import hashlib, json, os, random, sys
d = sys.argv[1]
os.makedirs(d + "/blobs/sha256")
def put(b, mt):
    h = hashlib.sha256(b).hexdigest()
    open("%s/blobs/sha256/%s" % (d, h), "wb").write(b)
    return {"mediaType": mt, "digest": "sha256:" + h, "size": len(b)}
layer = put(os.urandom(3000000), "application/vnd.oci.image.layer.v1.tar")
cfg = put(json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]}}).encode(),
          "application/vnd.oci.image.config.v1+json")
man = put(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": cfg, "layers": [layer]}).encode(),
          "application/vnd.oci.image.manifest.v1+json")
man["annotations"] = {"org.opencontainers.image.ref.name": "v1"}
open(d + "/oci-layout", "w").write('{"imageLayoutVersion":"1.0.0"}')
json.dump({"schemaVersion": 2, "manifests": [man]}, open(d + "/index.json", "w"))
EOF
al_run "$T/out" "$T/err" "${SKOPEO[@]}" copy --dest-tls-verify=false "oci:$T/img:v1" "docker://$A/apps/one:v1"
al_check "skopeo copy without credentials is refused" test "$AL_RC" != 0
al_run "$T/out" "$T/err" "${SKOPEO[@]}" copy --dest-tls-verify=false --dest-creds 'pusher:push pw' "oci:$T/img:v1" "docker://$A/apps/one:v1"
al_check "skopeo copy into the server with --dest-creds" test "$AL_RC" = 0
got=$("${SKOPEO[@]}" inspect --raw --tls-verify=false "docker://$A/apps/one:v1" 2>/dev/null | sha256sum | cut -d' ' -f1)
al_check "skopeo inspect (anonymous) reads back the pushed manifest" \
	test "sha256:$got" = "$("${SKOPEO[@]}" inspect --tls-verify=false --format '{{.Digest}}' "docker://$A/apps/one:v1" 2>/dev/null)"
al_run "$T/out" "$T/err" "${SKOPEO[@]}" copy --src-tls-verify=false "docker://$A/apps/one:v1" "oci:$T/back:v1"
al_check "skopeo copies it back out" test "$AL_RC" = 0
al_check "every blob copied back is byte-identical to the store's" \
	bash -c 'for f in "$1"/blobs/sha256/*; do cmp -s "$f" "$2/blobs/sha256/$(basename "$f")" || exit 1; done' _ "$T/back" "$dst"

# A server with only the token file (another store: the first server holds
# the lock of its own): skopeo's --dest-registry-token.
mkdir -p "$T/dst2/blobs/sha256"
cp "$dst/oci-layout" "$T/dst2/"
printf '{"schemaVersion":2,"manifests":[]}\n' >"$T/dst2/index.json"
srv_start --store "$T/dst2" --allow-push --token-file "$T/tokens"
TA=$SRV_ADDR
al_check "with only a token file the challenge is Bearer" \
	bash -c 'curl -s -D - -o /dev/null "$1/v2/" | grep -qi "^WWW-Authenticate: Bearer realm="' _ "http://$TA"
al_run "$T/out" "$T/err" "${SKOPEO[@]}" copy --dest-tls-verify=false --dest-registry-token "$TOKEN" "oci:$T/img:v1" "docker://$TA/apps/two:v1"
al_check "skopeo copy with a bearer token" test "$AL_RC" = 0
kill -TERM "$SRV_PID"
wait "$SRV_PID" || true

# airlock push of the whole sample store.
printf '{"auths":{"%s":{"auth":"%s"}}}\n' "$A" "$(printf 'pusher:push pw' | base64)" >"$T/auth.json"
al_run "$T/out" "$T/push.err" "$AIRLOCK" push --store "$src" --layout source --tls-verify=false --authfile "$T/auth.json" --no-record "docker://$A"
al_check "airlock push of the sample store into the server" test "$AL_RC" = 0
# The pushed store serves what the source store serves, where it serves it.
srv_start --store "$src"
S=$SRV_ADDR
bad=0
n=0
for repo in $(curl -s "http://$S/v2/_catalog" | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["repositories"]))'); do
	for tag in $(curl -s "http://$S/v2/$repo/tags/list" | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["tags"]))'); do
		n=$((n + 1))
		a=$(hdr Docker-Content-Digest -I "http://$S/v2/$repo/manifests/$tag")
		b=$(hdr Docker-Content-Digest -I "$U/v2/$repo/manifests/$tag")
		[ -n "$a" ] && [ "$a" = "$b" ] || bad=$((bad + 1))
	done
done
al_check "every tag the source serves ($n) is served by the pushed store with its digest" \
	bash -c '[ "$1" -gt 5 ] && [ "$2" = 0 ]' _ "$n" "$bad"
kill -TERM "$SRV_PID"
wait "$SRV_PID" || true

# ---- SIGTERM in the middle of an upload ----
python3 - "$A" "$T/killme" 'pusher:push pw' >"$T/mid" <<'EOF' &
import base64, os, socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
auth = base64.b64encode(sys.argv[3].encode()).decode()
s = socket.create_connection((host, int(port)), timeout=30)
body = os.urandom(3000000)
import hashlib
d = hashlib.sha256(body).hexdigest()
open(sys.argv[2], "w").write(d)
s.sendall(("POST /v2/x/blobs/uploads/?digest=sha256:%s HTTP/1.1\r\nHost: x\r\nAuthorization: Basic %s\r\n"
           "Content-Length: %d\r\n\r\n" % (d, auth, len(body))).encode())
s.sendall(body[:1000000])
print("half", flush=True)
try:
    s.recv(100)
except OSError:
    pass
EOF
MID=$!
AL_PIDS+=("$MID")
for i in $(seq 1 100); do
	grep -q half "$T/mid" 2>/dev/null && [ -n "$(ls -A "$dst/blobs/.tmp" 2>/dev/null)" ] && break
	sleep 0.1
done
al_check "the half-sent upload is being written to a temporary file" bash -c '[ -n "$(ls -A "$1/blobs/.tmp" 2>/dev/null)" ]' _ "$dst"
kill -TERM "$PUSH_PID"
rc=0
wait "$PUSH_PID" || rc=$?
al_check "SIGTERM mid-upload stops the server with status 0" test "$rc" = 0
wait "$MID" 2>/dev/null || true
al_check "no blob of the cut upload was written" test ! -e "$dst/blobs/sha256/$(cat "$T/killme")"
al_check "no temporary file is left" bash -c '[ -z "$(ls -A "$1/blobs/.tmp" 2>/dev/null)" ]' _ "$dst"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$dst"
al_check "airlock check finds the pushed store whole" test "$AL_RC" = 0

# ---- idle expiry, credentials for pulls ----
srv_start --store "$dst" --allow-push --htpasswd "$T/htpasswd" --upload-timeout 1 --max-uploads 1 --auth-pull
P=http://$SRV_ADDR
al_check "--auth-pull: an anonymous manifest GET is 401" test "$(code "$P/v2/x/manifests/v1")" = 401
al_check "--auth-pull: with credentials it is 200" test "$(code "${CREDS[@]}" "$P/v2/x/manifests/v1")" = 200
al_check "--auth-pull: the signature store needs none (404, not 401)" \
	test "$(code "$P/signatures/sha256=$(printf '%064d' 0)/signature-1")" = 404
al_check "one session is open (--max-uploads 1)" test "$(code "${CREDS[@]}" -X POST "$P/v2/x/blobs/uploads/")" = 202
# A refused POST does not touch the open session; once that one idled
# past --upload-timeout it is dropped and a new one can open.
gone=0
for i in $(seq 1 100); do
	if [ "$(code "${CREDS[@]}" -X POST "$P/v2/x/blobs/uploads/")" = 202 ]; then
		gone=1
		break
	fi
	sleep 0.1
done
al_check "an idle session is dropped after --upload-timeout" test "$gone" = 1
kill -TERM "$SRV_PID"
wait "$SRV_PID" || true
al_finish
