#!/usr/bin/env bash
# test_untrusted_digest_names.sh: a manifest an untrusted import stored only under a name by digest (REPO@sha256:...) stays untrusted (issue 24, item 4): forged media carry a referrer of the release named by its digest alone; imported with --accept-untrusted it is marked, not served by airlock serve (by digest nor in the referrers list) unless --serve-untrusted, not carried by a signed pack; the genuine pack imported with --trust afterwards clears the marks of the names it sets and leaves the forged referrer marked. Judged by what the store holds and what curl gets.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
src=$T/src
rel=quay.io/airlock-samples/release:4.14.1-x86_64
repo=airlock-samples/release

pack_id() { sed -n 's/^pack \([A-Za-z0-9-]*\): .*/\1/p' "$1"; }
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
# the names of untrusted.json's "tags" marks of store $1, sorted
marked_names() {
	python3 -c 'import json,sys,os
p = sys.argv[1] + "/airlock/untrusted.json"
d = json.load(open(p)) if os.path.exists(p) else {}
print("\n".join(sorted(m["name"] for m in d.get("tags", []))))' "$1"
}
# lists_referrer yes|no URL DIGEST: whether the referrers index served at URL lists DIGEST
lists_referrer() {
	curl -s -o "$T/referrers.json" "$2" || return 1
	python3 -c 'import json,sys
d = json.load(open(sys.argv[3]))
has = any(m["digest"] == sys.argv[2] for m in d["manifests"])
sys.exit(0 if has == (sys.argv[1] == "yes") else 1)' "$1" "$3" "$T/referrers.json"
}

# ---- staging: the sample release and a signed pack of it
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
"$AIRLOCK" keygen -o "$T/key" >/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p1" --volume-size 64K --sign "$T/key.key"
p1=$(pack_id "$T/out")
al_check "a signed pack of the staging store ($p1)" test -n "$p1"
reldig=$(al_digest_of "$src" "$rel")
comp=$(al_index_digests "$src" | awk '$1 ~ /@sha256:/ {print $1; exit}')
al_check "the store names a component by digest ($comp)" test -n "$comp"

# ---- forged media under the genuine pack's id: a referrer of the release
# (an artifact whose subject is the release) named by its digest alone
cp -a "$src" "$T/evil"
evil=$(python3 - "$T/evil" "$reldig" <<'EOF'
import hashlib, json, os, sys
store, subject = sys.argv[1:]
idx = json.load(open(store + "/index.json"))
sub = [m for m in idx["manifests"] if m["digest"] == subject][0]
man = json.load(open(store + "/blobs/sha256/" + subject[7:]))
ref = {"schemaVersion": 2,
       "mediaType": "application/vnd.oci.image.manifest.v1+json",
       "artifactType": "application/vnd.example.forged",
       "config": man["config"], "layers": man["layers"],
       "subject": {"mediaType": sub["mediaType"], "digest": subject,
                   "size": sub["size"]},
       "annotations": {"forged": "yes"}}
b = json.dumps(ref).encode()
h = hashlib.sha256(b).hexdigest()
open(store + "/blobs/sha256/" + h, "wb").write(b)
name = "quay.io/airlock-samples/release@sha256:" + h
idx["manifests"].append({"mediaType": ref["mediaType"],
                         "digest": "sha256:" + h, "size": len(b),
                         "annotations": {"org.opencontainers.image.ref.name": name}})
json.dump(idx, open(store + "/index.json", "w"), indent=1)
print("sha256:" + h)
EOF
)
evilname=quay.io/airlock-samples/release@$evil
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/evil" -o "$T/pe" --volume-size 64K
al_check "the forged store packs (exit 0)" test "$AL_RC" = 0
python3 "$AL_TOOLS/hostile_tar.py" forge "$T/pe" "$T/forged" "$p1" >/dev/null

# ---- store B: the genuine pack trusted, then the forged one accepted untrusted
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/b" --trust "$T/key.pub"
al_check "the genuine pack imports with --trust (exit 0)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/forged" --store "$T/b"
al_check "the forged pack imports with --accept-untrusted (exit 0)" test "$AL_RC" = 0
al_check "... the store names the forged referrer by its digest" \
	test "$(al_digest_of "$T/b" "$evilname")" = "$evil"
al_check "... that name, and only it, is marked (the names the store had are not)" \
	test "$(marked_names "$T/b")" = "$evilname"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/b" --json
al_check "check --json lists it under untrusted" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if [x["name"] for x in d["untrusted"] if x["kind"] == "tag"] == [sys.argv[2]] else 1)' \
	"$T/out" "$evilname"

al_start_serve --store "$T/b"
U=http://$SRV_ADDR
al_check "serve: the forged referrer is not served by digest (404)" \
	test "$(code "$U/v2/$repo/manifests/$evil")" = 404
al_check "... nor listed among the release's referrers" \
	lists_referrer no "$U/v2/$repo/referrers/$reldig" "$evil"
c=${comp#*/}
al_check "... a component the trusted import named by digest is served (200)" \
	test "$(code "$U/v2/${c%@*}/manifests/${c#*@}")" = 200
al_check "... and the release by digest (200)" test "$(code "$U/v2/$repo/manifests/$reldig")" = 200
al_stop "$SRV_PID"
al_start_serve --store "$T/b" --serve-untrusted
U=http://$SRV_ADDR
al_check "serve --serve-untrusted: the forged referrer is served (200)" \
	test "$(code "$U/v2/$repo/manifests/$evil")" = 200
al_check "... and listed among the release's referrers" \
	lists_referrer yes "$U/v2/$repo/referrers/$reldig" "$evil"
al_stop "$SRV_PID"

# ---- a signed pack of store B does not carry it
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/b" -o "$T/p2" --volume-size 64K --sign "$T/key.key"
al_check "store B packs (exit 0)" test "$AL_RC" = 0
al_check "... no volume names the forged referrer (its blob may travel, unnamed)" \
	bash -c '! grep -aq "$2" "$1"/airlock-*.tar' _ "$T/p2" "$evilname"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p2" --store "$T/far" --trust "$T/key.pub"
al_check "a far store imports it with --trust (exit 0)" test "$AL_RC" = 0
al_check "... and names what the genuine store names, no more" al_same_index "$src" "$T/far"

# ---- store C: the forged pack alone, then the genuine pack with --trust
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/forged" --store "$T/c"
al_check "the forged pack imports alone with --accept-untrusted (exit 0)" test "$AL_RC" = 0
al_check "... every name it set is marked, names by digest too" \
	test "$(marked_names "$T/c")" = "$(al_index_digests "$T/evil" | awk '{print $1}' | sort)"
al_start_serve --store "$T/c"
U=http://$SRV_ADDR
al_check "serve: the component named by digest is not served (404)" \
	test "$(code "$U/v2/${c%@*}/manifests/${c#*@}")" = 404
al_stop "$SRV_PID"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/c" --trust "$T/key.pub"
al_check "the genuine pack then imports with --trust (exit 0)" test "$AL_RC" = 0
al_check "... its names are vouched for: only the forged referrer stays marked" \
	test "$(marked_names "$T/c")" = "$evilname"
al_start_serve --store "$T/c"
U=http://$SRV_ADDR
al_check "serve: the component is served now (200)" \
	test "$(code "$U/v2/${c%@*}/manifests/${c#*@}")" = 200
al_check "... the forged referrer still is not (404)" \
	test "$(code "$U/v2/$repo/manifests/$evil")" = 404
al_stop "$SRV_PID"
al_finish
