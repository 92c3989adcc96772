#!/usr/bin/env bash
# test_hostile_names.sh: names from a hostile Helm repository served on
# loopback (issue 24, item 3). A chart version carrying a newline and a second
# SOURCE=DEST line, a chart whose Chart.yaml names it ../../evil, and a chart
# name with a newline and ESC: none of them may add a line to mapping.txt or
# missing.txt, reach index.json, or make a path outside the store; a genuine
# chart served beside them is still mirrored.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v python3 >/dev/null || al_skip "python3 not installed"

WEB=$T/web
mkdir -p "$WEB/repo"
chart() { # chart OUT DIR CHART_YAML
	python3 - "$1" "$2" "$3" "$AL_TOOLS/mkchart.py" "$T/spec.json" <<'EOF'
import json, subprocess, sys
out, d, cy, tool, spec = sys.argv[1:6]
json.dump({"out": out, "files": [[d + "/Chart.yaml", cy]]}, open(spec, "w"))
subprocess.check_call(["python3", tool, spec])
EOF
}
EVILV=$'1.0.0\nquay.io/attacker/evil:1=MIRROR/openshift/release:4.14.1'
chart "$WEB/repo/good-1.0.0.tgz" good $'apiVersion: v2\nname: good\nversion: 1.0.0\n'
chart "$WEB/repo/vers-1.0.0.tgz" vers "apiVersion: v2
name: vers
version: \"1.0.0\\nquay.io/attacker/evil:1=MIRROR/openshift/release:4.14.1\"
"
chart "$WEB/repo/evil-1.0.0.tgz" evil $'apiVersion: v2\nname: ../../evil\nversion: 1.0.0\n'
chart "$WEB/repo/esc-1.0.0.tgz" esc "apiVersion: v2
name: \"e\\nsc\\e[31m\"
version: 1.0.0
"
dg() { sha256sum "$WEB/repo/$1" | cut -d' ' -f1; }
cat >"$WEB/repo/index.yaml" <<EOF
apiVersion: v1
entries:
  good:
  - {name: good, version: 1.0.0, urls: [good-1.0.0.tgz], digest: $(dg good-1.0.0.tgz)}
  vers:
  - {name: vers, version: "1.0.0\\nquay.io/attacker/evil:1=MIRROR/openshift/release:4.14.1", urls: [vers-1.0.0.tgz], digest: $(dg vers-1.0.0.tgz)}
  "../../evil":
  - {name: "../../evil", version: 1.0.0, urls: [evil-1.0.0.tgz], digest: $(dg evil-1.0.0.tgz)}
  evil:
  - {name: evil, version: 1.0.0, urls: [evil-1.0.0.tgz], digest: $(dg evil-1.0.0.tgz)}
  "e\\nsc\\e[31m":
  - {name: "e\\nsc\\e[31m", version: 1.0.0, urls: [esc-1.0.0.tgz], digest: $(dg esc-1.0.0.tgz)}
  esc:
  - {name: esc, version: 1.0.0, urls: [esc-1.0.0.tgz], digest: $(dg esc-1.0.0.tgz)}
EOF

HPORT=$(al_free_port)
(cd "$WEB" && exec python3 -m http.server --bind 127.0.0.1 "$HPORT") \
	>"$T/http.log" 2>&1 &
AL_PIDS+=("$!")
for _ in $(seq 1 100); do
	curl -fsS "http://127.0.0.1:$HPORT/repo/index.yaml" >/dev/null 2>&1 && break
	sleep 0.1
done
HURL=http://127.0.0.1:$HPORT/repo

isc() { # isc CHART...
	printf 'kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  helm:\n    repositories:\n    - name: r\n      url: %s\n      charts:\n' "$HURL"
	for c in "$@"; do printf '      - name: "%s"\n' "$c"; done
}

lines_clean() { # FILE: every line is one SOURCE=DEST (DEST empty when failed), no space or control
	python3 - "$1" <<'EOF'
import re, sys
data = open(sys.argv[1], "rb").read()
for line in data.split(b"\n")[:-1] if data else []:
    assert re.fullmatch(rb"[\x21-\x3c\x3e-\x7e]+=[\x21-\x3c\x3e-\x7e]*", line), line
assert b"attacker" not in data, data
EOF
}
names_clean() { # STORE: no ref name in index.json leaves charts/ or holds a control byte
	python3 - "$1" <<'EOF'
import json, os, sys
idx = json.load(open(os.path.join(sys.argv[1], "index.json")))
for m in idx.get("manifests", []):
    n = m.get("annotations", {}).get("org.opencontainers.image.ref.name", "")
    assert ".." not in n and all(0x20 <= ord(c) != 0x7f for c in n), repr(n)
    assert "attacker" not in n, n
EOF
}

# --- 1. dry run over every chart, the hostile ones among them ---
isc good vers evil esc >"$T/all.yaml"
al_run "$T/d.out" "$T/d.err" "$AIRLOCK" mirror --config "$T/all.yaml" \
	--store "$T/s1" --dry-run="$T/plan"
al_check "dry run with hostile charts fails (exit $AL_RC)" [ "$AL_RC" != 0 ]
for f in mapping.txt missing.txt; do
	if [ -f "$T/plan/$f" ]; then
		al_check "$f: one SOURCE=DEST a line, no injected line" lines_clean "$T/plan/$f"
	fi
done

# --- 2. each hostile chart alone: refused, nothing stored under its name ---
for c in vers evil esc; do
	isc "$c" >"$T/$c.yaml"
	al_run "$T/$c.out" "$T/$c.err" "$AIRLOCK" mirror --config "$T/$c.yaml" \
		--store "$T/s-$c"
	al_check "chart '$c' refused (exit $AL_RC)" [ "$AL_RC" != 0 ]
	if [ -f "$T/s-$c/index.json" ]; then
		al_check "chart '$c': index.json holds no hostile name" names_clean "$T/s-$c"
	fi
	al_check "chart '$c': no chart stored" \
		[ "$(grep -c 'charts/' "$T/s-$c/index.json" 2>/dev/null || true)" = 0 ]
done
al_check "no path outside the stores" [ ! -e "$T/evil" ] && [ ! -e "$WEB/evil" ]

# --- 3. the genuine chart still goes through, and its plan is one line ---
isc good >"$T/good.yaml"
al_run "$T/g.out" "$T/g.err" "$AIRLOCK" mirror --config "$T/good.yaml" --store "$T/sg"
al_check "genuine chart mirrored (exit $AL_RC)" [ "$AL_RC" = 0 ]
[ "$AL_RC" = 0 ] || cat "$T/g.err"
al_check "charts/good:1.0.0 stored" al_digest_of "$T/sg" charts/good:1.0.0
al_check "store holds only clean names" names_clean "$T/sg"
al_run "$T/gd.out" "$T/gd.err" "$AIRLOCK" mirror --config "$T/good.yaml" \
	--store "$T/sg2" --dry-run="$T/gplan"
al_check "genuine dry run exits 0 (exit $AL_RC)" [ "$AL_RC" = 0 ]
al_check "mapping.txt of the genuine chart: one clean line" \
	[ "$(wc -l <"$T/gplan/mapping.txt")" = 1 ]
al_check "mapping.txt clean" lines_clean "$T/gplan/mapping.txt"
al_finish
