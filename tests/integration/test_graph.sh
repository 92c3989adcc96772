#!/usr/bin/env bash
# test_graph.sh: airlock graph (channel resolution, saved graphs, update-service graph data) and airlock releases on a store mirrored from samples/.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
store=$T/store
out=$T/graph-data

# A loopback update-graph server, stopped by PID at exit.
pf=$T/graph-port
python3 "$AL_TOOLS/graphserver.py" --port-file "$pf" 2>>"$T/graphserver.log" &
GRAPH_PID=$!
AL_PIDS+=("$GRAPH_PID")
for i in $(seq 1 50); do
	[ -s "$pf" ] && break
	sleep 0.1
done
if [ ! -s "$pf" ]; then
	al_fail "graphserver.py starts"
	al_finish
fi
url=http://127.0.0.1:$(cat "$pf")

al_run "$T/o" "$T/e" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$store"
cat "$T/e"
al_check "airlock mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0

cfg=$T/channels.yaml
cat >"$cfg" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    architectures: [amd64]
    channels:
    - name: stable-4.14
      minVersion: 4.14.1
      maxVersion: 4.14.10
      shortestPath: true
    - name: stable-4.15
      minVersion: 4.14.10
      maxVersion: 4.15.1
airlock:
  graph:
    url: $url
EOF

al_run "$T/o" "$T/e" "$AIRLOCK" graph --config "$cfg" --store "$store"
cat "$T/e"
al_check "airlock graph --config --store exits 0" test "$AL_RC" = 0
al_check "shortest path 4.14.1 -> 4.14.10 takes the conditional update to 4.14.9" \
	grep -q '^4.14.9 amd64 stable-4.14 quay.io/openshift-release-dev/ocp-release@sha256:' "$T/o"
al_check "4.14.10 is listed once, with both channels" \
	test "$(grep -c '^4.14.10 amd64 stable-4.14,stable-4.15 ' "$T/o")" = 1
al_check "the selection is sorted by version (4.14.1 4.14.9 4.14.10 4.15.0 4.15.1)" \
	test "$(cut -d' ' -f1 "$T/o" | tr '\n' ' ')" = "4.14.1 4.14.9 4.14.10 4.15.0 4.15.1 "
al_check "both graphs are saved in the store" \
	test -s "$store/airlock/graph/stable-4.14-amd64.json" -a -s "$store/airlock/graph/stable-4.15-amd64.json"

al_run "$T/o2" "$T/e" "$AIRLOCK" graph --config "$cfg" --graph-file "$store/airlock/graph"
al_check "--graph-file (the saved graphs) gives the same selection with no network" \
	bash -c 'test "$1" = 0 && cmp -s "$2" "$3"' _ "$AL_RC" "$T/o" "$T/o2"

# What 'airlock mirror' records for a release selected from a channel
# (the lead wires it), and a pack record naming the release digest.
digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["releases"][0]["digest"])' "$store/airlock/releases.json")
python3 - "$store/airlock/releases.json" <<'EOF'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["releases"][0]["channels"] = ["stable-4.14"]
d["releases"][0]["verified"] = True
json.dump(d, open(p, "w"), indent=2)
EOF
mkdir -p "$store/airlock/packs"
printf '{"id":"pack-0001","blobs":["%s"]}\n' "$digest" >"$store/airlock/packs/pack-0001.json"

al_run "$T/o" "$T/e" "$AIRLOCK" graph --store "$store" -o "$out"
cat "$T/e"
al_check "airlock graph --store -o exits 0" test "$AL_RC" = 0
al_check "summary line names channels and versions" \
	grep -qE '^wrote 2 channels, 1 versions, 0 blocked edges from 2 graphs to ' "$T/o"
al_check "channels/stable-4.14.yaml lists the mirrored 4.14.1 only" \
	test "$(cat "$out/channels/stable-4.14.yaml")" = "$(printf "name: stable-4.14\nversions:\n- '4.14.1'")"
al_check "channels/stable-4.15.yaml exists with no mirrored version" \
	grep -q '^name: stable-4.15$' "$out/channels/stable-4.15.yaml"
al_check "the graph-data version file is written" grep -qE '^1\.[0-9]+\.[0-9]+$' "$out/version"
al_check "the restricted graph keeps only the mirrored node" \
	python3 -c 'import json,sys; g=json.load(open(sys.argv[1])); sys.exit(0 if [n["version"] for n in g["nodes"]]==["4.14.1"] and g["edges"]==[] else 1)' \
	"$out/airlock/graph/stable-4.14-amd64.json"

al_run "$T/o" "$T/e" "$AIRLOCK" releases --store "$store"
cat "$T/o"
al_check "airlock releases exits 0" test "$AL_RC" = 0
al_check "releases: header" grep -qE '^VERSION +DIGEST +COMPONENTS +SIGNATURES +PACK +CHANNELS$' "$T/o"
al_check "releases: 4.14.1, its digest, 6 components, verified, pack-0001, stable-4.14" \
	grep -qE "^4\.14\.1 +$digest +6 +verified +pack-0001 +stable-4\.14$" "$T/o"

# Failures: clear messages and exit codes.
al_run "$T/o" "$T/e" "$AIRLOCK" graph --store "$T/nostore" -o "$T/x"
al_check "a missing store: exit 3" test "$AL_RC" = 3
mkdir -p "$T/empty"
printf '{"imageLayoutVersion":"1.0.0"}\n' >"$T/empty/oci-layout"
printf '{"schemaVersion":2,"manifests":[]}\n' >"$T/empty/index.json"
al_run "$T/o" "$T/e" "$AIRLOCK" graph --store "$T/empty" -o "$T/x"
al_check "a store without releases: exit 3, 'holds no release'" \
	bash -c 'test "$1" = 3 && grep -q "holds no release" "$2"' _ "$AL_RC" "$T/e"
sed 's/minVersion: 4.14.1/minVersion: 4.14.3/' "$cfg" >"$T/bad.yaml"
al_run "$T/o" "$T/e" "$AIRLOCK" graph --config "$T/bad.yaml"
al_check "an unknown minVersion: exit 3 naming the version and the channel" \
	bash -c 'test "$1" = 3 && grep -q "version '"'"'4.14.3'"'"' is not in channel '"'"'stable-4.14'"'"'" "$2"' _ "$AL_RC" "$T/e"
cat "$T/e"
al_check_fails "no arguments: usage error" 2 "$AIRLOCK" graph
al_check_fails "--graph-url with --graph-file: usage error" 2 "$AIRLOCK" graph --config "$cfg" --graph-url "$url" --graph-file "$T/x"

start=$(date +%s)
al_run "$T/o" "$T/e" "$AIRLOCK" graph --config "$cfg" --graph-url "$url/hang" --timeout 1s
elapsed=$(($(date +%s) - start))
cat "$T/e"
al_check "a hanging update service fails (exit 3) within 15 s with --timeout 1s (took ${elapsed}s)" \
	bash -c 'test "$1" = 3 && test "$2" -lt 15' _ "$AL_RC" "$elapsed"

al_finish
