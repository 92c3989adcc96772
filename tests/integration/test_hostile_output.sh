#!/usr/bin/env bash
# test_hostile_output.sh: text that came from the network or a file (a hostile update graph's payloads, a store's releases.json, catalogs.json and pack records) reaches the terminal escaped: no ESC, BEL or CR from it on stdout in text mode, the JSON output still carries the text exactly.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v python3 >/dev/null || al_skip "python3 is needed"

# 1. airlock graph on a graph whose payload carries terminal escapes
mkdir -p "$T/graph"
python3 - "$T/graph/stable-4.14-amd64.json" <<'PY'
import json, sys
d = lambda h: "sha256:" + h * 32
evil = "quay.io/evil\u001b]0;pwned\u0007\u001b[2J\r/x@" + d("ef")
g = {"nodes": [
    {"version": "4.14.1", "payload": "quay.io/openshift-release-dev/ocp-release@" + d("ab"),
     "metadata": {"io.openshift.upgrades.graph.release.channels": "stable-4.14"}},
    {"version": "4.14.3", "payload": evil,
     "metadata": {"io.openshift.upgrades.graph.release.channels": "stable-4.14",
                  "url": "https://e.test/\u001b[31m"}}],
    "edges": [[0, 1]], "conditionalEdges": []}
json.dump(g, open(sys.argv[1], "w"))
PY
cat >"$T/c.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    architectures: [amd64]
    channels:
    - name: stable-4.14
      minVersion: 4.14.1
      maxVersion: 4.14.3
YAML
no_controls() { # FILE: no ESC, BEL or CR byte in it
	! grep -q $'[\e\a\r]' "$1"
}
al_run "$T/o" "$T/e" "$AIRLOCK" graph --config "$T/c.yaml" --graph-file "$T/graph"
cat "$T/e"
al_check "graph on the hostile graph exits 0" test "$AL_RC" = 0
al_check "graph lists the hostile release" grep -q '^4.14.3 amd64 stable-4.14 ' "$T/o"
al_check "graph's stdout carries no ESC, BEL or CR" no_controls "$T/o"
al_check "the payload is printed escaped" grep -qF 'quay.io/evil\x1b]0;pwned\x07\x1b[2J\x0d/x@' "$T/o"

# 2. airlock releases and catalogs on a store whose records are hostile
# (the catalogs are the "catalogs" array of releases.json)
al_run "$T/o" "$T/e" "$AIRLOCK" mirror --config "$AL_SOURCE_DIR/samples/imageset.yaml" --store "$T/s" -q
al_check "the sample store is mirrored" test "$AL_RC" = 0
python3 - "$T/s/airlock" <<'PY'
import json, os, sys
a = sys.argv[1]
p = os.path.join(a, "releases.json")
r = json.load(open(p))
rel = r["releases"][0]
rel["version"] = "4.14.1\u001b[8m"
rel["channels"] = ["stable-4.14\u001b]0;pwned\u0007"]
rel["verifiedBy"] = "\u001b[2J"
r["catalogs"] = [{"name": "quay.io/c/idx:v1\u001b[31m", "digest": rel["digest"],
                  "source": "quay.io/c/src:v1\u009b31m", "packages": 1, "bundles": 1,
                  "images": []}]
json.dump(r, open(p, "w"))
PY
al_run "$T/o" "$T/e" "$AIRLOCK" releases --store "$T/s"
cat "$T/e"
al_check "releases exits 0" test "$AL_RC" = 0
al_check "releases' stdout carries no ESC, BEL or CR" no_controls "$T/o"
al_check "the version and channel are printed escaped" \
	bash -c 'grep -qF "4.14.1\x1b[8m" "$1" && grep -qF "stable-4.14\x1b]0;pwned\x07" "$1"' _ "$T/o"
al_check "the table's columns line up on the escaped text" \
	python3 -c 'import sys
l = open(sys.argv[1]).read().splitlines()
assert l[0].index("DIGEST") == l[1].index("sha256:"), l' "$T/o"
al_run "$T/j" "$T/e" "$AIRLOCK" releases --store "$T/s" --json
al_check "releases --json keeps the text exactly (JSON escapes)" \
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["releases"][0]["version"] == "4.14.1\x1b[8m", d' "$T/j"
al_run "$T/o" "$T/e" "$AIRLOCK" catalogs --store "$T/s"
cat "$T/e"
if [ "$AL_RC" = 0 ]; then
	al_check "catalogs' stdout carries no ESC, BEL or CR" no_controls "$T/o"
	al_check "the catalog name is printed escaped" grep -qF 'quay.io/c/idx:v1\x1b[31m' "$T/o"
	al_check "a C1 CSI (U+009B) is escaped too" bash -c '! grep -q $'"'"'\xc2\x9b'"'"' "$1"' _ "$T/o"
else
	al_fail "catalogs reads the hand-written catalogs.json (exit $AL_RC)"
fi

al_finish
