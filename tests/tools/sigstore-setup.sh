#!/bin/sh
# sigstore-setup.sh: install the sigstore-js packages the cosign tests use
# (from the npm registry, into DIR, once) and print DIR/node_modules.
# usage: sigstore-setup.sh DIR
# Exits 77 when node or npm is missing or the install fails (no network):
# the calling test is then a skip, never a pass.
set -u
dir=${1:?usage: sigstore-setup.sh DIR}
stamp="$dir/.airlock-sigstore-1"
command -v node >/dev/null 2>&1 || { echo "node not found" >&2; exit 77; }
# Debian's nodejs comes without npm, and Debian's npm conflicts with the
# nodejs builds that bundle it: so npm is not in .ci/packages, and a root
# set-up installs Debian's only where none is there.
if ! command -v npm >/dev/null 2>&1 && [ "$(id -u)" = 0 ] &&
	command -v apt-get >/dev/null 2>&1; then
	apt-get install -y -q --no-install-recommends npm >/dev/null 2>&1 || true
fi
command -v npm >/dev/null 2>&1 || { echo "npm not found" >&2; exit 77; }
mkdir -p "$dir" || exit 77
# two tests may set up at once (ctest -j): one installs, the other waits
if command -v flock >/dev/null 2>&1; then
	exec 9>"$dir/.lock"
	flock -w 600 9 || exit 77
fi
if [ ! -f "$stamp" ]; then
	printf '{"name":"airlock-sigstore-tests","private":true}\n' >"$dir/package.json"
	# Versions these tests were written against; the cache stays in DIR.
	if ! (cd "$dir" && timeout 300 npm install --no-audit --no-fund \
		--cache "$dir/.npm-cache" \
		@sigstore/sign@4.1.1 @sigstore/verify@3.1.1 @sigstore/mock@0.12.1 \
		@sigstore/bundle@4.0.0 @sigstore/core@3.2.1 nock@13.5.6 \
		>"$dir/npm-install.log" 2>&1); then
		echo "npm install failed (see $dir/npm-install.log)" >&2
		exit 77
	fi
	touch "$stamp"
fi
echo "$dir/node_modules"
