#!/usr/bin/env python3
# mkrelease.py: writes a deterministic synthetic release (release image + component images) as an OCI image layout.
"""Generate a synthetic OpenShift-style release payload as an OCI image layout.

The output directory holds oci-layout, index.json and blobs/sha256/...: one
release image (<prefix>/release:<version>-x86_64) whose last layer carries
release-manifests/ (image-references, release-metadata and the manifests), and
N component images (<prefix>/ocp-v4.0-art-dev@sha256:...) each with a shared
base layer and one unique layer of pseudo-random (incompressible) data
(--layers K: K unique layers, for benchmarks counting blobs).

Everything is a pure function of the options: tar entries sorted, mtime 0,
uid/gid 0, gzip header mtime 0 and no file name, JSON with sorted keys.
Python 3 standard library only.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import random
import shutil
import sys
import tarfile

MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_INDEX = "application/vnd.oci.image.index.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
REF_NAME = "org.opencontainers.image.ref.name"

# Realistic component names first; comp-NNN after these run out.
COMPONENT_NAMES = [
    "cluster-version-operator", "etcd", "hyperkube", "oauth-server",
    "console", "cluster-network-operator", "machine-config-operator",
    "cluster-kube-apiserver-operator", "cluster-dns-operator",
    "cluster-ingress-operator", "cluster-monitoring-operator",
    "cluster-image-registry-operator", "cluster-authentication-operator",
    "cluster-storage-operator", "coredns", "haproxy-router", "multus-cni",
    "ovn-kubernetes", "prometheus", "kube-rbac-proxy",
]


def component_names(n):
    names = COMPONENT_NAMES[:n]
    for i in range(len(names), n):
        names.append("comp-%03d" % i)
    return names


def canonical_json(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


class Layout:
    """Writes content-addressed blobs and remembers index entries."""

    def __init__(self, out):
        self.out = out
        self.blobdir = os.path.join(out, "blobs", "sha256")
        os.makedirs(self.blobdir, exist_ok=True)
        self.entries = []

    def put(self, data):
        hexd = hashlib.sha256(data).hexdigest()
        path = os.path.join(self.blobdir, hexd)
        if not os.path.exists(path):
            tmp = path + ".tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        return "sha256:" + hexd

    def finish(self):
        with open(os.path.join(self.out, "oci-layout"), "wb") as f:
            f.write(canonical_json({"imageLayoutVersion": "1.0.0"}))
        index = {"schemaVersion": 2, "mediaType": MT_INDEX,
                 "manifests": self.entries}
        with open(os.path.join(self.out, "index.json"), "wb") as f:
            f.write(canonical_json(index))


def tar_bytes(files):
    """files: list of (name, bytes or None for a directory). Sorted by name."""
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, data in sorted(files, key=lambda x: x[0]):
            ti = tarfile.TarInfo(name)
            ti.mtime = 0
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = ""
            if data is None:
                ti.type = tarfile.DIRTYPE
                ti.mode = 0o755
                tf.addfile(ti)
            else:
                ti.mode = 0o644
                ti.size = len(data)
                tf.addfile(ti, io.BytesIO(data))
    return bio.getvalue()


def gzip_bytes(data, level):
    bio = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=bio, mtime=0,
                       compresslevel=level) as gz:
        gz.write(data)
    return bio.getvalue()


def pseudo_random(seed_text, size):
    rng = random.Random(hashlib.sha256(seed_text.encode()).digest())
    return rng.randbytes(size)


class Image:
    def __init__(self, layout, level):
        self.layout = layout
        self.level = level

    def layer(self, files):
        raw = tar_bytes(files)
        gz = gzip_bytes(raw, self.level)
        diff_id = "sha256:" + hashlib.sha256(raw).hexdigest()
        digest = self.layout.put(gz)
        return {"mediaType": MT_LAYER, "digest": digest, "size": len(gz)}, diff_id

    def image(self, layers, labels):
        config = {
            "architecture": "amd64",
            "os": "linux",
            "created": "1970-01-01T00:00:00Z",
            "config": {"Labels": labels, "Env": ["PATH=/usr/bin:/bin"]},
            "rootfs": {"type": "layers", "diff_ids": [l[1] for l in layers]},
            "history": [{"created": "1970-01-01T00:00:00Z",
                         "created_by": "mkrelease.py"} for _ in layers],
        }
        cfg = canonical_json(config)
        cdigest = self.layout.put(cfg)
        manifest = {
            "schemaVersion": 2,
            "mediaType": MT_MANIFEST,
            "config": {"mediaType": MT_CONFIG, "digest": cdigest,
                       "size": len(cfg)},
            "layers": [l[0] for l in layers],
        }
        mbytes = canonical_json(manifest)
        return self.layout.put(mbytes), len(mbytes)


def default_manifests(names):
    out = []
    for i, comp in enumerate(names):
        body = ("apiVersion: config.openshift.io/v1\n"
                "kind: ClusterOperator\n"
                "metadata:\n"
                "  name: %s\n"
                "spec: {}\n"
                "status:\n"
                "  versions:\n"
                "  - name: operator\n"
                "    version: \"0.0.1-snapshot\"\n" % comp)
        out.append(("0000_50_%s_%02d_clusteroperator.yaml" % (comp, i),
                    body.encode()))
    return out


def read_manifests(d):
    out = []
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if os.path.isfile(p) and not name.startswith("."):
            with open(p, "rb") as f:
                out.append((name, f.read()))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="layout directory to write")
    ap.add_argument("--version", default="4.14.1")
    ap.add_argument("--previous", action="append", default=[],
                    help="previous version for release-metadata (repeatable)")
    ap.add_argument("--prefix", default="quay.io/airlock-samples",
                    help="registry/namespace of every image")
    ap.add_argument("--components", type=int, default=5)
    ap.add_argument("--layer-size", type=int, default=4096,
                    help="bytes of unique data per component layer")
    ap.add_argument("--layers", type=int, default=1,
                    help="unique layers per component (each --layer-size bytes)")
    ap.add_argument("--base-size", type=int, default=8192,
                    help="bytes of the base layer shared by every image")
    ap.add_argument("--manifests", help="directory copied into release-manifests/")
    ap.add_argument("--cvo-manifests",
                    help="directory copied into manifests/ (the CVO's own)")
    ap.add_argument("--multi-repo", action="store_true",
                    help="put two components into <prefix>/other")
    ap.add_argument("--seed", default="airlock")
    ap.add_argument("--gzip-level", type=int, default=6, choices=range(0, 10))
    ap.add_argument("--force", action="store_true",
                    help="replace --out if it exists")
    a = ap.parse_args(argv)

    if a.components < 1 or a.layers < 1 or a.layer_size < 0 or a.base_size < 0:
        ap.error("--components and --layers must be >= 1 and sizes >= 0")
    if os.path.exists(a.out):
        if not a.force and os.listdir(a.out):
            ap.error("'%s' exists and is not empty (use --force)" % a.out)
        shutil.rmtree(a.out)
    os.makedirs(a.out)

    layout = Layout(a.out)
    img = Image(layout, a.gzip_level)
    prefix = a.prefix.rstrip("/")
    names = component_names(a.components)

    base = img.layer([
        ("etc", None),
        ("etc/os-release", b"NAME=\"airlock synthetic base\"\nID=airlock\n"),
        ("usr", None),
        ("usr/lib", None),
        ("usr/lib/base.bin", pseudo_random(a.seed + "/base", a.base_size)),
    ])

    tags = []
    comp_entries = []
    for i, comp in enumerate(names):
        repo = prefix + "/ocp-v4.0-art-dev"
        if a.multi_repo and i >= max(1, len(names) - 2):
            repo = prefix + "/other"
        layers = [base]
        for k in range(a.layers):
            # the first layer's name and content are those of the
            # one-layer form, so --layers 1 writes the same bytes as before
            name = comp if k == 0 else "%s.%d" % (comp, k)
            seed = "%s/%s/%d" % (a.seed, comp, i)
            if k:
                seed += "/%d" % k
            layers.append(img.layer([
                ("usr", None),
                ("usr/bin", None),
                ("usr/bin/" + name, pseudo_random(seed, a.layer_size)),
            ]))
        digest, size = img.image(layers, {
            "io.openshift.build.commit.id":
                hashlib.sha1(("%s/%s" % (a.seed, comp)).encode()).hexdigest(),
            "io.openshift.release.operator": "true",
        })
        ref = "%s@%s" % (repo, digest)
        comp_entries.append({"mediaType": MT_MANIFEST, "digest": digest,
                             "size": size, "annotations": {REF_NAME: ref}})
        tags.append({
            "name": comp,
            "annotations": {"io.openshift.build.commit.id":
                            hashlib.sha1(("%s/%s" % (a.seed, comp)).encode()).hexdigest()},
            "from": {"kind": "DockerImage", "name": ref},
            "generation": None,
            "importPolicy": {},
            "referencePolicy": {"type": "Source"},
        })

    image_references = {
        "kind": "ImageStream",
        "apiVersion": "image.openshift.io/v1",
        "metadata": {
            "name": a.version,
            "creationTimestamp": None,
            "annotations": {"release.openshift.io/from-image-stream":
                            "ocp/" + a.version},
        },
        "spec": {"lookupPolicy": {"local": False}, "tags": tags},
        "status": {"dockerImageRepository": ""},
    }
    release_metadata = {
        "kind": "cincinnati-metadata-v0",
        "version": a.version,
        "previous": sorted(a.previous),
        "metadata": {
            "description": "airlock synthetic release %s" % a.version,
            "url": "https://example.invalid/airlock/releases/%s" % a.version,
        },
    }
    manifests = read_manifests(a.manifests) if a.manifests else default_manifests(names)
    files = [("release-manifests", None),
             ("release-manifests/image-references",
              (json.dumps(image_references, indent=2) + "\n").encode()),
             ("release-manifests/release-metadata",
              (json.dumps(release_metadata, indent=2) + "\n").encode())]
    for name, data in manifests:
        files.append(("release-manifests/" + name, data))
    if a.cvo_manifests:
        files.append(("manifests", None))
        for name, data in read_manifests(a.cvo_manifests):
            files.append(("manifests/" + name, data))
    payload = img.layer(files)
    rdigest, rsize = img.image([base, payload], {
        "io.openshift.release": a.version,
        "io.openshift.release.base-image-digest": comp_entries[0]["digest"],
    })
    release_ref = "%s/release:%s-x86_64" % (prefix, a.version)
    layout.entries.append({"mediaType": MT_MANIFEST, "digest": rdigest,
                           "size": rsize,
                           "annotations": {REF_NAME: release_ref}})
    layout.entries.extend(sorted(comp_entries,
                                 key=lambda e: e["annotations"][REF_NAME]))
    layout.finish()
    print("%s %s" % (release_ref, rdigest))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
