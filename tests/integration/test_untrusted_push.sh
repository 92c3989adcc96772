#!/usr/bin/env bash
# test_untrusted_push.sh: push leaves out the names an untrusted import set (issue 24, item 4): a store holds the sample release from a pack imported with --trust, and a tag and a name by digest from a pack accepted untrusted; push sends neither (the registry's catalog, tags and manifests say so), pushed.json and the IDMS/ITMS of --cluster-resources do not name them; push --push-untrusted sends both. Judged by what the registry holds and the store's records.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
src=$T/src
rel=quay.io/airlock-samples/release:4.14.1-x86_64

# ---- the genuine release, packed signed and imported with --trust
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
"$AIRLOCK" keygen -o "$T/key" >/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p1" --volume-size 64K --sign "$T/key.key"
al_check "a signed pack of the staging store" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/b" --trust "$T/key.pub"
al_check "the genuine pack imports with --trust (exit 0)" test "$AL_RC" = 0

# ---- a forger's store: the release, a tag of its own on the release
# manifest and a manifest of its own named by digest alone
cp -a "$src" "$T/evil"
evil=$(python3 - "$T/evil" "$(al_digest_of "$src" "$rel")" <<'EOF'
import hashlib, json, sys
store, reldig = sys.argv[1:]
idx = json.load(open(store + "/index.json"))
sub = [m for m in idx["manifests"] if m["digest"] == reldig][0]
man = json.load(open(store + "/blobs/sha256/" + reldig[7:]))
man["annotations"] = {"forged": "yes"}
b = json.dumps(man).encode()
h = hashlib.sha256(b).hexdigest()
open(store + "/blobs/sha256/" + h, "wb").write(b)
ann = "org.opencontainers.image.ref.name"
idx["manifests"].append({"mediaType": sub["mediaType"], "digest": "sha256:" + h,
                         "size": len(b),
                         "annotations": {ann: "quay.io/forger/bydigest@sha256:" + h}})
idx["manifests"].append({"mediaType": sub["mediaType"], "digest": reldig,
                         "size": sub["size"],
                         "annotations": {ann: "quay.io/forger/tagged:1"}})
json.dump(idx, open(store + "/index.json", "w"), indent=1)
print("sha256:" + h)
EOF
)
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/evil" -o "$T/pe" --volume-size 64K
al_check "the forger's store packs unsigned (exit 0)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/pe" --store "$T/b"
al_check "and imports with --accept-untrusted (exit 0)" test "$AL_RC" = 0
al_check "untrusted.json marks the forger's two names, nothing of the release" \
	python3 - "$T/b" "$evil" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1] + "/airlock/untrusted.json"))
names = sorted(t["name"] for t in m["tags"])
assert names == ["quay.io/forger/bydigest@" + sys.argv[2],
                 "quay.io/forger/tagged:1"], names
EOF

# repos REG: the registry's catalog, one a line
repos() { curl -sf "http://$1/v2/_catalog" | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["repositories"]))'; }
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
accept="application/vnd.oci.image.manifest.v1+json,application/vnd.docker.distribution.manifest.v2+json"

# ---- push: the marked names stay in the store
al_start_registry "$T/reg"
R=$REG_ADDR
al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$T/b" --tls-verify=false \
	--cluster-resources "$T/cr" "docker://$R/mirror"
al_check "push exits 0" test "$AL_RC" = 0
repos "$R" >"$T/repos"
al_check "the release reached the registry" grep -qx 'mirror/openshift/release-images' "$T/repos"
al_check "no repository of the forger's names" bash -c '! grep -q forger "$1"' _ "$T/repos"
al_check "the forger's manifest is not in the registry under any repository" \
	bash -c 'for r in $(cat "$1"); do c=$(curl -s -o /dev/null -w "%{http_code}" -H "Accept: $4" "http://$2/v2/$r/manifests/$3"); [ "$c" = 404 ] || exit 1; done' \
	_ "$T/repos" "$R" "$evil" "$accept"
al_check "pushed.json names none of them" bash -c '! grep -q forger "$1"' _ "$T/b/airlock/pushed.json"
al_check "the mirror sets name none of them" bash -c '! grep -rq forger "$1"' _ "$T/cr"
al_check "the mirror sets were written" bash -c 'ls "$1"/idms-* >/dev/null' _ "$T/cr"

# ---- push --push-untrusted: they go too
al_run "$T/out" "$T/err" "$AIRLOCK" push --store "$T/b" --tls-verify=false --push-untrusted \
	--cluster-resources "$T/cr2" "docker://$R/mirror"
al_check "push --push-untrusted exits 0" test "$AL_RC" = 0
al_check "the forger's tag is in the registry" \
	test "$(code -H "Accept: $accept" "http://$R/v2/mirror/forger/tagged/manifests/1")" = 200
al_check "the forger's manifest by digest is in the registry" \
	test "$(code -H "Accept: $accept" "http://$R/v2/mirror/forger/bydigest/manifests/$evil")" = 200
al_check "and the mirror sets name them" grep -rq forger "$T/cr2"

al_finish
