# delete_lib.sh: the fixture of test_delete*.sh, sourced after lib.sh.
# Two synthetic releases that share blobs (4.14.1: four components; 4.14.2:
# the first three of them, same seed, so the same images) and two additional
# images of a third layout, all in one source layout $T/src. Gives the names
# (rel_a, rel_b, x_tag, x_comp, oauth: the one component only 4.14.1 uses,
# x_sig: a cosign tag-scheme signature of x_tag),
# the digests (dig_a, dig_b), and:
#   reach DIR [NAME...]   the blobs NAMEs (all when none) of layout DIR reach
#   count_bytes DIR       "BLOBS BYTES" of the digests on stdin
#   store_blobs DIR       the digests of DIR/blobs/sha256, sorted
#   store_sums DIR        sha256sum of every file under DIR, sorted
#   $T/freed              the digests deleting 4.14.1 frees (want_blobs,
#                         want_bytes), $T/kept what the rest reaches, and
#                         b_names: the names of 4.14.2's layout
#   mkstore DIR           mirror 4.14.1 with both additional images, then
#                         4.14.2, into the store DIR (output: $T/mirror.out)

mk=$AL_SOURCE_DIR/tests/tools/mkrelease.py
prefix=quay.io/airlock-delete
extra=quay.io/airlock-extra
# 4.14.1 has four components, 4.14.2 the first three of them (same seed:
# the same images), so only 4.14.1's release image and its fourth
# component (oauth-server) are its own. The base layer is shared by all.
python3 "$mk" --out "$T/a" --prefix "$prefix" --version 4.14.1 --components 4 --seed shared >/dev/null
python3 "$mk" --out "$T/b" --prefix "$prefix" --version 4.14.2 --components 3 --seed shared \
	--previous 4.14.1 >/dev/null
# the additional images: a tagged image and one by digest (both of another
# synthetic layout)
python3 "$mk" --out "$T/x" --prefix "$extra" --version 9.9.9 --components 1 --seed extra >/dev/null

# one source layout holding all three
mkdir -p "$T/src/blobs/sha256"
for l in a b x; do cp -n "$T/$l/blobs/sha256/"* "$T/src/blobs/sha256/"; done
cp "$T/a/oci-layout" "$T/src/oci-layout"
python3 - "$T/src/index.json" "$T/a" "$T/b" "$T/x" <<'PY'
import json, sys
seen, out = set(), []
for d in sys.argv[2:]:
    for m in json.load(open(d + "/index.json"))["manifests"]:
        n = m["annotations"]["org.opencontainers.image.ref.name"]
        if n not in seen:
            seen.add(n)
            out.append(m)
json.dump({"schemaVersion": 2, "manifests": out}, open(sys.argv[1], "w"))
PY

rel_a=$prefix/release:4.14.1-x86_64
rel_b=$prefix/release:4.14.2-x86_64
x_tag=$extra/release:9.9.9-x86_64
dig_a=$(al_digest_of "$T/a" "$rel_a")
dig_b=$(al_digest_of "$T/b" "$rel_b")
# a cosign signature of the tagged additional image (tag scheme
# REPO:sha256-<hex>.sig): a manifest of its own, with its own layer
x_sig=$(python3 - "$T/src" "$x_tag" <<'PY'
import hashlib, json, sys
root, tag = sys.argv[1], sys.argv[2]
idx = json.load(open(root + "/index.json"))
subject = [m for m in idx["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"] == tag][0]
def put(data):
    d = hashlib.sha256(data).hexdigest()
    open(root + "/blobs/sha256/" + d, "wb").write(data)
    return "sha256:" + d, len(data)
payload = json.dumps({"critical": {"image": {"docker-manifest-digest": subject["digest"]}}}).encode()
ld, ls = put(payload)
cd, cs = put(b'{"architecture":"","os":"","config":{},"rootfs":{"type":"layers","diff_ids":["%s"]}}' % ld.encode())
man = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                  "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cs},
                  "layers": [{"mediaType": "application/vnd.dev.cosign.simplesigning.v1+json", "digest": ld, "size": ls,
                              "annotations": {"dev.cosignproject.cosign/signature": "MEUCIQ=="}}]}).encode()
md, ms = put(man)
name = tag.rsplit(":", 1)[0] + ":" + subject["digest"].replace(":", "-") + ".sig"
idx["manifests"].append({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md, "size": ms,
                         "annotations": {"org.opencontainers.image.ref.name": name}})
json.dump(idx, open(root + "/index.json", "w"))
print(name)
PY
)
x_comp=$(python3 -c 'import json,sys
for m in json.load(open(sys.argv[1]))["manifests"]:
    n = m["annotations"]["org.opencontainers.image.ref.name"]
    if "@" in n: print(n)' "$T/x/index.json")
oauth=$(python3 -c 'import json,sys
for m in json.load(open(sys.argv[1]))["manifests"]:
    n = m["annotations"]["org.opencontainers.image.ref.name"]
    if "@" in n and n not in [e["annotations"]["org.opencontainers.image.ref.name"] for e in json.load(open(sys.argv[2]))["manifests"]]: print(n)' \
	"$T/a/index.json" "$T/b/index.json")
al_check "fixture: 4.14.1 has exactly one component of its own" test "$(printf '%s\n' "$oauth" | grep -c .)" = 1

# Blobs reachable from the images of a layout (manifests, configs, layers).
reach() {
	python3 - "$@" <<'PY'
import json, sys
root, names = sys.argv[1], sys.argv[2:]
def blob(d):
    return json.load(open(root + "/blobs/sha256/" + d.split(":")[1]))
out = set()
for m in json.load(open(root + "/index.json"))["manifests"]:
    n = m["annotations"]["org.opencontainers.image.ref.name"]
    if names and n not in names:
        continue
    man = blob(m["digest"])
    out.add(m["digest"])
    for d in [man["config"]] + man["layers"]:
        out.add(d["digest"])
for d in sorted(out):
    print(d)
PY
}
# "BLOBS BYTES" of the digests on stdin, sizes from the files in DIR
count_bytes() {
	local n=0 b=0 d
	while read -r d; do
		n=$((n + 1))
		b=$((b + $(stat -c %s "$1/blobs/sha256/${d#sha256:}")))
	done
	echo "$n $b"
}
store_blobs() { (cd "$1/blobs/sha256" && ls | sed 's/^/sha256:/' | sort); }
store_sums() { (cd "$1" && find . -type f -exec sha256sum {} + | sort); }

mkstore() {
	local store=$1
	cat >"$T/is-a.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $rel_a
  additionalImages:
  - name: $x_tag
  - name: $x_comp
airlock:
  sources:
  - prefix: $prefix
    location: oci:$T/src
  - prefix: $extra
    location: oci:$T/src
YAML
	cat >"$T/is-b.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $rel_b
airlock:
  sources:
  - prefix: $prefix
    location: oci:$T/src
YAML
	"$AIRLOCK" mirror --layout source --allow-unsigned -c "$T/is-a.yaml" --store "$store" >"$T/mirror.out" 2>&1 &&
		"$AIRLOCK" mirror --layout source --allow-unsigned -c "$T/is-b.yaml" --store "$store" >>"$T/mirror.out" 2>&1
}

# What deleting 4.14.1 frees: what its release image and its own component
# reach, minus what the kept release and the additional images reach.
reach "$T/src" "$rel_a" "$oauth" | sort >"$T/a-only.all"
b_names=$(python3 -c 'import json,sys
for m in json.load(open(sys.argv[1]))["manifests"]: print(m["annotations"]["org.opencontainers.image.ref.name"])' "$T/b/index.json")
# shellcheck disable=SC2086 # one name a word
reach "$T/src" $b_names "$x_tag" "$x_comp" | sort >"$T/kept"
comm -23 "$T/a-only.all" "$T/kept" >"$T/freed"
read -r want_blobs want_bytes < <(count_bytes "$T/src" <"$T/freed")
echo "deleting 4.14.1 must free $want_blobs blobs, $want_bytes bytes"
al_check "fixture: 4.14.1 frees some blobs and shares some" \
	bash -c '[ "$1" -ge 4 ] && [ -n "$(comm -12 "$2" "$3")" ]' _ "$want_blobs" "$T/a-only.all" "$T/kept"
