#!/bin/bash
# test_update.sh: the updater's core acceptance scenarios against kubeserver.py: happy path, the incident, sync deadline, permanent failure, unsigned release.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update

S=$T/store
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }
D=$(up_digest "$S" 4.14.1)
up_sign "$S" "$D" || { al_fail "sign the sample release with gpg"; al_finish; }
up_plan "$S" || { al_fail "dry-run plan"; al_finish; }
UP_VIRTUAL_CLOCK=1 up_ks_start --co-delay 0.1
K=(--kubeconfig "$T/kubeconfig" --operator-poll 100ms)
NTASKS=$(up_py 'print(len(plan()))')

reset() {
	up_ctl reset '{}' >/dev/null
	rm -f "$T/state.json"
}

# --- 1. happy path ----------------------------------------------------
reset
al_run "$T/o1" "$T/e1" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --keyring "$T/trusted.gpg" \
	--state "$T/state.json" --dry-run
al_check "1: dry run accepts the signed release" [ "$AL_RC" = 0 ]
al_check "1: dry run plans a new update from Initializing" grep -q "mode: new update (Initializing" "$T/o1"
al_check "1: dry run touches nothing" [ "$(up_py 'print(len(present()))')" = 0 ]
al_check "1: dry run writes no state" [ ! -e "$T/state.json" ]
al_run "$T/o1" "$T/e1" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --keyring "$T/trusted.gpg" \
	--state "$T/state.json"
al_check "1: update exits 0" [ "$AL_RC" = 0 ]
al_check "1: result line" grep -q "update to 4.14.1 completed: applied $NTASKS of $NTASKS; state Reconciling" "$T/o1"
al_check "1: signature verified from the store" grep -q "signature verified (store)" "$T/e1"
al_check "1: state Reconciling" [ "$(up_state "$T/state.json" 's["state"]')" = Reconciling ]
al_check "1: one history entry, Completed, verified" [ "$(up_state "$T/state.json" '[(h["version"], h["state"], h["verified"]) for h in s["history"]]')" = "[('4.14.1', 'Completed', True)]" ]
al_check "1: every manifest is in the server" [ "$(up_py 'print(missing())')" = "[]" ]
al_check "1: cluster status object says Reconciling" [ "$(up_py 'print(get("/apis/airlock.io/v1alpha1/clusterupdates/cluster")["status"]["state"])')" = Reconciling ]
al_check "1: ClusterOperators report 4.14.1" [ "$(up_py 'print(sorted(set(v["version"] for o in objects().values() if o["kind"] == "ClusterOperator" for v in o["status"]["versions"])))')" = "['4.14.1']" ]
# Level order from the server's request log: nothing of level k+1 starts
# before every request of level k was answered.
up_py '
import collections
levels = collections.defaultdict(set)
for lv, kind, ns, name in plan():
    levels[(ns, name)].add(lv)
span = {}
for r in get("/_control/log")["requests"]:
    p = r["path"].split("/")
    # (the FeatureGate and ClusterVersion GETs before the load are not manifests)
    if r["path"].endswith("/status") or "airlock.io" in r["path"] or r["method"] not in ("PATCH", "GET") or \
            r["path"].endswith(("/featuregates/cluster", "/clusterversions/version")):
        continue
    if "namespaces" in p and len(p) - p.index("namespaces") >= 4:
        i = p.index("namespaces"); key = (p[i + 1], p[-1])
    else:
        key = (None, p[-1])
    if key not in levels:
        continue
    assert len(levels[key]) == 1, key
    lv = min(levels[key])
    s, e = span.get(lv, (r["time"], r["end"]))
    span[lv] = (min(s, r["time"]), max(e, r["end"]))
order = sorted(span)
bad = [(a, b) for a, b in zip(order, order[1:]) if span[b][0] < span[a][1]]
print("levels", order, "overlaps", bad)
sys.exit(1 if bad or len(order) < 5 else 0)' >"$T/levels.txt" 2>&1 && al_pass "1: levels applied strictly in order" || { cat "$T/levels.txt"; al_fail "1: levels applied strictly in order"; }
al_run "$T/o1" "$T/e1" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --keyring "$T/trusted.gpg" \
	--state "$T/state.json"
al_check "1: a rerun reconciles" grep -q "reconciled 4.14.1: applied $NTASKS of $NTASKS" "$T/o1"

# --- 2. the incident: hanging signature store, --force ----------------
reset
FS_PORT=$T/fs-port
python3 "$AL_TOOLS/faultserver.py" --port-file "$FS_PORT" 2>>"$T/faultserver.log" &
AL_PIDS+=($!)
for i in $(seq 1 50); do [ -s "$FS_PORT" ] && break; sleep 0.1; done
HANG=http://127.0.0.1:$(cat "$FS_PORT")/hang
# unsigned store copy: the only signature source hangs
mv "$S/signatures" "$T/signatures.saved"
# etcd never becomes ready: the apply runs into its own deadline
up_ctl operator '{"name": "etcd", "never": true}' >/dev/null
al_run "$T/o2" "$T/e2" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --keyring "$T/trusted.gpg" \
	--state "$T/state.json" --force --signature-store "$HANG" --signature-timeout 2s --sync-timeout 3s
sig_s=$(sed -n 's/.*NOT verified, forced.*(\([0-9.]*\)s)$/\1/p' "$T/e2")
apply_s=$(sed -n 's/^apply phase ended after \([0-9.]*\)s.*/\1/p' "$T/e2")
al_check "2: exit 3 (failure, not success)" [ "$AL_RC" = 3 ]
al_check "2: signature phase ended within its budget (${sig_s:-?}s)" python3 -c "import sys; sys.exit(0 if 1.5 <= float('${sig_s:-99}') <= 3.5 else 1)"
al_check "2: apply still had its full budget (${apply_s:-?}s)" python3 -c "import sys; sys.exit(0 if float('${apply_s:-0}') >= 2.9 else 1)"
# on the virtual clock (UP_VIRTUAL_CLOCK) the phases' times are the
# budgets themselves, whatever the machine's load
al_check "2: the run took both budgets, one after the other (${sig_s:-?}s + ${apply_s:-?}s)" python3 -c "import sys; sys.exit(0 if float('${sig_s:-0}') + float('${apply_s:-0}') >= 4.8 else 1)"
al_check "2: failure message applied K of N naming the operator" grep -q "update to 4.14.1 failed: applied [0-9]* of $NTASKS; first errors: .*cluster operator 'etcd'" "$T/e2"
al_check "2: state Updating, never Reconciling" [ "$(up_state "$T/state.json" 's["state"]')" = Updating ]
al_check "2: history Partial, verified false" [ "$(up_state "$T/state.json" '[(h["state"], h["verified"]) for h in s["history"]]')" = "[('Partial', False)]" ]
al_check "2: status Failing=True, ReleaseAccepted=True (Forced)" [ "$(up_state "$T/state.json" '[(c["type"], c["status"], c["reason"]) for c in s["conditions"] if c["type"] in ("Failing", "ReleaseAccepted")]')" = "[('Failing', 'True', 'UpdateFailed'), ('ReleaseAccepted', 'True', 'Forced')]" ]
# the same with a cancellation instead of a deadline: SIGINT mid-apply
rm -f "$T/state.json"
up_ctl reset '{}' >/dev/null
up_ctl operator '{"name": "etcd", "never": true}' >/dev/null
"$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --keyring "$T/trusted.gpg" --state "$T/state.json" \
	--force --signature-store "$HANG" --signature-timeout 1s --sync-timeout 60s >"$T/o2b" 2>"$T/e2b" &
UPID=$!
for i in $(seq 1 100); do grep -q "^level 10" "$T/e2b" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
kill -INT "$UPID"
rc=0; wait "$UPID" || rc=$?
al_check "2: cancelled apply exits 3" [ "$rc" = 3 ]
al_check "2: cancelled apply is reported as a failure" grep -q "update to 4.14.1 failed: applied" "$T/e2b"
al_check "2: cancelled: state Updating, history Partial" [ "$(up_state "$T/state.json" '(s["state"], s["history"][0]["state"])')" = "('Updating', 'Partial')" ]
mv "$T/signatures.saved" "$S/signatures"
up_ctl operator '{"name": "etcd", "clear": true}' >/dev/null

# --- 3. sync deadline mid-graph, then resume ---------------------------
reset
up_ctl operator '{"name": "kube-apiserver", "delay": 30}' >/dev/null
al_run "$T/o3" "$T/e3" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --keyring "$T/trusted.gpg" \
	--state "$T/state.json" --sync-timeout 2s
al_check "3: exit 3" [ "$AL_RC" = 3 ]
K3=$(sed -n "s/.*update to 4.14.1 failed: applied \([0-9]*\) of $NTASKS.*/\1/p" "$T/e3")
al_check "3: applied K of N with 0 < K < N (K=${K3:-?})" test "${K3:-0}" -gt 0 -a "${K3:-0}" -lt "$NTASKS"
al_check "3: state Updating, history Partial" [ "$(up_state "$T/state.json" '(s["state"], [h["state"] for h in s["history"]])')" = "('Updating', ['Partial'])" ]
al_check "3: level 30 not applied" [ "$(up_py 'print([p for p in present() if p[0] >= 30])')" = "[]" ]
up_ctl operator '{"name": "kube-apiserver", "clear": true}' >/dev/null
up_ctl operator '{"name": "kube-apiserver", "delay": 0.1}' >/dev/null
al_run "$T/o3" "$T/e3" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --keyring "$T/trusted.gpg" \
	--state "$T/state.json" --sync-timeout 30s
al_check "3: the next run resumes" grep -q "resuming update to 4.14.1" "$T/e3"
al_check "3: ... and completes" [ "$AL_RC" = 0 ]
al_check "3: one history entry, now Completed; state Reconciling" [ "$(up_state "$T/state.json" '(s["state"], [h["state"] for h in s["history"]])')" = "('Reconciling', ['Completed'])" ]
al_check "3: every manifest is in the server" [ "$(up_py 'print(missing())')" = "[]" ]
up_ctl operator '{"name": "kube-apiserver", "clear": true}' >/dev/null

# --- 4. a task fails permanently -----------------------------------------
reset
up_ctl fault '{"path": "deployments/kube-apiserver-operator$", "method": "PATCH", "status": 422}' >/dev/null
al_run "$T/o4" "$T/e4" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --keyring "$T/trusted.gpg" \
	--state "$T/state.json" --sync-timeout 30s
al_check "4: exit 3" [ "$AL_RC" = 3 ]
al_check "4: failure names the manifest" grep -q "first errors: Deployment openshift-kube-apiserver-operator/kube-apiserver-operator (0000_20_kube-apiserver-operator_06_deployment.yaml #1)" "$T/e4"
al_check "4: fails fast, not at the deadline" grep -q "apply phase ended after [0-9]\.[0-9]s" "$T/e4"
al_check "4: later levels not applied" [ "$(up_py 'print([p for p in present() if p[0] > 20])')" = "[]" ]
al_check "4: earlier levels applied" [ "$(up_py 'print([p for p in missing() if p[0] < 20])')" = "[]" ]
al_check "4: state Updating, history Partial" [ "$(up_state "$T/state.json" '(s["state"], [h["state"] for h in s["history"]])')" = "('Updating', ['Partial'])" ]
up_ctl faults/clear '{}' >/dev/null

# --- 6. unsigned release without --force ---------------------------------
reset
mv "$S/signatures" "$T/signatures.saved"
al_run "$T/o6" "$T/e6" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --keyring "$T/trusted.gpg" \
	--state "$T/state.json"
al_check "6: refused with exit 1" [ "$AL_RC" = 1 ]
al_check "6: the reason is given" grep -q "release 4.14.1 refused: not verified" "$T/e6"
al_check "6: nothing applied" [ "$(up_py 'print(len(present()))')" = 0 ]
al_check "6: no payload request reached the server" [ "$(up_py 'print(len([r for r in get("/_control/log")["requests"] if r["method"] == "PATCH" and "airlock.io" not in r["path"] and "clusterupdates" not in r["path"]]))')" = 0 ]
al_check "6: state stays Initializing, no history" [ "$(up_state "$T/state.json" '(s["state"], s["history"])')" = "('Initializing', [])" ]
al_check "6: ReleaseAccepted=False with a reason" [ "$(up_py 'print([(c["status"], c["reason"]) for c in get("/apis/airlock.io/v1alpha1/clusterupdates/cluster")["status"]["conditions"] if c["type"] == "ReleaseAccepted"])')" = "[('False', 'NotVerified')]" ]
al_run "$T/o6" "$T/e6" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state.json" --dry-run
al_check "6: dry run exits 1" [ "$AL_RC" = 1 ]
al_check "6: dry run says refused" grep -q "refused" "$T/o6"

# --- 6b. signatures from the cluster's ConfigMaps and from an HTTP store ---
reset
HEX=${D#sha256:}
up_ctl objects '{"object": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "openshift-config-managed"}}}' >/dev/null
up_ctl objects "{\"object\": {\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"sha256-$HEX\", \"namespace\": \"openshift-config-managed\", \"labels\": {\"release.openshift.io/verification-signatures\": \"\"}}, \"binaryData\": {\"sha256-$HEX-1\": \"$(base64 -w0 "$T/signatures.saved/sha256=$HEX/signature-1")\"}}}" >/dev/null
al_run "$T/o6" "$T/e6" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --keyring "$T/trusted.gpg" \
	--state "$T/state.json" --dry-run
al_check "6b: a signature ConfigMap in the cluster verifies the release" grep -q "signature verified (cluster ConfigMap)" "$T/e6"
al_check "6b: ... and the dry run accepts it" [ "$AL_RC" = 0 ]
SS_PORT=$T/ss-port
python3 "$AL_TOOLS/sigserver.py" --root "$T/signatures.saved" --port-file "$SS_PORT" 2>>"$T/sigserver.log" &
AL_PIDS+=($!)
for i in $(seq 1 50); do [ -s "$SS_PORT" ] && break; sleep 0.1; done
up_ctl reset '{}' >/dev/null
al_run "$T/o6" "$T/e6" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --keyring "$T/trusted.gpg" \
	--state "$T/state.json" --signature-store "$HANG" --signature-store "http://127.0.0.1:$(cat "$SS_PORT")/files" --signature-timeout 5s
al_check "6b: an HTTP signature store verifies it while another hangs" grep -q "signature verified (signature store 'http://127.0.0.1:$(cat "$SS_PORT")/files')" "$T/e6"
al_check "6b: ... and the update completes" [ "$AL_RC" = 0 ]
al_check "6b: ... recorded as verified" [ "$(up_state "$T/state.json" '[h["verified"] for h in s["history"]]')" = "[True]" ]
mv "$T/signatures.saved" "$S/signatures"

al_finish
