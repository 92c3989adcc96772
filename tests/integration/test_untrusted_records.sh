#!/usr/bin/env bash
# test_untrusted_records.sh: catalog and chart records an untrusted import wrote stay untrusted (issue 24, item 4): forged media (under the genuine pack's id) change a catalog and a chart record and add a catalog of their own; imported with --accept-untrusted the records are marked, listed by check, inventory and catalogs, left out of mirrorsets and of a signed pack; the genuine pack imported with --trust replaces the changed records and clears their marks, in either order. Judged by releases.json, untrusted.json, the volumes and the outputs' content.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
src=$T/src
cat=mirror.example/redhat/redhat-operator-index:v4.14
own=mirror.example/evil/evil-index:v1
chart=charts/podinfo:6.5.0

pack_id() { sed -n 's/^pack \([A-Za-z0-9-]*\): .*/\1/p' "$1"; }
# the records of kind $2 (catalogs, charts) of store $1 as canonical JSON,
# one a line, sorted
records() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1] + "/airlock/releases.json"))
print("\n".join(sorted(json.dumps(r, sort_keys=True) for r in d.get(sys.argv[2], []))))' "$1" "$2"
}
# the names of the "catalogs" and "charts" marks of store $1: KIND NAME, sorted
marks() {
	python3 -c 'import json,sys,os
p = sys.argv[1] + "/airlock/untrusted.json"
d = json.load(open(p)) if os.path.exists(p) else {}
print("\n".join(sorted(k + " " + m["name"] for k in ("catalogs", "charts") for m in d.get(k, []))))' "$1"
}

# ---- staging: the sample release, a catalog and a chart record naming
# its images, a signed pack
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
comp=$(al_index_digests "$src" | awk '$1 ~ /@sha256:/ {print $1; exit}')
python3 - "$src/airlock/releases.json" "$comp" "$cat" "$chart" <<'EOF'
import json, sys
path, comp, cat, chart = sys.argv[1:]
d = json.load(open(path))
dig = comp.split("@")[1]
d["catalogs"] = [{"name": cat, "digest": dig, "source": "registry.redhat.io/redhat/redhat-operator-index:v4.14",
                  "packages": 1, "bundles": 1, "images": [comp]}]
d["charts"] = [{"name": chart, "digest": dig, "chart": "podinfo", "version": "6.5.0",
                "source": "https://charts.example/podinfo-6.5.0.tgz", "images": [comp]}]
json.dump(d, open(path, "w"), indent=2)
EOF
"$AIRLOCK" keygen -o "$T/key" >/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p1" --volume-size 64K --sign "$T/key.key"
p1=$(pack_id "$T/out")
al_check "a signed pack of the staging store ($p1)" test -n "$p1"

# ---- forged media under the genuine pack's id: the catalog's and the
# chart's images point elsewhere, and a catalog of the forger's own
cp -a "$src" "$T/evil"
python3 - "$T/evil/airlock/releases.json" "$own" <<'EOF'
import json, sys
path, own = sys.argv[1:]
d = json.load(open(path))
evil = "quay.io/forger/payload@sha256:" + "6" * 64
d["catalogs"][0]["images"] = [evil]
d["charts"][0]["images"] = [evil]
d["catalogs"].append(dict(d["catalogs"][0], name=own, source="quay.io/forger/index:v1"))
json.dump(d, open(path, "w"), indent=2)
EOF
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/evil" -o "$T/pe" --volume-size 64K
python3 "$AL_TOOLS/hostile_tar.py" forge "$T/pe" "$T/forged" "$p1" >/dev/null

# ---- 1. store B: the genuine pack trusted, then the forged one accepted untrusted
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/b" --trust "$T/key.pub"
al_check "the genuine pack imports with --trust (exit 0)" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/forged" --store "$T/b"
al_check "the forged pack imports with --accept-untrusted (exit 0)" test "$AL_RC" = 0
al_check "... releases.json holds the forged catalogs" \
	test "$(records "$T/b" catalogs)" = "$(records "$T/evil" catalogs)"
al_check "... and the forged chart" test "$(records "$T/b" charts)" = "$(records "$T/evil" charts)"
al_check "... each of them is marked in untrusted.json" \
	test "$(marks "$T/b")" = "$(printf 'catalogs %s\ncatalogs %s\ncharts %s' "$cat" "$own" "$chart" | sort)"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/b" --json
al_check "check --json lists them under untrusted" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
got = sorted((x["kind"], x["name"]) for x in d["untrusted"] if x["kind"] in ("catalog", "chart"))
sys.exit(0 if got == sorted([("catalog", sys.argv[2]), ("catalog", sys.argv[3]), ("chart", sys.argv[4])]) else 1)' \
	"$T/out" "$cat" "$own" "$chart"
al_run "$T/inv.json" "$T/err" "$AIRLOCK" inventory --store "$T/b"
al_check "inventory lists them under untrusted" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["untrusted"]
sys.exit(0 if sorted(x["name"] for x in d["catalogs"]) == sorted(sys.argv[2:4])
         and [x["name"] for x in d["charts"]] == [sys.argv[4]] else 1)' "$T/inv.json" "$cat" "$own" "$chart"
al_run "$T/out" "$T/err" "$AIRLOCK" catalogs --store "$T/b"
al_check "catalogs shows the forged records as untrusted" bash -c \
	'test "$(grep -c " untrusted " "$1")" = 3' _ "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --store "$T/b" --registry mirror.local:5000 -o "$T/ms.yaml"
al_check "mirrorsets points no cluster at a forged catalog" bash -c \
	'test -s "$1" && ! grep -q "kind: CatalogSource" "$1"' _ "$T/ms.yaml"

# ---- a signed pack of store B carries none of the forged records
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/b" -o "$T/p2" --volume-size 64K --sign "$T/key.key"
al_check "store B packs (exit 0)" test "$AL_RC" = 0
al_check "... no volume holds a forged record" \
	bash -c '! grep -aq "quay.io/forger" "$1"/airlock-*.tar' _ "$T/p2"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p2" --store "$T/far" --trust "$T/key.pub"
al_check "a far store imports it with --trust (exit 0)" test "$AL_RC" = 0
al_check "... and holds no catalog or chart record" \
	test -z "$(records "$T/far" catalogs)$(records "$T/far" charts)"

# ---- the genuine pack again, with --trust: the records it holds replace the forged ones
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/b" --trust "$T/key.pub"
al_check "the genuine pack again with --trust (exit 0)" test "$AL_RC" = 0
al_check "... the chart record is the genuine one" test "$(records "$T/b" charts)" = "$(records "$src" charts)"
al_check "... the catalog record too, beside the forger's own" \
	test "$(records "$T/b" catalogs | grep -v "$own")" = "$(records "$src" catalogs)"
al_check "... only the forger's own catalog stays marked" test "$(marks "$T/b")" = "catalogs $own"
al_run "$T/out" "$T/err" "$AIRLOCK" mirrorsets --store "$T/b" --registry mirror.local:5000 -o "$T/ms.yaml"
al_check "mirrorsets writes the genuine catalog's CatalogSource alone" bash -c \
	'test "$(grep -c "kind: CatalogSource" "$1")" = 1 && ! grep -q evil-index "$1"' _ "$T/ms.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/b"
al_check "check lists that record alone" bash -c \
	'grep "^untrusted c" "$1" | grep -q " record $2:" && test "$(grep -c "^untrusted c" "$1")" = 1' _ "$T/out" "$own"

# ---- 2. store C: the forged pack alone, then the genuine pack with --trust
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/forged" --store "$T/c"
al_check "the forged pack imports alone with --accept-untrusted (exit 0)" test "$AL_RC" = 0
al_check "... its records are marked" \
	test "$(marks "$T/c")" = "$(printf 'catalogs %s\ncatalogs %s\ncharts %s' "$cat" "$own" "$chart" | sort)"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/c" --trust "$T/key.pub"
al_check "the genuine pack then imports with --trust (exit 0)" test "$AL_RC" = 0
al_check "... the chart record is the genuine one" test "$(records "$T/c" charts)" = "$(records "$src" charts)"
al_check "... only the forger's own catalog stays marked" test "$(marks "$T/c")" = "catalogs $own"

# ---- an untrusted import of records the store holds as they are marks nothing
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/pu" --volume-size 64K
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/d" --trust "$T/key.pub"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/pu" --store "$T/d"
al_check "the genuine records trusted, then the same untrusted: exit 0" test "$AL_RC" = 0
al_check "... and no record is marked" test -z "$(marks "$T/d")"
al_finish
