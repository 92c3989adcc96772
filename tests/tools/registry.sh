# registry.sh: sourceable bash helpers to run Debian's docker-registry on loopback for tests.
#
# Stable functions (other tests source this file):
#   al_registry_start DIR [--htpasswd FILE] [--tls CERT KEY]
#       Write DIR/config.yml (filesystem storage in DIR/data, deletes enabled,
#       http on 127.0.0.1:<free port>, log level warn, htpasswd auth and/or TLS
#       when asked), start /usr/bin/docker-registry in the background with its
#       log in DIR/registry.log, and wait (at most 10 s) until /v2/ answers.
#       Exports AL_REGISTRY_PID, AL_REGISTRY_ADDR (127.0.0.1:PORT) and
#       AL_REGISTRY_URL (http://ADDR or https://ADDR). Returns non-zero on
#       failure (the log is printed to stderr). Retries other ports a few
#       times if the chosen one was taken.
#   al_registry_stop
#       Kill the registry started last (by PID) and wait for it. Safe to call
#       twice or when none runs. Call it from a trap: trap al_registry_stop EXIT
#   al_free_port
#       Print a free TCP port on 127.0.0.1 (python3 binds port 0).
#   al_make_tls DIR
#       Make DIR/ca.crt (self-signed CA) and DIR/server.crt + DIR/server.key
#       (signed by that CA, subjectAltName IP:127.0.0.1, DNS:localhost).
#   al_make_htpasswd FILE USER PASS
#       Write an htpasswd (bcrypt) file with one user.
# Only one registry per shell at a time; run subshells for more (or save
# AL_REGISTRY_PID and clear it before the next start). Safe under set -euo pipefail.

AL_REGISTRY_BIN=${AL_REGISTRY_BIN:-/usr/bin/docker-registry}

al_free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

al_make_tls() {
	local dir=$1
	mkdir -p "$dir" || return 1
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=airlock test CA" \
		-keyout "$dir/ca.key" -out "$dir/ca.crt" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" >/dev/null 2>&1 || return 1
	openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
		-keyout "$dir/server.key" -out "$dir/server.csr" >/dev/null 2>&1 || return 1
	printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$dir/server.ext"
	openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
		-CAcreateserial -days 2 -extfile "$dir/server.ext" -out "$dir/server.crt" >/dev/null 2>&1 || return 1
}

# Exit 0 when URL answers 200 or 401 (TLS not verified: only a liveness probe).
al_http_probe() {
	python3 - "$1" <<'PYEOF' 2>/dev/null
import ssl, sys, urllib.request, urllib.error
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
try:
    urllib.request.urlopen(sys.argv[1], timeout=2, context=ctx)
except urllib.error.HTTPError as e:
    sys.exit(0 if e.code == 401 else 1)
except Exception:
    sys.exit(1)
sys.exit(0)
PYEOF
}

al_make_htpasswd() {
	htpasswd -Bbn "$2" "$3" >"$1"
}

al_registry_stop() {
	if [ -n "${AL_REGISTRY_PID:-}" ]; then
		kill "$AL_REGISTRY_PID" 2>/dev/null || true
		# not our child when started by another shell: poll instead
		wait "$AL_REGISTRY_PID" 2>/dev/null || true
		local i
		for i in $(seq 1 50); do
			kill -0 "$AL_REGISTRY_PID" 2>/dev/null || break
			sleep 0.1
		done
		AL_REGISTRY_PID=
	fi
	return 0
}

al_registry_start() {
	local dir=$1 htpasswd= cert= key= port scheme=http try i
	shift || return 2
	while [ $# -gt 0 ]; do
		case $1 in
		--htpasswd) htpasswd=$2; shift 2 ;;
		--tls) cert=$2; key=$3; shift 3 ;;
		*) echo "al_registry_start: unknown option '$1'" >&2; return 2 ;;
		esac
	done
	mkdir -p "$dir/data" || return 1
	dir=$(cd "$dir" && pwd) || return 1
	if [ -n "$cert" ]; then
		cert=$(realpath "$cert") && key=$(realpath "$key") || return 1
	fi
	if [ -n "$htpasswd" ]; then
		htpasswd=$(realpath "$htpasswd") || return 1
	fi
	[ -n "$cert" ] && scheme=https
	for try in 1 2 3 4 5; do
		port=$(al_free_port) || return 1
		{
			echo "version: 0.1"
			echo "log:"
			echo "  level: warn"
			echo "storage:"
			echo "  filesystem:"
			echo "    rootdirectory: $dir/data"
			echo "  delete:"
			echo "    enabled: true"
			echo "http:"
			echo "  addr: 127.0.0.1:$port"
			echo "  secret: airlock-test-secret"
			if [ -n "$cert" ]; then
				echo "  tls:"
				echo "    certificate: $cert"
				echo "    key: $key"
			fi
			if [ -n "$htpasswd" ]; then
				echo "auth:"
				echo "  htpasswd:"
				echo "    realm: airlock-test"
				echo "    path: $htpasswd"
			fi
		} >"$dir/config.yml"
		"$AL_REGISTRY_BIN" serve "$dir/config.yml" >"$dir/registry.log" 2>&1 &
		AL_REGISTRY_PID=$!
		AL_REGISTRY_ADDR=127.0.0.1:$port
		AL_REGISTRY_URL=$scheme://$AL_REGISTRY_ADDR
		export AL_REGISTRY_PID AL_REGISTRY_ADDR AL_REGISTRY_URL
		for i in $(seq 1 50); do
			if ! kill -0 "$AL_REGISTRY_PID" 2>/dev/null; then
				break
			fi
			if al_http_probe "$AL_REGISTRY_URL/v2/"; then
				# a registry that lost the port race exits at once;
				# the answer may have come from someone else's server
				sleep 0.1
				if kill -0 "$AL_REGISTRY_PID" 2>/dev/null; then
					return 0
				fi
				break
			fi
			sleep 0.2
		done
		al_registry_stop
	done
	echo "al_registry_start: docker-registry did not start; log:" >&2
	cat "$dir/registry.log" >&2
	return 1
}
