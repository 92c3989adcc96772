#!/usr/bin/env bash
# test_json_output.sh: --json documents, JSON log lines, mirrorsets' CRD
# al-tier: quick
# check and ICSP file, push records, digest tags kept by garbage-collect.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v jq >/dev/null || al_skip "jq is missing"

S=$T/store
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source -q --config "$AL_SOURCE_DIR/samples/imageset.yaml" --store "$S"
al_check "mirror the samples" test "$AL_RC" = 0

al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$S" --json
al_check "releases --json: one document with its schema" \
	bash -c '[ "$(jq -r .schema "$1")" = airlock.releases/v1 ] && [ "$(jq -r ".releases[0].version" "$1")" = 4.14.1 ]' _ "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$S" --json
al_check "check --json: clean, exit 0" bash -c '[ "$(jq -r .clean "$1")" = true ] && [ "$(jq -r .exit "$1")" = 0 ]' _ "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" verify --store "$S" --keyring "$AL_SOURCE_DIR/samples/keys" --json
al_check "verify --json: verified" bash -c '[ "$(jq -r ".releases[0].status" "$1")" = verified ]' _ "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" inventory --store "$S" --json
al_check "inventory --json: counts and the inventory" bash -c '[ "$(jq -r .inventory.airlockInventory "$1")" = 1 ]' _ "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$T/none" --json --log-format=json
al_check "a failure: exit 3, the error in the document" bash -c '[ "$2" = 3 ] && [ "$(jq -r .exit "$1")" = 3 ] && jq -e ".errors[0]" "$1" >/dev/null' _ "$T/out" "$AL_RC"
al_check "--log-format=json: every stderr line is JSON with a time" \
	bash -c 'while read -r l; do echo "$l" | jq -e ".time and .level and .msg" >/dev/null || exit 1; done <"$1"' _ "$T/err"
al_check "no subject said twice" bash -c '! grep -q "'"'"'$1'"'"': '"'"'$1'"'"'" "$2"' _ "$T/none" "$T/err"

al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --layout source --store "$S" --registry "Reg.example:5000/UPPER"
al_check "mirrorsets refuses an upper-case path: exit 2 naming it" \
	bash -c '[ "$1" = 2 ] && grep -q "UPPER" "$2"' _ "$AL_RC" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --layout source --store "$S" --registry reg.example:5000/m --icsp-output "$T/icsp.yaml"
al_check "--icsp-output: the ICSP alone in its file, not in the stream" \
	bash -c 'grep -q ImageContentSourcePolicy "$1" && ! grep -q ImageDigestMirrorSet "$1" && ! grep -q ImageContentSourcePolicy "$2"' _ "$T/icsp.yaml" "$T/out"

al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --store "$T/m" docker://127.0.0.1:5000/mirror
al_check "mirror to docker://host/path says it is airlock push" bash -c '[ "$1" = 2 ] && grep -q "airlock push" "$2"' _ "$AL_RC" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --layout source --store "$T/m" --allow-unsigned --image extra-tag
al_check "a bare image name is refused" bash -c '[ "$1" = 2 ] && grep -q "names no registry" "$2"' _ "$AL_RC" "$T/err"
touch "$T/afile"
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$T/afile/s"
al_check "a store under a file says so" grep -q "a file, not a directory" "$T/err"

if command -v docker-registry >/dev/null; then
	al_start_registry "$T/reg"
	al_run "$T/out" "$T/err" "$AIRLOCK" push --layout source --store "$S" "docker://$REG_ADDR/x"
	al_check "push over TLS to a plain HTTP registry: the hint, once" \
		bash -c '[ "$(grep -c "tls-verify=false for HTTP" "$1")" = 1 ] && grep -q "images failed the same way" "$1"' _ "$T/err"
	al_run "$T/out" "$T/err" "$AIRLOCK" push --layout source --store "$S" --tls-verify=false --json --cluster-resources "$T/cr" "docker://$REG_ADDR/x"
	al_check "push --json: every image pushed" bash -c '[ "$(jq "[.images[]|select(.status!=\"pushed\")]|length" "$1")" = 0 ]' _ "$T/out"
	al_check "push records where it pushed" bash -c '[ "$(jq -r ".pushes[-1].registry" "$1")" = "$2" ]' _ "$S/airlock/pushes.json" "$REG_ADDR"
	al_check "--cluster-resources: IDMS and a ConfigMap" bash -c 'ls "$1"/idms-airlock.yaml "$1"/signature-sha256-*.yaml >/dev/null' _ "$T/cr"
	al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --layout source --store "$S"
	al_check "mirrorsets without --registry: the push record" bash -c 'grep -q "$1/x/" "$2" && grep -q "last push" "$3"' _ "$REG_ADDR" "$T/out" "$T/err"
	al_check "a component has its digest tag" bash -c 'curl -sf "http://$1/v2/x/airlock-samples/ocp-v4.0-art-dev/tags/list" | grep -q "sha256-"' _ "$REG_ADDR"
else
	al_skip_part "docker-registry is missing"
fi
al_finish
