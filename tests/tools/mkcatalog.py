#!/usr/bin/env python3
"""mkcatalog.py: write an operator catalog image in the real file-based
catalog (FBC) format into an OCI image layout, for airlock's tests.

The image has three layers, as a catalog built FROM an opm base image:
  1. base: etc/, bin/opm (a placeholder text file, never run), and an
     opm serving cache under tmp/cache/ (as `opm serve --cache-only`
     leaves it);
  2. configs/<package>/catalog.json (or .yaml) for every package, plus
     configs/stale/catalog.json and configs/.indexignore;
  3. an update: configs/.wh.stale (the stale package is deleted) and a
     changed configs/gamma/catalog.yaml.
Its config carries the label operators.operatorframework.io.index.configs.v1
=/configs and the command `opm serve /configs --cache-dir=/tmp/cache`.

Packages (versions, channels and edges are what the tests assert on):
  alpha  stable: 1.0.0 <- 1.1.0 <- 1.2.0 <- 1.3.0 (replaces);
                 1.1.1 replaces 1.1.0, skipped by 1.2.0;
                 1.3.0 skipRange ">=1.0.0 <1.3.0"
         fast:   1.3.0 <- 2.0.0-rc.1
         alpha 1.3.0 requires package beta ">=1.0.0 <2.0.0"
  beta   stable: 1.0.0 <- 1.1.0 <- 2.0.0; 1.x provide example.com/v1 Widget,
                 2.0.0 example.com/v2 Widget
  gamma  (YAML) stable: 0.1.0 <- 0.2.0; 0.2.0 requires API example.com/v2
         Widget; deprecations: channel stable's 0.1.0 bundle
  big    with --bundles N: N bundles 1.<m>.<p> in channel stable (replaces
         chain, every x.y.0 has skipRange ">=1.<y-1>.0 <1.<y>.0", every 7th
         skips its predecessor's predecessor), 3 related images each

  --update adds a fourth layer, a catalog update: alpha 1.4.0 (replaces
  1.3.0, skipRange ">=1.0.0 <1.4.0") at the head of stable.

  --images also writes, into LAYOUT, a tiny real image for every bundle
  and related image (one small layer each), tagged with its repository and
  a tag, and the catalog names them by their real digests: the catalog's
  images can then be mirrored from the layout (airlock.sources).
  --tag-refs names every bundle and related image by tag instead.
  --image-size N gives every non-bundle image N more bytes of
  incompressible data (gzip level 1), for benchmarks.

  --opaque makes the third layer an opaque whiteout of configs/ (only its
  own gamma stays); --symlink adds configs/link -> alpha/catalog.json.

  --extra FILE adds FILE (an FBC JSON stream, written by the test: hostile
  names, say) as configs/extra/catalog.json.

  --bundle-objects FILE gives every bundle of package big the
  olm.bundle.object properties (the bundle's manifests, base64) of the first
  bundle in FILE, a real catalog.json (tests/data/catalogs/): the size a
  bundle has in Red Hat's operator index, for memory benchmarks.

  --index tags an OCI image index of two platform images (linux/amd64,
  linux/arm64: same layers, own configs) plus an attestation entry
  (platform unknown/unknown), as multi-arch catalogs are published.

Usage: mkcatalog.py LAYOUT NAME [--bundles N] [--sqlite] [--docker] [--update] [--images]
                    [--opaque] [--symlink] [--index] [--bundle-objects FILE]
  LAYOUT  an OCI image layout directory (created if missing)
  NAME    the org.opencontainers.image.ref.name to tag
  --sqlite  write a pre-4.11 SQLite-style catalog (database label) instead
  --docker  use Docker schema2 media types for manifest, config and layers
Prints the manifest digest.
"""
import gzip
import hashlib
import io
import json
import os
import random
import sys
import tarfile

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
D_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
D_CONFIG = "application/vnd.docker.container.image.v1+json"
D_LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip"
LABEL = "operators.operatorframework.io.index.configs.v1"
DB_LABEL = "operators.operatorframework.io.index.database.v1"


def digest_of(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


# --images: the layout to write real images into, and the index entries
IMAGES = {"layout": None, "entries": {}, "size": 0}


def fake_digest(s):
    return "sha256:" + hashlib.sha256(s.encode()).hexdigest()


def image_ref(repo, seed):
    """repo@digest: a fake digest, or with --images a real tiny image;
    repo:tag with --tag-refs."""
    if IMAGES.get("tags"):
        return "%s:v-%s" % (repo, hashlib.sha256(seed.encode()).hexdigest()[:8])
    if IMAGES["layout"] is None:
        return "%s@%s" % (repo, fake_digest(seed))
    layout = IMAGES["layout"]
    files = [("content", None), ("content/id", seed.encode() + b"\n")]
    if IMAGES["size"] and "-bundle" not in repo:
        # operand-sized data, incompressible, reproducible from the seed
        files.append(("content/data", random.Random(seed).randbytes(IMAGES["size"])))
    tar, gz = make_tar(files, level=1 if IMAGES["size"] else 9)
    ld = put_blob(layout, gz)
    cfg = json.dumps({"architecture": "amd64", "os": "linux",
                      "rootfs": {"type": "layers", "diff_ids": [digest_of(tar)]}},
                     sort_keys=True).encode()
    cd = put_blob(layout, cfg)
    man = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                      "config": {"mediaType": OCI_CONFIG, "digest": cd, "size": len(cfg)},
                      "layers": [{"mediaType": OCI_LAYER, "digest": ld, "size": len(gz)}]},
                     sort_keys=True).encode()
    md = put_blob(layout, man)
    tag = "t" + hashlib.sha256(seed.encode()).hexdigest()[:12]
    IMAGES["entries"]["%s:%s" % (repo, tag)] = (md, len(man))
    return "%s@%s" % (repo, md)


def bundle(pkg, ver, props=(), related=None):
    name = "%s.v%s" % (pkg, ver)
    image = image_ref("quay.io/example/%s-bundle" % pkg, name)
    ri = [{"name": "", "image": image},
          {"name": "operator",
           "image": image_ref("quay.io/example/%s-operator" % pkg, name + "op")}]
    if related:
        ri.extend(related)
    return {
        "schema": "olm.bundle", "name": name, "package": pkg, "image": image,
        "properties": [{"type": "olm.package",
                        "value": {"packageName": pkg, "version": ver}}] + list(props),
        "relatedImages": ri,
    }


def gvk(v, kind="Widget", req=False):
    return {"type": "olm.gvk.required" if req else "olm.gvk",
            "value": {"group": "example.com", "version": v, "kind": kind}}


def pkgreq(p, r):
    return {"type": "olm.package.required",
            "value": {"packageName": p, "versionRange": r}}


def shared():
    return {"name": "kube-rbac-proxy",
            "image": image_ref("quay.io/example/openshift4/kube-rbac-proxy", "krp")}


def alpha(update=False):
    objs = [
        {"schema": "olm.package", "name": "alpha", "defaultChannel": "stable",
         "description": "alpha operator"},
        {"schema": "olm.channel", "package": "alpha", "name": "stable", "entries": [
            {"name": "alpha.v1.0.0"},
            {"name": "alpha.v1.1.0", "replaces": "alpha.v1.0.0"},
            {"name": "alpha.v1.1.1", "replaces": "alpha.v1.1.0"},
            {"name": "alpha.v1.2.0", "replaces": "alpha.v1.1.0", "skips": ["alpha.v1.1.1"]},
            {"name": "alpha.v1.3.0", "replaces": "alpha.v1.2.0", "skipRange": ">=1.0.0 <1.3.0"},
        ]},
        {"schema": "olm.channel", "package": "alpha", "name": "fast", "entries": [
            {"name": "alpha.v1.3.0"},
            {"name": "alpha.v2.0.0-rc.1", "replaces": "alpha.v1.3.0"},
        ]},
        bundle("alpha", "1.0.0", related=[shared()]),
        bundle("alpha", "1.1.0", related=[shared()]),
        bundle("alpha", "1.1.1", related=[shared()]),
        bundle("alpha", "1.2.0", related=[shared()]),
        bundle("alpha", "1.3.0", [pkgreq("beta", ">=1.0.0 <2.0.0")], related=[shared()]),
        bundle("alpha", "2.0.0-rc.1"),
    ]
    if update:
        objs[1]["entries"].append({"name": "alpha.v1.4.0", "replaces": "alpha.v1.3.0",
                                   "skipRange": ">=1.0.0 <1.4.0"})
        objs.append(bundle("alpha", "1.4.0", [pkgreq("beta", ">=1.0.0 <2.0.0")],
                           related=[shared()]))
    return objs


def beta():
    return [
        {"schema": "olm.package", "name": "beta", "defaultChannel": "stable"},
        {"schema": "olm.channel", "package": "beta", "name": "stable", "entries": [
            {"name": "beta.v1.0.0"},
            {"name": "beta.v1.1.0", "replaces": "beta.v1.0.0"},
            {"name": "beta.v2.0.0", "replaces": "beta.v1.1.0"},
        ]},
        bundle("beta", "1.0.0", [gvk("v1")]),
        bundle("beta", "1.1.0", [gvk("v1")]),
        bundle("beta", "2.0.0", [gvk("v2")]),
    ]


def gamma(version):
    entries = [{"name": "gamma.v0.1.0"}, {"name": "gamma.v0.2.0", "replaces": "gamma.v0.1.0"}]
    objs = [
        {"schema": "olm.package", "name": "gamma", "defaultChannel": "stable"},
        {"schema": "olm.channel", "package": "gamma", "name": "stable",
         "entries": entries[:version]},
        bundle("gamma", "0.1.0"),
    ]
    if version > 1:
        objs.append(bundle("gamma", "0.2.0", [gvk("v2", req=True)]))
    objs.append({"schema": "olm.deprecations", "package": "gamma", "entries": [
        {"reference": {"schema": "olm.bundle", "name": "gamma.v0.1.0"},
         "message": "gamma 0.1.0 is deprecated"}]})
    return objs


def stale():
    return [
        {"schema": "olm.package", "name": "stale", "defaultChannel": "stable"},
        {"schema": "olm.channel", "package": "stale", "name": "stable",
         "entries": [{"name": "stale.v1.0.0"}]},
        bundle("stale", "1.0.0"),
    ]


def big(n, extra_props=()):
    objs = [{"schema": "olm.package", "name": "big", "defaultChannel": "stable"}]
    entries, bundles, prev = [], [], []
    for i in range(n):
        minor, patch = divmod(i, 10)
        ver = "1.%d.%d" % (minor, patch)
        name = "big.v" + ver
        e = {"name": name}
        if prev:
            e["replaces"] = prev[-1]
        if patch == 0 and minor > 0:
            e["skipRange"] = ">=1.%d.0 <1.%d.0" % (minor - 1, minor)
        if i % 7 == 6 and len(prev) >= 2:
            e["skips"] = [prev[-2]]
        entries.append(e)
        rel = [{"name": "operand-%d" % k,
                "image": image_ref("quay.io/example/big-operand-%d" % k, name + str(k))}
               for k in range(3)]
        bundles.append(bundle("big", ver, [gvk("v1", "Big")] + list(extra_props),
                              related=rel))
        prev.append(name)
    # an entry skipped by a later one must not also be replaced by it
    for e in entries:
        if "skips" in e and e["skips"][0] == e.get("replaces"):
            del e["skips"]
    objs.append({"schema": "olm.channel", "package": "big", "name": "stable",
                 "entries": entries})
    return objs + bundles


def real_bundle_objects(path):
    """The olm.bundle.object properties of the first bundle of an FBC JSON
    stream (several objects a file, as opm render writes it)."""
    with open(path) as f:
        text = f.read()
    dec, i = json.JSONDecoder(), 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            break
        o, i = dec.raw_decode(text, i)
        if o.get("schema") == "olm.bundle":
            props = [p for p in o.get("properties", []) if p.get("type") == "olm.bundle.object"]
            if props:
                return props
    raise SystemExit("mkcatalog: no bundle with olm.bundle.object properties in " + path)


def json_stream(objs):
    return "".join(json.dumps(o, indent=4) + "\n" for o in objs).encode()


def yaml_scalar(v):
    if isinstance(v, str):
        return json.dumps(v)  # JSON strings are valid YAML flow scalars
    return json.dumps(v)


def yaml_docs(objs):
    # JSON is a subset of YAML; emit each object as one flow document
    out = io.StringIO()
    for o in objs:
        out.write("---\n")
        out.write(json.dumps(o, indent=2))
        out.write("\n")
    return out.getvalue().encode()


def make_tar(files, level=9):
    """files: list of (path, bytes, None for a directory, or ("link", target))."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
        for path, data in files:
            ti = tarfile.TarInfo(path)
            ti.mtime = 0
            ti.uid = ti.gid = 0
            if data is None:
                ti.type = tarfile.DIRTYPE
                ti.mode = 0o755
                t.addfile(ti)
            elif isinstance(data, tuple):
                ti.type = tarfile.SYMTYPE
                ti.linkname = data[1]
                t.addfile(ti)
            else:
                ti.mode = 0o644
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
    tar = raw.getvalue()
    gz = io.BytesIO()
    with gzip.GzipFile(fileobj=gz, mode="wb", mtime=0, compresslevel=level) as g:
        g.write(tar)
    return tar, gz.getvalue()


def put_blob(layout, data):
    d = digest_of(data)
    p = os.path.join(layout, "blobs", "sha256", d.split(":")[1])
    if not os.path.exists(p):
        with open(p + ".tmp", "wb") as f:
            f.write(data)
        os.rename(p + ".tmp", p)
    return d


def main(argv):
    args = [a for i, a in enumerate(argv[1:], 1)
            if not a.startswith("--") and argv[i - 1] not in ("--bundle-objects", "--extra")]
    if len(args) < 2:
        sys.stderr.write(__doc__)
        return 2
    layout, name = args[0], args[1]
    nbig = 0
    if "--bundles" in argv:
        nbig = int(argv[argv.index("--bundles") + 1])
        args = [a for a in args if a != str(nbig)]
    sqlite = "--sqlite" in argv
    docker = "--docker" in argv
    update = "--update" in argv
    os.makedirs(os.path.join(layout, "blobs", "sha256"), exist_ok=True)
    if "--images" in argv:
        IMAGES["layout"] = layout
    IMAGES["tags"] = "--tag-refs" in argv
    if "--image-size" in argv:
        IMAGES["size"] = int(argv[argv.index("--image-size") + 1])
    if not os.path.exists(os.path.join(layout, "oci-layout")):
        with open(os.path.join(layout, "oci-layout"), "w") as f:
            f.write('{"imageLayoutVersion":"1.0.0"}')
    base = [("etc", None), ("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n"),
            ("bin", None), ("bin/opm", b"placeholder: never executed\n"),
            ("tmp", None), ("tmp/cache", None),
            ("tmp/cache/digest", b"0123456789abcdef\n"),
            ("tmp/cache/pogreb.v1", None),
            ("tmp/cache/pogreb.v1/db", b"stale cache\n")]
    layers = [base]
    if sqlite:
        layers.append([("database", None), ("database/index.db", b"SQLite format 3\0")])
        labels = {DB_LABEL: "/database/index.db"}
        cmd = ["registry", "serve", "--database", "/database/index.db"]
    else:
        l2 = [("configs", None),
              ("configs/.indexignore", b"# not catalog content\nREADME*\n"),
              ("configs/README.md", b"this: is: not: yaml\n")]
        pk = [("alpha", json_stream(alpha())), ("beta", json_stream(beta())),
              ("stale", json_stream(stale()))]
        if nbig:
            extra = ()
            if "--bundle-objects" in argv:
                extra = real_bundle_objects(argv[argv.index("--bundle-objects") + 1])
            pk.append(("big", json_stream(big(nbig, extra))))
        if "--extra" in argv:
            with open(argv[argv.index("--extra") + 1], "rb") as f:
                pk.append(("extra", f.read()))
        for p, data in pk:
            l2 += [("configs/" + p, None), ("configs/%s/catalog.json" % p, data)]
        l2 += [("configs/gamma", None), ("configs/gamma/catalog.yaml", yaml_docs(gamma(1)))]
        layers.append(l2)
        l3 = [("configs", None), ("configs/.wh.stale", b""),
              ("configs/gamma", None),
              ("configs/gamma/catalog.yaml", yaml_docs(gamma(2)))]
        if "--opaque" in argv:
            l3[1] = ("configs/.wh..wh..opq", b"")
        if "--symlink" in argv:
            l3.append(("configs/link", ("link", "alpha/catalog.json")))
        layers.append(l3)
        if update:
            layers.append([("configs", None), ("configs/alpha", None),
                           ("configs/alpha/catalog.json", json_stream(alpha(True)))])
        labels = {LABEL: "/configs"}
        cmd = ["serve", "/configs", "--cache-dir=/tmp/cache"]
    descs, diffs, hist = [], [], []
    for files in layers:
        tar, gz = make_tar(files)
        d = put_blob(layout, gz)
        descs.append({"mediaType": D_LAYER if docker else OCI_LAYER,
                      "digest": d, "size": len(gz)})
        diffs.append(digest_of(tar))
        hist.append({"created_by": "mkcatalog.py layer %d" % len(hist)})
    config = {
        "architecture": "amd64", "os": "linux",
        "config": {"Entrypoint": ["/bin/opm"], "Cmd": cmd, "Labels": labels,
                   "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": diffs},
        "history": hist,
    }
    def image(arch):
        config["architecture"] = arch
        cb = json.dumps(config, sort_keys=True).encode()
        cd = put_blob(layout, cb)
        manifest = {"schemaVersion": 2,
                    "mediaType": D_MANIFEST if docker else OCI_MANIFEST,
                    "config": {"mediaType": D_CONFIG if docker else OCI_CONFIG,
                               "digest": cd, "size": len(cb)},
                    "layers": descs}
        mb = json.dumps(manifest, sort_keys=True).encode()
        return manifest, mb, put_blob(layout, mb)
    manifest, mb, md = image("amd64")
    if "--index" in argv:
        ents = [{"mediaType": manifest["mediaType"], "digest": md, "size": len(mb),
                 "platform": {"architecture": "amd64", "os": "linux"}}]
        _, mb2, md2 = image("arm64")
        ents.append({"mediaType": manifest["mediaType"], "digest": md2, "size": len(mb2),
                     "platform": {"architecture": "arm64", "os": "linux"}})
        att = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                          "config": {"mediaType": OCI_CONFIG, "digest": put_blob(layout, b"{}"),
                                     "size": 2}, "layers": []}).encode()
        ents.append({"mediaType": OCI_MANIFEST, "digest": put_blob(layout, att),
                     "size": len(att), "platform": {"architecture": "unknown", "os": "unknown"}})
        manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                    "manifests": ents}
        mb = json.dumps(manifest, sort_keys=True).encode()
        md = put_blob(layout, mb)
    ip = os.path.join(layout, "index.json")
    index = {"schemaVersion": 2, "manifests": []}
    if os.path.exists(ip):
        with open(ip) as f:
            index = json.load(f)
    # drop the entries this run tags again (one pass: the layout may hold
    # tens of thousands of images), then append the new ones, sorted
    replaced = set(IMAGES["entries"]) | {name}
    index["manifests"] = [m for m in index.get("manifests", [])
                          if m.get("annotations", {}).get("org.opencontainers.image.ref.name")
                          not in replaced]
    for ref, (d, size) in sorted(IMAGES["entries"].items()):
        index["manifests"].append({"mediaType": OCI_MANIFEST, "digest": d, "size": size,
                                   "annotations": {"org.opencontainers.image.ref.name": ref}})
    index["manifests"].append({"mediaType": manifest["mediaType"], "digest": md,
                               "size": len(mb),
                               "annotations": {"org.opencontainers.image.ref.name": name}})
    with open(ip + ".tmp", "w") as f:
        json.dump(index, f)
    os.rename(ip + ".tmp", ip)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
