#!/usr/bin/env python3
# cvograph.py: the Cluster Version Operator's payload load and task graph, transcribed from its Go source, compared task by task with airlock's plan.
"""Build the CVO's task graph for a payload directory and compare it with
the plan `airlock update --dry-run` printed (Python 3 standard library).

Usage:
    cvograph.py --payload DIR --plan PLAN [--feature-set Default]
                [--capabilities a,b,c] [--profile NAME] [--show]

DIR holds manifests/ and release-manifests/ as mkpayload.py --names writes
them (simple YAML: top-level apiVersion/kind, metadata name/namespace,
annotations one per line). The reference follows, decision by decision:

- openshift/cluster-version-operator pkg/payload/payload.go LoadUpdate:
  manifests/ first, then release-manifests/, each directory in file-name
  order (os.ReadDir), only .yaml/.yml/.json files;
- openshift/library-go pkg/manifest/manifest.go Include: feature set
  (unknown values never included), profile, capabilities (known and
  enabled, '+'-separated);
- pkg/payload/task_graph.go: NewTaskGraph, Split(SplitOnJobs),
  Parallelize(ByNumberAndComponent) with reMatchPattern, including the
  merging of consecutive serial chunks into one node.

Both graphs are reduced to the relation between every pair of tasks
("a before b", "b before a" or "parallel"); any difference, a task in one
graph only, or a different flat order is printed and exits 1.
"""

import argparse
import os
import re
import sys

RE = re.compile(r"^0000_(\d+)_([a-zA-Z0-9]+(-[a-zA-Z0-9]+)*?)_")
KNOWN_SETS = {"Default", "TechPreviewNoUpgrade", "DevPreviewNoUpgrade",
              "CustomNoUpgrade", "OKD"}
KNOWN_CAPS = {"baremetal", "Console", "Insights", "marketplace", "Storage",
              "openshift-samples", "CSISnapshot", "NodeTuning", "MachineAPI",
              "Build", "DeploymentConfig", "ImageRegistry",
              "OperatorLifecycleManager", "OperatorLifecycleManagerV1",
              "CloudCredential", "Ingress", "CloudControllerManager",
              "CompatibilityRequirements", "ClusterAPI"}


def parse(text):
    obj = {"annotations": {}}
    section = None
    for line in text.splitlines():
        if not line.startswith(" "):
            section = line.split(":", 1)[0]
            if section in ("apiVersion", "kind"):
                obj[section] = line.split(":", 1)[1].strip()
            continue
        if section != "metadata":
            continue
        if line.startswith("    ") and obj.get("_in_ann"):
            k, v = line.strip().split(":", 1)
            obj["annotations"][k.strip()] = v.strip().strip('"')
            continue
        obj["_in_ann"] = line.strip() == "annotations:"
        if line.startswith("  name:"):
            obj["name"] = line.split(":", 1)[1].strip()
        elif line.startswith("  namespace:"):
            obj["namespace"] = line.split(":", 1)[1].strip()
    return obj


def include(obj, feature_set, profile, caps):
    ann = obj["annotations"]
    if "release.openshift.io/feature-set" in ann:
        vals = ann["release.openshift.io/feature-set"].split(",")
        if any(v not in KNOWN_SETS for v in vals):
            return False
        if (feature_set or "Default") not in vals:
            return False
    if ann.get("include.release.openshift.io/" + profile) != "true":
        return False
    if caps is not None and ann.get("capability.openshift.io/name"):
        for c in ann["capability.openshift.io/name"].split("+"):
            if c not in KNOWN_CAPS or c not in caps:
                return False
    return True


def load(payload, feature_set, profile, caps):
    tasks = []
    for d in ("manifests", "release-manifests"):
        p = os.path.join(payload, d)
        if not os.path.isdir(p):
            continue
        for name in sorted(os.listdir(p), key=lambda n: n.encode()):
            if os.path.splitext(name)[1] not in (".yaml", ".yml", ".json"):
                continue
            with open(os.path.join(p, name)) as f:
                obj = parse(f.read())
            if not include(obj, feature_set, profile, caps):
                continue
            key = ("manifests/" + name if d == "manifests" else name) + " #1"
            tasks.append({"key": key, "file": name, "obj": obj})
    return tasks


def is_job(t):
    return t["obj"].get("kind") == "Job" and t["obj"].get("apiVersion") == "batch/v1"


def split_on_jobs(tasks):
    """TaskGraph.Split(SplitOnJobs): the chain of nodes, in edge order."""
    nodes, cur = [], []
    for t in tasks:
        if is_job(t):
            if cur:
                nodes.append(cur)
            nodes.append([t])
            cur = []
        else:
            cur.append(t)
    if cur:
        nodes.append(cur)
    return nodes


def by_number_and_component(tasks):
    """ByNumberAndComponent, line by line."""
    if len(tasks) <= 1:
        return None
    matches = [RE.match(t["file"]) for t in tasks]
    buckets, last = [], None
    i, count = 0, len(tasks)
    while i < count:
        base = matches[i]
        j = i + 1
        groups = []
        while j < count:
            nxt = matches[j]
            if base is None or nxt is None or base.group(1) != nxt.group(1):
                break
            if base.group(2) != nxt.group(2):
                groups.append(tasks[i:j])
                i = j
            base = nxt
            j += 1
        if groups:
            groups.append(tasks[i:j])
            i = j
            buckets.append(groups)
            last = None
            continue
        if last is None:
            last = list(tasks[i:j])
            buckets.append([last])
            i = j
            continue
        last.extend(tasks[i:j])
        i = j
    return buckets


def cvo_steps(tasks):
    steps = []
    for node in split_on_jobs(tasks):
        res = by_number_and_component(node)
        if not res or (len(res) == 1 and len(res[0]) == 1):
            steps.append([node])
        else:
            steps.extend(res)
    return steps


def plan_steps(path):
    steps = []
    for line in open(path):
        line = line.rstrip("\n")
        if re.match(r"^(level \S+|unnumbered):", line):
            steps.append([])
        elif line.startswith("  component ") and steps:
            steps[-1].append([])
        elif line.startswith("    ") and steps and steps[-1]:
            m = re.search(r"\((\S+ #\d+)\)$", line)
            if m:
                steps[-1][-1].append({"key": m.group(1)})
    return steps


def relation(steps):
    pos = {}
    for si, step in enumerate(steps):
        for ci, chain in enumerate(step):
            for ti, t in enumerate(chain):
                pos[t["key"]] = (si, ci, ti)
    return pos


def rel(pa, pb):
    if pa[0] != pb[0]:
        return "<" if pa[0] < pb[0] else ">"
    if pa[1] != pb[1]:
        return "||"
    return "<" if pa[2] < pb[2] else ">"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--payload", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--feature-set", default="Default")
    ap.add_argument("--capabilities")
    ap.add_argument("--profile", default="self-managed-high-availability")
    ap.add_argument("--show", action="store_true")
    a = ap.parse_args(argv)
    caps = None if a.capabilities is None else set(c for c in a.capabilities.split(",") if c)
    tasks = load(a.payload, a.feature_set, a.profile, caps)
    ref = cvo_steps(tasks)
    got = plan_steps(a.plan)
    if a.show:
        for s in ref:
            print(" || ".join("[" + ", ".join(t["key"] for t in c) + "]" for c in s))
    pr, pg = relation(ref), relation(got)
    bad = []
    only_ref = sorted(set(pr) - set(pg))
    only_got = sorted(set(pg) - set(pr))
    order_ref = [t["key"] for s in ref for c in s for t in c]
    order_got = [t["key"] for s in got for c in s for t in c]
    keys = [k for k in order_ref if k in pg]
    pairs = 0
    for x in range(len(keys)):
        for y in range(x + 1, len(keys)):
            pairs += 1
            r1, r2 = rel(pr[keys[x]], pr[keys[y]]), rel(pg[keys[x]], pg[keys[y]])
            if r1 != r2:
                bad.append("%s %s %s (airlock: %s)" % (keys[x], r1, keys[y], r2))
    print("cvograph: %d tasks (CVO) %d (airlock), %d CVO steps, %d airlock levels, "
          "%d pairs compared, %d differences, %d only in CVO, %d only in airlock, "
          "flat order %s" % (len(pr), len(pg), len(ref), len(got), pairs, len(bad),
                             len(only_ref), len(only_got),
                             "equal" if order_ref == order_got else "DIFFERENT"))
    for b in bad[:10]:
        print("  differs: " + b)
    for k in only_ref[:10]:
        print("  only in CVO: " + k)
    for k in only_got[:10]:
        print("  only in airlock: " + k)
    return 1 if bad or only_ref or only_got or order_ref != order_got else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
