#!/usr/bin/env bash
# test_untrusted_serve.sh: airlock serve leaves out what an untrusted import wrote (issue 24, item 4 remainder): judged by what curl gets from the served store: a marked signature is not served at /signatures/ (the unmarked ones keep a gapless numbering, as the CVO reads them), a marked tag is not served as a manifest, a tag or a catalog entry; --serve-untrusted serves them.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
src=$T/src
sig_hex=c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
sigdir=signatures/sha256=$sig_hex
sigurl=/signatures/sha256=$sig_hex

pack_id() { sed -n 's/^pack \([A-Za-z0-9-]*\): .*/\1/p' "$1"; }

# Start 'airlock serve' on store $1 on a free port (further arguments
# passed on); sets SRV_ADDR and SRV_PID.
srv_start() {
	local store=$1
	shift
	al_start_serve --store "$store" --access-log "$T/access.log" "$@"
}
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
# the body of URL $1 into file $2, and its status
fetch() { curl -s -o "$2" -w '%{http_code}' "$1"; }

# ---- staging: the sample release, its genuine signature, a signed pack
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
al_check "... with the release's genuine signature" test -s "$src/$sigdir/signature-1"
"$AIRLOCK" keygen -o "$T/key" >/dev/null
tag=$(al_index_digests "$src" | awk '$1 !~ /@/ {print $1; exit}')
other=$(al_index_digests "$src" | awk -v t="$tag" '$1 != t {print $1; exit}')
al_check "the sample store has a tag ($tag) and an image by digest ($other)" \
	bash -c 'test -n "$1" && case $2 in *@sha256:*) true ;; *) false ;; esac' _ "$tag" "$other"
# the registry path of a store name: host dropped, REPO and TAG
repo_of() { local n=${1#*/}; printf '%s' "${n%:*}"; }
tag_of() { printf '%s' "${1##*:}"; }
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p1" --volume-size 64K --sign "$T/key.key"
p1=$(pack_id "$T/out")

# ---- forged media under the genuine pack's id: a forged signature-1, the tag moved
cp -a "$src" "$T/evil"
printf 'a forged signature\n' >"$T/evil/$sigdir/signature-1"
al_retag "$T/evil" "$tag" "$other"
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/evil" -o "$T/pe" --volume-size 64K
python3 "$AL_TOOLS/hostile_tar.py" forge "$T/pe" "$T/forged" "$p1" >/dev/null

# ---- store B: the genuine pack trusted, then the forged one accepted untrusted
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/b" --trust "$T/key.pub"
al_check "the genuine pack imports with --trust (exit 0)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/forged" --store "$T/b"
al_check "the forged pack imports with --accept-untrusted (exit 0)" test "$AL_RC" = 0
al_check "... its signature is signature-2 of the store" grep -q forged "$T/b/$sigdir/signature-2"
moved=$(al_digest_of "$T/b" "$tag")
al_check "... and it moved tag $tag" test "$moved" = "$(al_digest_of "$T/evil" "$tag")"

srv_start "$T/b"
U=http://$SRV_ADDR
al_check "signature-1 is served: the genuine bytes" \
	bash -c 'test "$(curl -s -o "$3" -w "%{http_code}" "$1$2/signature-1")" = 200 && cmp -s "$3" "$4"' \
	_ "$U" "$sigurl" "$T/got1" "$src/$sigdir/signature-1"
al_check "the marked signature-2 is not served (404)" test "$(code "$U$sigurl/signature-2")" = 404
al_check "the moved (marked) tag is not served as a manifest (404)" \
	test "$(code "$U/v2/$(repo_of "$tag")/manifests/$(tag_of "$tag")")" = 404
al_check "... nor listed in tags/list" bash -c \
	'! curl -s "$1/v2/$2/tags/list" | grep -q "\"$3\""' _ "$U" "$(repo_of "$tag")" "$(tag_of "$tag")"
o=${other#*/}
al_check "an unmarked image is served by digest (200)" \
	test "$(code "$U/v2/${o%@*}/manifests/${o#*@}")" = 200
al_stop "$SRV_PID"

srv_start "$T/b" --serve-untrusted
U=http://$SRV_ADDR
al_check "--serve-untrusted: signature-2 is served, the forged bytes" \
	bash -c 'test "$(curl -s -o "$3" -w "%{http_code}" "$1$2/signature-2")" = 200 && grep -q forged "$3"' \
	_ "$U" "$sigurl" "$T/got2"
al_check "--serve-untrusted: the moved tag is served, its digest the forged one" bash -c \
	'curl -s -I "$1/v2/$2/manifests/$3" | tr -d "\r" | grep -qix "Docker-Content-Digest: $4"' \
	_ "$U" "$(repo_of "$tag")" "$(tag_of "$tag")" "$moved"
al_stop "$SRV_PID"

# ---- store A: the forged import alone is signature-1 (marked); a signature
# another writer saved as signature-2 (unmarked) is served as signature-1
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/forged" --store "$T/a"
al_check "the forged pack imports alone with --accept-untrusted (exit 0)" test "$AL_RC" = 0
cp "$src/$sigdir/signature-1" "$T/a/$sigdir/signature-2"
srv_start "$T/a"
U=http://$SRV_ADDR
al_check "signature-1 is the unmarked one (the genuine bytes)" \
	bash -c 'test "$(curl -s -o "$3" -w "%{http_code}" "$1$2/signature-1")" = 200 && cmp -s "$3" "$4"' \
	_ "$U" "$sigurl" "$T/got3" "$src/$sigdir/signature-1"
al_check "... and signature-2 is 404: the list ends there" test "$(code "$U$sigurl/signature-2")" = 404
al_check "the tag the forged import set is not served (404)" \
	test "$(code "$U/v2/$(repo_of "$tag")/manifests/$(tag_of "$tag")")" = 404
# the marks cleared (as a trusted import of the same content would): the
# server re-reads them without a change of index.json
rm "$T/a/airlock/untrusted.json"
served_after_clear() {
	local i
	for i in $(seq 1 300); do
		[ "$(code "$U/v2/$(repo_of "$tag")/manifests/$(tag_of "$tag")")" = 200 ] && return 0
		sleep 0.1
	done
	return 1
}
al_check "once the marks are gone, the tag is served (polled, no restart)" served_after_clear
al_check "... and signature-1 is the forged file again (every file served)" \
	bash -c 'curl -s "$1$2/signature-1" | grep -q forged' _ "$U" "$sigurl"
al_stop "$SRV_PID"
al_check "the server wrote nothing into the store's signatures" \
	bash -c 'test "$(ls "$1")" = "$(printf "signature-1\nsignature-2")"' _ "$T/a/$sigdir"
al_finish
