#!/bin/bash
# test_update_property.sh: many update runs under random fault schedules (hangs, errors, resets, stuck operators, kills, short deadlines), also under capability and feature-set mixes: Reconciling / Completed only when everything the filters keep is applied.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update

# Half the runs in the sanitizer build (each costs about three times as
# much there); the release stage does all of them, each with its own seed.
if al_sanitized; then
	RUNS=${AL_UPDATE_RUNS:-15}
else
	RUNS=${AL_UPDATE_RUNS:-30}
fi
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

# --- 10b. the same invariant under capability and feature-set mixes ---------
# Release 4.14.2: the samples plus one object in five feature-set variants and
# objects (one a ClusterOperator) behind capabilities. Each run picks the
# cluster's feature set (FeatureGate cluster, or --feature-set) and enabled
# capabilities (ClusterVersion version, or --capabilities) at random; what
# is applied must be exactly what the CVO's filters keep, and Reconciling /
# Completed only when all of that is applied.
MX=$T/mix
cp -r "$AL_SOURCE_DIR/samples/release-manifests" "$MX"
python3 - "$MX" <<'EOPY'
import sys
d = sys.argv[1]
INC = '    include.release.openshift.io/self-managed-high-availability: "true"\n'
def cm(name, ann, data):
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: default\n  annotations:\n%s%s"
            "data:\n  v: \"%s\"\n" % (name, INC, ann, data))
for fs in ("Default", "TechPreviewNoUpgrade", "DevPreviewNoUpgrade", "CustomNoUpgrade", "OKD"):
    open("%s/0000_00_cluster-version-operator_01_clusterversions-%s.crd.yaml" % (d, fs), "w").write(
        cm("fs-variant", '    release.openshift.io/feature-set: "%s"\n' % fs, fs))
for i, cap in enumerate(("Console", "Insights", "marketplace", "baremetal", "Console+Insights")):
    open("%s/0000_50_cap-%d_00_cm.yaml" % (d, i), "w").write(
        cm("cap-%d" % i, '    capability.openshift.io/name: "%s"\n' % cap, cap))
open("%s/0000_50_cap-0_01_clusteroperator.yaml" % d, "w").write(
    "apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: cap-console\n  annotations:\n%s"
    '    capability.openshift.io/name: "Console"\nstatus:\n  versions:\n  - name: operator\n    version: "0.0.1-snapshot"\n' % INC)
EOPY
up_store_add_release "$S" 4.14.2 "$MX" || { al_fail "make release 4.14.2 (mixes)"; al_finish; }

python3 -c "$UP_PY"'
import os, random, signal, subprocess, time
AIRLOCK, STORE, T, SEED, RUNS = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]), int(sys.argv[7])
STATE = T + "/mix-state.json"
PL = plan()  # the samples (4.14.1): the same objects as 4.14.2 without the extras
SETS = ["Default", "TechPreviewNoUpgrade", "DevPreviewNoUpgrade", "CustomNoUpgrade", "OKD"]
CAPS = ["Console", "Insights", "marketplace", "baremetal", "Console+Insights"]
OPERATORS = ["etcd", "kube-apiserver", "authentication", "console", "network", "cap-console"]
def ctl(path, body):
    req = urllib.request.Request(KS + "/_control/" + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    return json.load(urllib.request.urlopen(req))
def state():
    try:
        return json.load(open(STATE))
    except FileNotFoundError:
        return None
def expected(fs, enabled):
    want = set((k, ns, n) for _, k, ns, n in PL)
    want.add(("ConfigMap", "default", "fs-variant"))
    deny = set()
    for i, c in enumerate(CAPS):
        (want if all(x in enabled for x in c.split("+")) else deny).add(("ConfigMap", "default", "cap-%d" % i))
    (want if "Console" in enabled else deny).add(("ClusterOperator", None, "cap-console"))
    return want, deny
def exactly_applied(fs, enabled):
    objs = objects()
    want, deny = expected(fs, enabled)
    if any(w not in objs for w in want) or any(d in objs for d in deny):
        return False
    if objs[("ConfigMap", "default", "fs-variant")]["data"]["v"] != fs:
        return False
    return all([v.get("version") for v in o.get("status", {}).get("versions", [])] == ["4.14.2"]
               for o in objs.values() if o["kind"] == "ClusterOperator")
def never_wrong(fs, enabled):
    """Whatever state: nothing the filters leave out is ever applied."""
    objs = objects()
    _, deny = expected(fs, enabled)
    fv = objs.get(("ConfigMap", "default", "fs-variant"))
    return not any(d in objs for d in deny) and (fv is None or fv["data"]["v"] == fs)
def check(tag, rc, fs, enabled):
    s = state()
    bad = []
    if not never_wrong(fs, enabled):
        bad.append("%s: an object the filters leave out was applied" % tag)
    if s is None:
        return bad
    completed = [h for h in s["history"] if h["state"] == "Completed"]
    if (s["state"] == "Reconciling" or completed or rc == 0) and not exactly_applied(fs, enabled):
        bad.append("%s: state %s, exit %d but not exactly the filtered payload applied" % (tag, s["state"], rc))
    if rc not in (0, 3):
        bad.append("%s: exit %d" % (tag, rc))
    return bad
def run(extra, kill_after):
    args = [AIRLOCK, "update", "--store", STORE, "--to", "4.14.2", "--kubeconfig", T + "/kubeconfig",
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
failures, stats, t0 = [], {"completed": 0, "failed": 0, "killed": 0}, time.time()
for i in range(RUNS):
    rng = random.Random(SEED * 7919 + i)
    ctl("reset", {})
    if os.path.exists(STATE):
        os.unlink(STATE)
    fs = rng.choice(SETS)
    enabled = sorted(rng.sample(["Console", "Insights", "marketplace", "baremetal"], rng.randint(0, 4)))
    flags = []
    if rng.random() < 0.5:
        ctl("objects", {"object": {"apiVersion": "config.openshift.io/v1", "kind": "FeatureGate",
                                   "metadata": {"name": "cluster"}, "spec": {"featureSet": "" if fs == "Default" else fs}}})
    else:
        flags += ["--feature-set", fs]
    if rng.random() < 0.5:
        # baseline None plus additional, some of them only in status (implicitly enabled)
        split = rng.randint(0, len(enabled))
        ctl("objects", {"object": {"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
                                   "metadata": {"name": "version"},
                                   "spec": {"capabilities": {"baselineCapabilitySet": "None",
                                                             "additionalEnabledCapabilities": enabled[:split]}},
                                   "status": {"capabilities": {"enabledCapabilities": enabled[split:]}}}})
    else:
        flags += ["--capabilities", ",".join(enabled)]
    sched = []
    for _ in range(rng.randint(0, 2)):
        kind = rng.choice(["latency", "error500", "stuck", "slowop"])
        if kind == "latency":
            ctl("fault", {"path": re.escape(rng.choice(PL)[3]) + "$", "latency_ms": rng.randint(10, 200)})
        elif kind == "error500":
            ctl("fault", {"path": re.escape(rng.choice(PL)[3]) + "$", "method": "PATCH", "status": 500, "times": rng.randint(1, 3)})
        elif kind == "stuck":
            ctl("operator", {"name": rng.choice(OPERATORS), "never": True})
        else:
            ctl("operator", {"name": rng.choice(OPERATORS), "delay": rng.uniform(0.2, 1.5)})
        sched.append(kind)
    sync = "%dms" % rng.randint(500, 3000)
    kill = rng.uniform(0.1, 1.2) if rng.random() < 0.2 else None
    rc, err = run(flags + ["--sync-timeout", sync], kill)
    tag = "mix %d (feature set %s, capabilities %s, flags %s, faults %s, sync %s)" % (i, fs, enabled, flags, sched, sync)
    if rc == -signal.SIGKILL:
        stats["killed"] += 1
        rc = 3
    elif rc == 0:
        stats["completed"] += 1
    else:
        stats["failed"] += 1
    bad = check(tag, rc, fs, enabled)
    ctl("faults/clear", {})
    for op in OPERATORS:
        ctl("operator", {"name": op, "clear": True})
    rc2, err2 = run(flags + ["--sync-timeout", "20s"], None)
    bad += check(tag + " + clean rerun", rc2, fs, enabled)
    if rc2 != 0:
        bad.append("%s: clean rerun failed (exit %d): %s" % (tag, rc2, err2.decode(errors="replace")[-300:]))
    elif not exactly_applied(fs, enabled):
        bad.append("%s: clean rerun did not apply exactly the filtered payload" % tag)
    for b in bad:
        print("VIOLATION:", b)
    failures += bad
print("mix runs: %d, %s, %.1fs" % (RUNS, stats, time.time() - t0))
sys.exit(1 if failures else 0)
' "$KS_URL" "$T/plan.txt" "$AIRLOCK" "$S" "$T" "$SEED" "$(( (RUNS + 1) / 2 ))" >"$T/mix.log" 2>&1 && rc=0 || rc=$?
cat "$T/mix.log"
al_check "10b: $(( (RUNS + 1) / 2 )) capability and feature-set mixes under faults (seed $SEED): exactly the filtered payload applied, Completed only then" [ "$rc" = 0 ]
al_finish
