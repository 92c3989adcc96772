#!/usr/bin/env bash
# test_serve.sh: airlock serve: the store as a registry (skopeo, airlock copy, curl) and signature store; hostile clients refused, nothing written.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
release=quay.io/airlock-samples/release:4.14.1-x86_64
R=airlock-samples/release
C=airlock-samples/ocp-v4.0-art-dev
store=$T/store

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$samples/imageset.yaml" --store "$store"
al_check "the store is filled from samples/ with no network" test "$AL_RC" = 0
rdigest=$(al_digest_of "$store" "$release")

# 'airlock serve' of $store on a free port (lib.sh); sets SRV_ADDR and
# SRV_PID.
srv_start() { al_start_serve --store "$store" "$@"; }

# Every file of the store with its digest, to see that nothing was written.
store_state() {
	(cd "$store" && find . -type f ! -path './airlock/lock' -print0 | sort -z | xargs -0 sha256sum)
}
store_state >"$T/state.before"

srv_start --access-log "$T/access.log"
A=$SRV_ADDR
U=http://$A

code() { curl -s --path-as-is -o /dev/null -w '%{http_code}' "$@"; }

al_check "GET /v2/ is 200 with the API version header" \
	bash -c 'curl -s -D - -o /dev/null "$1/v2/" | grep -qi "^Docker-Distribution-API-Version: registry/2.0"' _ "$U"
curl -s "$U/v2/_catalog" >"$T/catalog"
al_check "the catalog lists the push names of the store's images" \
	grep -qx '{"repositories":\["airlock-samples/ocp-v4.0-art-dev","airlock-samples/release"\]}' "$T/catalog"
al_check "tags/list of the release repository" \
	grep -qx '{"name":"airlock-samples/release","tags":\["4.14.1-x86_64"\]}' <(curl -s "$U/v2/$R/tags/list")

# Pagination: n=2 pages joined by Link headers give every tag once.
python3 - "$U" "$C" >"$T/pages" <<'EOF'
import json, re, sys, urllib.request
base, repo = sys.argv[1], sys.argv[2]
url, tags, pages = "/v2/%s/tags/list?n=2" % repo, [], 0
while url:
    r = urllib.request.urlopen(base + url)
    body = json.load(r)
    assert len(body["tags"]) <= 2
    tags += body["tags"]
    pages += 1
    m = re.match(r'<([^>]*)>; rel="next"', r.headers.get("Link") or "")
    url = m.group(1) if m else None
print(pages, len(tags), len(set(tags)), tags == sorted(tags))
EOF
al_check "tags/list pages of 2 with Link headers: 3 pages, 6 distinct sorted tags" grep -qx '3 6 6 True' "$T/pages"
al_check "tags/list ?n=abc is 400" test "$(code "$U/v2/$C/tags/list?n=abc")" = 400

got=$("${SKOPEO[@]}" inspect --tls-verify=false --format '{{.Digest}}' "docker://$A/$R:4.14.1-x86_64" 2>&1 || true)
al_check "skopeo inspect by tag gives the store's digest" test "$got" = "$rdigest"
al_check "HEAD manifest by digest: stored media type and Docker-Content-Digest" \
	bash -c 'h=$(curl -s -I "$1/v2/$2/manifests/$3"); grep -qi "^Docker-Content-Digest: $3" <<<"$h" && grep -qi "^Content-Type: application/vnd.oci.image.manifest.v1+json" <<<"$h"' _ "$U" "$R" "$rdigest"
al_check "the manifest bytes are the stored blob" \
	cmp -s <(curl -s "$U/v2/$R/manifests/$rdigest") "$store/blobs/sha256/${rdigest#sha256:}"

al_run "$T/out" "$T/err" "${SKOPEO[@]}" copy --all --tls-verify=false "docker://$A/$R:4.14.1-x86_64" "oci:$T/copy:r"
al_check "skopeo copy from the server to an OCI layout" test "$AL_RC" = 0
al_check "the copied layout's manifest digest is the store's" test "$(al_digest_of "$T/copy" r)" = "$rdigest"
bad=0
for f in "$T"/copy/blobs/sha256/*; do
	cmp -s "$f" "$store/blobs/sha256/$(basename "$f")" || bad=$((bad + 1))
done
al_check "every copied blob is byte-identical to the store's" test "$bad" = 0

# Every component by digest, as a cluster pulls through the mirror sets.
bad=0
n=0
while read -r name digest; do
	case $name in *@*) ;; *) continue ;; esac
	n=$((n + 1))
	got=$("${SKOPEO[@]}" inspect --raw --tls-verify=false "docker://$A/$C@$digest" 2>/dev/null | sha256sum | cut -d' ' -f1)
	[ "sha256:$got" = "$digest" ] || bad=$((bad + 1))
done < <(al_index_digests "$store")
al_check "every component ($n) by digest, bytes matching the digest" bash -c '[ "$1" -gt 0 ] && [ "$2" = 0 ]' _ "$n" "$bad"

al_run "$T/out" "$T/err" "$AIRLOCK" copy --tls-verify=false "docker://$A/$R:4.14.1-x86_64" "oci:$T/acopy:r"
al_check "airlock copy from the server" test "$AL_RC" = 0
al_check "airlock copy gives the store's digest" test "$(al_digest_of "$T/acopy" r)" = "$rdigest"

# airlock mirror from the server, the signatures from its signature store,
# verified with the sample's key (the path the CVO's HTTP stores take).
cat >"$T/is.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $release
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: docker://$A/airlock-samples
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$T/is.yaml" --store "$T/store2" --tls-verify=false \
	--keyring "$samples/keys/release.gpg" --signature-store "http://$A/signatures"
al_check "airlock mirror from the server with its signature store exits 0" test "$AL_RC" = 0
al_check "the mirrored release is verified through the served signatures" \
	bash -c '"$1" releases --store "$2" | grep -q "^4.14.1 .*verified"' _ "$AIRLOCK" "$T/store2"
al_check "the second store names the same images and digests" al_same_index "$store" "$T/store2"

# podman pulls by digest through a registries.conf mirror pointing here.
if command -v podman >/dev/null; then
	cat >"$T/registries.conf" <<CONF
[[registry]]
prefix = "quay.io/airlock-samples"
location = "quay.io/airlock-samples"
[[registry.mirror]]
location = "$A/airlock-samples"
insecure = true
CONF
	al_run "$T/out" "$T/err" env CONTAINERS_REGISTRIES_CONF="$T/registries.conf" \
		podman --root "$T/pm/root" --runroot "$T/pm/run" --storage-driver vfs \
		pull --signature-policy "$T/policy.json" "quay.io/airlock-samples/release@$rdigest"
	al_check "podman pulls the release by digest through the mirror" test "$AL_RC" = 0
	al_check "the server answered podman's manifest request" \
		grep -q "\"path\":\"/v2/$R/manifests/$rdigest\",\"status\":200" "$T/access.log"
	podman --root "$T/pm/root" --runroot "$T/pm/run" --storage-driver vfs rmi -a -f >/dev/null 2>&1 || true
else
	al_skip_part "podman is not installed"
fi

# The mirror sets written for this address name repositories it serves.
"$AIRLOCK" mirrorsets --layout source --store "$store" --registry "$A" >"$T/ms.yaml"
missing=0
for m in $(sed -n "s|^    - $A/||p" "$T/ms.yaml" | sort -u); do
	[ "$(code "$U/v2/$m/tags/list")" = 200 ] || missing=$((missing + 1))
done
al_check "every mirrorsets --registry mirror is a served repository" \
	bash -c '[ "$1" = 0 ] && grep -q "$2/airlock-samples/release" "$3"' _ "$missing" "$A" "$T/ms.yaml"

# Blobs: ranges.
blob=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["layers"][0]["digest"])' \
	"$store/blobs/sha256/${rdigest#sha256:}")
bfile=$store/blobs/sha256/${blob#sha256:}
al_check "Range bytes=10-19 is 206 with those bytes" \
	bash -c '[ "$(curl -s -o "$4" -w "%{http_code}" -H "Range: bytes=10-19" "$1/v2/$2/blobs/$3")" = 206 ] && cmp -s "$4" <(tail -c +11 "$5" | head -c 10)' \
	_ "$U" "$R" "$blob" "$T/range" "$bfile"
al_check "Range bytes=-5 is the last 5 bytes" \
	bash -c 'curl -s -H "Range: bytes=-5" "$1/v2/$2/blobs/$3" | cmp -s - <(tail -c 5 "$4")' _ "$U" "$R" "$blob" "$bfile"
for r in "bytes=999999999-" "bytes=9-2" "bytes=0-1,4-5" "lines=1-2" "bytes=-"; do
	al_check "bad range '$r' is 416" test "$(code -H "Range: $r" "$U/v2/$R/blobs/$blob")" = 416
done
al_check "HEAD blob: 200 with its length" \
	bash -c 'curl -s -I "$1/v2/$2/blobs/$3" | grep -qi "^Content-Length: $(stat -c %s "$4")"' _ "$U" "$R" "$blob" "$bfile"

# The signature store.
sigdir=$store/signatures/sha256=${rdigest#sha256:}
al_check "the store holds a release signature" test -f "$sigdir/signature-1"
al_check "GET /signatures/sha256=HEX/signature-1 is the stored file" \
	cmp -s <(curl -s "$U/signatures/sha256=${rdigest#sha256:}/signature-1") "$sigdir/signature-1"
al_check "signature-2 (none) is 404" test "$(code "$U/signatures/sha256=${rdigest#sha256:}/signature-2")" = 404
al_check "signature-01 is 404" test "$(code "$U/signatures/sha256=${rdigest#sha256:}/signature-01")" = 404

# Hostile requests: refused, nothing read outside the table.
for p in "/v2/../index.json" "/v2/%2e%2e/%2e%2e/index.json" "/v2/$R/../../../index.json" \
	"/v2/$R/manifests/../../../../etc/passwd" "/v2/$R/blobs/..%2f..%2findex.json" \
	"/v2/nope/manifests/latest" "/v2/$R%2f..%2f/manifests/4.14.1-x86_64" \
	"/signatures/sha256=${rdigest#sha256:}/../../index.json" "/signatures/../index.json" "/index.json" \
	"/v2/$R/manifests/sha256:$(tr a-f A-F <<<"${rdigest#sha256:}")" "/v2/$R/blobs/sha512:00"; do
	c=$(code "$U$p")
	al_check "hostile path '$p' refused ($c)" bash -c '[ "$1" = 404 ] || [ "$1" = 400 ]' _ "$c"
done
al_check "a blob under an unknown repository is 404" test "$(code "$U/v2/nope/blobs/$blob")" = 404
big=$(head -c 40000 /dev/zero | tr '\0' a)
c=$(code -H "X-Big: $big" "$U/v2/" || true)
al_check "a 40 KB header is refused ($c)" bash -c '[ "$1" = 431 ] || [ "$1" = 413 ] || [ "$1" = 000 ]' _ "$c"
for m in PUT POST PATCH DELETE; do
	c=$(code -X "$m" --data-binary @"$bfile" "$U/v2/$R/blobs/uploads/")
	al_check "unauthenticated $m refused ($c)" test "$c" = 405
done
c=$(code -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
	--data-binary @"$store/blobs/sha256/${rdigest#sha256:}" "$U/v2/$R/manifests/evil")
al_check "a manifest PUT is refused ($c)" test "$c" = 405
al_check "the tag of the refused PUT does not exist" test "$(code "$U/v2/$R/manifests/evil")" = 404

# Referrers: an artifact whose subject is the release, added while serving
# (the table follows index.json).
python3 - "$store" "$rdigest" >"$T/art" <<'EOF'
import hashlib, json, os, sys
store, subject = sys.argv[1], sys.argv[2]
def put(b):
    d = hashlib.sha256(b).hexdigest()
    open(os.path.join(store, "blobs", "sha256", d), "wb").write(b)
    return "sha256:" + d, len(b)
cfg, cfgn = put(b"{}")
man = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "artifactType": "application/vnd.dev.sigstore.bundle.v0.3+json",
    "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": cfg, "size": cfgn},
    "layers": [{"mediaType": "application/vnd.oci.empty.v1+json", "digest": cfg, "size": cfgn}],
    "subject": {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": subject, "size": 557}},
    separators=(",", ":")).encode()
md, mn = put(man)
idx = json.load(open(os.path.join(store, "index.json")))
idx["manifests"].append({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md, "size": mn,
    "artifactType": "application/vnd.dev.sigstore.bundle.v0.3+json",
    "annotations": {"org.opencontainers.image.ref.name": "quay.io/airlock-samples/release@" + md}})
tmp = os.path.join(store, "index.json.tmp")
json.dump(idx, open(tmp, "w"))
os.rename(tmp, os.path.join(store, "index.json"))
print(md)
EOF
art=$(cat "$T/art")
found=0
for i in $(seq 1 100); do
	if curl -s "$U/v2/$R/referrers/$rdigest" | grep -q "$art"; then
		found=1
		break
	fi
	sleep 0.1
done
al_check "the referrers index lists the artifact added while serving" test "$found" = 1
al_check "referrers filtered by its artifactType: listed, OCI-Filters-Applied" \
	bash -c 'curl -s -D "$4" "$1/v2/$2/referrers/$3?artifactType=application/vnd.dev.sigstore.bundle.v0.3%2Bjson" | grep -q "$5" && grep -qi "^OCI-Filters-Applied: artifactType" "$4"' \
	_ "$U" "$R" "$rdigest" "$T/hdr" "$art"
al_check "referrers filtered by another artifactType: empty" \
	grep -qx '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":\[\]}' \
	<(curl -s "$U/v2/$R/referrers/$rdigest?artifactType=text/plain")
al_check "the access log has one JSON line per request with its status" \
	python3 -c 'import json,sys
lines=[json.loads(l) for l in open(sys.argv[1])]
assert len(lines) > 50 and all(isinstance(l["status"], int) for l in lines)
assert any(l["status"] == 405 and l["method"] == "PUT" for l in lines)' "$T/access.log"

kill -TERM "$SRV_PID"
rc=0
wait "$SRV_PID" || rc=$?
al_check "SIGTERM stops the server with status 0" test "$rc" = 0
# The test's own artifact (its manifest, the "{}" blob) and index.json aside.
keep() { grep -v -e ' ./index.json$' -e "${art#sha256:}\$" -e ' ./blobs/sha256/44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a$'; }
store_state | keep >"$T/state.after"
al_check "nothing was written to the store by the server" diff <(keep <"$T/state.before") "$T/state.after"

# Slow clients, and connection limits: two servers, so that the idle
# timeout of the first (1 s) never closes the idle connections that the
# second counts (under load that took longer than 1 s, the server closed
# one of them and then served the third).
srv_start --idle-timeout 1
python3 - "$SRV_ADDR" >"$T/limits" <<'EOF2'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
# a client that sends half a request line and then nothing is closed
s = socket.create_connection((host, int(port)), timeout=20)
s.sendall(b"GET /v2/ HTTP/1.1\r\nHost: x\r\n")
print("idle-closed", s.recv(100) == b"")
s.close()
EOF2
kill -TERM "$SRV_PID"
wait "$SRV_PID" || true
srv_start --idle-timeout 600 --per-ip 2
python3 - "$SRV_ADDR" >>"$T/limits" <<'EOF2'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
def conn():
    s = socket.create_connection((host, int(port)), timeout=20)
    return s
# two connections at once from one address are allowed, a third is not
a, b = conn(), conn()
c = conn()
c.settimeout(20)
c.sendall(b"GET /v2/ HTTP/1.1\r\nHost: x\r\n\r\n")
try:
    third = c.recv(100)
except ConnectionResetError:
    third = b""
print("third-refused", not third.startswith(b"HTTP/1.1 200"))
for x in (a, b, c):
    x.close()
EOF2
al_check "a client that stops half way through its headers is disconnected" grep -qx 'idle-closed True' "$T/limits"
al_check "a third connection from one address is refused with --per-ip 2" grep -qx 'third-refused True' "$T/limits"
kill -TERM "$SRV_PID"
wait "$SRV_PID" || true

# TLS with a made CA.
al_run "$T/ca" "$T/err" "$AIRLOCK" serve --make-cert "$T/tls" --host localhost --host 127.0.0.1
al_check "serve --make-cert prints the CA path" test "$(cat "$T/ca")" = "$T/tls/ca.crt"
al_check "the keys are private (0600)" test "$(stat -c %a "$T/tls/server.key" "$T/tls/ca.key" | sort -u)" = 600
al_check "openssl verifies the server certificate against the CA" \
	openssl verify -CAfile "$T/tls/ca.crt" -purpose sslserver "$T/tls/server.crt"
al_check_fails "a second --make-cert refuses to overwrite (exit 3)" 3 "$AIRLOCK" serve --make-cert "$T/tls"
srv_start --tls-cert "$T/tls/server.crt" --tls-key "$T/tls/server.key"
mkdir -p "$T/certs.d"
cp "$T/tls/ca.crt" "$T/certs.d/ca.crt"
got=$("${SKOPEO[@]}" inspect --cert-dir "$T/certs.d" --format '{{.Digest}}' "docker://$SRV_ADDR/$R:4.14.1-x86_64" 2>&1 || true)
al_check "skopeo over TLS trusting the made CA gives the store's digest" test "$got" = "$rdigest"
al_check "curl over TLS with the CA: signature-1" \
	cmp -s <(curl -s --cacert "$T/tls/ca.crt" "https://$SRV_ADDR/signatures/sha256=${rdigest#sha256:}/signature-1") "$sigdir/signature-1"
al_check "curl over TLS without the CA fails" bash -c '! curl -s -o /dev/null "https://$1/v2/"' _ "$SRV_ADDR"
al_check "plain HTTP to the TLS port gets no registry answer" \
	bash -c '[ "$(curl -s -o /dev/null -w "%{http_code}" "http://$1/v2/")" != 200 ]' _ "$SRV_ADDR"
kill -TERM "$SRV_PID"
rc=0
wait "$SRV_PID" || rc=$?
al_check "the TLS server stops on SIGTERM with status 0" test "$rc" = 0

al_check_fails "serve without --listen is a usage error" 2 "$AIRLOCK" serve --store "$store"
al_check_fails "serve on a missing store exits 3" 3 "$AIRLOCK" serve --store "$T/none" --listen 127.0.0.1:0
al_check_fails "--tls-cert without --tls-key is a usage error" 2 \
	"$AIRLOCK" serve --store "$store" --listen 127.0.0.1:0 --tls-cert "$T/tls/server.crt"
al_finish
