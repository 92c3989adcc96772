#!/usr/bin/env bash
# regenerate.sh: rebuilds samples/layout (the committed sample release) from samples/release-manifests.
# Deterministic: the same inputs give byte-identical output (run it twice and diff).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/layout}"
python3 "$here/../tests/tools/mkrelease.py" \
	--out "$out" --force \
	--version 4.14.1 --previous 4.14.0 \
	--prefix quay.io/airlock-samples \
	--components 6 --layer-size 4096 --base-size 8192 \
	--manifests "$here/release-manifests" \
	--seed airlock-samples
