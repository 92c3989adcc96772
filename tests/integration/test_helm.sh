#!/usr/bin/env bash
# test_helm.sh: mirror.helm end to end on loopback. A chart repository
# al-tier: slow
# (python3 -m http.server over a temp dir) serves a generated chart and the
# real service-binding-operator repository (tests/data/helm/repo), a local
# chart is the real podinfo 5.0.0, and a docker-registry holds the images
# the charts name (airlock.sources sends ghcr.io, docker.io, quay.io and
# registry.example there). Checks: charts stored as Helm OCI artifacts
# (config and layer media types, the layer is the archive byte for byte),
# their images mirrored, what could not be resolved listed, a wrong index
# digest refused, push keeps every digest, and the pushed chart read back
# as an oci:// chart gives the same manifest.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

command -v skopeo >/dev/null || al_skip "skopeo not installed"
[ -x "$AL_REGISTRY_BIN" ] || al_skip "docker-registry not installed"
command -v python3 >/dev/null || al_skip "python3 not installed"

DATA=$AL_SOURCE_DIR/tests/data/helm
SAMPLES=$AL_SOURCE_DIR/samples/layout

# --- the source registry: six small images under the charts' names ---
al_start_registry "$T/reg"
SRC=$REG_ADDR
mapfile -t COMP < <(al_layout_names "$SAMPLES" | grep '@sha256:' | head -6)
put() { # put SAMPLE-INDEX NAME
	"${SKOPEO[@]}" copy -q --dest-tls-verify=false \
		"oci:$SAMPLES:${COMP[$1]}" "docker://$SRC/$2"
}
put 0 ghcr.io/stefanprodan/podinfo:5.0.0
put 1 docker.io/library/redis:6.0.1
put 2 docker.io/library/alpine:3.11
put 3 docker.io/stefanprodan/grpc_health_probe:v0.3.0
put 4 docker.io/giantswarm/tiny-tools:latest
put 5 docker.io/curlimages/curl:7.69.0
put 0 registry.example/demo/app:1.0
put 1 registry.example/demo/side:2

# --- the chart repository: /demo (generated) and /sbo (real) ---
WEB=$T/web
mkdir -p "$WEB/demo" "$WEB/sbo" "$WEB/bad"
cp "$DATA"/repo/* "$WEB/sbo/"
cat >"$T/demo.json" <<EOF
{"out": "$WEB/demo/demo-0.2.0.tgz", "files": [
 ["demo/Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.2.0\nappVersion: \"1.0\"\ndescription: a demo chart\n"],
 ["demo/values.yaml", "image:\n  repository: registry.example/demo/app\n  tag: \"\"\nside:\n  image: registry.example/demo/side:2\n"],
 ["demo/templates/deploy.yaml", "spec:\n  containers:\n  - image: \"{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}\"\n  - image: {{ include \"demo.helper\" . }}\n"]
]}
EOF
python3 "$AL_TOOLS/mkchart.py" "$T/demo.json"
cat >"$T/demo-old.json" <<EOF
{"out": "$WEB/demo/demo-0.1.0.tgz", "files": [
 ["demo/Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.1.0\n"]]}
EOF
python3 "$AL_TOOLS/mkchart.py" "$T/demo-old.json"
D2=$(sha256sum "$WEB/demo/demo-0.2.0.tgz" | cut -d' ' -f1)
D1=$(sha256sum "$WEB/demo/demo-0.1.0.tgz" | cut -d' ' -f1)
cat >"$WEB/demo/index.yaml" <<EOF
apiVersion: v1
entries:
  demo:
  - {name: demo, version: 0.1.0, urls: [demo-0.1.0.tgz], digest: $D1}
  - {name: demo, version: 0.3.0-rc.1, urls: [demo-0.3.0-rc.1.tgz]}
  - {name: demo, version: 0.2.0, urls: [demo-0.2.0.tgz], digest: $D2}
EOF
cp "$WEB/demo/demo-0.2.0.tgz" "$WEB/bad/"
sed "s/$D2/$(printf '0%.0s' $(seq 64))/" "$WEB/demo/index.yaml" >"$WEB/bad/index.yaml"

HPORT=$(al_free_port)
(cd "$WEB" && exec python3 -m http.server --bind 127.0.0.1 "$HPORT") \
	>"$T/http.log" 2>&1 &
HTTP_PID=$!
AL_PIDS+=("$HTTP_PID")
for _ in $(seq 1 50); do
	curl -fsS "http://127.0.0.1:$HPORT/demo/index.yaml" >/dev/null 2>&1 && break
	sleep 0.1
done
HURL=http://127.0.0.1:$HPORT

sources() {
	cat <<EOF
airlock:
  insecureRegistries: [$SRC]
  sources:
  - {prefix: ghcr.io, location: "docker://$SRC/ghcr.io"}
  - {prefix: docker.io, location: "docker://$SRC/docker.io"}
  - {prefix: quay.io, location: "docker://$SRC/quay.io"}
  - {prefix: registry.example, location: "docker://$SRC/registry.example"}
EOF
}

mkdir -p "$T/cfg/charts"
cp "$DATA/podinfo-5.0.0.tgz" "$T/cfg/charts/"
{
	cat <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  helm:
    repositories:
    - name: demo
      url: $HURL/demo
      charts:
      - name: demo
    local:
    - name: podinfo
      path: charts/podinfo-5.0.0.tgz
EOF
	sources
} >"$T/cfg/isc.yaml"

# --- 1. mirror: local podinfo + demo (no version: 0.2.0, not the rc) ---
S=$T/store
al_run "$T/m1.out" "$T/m1.err" "$AIRLOCK" mirror --config "$T/cfg/isc.yaml" --store "$S"
al_check "mirror of helm charts exits 0 (exit $AL_RC)" [ "$AL_RC" = 0 ]
[ "$AL_RC" = 0 ] || cat "$T/m1.err"
al_check "podinfo named charts/podinfo:5.0.0" al_digest_of "$S" charts/podinfo:5.0.0
al_check "demo: the latest stable version (0.2.0, not 0.3.0-rc.1)" \
	al_digest_of "$S" charts/demo:0.2.0

artifact_ok() { # STORE NAME ARCHIVE: a Helm OCI artifact whose layer is ARCHIVE
	python3 - "$1" "$2" "$3" <<'EOF'
import hashlib, json, os, sys
store, name, archive = sys.argv[1:4]
idx = json.load(open(os.path.join(store, "index.json")))
d = [m for m in idx["manifests"]
     if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == name][0]
blob = lambda dg: os.path.join(store, "blobs", *dg.split(":"))
m = json.load(open(blob(d["digest"])))
assert m["schemaVersion"] == 2
assert m["config"]["mediaType"] == "application/vnd.cncf.helm.config.v1+json", m
cfg = json.load(open(blob(m["config"]["digest"])))
assert len(m["layers"]) == 1
l = m["layers"][0]
assert l["mediaType"] == "application/vnd.cncf.helm.chart.content.v1.tar+gzip", l
data = open(archive, "rb").read()
assert l["digest"] == "sha256:" + hashlib.sha256(data).hexdigest(), "layer is not the archive"
assert l["size"] == len(data)
a = m["annotations"]
assert a["org.opencontainers.image.title"] == cfg["name"]
assert a["org.opencontainers.image.version"] == cfg["version"]
assert "org.opencontainers.image.created" in a
EOF
}
al_check "podinfo is a Helm OCI artifact holding the archive" \
	artifact_ok "$S" charts/podinfo:5.0.0 "$DATA/podinfo-5.0.0.tgz"
al_check "demo is a Helm OCI artifact holding the archive" \
	artifact_ok "$S" charts/demo:0.2.0 "$WEB/demo/demo-0.2.0.tgz"
al_check "skopeo reads the chart from the store" \
	"${SKOPEO[@]}" inspect --raw "oci:$S:charts/podinfo:5.0.0"

for img in ghcr.io/stefanprodan/podinfo:5.0.0 \
	registry.example/demo/app:1.0 registry.example/demo/side:2; do
	al_check "chart image $img mirrored" al_digest_of "$S" "$img"
done
# what oc-mirror renders with podinfo's values (its own test expects the
# podinfo image alone): redis is off (redis.enabled: false), the tests/
# pods are helm.sh/hook: test
for img in docker.io/library/redis:6.0.1 docker.io/library/alpine:3.11 \
	docker.io/curlimages/curl:7.69.0; do
	al_check "chart image $img (off in values, or a test hook) not mirrored" \
		bash -c '! grep -qF "\"$1\"" "$2/index.json"' _ "$img" "$S"
done
al_check "the source digest is kept (podinfo image)" [ \
	"$(al_digest_of "$S" ghcr.io/stefanprodan/podinfo:5.0.0)" = \
	"sha256:$("${SKOPEO[@]}" inspect --tls-verify=false --raw docker://$SRC/ghcr.io/stefanprodan/podinfo:5.0.0 | sha256sum | cut -d' ' -f1)" ]
al_check "the include line is listed as not resolved" \
	grep -q "chart demo 0.2.0: image not resolved: templates/deploy.yaml:4" "$T/m1.err"
al_check "nothing unresolved for podinfo" \
	grep -q "chart podinfo 5.0.0: 1 images, 0 not resolved" "$T/m1.err"

# --- 1b. the charts as first-class records: catalogs, inventory, packs ---
al_run "$T/cats" "$T/cats.err" "$AIRLOCK" catalogs --store "$S"
al_check "catalogs exits 0 (exit $AL_RC)" [ "$AL_RC" = 0 ]
al_check "no catalogs: the charts table alone" \
	bash -c "head -1 '$T/cats' | grep -q '^CHART  *VERSION  *DIGEST  *IMAGES  *UNRESOLVED  *PACK  *NAME  *SOURCE$'"
PD=$(al_digest_of "$S" charts/podinfo:5.0.0)
DD=$(al_digest_of "$S" charts/demo:0.2.0)
# by hand: demo sorts before podinfo; demo 0.2.0 has 2 images (app:1.0
# from the template line, side:2) and 2 unresolved (the values map with an
# empty tag, the include line); podinfo 6 and 0
al_check "catalogs lists demo 0.2.0: digest, 2 images, 2 unresolved, no pack, its URL" \
	bash -c "sed -n 2p '$T/cats' | grep -Eq '^demo +0\.2\.0 +$DD +2 +2 +- +charts/demo:0\.2\.0 +$HURL/demo/demo-0\.2\.0\.tgz$'"
al_check "catalogs lists podinfo 5.0.0: 1 image, 0 unresolved, the local path" \
	bash -c "sed -n 3p '$T/cats' | grep -Eq '^podinfo +5\.0\.0 +$PD +1 +0 +- +charts/podinfo:5\.0\.0 +$T/cfg/charts/podinfo-5\.0\.0\.tgz$'"
al_check "two charts, nothing more" [ "$(wc -l <"$T/cats")" = 3 ]
al_run "$T/inv" "$T/inv.err" "$AIRLOCK" inventory --store "$S" --json
al_check "inventory --json counts the charts" [ "$(jq -r .charts "$T/inv")" = 2 ]
al_check "inventory names each chart with its digest, chart and version" \
	[ "$(jq -c '[.inventory.charts[] | [.name, .digest, .chart, .version]] | sort' "$T/inv")" = \
	"$(jq -nc --arg p "$PD" --arg d "$DD" '[["charts/demo:0.2.0",$d,"demo","0.2.0"],["charts/podinfo:5.0.0",$p,"podinfo","5.0.0"]]')" ]
al_check "the record keeps the images found" \
	[ "$(jq -c '.charts[] | select(.chart == "demo") | .images' "$S/airlock/releases.json")" = \
	'["registry.example/demo/app:1.0","registry.example/demo/side:2"]' ]
al_check "pack the store with its charts" "$AIRLOCK" pack -q --store "$S" -o "$T/vol"
PACKID=$(ls "$S/airlock/packs" | sed -n 's/\.json$//p' | head -1)
al_check "unpack it on the other side" "$AIRLOCK" unpack --accept-untrusted -q "$T/vol" --store "$T/far"
al_run "$T/fcats" "$T/fcats.err" "$AIRLOCK" catalogs --store "$T/far"
al_check "the far store lists the same charts" \
	[ "$(awk 'NR>1{print $1, $2, $3}' "$T/fcats")" = "$(awk 'NR>1{print $1, $2, $3}' "$T/cats")" ]
al_run "$T/cats2" "$T/cats2.err" "$AIRLOCK" catalogs --store "$S"
al_check "PACK names the pack that carried each chart" \
	[ "$(awk 'NR>1{print $6}' "$T/cats2" | sort -u)" = "$PACKID" ]
al_run "$T/finv" "$T/finv.err" "$AIRLOCK" inventory --store "$T/far"
al_check "the far store's inventory names the charts" \
	[ "$(jq -r '[.charts[].name] | sort | join(" ")' "$T/finv")" = "charts/demo:0.2.0 charts/podinfo:5.0.0" ]

# --- 2. push: every digest kept ---
al_start_registry "$T/dst"
DST=$REG_ADDR
al_run "$T/p.out" "$T/p.err" "$AIRLOCK" push --store "$S" --tls-verify=false "docker://$DST/mirror"
al_check "push exits 0 (exit $AL_RC)" [ "$AL_RC" = 0 ]
[ "$AL_RC" = 0 ] || cat "$T/p.err"
for pair in "charts/podinfo:5.0.0 mirror/charts/podinfo:5.0.0" \
	"charts/demo:0.2.0 mirror/charts/demo:0.2.0" \
	"ghcr.io/stefanprodan/podinfo:5.0.0 mirror/stefanprodan/podinfo:5.0.0"; do
	set -- $pair
	want=$(al_digest_of "$S" "$1")
	got="sha256:$("${SKOPEO[@]}" inspect --tls-verify=false --raw "docker://$DST/$2" | sha256sum | cut -d' ' -f1)"
	al_check "pushed $1 keeps its digest" [ "$want" = "$got" ]
done

# --- 3. the pushed chart as an oci:// chart into a new store ---
cat >"$T/cfg/oci.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  helm:
    repositories:
    - name: pushed
      url: oci://$DST/mirror/charts
      charts:
      - name: podinfo
      - name: demo
        version: 0.2.0
airlock:
  insecureRegistries: [$DST]
  sources:
  - {prefix: ghcr.io, location: "docker://$SRC/ghcr.io"}
  - {prefix: docker.io, location: "docker://$SRC/docker.io"}
  - {prefix: registry.example, location: "docker://$SRC/registry.example"}
  - {prefix: $SRC, location: "docker://$SRC"}
EOF
S3=$T/store3
al_run "$T/m3.out" "$T/m3.err" "$AIRLOCK" mirror --config "$T/cfg/oci.yaml" --store "$S3" --tls-verify=false
al_check "mirror of oci:// charts exits 0 (exit $AL_RC)" [ "$AL_RC" = 0 ]
[ "$AL_RC" = 0 ] || cat "$T/m3.err"
al_check "oci:// podinfo (latest tag) has the digest it was pushed with" [ \
	"$(al_digest_of "$S3" "$DST/mirror/charts/podinfo:5.0.0")" = "$(al_digest_of "$S" charts/podinfo:5.0.0)" ]
al_check "oci:// demo 0.2.0 has the digest it was pushed with" [ \
	"$(al_digest_of "$S3" "$DST/mirror/charts/demo:0.2.0")" = "$(al_digest_of "$S" charts/demo:0.2.0)" ]
al_check "oci:// chart images mirrored too" al_digest_of "$S3" registry.example/demo/app:1.0

# --- 4. the real service-binding-operator repository ---
cat >"$T/cfg/sbo.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  helm:
    repositories:
    - name: sbo
      url: $HURL/sbo/
      charts:
      - name: service-binding-operator
        version: 1.3.3
      - name: service-binding-operator
EOF
sources >>"$T/cfg/sbo.yaml"
S4=$T/store4
al_run "$T/m4.out" "$T/m4.err" "$AIRLOCK" mirror --config "$T/cfg/sbo.yaml" --store "$S4"
# the chart's images are pinned by digest at quay.io: the loopback
# registry does not have them, so they fail and are named
al_check "sbo: images it cannot get make the mirror fail (exit $AL_RC)" [ "$AL_RC" = 3 ]
al_check "sbo 1.3.3 stored, layer = the archive the index names" \
	artifact_ok "$S4" charts/service-binding-operator:1.3.3 "$DATA/repo/service-binding-operator-1.3.3.tgz"
al_check "sbo without version: 1.4.1" \
	artifact_ok "$S4" charts/service-binding-operator:1.4.1 "$DATA/repo/service-binding-operator-1.4.1.tgz"
al_check "the missing pinned image is named" \
	grep -q "quay.io/redhat-developer/servicebinding-operator@sha256:16286ac8" "$T/m4.err"
al_check "the values image without tag is listed as not resolved" \
	grep -q "image not resolved: values.yaml:1 image (repository without tag or digest): quay.io/redhat-developer" "$T/m4.err"

# --- 5. an index whose digest does not match the archive ---
sed "s|$HURL/demo|$HURL/bad|" "$T/cfg/isc.yaml" | grep -v 'podinfo' | grep -v 'local:' >"$T/cfg/bad.yaml"
al_run "$T/m5.out" "$T/m5.err" "$AIRLOCK" mirror --config "$T/cfg/bad.yaml" --store "$T/store5"
al_check "a wrong index digest fails the mirror (exit $AL_RC)" [ "$AL_RC" != 0 ]
al_check "... saying what the index says" grep -q "the index says sha256:0000" "$T/m5.err"
al_check "... and the chart is not named" bash -c "! grep -q charts/demo '$T/store5/index.json'"

# --- 6. refusals with position ---
printf 'kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  helm:\n    repositories:\n    - name: r\n      url: %s\n      charts:\n      - name: demo\n        platforms: [linux/amd64]\n' "$HURL" >"$T/cfg/refuse.yaml"
al_run "$T/m6.out" "$T/m6.err" "$AIRLOCK" mirror --config "$T/cfg/refuse.yaml" --store "$T/store6"
al_check "platforms not written as {os, architecture} is refused (exit $AL_RC)" [ "$AL_RC" = 2 ]
al_check "... with file:line" grep -q "refuse.yaml:10:[0-9]*: mirror.helm.repositories\[\].charts\[\].platforms\[\] must be" "$T/m6.err"

# --- 7. a local chart directory (oc-mirror: loader.Load of a directory) ---
# The real podinfo 5.0.0 unpacked, with files its own .helmignore drops
# (.git/, *.bak), a path relative to the config file.
C7=$T/cfg7
mkdir -p "$C7/charts"
tar -xzf "$DATA/podinfo-5.0.0.tgz" -C "$C7/charts"
mkdir -p "$C7/charts/podinfo/.git"
echo junk >"$C7/charts/podinfo/.git/config"
echo junk >"$C7/charts/podinfo/values.yaml.bak"
echo junk >"$C7/charts/podinfo/templates/.hidden.yaml"
{
	printf 'kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  helm:\n    local:\n    - name: podinfo-dir\n      path: charts/podinfo\n'
	sources
} >"$C7/isc.yaml"
S7=$T/store7
# from another directory: the path is relative to the config file
pushd / >/dev/null
al_run "$T/m7.out" "$T/m7.err" "$AIRLOCK" mirror --config "$C7/isc.yaml" --store "$S7"
popd >/dev/null
al_check "mirror of a chart directory exits 0 (exit $AL_RC)" [ "$AL_RC" = 0 ]
[ "$AL_RC" = 0 ] || cat "$T/m7.err"
al_check "the directory chart is named charts/podinfo:5.0.0" al_digest_of "$S7" charts/podinfo:5.0.0
al_check "its images found as from the archive" \
	grep -q "chart podinfo 5.0.0: 1 images, 0 not resolved" "$T/m7.err"
al_check "its images mirrored" al_digest_of "$S7" ghcr.io/stefanprodan/podinfo:5.0.0
al_check "its record names the directory as the source" \
	[ "$(jq -r '.charts[0].source' "$S7/airlock/releases.json")" = "$C7/charts/podinfo" ]
dir_layer() { # STORE NAME -> the chart layer's blob path
	python3 - "$1" "$2" <<'EOF2'
import json, os, sys
store, name = sys.argv[1:3]
idx = json.load(open(os.path.join(store, "index.json")))
d = [m for m in idx["manifests"]
     if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == name][0]
blob = lambda dg: os.path.join(store, "blobs", *dg.split(":"))
m = json.load(open(blob(d["digest"])))
assert m["config"]["mediaType"] == "application/vnd.cncf.helm.config.v1+json"
assert m["layers"][0]["mediaType"] == "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
print(blob(m["layers"][0]["digest"]))
EOF2
}
L7=$(dir_layer "$S7" charts/podinfo:5.0.0 || true)
al_check "the directory is stored as a Helm chart artifact" [ -n "$L7" ]
al_check "the packaged chart holds the archive's files, no more (.helmignore, templates/.?*)" \
	diff <(tar -tzf "$DATA/podinfo-5.0.0.tgz" | sort) <(tar -tzf "$L7" | sort)
al_check "Chart.yaml comes first, byte for byte" \
	bash -c "[ \"\$(tar -tzf '$L7' | head -1)\" = podinfo/Chart.yaml ] && tar -xzOf '$L7' podinfo/Chart.yaml | cmp -s - '$C7/charts/podinfo/Chart.yaml'"
al_run "$T/m7b.out" "$T/m7b.err" "$AIRLOCK" mirror --config "$C7/isc.yaml" --store "$T/store7b"
al_check "packaging the same directory twice gives the same chart digest" [ \
	"$(al_digest_of "$T/store7b" charts/podinfo:5.0.0)" = "$(al_digest_of "$S7" charts/podinfo:5.0.0)" ]

# hostile directories: refused, naming the path
ln -s /etc/passwd "$C7/charts/podinfo/templates/evil.yaml"
al_run "$T/m7c.out" "$T/m7c.err" "$AIRLOCK" mirror --config "$C7/isc.yaml" --store "$T/store7c"
al_check "a symbolic link out of the chart fails the mirror (exit $AL_RC)" [ "$AL_RC" != 0 ]
al_check "... naming the link and where it leads" \
	grep -q "templates/evil.yaml' is a symbolic link to '/etc/passwd', outside the chart directory" "$T/m7c.err"
al_check "... and no chart is named" bash -c "! grep -q charts/podinfo '$T/store7c/index.json' 2>/dev/null"
rm "$C7/charts/podinfo/templates/evil.yaml"
ln -s ../values.yaml "$C7/charts/podinfo/templates/values-link.yaml"
ln -s .. "$C7/charts/podinfo/templates/loop"
al_run "$T/m7d.out" "$T/m7d.err" "$AIRLOCK" mirror --config "$C7/isc.yaml" --store "$T/store7d"
al_check "a directory link loop inside the chart is bounded (exit $AL_RC)" [ "$AL_RC" != 0 ]
al_check "... by depth, naming the path" grep -q "directories deep" "$T/m7d.err"
rm "$C7/charts/podinfo/templates/loop" "$C7/charts/podinfo/templates/values-link.yaml"
# links that share their target without a loop: 2^15 directory visits
# below 15 real directories, no files
E=$C7/charts/podinfo/empty
mkdir -p "$E"
for i in $(seq 0 14); do
	mkdir -p "$E/d$i"
	ln -s "../d$((i + 1))" "$E/d$i/x"
	ln -s "../d$((i + 1))" "$E/d$i/y"
done
mkdir -p "$E/d15"
al_run "$T/m7h.out" "$T/m7h.err" "$AIRLOCK" mirror --config "$C7/isc.yaml" --store "$T/store7h"
al_check "shared link targets are bounded by visits (exit $AL_RC)" [ "$AL_RC" != 0 ]
al_check "... naming the count" grep -q "more than 10000 files and directories" "$T/m7h.err"
rm -r "$C7/charts/podinfo/empty"
truncate -s 6M "$C7/charts/podinfo/big.bin"
al_run "$T/m7e.out" "$T/m7e.err" "$AIRLOCK" mirror --config "$C7/isc.yaml" --store "$T/store7e"
al_check "a file over 5 MiB is refused (exit $AL_RC)" [ "$AL_RC" != 0 ]
al_check "... naming it" grep -q "chart file 'big.bin' is larger than the maximum file size 5242880" "$T/m7e.err"
rm "$C7/charts/podinfo/big.bin"
mkfifo "$C7/charts/podinfo/fifo"
al_run "$T/m7f.out" "$T/m7f.err" "$AIRLOCK" mirror --config "$C7/isc.yaml" --store "$T/store7f"
al_check "an irregular file is refused as Helm does (exit $AL_RC)" [ "$AL_RC" != 0 ]
al_check "... naming it" grep -q "cannot load irregular file '.*podinfo/fifo'" "$T/m7f.err"
rm "$C7/charts/podinfo/fifo"
rm "$C7/charts/podinfo/Chart.yaml"
al_run "$T/m7g.out" "$T/m7g.err" "$AIRLOCK" mirror --config "$C7/isc.yaml" --store "$T/store7g"
al_check "a directory without Chart.yaml is refused (exit $AL_RC)" [ "$AL_RC" != 0 ]
al_check "... saying so" grep -q "charts/podinfo: Chart.yaml file is missing" "$T/m7g.err"

al_finish
