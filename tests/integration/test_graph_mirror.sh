#!/usr/bin/env bash
# test_graph_mirror.sh: mirror a channel range (update graph -> releases) from a loopback registry, end to end.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

prefix=quay.io/airlock-samples
# Three releases of one channel; 4.14.1 and 4.14.2 share most components.
for v in 4.14.1 4.14.2 4.14.3; do
	python3 "$AL_SOURCE_DIR/tests/tools/mkrelease.py" --out "$T/rel-$v" --version "$v" \
		--components 3 --layer-size 20000 --base-size 30000 --seed "graph-$v" >/dev/null
done
al_start_registry "$T/reg"
R=$REG_ADDR
for v in 4.14.1 4.14.2 4.14.3; do
	al_check "release $v pushed to the registry" al_push_layout "$T/rel-$v" "$R"
done
d1=$(al_digest_of "$T/rel-4.14.1" "$prefix/release:4.14.1-x86_64")
d2=$(al_digest_of "$T/rel-4.14.2" "$prefix/release:4.14.2-x86_64")
d3=$(al_digest_of "$T/rel-4.14.3" "$prefix/release:4.14.3-x86_64")

# The update graph as the update service answers it: 4.14.1 -> 4.14.2 -> 4.14.3.
cat >"$T/graph.json" <<JSON
{"nodes": [
  {"version": "4.14.1", "payload": "$prefix/release@$d1", "metadata": {}},
  {"version": "4.14.2", "payload": "$prefix/release@$d2", "metadata": {}},
  {"version": "4.14.3", "payload": "$prefix/release@$d3", "metadata": {}}],
 "edges": [[0, 1], [1, 2]],
 "conditionalEdges": []}
JSON
cat >"$T/imageset.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    channels:
    - name: stable-4.14
      minVersion: 4.14.1
      maxVersion: 4.14.2
airlock:
  sources:
  - prefix: $prefix
    location: docker://$R/airlock-samples
YAML

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --graph-file "$T/graph.json" \
	--store "$T/store" --tls-verify=false
cat "$T/err"
al_check "mirror of the channel range exits 0" test "$AL_RC" = 0
al_check "two releases mirrored (4.14.1 and 4.14.2, not 4.14.3)" \
	grep -qE '^mirrored 2 releases, ' <(al_last_line "$T/out")
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$T/store"
cat "$T/out"
al_check "releases lists 4.14.1 in stable-4.14" grep -qE '^4\.14\.1 .*stable-4\.14' "$T/out"
al_check "releases lists 4.14.2 in stable-4.14" grep -qE '^4\.14\.2 .*stable-4\.14' "$T/out"
al_check "4.14.3 (outside the range) is not mirrored" test "$(grep -c '^4\.14\.3 ' "$T/out" || true)" = 0
al_check "the channel graph was saved in the store" test -s "$T/store/airlock/graph/stable-4.14-amd64.json"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/store"
al_check "airlock check is clean" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" graph --store "$T/store" -o "$T/graphdata"
cat "$T/err"
al_check "airlock graph -o exits 0" test "$AL_RC" = 0
al_check "graph data lists the channel with both mirrored versions" \
	bash -c "grep -q '4.14.1' '$T/graphdata/channels/stable-4.14.yaml' && grep -q '4.14.2' '$T/graphdata/channels/stable-4.14.yaml'"
# An unknown version in the range is a clear error naming it.
sed -i 's/maxVersion: 4.14.2/maxVersion: 4.14.99/' "$T/imageset.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --graph-file "$T/graph.json" \
	--store "$T/store" --tls-verify=false
al_check "an unknown maxVersion fails" test "$AL_RC" != 0
al_check "the error names the version" grep -q '4.14.99' "$T/err"
al_finish
