#!/usr/bin/env bash
# graph_parse.sh: benchmark: update-graph parsing (al_graph_parse) of an N-node graph against parsing the same JSON with jansson alone, as a ratio.
#
# usage: tests/bench/graph_parse.sh
# Environment:
#   AL_BUILD_DIR   the build with libairlock.so (default build/; use a
#                  release or RelWithDebInfo build, not the sanitizer one)
#   BENCH_NODES    nodes of the graph (default 100000; the limit is 200000)
#   BENCH_PAIRS    interleaved pairs (airlock, jansson), at least 3 (default 5)
#   BENCH_KEEP=1   keep the work directory
# Not run by ctest. Needs cc, python3 and the jansson headers.
#
# It writes a Cincinnati graph document like the update service's
# (https://api.openshift.com/api/upgrades_info/v1/graph): N nodes with
# version, payload (by digest) and channel metadata (kept under
# AL_GRAPH_MAX_BYTES, 32 MiB, at 100k nodes), a chain of edges plus edges
# skipping ahead, and conditional edges with risks; compiles
# tests/bench/graph_parse.c against the build's libairlock; and times
# al_graph_parse (jansson load + node, edge and conditional-edge checks)
# and json_loadb with the same flags, alternating A B A B. It prints each
# pair and the median ratio with its range. The ratio is the cost of
# airlock's checks on top of the JSON parse: it stays near 1 when they are
# O(n log n); the quadratic duplicate check it replaced took 17 s for 60k
# nodes.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AL_BUILD_DIR=${AL_BUILD_DIR:-$here/build}
N=${BENCH_NODES:-100000}
PAIRS=${BENCH_PAIRS:-5}
[ "$PAIRS" -ge 3 ] || { echo "graph_parse: BENCH_PAIRS must be at least 3" >&2; exit 2; }
[ -e "$AL_BUILD_DIR/libairlock.so" ] || { echo "graph_parse: no $AL_BUILD_DIR/libairlock.so (build first or set AL_BUILD_DIR)" >&2; exit 2; }

W=$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench-graph.XXXXXX")
cleanup() {
	local rc=$?
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $W" >&2; else rm -rf "$W"; fi
	exit $rc
}
trap cleanup EXIT

python3 - "$N" >"$W/graph.json" <<'PY'
import hashlib, json, sys
n = int(sys.argv[1])
nodes = []
for i in range(n):
    v = "4.%d.%d" % (i // 1000, i % 1000)
    d = hashlib.sha256(v.encode()).hexdigest()
    nodes.append({"version": v,
                  "payload": "quay.io/openshift-release-dev/ocp-release@sha256:" + d,
                  "metadata": {"io.openshift.upgrades.graph.release.channels": "stable-4.%d" % (i // 1000)}})
edges = [[i, i + 1] for i in range(n - 1)] + [[i, i + 7] for i in range(0, n - 7, 3)]
cond = [{"edges": [{"from": nodes[i]["version"], "to": nodes[i + 5]["version"]}],
         "risks": [{"url": "https://issues.redhat.com/browse/OCPBUGS-%d" % i,
                    "name": "Risk%d" % i, "message": "a known issue",
                    "matchingRules": [{"type": "Always"}]}]}
        for i in range(0, n - 5, 10)]
json.dump({"nodes": nodes, "edges": edges, "conditionalEdges": cond}, sys.stdout)
PY
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I"$here/include" -o "$W/graph_parse" \
	"$here/tests/bench/graph_parse.c" -L"$AL_BUILD_DIR" -lairlock -ljansson \
	-Wl,-rpath,"$AL_BUILD_DIR"
echo "graph: $N nodes, $(wc -c <"$W/graph.json") bytes" >&2
"$W/graph_parse" "$W/graph.json" "$PAIRS"
