#!/usr/bin/env bash
# test_helm.sh: mirror.helm end to end on loopback. A chart repository
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

for img in ghcr.io/stefanprodan/podinfo:5.0.0 docker.io/library/redis:6.0.1 \
	docker.io/library/alpine:3.11 docker.io/stefanprodan/grpc_health_probe:v0.3.0 \
	docker.io/giantswarm/tiny-tools:latest docker.io/curlimages/curl:7.69.0 \
	registry.example/demo/app:1.0 registry.example/demo/side:2; do
	al_check "chart image $img mirrored" al_digest_of "$S" "$img"
done
al_check "the source digest is kept (podinfo image)" [ \
	"$(al_digest_of "$S" ghcr.io/stefanprodan/podinfo:5.0.0)" = \
	"sha256:$("${SKOPEO[@]}" inspect --tls-verify=false --raw docker://$SRC/ghcr.io/stefanprodan/podinfo:5.0.0 | sha256sum | cut -d' ' -f1)" ]
al_check "the include line is listed as not resolved" \
	grep -q "chart demo 0.2.0: image not resolved: templates/deploy.yaml:4" "$T/m1.err"
al_check "nothing unresolved for podinfo" \
	grep -q "chart podinfo 5.0.0: 6 images, 0 not resolved" "$T/m1.err"

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
al_check "platforms is refused (exit $AL_RC)" [ "$AL_RC" = 2 ]
al_check "... with file:line" grep -q "refuse.yaml:10:9: 'platforms'" "$T/m6.err"

al_finish
