#!/usr/bin/env bash
# test_check_releases.sh: airlock check cross-checks airlock/releases.json (missing release manifest, blob, component; lost names kept by gc) and refuses index entries that are not manifests.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
name=quay.io/airlock-samples/release:4.14.1-x86_64
release=sha256:c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807
layer=sha256:3ce36c56d5f80ab33e8175e3d2a9b59e35704dab075ea97cc57acee0950a73bd
config=sha256:a78a46c1974754438a7dade686a9b2f480fe3fc8ef615e691a7680b01769c21d
# the "console" component of the sample release, and its config blob
comp=quay.io/airlock-samples/ocp-v4.0-art-dev@sha256:7b0ea4434bf001d7fa67a823cc5e4258b8796475a5690e0494ae274eb8151e7e

"$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$T/base" >/dev/null 2>&1
al_check "the sample mirror made a store with a recorded release" \
	grep -qF "$release" "$T/base/airlock/releases.json"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/base"
al_check "the sample store checks clean (exit 0)" test "$AL_RC" = 0

# Remove the index.json entry named $2 of store $1.
drop_name() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
p = sys.argv[1] + "/index.json"
idx = json.load(open(p))
n = len(idx["manifests"])
idx["manifests"] = [m for m in idx["manifests"]
                    if m.get("annotations", {}).get("org.opencontainers.image.ref.name") != sys.argv[2]]
assert len(idx["manifests"]) == n - 1, sys.argv[2]
json.dump(idx, open(p, "w"))
EOF
}
# Add an index.json entry NAME -> DIGEST with MEDIATYPE to store $1.
add_entry() {
	python3 - "$1" "$2" "$3" "$4" <<'EOF'
import json, os, sys
root, name, digest, mt = sys.argv[1:5]
p = root + "/index.json"
idx = json.load(open(p))
size = os.path.getsize("%s/blobs/sha256/%s" % (root, digest.split(":")[1]))
idx["manifests"].append({"mediaType": mt, "digest": digest, "size": size,
                         "annotations": {"org.opencontainers.image.ref.name": name}})
json.dump(idx, open(p, "w"))
EOF
}
fresh() {
	rm -rf "$T/s"
	cp -r "$T/base" "$T/s"
}
blob() { echo "$T/s/blobs/sha256/${1#sha256:}"; }

# 1. The release's index name lost: still checked, and gc keeps it.
fresh
drop_name "$T/s" "$name"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/s"
cat "$T/out"
al_check "release name lost: check still clean (exit 0)" test "$AL_RC" = 0
al_check "release name lost: its blobs are not unreferenced" bash -c '! grep -q "^unreferenced" "$1"' _ "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/s" --gc
al_check "release name lost: check --gc exit 0" test "$AL_RC" = 0
al_check "release name lost: gc kept the release manifest" test -f "$(blob $release)"
al_check "release name lost: gc kept its layers" test -f "$(blob $layer)"
al_check "release name lost: gc removed nothing" grep -q ", 0 removed" "$T/out"

# 2. The recorded release's manifest missing (name lost too).
fresh
drop_name "$T/s" "$name"
rm "$(blob $release)"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/s"
cat "$T/out"
al_check "missing release manifest: exit 1" test "$AL_RC" = 1
al_check "missing release manifest: the message names the release and the manifest" \
	grep -qF "missing $release - manifest of release 4.14.1 ($release) recorded in airlock/releases.json" "$T/out"
# and with its name still in index.json: reported again naming the release
fresh
rm "$(blob $release)"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/s"
cat "$T/out"
al_check "missing release manifest (named): exit 1" test "$AL_RC" = 1
al_check "missing release manifest (named): a line names the recorded release" \
	grep -qF "missing $release - needed by release 4.14.1" "$T/out"
al_check "missing release manifest (named): counted once" grep -qF ": 1 missing," "$T/out"

# 3. A blob of the recorded release missing (name lost).
fresh
drop_name "$T/s" "$name"
rm "$(blob $layer)"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/s"
cat "$T/out"
al_check "missing release layer: exit 1" test "$AL_RC" = 1
al_check "missing release layer: the message names the blob and the release" \
	grep -qF "missing $layer - referenced by 'release 4.14.1 ($release) recorded in airlock/releases.json'" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/s" --gc
al_check "missing release layer: gc keeps the rest of the release" test -f "$(blob $release)" -a -f "$(blob $config)"

# 4. A component image missing: index entry and manifest gone.
fresh
cdig=${comp#*@}
drop_name "$T/s" "$comp"
rm "$(blob $cdig)"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/s"
cat "$T/out"
al_check "missing component: exit 1" test "$AL_RC" = 1
al_check "missing component: the message names the component and the release" \
	grep -qE "^missing $cdig - manifest of component [a-z-]+ \\($comp\\) of release 4\\.14\\.1 \\($release\\)" "$T/out"
# only its name lost: kept by gc
fresh
drop_name "$T/s" "$comp"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/s" --gc
cat "$T/out"
al_check "component name lost: check --gc exit 0" test "$AL_RC" = 0
al_check "component name lost: gc kept the component manifest" test -f "$(blob $cdig)"
al_check "component name lost: gc removed nothing" grep -q ", 0 removed" "$T/out"

# 5. Index entries that do not name a manifest or index.
fresh
add_entry "$T/s" "example.com/not/an-image:layer" "$layer" "application/vnd.oci.image.layer.v1.tar+gzip"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/s"
cat "$T/out"
al_check "an index entry naming a layer: exit 1" test "$AL_RC" = 1
al_check "an index entry naming a layer: the message names the entry" \
	grep -qF "invalid $layer - index.json entry 'example.com/not/an-image:layer' has media type" "$T/out"
fresh
add_entry "$T/s" "example.com/not/an-image:config" "$config" "application/vnd.oci.image.manifest.v1+json"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/s"
cat "$T/out"
al_check "an entry typed as a manifest that names a config: exit 1" test "$AL_RC" = 1
al_check "an entry typed as a manifest that names a config: the message names the entry" \
	grep -qF "(referenced by 'example.com/not/an-image:config')" "$T/out"
al_finish
