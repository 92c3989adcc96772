#!/usr/bin/env bash
# test_auth_scopes.sh: two tenants by path on one registry host (HOST/team-a alice, HOST/team-b bob): every request carries its own tenant's credentials, from every credential source, Basic and Bearer (issue 24).
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

b64() { printf '%s' "$1" | base64 -w0; }

# Start scoperegistry.py with its log in $1 and the rest as its flags;
# sets SR_ADDR.
start_sr() {
	local log=$1 pf i
	shift
	pf=$(mktemp "$T/sr-port.XXXXXX")
	rm -f "$pf"
	python3 "$AL_TOOLS/scoperegistry.py" --port-file "$pf" --log "$log" \
		--user team-a=alice:pa --user team-b=bob:pb "$@" 2>>"$T/sr.err" &
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

# What the server saw for a namespace: the users on its requests, sorted
# and unique ("-" for none), from the JSON lines of log $1.
users_for() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
seen = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("path", "").startswith("/v2/%s/" % sys.argv[2]):
        seen.add(r["user"])
print(" ".join(sorted(seen)))
EOF
}

# The kinds of request (manifests, blobs, referrers, .sig) one namespace
# got with the given user: each must be there.
saw_kinds() {
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
log, ns, user = sys.argv[1:]
kinds = set()
for line in open(log):
    r = json.loads(line)
    p = r.get("path", "")
    if not p.startswith("/v2/%s/" % ns) or r["user"] != user:
        continue
    # signature discovery: the .sig tag, or the tag listing that finds
    # there is none (docs/cosign.md: each repository's tags listed once)
    if ".sig" in p or "/tags/list" in p:
        kinds.add("sig")
    for k in ("manifests", "blobs", "referrers"):
        if "/%s/" % k in p:
            kinds.add(k)
want = {"sig", "manifests", "blobs", "referrers"}
sys.exit(0 if want <= kinds else "missing %s" % sorted(want - kinds))
EOF
}

# One mirror of both tenants' images into a fresh store: mirror_both NAME
# [VAR=VALUE]... [-- ARG...] (environment, then airlock arguments).
mirror_both() {
	local name=$1 envs=() args=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	args=("$@")
	al_run "$T/$name.out" "$T/$name.err" env "${envs[@]}" "$AIRLOCK" mirror \
		--store "$T/$name.store" --tls-verify=false "${args[@]}" \
		--image "docker://$SR_ADDR/team-a/app:1" \
		--image "docker://$SR_ADDR/team-b/app:1"
}

# Judge one case by the server's log: team-a saw alice only, team-b bob
# only (prefix "bearer:" for tokens), besides the unauthenticated first try.
judge() {
	local name=$1 log=$2 a=$3 b=$4
	al_check "$name: mirror of team-a/app and team-b/app exits 0" test "$AL_RC" = 0
	[ "$AL_RC" = 0 ] || cat "$T/$name.err"
	al_check "$name: team-a requests carried $a only" \
		test "$(users_for "$log" team-a)" = "- $a"
	al_check "$name: team-b requests carried $b only" \
		test "$(users_for "$log" team-b)" = "- $b"
	al_check "$name: team-b got its manifests, blobs, .sig and referrers as $b" \
		saw_kinds "$log" team-b "$b"
	al_check "$name: team-a got its manifests, blobs, .sig and referrers as $a" \
		saw_kinds "$log" team-a "$a"
}

# 1. --authfile (an auth.json or an OpenShift pull secret), Basic.
start_sr "$T/basic.log"
printf '{"auths":{"%s/team-a":{"auth":"%s"},"%s/team-b":{"auth":"%s"}}}\n' \
	"$SR_ADDR" "$(b64 alice:pa)" "$SR_ADDR" "$(b64 bob:pb)" >"$T/auth.json"
mirror_both authfile -- --authfile "$T/auth.json"
judge authfile "$T/basic.log" alice bob

# 2. The same file, Bearer tokens from the realm.
start_sr "$T/bearer.log" --bearer
printf '{"auths":{"%s/team-a":{"auth":"%s"},"%s/team-b":{"auth":"%s"}}}\n' \
	"$SR_ADDR" "$(b64 alice:pa)" "$SR_ADDR" "$(b64 bob:pb)" >"$T/auth-bearer.json"
mirror_both bearer -- --authfile "$T/auth-bearer.json"
judge bearer "$T/bearer.log" bearer:alice bearer:bob

# A fake credential helper that answers bob for any host.
mkdir -p "$T/bin"
cat >"$T/bin/docker-credential-tenant" <<'SH'
#!/bin/sh
host=$(cat)
echo "$1 $host" >>"$0.log"
printf '{"ServerURL":"%s","Username":"bob","Secret":"pb"}' "$host"
SH
chmod +x "$T/bin/docker-credential-tenant"

# 3. The default files: team-a in the runtime auth.json, the host's
# credHelpers entry in $DOCKER_CONFIG/config.json (bob): the first file
# with credentials for the repository wins.
start_sr "$T/helpers.log"
mkdir -p "$XDG_RUNTIME_DIR/containers" "$T/dc"
printf '{"auths":{"%s/team-a":{"auth":"%s"}}}\n' "$SR_ADDR" "$(b64 alice:pa)" \
	>"$XDG_RUNTIME_DIR/containers/auth.json"
printf '{"auths":{},"credHelpers":{"%s":"tenant"}}\n' "$SR_ADDR" >"$T/dc/config.json"
mirror_both credhelpers PATH="$T/bin:$PATH" DOCKER_CONFIG="$T/dc"
judge credhelpers "$T/helpers.log" alice bob
rm -f "$XDG_RUNTIME_DIR/containers/auth.json"

# 4. One file: an auths key for team-a, its credsStore for the rest.
start_sr "$T/store.log"
printf '{"auths":{"%s/team-a":{"auth":"%s"}},"credsStore":"tenant"}\n' \
	"$SR_ADDR" "$(b64 alice:pa)" >"$T/store.json"
mirror_both credsstore PATH="$T/bin:$PATH" -- --authfile "$T/store.json"
judge credsstore "$T/store.log" alice bob

al_finish
