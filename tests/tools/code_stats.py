#!/usr/bin/env python3
"""code_stats.py: size, longest functions and include graph of airlock.

Usage: tests/tools/code_stats.py [--root DIR] [--top N]

Prints, for the tree at DIR (default: the current directory):
  - lines per library module (src/<module>*.c plus src/<module>*_int.h,
    grouped by the name before the first '_' or '.') and per public header
    (include/airlock/*.h), and per command (tools/airlock/cmd_*.c);
  - the N longest function bodies in src/ and tools/ (Linux brace style:
    a definition's '{' and '}' stand at column 0);
  - the include graph between modules (module X -> Y when a file of X
    includes airlock/Y*.h or "Y*.h", internal headers such as json_int.h
    included: a header belongs to the module named before its first '_'),
    its cycles, and the edges that go upward in the layer table below;
  - the public headers that name a jansson type (json_t).
The figures in /work/notes and docs/architecture.md were made with it.
"""
import argparse
import os
import re
import sys

# Layers, bottom to top: a module may include its own layer or lower ones.
LAYERS = [
    ("foundation", "common error buf clock log fs digest json yaml version name"),
    ("formats", "ref oci pgp imageset certsd http helm bcrypt"),
    ("services", "auth registry regconf store layer release kres kube layout"),
    ("domain", "sig graph transfer catalog cosign"),
    ("workflows", "mirror pack update delete serve verify"),
]
LAYER_OF = {}
for i, (_, mods) in enumerate(LAYERS):
    for m in mods.split():
        LAYER_OF[m] = i


def module_of(path):
    base = os.path.basename(path)
    name = re.split(r"[_.]", base, maxsplit=1)[0]
    return name


def count_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for _ in f)


def files(root, sub, suffix, prefix=""):
    """The files of root/sub; for "src", those of its folders (the
    library's, CMakeLists.txt AL_FOLDERS: not src/lazy or src/keys)."""
    d = os.path.join(root, sub)
    if not os.path.isdir(d):
        return []
    dirs = [d]
    if sub == "src":
        dirs = [os.path.join(d, x) for x in sorted(os.listdir(d))
                if os.path.isdir(os.path.join(d, x))
                and x not in ("lazy", "keys")]
    return sorted(os.path.join(x, f) for x in dirs for f in os.listdir(x)
                  if f.endswith(suffix) and f.startswith(prefix))


DEF_OPEN = re.compile(r"^\{\s*$")
NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def functions(path):
    """Yield (name, first line, length) for each function definition."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if DEF_OPEN.match(lines[i]) and i > 0:
            # the header: back up to the line that starts at column 0
            j = i - 1
            while j > 0 and (lines[j][:1] in (" ", "\t") or
                             lines[j].strip() == ""):
                j -= 1
            header = " ".join(lines[j:i])
            m = NAME.search(header)
            k = i + 1
            while k < len(lines) and not lines[k].startswith("}"):
                k += 1
            if m and "=" not in header.split("(")[0]:
                yield m.group(1), j + 1, k - j + 1
            i = k + 1
            continue
        i += 1


INC_LIB = re.compile(r'^\s*#\s*include\s+"airlock/([a-z0-9_]+)\.h"')
INC_HDR = re.compile(r'^\s*#\s*include\s+"([a-z0-9_]+)\.h"')


def include_graph(root):
    edges = {}
    srcs = files(root, "src", ".c") + files(root, "src", ".h")
    hdrs = files(root, "include/airlock", ".h")
    for path in srcs + hdrs:
        src_mod = module_of(path)
        is_hdr = path in hdrs
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = INC_LIB.match(line) or INC_HDR.match(line)
                if not m:
                    continue
                # a header's module is the name before its first '_'
                # (mirror_plan.h, json_int.h, catalog_int.h)
                dst = re.split(r"_", m.group(1), maxsplit=1)[0]
                if dst == src_mod:
                    continue
                edges.setdefault(src_mod, {}).setdefault(dst, set()).add(
                    os.path.relpath(path, root))
    return edges


def cycles(edges):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    nodes = set(edges) | {d for v in edges.values() for d in v}
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    root = a.root

    print("== lines per library module (src/*.c, *.h by module)")
    per = {}
    for p in files(root, "src", ".c") + files(root, "src", ".h"):
        per.setdefault(module_of(p), []).append(p)
    total = 0
    for mod in sorted(per, key=lambda m: -sum(count_lines(p) for p in per[m])):
        n = sum(count_lines(p) for p in per[mod])
        total += n
        parts = ", ".join("%s %d" % (os.path.basename(p), count_lines(p))
                          for p in per[mod]) if len(per[mod]) > 1 else ""
        print("%-10s %6d  %s" % (mod, n, parts))
    print("%-10s %6d" % ("total", total))

    print("\n== lines per public header (include/airlock/*.h)")
    total = 0
    for p in files(root, "include/airlock", ".h"):
        n = count_lines(p)
        total += n
        print("%-14s %5d" % (os.path.basename(p), n))
    print("%-14s %5d" % ("total", total))

    print("\n== lines per command (tools/airlock/cmd_*.c)")
    total = 0
    for p in files(root, "tools/airlock", ".c", "cmd_"):
        n = count_lines(p)
        total += n
        print("%-20s %5d" % (os.path.basename(p), n))
    print("%-20s %5d" % ("total", total))

    print("\n== the %d longest functions (src/, tools/airlock/)" % a.top)
    funcs = []
    for p in (files(root, "src", ".c") + files(root, "tools/airlock", ".c")):
        for name, line, n in functions(p):
            funcs.append((n, name, "%s:%d" % (os.path.relpath(p, root),
                                              line)))
    funcs.sort(key=lambda t: (-t[0], t[1]))
    for n, name, where in funcs[:a.top]:
        print("%5d  %-36s %s" % (n, name, where))

    print("\n== include graph between modules (X -> Y: X includes Y.h)")
    edges = include_graph(root)
    for v in sorted(edges):
        print("%-10s -> %s" % (v, " ".join(sorted(edges[v]))))
    cyc = cycles(edges)
    print("\ncycles: %s" % ("none" if not cyc else
                            "; ".join(" <-> ".join(c) for c in cyc)))
    up = []
    for v in sorted(edges):
        for w in sorted(edges[v]):
            if v in LAYER_OF and w in LAYER_OF and LAYER_OF[w] > LAYER_OF[v]:
                up.append("%s (%s) -> %s (%s) in %s" % (
                    v, LAYERS[LAYER_OF[v]][0], w, LAYERS[LAYER_OF[w]][0],
                    ", ".join(sorted(edges[v][w]))))
    unknown = sorted((set(edges) | {d for x in edges.values() for d in x})
                     - set(LAYER_OF))
    print("upward edges: %s" % ("none" if not up else ""))
    for u in up:
        print("  " + u)
    if unknown:
        print("modules not in the layer table: " + " ".join(unknown))

    print("\n== public headers naming a jansson type")
    n = 0
    for p in files(root, "include/airlock", ".h"):
        with open(p, encoding="utf-8", errors="replace") as f:
            hits = sum(1 for line in f if re.search(r"\bjson_t\b", line))
        if hits:
            n += 1
            print("%-14s %3d lines" % (os.path.basename(p), hits))
    print("headers: %d" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
