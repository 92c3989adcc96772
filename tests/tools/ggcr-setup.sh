#!/bin/sh
# ggcr-setup.sh: build go-containerregistry's registry with the OCI 1.1
# referrers API (tests/tools/ggcr_registry.go) into DIR, once, and print its
# path. The sources are Debian's golang-github-google-go-containerregistry-dev
# (0.14.0 in bookworm-backports, the only Debian 12 package of a registry
# with that API): the installed package when there is one, else the package
# fetched into DIR with apt-get through the host's own Debian mirror (its
# bookworm-backports suite, lists kept in DIR; nothing installed). Needs go
# (golang-go). Exits 77 when go is missing or the sources cannot be had.
# usage: ggcr-setup.sh DIR
set -u
dir=${1:?usage: ggcr-setup.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
pkg=golang-github-google-go-containerregistry-dev
rel=share/gocode/src/github.com/google/go-containerregistry/pkg/registry
command -v go >/dev/null 2>&1 || { echo "go not found (golang-go)" >&2; exit 77; }
mkdir -p "$dir" || exit 77
if command -v flock >/dev/null 2>&1; then
	exec 9>"$dir/.lock"
	flock -w 600 9 || exit 77
fi
bin=$dir/ggcr-registry
[ -x "$bin" ] && [ "$bin" -nt "$here/ggcr_registry.go" ] && { echo "$bin"; exit 0; }
gopath=
if [ -d "/usr/$rel" ]; then
	gopath=/usr/share/gocode
elif [ -d "$dir/pkg/usr/$rel" ]; then
	gopath=$dir/pkg/usr/share/gocode
else
	# the host's Debian mirror, from its own apt sources
	uri=$( (cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		sed -n 's/^URIs:[[:space:]]*//p'
		cat /etc/apt/sources.list 2>/dev/null |
			awk '$1 == "deb" { print ($2 ~ /^\[/) ? $3 : $2 }') |
		grep -v security | head -n 1)
	[ -n "$uri" ] || { echo "no Debian mirror in the apt sources" >&2; exit 77; }
	a=$dir/apt
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial" || exit 77
	echo "deb $uri bookworm-backports main" >"$a/sources.list"
	set -- -o Dir::Etc::sourcelist="$a/sources.list" -o Dir::Etc::sourceparts=- \
		-o Dir::State::Lists="$a/lists" -o Dir::Cache="$a/cache" \
		-o APT::Sandbox::User=root
	timeout 300 apt-get "$@" -q update >"$dir/apt.log" 2>&1 &&
		(cd "$dir" && timeout 300 apt-get "$@" -q download "$pkg" >>"$dir/apt.log" 2>&1) ||
		{ echo "cannot fetch $pkg (see $dir/apt.log)" >&2; exit 77; }
	dpkg -x "$dir"/"$pkg"_*.deb "$dir/pkg" || exit 77
	gopath=$dir/pkg/usr/share/gocode
fi
mkdir -p "$dir/src/ggcrregistry" || exit 77
cp "$here/ggcr_registry.go" "$dir/src/ggcrregistry/main.go" || exit 77
if ! (cd "$dir" && GO111MODULE=off GOFLAGS= GOPATH="$dir:$gopath" \
	GOCACHE="$dir/gocache" go build -o "$bin.new" ./src/ggcrregistry) \
	>"$dir/build.log" 2>&1; then
	echo "go build failed (see $dir/build.log)" >&2
	exit 77
fi
mv "$bin.new" "$bin" && echo "$bin"
