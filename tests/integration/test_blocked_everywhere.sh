#!/usr/bin/env bash
# test_blocked_everywhere.sh: registries.conf blocked = true holds for every command that can reach a registry (mirror, copy, push, mirror --to, delete --registry, verify-image, verify-image --carry, catalogs, Helm oci://): the blocked host sees no connection and each command fails (issue 24).
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

# Start scoperegistry.py (a recording registry, no credentials needed)
# logging to $1; sets SR_ADDR.
start_sr() {
	local log=$1 pf i
	pf=$(mktemp "$T/sr-port.XXXXXX")
	rm -f "$pf"
	: >"$log"
	python3 "$AL_TOOLS/scoperegistry.py" --port-file "$pf" --log "$log" 2>>"$T/sr.err" &
	AL_PIDS+=("$!")
	for i in $(seq 1 100); do
		if [ -s "$pf" ]; then
			SR_ADDR=127.0.0.1:$(cat "$pf")
			return 0
		fi
		sleep 0.05
	done
	al_fail "scoperegistry starts"
	al_finish
}

lines() { wc -l <"$1"; }

# The source: an open registry, to fill a store the commands start from.
start_sr "$T/open.log"
OPEN=$SR_ADDR
# The blocked host.
start_sr "$T/blocked.log"
B=$SR_ADDR

store=$T/store
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --store "$store" --tls-verify=false \
	--image "docker://$OPEN/x/app:1"
al_check "the store is filled from the open registry" test "$AL_RC" = 0
[ "$AL_RC" = 0 ] || cat "$T/err"
cp -r "$AL_SOURCE_DIR/samples/layout" "$T/samples"
openssl ecparam -name prime256v1 -genkey -noout -out "$T/k.key" 2>/dev/null
openssl pkey -in "$T/k.key" -pubout -out "$T/k.pub" 2>/dev/null

export CONTAINERS_REGISTRIES_CONF=$T/registries.conf
printf '[[registry]]\nlocation = "%s"\nblocked = true\n' "$B" >"$CONTAINERS_REGISTRIES_CONF"

cat >"$T/catalog.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
  - catalog: $B/redhat/redhat-operator-index:v4.14
    packages:
    - name: foo
EOF
cat >"$T/helm.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  helm:
    repositories:
    - name: blocked
      url: oci://$B/charts
      charts:
      - name: podinfo
EOF
cat >"$T/images.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  additionalImages:
  - name: $B/x/app:1
EOF

# Each command against the blocked host: it must fail, and the host must
# see nothing (not even a connection).
n=0
blocked() {
	local desc=$1 before
	shift
	n=$((n + 1))
	before=$(lines "$T/blocked.log")
	al_run "$T/b$n.out" "$T/b$n.err" "$@"
	al_check "$desc: exits non-zero" test "$AL_RC" != 0
	al_check "$desc: the blocked host saw nothing" test "$(lines "$T/blocked.log")" = "$before"
	# refused by the policy, not for another reason
	al_check "$desc: the error names the block" grep -q "blocked in" "$T/b$n.err"
	if [ "$AL_RC" = 0 ] || [ "$(lines "$T/blocked.log")" != "$before" ]; then
		cat "$T/b$n.err"
	fi
}

blocked "mirror --image" "$AIRLOCK" mirror --store "$T/s1" --tls-verify=false \
	--image "docker://$B/x/app:1"
blocked "mirror of a release" "$AIRLOCK" mirror --store "$T/s2" --tls-verify=false --allow-unsigned \
	"docker://$B/ocp/release:4.14.1-x86_64"
blocked "mirror additionalImages" "$AIRLOCK" mirror --store "$T/s3" --tls-verify=false \
	-c "$T/images.yaml"
blocked "mirror of a catalog image" "$AIRLOCK" mirror --store "$T/s4" --tls-verify=false \
	-c "$T/catalog.yaml"
blocked "catalog filter --mirror" "$AIRLOCK" catalog filter --store "$T/s5" --tls-verify=false \
	--config "$T/catalog.yaml" --mirror
blocked "mirror of a Helm oci:// repository" "$AIRLOCK" mirror --store "$T/s6" \
	--tls-verify=false -c "$T/helm.yaml"
blocked "copy from the host" "$AIRLOCK" copy --tls-verify=false \
	"docker://$B/x/app:1" "oci:$T/c1:x"
blocked "copy to the host" "$AIRLOCK" copy --tls-verify=false \
	"oci:$T/samples:quay.io/airlock-samples/release:4.14.1-x86_64" "docker://$B/x/app:1"
blocked "push" "$AIRLOCK" push --store "$store" --tls-verify=false "docker://$B/mirror"
blocked "mirror --to" "$AIRLOCK" mirror --store "$store" --tls-verify=false \
	--image "docker://$OPEN/x/app:1" --to "docker://$B/mirror"
blocked "delete --registry" "$AIRLOCK" delete --store "$store" --tls-verify=false \
	--image "$OPEN/x/app:1" --registry "docker://$B/mirror"
al_check "delete --registry refused: the store still names the image" \
	grep -qF "$OPEN/x/app:1" "$store/index.json"
blocked "verify-image docker://" "$AIRLOCK" verify-image --tls-verify=false \
	--key "$T/k.pub" "docker://$B/x/app:1"

# The open registry blocked too: what reads the store's sources.
printf '[[registry]]\nlocation = "%s"\nblocked = true\n[[registry]]\nlocation = "%s"\nblocked = true\n' \
	"$B" "$OPEN" >"$CONTAINERS_REGISTRIES_CONF"
before=$(lines "$T/open.log")
al_run "$T/carry.out" "$T/carry.err" "$AIRLOCK" verify-image --tls-verify=false \
	--store "$store" --carry
al_check "verify-image --carry from a blocked source: exits non-zero" test "$AL_RC" != 0
al_check "verify-image --carry: the blocked source saw nothing" \
	test "$(lines "$T/open.log")" = "$before"
al_check "verify-image --carry: the error names the block" grep -q "blocked in" "$T/carry.err"

# A blocked namespace prefix: the request to it is refused, the rest of
# the host is not.
printf '[[registry]]\nprefix = "%s/team-b"\nlocation = "%s/team-b"\nblocked = true\n' \
	"$OPEN" "$OPEN" >"$CONTAINERS_REGISTRIES_CONF"
: >"$T/open.log"
al_run "$T/ns.out" "$T/ns.err" "$AIRLOCK" mirror --store "$T/s7" --tls-verify=false \
	--image "docker://$OPEN/team-a/app:1" --image "docker://$OPEN/team-b/app:1"
al_check "a blocked namespace fails the mirror" test "$AL_RC" != 0
al_check "the blocked namespace saw no request" bash -c '! grep -q "/v2/team-b/" "$1"' _ "$T/open.log"
al_check "the other namespace was mirrored" grep -q "/v2/team-a/app/manifests/" "$T/open.log"

al_finish
