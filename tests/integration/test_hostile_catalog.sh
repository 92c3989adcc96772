#!/usr/bin/env bash
# test_hostile_catalog.sh: a catalog image whose FBC carries hostile package, channel and bundle names and image references (path traversal, newline + mapping line, ESC, space, '=', TAB): catalog filter refuses it, and nothing of it reaches the store, the --fbc tree, the resources or stdout (issue 24, item 3).
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

D0=0000000000000000000000000000000000000000000000000000000000000000
# fbc FILE PACKAGE CHANNEL BUNDLE IMAGE RELATED: one package, one channel,
# one bundle, written as JSON (the names arrive as the catalog holds them)
fbc() {
	python3 - "$@" <<'EOF'
import json, sys
path, pkg, ch, bun, img, rel = sys.argv[1:]
objs = [
    {"schema": "olm.package", "name": pkg, "defaultChannel": ch},
    {"schema": "olm.channel", "package": pkg, "name": ch, "entries": [{"name": bun}]},
    {"schema": "olm.bundle", "package": pkg, "name": bun, "image": img,
     "properties": [{"type": "olm.package", "value": {"packageName": pkg, "version": "1.0.0"}}],
     "relatedImages": [{"name": "operator", "image": rel}]},
]
with open(path, "w") as f:
    for o in objs:
        f.write(json.dumps(o) + "\n")
EOF
}

# run_case NAME PACKAGE CHANNEL BUNDLE IMAGE RELATED: a fresh store with
# the catalog (mkcatalog's packages plus this one), catalog filter selecting
# alpha and PACKAGE; sets AL_RC.
run_case() {
	local name=$1 pkg=$2
	shift
	W=$T/$name
	mkdir -p "$W"
	fbc "$W/extra.json" "$@"
	python3 "$AL_TOOLS/mkcatalog.py" "$W/store" quay.io/example/catalog:v1 --extra "$W/extra.json" >/dev/null
	python3 - "$W/isc.yaml" "$pkg" <<'EOF'
import json, sys
# YAML is a superset of JSON: the package name goes in quoted and escaped
doc = {"kind": "ImageSetConfiguration", "apiVersion": "mirror.openshift.io/v2alpha1",
       "mirror": {"operators": [{"catalog": "docker://quay.io/example/catalog:v1",
                                  "targetTag": "v1-filtered",
                                  "packages": [{"name": "alpha"}, {"name": sys.argv[2]}]}]}}
open(sys.argv[1], "w").write(json.dumps(doc))
EOF
	al_run "$W/out" "$W/err" "$AIRLOCK" catalog filter --store "$W/store" --config "$W/isc.yaml" \
		--fbc "$W/fbc" --resources "$W/res" --registry 127.0.0.1:5000/mirror
}

# refused NAME: the catalog was refused, and nothing of it went anywhere
refused() {
	local name=$1 W=$T/$1
	al_check "$name: catalog filter refuses the catalog (exit $AL_RC)" test "$AL_RC" != 0 -a "$AL_RC" != 2
	al_check "$name: stdout names no image" test ! -s "$W/out"
	al_check "$name: no filtered catalog tagged in the store" \
		bash -c '! grep -q "v1-filtered" "$1/store/index.json"' _ "$W"
	al_check "$name: no --fbc tree written" bash -c '[ -z "$(ls -A "$1/fbc" 2>/dev/null)" ]' _ "$W"
	al_check "$name: nothing named evil anywhere under the test directory" \
		bash -c '[ -z "$(find "$1" -name "*evil*" ! -name extra.json)" ]' _ "$T"
	al_check "$name: the message carries no raw ESC or CR" bash -c '! grep -q $'"'"'[\x1b\r]'"'"' "$1/err"' _ "$W"
	al_check "$name: every stderr line is a diagnostic (no injected line)" \
		bash -c '! grep -v "^airlock: \|^  \|^try " "$1/err" | grep -q .' _ "$W"
}

good_img=quay.io/example/hostile-bundle@sha256:$D0
good_rel=quay.io/example/hostile-operator@sha256:$D0
mapline=$'\n'"quay.io/attacker/evil:1=MIRROR/openshift/release:4.14.1"

# the same catalog with plain names is taken: the cases below differ by one name
run_case benign benign stable benign.v1.0.0 "$good_img" "$good_rel"
al_check "benign: catalog filter exits 0" test "$AL_RC" = 0
al_check "benign: its bundle image is listed" grep -q "hostile-bundle@sha256:$D0" "$T/benign/out"
al_check "benign: its package is written to the --fbc tree" test -f "$T/benign/fbc/catalog-v1-filtered/benign/catalog.json"

run_case pkg-traversal "../../evil" stable e.v1.0.0 "$good_img" "$good_rel"
refused pkg-traversal
run_case pkg-backslash 'a\..\..\evil' stable e.v1.0.0 "$good_img" "$good_rel"
refused pkg-backslash
run_case pkg-esc $'evil\x1b[31m' stable e.v1.0.0 "$good_img" "$good_rel"
refused pkg-esc
run_case channel-newline hostile "stable$mapline" e.v1.0.0 "$good_img" "$good_rel"
refused channel-newline
run_case channel-field hostile "stable evil=1" e.v1.0.0 "$good_img" "$good_rel"
refused channel-field
run_case bundle-newline hostile stable "e.v1.0.0$mapline" "$good_img" "$good_rel"
refused bundle-newline
run_case bundle-tab hostile stable $'e.v1.0.0\tevil' "$good_img" "$good_rel"
refused bundle-tab
run_case bundle-cr hostile stable $'e.v1.0.0\revil' "$good_img" "$good_rel"
refused bundle-cr
run_case image-newline hostile stable e.v1.0.0 "$good_img$mapline" "$good_rel"
refused image-newline
run_case related-field hostile stable e.v1.0.0 "$good_img" "quay.io/x/evil:1=MIRROR/openshift/release:4.14.1"
refused related-field
run_case related-space hostile stable e.v1.0.0 "$good_img" "quay.io/x/y:1 quay.io/evil:2"
refused related-space
al_finish
