#!/usr/bin/env python3
"""cimage_cosign_cases.py: turn the containers/image cosign fixtures
(tests/fixtures/containers-image-cosign, real cosign output) into cases for
`test_cosign --cases`: payload, signature and annotation files per case, the
trust files, and the verdict containers/image's tests expect.

usage: cimage_cosign_cases.py FIXTURES OUTDIR
"""
import base64
import hashlib
import json
import shutil
import sys

MAGIC = b"\x00sigstore-json\n"


def main():
    src, out = sys.argv[1], sys.argv[2]
    for f in ["cosign.pub", "cosign2.pub", "rekor.pub", "fulcio_v1.crt.pem",
              "pki_root_crts.pem", "pki_intermediate_crts.pem"]:
        shutil.copy(f"{src}/{f}", f"{out}/{f}")
    cases = []

    def sig_case(name, d, keys=(), fulcio=(), rekor=(), issuer=None, subject=None,
                 require_tlog=False, expect="ok", image="ok", reason=None, pki=None):
        raw = open(f"{src}/{d}/signature-1", "rb").read()
        assert raw.startswith(MAGIC), d
        j = json.loads(raw[len(MAGIC):])
        payload = base64.b64decode(j["payload"])
        files = {"payload": f"{d}.payload"}
        open(f"{out}/{d}.payload", "wb").write(payload)
        ann = j.get("annotations", {})
        for key, field in [("dev.cosignproject.cosign/signature", "signature"),
                           ("dev.sigstore.cosign/certificate", "certificate"),
                           ("dev.sigstore.cosign/chain", "chain"),
                           ("dev.sigstore.cosign/bundle", "bundle")]:
            if key in ann:
                open(f"{out}/{d}.{field}", "w").write(ann[key])
                files[field] = f"{d}.{field}"
        manifest = open(f"{src}/{d}/manifest.json", "rb").read()
        ident = json.loads(payload)["critical"]["identity"]["docker-reference"]
        c = {"name": name, "sig": files, "keys": list(keys), "fulcio": list(fulcio),
             "rekor": list(rekor), "issuer": issuer, "subject": subject,
             "require_tlog": require_tlog, "expect": expect,
             "digest": "sha256:" + hashlib.sha256(manifest).hexdigest(),
             "reference": ident, "expect_image": image,
             "source": "containers/image signature/fixtures/" + d}
        if reason:
            c["reason"] = reason
        if pki:
            c["pki_email"] = pki
        cases.append(c)

    sig_case("cimage-key-valid", "dir-img-cosign-valid", keys=["cosign.pub"])
    sig_case("cimage-key-wrong-key", "dir-img-cosign-valid", keys=["cosign2.pub"],
             expect="fail", reason="trusted keys")
    sig_case("cimage-key-rekor-valid", "dir-img-cosign-key-rekor-valid", keys=["cosign2.pub"],
             rekor=["rekor.pub"], require_tlog=True)
    sig_case("cimage-key-rekor-two-keys", "dir-img-cosign-key-rekor-valid",
             keys=["cosign.pub", "cosign2.pub"], rekor=["rekor.pub", "cosign.pub"],
             require_tlog=True)
    sig_case("cimage-key-rekor-wrong-rekor-key", "dir-img-cosign-key-rekor-valid",
             keys=["cosign2.pub"], rekor=["cosign.pub"], require_tlog=True,
             expect="fail", reason="not trusted")
    sig_case("cimage-key-rekor-required", "dir-img-cosign-valid", keys=["cosign.pub"],
             rekor=["rekor.pub"], require_tlog=True, expect="fail", reason="required")
    sig_case("cimage-fulcio-rekor-valid", "dir-img-cosign-fulcio-rekor-valid",
             fulcio=["fulcio_v1.crt.pem"], rekor=["rekor.pub"],
             issuer="https://github.com/login/oauth", subject="mitr@redhat.com")
    sig_case("cimage-fulcio-rekor-other-email", "dir-img-cosign-fulcio-rekor-valid",
             fulcio=["fulcio_v1.crt.pem"], rekor=["rekor.pub"],
             issuer="https://github.com/login/oauth", subject="someone@example.com",
             expect="fail", reason="identity mismatch")
    sig_case("cimage-fulcio-rekor-other-issuer", "dir-img-cosign-fulcio-rekor-valid",
             fulcio=["fulcio_v1.crt.pem"], rekor=["rekor.pub"],
             issuer="https://accounts.google.com", subject="mitr@redhat.com",
             expect="fail", reason="issuer mismatch")
    sig_case("cimage-pki-valid", "dir-img-cosign-pki-valid",
             fulcio=["pki_root_crts.pem", "pki_intermediate_crts.pem"],
             pki="qiwan@redhat.com")
    sig_case("cimage-pki-other-email", "dir-img-cosign-pki-valid",
             fulcio=["pki_root_crts.pem", "pki_intermediate_crts.pem"],
             pki="someone@example.com", expect="fail", reason="identity mismatch")
    # the signature is valid, the manifest it is shown with is not the one it names
    sig_case("cimage-manifest-digest-error", "dir-img-cosign-manifest-digest-error",
             keys=["cosign.pub"], image="fail")
    sig_case("cimage-modified-manifest", "dir-img-cosign-modified-manifest",
             keys=["cosign.pub"], image="fail")
    json.dump(cases, open(f"{out}/cases.json", "w"), indent=1)
    for c in cases:
        print(c["name"])


if __name__ == "__main__":
    main()
