#!/usr/bin/env python3
"""cimage_cosign_store.py: build an OCI layout (an airlock store) from the
containers/image cosign fixtures: each fixture's manifest.json as the image
"<identity>:latest" and its signature as the cosign tag-scheme image
"<identity>:sha256-<hex>.sig" (a simple-signing layer with the signature's
annotations), so `airlock verify-image --store` reads real cosign output.

usage: cimage_cosign_store.py FIXTURES OUTDIR DIR...
"""
import base64
import hashlib
import json
import os
import sys

MAGIC = b"\x00sigstore-json\n"


def blob(out, data):
    h = hashlib.sha256(data).hexdigest()
    os.makedirs(f"{out}/blobs/sha256", exist_ok=True)
    with open(f"{out}/blobs/sha256/{h}", "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + h, "size": len(data)}


def main():
    src, out, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    with open(f"{out}/oci-layout", "w") as f:
        f.write('{"imageLayoutVersion":"1.0.0"}')
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
             "manifests": []}
    for d in dirs:
        raw = open(f"{src}/{d}/signature-1", "rb").read()
        j = json.loads(raw[len(MAGIC):])
        payload = base64.b64decode(j["payload"])
        ident = json.loads(payload)["critical"]["identity"]["docker-reference"]
        man = open(f"{src}/{d}/manifest.json", "rb").read()
        mt = json.loads(man).get("mediaType", "application/vnd.docker.distribution.manifest.v2+json")
        m = blob(out, man)
        index["manifests"].append(dict(m, mediaType=mt, annotations={
            "org.opencontainers.image.ref.name": ident + ":latest"}))
        layer = blob(out, payload)
        layer["mediaType"] = j["mimeType"]
        layer["annotations"] = j.get("annotations", {})
        cfg = blob(out, b"{}")
        cfg["mediaType"] = "application/vnd.oci.image.config.v1+json"
        sig = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                          "config": cfg, "layers": [layer]}).encode()
        s = blob(out, sig)
        index["manifests"].append(dict(s, mediaType="application/vnd.oci.image.manifest.v1+json",
                                       annotations={"org.opencontainers.image.ref.name":
                                                    ident + ":" + m["digest"].replace(":", "-") + ".sig"}))
        print(ident, m["digest"])
    with open(f"{out}/index.json", "w") as f:
        json.dump(index, f)


if __name__ == "__main__":
    main()
