#!/usr/bin/env bash
# test_pack_trust.sh: media trust end to end: forged, poisoned and replayed packs before and after a trusted one, FIFOs given as media, damaged store metadata, sha512 blobs, index entries naming layers.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
src=$T/src
sig_hex=c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
sigdir=signatures/sha256=$sig_hex

pack_id() { # the id from pack's summary line
	sed -n 's/^pack \([A-Za-z0-9-]*\): .*/\1/p' "$1"
}
no_pack_in() { # no manifest, volume or temporary file in $1
	[ -z "$(ls -A "$1" 2>/dev/null | grep -E '^(airlock-|\.airlock-)|\.tar$|\.tmp$' || true)" ]
}

# ---- the staging store and a signed pack of it
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
mkdir -p "$src/$sigdir"
printf 'the real detached signature\n' >"$src/$sigdir/signature-1"
"$AIRLOCK" keygen -o "$T/key" >/dev/null
# a tag (not a name pinned by digest) to move, and the image to move it to
tag=$(al_index_digests "$src" | awk '$1 !~ /@/ {print $1; exit}')
other=$(al_index_digests "$src" | awk -v t="$tag" '$1 != t {print $1; exit}')
al_check "the sample store has a tag to move ($tag) and another image ($other)" test -n "$tag" -a -n "$other"
cp -a "$src" "$T/src-before"

al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p1" --volume-size 64K --sign "$T/key.key"
al_check "pack exits 0" test "$AL_RC" = 0
p1=$(pack_id "$T/out")
al_check "pack reports 0 files left out" grep -q ", 0 files left out$" "$T/out"
al_check "the manifest carries a sequence" \
	python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["sequence"] > 0 else 1)' "$T/p1/airlock-$p1.json"

# ---- FIFOs given as media are refused at once, never waited on
rm -rf "$T/fv" && mkdir "$T/fv"
cp "$T/p1/airlock-$p1.json" "$T/p1/airlock-$p1.json.sig" "$T/fv/"
mkfifo "$T/fv/airlock-$p1-0001.tar"
al_run "$T/out" "$T/err" timeout 10 "$AIRLOCK" unpack --accept-untrusted "$T/fv" --store "$T/f-fifo"
al_check "a FIFO volume: unpack returns within 10 s with exit 1 (got $AL_RC)" test "$AL_RC" = 1
al_check "... naming the volume as a FIFO" grep -q "airlock-$p1-0001.tar' is not a regular file (a FIFO)" "$T/err"

rm -rf "$T/fm" && mkdir "$T/fm"
cp "$T/p1"/*.tar "$T/fm/"
mkfifo "$T/fm/airlock-$p1.json"
al_run "$T/out" "$T/err" timeout 10 "$AIRLOCK" unpack --accept-untrusted "$T/fm" --store "$T/f-fifo"
al_check "a FIFO manifest: unpack returns within 10 s with exit 1 (got $AL_RC)" test "$AL_RC" = 1
al_check "... naming the manifest as a FIFO" grep -q "airlock-$p1.json' is not a regular file (a FIFO)" "$T/err"

mkfifo "$T/fifo"
al_run "$T/out" "$T/err" timeout 10 "$AIRLOCK" unpack "$T/p1" --store "$T/f-fifo" --trust "$T/fifo"
al_check "a FIFO as --trust key: refused within 10 s (got $AL_RC)" test "$AL_RC" = 3
al_check "... naming it" grep -q "'$T/fifo' is not a regular file (a FIFO)" "$T/err"
al_run "$T/out" "$T/err" timeout 10 "$AIRLOCK" pack --store "$src" -o "$T/p-fifo" --have "$T/fifo"
al_check "a FIFO as --have inventory: refused within 10 s (got $AL_RC)" test "$AL_RC" = 3
al_run "$T/out" "$T/err" timeout 10 "$AIRLOCK" mirror --config "$T/fifo" --store "$T/f-fifo2"
al_check "a FIFO as mirror --config: refused within 10 s (got $AL_RC)" bash -c '[ "$1" != 0 ] && [ "$1" != 124 ]' _ "$AL_RC"

# ---- damaged store metadata is not packed
for damage in truncated illtyped; do
	rm -rf "$T/bad" "$T/p-bad"
	cp -a "$src" "$T/bad"
	if [ "$damage" = truncated ]; then
		truncate -s 20 "$T/bad/airlock/releases.json"
	else
		printf '{"releases": "4.14.1"}\n' >"$T/bad/airlock/releases.json"
	fi
	al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/bad" -o "$T/p-bad" --volume-size 64K
	al_check "a $damage releases.json: pack exits 1" test "$AL_RC" = 1
	al_check "... naming the file" grep -q "airlock/releases.json" "$T/err"
	al_check "... and nothing is written as a pack" no_pack_in "$T/p-bad"
done

# ---- sha512 blobs travel, and are verified with SHA-512
rm -rf "$T/s512"
cp -a "$src" "$T/s512"
python3 - "$T/s512" <<'EOF'
import hashlib, json, os, random, sys
root = sys.argv[1]
def put(alg, data):
    h = getattr(hashlib, alg)(data).hexdigest()
    os.makedirs(os.path.join(root, "blobs", alg), exist_ok=True)
    with open(os.path.join(root, "blobs", alg, h), "wb") as f:
        f.write(data)
    return "%s:%s" % (alg, h)
rnd = random.Random(512)
layer = bytes(rnd.getrandbits(8) for _ in range(150000))
cfg = b'{"architecture":"amd64","os":"linux"}'
man = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": put("sha256", cfg), "size": len(cfg)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": put("sha512", layer), "size": len(layer)}]}).encode()
idx_path = os.path.join(root, "index.json")
idx = json.load(open(idx_path))
idx["manifests"].append({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": put("sha256", man),
    "size": len(man), "annotations": {"org.opencontainers.image.ref.name": "quay.io/airlock-test/sha512:1"}})
json.dump(idx, open(idx_path, "w"), indent=1)
EOF
s512=$(ls "$T/s512/blobs/sha512")
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/s512" -o "$T/p512" --volume-size 64K
al_check "pack of a store with a sha512 blob exits 0" test "$AL_RC" = 0
p512=$(pack_id "$T/out")
al_check "... and lists it in the manifest with its sha512" \
	python3 -c 'import json,sys; sys.exit(0 if any(e["path"] == "blobs/sha512/" + sys.argv[2] and e.get("sha512") == sys.argv[2] for e in json.load(open(sys.argv[1]))["entries"]) else 1)' \
	"$T/p512/airlock-$p512.json" "$s512"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/p512" --store "$T/f512"
al_check "unpack exits 0" test "$AL_RC" = 0
al_check "... the sha512 blob arrived byte for byte" cmp "$T/s512/blobs/sha512/$s512" "$T/f512/blobs/sha512/$s512"
al_check "... and the image that uses it is in the index" al_same_index "$T/s512" "$T/f512"
printf 'X' | dd of="$T/s512/blobs/sha512/$s512" bs=1 seek=100 conv=notrunc 2>/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/s512" -o "$T/p512b" --volume-size 64K
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/p512b" --store "$T/f512b"
al_check "a sha512 blob whose bytes changed is refused at unpack (exit 1)" test "$AL_RC" = 1
al_check "... by its SHA-512" grep -q "digest mismatch for blob 'sha512:$s512'" "$T/err"

# ---- an index entry naming a layer blob is refused at unpack
rm -rf "$T/lay"
cp -a "$src" "$T/lay"
python3 - "$T/lay" <<'EOF'
import json, os, sys
root = sys.argv[1]
idx = json.load(open(os.path.join(root, "index.json")))
key = "org.opencontainers.image.ref.name"
man = json.load(open(os.path.join(root, "blobs", *idx["manifests"][0]["digest"].split(":"))))
layer = (man.get("layers") or [man["config"]])[0]
idx["manifests"].append({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": layer["digest"],
    "size": layer["size"], "annotations": {key: "quay.io/airlock-test/a-layer:1"}})
json.dump(idx, open(os.path.join(root, "index.json"), "w"), indent=1)
EOF
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/lay" -o "$T/play"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/play" --store "$T/flay"
al_check "an index entry naming a layer: unpack exits 1" test "$AL_RC" = 1
al_check "... naming the entry" grep -q "'quay.io/airlock-test/a-layer:1' names blob .*not an image manifest or index" "$T/err"
al_check "... and nothing is tagged" bash -c '! grep -q ref.name "$1/index.json" 2>/dev/null' _ "$T/flay"

# ---- forged before trusted: an untrusted unpack cannot pre-empt or block the real pack
rm -rf "$T/evil"
cp -a "$src" "$T/evil"
printf 'a forged signature\n' >"$T/evil/$sigdir/signature-1"
al_retag "$T/evil" "$tag" "$other"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/evil" -o "$T/pe" --volume-size 64K
pe=$(pack_id "$T/out")
python3 "$AL_TOOLS/hostile_tar.py" forge "$T/pe" "$T/forged" "$p1" >/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/forged" --store "$T/far"
al_check "the forged pack (claiming the real pack's id) imports without --trust" test "$AL_RC" = 0
al_check_fails "... and is refused with --trust" 1 "$AIRLOCK" unpack "$T/forged" --store "$T/far" --trust "$T/key.pub"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/far" --trust "$T/key.pub"
cat "$T/err"
al_check "the real pack then imports with --trust (exit 0)" test "$AL_RC" = 0
al_check "... it was not taken as already imported" bash -c '! grep -q "already imported" "$1"' _ "$T/out"
al_check "... its tags win" test "$(al_digest_of "$T/far" "$tag")" = "$(al_digest_of "$src" "$tag")"
al_check "... the forged signature file (marked untrusted) is replaced by the real one" grep -q real "$T/far/$sigdir/signature-1"
al_check "... with no forged one beside it" test ! -e "$T/far/$sigdir/signature-2"
al_check "the import record says trusted, by which key, which manifest" \
	python3 -c 'import json,sys,hashlib; r=json.load(open(sys.argv[1])); sys.exit(0 if r["trusted"] is True and r["key"].startswith("sha256:") and r["manifestSha256"] == hashlib.sha256(open(sys.argv[2],"rb").read()).hexdigest() else 1)' \
	"$T/far/airlock/imported/$p1.json" "$T/p1/airlock-$p1.json"

# ---- replay: an older, validly signed pack after a newer one
al_retag "$src" "$tag" "$other"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p2" --volume-size 64K --sign "$T/key.key"
p2=$(pack_id "$T/out")
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p2" --store "$T/far2" --trust "$T/key.pub"
al_check "the newer pack imports" test "$AL_RC" = 0
new_d=$(al_digest_of "$T/far2" "$tag")
old_d=$(al_digest_of "$T/src-before" "$tag")
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/far2" --trust "$T/key.pub"
al_check "replaying the older signed pack: exit 1" test "$AL_RC" = 1
al_check "... naming the tag, the old and the new digest" \
	bash -c 'grep -qF "tag '"'"'$1'"'"' back from $2 to $3" "$4"' _ "$tag" "$new_d" "$old_d" "$T/err"
al_check "... and the tag did not move" test "$(al_digest_of "$T/far2" "$tag")" = "$new_d"
python3 "$AL_TOOLS/hostile_tar.py" sequence "$T/p1" "$T/p1-noseq" none >/dev/null
al_check_fails "a manifest without a sequence (older airlock) is sequence 0: refused too" 1 \
	"$AIRLOCK" unpack --accept-untrusted "$T/p1-noseq" --store "$T/far2"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/far2" --trust "$T/key.pub" --allow-rollback
al_check "--allow-rollback imports it (exit 0)" test "$AL_RC" = 0
al_check "... and the tag is rolled back as asked" test "$(al_digest_of "$T/far2" "$tag")" = "$old_d"

al_finish
