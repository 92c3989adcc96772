#!/usr/bin/env bash
# test_cosign_registry.sh: airlock verify-image against a loopback
# al-tier: slow
# docker-registry holding images signed both ways (a cosign
# "sha256-<hex>.sig" tag, and sigstore-bundle referrers in the
# "sha256-<hex>" tag schema, since docker-registry 2.8 has no referrers API),
# with keys, a ClusterImagePolicy, from a store, and the adversarial cases:
# wrong key, unsigned image, a referrer whose subject is another image, a
# signature for another digest. With npm reachable, a keyless bundle made by
# sigstore-js is a referrer too.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v openssl >/dev/null || exit 77
[ -x "${AL_REGISTRY_BIN:-/usr/bin/docker-registry}" ] || exit 77

PUSH=(python3 "$AL_TOOLS/cosign_push.py")
al_start_registry "$T/reg"
R=$REG_ADDR
cd "$T"
for k in k other; do
	openssl ecparam -name prime256v1 -genkey -noout -out $k.key 2>/dev/null
	openssl pkey -in $k.key -pubout -out $k.pub
done
VI=("$AIRLOCK" verify-image --tls-verify=false)

D=$("${PUSH[@]}" image "$R" ex/app v1)
U=$("${PUSH[@]}" image "$R" ex/unsigned v1)
W=$("${PUSH[@]}" image "$R" ex/wrong v1)
"${PUSH[@]}" sig "$R" ex/app "$D" k.key "$R/ex/app" >/dev/null
"${PUSH[@]}" referrers "$R" ex/app "$D" k.key "$R/ex/app" >/dev/null
# ex/wrong's .sig names ex/app's digest (a signature moved to another image)
"${PUSH[@]}" sig "$R" ex/wrong "$D" k.key "$R/ex/wrong" >/dev/null
curl -sf -H "Accept: application/vnd.oci.image.manifest.v1+json" \
	-o moved.json "http://$R/v2/ex/wrong/manifests/sha256-${D#sha256:}.sig"
curl -sf -X PUT -H "Content-Type: application/vnd.oci.image.manifest.v1+json" \
	--data-binary @moved.json "http://$R/v2/ex/wrong/manifests/sha256-${W#sha256:}.sig" >/dev/null

al_run out err "${VI[@]}" --key k.pub "docker://$R/ex/app:v1"
al_check "a cosign tag signature verifies (tag resolved to its digest)" \
	grep -q "^$R/ex/app@$D: verified (signature 1, cosign tag, key " out
al_check "exit 0 when verified" [ "$AL_RC" = 0 ]
al_check "the referrer for another image is left out, and said" \
	grep -q "referrer(s) left out: referrer .* names subject sha256:0000" err
al_run out err "${VI[@]}" --attachments referrers --key k.pub "docker://$R/ex/app@$D"
al_check "a sigstore bundle referrer (tag schema) verifies" \
	grep -q "verified (signature 1, bundle, key " out
al_run out err "${VI[@]}" --attachments sig --key other.pub "docker://$R/ex/app@$D"
al_check "wrong key: exit 1" [ "$AL_RC" = 1 ]
al_check "wrong key: the reason" grep -q "does not verify with any of the 1 trusted keys" err
al_run out err "${VI[@]}" --key k.pub "docker://$R/ex/unsigned:v1"
al_check "unsigned image: exit 1, no signature found" \
	sh -c "[ $AL_RC = 1 ] && grep -q 'no sigstore signature found' err"
al_run out err "${VI[@]}" --key k.pub "docker://$R/ex/wrong:v1"
al_check "a signature for another digest: exit 1" [ "$AL_RC" = 1 ]
al_check "a signature for another digest: digest mismatch" grep -q "digest mismatch" err || cat out err
al_run out err "${VI[@]}" --identity exact --key k.pub "docker://$R/ex/app:v1"
al_check "identity exact refuses cosign's name-only identity for a digest" [ "$AL_RC" = 1 ]

# the policy resources for the mirror, and the image checked against them
al_check "--write-config writes registries.d and the policy" \
	"$AIRLOCK" verify-image --write-config cfg --mirror "$R/ex" --key k.pub
al_check "registries.d turns on sigstore attachments for the mirror" \
	grep -qx "    use-sigstore-attachments: true" cfg/registries.d/airlock-sigstore.yaml
al_check "registries.d names the mirror" grep -qx "  $R/ex:" cfg/registries.d/airlock-sigstore.yaml
al_run out err "${VI[@]}" --policy cfg/clusterimagepolicy.yaml "docker://$R/ex/app:v1"
al_check "the written ClusterImagePolicy accepts the signed image" \
	grep -q "accepted by ClusterImagePolicy/airlock-sigstore (scope $R/ex)" out
al_run out err "${VI[@]}" --policy cfg/clusterimagepolicy.yaml "docker://$R/ex/unsigned:v1"
al_check "the policy refuses the unsigned image (exit 1)" \
	sh -c "[ $AL_RC = 1 ] && grep -q 'refused by ClusterImagePolicy/airlock-sigstore' err"
"$AIRLOCK" verify-image --write-config cfg2 --mirror "$R/ex" --key other.pub >/dev/null
al_run out err "${VI[@]}" --policy cfg2/clusterimagepolicy.yaml "docker://$R/ex/app:v1"
al_check "a policy with another key refuses the image" [ "$AL_RC" = 1 ]
al_run out err "${VI[@]}" --policy cfg/clusterimagepolicy.yaml "docker://$R/other/app@$D"
al_check "an image outside every scope is not checked" grep -q "no policy scope covers it" out
printf 'apiVersion: config.openshift.io/v1\nkind: ClusterImagePolicy\nmetadata: {name: x}\nspec:\n  scopes: [a.io]\n  policy:\n    rootOfTrust: {policyType: PublicKey}\n' >bad.yaml
al_check_fails "a malformed policy is a usage error" 2 "${VI[@]}" --policy bad.yaml "docker://$R/ex/app:v1"

# the same from a store (images copied with airlock copy, .sig by its tag)
"$AIRLOCK" copy -q --tls-verify=false "docker://$R/ex/app:v1" "oci:$T/store" >/dev/null
"$AIRLOCK" copy -q --tls-verify=false "docker://$R/ex/app:sha256-${D#sha256:}.sig" "oci:$T/store" >/dev/null
al_run out err "$AIRLOCK" verify-image --store "$T/store" --key k.pub "$R/ex/app:v1"
al_check "verify-image --store finds the .sig in the store" grep -q "verified (signature 1, cosign tag" out
al_run out err "$AIRLOCK" verify-image --store "$T/store" --key other.pub "$R/ex/app:v1"
al_check "verify-image --store with another key: exit 1" [ "$AL_RC" = 1 ]

# carry with the image: store -> carry from the source -> push -> verify at the mirror
"$AIRLOCK" copy -q --tls-verify=false "docker://$R/ex/app:v1" "oci:$T/m" >/dev/null
al_run out err "$AIRLOCK" verify-image --carry --store "$T/m" --tls-verify=false
al_check "carry copies the .sig and the referrer (the foreign one left out)" \
	grep -q "carried 2 signature artifact(s) of 1 image(s), 1 referrers index(es)" out
al_check "carry said it left the foreign referrer out" grep -q "1 referrer(s) left out" err
al_check "the store names the .sig by its tag" grep -q "$R/ex/app:sha256-${D#sha256:}.sig" "$T/m/index.json"
al_check "the store names the referrers index" grep -q "\"$R/ex/app:sha256-${D#sha256:}\"" "$T/m/index.json"
al_run out err "$AIRLOCK" verify-image --carry --store "$T/m" --tls-verify=false
al_check "a second carry finds the same, adds nothing new" \
	grep -q "carried 2 signature artifact(s) of 1 image(s)" out
al_check "airlock check accepts the store with its attachments" "$AIRLOCK" check --store "$T/m"
al_check "airlock check --gc keeps them" "$AIRLOCK" check -q --gc --store "$T/m"
al_run out err "$AIRLOCK" verify-image --store "$T/m" --attachments referrers --key k.pub "$R/ex/app:v1"
al_check "the referrers survive gc (children of their index)" grep -q "verified (signature 1, bundle" out
al_check "push the store to the mirror" "$AIRLOCK" push --layout source -q --store "$T/m" --tls-verify=false "docker://$R/mirror"
hd() { curl -sfI -H "Accept: application/vnd.oci.image.manifest.v1+json" "http://$R/v2/$1/manifests/$2" | tr -d '\r' | sed -n 's/^Docker-Content-Digest: //Ip'; }
al_check "the pushed .sig keeps its digest" \
	[ "$(hd ex/app "sha256-${D#sha256:}.sig")" = "$(hd mirror/ex/app "sha256-${D#sha256:}.sig")" ]
al_run out err "${VI[@]}" --identity ignore --attachments sig --key k.pub "docker://$R/mirror/ex/app:v1"
al_check "the pushed .sig verifies at the mirror, naming the mirrored digest" \
	grep -q "^$R/mirror/ex/app@$D: verified (signature 1, cosign tag" out
al_run out err "${VI[@]}" --identity ignore --attachments referrers --key k.pub "docker://$R/mirror/ex/app:v1"
al_check "the pushed referrer verifies at the mirror (referrers tag schema)" \
	grep -q "verified (signature 1, bundle" out
KD=$(base64 -w0 k.pub)
cat >remap.yaml <<YAML
apiVersion: config.openshift.io/v1
kind: ClusterImagePolicy
metadata: {name: mirror}
spec:
  scopes: [$R/mirror]
  policy:
    rootOfTrust: {policyType: PublicKey, publicKey: {keyData: $KD}}
    signedIdentity:
      matchPolicy: RemapIdentity
      remapIdentity: {prefix: $R/mirror, signedPrefix: $R}
YAML
al_run out err "${VI[@]}" --policy remap.yaml "docker://$R/mirror/ex/app:v1"
# RemapIdentity matches as MatchRepoDigestOrExact after the remap, which
# refuses a name-only identity (containers/image), and cosign writes those
al_check "RemapIdentity refuses cosign's name-only identity, as the cluster does" \
	sh -c "[ $AL_RC = 1 ] && grep -q 'identity mismatch: the signature names .$R/ex/app.' err"

# pack and unpack carry the attachments with the images (they are store images)
# signed and imported with --trust: push leaves out what an untrusted
# import named (docs/security.md "Marks of untrusted imports")
"$AIRLOCK" keygen -o "$T/packkey" >/dev/null
al_check "pack the store with its attachments" "$AIRLOCK" pack -q --store "$T/m" -o "$T/vol" --sign "$T/packkey.key"
al_check "unpack it on the other side" "$AIRLOCK" unpack --trust "$T/packkey.pub" -q "$T/vol" --store "$T/far"
al_run out err "$AIRLOCK" verify-image --store "$T/far" --key k.pub "$R/ex/app:v1"
al_check "the unpacked store still verifies by its .sig" grep -q "verified (signature 1, cosign tag" out
al_run out err "$AIRLOCK" verify-image --store "$T/far" --attachments referrers --key k.pub "$R/ex/app:v1"
al_check "the unpacked store still verifies by its referrer" grep -q "verified (signature 1, bundle" out

# airlock mirror carries sigstore signatures by default (docs/cosign.md)
REFS=$("${PUSH[@]}" referrers "$R" ex/app "$D" k.key "$R/ex/app")
FOREIGN=$(printf '%s\n' "$REFS" | tail -n 1)
al_run out err "$AIRLOCK" mirror --layout source --keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --store "$T/ms" --tls-verify=false \
	--image "docker://$R/ex/app:v1" --image "docker://$R/ex/unsigned:v1"
al_check "mirror (sigstore by default): exit 0" [ "$AL_RC" = 0 ]
al_check "mirror carried the attachments by default; the unsigned image is counted, not an error" \
	grep -q "sigstore: carried 2 signature artifact(s) of 2 image(s), 1 without any signature" err
al_check "mirror: the .sig is in the store" grep -q "$R/ex/app:sha256-${D#sha256:}.sig" "$T/ms/index.json"
al_check "mirror: the referrers index is in the store" grep -q "\"$R/ex/app:sha256-${D#sha256:}\"" "$T/ms/index.json"
al_check "mirror said it left the foreign referrer out" grep -q "1 referrer(s) left out: their subject is another image" err
al_check "the referrer whose subject is another image is not carried (not in the store)" \
	sh -c "! grep -rqs '${FOREIGN#sha256:}' '$T/ms/index.json' && [ ! -e '$T/ms/blobs/sha256/${FOREIGN#sha256:}' ]"
al_check "the store's referrers index lists only referrers of this image" python3 -c '
import json, sys
store, name, d = sys.argv[1:4]
idx = json.load(open(store + "/index.json"))
(e,) = [m for m in idx["manifests"] if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == name]
ri = json.load(open(store + "/blobs/sha256/" + e["digest"][7:]))
assert ri["manifests"], ri
for c in ri["manifests"]:
    m = json.load(open(store + "/blobs/sha256/" + c["digest"][7:]))
    assert m["subject"]["digest"] == d, (c, m["subject"])
' "$T/ms" "$R/ex/app:sha256-${D#sha256:}" "$D"
al_run out err "$AIRLOCK" mirror --layout source --keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --store "$T/ms" --tls-verify=false \
	--sigstore --image "docker://$R/ex/app:v1"
al_check "--sigstore is still accepted (the default)" sh -c "[ $AL_RC = 0 ] && grep -q 'sigstore: carried 2 signature' err"
al_run out err "$AIRLOCK" mirror --layout source --keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --store "$T/mn" --tls-verify=false \
	--no-sigstore --image "docker://$R/ex/app:v1"
al_check "mirror --no-sigstore: exit 0, nothing carried" \
	sh -c "[ $AL_RC = 0 ] && ! grep -q 'sigstore:' err && ! grep -q 'sha256-' '$T/mn/index.json'"
al_check_fails "--no-sigstore with --sigstore-policy is a usage error" 2 "$AIRLOCK" mirror --layout source \
	--keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --store "$T/mn" --no-sigstore \
	--sigstore-policy cfg/clusterimagepolicy.yaml --image "docker://$R/ex/app:v1"
al_check_fails "--sigstore-attachments with an unknown word is a usage error" 2 "$AIRLOCK" mirror --layout source \
	--store "$T/mn" --sigstore-attachments sig,nope --image "docker://$R/ex/app:v1"
al_check_fails "a malformed --sigstore-policy is a usage error before anything is fetched" 2 "$AIRLOCK" mirror --layout source \
	--keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --store "$T/mbad" --tls-verify=false \
	--sigstore-policy bad.yaml --image "docker://$R/ex/app:v1"
al_check "the malformed policy left no store behind" [ ! -e "$T/mbad" ]
al_run out err "$AIRLOCK" mirror --layout source --keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --store "$T/mo" --tls-verify=false \
	--sigstore-attachments sig --image "docker://$R/ex/app:v1"
al_check "--sigstore-attachments sig: only the .sig" \
	sh -c "grep -q 'sigstore: carried 1 signature artifact(s) of 1 image(s), 0 without' err && ! grep -q '\"$R/ex/app:sha256-${D#sha256:}\"' '$T/mo/index.json'"
# mirror -> push -> the registry serves what a cluster looks up, digests kept
al_check "push the mirrored store" "$AIRLOCK" push --layout source -q --store "$T/ms" --tls-verify=false "docker://$R/m2"
al_check "at the mirror, tag sha256-<hex>.sig names the mirrored manifest's digest" python3 -c '
import json, sys, urllib.request
reg, repo, d = sys.argv[1:4]
def get(ref, accept):
    r = urllib.request.Request("http://%s/v2/%s/manifests/%s" % (reg, repo, ref), headers={"Accept": accept})
    with urllib.request.urlopen(r) as resp:
        return resp.headers.get("Docker-Content-Digest"), resp.read()
have, _ = get("v1", "application/vnd.oci.image.manifest.v1+json")
assert have == d, (have, d)
_, sig = get(d.replace(":", "-") + ".sig", "application/vnd.oci.image.manifest.v1+json")
layer = json.loads(sig)["layers"][0]["digest"]
with urllib.request.urlopen("http://%s/v2/%s/blobs/%s" % (reg, repo, layer)) as resp:
    p = json.loads(resp.read())
assert p["critical"]["image"]["docker-manifest-digest"] == d, p
' "$R" m2/ex/app "$D"
al_check "at the mirror, every referrer in the sha256-<hex> index has the mirrored digest as subject" python3 -c '
import json, sys, urllib.request
reg, repo, d = sys.argv[1:4]
def get(ref, accept):
    r = urllib.request.Request("http://%s/v2/%s/manifests/%s" % (reg, repo, ref), headers={"Accept": accept})
    with urllib.request.urlopen(r) as resp:
        return json.loads(resp.read())
idx = get(d.replace(":", "-"), "application/vnd.oci.image.index.v1+json")
assert len(idx["manifests"]) == 1, idx
for c in idx["manifests"]:
    m = get(c["digest"], c["mediaType"])
    assert m["subject"]["digest"] == d, m
' "$R" m2/ex/app "$D"
al_run out err "${VI[@]}" --identity ignore --key k.pub "docker://$R/m2/ex/app:v1"
al_check "what mirror+push put at the mirror verifies there" grep -q "^$R/m2/ex/app@$D: verified" out
# skopeo (containers/image) as the reader of what push put there: a
# sigstoreSigned policy with the key, sigstore attachments on. Debian's
# skopeo 1.9.3 finds and fetches the attachment, then refuses with
# "Debian-local change: sigstore disabled": then only its lookup is checked
# (it found airlock's .sig at the tag and fetched its layer by digest).
if command -v skopeo >/dev/null; then
	printf '{"default":[{"type":"reject"}],"transports":{"docker":{"%s/m2":[{"type":"sigstoreSigned","keyPath":"%s","signedIdentity":{"type":"remapIdentity","prefix":"%s/m2","signedPrefix":"%s"}}]},"oci":{"":[{"type":"insecureAcceptAnything"}]}}}\n' \
		"$R" "$T/k.pub" "$R" "$R" >sk-policy.json
	mkdir -p sk-rd
	printf 'docker:\n  %s/m2:\n    use-sigstore-attachments: true\n' "$R" >sk-rd/m2.yaml
	al_run out err skopeo --debug --policy sk-policy.json --registries.d sk-rd copy --src-tls-verify=false \
		"docker://$R/m2/ex/app:v1" "oci:$T/sk-out:x"
	if [ "$AL_RC" = 0 ]; then
		al_check "skopeo with a sigstoreSigned policy accepts what airlock pushed" true
	elif grep -q "Debian-local change: sigstore disabled" err; then
		al_check "skopeo (sigstore disabled in this build) finds airlock's .sig at the mirror and fetches its layer" \
			sh -c "grep -q 'Looking for sigstore attachments in $R/m2/ex/app:sha256-${D#sha256:}.sig' err &&
				grep -q 'Found a sigstore attachment manifest with 1 layers' err &&
				grep -q 'Fetching sigstore attachment 1/1' err"
		echo "note: skopeo $(skopeo --version | cut -d' ' -f3) cannot verify sigstore signatures here (Debian-local change)"
	else
		al_check "skopeo with a sigstoreSigned policy accepts what airlock pushed" false
		tail -n 5 err
	fi
fi
al_run out err "$AIRLOCK" mirror --layout source --keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --store "$T/ms2" --tls-verify=false \
	--sigstore-policy cfg/clusterimagepolicy.yaml --image "docker://$R/ex/app:v1"
al_check "mirror --sigstore-policy accepts the signed image" \
	sh -c "[ $AL_RC = 0 ] && grep -q 'sigstore policy: 1 image(s) accepted, 0 refused' err"
al_run out err "$AIRLOCK" mirror --layout source --keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --store "$T/ms3" --tls-verify=false \
	--sigstore-policy cfg/clusterimagepolicy.yaml --image "docker://$R/ex/app:v1" --image "docker://$R/ex/unsigned:v1"
al_check "mirror --sigstore-policy refuses the unsigned image (exit 1)" [ "$AL_RC" = 1 ]
al_check "mirror --sigstore-policy names the refused image" grep -q "$R/ex/unsigned:v1: .*refused by ClusterImagePolicy/airlock-sigstore" err
al_run out err "$AIRLOCK" mirror --layout source --keyring "$AL_SOURCE_DIR/samples/keys/release.gpg" --store "$T/ms3" --tls-verify=false --allow-unsigned \
	--sigstore-policy cfg/clusterimagepolicy.yaml --image "docker://$R/ex/app:v1" --image "docker://$R/ex/unsigned:v1"
al_check "mirror --sigstore-policy --allow-unsigned: exit 0 with a warning" \
	sh -c "[ $AL_RC = 0 ] && grep -q 'allowed (--allow-unsigned): $R/ex/unsigned:v1' err"
al_check "the verdicts are recorded in STORE/airlock/sigstore.json" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
v = {i["name"]: i["verdict"] for i in d["images"]}
assert d["allowUnsigned"] is True, d
assert v[sys.argv[2] + "/ex/unsigned:v1"] == "allowed", v
assert v[sys.argv[2] + "/ex/app:v1"] == "accepted", v
' "$T/ms3/airlock/sigstore.json" "$R"

# a release: the release image and its components carry their signatures
# too (samples/layout in the registry, read through airlock.sources)
if command -v skopeo >/dev/null; then
	al_push_layout "$AL_SOURCE_DIR/samples/layout" "$R"
	RD=sha256:c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
	CD=sha256:050e3be767709b4e48e2545effd2cf52a5f240a99bcf6c021f91048c0392c9d8
	"${PUSH[@]}" sig "$R" airlock-samples/release "$RD" k.key quay.io/airlock-samples/release >/dev/null
	"${PUSH[@]}" sig "$R" airlock-samples/ocp-v4.0-art-dev "$CD" k.key quay.io/airlock-samples/ocp-v4.0-art-dev >/dev/null
	al_release_imageset "rel.yaml" "docker://$R/airlock-samples"
	al_run out err "$AIRLOCK" mirror --layout source --allow-unsigned --config rel.yaml --store "$T/mr" --tls-verify=false
	al_check "release mirror: exit 0" [ "$AL_RC" = 0 ]
	al_check "release mirror: the release and its 6 components looked up, 2 signed" \
		grep -q "sigstore: carried 2 signature artifact(s) of 7 image(s), 5 without any signature" err
	al_check "release mirror: the release's .sig in the store" \
		grep -q "quay.io/airlock-samples/release:sha256-${RD#sha256:}.sig" "$T/mr/index.json"
	al_check "release mirror: the component's .sig in the store" \
		grep -q "quay.io/airlock-samples/ocp-v4.0-art-dev:sha256-${CD#sha256:}.sig" "$T/mr/index.json"
	al_check "pack, unpack, push the release store" sh -c "
		'$AIRLOCK' pack -q --store '$T/mr' -o '$T/mrvol' --sign '$T/packkey.key' &&
		'$AIRLOCK' unpack --trust '$T/packkey.pub' -q '$T/mrvol' --store '$T/mrfar' &&
		'$AIRLOCK' push --layout source -q --store '$T/mrfar' --tls-verify=false 'docker://$R/far'"
	al_run out err "${VI[@]}" --identity ignore --key k.pub "docker://$R/far/airlock-samples/ocp-v4.0-art-dev@$CD"
	al_check "the component's signature, packed, unpacked and pushed, verifies at the mirror" \
		grep -q "^$R/far/airlock-samples/ocp-v4.0-art-dev@$CD: verified (signature 1, cosign tag" out
	al_run out err "${VI[@]}" --identity ignore --key k.pub "docker://$R/far/airlock-samples/release:4.14.1-x86_64"
	al_check "the release's signature verifies at the mirror, naming the mirrored digest" \
		grep -q "^$R/far/airlock-samples/release@$RD: verified (signature 1, cosign tag" out
else
	echo "skip: no skopeo to seed the registry, release case not run"
fi

# a registry that answers the referrers path with 405 (some do) is one
# without the referrers API: fall back, do not fail
cat >stub.py <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/v2/":
            self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
        elif "/referrers/" in self.path:
            self.send_response(405); self.send_header("Content-Length", "0"); self.end_headers()
        else:
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
    do_HEAD = do_GET
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
python3 stub.py stub.port & STUB_PID=$!
AL_PIDS+=("$STUB_PID")
for _ in $(seq 50); do [ -s stub.port ] && break; sleep 0.1; done
al_run out err "${VI[@]}" --key k.pub "docker://127.0.0.1:$(cat stub.port)/ex/app@$D"
al_check "referrers answered 405: no signature found (exit 1), not a protocol error" \
	sh -c "[ $AL_RC = 1 ] && grep -q 'no sigstore signature found' err"
al_stop "$STUB_PID"

# keyless, when sigstore-js can be installed: a bundle referrer made by it
if NM=$("$AL_TOOLS/sigstore-setup.sh" "$AL_BUILD_DIR/sigstore-npm" 2>/dev/null); then
	K=$("${PUSH[@]}" image "$R" ex/keyless v1)
	env NODE_PATH="$NM" node "$AL_TOOLS/sigstore_fixtures.js" fx "$K" "$R/ex/keyless" >/dev/null
	"${PUSH[@]}" referrers "$R" ex/keyless "$K" k.key "$R/ex/keyless" fx/keyless-dsse-bundle.bundle.json >/dev/null
	SUBJ='https://github.com/example/release/.github/workflows/sign.yml@refs/heads/main'
	al_run out err "${VI[@]}" --fulcio-root fx/fulcio-root.pem --rekor-key fx/rekor.pub \
		--certificate-identity "$SUBJ" --certificate-oidc-issuer https://oidc.airlock.test \
		"docker://$R/ex/keyless:v1"
	al_check "a keyless sigstore-js bundle referrer verifies" grep -q "bundle, keyless: $SUBJ, logged in Rekor" out
	al_run out err "${VI[@]}" --fulcio-root fx/fulcio-root.pem --rekor-key fx/rekor.pub \
		--certificate-identity "https://github.com/mallory/x" "docker://$R/ex/keyless:v1"
	al_check "keyless with another identity: exit 1" [ "$AL_RC" = 1 ]
else
	echo "skip: sigstore-js not installable, keyless referrer case not run"
fi
al_finish
