# update_lib.sh: helpers for the updater's integration scripts (kubeserver, sample store, signing, assertions on state and request log).
#
# Source after lib.sh. Gives:
#   up_ks_start [ARGS]     start tests/tools/kubeserver.py (Nagle off, see below);
#                          sets KS_URL, KS_PID, writes $T/kubeconfig. With
#                          UP_VIRTUAL_CLOCK=1 the server's timers and every
#                          airlock run share airlock's virtual clock
#                          (AIRLOCK_TEST_CLOCK=virtual:$T/clock, docs/testing.md):
#                          deadlines and polls take no real time and no load
#                          can reorder what the updater sees
#   up_ctl PATH [JSON]     POST JSON (GET without) to $KS_URL/_control/PATH
#   up_store DIR           mirror the sample release 4.14.1 into DIR
#   up_store_add_4142 DIR  make release 4.14.2 (same manifests) and mirror it into DIR
#   up_store_add_release DIR VERSION MANIFESTS [CVO_MANIFESTS]
#                          the same for any version and manifests directory
#                          (CVO_MANIFESTS: the image's manifests/)
#   up_sign DIR DIGEST     sign DIGEST with a fresh gpg key into DIR/signatures;
#                          the public key is $T/trusted.gpg
#   up_state FILE EXPR     evaluate a Python expression on the state file (s)
#   up_plan                write the dry-run plan of 4.14.1 to $T/plan.txt
#   up_py                  python3 with helpers (see UP_PY)
#
# kubeserver.py answers in two writes (headers, body); with Nagle on its
# socket and delayed ACKs on ours each request costs ~40 ms. The launcher
# turns Nagle off (socketserver's disable_nagle_algorithm) without changing
# the server.

UP_KS_LAUNCH='import sys, socketserver
sys.path.insert(0, sys.argv.pop(1))
socketserver.StreamRequestHandler.disable_nagle_algorithm = True
import kubeserver
kubeserver.main()'

up_ks_start() {
	local pf=$T/ks-port.$RANDOM i
	if [ "${UP_VIRTUAL_CLOCK:-0}" = 1 ]; then
		export AIRLOCK_TEST_CLOCK=virtual:$T/clock
		set -- --virtual-clock "$@"
	fi
	python3 -c "$UP_KS_LAUNCH" "$AL_TOOLS" --port-file "$pf" "$@" 2>>"$T/kubeserver.log" &
	KS_PID=$!
	AL_PIDS+=("$KS_PID")
	for i in $(seq 1 100); do
		if [ -s "$pf" ]; then
			KS_URL=http://127.0.0.1:$(cat "$pf")
			cat >"$T/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: $KS_URL
contexts:
- name: test
  context:
    cluster: test
    user: test
current-context: test
users:
- name: test
  user: {}
EOF
			return 0
		fi
		sleep 0.1
	done
	al_fail "kubeserver starts"
	al_finish
}

up_ctl() {
	if [ $# -ge 2 ]; then
		curl -sf -X POST -H 'Content-Type: application/json' -d "$2" "$KS_URL/_control/$1"
	else
		curl -sf "$KS_URL/_control/$1"
	fi
}

up_store() {
	"$AIRLOCK" mirror --config "$AL_SOURCE_DIR/samples/imageset.yaml" --store "$1" -q >/dev/null
}

up_store_add_4142() {
	up_store_add_release "$1" 4.14.2 "$AL_SOURCE_DIR/samples/release-manifests"
}

# up_store_add_release DIR VERSION MANIFESTS [CVO_MANIFESTS]: make release
# VERSION (after 4.14.1) from the manifests directory MANIFESTS (and the
# image's manifests/ from CVO_MANIFESTS) and mirror it into DIR.
up_store_add_release() {
	local dir=$1 version=$2 manifests=$3 tag
	tag=$(echo "$version" | tr -d .)
	python3 "$AL_TOOLS/mkrelease.py" --out "$T/layout-$tag" --version "$version" --previous 4.14.1 \
		--prefix quay.io/airlock-samples --components 6 --layer-size 4096 --base-size 8192 \
		--manifests "$manifests" ${4:+--cvo-manifests "$4"} --seed airlock-samples >/dev/null || return 1
	cat >"$T/imageset-$tag.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-samples/release:$version-x86_64
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: "oci:$T/layout-$tag"
EOF
	"$AIRLOCK" mirror --config "$T/imageset-$tag.yaml" --store "$dir" --allow-unsigned -q >/dev/null
}

# The digest of a release version in a store's releases.json.
up_digest() {
	python3 -c 'import json,sys
for r in json.load(open(sys.argv[1] + "/airlock/releases.json"))["releases"]:
    if r["version"] == sys.argv[2]: print(r["digest"])' "$1" "$2"
}

up_sign() {
	local dir=$1 digest=$2 hex
	hex=${digest#sha256:}
	export GNUPGHOME=$T/gnupg
	if [ ! -d "$GNUPGHOME" ]; then
		mkdir -m 700 "$GNUPGHOME"
		gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
			--quick-gen-key 'airlock update test <update@example.invalid>' rsa2048 sign never 2>/dev/null || return 1
		gpg --batch --quiet --export >"$T/trusted.gpg" || return 1
	fi
	mkdir -p "$dir/signatures/sha256=$hex"
	printf '{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"%s"},"identity":{"docker-reference":"quay.io/airlock-samples/release"}},"optional":{"creator":"update test"}}' "$digest" |
		gpg --batch --quiet --yes --sign -o "$dir/signatures/sha256=$hex/signature-1" 2>/dev/null
}

# up_state FILE EXPR: print EXPR evaluated with s = the state document.
up_state() {
	python3 -c 'import json,sys
s = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

# The plan of a release (dry run, no cluster) into $T/plan.txt.
up_plan() {
	"$AIRLOCK" update --store "$1" --to "${2:-4.14.1}" --dry-run --force -q >"$T/plan.txt" 2>/dev/null
}

# Python helpers shared by the checks: objects of the plan, the server's
# objects and request log.
UP_PY='
import json, re, sys, urllib.request
KS = sys.argv[1]
PLAN = sys.argv[2]
def get(p):
    return json.load(urllib.request.urlopen(KS + p))
def plan():
    """[(level, kind, ns, name)] in plan order."""
    out, level = [], None
    for line in open(PLAN):
        m = re.match(r"level (\d+):", line)
        if m:
            level = int(m.group(1)); continue
        if line.startswith("unnumbered"):
            level = 10**9; continue
        m = re.match(r"    (\S+) (\S+) \(", line)
        if m and level is not None:
            kind, obj = m.group(1), m.group(2)
            ns, _, name = obj.rpartition("/")
            out.append((level, kind, ns or None, name))
    return out
def objects():
    return {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in get("/_control/objects")["items"]}
def missing():
    objs = objects()
    return [p for p in plan() if (p[1], p[2], p[3]) not in objs]
def present():
    objs = objects()
    return [p for p in plan() if (p[1], p[2], p[3]) in objs]
'

up_py() {
	local code=$1
	shift
	python3 -c "$UP_PY
$code" "$KS_URL" "$T/plan.txt" "$@"
}

# Fail clearly when the binary has no update command (main.c dispatch).
up_require_update() {
	if ! "$AIRLOCK" update --help >/dev/null 2>&1; then
		al_fail "'$AIRLOCK update' exists (cmd_update must be in tools/airlock/main.c's command table)"
		al_finish
	fi
}

# --- ownership and the cluster's record (preconditions, lease, ClusterVersion) ---
#   up_seed_cv VERSION [HISTORY_JSON]  seed ClusterVersion "version" whose
#                          status.desired is VERSION (as an installed cluster has)
#   up_co_upgradeable NAME MESSAGE     seed ClusterOperator NAME with
#                          Upgradeable=False (reason AdminAckRequired, MESSAGE)
#   up_seed_cvo [REPLICAS] seed a cluster-version-operator Deployment
#   up_obj PATH EXPR       evaluate a Python expression on the object at
#                          API PATH (o), e.g. up_obj /apis/.../version 'o["status"]'
up_seed_cv() {
	local v=$1 hist=${2:-[]}
	up_ctl objects "{\"object\": {\"apiVersion\": \"config.openshift.io/v1\", \"kind\": \"ClusterVersion\", \"metadata\": {\"name\": \"version\"}, \"spec\": {\"clusterID\": \"4d3a1a3e-0000-4000-8000-000000000001\"}, \"status\": {\"desired\": {\"version\": \"$v\", \"image\": \"quay.io/openshift-release-dev/ocp-release@sha256:$(printf '%064d' 1)\"}, \"history\": $hist, \"observedGeneration\": 1, \"versionHash\": \"x\", \"availableUpdates\": null, \"conditions\": []}}}" >/dev/null
}

up_co_upgradeable() {
	up_ctl objects "{\"object\": {\"apiVersion\": \"config.openshift.io/v1\", \"kind\": \"ClusterOperator\", \"metadata\": {\"name\": \"$1\"}, \"status\": {\"conditions\": [{\"type\": \"Upgradeable\", \"status\": \"False\", \"reason\": \"AdminAckRequired\", \"message\": \"$2\", \"lastTransitionTime\": \"2026-01-01T00:00:00Z\"}]}}}" >/dev/null
}

up_seed_cvo() {
	up_ctl objects '{"object": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "openshift-cluster-version"}}}' >/dev/null
	up_ctl objects "{\"object\": {\"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\", \"metadata\": {\"name\": \"cluster-version-operator\", \"namespace\": \"openshift-cluster-version\"}, \"spec\": {\"replicas\": ${1:-1}}, \"status\": {\"availableReplicas\": ${1:-1}}}}" >/dev/null
}

up_obj() {
	python3 -c 'import json,sys,urllib.request
try:
    o = json.load(urllib.request.urlopen(sys.argv[1] + sys.argv[2]))
except Exception as e:
    o = None
print(eval(sys.argv[3]))' "$KS_URL" "$1" "$2"
}
CV_PATH=/apis/config.openshift.io/v1/clusterversions/version
CU_PATH=/apis/airlock.io/v1alpha1/clusterupdates/cluster
LEASE_PATH=/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/airlock-update
