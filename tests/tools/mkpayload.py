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

Prints a JSON summary on stdout: {"levels": [{"level": L, "components":
{"name": count}}], "manifests": N} - what a benchmark needs to compute the
ideal (sum over levels of the largest component).
"""

import argparse
import json
import os
import random
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


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--levels", type=int, default=20)
    ap.add_argument("--components", type=int, default=40)
    ap.add_argument("--manifests", type=int, default=600)
    ap.add_argument("--seed", default="airlock-payload")
    ap.add_argument("--cluster-operators", action="store_true")
    a = ap.parse_args(argv)
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
