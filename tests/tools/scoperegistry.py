#!/usr/bin/env python3
# scoperegistry.py: a recording fake registry on 127.0.0.1 whose namespaces need different users (Basic or Bearer); logs every connection and request with the user it carried.
"""A registry that records who asked for what (Python 3 standard library only).

Usage:
    python3 tests/tools/scoperegistry.py --port-file FILE --log FILE
            [--user NAMESPACE=USER:PASS]... [--bearer]

Listens on 127.0.0.1 (a free port, written to --port-file once it listens),
plain HTTP. Every accepted connection appends {"conn": 1} to --log, and
every request {"method", "path", "user"} where user is the Basic user the
request carried, "bearer:USER" for a token this server issued to USER,
"-" for none, "?" for anything else (one JSON object a line, flushed).

Every repository holds one small OCI image of its own under the tag "1"
(manifest, config and layer by digest); any other manifest reference (a .sig tag) is
MANIFEST_UNKNOWN, referrers an empty index, tags/list answers ["1"].

A repository whose first path component is a NAMESPACE given by --user
needs that user: without it (or with another user) the answer is 401 with
a Basic challenge, or with --bearer a Bearer challenge whose realm is
/token on this server (which issues a token to any known user for the
scopes asked, and an anonymous one otherwise). Other repositories need
nothing. GET /v2/ answers 200.
"""

import argparse
import base64
import hashlib
import http.server
import json
import os
import secrets
import sys
import threading
import urllib.parse

LOCK = threading.Lock()


def blob(data):
    return "sha256:" + hashlib.sha256(data).hexdigest(), data


CONFIG = blob(json.dumps({"architecture": "amd64", "os": "linux",
                          "rootfs": {"type": "layers", "diff_ids": []}},
                         sort_keys=True).encode())


def image(repo):
    """The repository's image: (manifest digest, manifest, blobs); its
    layer names the repository, so no two repositories share it."""
    layer = blob(("scoperegistry layer of %s\n" % repo).encode())
    m = blob(json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": CONFIG[0], "size": len(CONFIG[1])},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": layer[0], "size": len(layer[1])}],
    }, sort_keys=True).encode())
    return m[0], m[1], {CONFIG[0]: CONFIG[1], layer[0]: layer[1]}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.server.record({"conn": 1})

    def log_message(self, fmt, *args):
        pass

    def who(self):
        h = self.headers.get("Authorization", "")
        if h == "":
            return "-"
        if h.startswith("Basic "):
            try:
                up = base64.b64decode(h[6:], validate=True).decode()
            except ValueError:
                return "?"
            user, _, pw = up.partition(":")
            if self.server.users.get(user) == pw:
                return user
            return "?"
        if h.startswith("Bearer "):
            return self.server.tokens.get(h[7:], "?")
        return "?"

    def send(self, code, body=b"", ctype="application/json", extra=None,
             head=False):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def error(self, code, ecode, head=False, extra=None):
        body = json.dumps({"errors": [{"code": ecode, "message": ecode}]})
        self.send(code, body.encode(), extra=extra, head=head)

    def challenge(self, repo, head):
        if self.server.bearer:
            port = self.server.server_address[1]
            v = ('Bearer realm="http://127.0.0.1:%d/token",'
                 'service="scoperegistry",scope="repository:%s:pull"'
                 % (port, repo))
        else:
            v = 'Basic realm="scoperegistry"'
        self.error(401, "UNAUTHORIZED", head, {"WWW-Authenticate": v})

    def token(self):
        who = self.who()
        user = who if who in self.server.users else "anonymous"
        tok = secrets.token_hex(16)
        with LOCK:
            self.server.tokens[tok] = "bearer:" + user
        self.send(200, json.dumps({"token": tok, "expires_in": 300}).encode())

    def handle_any(self, head=False):
        u = urllib.parse.urlsplit(self.path)
        path = u.path
        self.server.record({"method": self.command, "path": path,
                            "user": self.who()})
        if path == "/token":
            return self.token()
        if path in ("/v2", "/v2/"):
            return self.send(200, b"{}", head=head)
        if not path.startswith("/v2/"):
            return self.error(404, "NOT_FOUND", head)
        rest = path[4:]
        for kind in ("/manifests/", "/blobs/", "/referrers/", "/tags/list"):
            i = rest.rfind(kind)
            if i > 0:
                repo, arg = rest[:i], rest[i + len(kind):]
                break
        else:
            return self.error(404, "NAME_UNKNOWN", head)
        need = self.server.namespaces.get(repo.split("/")[0])
        who = self.who()
        if need is not None and who not in (need, "bearer:" + need):
            return self.challenge(repo, head)
        mdig, mbody, blobs = image(repo)
        if kind == "/manifests/":
            if arg not in ("1", mdig):
                return self.error(404, "MANIFEST_UNKNOWN", head)
            return self.send(200, mbody,
                             "application/vnd.oci.image.manifest.v1+json",
                             {"Docker-Content-Digest": mdig}, head)
        if kind == "/blobs/":
            if arg not in blobs:
                return self.error(404, "BLOB_UNKNOWN", head)
            return self.send(200, blobs[arg], "application/octet-stream",
                             {"Docker-Content-Digest": arg}, head)
        if kind == "/tags/list":
            return self.send(200, json.dumps({"name": repo,
                                              "tags": ["1"]}).encode(),
                             head=head)
        return self.send(200, json.dumps({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": []}).encode(),
            "application/vnd.oci.image.index.v1+json", head=head)

    def do_GET(self):
        self.handle_any()

    def do_HEAD(self):
        self.handle_any(head=True)

    def do_other(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > 0:
            self.rfile.read(n)
        self.server.record({"method": self.command, "path": self.path,
                            "user": self.who()})
        self.error(405, "UNSUPPORTED")

    do_POST = do_PUT = do_PATCH = do_DELETE = do_other


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def record(self, obj):
        with LOCK:
            self.logf.write(json.dumps(obj) + "\n")
            self.logf.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--user", action="append", default=[])
    ap.add_argument("--bearer", action="store_true")
    a = ap.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    srv.logf = open(a.log, "a")
    srv.bearer = a.bearer
    srv.users = {}
    srv.namespaces = {}
    srv.tokens = {}
    for spec in a.user:
        ns, _, up = spec.partition("=")
        user, _, pw = up.partition(":")
        srv.users[user] = pw
        srv.namespaces[ns] = user
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
