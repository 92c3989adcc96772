#!/bin/bash
# test_update_lease.sh: one updater at a time: the cluster lease as client-go leader election runs it (acquire, renew, release, expiry, takeover), a running CVO, and client keys that kill -9 cannot leave behind.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update

S=$T/store
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }
up_plan "$S" || { al_fail "dry-run plan"; al_finish; }
up_ks_start --co-delay 0.1
K=(--kubeconfig "$T/kubeconfig" --operator-poll 100ms --force)
HOST=$(hostname)

reset() {
	up_ctl reset '{}' >/dev/null
	rm -f "$T"/state-*.json
}
holder() { up_obj $LEASE_PATH 'o["spec"]["holderIdentity"] if o else None'; }
wait_for() { # FILE PATTERN: wait up to 20 s for PATTERN in FILE
	local i
	for i in $(seq 1 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}

# --- tryAcquireOrRenew: a held lease refuses a second updater -----------------
reset
up_ctl operator '{"name": "kube-apiserver", "delay": 3}' >/dev/null
: >"$T/ea" # before the start: wait_for must not see the last scenario's lines
"$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json" >"$T/oa" 2>"$T/ea" &
APID=$!
wait_for "$T/ea" "holding lease" || al_fail "lease: the first run takes the lease"
al_run "$T/ob" "$T/eb" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-b.json"
al_check "lease: a second run with another --state file is refused (exit 3)" [ "$AL_RC" = 3 ]
al_check "lease: ... naming the holder's identity" grep -q "another updater holds the cluster lease kube-system/airlock-update: '${HOST}_${APID}_" "$T/eb"
al_check "lease: ... and it applied nothing and wrote no state" [ ! -e "$T/state-b.json" ]
al_check "lease: the holder identity is hostname_pid_uuid" bash -c "[[ '$(holder)' =~ ^${HOST}_${APID}_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}- ]]"
wait "$APID" && rc=0 || rc=$?
al_check "lease: the holder completes" [ "$rc" = 0 ]
al_check "lease: released at the end (holderIdentity empty)" [ "$(holder)" = "" ]
al_check "lease: released as client-go releases (leaseDurationSeconds 1)" [ "$(up_obj $LEASE_PATH 'o["spec"]["leaseDurationSeconds"]')" = 1 ]
up_ctl operator '{"name": "kube-apiserver", "clear": true}' >/dev/null

# --- two runs started together: exactly one proceeds --------------------------
reset
up_ctl operator '{"name": "etcd", "delay": 2}' >/dev/null
: >"$T/ea" # before the start: wait_for must not see the last scenario's lines
"$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json" >"$T/oa" 2>"$T/ea" &
P1=$!
: >"$T/eb" # before the start: wait_for must not see the last scenario's lines
"$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-b.json" >"$T/ob" 2>"$T/eb" &
P2=$!
wait "$P1" && r1=0 || r1=$?
wait "$P2" && r2=0 || r2=$?
al_check "race: exactly one of two concurrent runs proceeds (exit codes $r1 $r2)" bash -c "[ '$r1 $r2' = '0 3' ] || [ '$r1 $r2' = '3 0' ]"
al_check "race: the other names the holder" bash -c "grep -q 'another updater holds the cluster lease' '$T/ea' '$T/eb'"
al_check "race: exactly one state file was written" [ "$(ls "$T"/state-*.json | wc -l)" = 1 ]
up_ctl operator '{"name": "etcd", "clear": true}' >/dev/null

# --- --lock-wait: the second waits (bounded) and then proceeds -----------------
reset
up_ctl operator '{"name": "kube-apiserver", "delay": 2}' >/dev/null
: >"$T/ea" # before the start: wait_for must not see the last scenario's lines
"$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json" >"$T/oa" 2>"$T/ea" &
APID=$!
wait_for "$T/ea" "holding lease" || al_fail "lock-wait: the first run takes the lease"
al_run "$T/ob" "$T/eb" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-b.json" --lock-wait 60s
wait "$APID" && rc=0 || rc=$?
al_check "lock-wait: the first run completes" [ "$rc" = 0 ]
al_check "lock-wait: the second waited for the release and then ran (reconciles)" bash -c "[ $AL_RC = 0 ] && grep -q 'reconciled 4.14.1' '$T/ob'"
up_ctl operator '{"name": "kube-apiserver", "clear": true}' >/dev/null

# --- renew: a long apply keeps renewing (renewTime moves, nobody takes it) ------
# The holder waits 12 s for its operator: long enough that it still holds the
# lease when the second run starts on a loaded machine (with 5 s, the holder
# had once completed and released it by then, and the second run proceeded).
reset
up_ctl operator '{"name": "kube-apiserver", "delay": 12}' >/dev/null
: >"$T/ea" # before the start: wait_for must not see the last scenario's lines
"$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json" --lease-duration 2s >"$T/oa" 2>"$T/ea" &
APID=$!
wait_for "$T/ea" "holding lease" || al_fail "renew: the run takes the lease"
R1=$(up_obj $LEASE_PATH 'o["spec"]["renewTime"]')
sleep 3
R2=$(up_obj $LEASE_PATH 'o["spec"]["renewTime"]')
al_check "renew: renewTime moves during the apply ($R1 -> $R2)" [ "$R1" != "$R2" ]
kill -0 "$APID" 2>/dev/null || al_fail "renew: the holder ended before the second run started (machine too slow for this scenario)"
al_run "$T/ob" "$T/eb" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-b.json"
al_check "renew: a renewed 2 s lease still refuses another run after 3 s" [ "$AL_RC" = 3 ]
wait "$APID" && rc=0 || rc=$?
al_check "renew: the holder completes, never losing the lease" bash -c "[ $rc = 0 ] && ! grep -q 'lease.*taken\|not renewed' '$T/ea'"
up_ctl operator '{"name": "kube-apiserver", "clear": true}' >/dev/null

# --- a lost lease stops the run: no new task, the cluster record left alone ------
reset
up_ctl operator '{"name": "kube-apiserver", "delay": 4}' >/dev/null
: >"$T/el" # before the start: wait_for must not see the last scenario's lines
"$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json" --lease-duration 2s >"$T/ol" 2>"$T/el" &
APID=$!
wait_for "$T/el" "^level 20" || al_fail "lost: the run reaches level 20"
NOW=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
up_ctl objects "{\"object\": {\"apiVersion\": \"coordination.k8s.io/v1\", \"kind\": \"Lease\", \"metadata\": {\"name\": \"airlock-update\", \"namespace\": \"kube-system\"}, \"spec\": {\"holderIdentity\": \"thief_1_x\", \"leaseDurationSeconds\": 60, \"acquireTime\": \"$NOW\", \"renewTime\": \"$NOW\", \"leaseTransitions\": 5}}}" >/dev/null
CU_BEFORE=$(up_obj $CU_PATH 'o["status"]["progress"]["applied"]')
wait "$APID" && rc=0 || rc=$?
al_check "lost: the run fails (exit 3)" [ "$rc" = 3 ]
al_check "lost: ... saying who took the lease" grep -q "lease kube-system/airlock-update was taken by 'thief_1_x'" "$T/el"
al_check "lost: the wait in flight stopped too (not after the operator's 4 s)" grep -q "apply phase ended after [0-3]\." "$T/el"
al_check "lost: no later level was started" [ "$(up_py 'print([p for p in present() if p[0] > 20])')" = "[]" ]
al_check "lost: the state file says Updating, Partial" [ "$(up_state "$T/state-a.json" '(s["state"], [h["state"] for h in s["history"]])')" = "('Updating', ['Partial'])" ]
al_check "lost: the cluster's record was not written after the loss" [ "$(up_obj $CU_PATH 'o["status"]["progress"]["applied"]')" = "$CU_BEFORE" ]
al_check "lost: the thief's lease is left alone (not released by the loser)" [ "$(holder)" = thief_1_x ]
up_ctl operator '{"name": "kube-apiserver", "clear": true}' >/dev/null

# --- expiry: a holder elsewhere that stopped renewing is taken over -----------
reset
NOW=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
up_ctl objects "{\"object\": {\"apiVersion\": \"coordination.k8s.io/v1\", \"kind\": \"Lease\", \"metadata\": {\"name\": \"airlock-update\", \"namespace\": \"kube-system\"}, \"spec\": {\"holderIdentity\": \"otherhost_1_deadbeef\", \"leaseDurationSeconds\": 3, \"acquireTime\": \"$NOW\", \"renewTime\": \"$NOW\", \"leaseTransitions\": 0}}}" >/dev/null
al_run "$T/oe" "$T/ee" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json"
al_check "expiry: a live lease of another host refuses at once" bash -c "[ $AL_RC = 3 ] && grep -q \"'otherhost_1_deadbeef' (renewed\" '$T/ee'"
al_run "$T/oe" "$T/ee" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json" --lock-wait 20s
al_check "expiry: unrenewed for its whole duration while watched, it is taken over" [ "$AL_RC" = 0 ]
al_check "expiry: leaseTransitions counts the new holder" [ "$(up_obj $LEASE_PATH 'o["spec"]["leaseTransitions"]')" = 1 ]

# --- a lease whose renewTime is far older than its duration is expired at once ---
reset
OLD=$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%S.000000Z)
up_ctl objects "{\"object\": {\"apiVersion\": \"coordination.k8s.io/v1\", \"kind\": \"Lease\", \"metadata\": {\"name\": \"airlock-update\", \"namespace\": \"kube-system\"}, \"spec\": {\"holderIdentity\": \"otherhost_1_gone\", \"leaseDurationSeconds\": 60, \"acquireTime\": \"$OLD\", \"renewTime\": \"$OLD\", \"leaseTransitions\": 3}}}" >/dev/null
al_run "$T/oe" "$T/ee" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json"
al_check "stale: a lease renewed an hour ago (60 s lease) is taken without waiting" [ "$AL_RC" = 0 ]
al_check "stale: ... leaseTransitions 3 -> 4" [ "$(up_obj $LEASE_PATH 'o["spec"]["leaseTransitions"]')" = 4 ]

# --- kill -9: a holder on this host that is gone does not block -----------------
reset
up_ctl operator '{"name": "kube-apiserver", "delay": 30}' >/dev/null
: >"$T/ea" # before the start: wait_for must not see the last scenario's lines
"$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json" >"$T/oa" 2>"$T/ea" &
APID=$!
wait_for "$T/ea" "^level 20" || al_fail "kill: the run reaches level 20"
kill -9 "$APID"
wait "$APID" 2>/dev/null || true
al_check "kill: the lease still names the killed run" bash -c "[[ '$(holder)' == ${HOST}_${APID}_* ]]"
up_ctl operator '{"name": "kube-apiserver", "clear": true}' >/dev/null
al_run "$T/ok" "$T/ek" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json"
al_check "kill: the next run takes the lease of the dead process and resumes" bash -c "[ $AL_RC = 0 ] && grep -q 'resuming update to 4.14.1' '$T/ek'"

# --- a running cluster-version-operator owns the cluster ------------------------
reset
up_seed_cvo 1
up_seed_cv 4.13.9
al_run "$T/oc" "$T/ec" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json"
al_check "CVO: with a running CVO Deployment the run goes through it, and its pre-flight refuses here (exit 3)" [ "$AL_RC" = 3 ]
al_check "CVO: ... naming it and the way out" grep -q "a cluster-version-operator updates this cluster (Deployment openshift-cluster-version/cluster-version-operator (1 wanted, 1 available)).*--take-over" "$T/ec"
al_check "CVO: ... the pre-flight names what is missing (the images in the registry the cluster pulls from)" grep -q "pre-flight check failed: .* is not where the cluster pulls it from" "$T/ec"
al_check "CVO: nothing applied (only the two seeded objects), no lease taken" bash -c "[ '$(up_py 'print(len(present()))')' = 2 ] && [ '$(holder)' = None ]"
al_check "CVO: the ClusterVersion status is left to the CVO" [ "$(up_obj $CV_PATH 'o["status"]["desired"]["version"]')" = 4.13.9 ]
al_run "$T/oc" "$T/ec" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json" --take-over
al_check "CVO: --take-over proceeds, with a warning" bash -c "[ $AL_RC = 0 ] && grep -q 'taking over from a running cluster-version-operator' '$T/ec'"
al_check "CVO: ... and airlock writes the ClusterVersion status" [ "$(up_obj $CV_PATH '(o["status"]["desired"]["version"], o["status"]["history"][0]["state"])')" = "('4.14.1', 'Completed')" ]
up_ctl objects '{"object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "cluster-version-operator", "namespace": "openshift-cluster-version"}, "spec": {"replicas": 0}, "status": {}}}' >/dev/null
al_run "$T/oc" "$T/ec" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --state "$T/state-a.json"
al_check "CVO: a CVO scaled to 0 replicas does not block" [ "$AL_RC" = 0 ]

# --- kill -9 leaves no client key behind (kubeconfig *-data over TLS) ----------
if command -v openssl >/dev/null; then
	C=$T/certs
	mkdir -p "$C"
	E="-newkey rsa:2048 -nodes"
	(cd "$C" && openssl req -x509 $E -keyout ca.key -out ca.pem -days 2 -subj /CN=kube-test-ca &&
		openssl req $E -keyout srv.key -out srv.csr -subj /CN=127.0.0.1 &&
		printf 'subjectAltName=IP:127.0.0.1\n' >srv.ext &&
		openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile srv.ext &&
		openssl req $E -keyout cli.key -out cli.csr -subj /CN=airlock &&
		openssl x509 -req -in cli.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cli.pem -days 2) >/dev/null 2>&1
	KSPID_PLAIN=$KS_PID KSURL_PLAIN=$KS_URL
	up_ks_start --co-delay 0.1 --tls "$C/srv.pem" "$C/srv.key" --client-ca "$C/ca.pem" --token never-sent
	TLS_URL=https://${KS_URL#http://}
	tls_ctl() { curl -sf --cacert "$C/ca.pem" -X POST -H 'Content-Type: application/json' -d "$2" "$TLS_URL/_control/$1"; }
	cat >"$T/kubeconfig-tls" <<KC
apiVersion: v1
kind: Config
clusters:
- name: t
  cluster:
    server: $TLS_URL
    certificate-authority-data: $(base64 -w0 "$C/ca.pem")
contexts:
- name: t
  context: {cluster: t, user: t}
current-context: t
users:
- name: t
  user:
    client-certificate-data: $(base64 -w0 "$C/cli.pem")
    client-key-data: $(base64 -w0 "$C/cli.key")
KC
	mkdir -p "$T/keytmp"
	tls_ctl operator '{"name": "kube-apiserver", "delay": 30}' >/dev/null
	: >"$T/ekey"
	TMPDIR=$T/keytmp "$AIRLOCK" update --store "$S" --to 4.14.1 --kubeconfig "$T/kubeconfig-tls" --operator-poll 100ms --force \
		--state "$T/state-k.json" >"$T/okey" 2>"$T/ekey" &
	UPID=$!
	wait_for "$T/ekey" "^level 20" && al_pass "keys: the run applies over TLS with the client certificate" || al_fail "keys: the run applies over TLS with the client certificate"
	al_check "keys: while it runs, no key file is in TMPDIR" [ -z "$(ls -A "$T/keytmp")" ]
	kill -9 "$UPID"
	wait "$UPID" 2>/dev/null || true
	al_check "keys: after kill -9, no key file remains in TMPDIR" [ -z "$(ls -A "$T/keytmp")" ]
	# the fallback (named files): a killed run's files are removed by the next start
	: >"$T/ekey"
	AIRLOCK_KUBE_NO_MEMFD=1 TMPDIR=$T/keytmp "$AIRLOCK" update --store "$S" --to 4.14.1 --kubeconfig "$T/kubeconfig-tls" \
		--operator-poll 100ms --force --state "$T/state-k.json" >"$T/okey" 2>"$T/ekey" &
	UPID=$!
	wait_for "$T/ekey" "holding lease" || true
	al_check "keys (fallback): a run without memfd holds named private files" [ "$(ls "$T/keytmp" | grep -c "^airlock-kube-$UPID-")" = 3 ]
	kill -9 "$UPID"
	wait "$UPID" 2>/dev/null || true
	tls_ctl operator '{"name": "kube-apiserver", "clear": true}' >/dev/null
	AIRLOCK_KUBE_NO_MEMFD=1 TMPDIR=$T/keytmp al_run "$T/okey" "$T/ekey" "$AIRLOCK" update --store "$S" --to 4.14.1 \
		--kubeconfig "$T/kubeconfig-tls" --operator-poll 100ms --force --state "$T/state-k.json"
	al_check "keys (fallback): the next run completes" [ "$AL_RC" = 0 ]
	al_check "keys (fallback): ... and the killed run's files are gone, and its own" [ -z "$(ls -A "$T/keytmp")" ]
else
	# not a pass: the key scenario did not run
	echo "skip: keys: no openssl to make a TLS server and a client certificate" >&2
fi

al_finish
