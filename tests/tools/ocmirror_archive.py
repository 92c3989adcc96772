#!/usr/bin/env python3
"""ocmirror_archive.py: write oc-mirror v2 archives (mirror_000001.tar ...)
holding the images of an airlock store, laid out as oc-mirror writes them.

The format, from openshift/oc-mirror at commit
855b64a3c9c03634bcab6210b641274772050cda:
- internal/pkg/archive/const.go: archives "mirror_%06d.tar", the cache
  paths under "docker/registry/v2" (repositories, blobs), "working-dir",
  the image set configuration as "isc_<RFC 3339 time>";
- internal/pkg/archive/archive.go BuildArchive: first the cache's
  docker/registry/v2/repositories tree, then the blobs
  docker/registry/v2/blobs/sha256/<2 hex>/<hex>/data, then working-dir,
  then the isc file; regular files only (adder_common.go
  addFileToWriter, Go archive/tar: USTAR, PAX for long names), a new
  archive when the next file would pass the size limit (strict_adder.go,
  permissive_adder.go nextChunk);
- tests/unit/testdata/cache-fake: distribution's storage under a
  repository: _manifests/tags/<tag>/current/link,
  _manifests/tags/<tag>/index/sha256/<hex>/link,
  _manifests/revisions/sha256/<hex>/link, _layers/sha256/<hex>/link, each
  link holding "sha256:<hex>" without a newline.

Usage: ocmirror_archive.py STORE OUTDIR [--volume-size BYTES]
       [--skip-blob HEX]... [--digest-tags] [--rename NAME=REPO:TAG]...
       [--isc FILE] [--file PATH=FILE]... [--time RFC3339]
A store name REGISTRY/REPO:TAG goes to the cache repository REPO (the
registry host dropped, as oc-mirror's cache does); REGISTRY/REPO@DIGEST to
a revision only, or with --digest-tags to the tag "sha256-<hex>" as
oc-mirror v2 tags images it mirrors by digest. --rename puts the store
image NAME at the cache's REPO:TAG instead, as oc-mirror's mirror to disk
puts a release at openshift/release-images:<tag>
(internal/pkg/release/local_stored_collector.go prepareM2DCopyBatch,
preparePathComponents). --isc puts FILE in the archive as the image set
configuration oc-mirror carries (isc_<time>; default: an empty one).
--file puts FILE in the archive at PATH (under working-dir/, before its
logs), as oc-mirror carries its working directory: the update graphs of
working-dir/hold-release/cincinnati-graph-data/<arch>-<channel>.json
(internal/pkg/release/core-cincinnati.go writeGraphDataToFile), say.
--time is the time in the name of the isc file (default
2026-12-05T00:00:00Z), when oc-mirror built the archives.
"""
import argparse
import io
import json
import os
import tarfile

P = "docker/registry/v2"


def load(store, hexd):
    with open(os.path.join(store, "blobs", "sha256", hexd), "rb") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("outdir")
    ap.add_argument("--volume-size", type=int, default=1 << 40)
    ap.add_argument("--skip-blob", action="append", default=[])
    ap.add_argument("--digest-tags", action="store_true")
    ap.add_argument("--rename", action="append", default=[])
    ap.add_argument("--isc")
    ap.add_argument("--file", action="append", default=[])
    ap.add_argument("--time", default="2026-12-05T00:00:00Z")
    a = ap.parse_args()
    renames = {}
    for r in a.rename:
        name, to = r.split("=", 1)
        renames[name] = "cache/" + to

    files = {}  # path in the archive -> bytes, in oc-mirror's order
    repos = {}
    blobs = set()

    def link(path, d):
        repos[path] = d.encode()

    def walk(repo, d, mt):
        hexd = d.split(":", 1)[1]
        blobs.add(hexd)
        link("%s/repositories/%s/_manifests/revisions/sha256/%s/link"
             % (P, repo, hexd), d)
        m = json.loads(load(a.store, hexd))
        for c in m.get("manifests", []):
            walk(repo, c["digest"], c.get("mediaType"))
        for l in ([m["config"]] if "config" in m else []) + m.get("layers", []):
            h = l["digest"].split(":", 1)[1]
            blobs.add(h)
            link("%s/repositories/%s/_layers/sha256/%s/link" % (P, repo, h),
                 l["digest"])

    idx = json.load(open(os.path.join(a.store, "index.json")))
    for e in idx["manifests"]:
        name = e.get("annotations", {}).get(
            "org.opencontainers.image.ref.name", "")
        if not name:
            continue
        name = renames.get(name, name)
        rest = name.split("/", 1)[1]
        if "@" in rest:
            repo, d = rest.split("@", 1)
            tag = ("sha256-" + d.split(":", 1)[1]) if a.digest_tags else None
        else:
            repo, tag = rest.rsplit(":", 1)
        walk(repo, e["digest"], e["mediaType"])
        if tag is not None:
            hexd = e["digest"].split(":", 1)[1]
            link("%s/repositories/%s/_manifests/tags/%s/current/link"
                 % (P, repo, tag), e["digest"])
            link("%s/repositories/%s/_manifests/tags/%s/index/sha256/%s/link"
                 % (P, repo, tag, hexd), e["digest"])

    for p in sorted(repos):
        files[p] = repos[p]
    for h in sorted(blobs):
        if h in a.skip_blob:
            continue
        files["%s/blobs/sha256/%s/%s/data" % (P, h[:2], h)] = load(a.store, h)
    tags = {}
    for e in idx["manifests"]:
        name = e.get("annotations", {}).get(
            "org.opencontainers.image.ref.name", "")
        name = renames.get(name, name)
        if ":" in name.rsplit("/", 1)[-1] and "@" not in name:
            tags[e["digest"].split(":", 1)[1]] = name.rsplit(":", 1)[1]
    sigroot = os.path.join(a.store, "signatures")
    for d in sorted(os.listdir(sigroot)) if os.path.isdir(sigroot) else []:
        if not d.startswith("sha256="):
            continue
        hexd = d.split("=", 1)[1]
        first = os.path.join(sigroot, d, "signature-1")
        if os.path.isfile(first):
            with open(first, "rb") as f:
                files["working-dir/signatures/%s-sha256-%s"
                      % (tags.get(hexd, "latest"), hexd)] = f.read()
    for f in a.file:
        path, local = f.split("=", 1)
        with open(local, "rb") as fh:
            files[path] = fh.read()
    files["working-dir/.history/.history-2026-12-05T00:00:00Z"] = \
        "".join("sha256:%s\n" % h for h in sorted(blobs)).encode()
    files["working-dir/logs/oc-mirror.log"] = b"mirror to disk\n"
    if a.isc:
        with open(a.isc, "rb") as f:
            files["isc_" + a.time] = f.read()
    else:
        files["isc_" + a.time] = \
            b"kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\n"

    os.makedirs(a.outdir, exist_ok=True)
    n, size, tf = 0, 0, None
    for p, data in files.items():
        if tf is None or size + len(data) > a.volume_size:
            if tf is not None:
                tf.close()
            n += 1
            size = 0
            tf = tarfile.open(os.path.join(a.outdir, "mirror_%06d.tar" % n),
                              "w", format=tarfile.PAX_FORMAT)
        ti = tarfile.TarInfo(p)
        ti.size = len(data)
        ti.mode = 0o644
        ti.mtime = 1764892800
        tf.addfile(ti, io.BytesIO(data))
        size += len(data)
    tf.close()


if __name__ == "__main__":
    main()
