#!/usr/bin/env python3
"""cosign_push.py: push test images and their sigstore signatures to a
loopback registry over the distribution API, in the forms cosign and OCI 1.1
use: a "sha256-<hex>.sig" image whose simple-signing layer carries the
dev.cosignproject.cosign/signature annotation, and referrers (a sigstore
bundle artifact with a subject) listed in the "sha256-<hex>" referrers tag
(docker-registry 2.8 has no referrers API). Signatures are made with the
openssl tool.

usage:
  cosign_push.py image REG REPO TAG           -> prints the manifest digest
  cosign_push.py sig REG REPO DIGEST KEY REF   cosign tag-scheme signature
  cosign_push.py referrers REG REPO DIGEST KEY REF [BUNDLE...]
        a key-based DSSE bundle made here, the BUNDLE files given (sigstore
        bundles made elsewhere), and a referrer whose subject is another
        image, all listed in the referrers tag
  cosign_push.py cosign-referrer REG REPO DIGEST BUNDLE [PREDICATE]
        BUNDLE (a sigstore bundle v0.3) as cosign v3 (and v2.6 with
        --new-bundle-format) attaches it: cosign pkg/oci/remote/write.go
        WriteAttestationNewBundleFormat / WriteReferrer, and its descriptor
        added to the "sha256-<hex>" referrers tag index the way a client
        updates the tag schema (distribution-spec 1.1 "Pushing Manifests
        with Subject"), keeping what the index listed before, unless the
        registry answered the manifest's PUT with OCI-Subject (it has the
        referrers API: go-containerregistry remote.Write, which cosign
        uses, then leaves the tag alone); prints the referrer's digest

AL_PUSH_TOKEN in the environment: sent as "Authorization: Bearer TOKEN"
(airlock serve --allow-push --token-file). SOURCE_DATE_EPOCH: the
cosign-referrer's org.opencontainers.image.created.
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
SIMPLESIGNING = "application/vnd.dev.cosign.simplesigning.v1+json"
BUNDLE_V03 = "application/vnd.dev.sigstore.bundle.v0.3+json"
EMPTY = "application/vnd.oci.empty.v1+json"


def req(method, url, data=None, headers=None):
    headers = dict(headers or {})
    if os.environ.get("AL_PUSH_TOKEN"):
        headers["Authorization"] = "Bearer " + os.environ["AL_PUSH_TOKEN"]
    r = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(r, timeout=30) as resp:
        return resp.status, dict(resp.headers), resp.read()


def digest(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


def put_blob(reg, repo, b):
    d = digest(b)
    _, h, _ = req("POST", f"http://{reg}/v2/{repo}/blobs/uploads/")
    loc = h["Location"]
    if loc.startswith("/"):
        loc = f"http://{reg}{loc}"
    sep = "&" if "?" in loc else "?"
    req("PUT", f"{loc}{sep}digest={d}", b, {"Content-Type": "application/octet-stream"})
    return {"mediaType": "", "digest": d, "size": len(b)}


def put_manifest(reg, repo, ref, m, mt):
    b = json.dumps(m, separators=(",", ":")).encode()
    req("PUT", f"http://{reg}/v2/{repo}/manifests/{ref}", b, {"Content-Type": mt})
    return digest(b), len(b)


def sign(key, data):
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        return subprocess.run(["openssl", "dgst", "-sha256", "-sign", key, f.name],
                              check=True, capture_output=True).stdout


def payload(dig, ref):
    return json.dumps({"critical": {"identity": {"docker-reference": ref},
                                    "image": {"docker-manifest-digest": dig},
                                    "type": "cosign container image signature"},
                       "optional": None}, separators=(",", ":")).encode()


def empty_config(reg, repo):
    c = put_blob(reg, repo, b"{}")
    c["mediaType"] = EMPTY
    return c


def cmd_image(reg, repo, tag):
    cfg = json.dumps({"architecture": "amd64", "os": "linux",
                      "rootfs": {"type": "layers", "diff_ids": []}}).encode()
    c = put_blob(reg, repo, cfg)
    c["mediaType"] = "application/vnd.oci.image.config.v1+json"
    layer = put_blob(reg, repo, (repo + ":" + tag + " layer").encode())
    layer["mediaType"] = "application/vnd.oci.image.layer.v1.tar"
    d, _ = put_manifest(reg, repo, tag, {"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                                         "config": c, "layers": [layer]}, OCI_MANIFEST)
    print(d)


def cmd_sig(reg, repo, dig, key, ref):
    p = payload(dig, ref)
    layer = put_blob(reg, repo, p)
    layer["mediaType"] = SIMPLESIGNING
    layer["annotations"] = {"dev.cosignproject.cosign/signature":
                            base64.b64encode(sign(key, p)).decode()}
    cfg = put_blob(reg, repo, b'{"architecture":"","os":"","rootfs":{"type":"layers","diff_ids":[]}}')
    cfg["mediaType"] = "application/vnd.oci.image.config.v1+json"
    tag = dig.replace(":", "-") + ".sig"
    d, _ = put_manifest(reg, repo, tag, {"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                                         "config": cfg, "layers": [layer]}, OCI_MANIFEST)
    print(d)


def key_bundle(key, dig, ref):
    p = payload(dig, ref)
    pae = b"DSSEv1 %d %s %d %s" % (len(SIMPLESIGNING), SIMPLESIGNING.encode(), len(p), p)
    return json.dumps({"mediaType": BUNDLE_V03,
                       "verificationMaterial": {"publicKey": {"hint": "test"}, "tlogEntries": []},
                       "dsseEnvelope": {"payload": base64.b64encode(p).decode(),
                                        "payloadType": SIMPLESIGNING,
                                        "signatures": [{"sig": base64.b64encode(sign(key, pae)).decode(),
                                                        "keyid": ""}]}}).encode()


def referrer(reg, repo, subject, bundle):
    layer = put_blob(reg, repo, bundle)
    layer["mediaType"] = BUNDLE_V03
    m = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "artifactType": BUNDLE_V03,
         "config": empty_config(reg, repo), "layers": [layer], "subject": subject}
    d, n = put_manifest(reg, repo, "tmp-referrer", m, OCI_MANIFEST)
    return {"mediaType": OCI_MANIFEST, "digest": d, "size": n, "artifactType": BUNDLE_V03}


def cmd_referrers(reg, repo, dig, key, ref, bundles):
    _, _, body = req("GET", f"http://{reg}/v2/{repo}/manifests/{dig}",
                     headers={"Accept": OCI_MANIFEST})
    subject = {"mediaType": OCI_MANIFEST, "digest": dig, "size": len(body)}
    entries = [referrer(reg, repo, subject, key_bundle(key, dig, ref))]
    for f in bundles:
        with open(f, "rb") as fh:
            entries.append(referrer(reg, repo, subject, fh.read()))
    # a referrer listed for this image whose subject is another image
    other = dict(subject, digest="sha256:" + "0" * 64)
    entries.append(referrer(reg, repo, other, key_bundle(key, dig, ref)))
    put_manifest(reg, repo, dig.replace(":", "-"),
                 {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries}, OCI_INDEX)
    for e in entries:
        print(e["digest"])


def go_json(v):
    """Go encoding/json: no spaces, map keys sorted (structs keep their
    field order, which the dicts below are written in)."""
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()


def cmd_cosign_referrer(reg, repo, dig, bundle_file, predicate="https://sigstore.dev/cosign/sign/v1"):
    import datetime
    with open(bundle_file, "rb") as fh:
        bundle = fh.read()
    _, h, _ = req("HEAD", f"http://{reg}/v2/{repo}/manifests/{dig}",
                  headers={"Accept": OCI_MANIFEST + "," + OCI_INDEX})
    h = {k.lower(): v for k, v in h.items()}
    subject = {"mediaType": h["content-type"].split(";")[0].strip(),
               "size": int(h["content-length"]), "digest": dig}
    cfg = put_blob(reg, repo, b"{}")
    layer = put_blob(reg, repo, bundle)
    # SOURCE_DATE_EPOCH: a fixed creation time, so that two pushes of the
    # same bundle make the same referrer manifest
    when = os.environ.get("SOURCE_DATE_EPOCH")
    now = (datetime.datetime.fromtimestamp(int(when), datetime.timezone.utc) if when
           else datetime.datetime.now(datetime.timezone.utc))
    created = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    ann = {"dev.sigstore.bundle.content": "dsse-envelope",
           "dev.sigstore.bundle.predicateType": predicate,
           "org.opencontainers.image.created": created}
    # v1.Manifest fields in order, then referrerManifest.ArtifactType; the
    # config descriptor carries the artifactType too (WriteReferrer sets it)
    m = {"schemaVersion": 2, "mediaType": OCI_MANIFEST,
         "config": {"mediaType": EMPTY, "size": cfg["size"], "digest": cfg["digest"],
                    "artifactType": BUNDLE_V03},
         "layers": [{"mediaType": BUNDLE_V03, "size": layer["size"], "digest": layer["digest"]}],
         "annotations": dict(sorted(ann.items())),
         "subject": subject,
         "artifactType": BUNDLE_V03}
    body = go_json(m)
    d = digest(body)
    _, h, _ = req("PUT", f"http://{reg}/v2/{repo}/manifests/{d}", body, {"Content-Type": OCI_MANIFEST})
    if {k.lower(): v for k, v in h.items()}.get("oci-subject") == dig:
        print(d)
        return
    tag = dig.replace(":", "-")
    try:
        _, _, old = req("GET", f"http://{reg}/v2/{repo}/manifests/{tag}", headers={"Accept": OCI_INDEX})
        idx = json.loads(old)
    except urllib.error.HTTPError as e:
        if e.code != 404:
            raise
        idx = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": []}
    idx["manifests"].append({"mediaType": OCI_MANIFEST, "size": len(body), "digest": d,
                             "annotations": m["annotations"], "artifactType": BUNDLE_V03})
    req("PUT", f"http://{reg}/v2/{repo}/manifests/{tag}", go_json(idx), {"Content-Type": OCI_INDEX})
    print(d)


def main():
    a = sys.argv[1:]
    if a and a[0] == "image" and len(a) == 4:
        cmd_image(*a[1:])
    elif a and a[0] == "sig" and len(a) == 6:
        cmd_sig(*a[1:])
    elif a and a[0] == "cosign-referrer" and len(a) in (5, 6):
        cmd_cosign_referrer(*a[1:])
    elif a and a[0] == "referrers" and len(a) >= 6:
        cmd_referrers(*a[1:6], a[6:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
