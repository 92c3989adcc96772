#!/usr/bin/env python3
"""sigstore_mock_root.py: print the Sigstore trusted root (protobuf-specs
trustedroot.proto, JSON form) of the mock instance sigstore_fixtures.js
writes to DIR: its Rekor key (DIR/rekor.pub), CT log key (DIR/ctlog.pub)
and Fulcio root (DIR/fulcio-root.pem, or the PEM given with --fulcio: a
root that does not match the signatures), each valid from 2000 on.

usage: sigstore_mock_root.py DIR [--fulcio PEM]
"""
import base64
import hashlib
import json
import subprocess
import sys


def der(args):
    return subprocess.run(["openssl"] + args + ["-outform", "DER"], check=True,
                          capture_output=True).stdout


def main():
    a = sys.argv[1:]
    if len(a) not in (1, 3) or (len(a) == 3 and a[1] != "--fulcio"):
        sys.exit(__doc__)
    d = a[0]
    fulcio = a[2] if len(a) == 3 else d + "/fulcio-root.pem"
    rekor = der(["pkey", "-pubin", "-in", d + "/rekor.pub"])
    ct = der(["pkey", "-pubin", "-in", d + "/ctlog.pub"])
    ca = der(["x509", "-in", fulcio])

    def b64(b):
        return base64.b64encode(b).decode()

    vf = {"start": "2000-01-01T00:00:00Z"}

    def log(k, url):
        return {"baseUrl": url, "hashAlgorithm": "SHA2_256",
                "publicKey": {"rawBytes": b64(k), "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                              "validFor": vf},
                "logId": {"keyId": b64(hashlib.sha256(k).digest())}}

    print(json.dumps({
        "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
        "tlogs": [log(rekor, "https://rekor.airlock.test")],
        "certificateAuthorities": [{
            "subject": {"organization": "mock"}, "uri": "https://fulcio.airlock.test",
            "certChain": {"certificates": [{"rawBytes": b64(ca)}]}, "validFor": vf}],
        "ctlogs": [log(ct, "https://ctfe.airlock.test")],
        "timestampAuthorities": []}, indent=1))


if __name__ == "__main__":
    main()
