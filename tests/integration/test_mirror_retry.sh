#!/usr/bin/env bash
# test_mirror_retry.sh: the failed-image list a mirror with failed images writes (STORE/airlock/failed), and mirror --retry FILE fetching only those images; bad lists refused with FILE:LINE, exit 2.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

layout=$AL_SOURCE_DIR/samples/layout
release=quay.io/airlock-samples/release:4.14.1-x86_64
art=quay.io/airlock-samples/ocp-v4.0-art-dev
comp1=$art@sha256:050e3be767709b4e48e2545effd2cf52a5f240a99bcf6c021f91048c0392c9d8
comp2=$art@sha256:51d40339a252c8c5d2a9077d01bd0f0758b384c7b172e6983dde8b321d30daa5

# The source: a copy of the sample layout, read through airlock.sources.
# Images are hidden by dropping their index.json entries and moving their
# manifest blobs aside, and shown again by putting both back.
src=$T/src
cp -r "$layout" "$src"
cp "$src/index.json" "$T/index.full"
mkdir -p "$T/hidden"
hide() {
	python3 - "$src" "$T/hidden" "$@" <<'PY'
import json, os, sys
src, hidden, names = sys.argv[1], sys.argv[2], sys.argv[3:]
p = src + "/index.json"
d = json.load(open(p))
keep = []
for m in d["manifests"]:
    if m.get("annotations", {}).get("org.opencontainers.image.ref.name") in names:
        h = m["digest"].split(":")[1]
        os.rename(src + "/blobs/sha256/" + h, hidden + "/" + h)
    else:
        keep.append(m)
d["manifests"] = keep
json.dump(d, open(p, "w"))
PY
}
show_all() {
	cp "$T/index.full" "$src/index.json"
	find "$T/hidden" -type f -exec mv {} "$src/blobs/sha256/" \;
}
lists() { ls "$1/airlock/failed" 2>/dev/null | grep -c '^mirror-.*\.txt$' || true; }
entries() { grep -v '^#' "$1" | grep -c . || true; }

cat >"$T/images.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  additionalImages:
  - name: $comp1
  - name: $comp2
  - name: $art@sha256:7026db9f135613885a678be3b2a287ad01a12e62f37c4c6754a01fb7dfdd9437
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: oci:$src
YAML

# 1. Additional images: two of three missing at the source.
hide "$comp1" "$comp2"
store=$T/store
al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$T/images.yaml" --store "$store"
cat "$T/out" "$T/err"
al_check "a run with failed images exits 3" test "$AL_RC" = 3
al_check "it wrote one failed-image list" test "$(lists "$store")" = 1
list=$(ls "$store"/airlock/failed/mirror-*.txt | head -n 1)
cat "$list"
al_check "the closing output names the list and the retry command" \
	grep -qF "failed images listed in $list: fetch only them with airlock mirror --retry $list --store $store" "$T/out"
al_check "the list starts with its header" test "$(head -n 1 "$list")" = "# airlock failed-image list v1"
al_check "the list names exactly the two failed images" test "$(entries "$list")" = 2
al_check "each entry is KIND<TAB>REFERENCE<TAB>DIGEST" \
	bash -c 'grep -qxF "$(printf "image\t%s\t-" "$2")" "$1" && grep -qxF "$(printf "image\t%s\t-" "$3")" "$1"' _ "$list" "$comp1" "$comp2"
al_check "each entry follows a '# error:' line" test "$(grep -c '^# error: ' "$list")" = 2
al_check "no temporary file is left beside it" test "$(ls -A "$store/airlock/failed" | wc -l)" = 1

# --json names it too.
al_run "$T/json" "$T/err" "$AIRLOCK" mirror -c "$T/images.yaml" --store "$T/store-json" --json
al_check "--json: failed_images 2 and failed_list the file written" \
	python3 -c 'import json,sys,os; d=json.load(open(sys.argv[1])); sys.exit(0 if d["failed_images"] == 2 and os.path.isfile(d["failed_list"]) and "/airlock/failed/mirror-" in d["failed_list"] else 1)' "$T/json"

# The retry, with the images back: only those two are fetched; --config
# gives the sources only (its third image is not mirrored again).
show_all
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --retry "$list" -c "$T/images.yaml" --store "$store"
cat "$T/out" "$T/err"
al_check "the retry exits 0" test "$AL_RC" = 0
al_check "the retry mirrored the two listed images only" grep -q '^mirrored 0 releases, 2 images: ' "$T/out"
al_check "a retry where everything arrived removes the list and writes none" test "$(lists "$store")" = 0
al_check "no failed-list line when nothing failed" bash -c '! grep -q "failed images listed" "$1"' _ "$T/out"
al_check "the retried images are in the store" \
	bash -c 'al_digest_of(){ python3 -c "import json,sys; sys.exit(0 if any(m.get(\"annotations\",{}).get(\"org.opencontainers.image.ref.name\")==sys.argv[2] for m in json.load(open(sys.argv[1]+\"/index.json\"))[\"manifests\"]) else 1)" "$1" "$2"; }; al_digest_of "$1" "$2" && al_digest_of "$1" "$3"' _ "$store" "$comp1" "$comp2"

# A retry that still fails writes the new, shorter list and removes the old.
store2=$T/store2
hide "$comp1" "$comp2"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$T/images.yaml" --store "$store2"
old=$(ls "$store2"/airlock/failed/mirror-*.txt | head -n 1)
show_all
hide "$comp2"
sleep 1 # a new name (the lists are named by the second)
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --retry "$old" -c "$T/images.yaml" --store "$store2"
cat "$T/out" "$T/err"
al_check "a retry with an image still missing exits 3" test "$AL_RC" = 3
al_check "it mirrored the one image that came back" grep -q '^mirrored 0 releases, 1 images: ' "$T/out"
al_check "the retried list is gone, one new list left" \
	bash -c 'test ! -e "$1" && test "$(ls "$2"/airlock/failed | wc -l)" = 1' _ "$old" "$store2"
new=$(ls "$store2"/airlock/failed/mirror-*.txt | head -n 1)
al_check "the new list names only the image still missing" \
	bash -c 'test "$(grep -v "^#" "$1" | grep -c .)" = 1 && grep -qF "$2" "$1"' _ "$new" "$comp2"

# 2. --retry alone (no --config): oci: references as the run used them.
show_all
hide "$comp1"
store3=$T/store3
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --store "$store3" --image "oci:$src:$comp1" --image "oci:$src:$release"
al_check "oci: images: one missing, exit 3" test "$AL_RC" = 3
l3=$(ls "$store3"/airlock/failed/mirror-*.txt | head -n 1)
al_check "the list records the oci: reference as given" \
	grep -qxF "$(printf 'image\toci:%s:%s\t-' "$src" "$comp1")" "$l3"
show_all
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --retry "$l3" --store "$store3"
cat "$T/out" "$T/err"
al_check "--retry without --config exits 0, one image" \
	bash -c '[ "$1" = 0 ] && grep -q "^mirrored 0 releases, 1 images: " "$2"' _ "$AL_RC" "$T/out"
al_check "and the list of the store is removed" test "$(lists "$store3")" = 0

# Every image failing (the run stops after its plan) still writes a list;
# a retry where it still fails replaces it.
store6=$T/store6
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --store "$store6" --image "oci:$src:quay.io/airlock-samples/nope:1"
cat "$T/out" "$T/err"
al_check "all images failed: exit 3, a list of one, named on stdout" \
	bash -c '[ "$1" = 3 ] && [ "$(ls "$2"/airlock/failed | wc -l)" = 1 ] && grep -q "^failed images listed in " "$3"' _ "$AL_RC" "$store6" "$T/out"
l6=$(ls "$store6"/airlock/failed/mirror-*.txt | head -n 1)
al_check "the list names the image" grep -qxF "$(printf 'image\toci:%s:quay.io/airlock-samples/nope:1\t-' "$src")" "$l6"
sleep 1
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --retry "$l6" --store "$store6"
al_check "a retry where it still fails: exit 3, the old list replaced by a new one" \
	bash -c '[ "$1" = 3 ] && [ ! -e "$2" ] && [ "$(ls "$3"/airlock/failed | wc -l)" = 1 ]' _ "$AL_RC" "$l6" "$store6"

# 3. A release whose component failed is listed as the release (digest
# known); the retry runs it again and fetches only the missing component.
cat >"$T/release.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: $release
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: oci:$src
YAML
show_all
hide "$comp1"
store4=$T/store4
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned -c "$T/release.yaml" --store "$store4"
cat "$T/out" "$T/err"
al_check "a release with a missing component exits 3" test "$AL_RC" = 3
l4=$(ls "$store4"/airlock/failed/mirror-*.txt | head -n 1)
cat "$l4"
rdigest=$(al_digest_of "$layout" "$release")
al_check "the list names the release with its digest" \
	grep -qxF "$(printf 'release\t%s\t%s' "$release" "$rdigest")" "$l4"
al_check "the release is the only entry" test "$(entries "$l4")" = 1
al_check "the error line names the missing component" grep -qF "$comp1" "$l4"
show_all
# the blobs of the missing component the store lacks
comp_blobs=$(python3 - "$layout" "$comp1" "$store4" <<'PY'
import json, os, sys
root, name, store = sys.argv[1:4]
blob = lambda d: json.load(open(root + "/blobs/sha256/" + d.split(":")[1]))
m = blob(name.split("@")[1])
print(len({d["digest"] for d in [m["config"]] + m["layers"]
           if not os.path.exists(store + "/blobs/sha256/" + d["digest"].split(":")[1])}))
PY
)
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --retry "$l4" -c "$T/release.yaml" --store "$store4"
cat "$T/out" "$T/err"
al_check "the release retry exits 0" test "$AL_RC" = 0
al_check "it mirrored the release" grep -q '^mirrored 1 releases, ' "$T/out"
al_check "it transferred only the missing component's $comp_blobs blobs" \
	grep -q "transferred $comp_blobs blobs " "$T/out"
al_check "the release is named in the store now" al_digest_of "$store4" "$release"
al_check "and the list is gone" test "$(lists "$store4")" = 0
al_check "the retried store is what the layout holds" al_same_index "$layout" "$store4"

# 4. A catalog's images: listed as catalog-image; the retry fetches them,
# and a rerun with --config then names the rebuilt catalog.
if python3 "$AL_TOOLS/mkcatalog.py" "$T/csrc" quay.io/example/catalog:v1 --images >/dev/null; then
	cat >"$T/catalog.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
    - catalog: docker://quay.io/example/catalog:v1
      packages:
        - name: alpha
airlock:
  sources:
    - prefix: quay.io/example
      location: oci:$T/csrc
YAML
	cp "$T/csrc/index.json" "$T/cindex.full"
	mkdir -p "$T/chidden"
	python3 - "$T/csrc" "$T/chidden" alpha-operator <<'PY'
import json, os, sys
src, hidden, part = sys.argv[1:4]
p = src + "/index.json"
d = json.load(open(p))
keep = []
for m in d["manifests"]:
    if part in m.get("annotations", {}).get("org.opencontainers.image.ref.name", ""):
        h = m["digest"].split(":")[1]
        os.rename(src + "/blobs/sha256/" + h, hidden + "/" + h)
    else:
        keep.append(m)
d["manifests"] = keep
json.dump(d, open(p, "w"))
PY
	store5=$T/store5
	al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$T/catalog.yaml" --store "$store5"
	cat "$T/out"
	al_check "a catalog with missing images: exit 3" test "$AL_RC" = 3
	l5=$(ls "$store5"/airlock/failed/mirror-*.txt | head -n 1)
	cat "$l5"
	nfail=$(grep -v '^#' "$l5" | grep -c . || true)
	al_check "the list names the catalog's failed images as catalog-image ($nfail)" \
		bash -c '[ "$2" -ge 1 ] && [ "$(grep -v "^#" "$1" | grep -c "^catalog-image	quay.io/example/alpha-operator@sha256:[0-9a-f]\{64\}	-$")" = "$2" ]' _ "$l5" "$nfail"
	al_check "and says the catalog itself needs a rerun with --config" \
		grep -q '^# not retried: catalog docker://quay.io/example/catalog:v1 ' "$l5"
	cp "$T/cindex.full" "$T/csrc/index.json"
	find "$T/chidden" -type f -exec mv {} "$T/csrc/blobs/sha256/" \;
	al_run "$T/out" "$T/err" "$AIRLOCK" mirror --retry "$l5" -c "$T/catalog.yaml" --store "$store5"
	cat "$T/out" "$T/err"
	al_check "the retry fetches only the $nfail catalog images, exit 0" \
		bash -c '[ "$1" = 0 ] && grep -q "^mirrored 0 releases, $2 images: " "$3" && ! grep -q "^catalog " "$3"' _ "$AL_RC" "$nfail" "$T/out"
	al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$T/catalog.yaml" --store "$store5"
	al_check "a rerun with --config then names the rebuilt catalog" \
		bash -c '[ "$1" = 0 ] && grep -q "^catalog quay.io/example/catalog:v1 -> quay.io/example/catalog:v1 sha256:" "$2"' _ "$AL_RC" "$T/out"
else
	al_skip_part "mkcatalog.py failed: the catalog part is not checked"
fi

# 5. Bad lists: refused with FILE:LINE, exit 2, nothing fetched.
bad() { # NAME WANT-IN-STDERR (content on stdin)
	cat >"$T/$1"
	al_run "$T/out" "$T/err" "$AIRLOCK" mirror --retry "$T/$1" --store "$T/store-bad"
	cat "$T/err"
	al_check "bad list $1: exit 2 and '$2'" \
		bash -c '[ "$1" = 2 ] && grep -qF -- "$2" "$3"' _ "$AL_RC" "$2" "$T/err"
}
bad nolist.txt "nolist.txt:1: not a failed-image list" <<<"image	$comp1	-"
printf '# airlock failed-image list v1\n# only comments\n' | bad empty.txt "the list names no image"
printf '# airlock failed-image list v1\nimage\t%s\t-\nimage\tquay.io/a/b:1\x1b[2J\t-\n' "$comp1" |
	bad ctrl.txt "ctrl.txt:3: control character 0x1b"
printf '# airlock failed-image list v1\n# note \r\nimage\t%s\t-\n' "$comp1" | bad cr.txt "cr.txt:2: control character 0x0d"
printf '# airlock failed-image list v1\nthing\t%s\t-\n' "$comp1" | bad kind.txt "kind.txt:2: unknown kind 'thing'"
printf '# airlock failed-image list v1\nimage\tNot/A/Ref!!\t-\n' | bad ref.txt "ref.txt:2:"
printf '# airlock failed-image list v1\nimage\t%s\tsha256:abc\n' "$comp1" | bad digest.txt "digest.txt:2: the digest"
printf '# airlock failed-image list v1\nimage %s\n' "$comp1" | bad cols.txt "cols.txt:2: not KIND<TAB>REFERENCE"
{ echo '# airlock failed-image list v1'; head -c 5000 /dev/zero | tr '\0' a; echo; } | bad long.txt "long.txt:2: line longer than 4096 bytes"
python3 -c 'print("# airlock failed-image list v1"); print(("#" * 4000 + "\n") * 1100, end="")' |
	bad big.txt "larger than 4194304 bytes"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --retry "$T/missing.txt" --store "$T/store-bad"
al_check "a missing list: exit 2, named" bash -c '[ "$1" = 2 ] && grep -q "missing.txt" "$2"' _ "$AL_RC" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --retry "$new" --store "$T/store-bad" --image "$comp1"
al_check "--retry with --image: exit 2" bash -c '[ "$1" = 2 ] && grep -q "give no RELEASE or --image" "$2"' _ "$AL_RC" "$T/err"
mkfifo "$T/fifo.txt"
al_run "$T/out" "$T/err" timeout 20 "$AIRLOCK" mirror --retry "$T/fifo.txt" --store "$T/store-bad"
al_check "a FIFO as the list: refused at once, exit 2" \
	bash -c '[ "$1" = 2 ] && grep -q "fifo.txt" "$2"' _ "$AL_RC" "$T/err"
# a release entry follows the release rules: no keys, no --allow-unsigned
printf '# airlock failed-image list v1\nrelease\t%s\t-\n' "oci:$src:$release" >"$T/rel.txt"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --retry "$T/rel.txt" --store "$T/store-bad"
al_check "a listed release without trusted keys: refused as a usage error (exit 2)" \
	bash -c '[ "$1" = 2 ] && grep -q "no trusted keys" "$2"' _ "$AL_RC" "$T/err"
al_check "no refused list created a store" test ! -e "$T/store-bad"

al_finish
