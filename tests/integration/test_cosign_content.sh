#!/usr/bin/env bash
# test_cosign_content.sh: airlock mirror carries the sigstore (cosign)
# al-tier: slow
# signatures of operator catalogs and Helm charts, not only of releases and
# additional images: a generated catalog (mkcatalog.py --images) and a
# local chart whose image is signed, in a loopback docker-registry read
# through airlock.sources, the catalog image, one related image and the
# chart's image signed with cosign_push.py (a cosign ".sig" tag, and for
# the catalog also a sigstore bundle referrer). Checks: what is looked up
# and carried (counts worked out by hand), the signatures in the store by
# their tags, verified from the store, pushed with their digests and
# verified at the mirror; a ClusterImagePolicy accepting the signed
# catalog-related images and refusing an unsigned bundle (exit 1), and
# --allow-unsigned turning that into a warning.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v openssl >/dev/null || al_skip "openssl not installed"
command -v python3 >/dev/null || al_skip "python3 not installed"
command -v skopeo >/dev/null || al_skip "skopeo not installed"
[ -x "${AL_REGISTRY_BIN:-/usr/bin/docker-registry}" ] || al_skip "docker-registry not installed"

PUSH=(python3 "$AL_TOOLS/cosign_push.py")
al_start_registry "$T/reg"
R=$REG_ADDR
cd "$T"
for k in k other; do
	openssl ecparam -name prime256v1 -genkey -noout -out $k.key 2>/dev/null
	openssl pkey -in $k.key -pubout -out $k.pub
done

# --- the sources: the catalog and its images at $R/example/..., the chart
# image at $R/registry.example/demo/app ---
python3 "$AL_TOOLS/mkcatalog.py" "$T/src" quay.io/example/catalog:v1 --images >/dev/null
al_push_layout "$T/src" "$R"
mdig() { # REPO REF -> the manifest digest the registry serves
	curl -sfI -H "Accept: application/vnd.oci.image.manifest.v1+json" \
		"http://$R/v2/$1/manifests/$2" | tr -d '\r' | sed -n 's/^Docker-Content-Digest: //Ip'
}
CAT=$(mdig example/catalog v1)
KRP_TAG=$(al_layout_names "$T/src" | sed -n 's|^quay.io/example/openshift4/kube-rbac-proxy:||p')
KRP=$(mdig example/openshift4/kube-rbac-proxy "$KRP_TAG")
APP=$("${PUSH[@]}" image "$R" registry.example/demo/app 1.0)
al_check "the sources are in the registry" [ -n "$CAT" ] && [ -n "$KRP" ] && [ -n "$APP" ]
"${PUSH[@]}" sig "$R" example/catalog "$CAT" k.key quay.io/example/catalog >/dev/null
"${PUSH[@]}" referrers "$R" example/catalog "$CAT" k.key quay.io/example/catalog >/dev/null
"${PUSH[@]}" sig "$R" example/openshift4/kube-rbac-proxy "$KRP" k.key \
	quay.io/example/openshift4/kube-rbac-proxy >/dev/null
"${PUSH[@]}" sig "$R" registry.example/demo/app "$APP" k.key registry.example/demo/app >/dev/null

cat >demo.json <<EOF
{"out": "$T/cfg/charts/demo-0.1.0.tgz", "files": [
 ["demo/Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.1.0\n"],
 ["demo/values.yaml", "image: registry.example/demo/app:1.0\n"]]}
EOF
mkdir -p "$T/cfg/charts"
python3 "$AL_TOOLS/mkchart.py" demo.json
isc() { # FILE: package alpha of the catalog, the local chart
	cat >"$1" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
  - catalog: docker://quay.io/example/catalog:v1
    targetTag: v1-filtered
    packages:
    - name: alpha
  helm:
    local:
    - name: demo
      path: charts/demo-0.1.0.tgz
airlock:
  insecureRegistries: [$R]
  sources:
  - {prefix: quay.io/example, location: "docker://$R/example"}
  - {prefix: registry.example, location: "docker://$R/registry.example"}
EOF
}
isc "$T/cfg/isc.yaml"

# --- 1. mirror: the signatures come with the catalog, its images, the
# chart's image ---
S=$T/store
al_run m1.out m1.err "$AIRLOCK" mirror --config "$T/cfg/isc.yaml" --store "$S"
al_check "mirror of a catalog and a chart exits 0 (exit $AL_RC)" [ "$AL_RC" = 0 ]
[ "$AL_RC" = 0 ] || cat m1.err
# by hand: looked up = the source catalog, the 7 images of package alpha
# and its dependency beta (3 bundles and 3 operators, kube-rbac-proxy
# once: test_mirror_operators.sh), the chart's 1 image: 9; carried = the
# catalog's .sig and referrer, kube-rbac-proxy's .sig, the app's .sig: 4;
# 6 images have none. The rebuilt catalog is not looked up (airlock made
# it), nor the chart from a local archive.
al_check "9 images looked up, 4 signature artifacts carried, 6 unsigned" \
	grep -q "sigstore: carried 4 signature artifact(s) of 9 image(s), 6 without any signature" m1.err
names() { python3 -c "import json,sys; print('\n'.join(m.get('annotations',{}).get('org.opencontainers.image.ref.name','') for m in json.load(open(sys.argv[1]+'/index.json'))['manifests']))" "$1"; }
names "$S" >names.txt
al_check "the source catalog's .sig is in the store by its tag" \
	grep -qx "quay.io/example/catalog:sha256-${CAT#sha256:}.sig" names.txt
al_check "the source catalog's referrers index is in the store" \
	grep -qx "quay.io/example/catalog:sha256-${CAT#sha256:}" names.txt
al_check "the related image's .sig is in the store" \
	grep -qx "quay.io/example/openshift4/kube-rbac-proxy:sha256-${KRP#sha256:}.sig" names.txt
al_check "the chart image's .sig is in the store" \
	grep -qx "registry.example/demo/app:sha256-${APP#sha256:}.sig" names.txt
REB=$(al_digest_of "$S" quay.io/example/catalog:v1-filtered)
al_check "the rebuilt catalog is named, and got no signature (no one signed its digest)" \
	bash -c "[ -n '$REB' ] && ! grep -q 'sha256-${REB#sha256:}' names.txt"
al_check "the carried .sig keeps the registry's digest" [ \
	"$(al_digest_of "$S" "quay.io/example/catalog:sha256-${CAT#sha256:}.sig")" = \
	"$(mdig example/catalog "sha256-${CAT#sha256:}.sig")" ]
VS=("$AIRLOCK" verify-image --store "$S" --key k.pub)
al_run o e "${VS[@]}" quay.io/example/catalog:v1
al_check "the source catalog verifies from the store (cosign tag)" grep -q "verified (signature 1, cosign tag" o
al_run o e "${VS[@]}" --attachments referrers quay.io/example/catalog:v1
al_check "... and by its bundle referrer" grep -q "verified (signature 1, bundle" o
al_run o e "${VS[@]}" "quay.io/example/openshift4/kube-rbac-proxy@$KRP"
al_check "the related image verifies from the store" grep -q "verified (signature 1, cosign tag" o
al_run o e "${VS[@]}" registry.example/demo/app:1.0
al_check "the chart image verifies from the store" grep -q "verified (signature 1, cosign tag" o
al_run o e "$AIRLOCK" verify-image --store "$S" --key other.pub registry.example/demo/app:1.0
al_check "... and not with another key (exit 1)" [ "$AL_RC" = 1 ]

# --- 2. push: the signatures reach the mirror with their digests ---
al_run p.out p.err "$AIRLOCK" push --store "$S" --tls-verify=false "docker://$R/mirror"
al_check "push exits 0 (exit $AL_RC)" [ "$AL_RC" = 0 ]
[ "$AL_RC" = 0 ] || cat p.err
for pair in "example/catalog sha256-${CAT#sha256:}.sig mirror/example/catalog" \
	"example/openshift4/kube-rbac-proxy sha256-${KRP#sha256:}.sig mirror/example/openshift4/kube-rbac-proxy" \
	"registry.example/demo/app sha256-${APP#sha256:}.sig mirror/demo/app"; do
	set -- $pair
	al_check "pushed $3:$2 keeps its digest" [ "$(mdig "$1" "$2")" = "$(mdig "$3" "$2")" ]
done
VM=("$AIRLOCK" verify-image --tls-verify=false --identity ignore --attachments sig --key k.pub)
al_run o e "${VM[@]}" "docker://$R/mirror/example/catalog@$CAT"
al_check "the pushed source catalog verifies at the mirror" grep -q "^$R/mirror/example/catalog@$CAT: verified (signature 1, cosign tag" o
al_run o e "${VM[@]}" "docker://$R/mirror/demo/app:1.0"
al_check "the pushed chart image verifies at the mirror" grep -q "^$R/mirror/demo/app@$APP: verified (signature 1, cosign tag" o

# --- 3. the image policy covers catalog and chart images too ---
KD=$(base64 -w0 k.pub)
policy() { # FILE SCOPE...
	local f=$1
	shift
	{
		printf 'apiVersion: config.openshift.io/v1\nkind: ClusterImagePolicy\nmetadata: {name: content}\nspec:\n  scopes:\n'
		for s in "$@"; do printf '  - %s\n' "$s"; done
		printf '  policy:\n    rootOfTrust: {policyType: PublicKey, publicKey: {keyData: %s}}\n' "$KD"
		# cosign_push.py signs the repository name (no digest), which
		# the default MatchRepoDigestOrExact refuses for a digest
		# reference (as the cluster does): match the repository
		printf '    signedIdentity: {matchPolicy: MatchRepository}\n'
	} >"$f"
}
policy good.yaml quay.io/example/catalog quay.io/example/openshift4 registry.example/demo
al_run m2.out m2.err "$AIRLOCK" mirror --config "$T/cfg/isc.yaml" --store "$T/store2" --sigstore-policy good.yaml
al_check "a policy over the signed catalog, related and chart images accepts them (exit $AL_RC)" [ "$AL_RC" = 0 ]
[ "$AL_RC" = 0 ] || cat m2.err
al_check "... 3 accepted, 0 refused, 6 not covered" \
	grep -q "sigstore policy: 3 image(s) accepted, 0 refused, 6 not covered" m2.err
policy bad.yaml quay.io/example/catalog quay.io/example/alpha-bundle
al_run m3.out m3.err "$AIRLOCK" mirror --config "$T/cfg/isc.yaml" --store "$T/store3" --sigstore-policy bad.yaml
al_check "a policy over the unsigned bundles refuses the mirror (exit 1, got $AL_RC)" [ "$AL_RC" = 1 ]
al_check "... naming a bundle image" grep -q "quay.io/example/alpha-bundle.*refused by ClusterImagePolicy/content" m3.err
# alpha 1.3.0 and 2.0.0-rc.1: 2 alpha bundles refused, the catalog accepted
al_check "... 1 accepted, 2 refused" grep -q "sigstore policy: 1 image(s) accepted, 2 refused, 6 not covered" m3.err
al_run m4.out m4.err "$AIRLOCK" mirror --config "$T/cfg/isc.yaml" --store "$T/store4" --sigstore-policy bad.yaml --allow-unsigned
al_check "--allow-unsigned: the refusal is a warning (exit $AL_RC)" [ "$AL_RC" = 0 ]
al_check "... said so" grep -q "allowed (--allow-unsigned): .*alpha-bundle" m4.err

al_finish
