#!/usr/bin/env bash
# test_mirror_to.sh: mirror --to: registry A -> store -> registry B in one command (digests and tags checked with skopeo), a destination down and a kill -9 both resumed by a rerun, the push record for mirrorsets, the bundled samples into a loopback registry.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

seed=${AL_TEST_SEED:-$(($(date +%s) % 100000))}
echo "seed: $seed (set AL_TEST_SEED=$seed to repeat)"
release=quay.io/airlock-samples/release:4.14.1-x86_64

# ------------------------------------------------------------ source A
al_start_registry "$T/regA"
A=$REG_ADDR
python3 "$AL_TOOLS/mkrelease.py" --out "$T/release" --components 8 \
	--layer-size 1500000 --base-size 1000000 --gzip-level 1 --seed "to-$seed" >/dev/null
al_check "synthetic release (8 components) pushed to registry A" al_push_layout "$T/release" "$A"
cat >"$T/imageset.yaml" <<YAML
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

# on_b REGISTRY PREFIX LAYOUT: every image of LAYOUT is on REGISTRY under
# PREFIX with the same manifest bytes (components by digest, the release by
# its tag), and each component also under its sha256-<hex> tag.
on_b() {
	local reg=$1 prefix=$2 layout=$3 bad=0 seen=0 name digest repo raw tags
	while read -r name digest; do
		repo=${name#quay.io/}
		case $name in
		*@*)
			repo=${repo%@*}
			raw=$("${SKOPEO[@]}" inspect --raw --tls-verify=false \
				"docker://$reg/$prefix/$repo@$digest" 2>/dev/null | sha256sum | cut -d' ' -f1)
			tags=$("${SKOPEO[@]}" list-tags --tls-verify=false "docker://$reg/$prefix/$repo" 2>/dev/null || true)
			grep -q "\"${digest/:/-}\"" <<<"$tags" || { echo "  $name: no ${digest/:/-} tag"; bad=1; }
			;;
		*)
			raw=$("${SKOPEO[@]}" inspect --raw --tls-verify=false \
				"docker://$reg/$prefix/$repo" 2>/dev/null | sha256sum | cut -d' ' -f1)
			;;
		esac
		seen=$((seen + 1))
		[ "sha256:$raw" = "$digest" ] || { echo "  $name: got sha256:$raw, want $digest"; bad=1; }
	done < <(al_index_digests "$layout")
	echo "  $seen images checked on $reg/$prefix"
	[ "$bad" = 0 ] && [ "$seen" -gt 1 ]
}

# ------------------------------------------- the destination is down
down=127.0.0.1:$(al_free_port)
store=$T/store
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --config "$T/imageset.yaml" --store "$store" \
	--tls-verify=false --to "docker://$down/mirror"
cat "$T/out" "$T/err"
al_check "destination down: exit 3" test "$AL_RC" = 3
al_check "destination down: the mirror itself completed (summary line)" \
	grep -qE '^mirrored 1 releases, 9 images: transferred [1-9][0-9]* blobs' "$T/out"
al_check "destination down: the store holds the release and its components" \
	al_same_index "$T/release" "$store"
al_check "destination down: the error names the registry" grep -q "$down" "$T/err"
al_check "destination down: it says a rerun resumes" grep -q "the same command again resumes it" "$T/err"
al_check "destination down: no push recorded" test ! -e "$store/airlock/pushes.json"

# ---------------------------------------- the destination is up: rerun
al_start_registry "$T/regB"
B=$REG_ADDR
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --config "$T/imageset.yaml" --store "$store" \
	--tls-verify=false --to "docker://$B/mirror"
cat "$T/out" "$T/err"
al_check "rerun with B up: exit 0" test "$AL_RC" = 0
al_check "rerun: nothing fetched again from A" \
	grep -qE '^mirrored 1 releases, 9 images: transferred 0 blobs \(0 bytes\), [1-9][0-9]* blobs already present$' "$T/out"
al_check "rerun: 9 images pushed to B" \
	grep -qE "^pushed 9 images to $B/mirror: uploaded [1-9][0-9]* blobs \([1-9][0-9]* bytes\), [0-9]+ blobs already present or mounted$" \
	<(al_last_line "$T/out")
al_check "B has the release and every component, same digests as A (skopeo), with sha256-<hex> tags" \
	on_b "$B" mirror "$T/release"
want=$("${SKOPEO[@]}" inspect --no-tags --tls-verify=false --format '{{.Digest}}' "docker://$A/airlock-samples/release:4.14.1-x86_64" 2>&1 || true)
got=$("${SKOPEO[@]}" inspect --no-tags --tls-verify=false --format '{{.Digest}}' "docker://$B/mirror/airlock-samples/release:4.14.1-x86_64" 2>&1 || true)
echo "A: $want B: $got"
al_check "release digest on B equals A's (skopeo inspect)" bash -c '[ -n "$1" ] && [ "$1" = "$2" ]' _ "$want" "$got"
al_check "push recorded in the store (registry B, prefix mirror)" \
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["pushes"][-1]; sys.exit(not (p["registry"]==sys.argv[2] and p["prefix"]=="mirror" and p["images"]==9 and p["digestTags"]))' \
	"$store/airlock/pushes.json" "$B"
al_run "$T/ms.yaml" "$T/err" "$AIRLOCK" mirrorsets --layout source --store "$store" -o -
al_check "mirrorsets --store with no --registry exits 0" test "$AL_RC" = 0
al_check "mirrorsets maps the release repository to B (from the push record)" \
	grep -q -- "- $B/mirror/airlock-samples/release" "$T/ms.yaml"

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --config "$T/imageset.yaml" --store "$store" \
	--tls-verify=false --to "docker://$B/mirror"
al_check "third run: exit 0, nothing fetched, nothing uploaded" \
	bash -c '[ "$1" = 0 ] && grep -qE "transferred 0 blobs \(0 bytes\)" "$2" && tail -n 1 "$2" | grep -qE "^pushed 9 images to .*: uploaded 0 blobs \(0 bytes\)"' \
	_ "$AL_RC" "$T/out"

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --config "$T/imageset.yaml" --store "$store" \
	--tls-verify=false --to "docker://$B/mirror" --json
al_check "--json: a push member with 9 pushed images and the destination" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["push"]; sys.exit(not (p["registry"]==sys.argv[2] and len(p["images"])==9 and all(i["status"]=="pushed" and i["destination"].startswith(sys.argv[2]+"/mirror/") for i in p["images"])))' \
	"$T/out" "$B"

# ------------------------------------- --max-nested-paths, --no-digest-tags
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --config "$T/imageset.yaml" --store "$store" \
	--tls-verify=false --to "docker://$B/flat" --max-nested-paths 1 --no-digest-tags
cat "$T/err"
al_check "--max-nested-paths 1 --no-digest-tags: exit 0" test "$AL_RC" = 0
al_check "--max-nested-paths 1: the release is at B/flat-airlock-samples-release" \
	bash -c '"${@:2}" inspect --raw --tls-verify=false "docker://$1/flat-airlock-samples-release:4.14.1-x86_64" >/dev/null' \
	_ "$B" "${SKOPEO[@]}"
al_check "--no-digest-tags: only the release's tag in flat-airlock-samples-ocp-v4.0-art-dev" \
	bash -c '! "${@:2}" list-tags --tls-verify=false "docker://$1/flat-airlock-samples-ocp-v4.0-art-dev" | grep -q sha256-' \
	_ "$B" "${SKOPEO[@]}"
al_check "push record: maxNestedPaths 1, digestTags false" \
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["pushes"][-1]; sys.exit(not (p["prefix"]=="flat" and p["maxNestedPaths"]==1 and not p["digestTags"]))' \
	"$store/airlock/pushes.json"

# --------------------------------------------------- kill -9 mid-push
# A proxy in front of B holds every manifest PUT: the run is killed once
# the push has reached its first manifest (blobs sent, nothing tagged).
al_start_proxy "$B"
P=$PROXY_ADDR
fault() {
	python3 -c 'import sys, urllib.request; print(urllib.request.urlopen("http://%s/%s" % (sys.argv[1], sys.argv[2]), timeout=5).read().decode())' "$P" "$1"
}
fault '_fault?kind=hang&method=PUT&path=/manifests/&times=-1' >/dev/null
store2=$T/store2
"$AIRLOCK" mirror --layout source --allow-unsigned --config "$T/imageset.yaml" --store "$store2" \
	--tls-verify=false --to "docker://$P/killed" >"$T/kill.out" 2>&1 &
pid=$!
held=no
for _ in $(seq 1 600); do
	if fault _stats | python3 -c 'import json,sys; sys.exit(not json.load(sys.stdin)["injected"].get("hang", 0))'; then
		held=yes
		break
	fi
	sleep 0.1
done
killed=no
if kill -9 "$pid" 2>/dev/null; then killed=yes; fi
wait "$pid" 2>/dev/null || true
fault '_fault?clear=1' >/dev/null
al_check "kill -9 during the push (a manifest PUT held: $held, killed: $killed)" \
	test "$held/$killed" = yes/yes
al_check "after kill -9: the release is not on B yet" \
	bash -c '! "${@:2}" inspect --raw --tls-verify=false "docker://$1/killed/airlock-samples/release:4.14.1-x86_64" >/dev/null 2>&1' \
	_ "$B" "${SKOPEO[@]}"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$store2"
al_check "after kill -9: airlock check is clean" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --config "$T/imageset.yaml" --store "$store2" \
	--tls-verify=false --to "docker://$P/killed"
cat "$T/out" "$T/err"
al_check "after kill -9: the rerun exits 0" test "$AL_RC" = 0
al_check "after kill -9: the rerun fetches nothing from A again" \
	grep -qE 'transferred 0 blobs \(0 bytes\)' "$T/out"
al_check "after kill -9: the rerun uploads fewer blobs than there are (some were on B)" \
	grep -qE "^pushed 9 images to $P/killed: uploaded [0-9]+ blobs \([0-9]+ bytes\), [1-9][0-9]* blobs already present" "$T/out"
al_check "after kill -9: the store holds the release and its components" al_same_index "$T/release" "$store2"
al_check "after kill -9: B/killed has everything, same digests, with tags" on_b "$B" killed "$T/release"

# ---------------------------------------- --dry-run maps to the destination
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --allow-unsigned --config "$T/imageset.yaml" --store "$store" \
	--tls-verify=false --to "docker://$B/mirror" --dry-run="$T/dry"
al_check "--dry-run --to: exit 0" test "$AL_RC" = 0
al_check "--dry-run --to: mapping.txt names docker://B/mirror destinations" \
	grep -q "=docker://$B/mirror/airlock-samples/release:4.14.1-x86_64$" "$T/dry/mapping.txt"

# ------------------------------------------------------------- usage
al_check_fails "--to with a non-docker destination: exit 2" 2 \
	"$AIRLOCK" mirror --layout source --allow-unsigned --config "$T/imageset.yaml" --store "$store" --to "oci:$T/x"
al_check_fails "--max-nested-paths without --to: exit 2" 2 \
	"$AIRLOCK" mirror --layout source --allow-unsigned --config "$T/imageset.yaml" --store "$store" --max-nested-paths 2
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --store "$store" "docker://$B/mirror"
al_check "a bare docker:// destination as RELEASE: exit 2, the hint names --to" \
	bash -c '[ "$1" = 2 ] && grep -q -- "--to docker://" "$2"' _ "$AL_RC" "$T/err"

# --------------------------------------- the bundled samples (oci: source)
samples=$AL_SOURCE_DIR/samples
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$samples/imageset.yaml" --store "$T/store3" \
	--tls-verify=false --to "docker://$B/samples"
cat "$T/out" "$T/err"
al_check "samples/imageset.yaml --to B: exit 0" test "$AL_RC" = 0
al_check "samples: 7 images pushed" grep -qE "^pushed 7 images to $B/samples: " "$T/out"
al_check "samples: B has the sample release and components, same digests as samples/layout" \
	on_b "$B" samples "$samples/layout"
al_run "$T/ms.yaml" "$T/err" "$AIRLOCK" mirrorsets --layout source --store "$T/store3" -o -
al_check "samples: mirrorsets from the push record names B/samples" \
	grep -q -- "- $B/samples/airlock-samples/release" "$T/ms.yaml"

# ------------------- a TLS destination with htpasswd auth: push's options
al_check "self-signed CA and server certificate made" al_make_tls "$T/tls"
al_check "htpasswd file made" al_make_htpasswd "$T/htpasswd" airlock 's3cret-pass'
al_start_registry "$T/regS" --htpasswd "$T/htpasswd" --tls "$T/tls/server.crt" "$T/tls/server.key"
S=$REG_ADDR
printf '{"auths":{"%s":{"auth":"%s"}}}\n' "$S" "$(printf 'airlock:s3cret-pass' | base64 -w0)" >"$T/auth.json"
mkdir -p "$T/certs"
cp "$T/tls/ca.crt" "$T/certs/ca.crt"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$samples/imageset.yaml" --store "$T/store4" \
	--cert-dir "$T/certs" --to "docker://$S/secure"
cat "$T/err"
al_check "TLS destination without credentials: exit 3, the error names the registry" \
	bash -c '[ "$1" = 3 ] && grep -qF "$2" "$3"' _ "$AL_RC" "$S" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --config "$samples/imageset.yaml" --store "$T/store4" \
	--cert-dir "$T/certs" --authfile "$T/auth.json" --to "docker://$S/secure"
cat "$T/err"
al_check "TLS destination with --cert-dir and --authfile: exit 0, 7 images pushed" \
	bash -c '[ "$1" = 0 ] && grep -qE "^pushed 7 images to $2/secure: " "$3"' _ "$AL_RC" "$S" "$T/out"
want=$(al_digest_of "$samples/layout" "$release")
got=$("${SKOPEO[@]}" inspect --no-tags --cert-dir "$T/certs" --creds 'airlock:s3cret-pass' \
	--format '{{.Digest}}' "docker://$S/secure/airlock-samples/release:4.14.1-x86_64" 2>&1 || true)
al_check "skopeo (verifying TLS, with credentials) sees the release with its digest" test "$got" = "$want"

al_finish
