#!/usr/bin/env python3
"""mkimage.py: an OCI image layout holding one image of one layer.

usage: mkimage.py OUT NAME SIZE [SEED]

The layer is SIZE pseudo-random bytes from SEED (default "airlock"), the
same bytes on every run; the image is named NAME in OUT/index.json
(org.opencontainers.image.ref.name). Any OCI layout opens as a store.
"""
import hashlib
import json
import os
import random
import sys

out, name, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
seed = sys.argv[4] if len(sys.argv) > 4 else "airlock"
os.makedirs(out + "/blobs/sha256")


def put(data):
    h = hashlib.sha256(data).hexdigest()
    with open(out + "/blobs/sha256/" + h, "wb") as f:
        f.write(data)
    return "sha256:" + h


layer = random.Random(seed).randbytes(size)
cfg = json.dumps({"architecture": "amd64", "os": "linux",
                  "rootfs": {"type": "layers", "diff_ids": ["sha256:" + "0" * 64]}}).encode()
m = json.dumps({"schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                           "digest": put(cfg), "size": len(cfg)},
                "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                            "digest": put(layer), "size": len(layer)}]}).encode()
with open(out + "/index.json", "w") as f:
    json.dump({"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": put(m), "size": len(m),
        "annotations": {"org.opencontainers.image.ref.name": name}}]}, f)
with open(out + "/oci-layout", "w") as f:
    f.write('{"imageLayoutVersion": "1.0.0"}')
