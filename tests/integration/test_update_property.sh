#!/bin/bash
# test_update_property.sh: many update runs under random fault schedules (hangs, errors, resets, stuck operators, kills, short deadlines): Reconciling / Completed only when everything applied.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update

RUNS=${AL_UPDATE_RUNS:-30}
SEED=${AL_TEST_SEED:-$(( $(date +%s) ^ $$ ))}
echo "random seed: $SEED (set AL_TEST_SEED=$SEED to repeat)"

S=$T/store
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }
up_plan "$S" || { al_fail "dry-run plan"; al_finish; }
up_ks_start --co-delay 0.05

python3 -c "$UP_PY"'
import os, random, signal, subprocess, time
AIRLOCK, STORE, T, SEED, RUNS = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]), int(sys.argv[7])
STATE = T + "/prop-state.json"
PL = plan()
OPERATORS = ["etcd", "kube-apiserver", "authentication", "console", "network"]
def ctl(path, body):
    req = urllib.request.Request(KS + "/_control/" + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    return json.load(urllib.request.urlopen(req))
def manifest_path_regex(rng):
    lv, kind, ns, name = rng.choice(PL)
    return re.escape(name) + "$"
def state():
    try:
        return json.load(open(STATE))
    except FileNotFoundError:
        return None
def everything_applied():
    objs = objects()
    if any((k, ns, n) not in objs for _, k, ns, n in PL):
        return False
    for o in objs.values():
        if o["kind"] == "ClusterOperator":
            vs = [v.get("version") for v in o.get("status", {}).get("versions", [])]
            if vs != ["4.14.1"]:
                return False
    return True
def check(tag, rc):
    s = state()
    if s is None:
        return []
    bad = []
    completed = [h for h in s["history"] if h["state"] == "Completed"]
    if (s["state"] == "Reconciling" or completed or rc == 0) and not everything_applied():
        bad.append("%s: state %s, history %s, exit %d but not everything applied" % (
            tag, s["state"], [h["state"] for h in s["history"]], rc))
    if rc != 0 and s["state"] == "Reconciling" and not completed:
        bad.append("%s: Reconciling without a Completed entry" % tag)
    if rc not in (0, 3):
        bad.append("%s: exit %d" % (tag, rc))
    return bad
def run(extra, kill_after):
    args = [AIRLOCK, "update", "--store", STORE, "--to", "4.14.1", "--kubeconfig", T + "/kubeconfig",
            "--force", "--state", STATE, "--operator-poll", "50ms", "--timeout", "1s", "-q"] + extra
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if kill_after is not None:
        try:
            p.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill(); p.communicate()
        return -999, b"hung"
    return p.returncode, err
failures = []
stats = {"completed": 0, "failed": 0, "killed": 0}
t0 = time.time()
for i in range(RUNS):
    rng = random.Random(SEED * 1000 + i)
    ctl("reset", {})
    if os.path.exists(STATE):
        os.unlink(STATE)
    sched = []
    for _ in range(rng.randint(0, 3)):
        kind = rng.choice(["latency", "error500", "error422", "hang", "reset", "stuck", "slowop", "degraded"])
        if kind == "latency":
            ctl("fault", {"path": manifest_path_regex(rng), "latency_ms": rng.randint(10, 300)})
        elif kind == "error500":
            ctl("fault", {"path": manifest_path_regex(rng), "method": "PATCH", "status": 500, "times": rng.randint(1, 3)})
        elif kind == "error422":
            ctl("fault", {"path": manifest_path_regex(rng), "method": "PATCH", "status": 422})
        elif kind == "hang":
            ctl("fault", {"path": manifest_path_regex(rng), "hang": True, "times": 1})
        elif kind == "reset":
            ctl("fault", {"path": manifest_path_regex(rng), "reset": True, "times": rng.randint(1, 2)})
        elif kind == "stuck":
            ctl("operator", {"name": rng.choice(OPERATORS), "never": True})
        elif kind == "slowop":
            ctl("operator", {"name": rng.choice(OPERATORS), "delay": rng.uniform(0.2, 2.0)})
        else:
            ctl("operator", {"name": rng.choice(OPERATORS), "degraded": "simulated"})
        sched.append(kind)
    sync = "%dms" % rng.randint(300, 2000)
    kill = rng.uniform(0.1, 1.2) if rng.random() < 0.3 else None
    rc, err = run(["--sync-timeout", sync, "--parallel", str(rng.randint(1, 8))], kill)
    tag = "run %d (faults %s, sync %s, kill %s)" % (i, sched, sync, "%.2fs" % kill if kill else "no")
    if rc == -signal.SIGKILL:
        stats["killed"] += 1
        rc = 3  # killed: whatever is persisted must still satisfy the invariant
    elif rc == 0:
        stats["completed"] += 1
    else:
        stats["failed"] += 1
    bad = check(tag, rc)
    # then a clean run must resume and complete
    if rng.random() < 0.5:
        ctl("faults/clear", {})
        for op in OPERATORS:
            ctl("operator", {"name": op, "clear": True})
        rc2, err2 = run(["--sync-timeout", "20s"], None)
        bad += check(tag + " + clean rerun", rc2)
        if rc2 != 0:
            bad.append("%s: clean rerun failed (exit %d): %s" % (tag, rc2, err2.decode(errors="replace")[-300:]))
        elif state()["state"] != "Reconciling":
            bad.append("%s: clean rerun did not reach Reconciling" % tag)
    for b in bad:
        print("VIOLATION:", b)
    failures += bad
print("runs: %d, %s, %.1fs" % (RUNS, stats, time.time() - t0))
sys.exit(1 if failures else 0)
' "$KS_URL" "$T/plan.txt" "$AIRLOCK" "$S" "$T" "$SEED" "$RUNS" >"$T/prop.log" 2>&1 && rc=0 || rc=$?
cat "$T/prop.log"
al_check "10: $RUNS random fault schedules (seed $SEED): Reconciling/Completed only when everything applied" [ "$rc" = 0 ]
al_finish
