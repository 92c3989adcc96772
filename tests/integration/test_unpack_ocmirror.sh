#!/usr/bin/env bash
# test_unpack_ocmirror.sh: airlock unpack imports oc-mirror v2 archives (mirror_000001.tar ...): blobs verified, tags named, release signatures kept; damaged, truncated and hostile archives refused with nothing written outside the store.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
mkarch=$AL_TOOLS/ocmirror_archive.py
src=$T/src
rel_hex=c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0

blob_list() { (cd "$1" && find blobs/sha256 -type f | LC_ALL=C sort); }

# ---- a good archive set, split as oc-mirror splits at archiveSize
python3 "$mkarch" "$src" "$T/good" --volume-size 3000
nvol=$(find "$T/good" -name 'mirror_*.tar' | wc -l)
al_check "the fixture spans several archives ($nvol)" test "$nvol" -gt 2
# unsigned archives enter a store only with --accept-untrusted
al_check_fails "without --accept-untrusted: refused (exit 1)" 1 "$AIRLOCK" unpack "$T/good" --store "$T/dst-noflag"
al_check "... and nothing is named in that store" bash -c '! grep -q ref.name "$1/index.json" 2>/dev/null' _ "$T/dst-noflag"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/good" --store "$T/dst"
al_check "unpack of oc-mirror archives exits 0" test "$AL_RC" = 0
al_check "every blob of the source store arrived" test "$(blob_list "$src")" = "$(blob_list "$T/dst")"
al_check "the release is named as oc-mirror's cache named it, same digest" \
	test "$(al_digest_of "$T/dst" localhost:55000/airlock-samples/release:4.14.1-x86_64)" = "sha256:$rel_hex"
al_check "an image mirrored by digest is named by digest" \
	al_digest_of "$T/dst" "localhost:55000/airlock-samples/ocp-v4.0-art-dev@sha256:7026db9f135613885a678be3b2a287ad01a12e62f37c4c6754a01fb7dfdd9437"
al_check "the release signature oc-mirror kept is in the store" \
	cmp "$src/signatures/sha256=$rel_hex/signature-1" "$T/dst/signatures/sha256=$rel_hex/signature-1"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/dst"
al_check "check finds the imported store whole" grep -qE '^checked 7 images, [0-9]+ blobs: 0 missing, 0 corrupt' "$T/out"
# no key vouched for the archives: what they wrote is marked untrusted, as
# an airlock pack imported with --accept-untrusted (docs/security.md)
al_check "untrusted.json marks the release signature and every name, names by digest too" \
	python3 - "$T/dst" "$rel_hex" <<'PY'
import hashlib, json, sys
store, rel = sys.argv[1], sys.argv[2]
m = json.load(open(store + "/airlock/untrusted.json"))
sig = open("%s/signatures/sha256=%s/signature-1" % (store, rel), "rb").read()
assert [(s["release"], s["sha256"]) for s in m["signatures"]] == \
    [("sha256:" + rel, hashlib.sha256(sig).hexdigest())], m["signatures"]
names = [e["annotations"]["org.opencontainers.image.ref.name"]
         for e in json.load(open(store + "/index.json"))["manifests"]]
# names by digest are marked as tags are (docs/security.md)
assert any("@sha256:" in n for n in names), names
assert sorted(t["name"] for t in m["tags"]) == sorted(names) and names, (m["tags"], names)
assert all(t["pack"] == "oc-mirror" for t in m["tags"] + m["signatures"]), m
PY
al_check "check lists the untrusted signature and tags" \
	bash -c 'grep -q "^untrusted signature signatures/sha256=$2/signature-1" "$1" && grep -q "^untrusted tag localhost:55000/airlock-samples/release:4.14.1-x86_64 -> sha256:$2" "$1"' \
	_ "$T/out" "$rel_hex"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/good" --store "$T/dst"
al_check "a second import is a no-op that succeeds" grep -q '0 entries imported' "$T/out"

# ---- nothing oc-mirror writes is signed: --trust cannot be satisfied
"$AIRLOCK" keygen -o "$T/k" >/dev/null
al_check_fails "oc-mirror archives with --trust are refused (exit 1)" 1 \
	"$AIRLOCK" unpack "$T/good" --store "$T/dst-trust" --trust "$T/k.pub"
al_check "and nothing of them is in that store" test ! -e "$T/dst-trust/blobs/sha256/$rel_hex"

# ---- oc-mirror v2 tags images mirrored by digest "sha256-<hex>"
python3 "$mkarch" "$src" "$T/dtags" --digest-tags
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/dtags" --store "$T/dst-tags"
al_check "archives with digest tags import" test "$AL_RC" = 0
al_check "the digest tag names the image" \
	al_digest_of "$T/dst-tags" "localhost:55000/airlock-samples/ocp-v4.0-art-dev:sha256-7026db9f135613885a678be3b2a287ad01a12e62f37c4c6754a01fb7dfdd9437"

# ---- a flipped byte in a blob
python3 "$mkarch" "$src" "$T/bad"
python3 - "$T/bad/mirror_000001.tar" <<'EOF'
import sys, tarfile
p = sys.argv[1]
with tarfile.open(p) as t:
    m = [m for m in t.getmembers() if m.name.endswith("/data") and m.size > 100][0]
with open(p, "r+b") as f:
    f.seek(m.offset_data + 50)
    b = f.read(1)
    f.seek(m.offset_data + 50)
    f.write(bytes([b[0] ^ 0xff]))
print(m.name.split("/")[-2], file=open(p + ".hex", "w"))
EOF
bad_hex=$(cat "$T/bad/mirror_000001.tar.hex")
rm "$T/bad/mirror_000001.tar.hex"
al_check_fails "a corrupt blob is refused (exit 1)" 1 "$AIRLOCK" unpack --accept-untrusted "$T/bad" --store "$T/dst-bad"
al_check "the corrupt blob is not in the store" test ! -e "$T/dst-bad/blobs/sha256/$bad_hex"
al_check "no image is named from a refused archive" \
	bash -c "! grep -q localhost:55000 '$T/dst-bad/index.json' 2>/dev/null"

# ---- truncation: inside an entry, and at an entry boundary
python3 "$mkarch" "$src" "$T/cut"
size=$(stat -c %s "$T/cut/mirror_000001.tar")
truncate -s $((size / 2 + 7)) "$T/cut/mirror_000001.tar"
al_check_fails "an archive cut inside an entry is refused (exit 1)" 1 "$AIRLOCK" unpack --accept-untrusted "$T/cut" --store "$T/dst-cut"
python3 "$mkarch" "$src" "$T/cut2"
python3 - "$T/cut2/mirror_000001.tar" <<'EOF'
import os, sys, tarfile
p = sys.argv[1]
with tarfile.open(p) as t:
    ms = t.getmembers()
# cut before the last entries (oc-mirror's log, the isc): every image
# stays complete, only the missing end-of-archive blocks tell
m = [m for m in ms if m.name.startswith("working-dir/logs/")][0]
os.truncate(p, m.offset)  # ends exactly before a header: no end blocks
EOF
al_check_fails "an archive cut at an entry boundary is refused (exit 1)" 1 "$AIRLOCK" unpack --accept-untrusted "$T/cut2" --store "$T/dst-cut2"
al_check "nothing of it was named" bash -c "! grep -q localhost:55000 '$T/dst-cut2/index.json' 2>/dev/null"

# ---- hostile entries: traversal, absolute path, symlink, device
hostile() { # DIR KIND
	mkdir -p "$1"
	python3 - "$1/mirror_000001.tar" "$2" <<'EOF'
import io, sys, tarfile
p, kind = sys.argv[1], sys.argv[2]
with tarfile.open(p, "w", format=tarfile.PAX_FORMAT) as t:
    ti = tarfile.TarInfo()
    if kind == "dotdot":
        ti.name = "docker/registry/v2/../../../escaped"
    elif kind == "absolute":
        ti.name = "/tmp/airlock-ocmirror-escaped"
    elif kind == "symlink":
        ti.name = "docker/registry/v2/blobs"
        ti.type = tarfile.SYMTYPE
        ti.linkname = "/etc"
    elif kind == "fifo":
        ti.name = "working-dir/fifo"
        ti.type = tarfile.FIFOTYPE
    data = b"x" * 16
    if ti.type == tarfile.REGTYPE:
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    else:
        t.addfile(ti)
EOF
}
for kind in dotdot absolute symlink fifo; do
	hostile "$T/h-$kind/media" "$kind"
	al_check_fails "a $kind entry is refused (exit 1)" 1 "$AIRLOCK" unpack --accept-untrusted "$T/h-$kind/media" --store "$T/h-$kind/store"
done
al_check "nothing escaped the store" test ! -e "$T/h-dotdot/escaped" -a ! -e "$T/escaped" -a ! -e /tmp/airlock-ocmirror-escaped

# ---- a link whose content is not a digest, a tag with a hostile name
mkdir -p "$T/badlink"
python3 - "$T/badlink/mirror_000001.tar" <<'EOF'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    data = b"../../../etc/passwd"
    ti = tarfile.TarInfo("docker/registry/v2/repositories/a/b/_manifests/tags/v1/current/link")
    ti.size = len(data)
    t.addfile(ti, io.BytesIO(data))
EOF
al_check_fails "a tag link that holds no digest is refused (exit 1)" 1 "$AIRLOCK" unpack --accept-untrusted "$T/badlink" --store "$T/dst-badlink"

# ---- a missing archive in the middle: named, exit 3, rerun with it completes
python3 "$mkarch" "$src" "$T/gap" --volume-size 3000
mv "$T/gap/mirror_000002.tar" "$T/held-back.tar"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/gap" --store "$T/dst-gap"
al_check "a gap in the numbering exits 3" test "$AL_RC" = 3
al_check "the missing archive is named" grep -qx 'missing mirror_000002.tar' "$T/out"
mv "$T/held-back.tar" "$T/gap/mirror_000002.tar"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/gap" --store "$T/dst-gap"
al_check "with it the import completes" test "$AL_RC" = 0

# ---- a delta (oc-mirror's history left blobs out) into a store without its base
layer=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/blobs/sha256/"+sys.argv[2])); print(m["layers"][0]["digest"].split(":")[1])' "$src" "$rel_hex")
python3 "$mkarch" "$src" "$T/delta" --skip-blob "$layer"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/delta" --store "$T/dst-delta"
al_check "a delta without its base exits 1" test "$AL_RC" = 1
al_check "the release lacking a layer is not named" \
	bash -c "! grep -q 'localhost:55000/airlock-samples/release:' '$T/dst-delta/index.json'"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/delta" --store "$T/dst"
al_check "the same delta into a store that has its base exits 0" test "$AL_RC" = 0

# ---- oc-mirror's own test cache (tests/unit/testdata/cache-fake): its blobs
# hold placeholder bytes, so the import must refuse them
fake=$AL_SOURCE_DIR/tests/data/ocmirror/cache-fake
if [ -d "$fake" ]; then
	mkdir -p "$T/fake"
	(cd "$fake" && tar --format=pax -cf "$T/fake/mirror_000001.tar" docker)
	al_check_fails "oc-mirror's cache-fake (placeholder blobs) is refused" 1 "$AIRLOCK" unpack --accept-untrusted "$T/fake" --store "$T/dst-fake"
fi

# ---- a release where oc-mirror's mirror to disk puts it
# (openshift/release-images:<tag>): recorded in releases.json as mirror
# records one, so releases, configmaps, delete and the layout know it
python3 "$mkarch" "$src" "$T/ocmrel" \
	--rename quay.io/airlock-samples/release:4.14.1-x86_64=openshift/release-images:4.14.1-x86_64
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/ocmrel" --store "$T/dstrel"
al_check "unpack of a release at openshift/release-images: exit 0" test "$AL_RC" = 0
al_check "releases.json records it: version, digest, its store name as source, 6 components, a time, no verification" \
	python3 - "$T/dstrel/airlock/releases.json" "$rel_hex" <<'PY'
import json, sys
(r,) = json.load(open(sys.argv[1]))["releases"]
assert r["version"] == "4.14.1", r
assert r["digest"] == "sha256:" + sys.argv[2], r
assert r["source"] == "localhost:55000/openshift/release-images:4.14.1-x86_64", r
assert r["components"] == 6, r
assert r["mirrored"].endswith("Z"), r
assert r.get("verified") is None, r
PY
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$T/dstrel"
al_check "airlock releases lists 4.14.1" grep -q "^4.14.1 .*sha256:$rel_hex" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" configmaps --store "$T/dstrel" -o "$T/cmrel"
cat "$T/err"
al_check "configmaps: the signature the archive carried is left out (marked untrusted), exit 1 for the release left with none" \
	bash -c '[ "$1" = 1 ] && grep -q "release 4.14.1 .*1 signature(s) written by an untrusted import left out" "$2"' _ "$AL_RC" "$T/err"
al_check "... and no ConfigMap carries its bytes" \
	bash -c '! grep -rqs "sha256-$1-1" "$2"' _ "$rel_hex" "$T/cmrel"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/ocmrel" --store "$T/dstrel"
al_check "a second import keeps one record" \
	python3 -c 'import json,sys; sys.exit(len(json.load(open(sys.argv[1]))["releases"]) != 1)' "$T/dstrel/airlock/releases.json"
al_check "the release at its source path (the first import) is not a release record" \
	bash -c '! grep -q 4.14.1 "$1/airlock/releases.json" 2>/dev/null' _ "$T/dst"

# ---- where the images came from: oc-mirror's cache names them by its own
# registry (localhost:55000) and drops the source host; the import records
# the real sources (each release's image-references for its components,
# the carried image set configuration for its release and additional
# images), so the mirror sets name quay.io, not the cache
renames=$(python3 - "$src" "$rel_hex" <<'PY'
import gzip, io, json, sys, tarfile
store, rel = sys.argv[1], sys.argv[2]
m = json.load(open("%s/blobs/sha256/%s" % (store, rel)))
layer = m["layers"][-1]["digest"].split(":")[1]
with tarfile.open(fileobj=io.BytesIO(gzip.decompress(open("%s/blobs/sha256/%s" % (store, layer), "rb").read()))) as t:
    refs = json.load(t.extractfile("release-manifests/image-references"))
seen = set()
for tag in refs["spec"]["tags"]:
    img = tag["from"]["name"]
    if img not in seen:
        seen.add(img)
        print("--rename=%s=openshift/release:4.14.1-x86_64-%s" % (img, tag["name"]))
PY
)
cat >"$T/isc.yaml" <<'YAML'
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-samples/release:4.14.1-x86_64
  additionalImages:
  - name: quay.io/airlock-samples/ocp-v4.0-art-dev@sha256:7026db9f135613885a678be3b2a287ad01a12e62f37c4c6754a01fb7dfdd9437
YAML
# shellcheck disable=SC2086 # one option a word
python3 "$mkarch" "$src" "$T/ocmorig" --isc "$T/isc.yaml" $renames \
	--rename quay.io/airlock-samples/release:4.14.1-x86_64=openshift/release-images:4.14.1-x86_64
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/ocmorig" --store "$T/dstorig"
cat "$T/err"
al_check "unpack of a release with its components where oc-mirror's cache puts them: exit 0" test "$AL_RC" = 0
al_check "fixture: the components are at openshift/release:4.14.1-x86_64-<name>" \
	bash -c '[ "$(grep -o "localhost:55000/openshift/release:4.14.1-x86_64-[a-z-]*" "$1/index.json" | sort -u | wc -l)" -ge 5 ]' _ "$T/dstorig"
# every name the archives set is marked untrusted: mirrorsets maps them
# only with --push-untrusted (as push pushes them), none without
al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --store "$T/dstorig" --registry mirror.example:5000/ocm -o "$T/ms-none.yaml"
al_check "mirrorsets without --push-untrusted maps none of the imported names" \
	bash -c '[ "$1" = 0 ] && ! grep -q "mirror.example:5000/ocm/openshift/release" "$2"' _ "$AL_RC" "$T/ms-none.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --push-untrusted --store "$T/dstorig" --registry mirror.example:5000/ocm -o "$T/ms-orig.yaml"
cat "$T/err"
al_check "mirrorsets after the import: exit 0" test "$AL_RC" = 0
al_check "mirrorsets: no source is oc-mirror's cache" bash -c '! grep -q "localhost:55000" "$1"' _ "$T/ms-orig.yaml"
al_check "mirrorsets: the components' source repository (image-references) to openshift/release" \
	grep -qzF -e "$(printf -- '- mirrors:\n    - mirror.example:5000/ocm/openshift/release\n    source: quay.io/airlock-samples/ocp-v4.0-art-dev\n')" "$T/ms-orig.yaml"
al_check "mirrorsets: the release's source (the carried configuration) to openshift/release-images" \
	grep -qzF -e "$(printf -- '- mirrors:\n    - mirror.example:5000/ocm/openshift/release-images\n    source: quay.io/airlock-samples/release\n')" "$T/ms-orig.yaml"
al_check "mirrorsets: the components are release images (idms-release-0, layout.c knows the cache's component names)" \
	python3 - "$T/ms-orig.yaml" <<'PY'
import sys
docs = open(sys.argv[1]).read().split("\n---\n")
rel = [d for d in docs if "name: idms-release-0" in d]
assert len(rel) == 1 and "- mirror.example:5000/ocm/openshift/release\n" in rel[0], docs
assert not any("ocm/openshift/release\n" in d for d in docs if "idms-generic" in d), docs
PY
python3 "$mkarch" "$src" "$T/ocmadd" --digest-tags --isc "$T/isc.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/ocmadd" --store "$T/dstadd"
al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --push-untrusted --store "$T/dstadd" --registry mirror.example:5000/ocm --layout source -o "$T/ms-add.yaml"
al_check "an additional image by digest (cache tag sha256-<hex>): the mirror sets name its source" \
	grep -qzF -e "$(printf -- '- mirrors:\n    - mirror.example:5000/ocm/airlock-samples/ocp-v4.0-art-dev\n    source: quay.io/airlock-samples/ocp-v4.0-art-dev\n')" "$T/ms-add.yaml"

al_finish
