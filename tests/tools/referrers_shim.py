#!/usr/bin/env python3
"""referrers_shim.py: a loopback registry with the OCI 1.1 referrers API, made
from a docker-registry 2.8 (which has none) by standing in front of it.

GET /v2/<name>/referrers/<digest>[?artifactType=T] answers 200 with the
image index the backend holds at the referrers tag schema's tag
"<alg>-<hex>" (an empty index when there is none), filtered by artifactType
when asked (with OCI-Filters-Applied), as distribution-spec 1.1 "Listing
Referrers" says; the "<alg>-<hex>" tags themselves are hidden (404, left out
of tags/list), so a client that finds the referrers reads them through the
API. Everything else (GET and HEAD) is passed to the backend unchanged.
Each request line is appended to LOG.

With --config-artifact-type the listing gives each referrer the media type
of its manifest's config as artifactType, as go-containerregistry 0.14's
pkg/registry does (the image-spec 1.1 release candidates' rule), instead of
the manifest's own artifactType.

usage: referrers_shim.py [--config-artifact-type] BACKEND_ADDR PORT_FILE LOG
"""
import http.client
import http.server
import json
import re
import sys
import urllib.parse

ARGS = sys.argv[1:]
CONFIG_TYPE = bool(ARGS) and ARGS[0] == "--config-artifact-type"
if CONFIG_TYPE:
    ARGS = ARGS[1:]
BACKEND, PORT_FILE, LOG = ARGS[0:3]
INDEX = "application/vnd.oci.image.index.v1+json"
SCHEMA_TAG = re.compile(r"^[a-z0-9]+-[0-9a-f]{64}$")
REFERRERS = re.compile(r"^/v2/(.+)/referrers/([a-z0-9]+):([0-9a-f]+)$")
MANIFEST = re.compile(r"^/v2/(.+)/manifests/([^/]+)$")
TAGS = re.compile(r"^/v2/(.+)/tags/list$")


def backend(method, path, headers):
    c = http.client.HTTPConnection(BACKEND, timeout=30)
    c.request(method, path, headers=headers)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, r.getheaders(), body


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reply(self, status, headers, body, head=False):
        self.send_response(status)
        for k, v in headers:
            if k.lower() not in ("content-length", "connection", "transfer-encoding", "date", "server"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def handle_any(self, head):
        with open(LOG, "a") as f:
            f.write("%s %s\n" % (self.command, self.path))
        u = urllib.parse.urlsplit(self.path)
        m = REFERRERS.match(u.path)
        if m:
            name, alg, hexd = m.groups()
            st, _, body = backend("GET", "/v2/%s/manifests/%s-%s" % (name, alg, hexd), {"Accept": INDEX})
            idx = json.loads(body) if st == 200 else {"schemaVersion": 2, "mediaType": INDEX, "manifests": []}
            hdrs = [("Content-Type", INDEX)]
            if CONFIG_TYPE:
                for d in idx["manifests"]:
                    _, _, mb = backend("GET", "/v2/%s/manifests/%s" % (name, d["digest"]), {"Accept": d["mediaType"]})
                    d["artifactType"] = json.loads(mb)["config"]["mediaType"]
            want = urllib.parse.parse_qs(u.query).get("artifactType")
            if want:
                idx["manifests"] = [d for d in idx["manifests"] if d.get("artifactType") in want]
                hdrs.append(("OCI-Filters-Applied", "artifactType"))
            return self.reply(200, hdrs, json.dumps(idx).encode(), head)
        m = MANIFEST.match(u.path)
        if m and SCHEMA_TAG.match(m.group(2)):
            err = b'{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}'
            return self.reply(404, [("Content-Type", "application/json")], err, head)
        fwd = {k: v for k, v in self.headers.items() if k.lower() in ("accept", "authorization", "range")}
        st, hdrs, body = backend(self.command, self.path, fwd)
        if TAGS.match(u.path) and st == 200:
            doc = json.loads(body)
            doc["tags"] = [t for t in doc.get("tags") or [] if not SCHEMA_TAG.match(t)]
            body = json.dumps(doc).encode()
        self.reply(st, hdrs, body, head)

    def do_GET(self):
        self.handle_any(False)

    def do_HEAD(self):
        self.handle_any(True)

    def log_message(self, *a):
        pass


s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
import os
os.rename(PORT_FILE + ".tmp", PORT_FILE)
s.serve_forever()
