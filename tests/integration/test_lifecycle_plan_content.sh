#!/usr/bin/env bash
# test_lifecycle_plan_content.sh: mirror --dry-run and the free-space check with an operator catalog (mkcatalog.py) and Helm charts (an HTTP chart repository and a local archive, mkchart.py): mapping.txt, missing.txt and byte totals worked out from the layouts; --dry-run --json is one document; --cluster-resources with a bad --registry refused before any network.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v python3 >/dev/null || al_skip "python3 not installed"

SAMPLES=$AL_SOURCE_DIR/samples/layout
SHIM=$T/fakestatvfs.so
if ! cc -shared -fPIC -o "$SHIM" "$AL_TOOLS/fakestatvfs.c" -ldl 2>"$T/cc.err"; then
	cat "$T/cc.err"
	SHIM=
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

# --- sources: a catalog whose images are real images of $T/src, two
# component images of the samples for the charts to name ---
python3 "$AL_TOOLS/mkcatalog.py" "$T/src" quay.io/example/catalog:v1 --images >/dev/null
mapfile -t COMP < <(al_layout_names "$SAMPLES" | grep '@sha256:' | head -2)
IMG_DEMO=${COMP[0]}
IMG_LOCAL=${COMP[1]}

mkdir -p "$T/web/demo"
cat >"$T/demo.json" <<EOF
{"out": "$T/web/demo/demo-0.2.0.tgz", "files": [
 ["demo/Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.2.0\nappVersion: \"1.0\"\n"],
 ["demo/values.yaml", "image: $IMG_DEMO\n"]
]}
EOF
python3 "$AL_TOOLS/mkchart.py" "$T/demo.json"
cat >"$T/local.json" <<EOF
{"out": "$T/local-1.0.0.tgz", "files": [
 ["local/Chart.yaml", "apiVersion: v2\nname: local\nversion: 1.0.0\n"],
 ["local/values.yaml", "image:\n  repository: ${IMG_LOCAL%@*}\n  digest: ${IMG_LOCAL#*@}\n"]
]}
EOF
python3 "$AL_TOOLS/mkchart.py" "$T/local.json"
D2=$(sha256sum "$T/web/demo/demo-0.2.0.tgz" | cut -d' ' -f1)
cat >"$T/web/demo/index.yaml" <<EOF
apiVersion: v1
entries:
  demo:
  - {name: demo, version: 0.2.0, urls: [demo-0.2.0.tgz], digest: $D2}
EOF
HPORT=$(al_free_port)
(cd "$T/web" && exec python3 -m http.server --bind 127.0.0.1 "$HPORT") >"$T/http.log" 2>&1 &
AL_PIDS+=("$!")
for _ in $(seq 1 50); do
	curl -fsS "http://127.0.0.1:$HPORT/demo/index.yaml" >/dev/null 2>&1 && break
	sleep 0.1
done
HURL=http://127.0.0.1:$HPORT

cat >"$T/isc.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
    - catalog: docker://quay.io/example/catalog:v1
      packages:
        - name: alpha
  helm:
    repositories:
    - name: demo
      url: $HURL/demo
      charts:
      - name: demo
        version: 0.2.0
    local:
    - name: local
      path: $T/local-1.0.0.tgz
airlock:
  sources:
    - prefix: quay.io/example
      location: oci:$T/src
    - prefix: quay.io/airlock-samples
      location: oci:$SAMPLES
EOF

# --- 1. dry run on an empty store ---
S=$T/store
al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$T/isc.yaml" --store "$S" --dry-run
cat "$T/out" "$T/err"
M=$S/airlock/dry-run/mapping.txt
al_check "dry run with a catalog and charts exits 0" test "$AL_RC" = 0
al_check "mapping.txt: the catalog image, stored under its own name" \
	grep -qxF "docker://quay.io/example/catalog:v1=oci:$S:quay.io/example/catalog:v1" "$M"
al_check "mapping.txt: the HTTP chart archive, to charts/demo:0.2.0" \
	grep -qxF "$HURL/demo/demo-0.2.0.tgz=oci:$S:charts/demo:0.2.0" "$M"
al_check "mapping.txt: the local chart archive, to charts/local:1.0.0" \
	grep -qxF "$T/local-1.0.0.tgz=oci:$S:charts/local:1.0.0" "$M"
al_check "mapping.txt: the image of each chart" \
	bash -c 'grep -qxF "docker://$1=oci:$3:$1" "$4" && grep -qxF "docker://$2=oci:$3:$2" "$4"' _ "$IMG_DEMO" "$IMG_LOCAL" "$S" "$M"
# alpha: 3 bundles, 7 images (test_mirror_operators.sh)
al_check "mapping.txt: 7 bundle and related images of the catalog" \
	test "$(grep -c '^docker://quay\.io/example/[^=]*@sha256:' "$M")" = 7
# the catalog, 2 charts, 7 operator images, 2 chart images
al_check "mapping.txt: 12 lines in all" test "$(wc -l <"$M")" = 12
al_check "missing.txt: everything (the store is empty)" cmp -s "$M" "$S/airlock/dry-run/missing.txt"
al_check "the dry run named nothing in the store" \
	test "$(al_index_digests "$S" | grep -c . || true)" = 0
read -r plan_blobs plan_bytes < <(sed -n 's/^to transfer: \([0-9]*\) blobs, \([0-9]*\) bytes .*/\1 \2/p' "$T/out")
prefetched=$(sed -n 's/.*already fetched by the plan: \([0-9]*\) bytes.*/\1/p' "$T/out")
needed=$(sed -n 's/.*still needed: \([0-9]*\) bytes.*/\1/p' "$T/out")
echo "plan: $plan_blobs blobs, $plan_bytes bytes; prefetched $prefetched; needed $needed"
cp "$M" "$T/mapping-1.txt"

# --- 2. --json: one document on stdout, the plan in it ---
al_run "$T/json" "$T/err" "$AIRLOCK" mirror -c "$T/isc.yaml" --store "$T/sj" --dry-run --json
al_check "--dry-run --json: stdout is exactly one JSON document holding the plan" \
	python3 - "$T/json" "$plan_bytes" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
d = doc["dry_run"]
assert doc["schema"] == "airlock.mirror/v1" and doc["exit"] == 0, doc
assert d["images"] == 12 and len(d["entries"]) == 12, d
assert d["bytes_missing"] == int(sys.argv[2]), d
kinds = sorted({e["kind"] for e in d["entries"]})
assert kinds == ["catalog", "chart", "chart-image", "operator"], kinds
assert d["mapping"].endswith("/mapping.txt") and d["fits"] is True
PY

# --- 3. a store that holds the chart images already: missing.txt lacks them ---
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --store "$T/s2" \
	--image "oci:$SAMPLES:$IMG_DEMO" --image "oci:$SAMPLES:$IMG_LOCAL"
al_check "the chart images mirrored on their own" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$T/isc.yaml" --store "$T/s2" --dry-run
al_check "missing.txt: every line of mapping.txt but the chart images" \
	bash -c 'grep -v -e "^docker://$1=" -e "^docker://$2=" "$3/mapping.txt" | cmp -s - "$3/missing.txt" && test "$(wc -l <"$3/missing.txt")" = 10' \
	_ "$IMG_DEMO" "$IMG_LOCAL" "$T/s2/airlock/dry-run"

# --- 4. the real mirror; then what the plan counted is checked against
# what the store holds: every distinct config and layer of the catalog
# image, the images the catalog record names, the chart images and the
# chart artifacts ---
if [ -n "$SHIM" ]; then
	al_run "$T/out" "$T/err" env LD_PRELOAD="$SHIM" AL_FAKE_FREE=8192 \
		"$AIRLOCK" mirror -c "$T/isc.yaml" --store "$T/small"
	cat "$T/err"
	al_check "a selection of a catalog and charts that cannot fit: refused up front, exit 3" test "$AL_RC" = 3
	al_check "the refusal names the plan's figure and the free space" \
		grep -qF "not enough space on '$T/small': the selection needs $needed more bytes, the file system has 8192 bytes free" "$T/err"
	al_check "the refused mirror named nothing and stored no chart" \
		test "$(al_index_digests "$T/small" | grep -c . || true)" = 0
	al_run "$T/out" "$T/err" env LD_PRELOAD="$SHIM" AL_FAKE_FREE=8192 \
		"$AIRLOCK" mirror -c "$T/isc.yaml" --store "$T/s4" --dry-run
	al_check "a dry run that would not fit says so, exit 3" \
		bash -c '[ "$1" = 3 ] && grep -q "the selection does not fit: $3 bytes needed, 8192 bytes free" "$2"' _ "$AL_RC" "$T/err" "$needed"
else
	al_skip_part "free-space check: the statvfs shim does not build here"
fi

al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$T/isc.yaml" --store "$S"
cat "$T/out"
al_check "the real mirror exits 0" test "$AL_RC" = 0
al_check "the bundle and related images of mapping.txt are those the catalog record names" \
	python3 - "$S" "$T/mapping-1.txt" <<'PY'
import json, sys
s, m = sys.argv[1], sys.argv[2]
cat = json.load(open(s + "/airlock/releases.json"))["catalogs"][0]
want = sorted("docker://" + i for i in cat["images"])
got = sorted(l.split("=")[0] for l in open(m) if "/example/" in l and "@sha256:" in l.split("=")[0])
assert got == want, (got, want)
PY
al_check "the plan's bytes to transfer are the distinct blobs of all it names ($plan_blobs, $plan_bytes)" \
	python3 - "$S" "$T/src" "$SAMPLES" "$plan_blobs" "$plan_bytes" "$IMG_DEMO" "$IMG_LOCAL" <<'PY'
import json, sys
s, src, samples, nb, nbytes, i1, i2 = sys.argv[1:]
def blob(root, d):
    return json.load(open(root + "/blobs/sha256/" + d.split(":")[1]))
def named(root, name):
    for m in json.load(open(root + "/index.json"))["manifests"]:
        if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == name:
            return m["digest"]
    raise SystemExit("no %s in %s" % (name, root))
seen = {}
def add(root, digest):
    man = blob(root, digest)
    for c in man.get("manifests", []):
        add(root, c["digest"])
    for d in ([man["config"]] if "config" in man else []) + man.get("layers", []):
        seen[d["digest"]] = d["size"]
add(src, named(src, "quay.io/example/catalog:v1"))
for i in json.load(open(s + "/airlock/releases.json"))["catalogs"][0]["images"]:
    add(src, i.split("@")[1])
for i in (i1, i2):
    add(samples, named(samples, i))
for c in ("charts/demo:0.2.0", "charts/local:1.0.0"):
    add(s, named(s, c))
assert (len(seen), sum(seen.values())) == (int(nb), int(nbytes)), (len(seen), sum(seen.values()), nb, nbytes)
PY
al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$T/isc.yaml" --store "$S" --dry-run="$T/after"
al_check "after the mirror: the same mapping.txt, an empty missing.txt, nothing to transfer" \
	bash -c 'cmp -s "$1/mapping.txt" "$2" && test ! -s "$1/missing.txt" && grep -q "^to transfer: 0 blobs, 0 bytes " "$3"' _ "$T/after" "$T/mapping-1.txt" "$T/out"

# --- 5. an oci:// chart: resolved, then read held (its chart layer names
# its images), the chart artifact stored above served from a layout ---
al_run "$T/out" "$T/err" "$AIRLOCK" copy "oci:$S:charts/demo:0.2.0" "oci:$T/ocichart:charts.example/ns/demo:0.2.0"
cat >"$T/isc-oci.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  helm:
    repositories:
    - name: reg
      url: oci://charts.example/ns
      charts:
      - name: demo
        version: 0.2.0
airlock:
  sources:
    - prefix: charts.example/ns
      location: oci:$T/ocichart
    - prefix: quay.io/airlock-samples
      location: oci:$SAMPLES
EOF
al_run "$T/out" "$T/err" "$AIRLOCK" mirror -c "$T/isc-oci.yaml" --store "$T/s6" --dry-run
cat "$T/out" "$T/err"
al_check "oci:// chart: the chart and its image in mapping.txt" \
	bash -c '[ "$1" = 0 ] && diff <(printf "%s\n" "docker://charts.example/ns/demo:0.2.0=oci:$2:charts.example/ns/demo:0.2.0" "docker://$3=oci:$2:$3") "$2/airlock/dry-run/mapping.txt"' \
	_ "$AL_RC" "$T/s6" "$IMG_DEMO"
chart_blobs=$(python3 - "$T/ocichart" <<'PY2'
import json, sys
root = sys.argv[1]
m = json.load(open(root + "/index.json"))["manifests"][0]
man = json.load(open(root + "/blobs/sha256/" + m["digest"].split(":")[1]))
print(sum(d["size"] for d in [man["config"]] + man["layers"]))
PY2
)
al_check "oci:// chart: what the plan fetched is the chart's config and layer ($chart_blobs bytes)" \
	grep -q "already fetched by the plan: $chart_blobs bytes" "$T/out"
al_check "oci:// chart: the dry run named nothing" \
	test "$(al_index_digests "$T/s6" | grep -c . || true)" = 0

# --- 6. output options are checked before any network work: a source
# that accepts connections and never answers would hang the mirror ---
python3 - "$T/hang.port" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
time.sleep(120)
PY
AL_PIDS+=("$!")
for _ in $(seq 1 50); do [ -s "$T/hang.port" ] && break; sleep 0.1; done
HANG=127.0.0.1:$(cat "$T/hang.port")
start=$(date +%s)
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --store "$T/s5" \
	--cluster-resources "$T/cr" --registry 'mirror.example/UPPER' "docker://$HANG/r/release:1"
took=$(($(date +%s) - start))
cat "$T/err"
al_check "mirror --cluster-resources with a bad --registry: exit 2 naming it, in ${took}s (no network)" \
	bash -c '[ "$1" = 2 ] && grep -qF "mirror.example/UPPER" "$2" && [ "$3" -lt 5 ] && [ ! -e "$4" ]' _ "$AL_RC" "$T/err" "$took" "$T/s5"
touch "$T/a-file"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --store "$T/s5" \
	--cluster-resources "$T/a-file" "docker://$HANG/r/release:1"
al_check "mirror --cluster-resources naming a file: exit 2 at once" \
	bash -c '[ "$1" = 2 ] && grep -qF -- "--cluster-resources '"'"'$3'"'"'" "$2"' _ "$AL_RC" "$T/err" "$T/a-file"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --store "$T/s5" \
	--dry-run="$T/a-file/plan" "docker://$HANG/r/release:1"
al_check "mirror --dry-run=DIR under a file: exit 2 at once" \
	bash -c '[ "$1" = 2 ] && grep -qF -- "--dry-run" "$2"' _ "$AL_RC" "$T/err"
al_run "$T/out" "$T/err" bash -c 'cd "$1" && shift && exec "$@"' _ "$T" "$AIRLOCK" mirror --store "$T/s7" \
	--image "oci:$SAMPLES:$IMG_DEMO" --dry-run=q/plan
al_check "mirror --dry-run=q/plan (relative, to be created): accepted" \
	bash -c '[ "$1" = 0 ] && [ -s "$2/q/plan/mapping.txt" ]' _ "$AL_RC" "$T"
start=$(date +%s)
al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$S" --cluster-resources "$T/a-file" "docker://$HANG/mirror"
took=$(($(date +%s) - start))
al_check "push --cluster-resources naming a file: exit 2 in ${took}s, before the push" \
	bash -c '[ "$1" = 2 ] && grep -qF -- "--cluster-resources" "$2" && [ "$3" -lt 5 ]' _ "$AL_RC" "$T/err" "$took"
al_finish
