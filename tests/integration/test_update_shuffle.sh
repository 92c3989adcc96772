#!/usr/bin/env bash
# test_update_shuffle.sh: Reconciling reapplies components of a level in shuffled order, levels still in order; Updating keeps file order.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock

# Two run levels with four components each (comp000/002/004/006 at level 10,
# comp001/003/005/007 at level 15; component N writes namespace bench-N).
python3 "$AL_TOOLS/mkpayload.py" --out "$T/manifests" --levels 2 --components 8 --manifests 16 >/dev/null
python3 "$AL_TOOLS/mkrelease.py" --out "$T/layout" --version 9.9.1 --prefix quay.io/airlock-shuffle \
	--components 2 --manifests "$T/manifests" --seed shuffle >/dev/null
cat >"$T/imageset.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-shuffle/release:9.9.1-x86_64
airlock:
  sources:
  - prefix: quay.io/airlock-shuffle
    location: "oci:$T/layout"
YAML
"$AIRLOCK" mirror --allow-unsigned --config "$T/imageset.yaml" --store "$T/store" -q >/dev/null
UP_VIRTUAL_CLOCK=1 up_ks_start

# The component order of the PATCHes made after log entry $1: level 10's
# components, level 15's, then "ordered" when every level-10 component came
# before every level-15 one.
orders() {
	up_ctl log | python3 -c '
import json, re, sys
after = int(sys.argv[1])
seen = []
for r in json.load(sys.stdin)["requests"]:
    if r["seq"] <= after or r["method"] != "PATCH":
        continue
    m = re.search(r"/namespaces/bench-(\d+)", r["path"])
    if m and int(m.group(1)) not in seen:
        seen.append(int(m.group(1)))
print(" ".join("%03d" % c for c in seen if c % 2 == 0))
print(" ".join("%03d" % c for c in seen if c % 2 == 1))
ok = len(seen) == 8 and all(c % 2 == 0 for c in seen[:4]) and all(c % 2 == 1 for c in seen[4:])
print("ordered" if ok else "NOT-ORDERED %s" % seen)' "$1"
}
last_seq() {
	up_ctl log | python3 -c 'import json, sys; r = json.load(sys.stdin)["requests"]; print(r[-1]["seq"] if r else 0)'
}
run_update() {
	al_run "$T/out" "$T/err" "$AIRLOCK" update --store "$T/store" --to 9.9.1 --kubeconfig "$T/kubeconfig" \
		--force --state "$T/state.json" --parallel 1 --sync-timeout 2m "$@"
}

seq0=$(last_seq)
run_update
al_check "the first update completes" test "$AL_RC" = 0
orders "$seq0" >"$T/order.update"
cat "$T/order.update"
al_check "Updating applies level 10 before level 15" test "$(sed -n 3p "$T/order.update")" = ordered
al_check "Updating keeps file order within a level" test "$(sed -n 1p "$T/order.update")" = "000 002 004 006"
al_check "the state is Reconciling after the Completed update" up_state "$T/state.json" 's["state"] == "Reconciling"'

distinct=()
for seed in 1 2 3 4 5; do
	seq0=$(last_seq)
	run_update --seed "$seed"
	al_check "reconcile with seed $seed exits 0" test "$AL_RC" = 0
	orders "$seq0" >"$T/order.$seed"
	echo "seed $seed: $(head -2 "$T/order.$seed" | tr '\n' '|')"
	al_check "reconcile with seed $seed keeps levels in order" test "$(sed -n 3p "$T/order.$seed")" = ordered
	distinct+=("$(head -2 "$T/order.$seed" | tr '\n' '|')")
done
n=$(printf '%s\n' "${distinct[@]}" | sort -u | wc -l)
al_check "reconciling shuffles: 5 seeds gave more than one component order ($n)" test "$n" -gt 1
al_check "some reconcile order differs from file order" \
	bash -c 'for f in "$@"; do [ "$(sed -n 1p "$f")" != "000 002 004 006" ] && exit 0; done; exit 1' _ "$T"/order.[1-5]
al_finish
