#!/usr/bin/env bash
# test_untrusted_sigstore.sh: the Sigstore trusted root a store keeps (the "sigstore" record of airlock/releases.json) and untrusted imports (issue 24, item 4): an import with --accept-untrusted never replaces the root the store holds; a root only an untrusted import brought is marked, not used by verify-image, listed by check and inventory, left out of a signed pack; a trusted import of the genuine root replaces it and clears the mark. Judged by what releases.json and untrusted.json hold and by verify-image's exit status.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock

samples=$AL_SOURCE_DIR/samples
src=$T/src
rel=quay.io/airlock-samples/release:4.14.1-x86_64

# mkroot DIR: a trusted root (sigstore_mock_root.py) of fresh keys in DIR
mkroot() {
	mkdir -p "$1"
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1/rekor.key" 2>/dev/null
	openssl pkey -in "$1/rekor.key" -pubout -out "$1/rekor.pub" 2>/dev/null
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1/ctlog.key" 2>/dev/null
	openssl pkey -in "$1/ctlog.key" -pubout -out "$1/ctlog.pub" 2>/dev/null
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1/ca.key" \
		-out "$1/fulcio-root.pem" -subj /CN=fulcio -days 3650 \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
	python3 "$AL_TOOLS/sigstore_mock_root.py" "$1"
}
# keep STORE ROOT: write ROOT as the store's kept trusted root record, as
# al_cosign_store_root_put does (name, digest of the text, the text)
keep() {
	python3 - "$1" "$2" <<'EOF'
import hashlib, json, os, sys
p = sys.argv[1] + "/airlock/releases.json"
doc = json.load(open(p)) if os.path.exists(p) else {"releases": []}
text = open(sys.argv[2]).read()
doc["sigstore"] = [{"name": "trusted-root",
                    "digest": "sha256:" + hashlib.sha256(text.encode()).hexdigest(),
                    "mediaType": "application/vnd.dev.sigstore.trustedroot+json",
                    "source": os.path.basename(sys.argv[2]),
                    "kept": "2026-01-01T00:00:00Z", "content": text}]
json.dump(doc, open(p, "w"))
EOF
}
# kept STORE: the text of the store's kept root, or nothing
kept() {
	python3 -c 'import json, os, sys
p = sys.argv[1] + "/airlock/releases.json"
doc = json.load(open(p)) if os.path.exists(p) else {}
for r in doc.get("sigstore") or []:
    if r["name"] == "trusted-root":
        sys.stdout.write(r["content"])' "$1"
}
# same_root STORE FILE: the store keeps FILE's text as its root
same_root() { kept "$1" >"$T/kept.json" && cmp -s "$T/kept.json" "$2"; }
# marks STORE: the names of untrusted.json's "sigstore" marks
marks() {
	python3 -c 'import json, os, sys
p = sys.argv[1] + "/airlock/untrusted.json"
d = json.load(open(p)) if os.path.exists(p) else {}
print(" ".join(sorted(m["name"] for m in d.get("sigstore", []))))' "$1"
}

mkroot "$T/ra" >"$T/genuine.json"
mkroot "$T/rb" >"$T/forged.json"
al_check "two distinct trusted roots" bash -c '! cmp -s "$1" "$2"' _ "$T/genuine.json" "$T/forged.json"

# ---- the genuine pack keeps the genuine root; the forger's, its own
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$samples/imageset.yaml" --store "$src"
al_check "mirror of samples/imageset.yaml exits 0" test "$AL_RC" = 0
cp -a "$src" "$T/evil"
keep "$src" "$T/genuine.json"
keep "$T/evil" "$T/forged.json"
"$AIRLOCK" keygen -o "$T/key" >/dev/null
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$src" -o "$T/p1" --volume-size 64K --sign "$T/key.key"
al_check "a signed pack of the genuine store" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/evil" -o "$T/pe" --volume-size 64K
al_check "an unsigned pack of the forger's" test "$AL_RC" = 0

# ---- store B: the genuine root, trusted; the forger's import keeps it
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/b" --trust "$T/key.pub"
al_check "the genuine pack imports with --trust (exit 0)" test "$AL_RC" = 0
al_check "... and keeps the genuine root" same_root "$T/b" "$T/genuine.json"
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/pe" --store "$T/b"
al_check "the forger's pack imports with --accept-untrusted (exit 0)" test "$AL_RC" = 0
al_check "the store still keeps the genuine root" \
	same_root "$T/b" "$T/genuine.json"
al_check "and marks no root (none of the import's was merged)" test -z "$(marks "$T/b")"

# ---- store C: only the forger's import brought a root
al_run "$T/out" "$T/err" "$AIRLOCK" unpack --accept-untrusted "$T/pe" --store "$T/c"
al_check "the forger's pack imports into an empty store (exit 0)" test "$AL_RC" = 0
al_check "its root is in the store" \
	same_root "$T/c" "$T/forged.json"
al_check "and marked" test "$(marks "$T/c")" = trusted-root
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$T/c" --json
al_check "check --json lists the sigstore record" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [u["name"] for u in d["untrusted"] if u["kind"] == "sigstore"] == ["trusted-root"], d["untrusted"]
' "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" inventory --store "$T/c"
al_check "inventory lists it under untrusted.sigstore" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [u["name"] for u in d["untrusted"]["sigstore"]] == ["trusted-root"], d["untrusted"]
' "$T/out"
# verify-image with --store and no trust given uses the root the store
# keeps: the marked one is not, so there is no trust at all (usage, 2);
# store B's genuine root is used (the image has no signature: 1)
al_run "$T/out" "$T/err" "$AIRLOCK" verify-image --store "$T/c" --certificate-oidc-issuer https://oidc.test "$rel"
al_check "verify-image does not use the marked root (exit 2: no trust)" test "$AL_RC" = 2
al_run "$T/out" "$T/err" "$AIRLOCK" verify-image --store "$T/b" --certificate-oidc-issuer https://oidc.test "$rel"
al_check "while store B's genuine root is used (exit 1: no signature)" test "$AL_RC" = 1
al_run "$T/out" "$T/err" "$AIRLOCK" pack --store "$T/c" -o "$T/pc" --sign "$T/key.key"
al_check "a signed pack of store C" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/pc" --store "$T/d" --trust "$T/key.pub"
al_check "which leaves the marked root out: a trusted import of it keeps no root" \
	bash -c '[ "$1" = 0 ] && [ -z "$2" ]' _ "$AL_RC" "$(kept "$T/d")"

# ---- the genuine pack with --trust replaces the marked root
al_run "$T/out" "$T/err" "$AIRLOCK" unpack "$T/p1" --store "$T/c" --trust "$T/key.pub"
al_check "the genuine pack imports with --trust (exit 0)" test "$AL_RC" = 0
al_check "the store keeps the genuine root" \
	same_root "$T/c" "$T/genuine.json"
al_check "and its mark is gone" test -z "$(marks "$T/c")"

al_finish
