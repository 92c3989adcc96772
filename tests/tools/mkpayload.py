#!/usr/bin/env python3
# mkpayload.py: writes a synthetic release-manifests/ directory of any size (run levels, components, manifests) for updater tests and benchmarks.
"""Generate CVO-style release manifests (Python 3 standard library only).

Usage:
    mkpayload.py --out DIR [--levels 20] [--components 40] [--manifests 600]
                 [--seed S] [--cluster-operators]

Writes DIR/0000_<LL>_<component>_<NN>_<what>.yaml. Components are spread
round-robin over the levels (levels 10, 15, 20, ...); each component owns a
Namespace (its first manifest) and ConfigMaps in it. The manifests are split
over the components at random (seeded: the output is a pure function of the
options), every component getting at least two. With --cluster-operators,
each component's last manifest is a config.openshift.io/v1 ClusterOperator
whose status.versions holds the version placeholder. Every manifest carries
include.release.openshift.io/self-managed-high-availability: "true".

With --names FILE (one "manifests/NAME" or "release-manifests/NAME" per
line, e.g. tests/data/cvo-payload/names.txt) it writes DIR/manifests/ and
DIR/release-manifests/ instead: one object per file named after the file,
its kind guessed from the name (namespace, CRD, ClusterOperator with
status.versions, Deployment, Job, else ConfigMap in "default"), files named
"...-<FeatureSet>.<ext>" annotated release.openshift.io/feature-set and
sharing one object name (as the real clusterversions CRD variants do), and
the capability.openshift.io/name the real component carries (--no-capabilities
leaves those out). image-references and release-metadata are not written
(mkrelease.py writes its own).

Prints a JSON summary on stdout: {"levels": [{"level": L, "components":
{"name": count}}], "manifests": N} - what a benchmark needs to compute the
ideal (sum over levels of the largest component).
"""

import argparse
import hashlib
import json
import os
import random
import re
import sys

ANN = '    include.release.openshift.io/self-managed-high-availability: "true"\n'


def namespace(name):
    return ("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  annotations:\n%s" % (name, ANN))


def configmap(ns, name, i):
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n"
            "  annotations:\n%sdata:\n  index: \"%d\"\n  image: registry.ci.openshift.org/openshift:etcd\n"
            % (name, ns, ANN, i))


def cluster_operator(name):
    return ("apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: %s\n"
            "  annotations:\n%sspec: {}\nstatus:\n  versions:\n  - name: operator\n"
            "    version: \"0.0.1-snapshot\"\n" % (name, ANN))


FEATURE_SETS = ("Default", "TechPreviewNoUpgrade", "DevPreviewNoUpgrade",
                "CustomNoUpgrade", "OKD")
# component (as in the real file names) -> capability.openshift.io/name
CAPABILITIES = {
    "console-operator": "Console", "insights-operator": "Insights",
    "cluster-samples-operator": "openshift-samples",
    "operator-marketplace": "marketplace",
    "cluster-storage-operator": "Storage",
    "machine-api-operator": "MachineAPI",
    "cluster-image-registry-operator": "ImageRegistry",
    "cluster-node-tuning-operator": "NodeTuning",
    "olm": "OperatorLifecycleManager",
    "cloud-credential-operator": "CloudCredential",
    "cluster-baremetal-operator": "baremetal",
}
COMPONENT_RE = re.compile(r"^0000_(\d+)_([a-zA-Z0-9]+(-[a-zA-Z0-9]+)*?)_")


def sanitize(name):
    base = re.sub(r"\.(yaml|yml|json)$", "", name).lower()
    for fs in FEATURE_SETS:
        base = re.sub(r"-%s((\.[a-z]+)*)$" % fs.lower(), r"\1", base)
    return re.sub(r"[^a-z0-9.-]+", "-", base).strip("-.")[:200]


def object_for(name, with_caps):
    """One realistic object for a real payload file name."""
    obj_name = sanitize(name)
    low = name.lower()
    ann = [ANN.rstrip("\n")]
    for fs in FEATURE_SETS:
        if re.search(r"-%s(\.[a-z]+)*\.(yaml|yml|json)$" % fs, name):
            ann.append('    release.openshift.io/feature-set: "%s"' % fs)
    m = COMPONENT_RE.match(name)
    if with_caps and m and m.group(2) in CAPABILITIES:
        ann.append('    capability.openshift.io/name: "%s"' % CAPABILITIES[m.group(2)])
    ann = "\n".join(ann) + "\n"
    if "namespace" in low or low.endswith("-ns.yaml") or "_00-ns" in low:
        return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  annotations:\n%s" % (obj_name, ann)
    if ".crd." in low or "crd" in low or "custom-resource-definition" in low:
        plural = re.sub(r"[^a-z0-9]", "", obj_name) or "things"
        if len(plural) > 60:  # unique, within a DNS label
            plural = plural[:44] + hashlib.sha256(obj_name.encode()).hexdigest()[:16]
        return ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
                "  name: %s.names.airlock.io\n  annotations:\n%sspec:\n  group: names.airlock.io\n"
                "  scope: Namespaced\n  names:\n    kind: K%s\n    plural: %s\n  versions:\n"
                "  - name: v1\n    served: true\n    storage: true\n" % (plural, ann, plural, plural))
    if "clusteroperator" in low or "cluster-operator" in low or "operatorstatus" in low:
        comp = m.group(2) if m else obj_name
        return ("apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: %s\n"
                "  annotations:\n%sspec: {}\nstatus:\n  versions:\n  - name: operator\n"
                "    version: \"0.0.1-snapshot\"\n" % (comp, ann))
    if "deployment" in low or low.endswith("_deploy.yaml"):
        return ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  namespace: default\n"
                "  annotations:\n%sspec:\n  replicas: 1\n" % (obj_name, ann))
    if re.search(r"(^|[_-])job[._-]", low):
        return ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  namespace: default\n"
                "  annotations:\n%sspec: {}\n" % (obj_name, ann))
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: default\n"
            "  annotations:\n%sdata:\n  file: %s\n" % (obj_name, ann, json.dumps(name)))


def write_names(a):
    summary = {"manifests": 0, "cvo": 0}
    lines = []
    for n in a.names:
        with open(n) as f:
            lines += [l.strip() for l in f if l.strip() and not l.startswith("#")]
    for line in lines:
        d, name = line.split("/", 1)
        if d not in ("manifests", "release-manifests"):
            raise SystemExit("mkpayload: bad line %r" % line)
        if name in ("image-references", "release-metadata"):
            continue
        os.makedirs(os.path.join(a.out, d), exist_ok=True)
        with open(os.path.join(a.out, d, name), "w") as f:
            f.write(object_for(name, not a.no_capabilities))
        summary["cvo" if d == "manifests" else "manifests"] += 1
    json.dump(summary, sys.stdout)
    sys.stdout.write("\n")
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--levels", type=int, default=20)
    ap.add_argument("--components", type=int, default=40)
    ap.add_argument("--manifests", type=int, default=600)
    ap.add_argument("--seed", default="airlock-payload")
    ap.add_argument("--cluster-operators", action="store_true")
    ap.add_argument("--names", action="append", help="real file names: see above (repeatable)")
    ap.add_argument("--no-capabilities", action="store_true")
    a = ap.parse_args(argv)
    if a.names:
        return write_names(a)
    if a.levels < 1 or a.components < a.levels or a.manifests < 2 * a.components:
        ap.error("need levels >= 1, components >= levels, manifests >= 2 * components")
    rng = random.Random(a.seed)
    counts = [2] * a.components
    for _ in range(a.manifests - 2 * a.components):
        counts[rng.randrange(a.components)] += 1
    os.makedirs(a.out, exist_ok=True)
    summary = {}
    for c in range(a.components):
        level = 10 + 5 * (c % a.levels)
        comp = "comp%03d-operator" % c
        ns = "bench-%03d" % c
        files = [("00_namespace", namespace(ns))]
        n_cm = counts[c] - 1 - (1 if a.cluster_operators else 0)
        for i in range(n_cm):
            files.append(("%02d_configmap" % (i + 1), configmap(ns, "cm-%03d" % i, i)))
        if a.cluster_operators:
            files.append(("99_clusteroperator", cluster_operator(comp)))
        for i, (what, text) in enumerate(files):
            path = os.path.join(a.out, "0000_%02d_%s_%02d_%s.yaml" % (level, comp, i, what.split("_", 1)[1]))
            with open(path, "w") as f:
                f.write(text)
        summary.setdefault(level, {})[comp] = len(files)
    json.dump({"levels": [{"level": l, "components": summary[l]} for l in sorted(summary)],
               "manifests": sum(counts)}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
