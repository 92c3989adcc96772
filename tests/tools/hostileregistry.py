#!/usr/bin/env python3
# hostileregistry.py: a hostile OCI registry for tests: TLS and plain HTTP on one port, downgrades, http realms, forged messages, endless and dripped answers.
"""A registry that attacks its client (Python 3 standard library only).

Usage:
    python3 tests/tools/hostileregistry.py --port-file FILE --tls-cert PEM
            --tls-key PEM [--user USER:PASS] [-v]

Listens on 127.0.0.1 (a free port, written to FILE once it listens) and
speaks TLS and plain HTTP on that one port: a connection whose first byte
is 0x16 (a TLS handshake record) gets TLS, any other plain HTTP. Every
request is recorded (side "tls" or "plain", method, path, whether it
carried an Authorization header); GET /_log returns the records as JSON,
/_reset clears them (neither is recorded). Stops on SIGTERM.

What a repository does is chosen by its first path component:
  downgrade/...   Basic USER:PASS required (401 Basic otherwise); blob HEAD
                  404; POST .../blobs/uploads/ answers 202 with a Location
                  of http://127.0.0.1:PORT/... (the same host and port, plain
                  http); the plain side accepts anything (202/201)
  redirect/...    Basic required; manifest and blob GET/HEAD answer 302 to
                  the same path on http://127.0.0.1:PORT
  realm/...       Bearer: 401 with realm="http://127.0.0.1:PORT/token"
                  (plain http) whatever side asked; /token hands out "t"
  forge/...       manifest "body": 200 application/json whose mediaType
                  holds a newline, a forged "airlock: error:" line and
                  escape sequences; "error": 404 whose registry error
                  message holds the same
  drip/...        manifest GET: Content-Length 1000, one byte a second
  endless404/...  manifest GET: 404 with a body that never ends
  endless302/...  manifest GET: 302 to itself with a body that never ends
  manyheaders/... manifest GET: 200 with 5000 headers
  anything else   404 NAME_UNKNOWN
"""

import argparse
import base64
import http.server
import json
import os
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse

FORGED = "gone\n airlock: error: forged\x1b[31m red \x1b]0;owned\x07"

LOCK = threading.Lock()
LOG = []
ARGS = None
PORT = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hostileregistry/1"

    def log_message(self, fmt, *args):
        if ARGS.verbose:
            sys.stderr.write("hostileregistry: " + (fmt % args) + "\n")

    def tls(self):
        return isinstance(self.connection, ssl.SSLSocket)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > 0:
            return self.rfile.read(n)
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            out = b""
            while True:
                size = int(self.rfile.readline(1024).split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline(1024)
                    return out
                out += self.rfile.read(size)
                self.rfile.readline(16)
        return b""

    def send(self, code, body=b"", headers=None, ctype="application/json"):
        self.send_response(code)
        for k, v in (headers or []):
            self.send_header(k, v)
        if body:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def error(self, code, ecode, msg, headers=None):
        self.send(code, json.dumps({"errors": [{"code": ecode, "message": msg}]}).encode(),
                  headers)

    def basic_ok(self):
        want = "Basic " + base64.b64encode(ARGS.user.encode()).decode()
        if self.headers.get("Authorization") == want:
            return True
        self.error(401, "UNAUTHORIZED", "authentication required",
                   [("WWW-Authenticate", 'Basic realm="hostile"')])
        return False

    def endless(self, code, headers):
        self.close_connection = True
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"an endless body " * 4096
        end = time.monotonic() + 120
        while time.monotonic() < end:
            self.wfile.write(chunk)

    def dispatch(self):
        u = urllib.parse.urlsplit(self.path)
        path = u.path
        if path == "/_log":
            with LOCK:
                data = json.dumps(LOG).encode()
            self.send(200, data)
            return
        if path == "/_reset":
            with LOCK:
                del LOG[:]
            self.send(200, b"{}")
            return
        with LOCK:
            LOG.append({"side": "tls" if self.tls() else "plain",
                        "method": self.command, "path": path,
                        "auth": self.headers.get("Authorization") is not None})
        body = self.read_body()
        del body
        try:
            self.route(path)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    def route(self, path):
        plain_base = "http://127.0.0.1:%d" % PORT
        if path == "/token":
            self.send(200, json.dumps({"token": "t", "expires_in": 300}).encode())
            return
        parts = path.split("/")
        # /v2/<kind>/<name>/(manifests|blobs)/...
        if len(parts) < 5 or parts[1] != "v2":
            self.error(404, "NAME_UNKNOWN", "no such repository")
            return
        kind = parts[2]
        try:
            sect = parts.index("manifests") if "manifests" in parts else parts.index("blobs")
        except ValueError:
            self.error(404, "NAME_UNKNOWN", "no such endpoint")
            return
        repo = "/".join(parts[2:sect])
        what = parts[sect]
        rest = "/".join(parts[sect + 1:])
        if kind == "downgrade":
            if not self.tls():
                # the plain side: would take anything, credentials included
                self.send(202 if self.command == "PATCH" else 201, b"",
                          [("Location", path)])
                return
            if not self.basic_ok():
                return
            if what == "blobs" and rest.startswith("uploads") and self.command == "POST":
                self.send(202, b"", [("Location", "%s/v2/%s/blobs/uploads/u1" % (plain_base, repo)),
                                     ("Docker-Upload-UUID", "u1"), ("Range", "0-0")])
                return
            self.error(404, "BLOB_UNKNOWN" if what == "blobs" else "MANIFEST_UNKNOWN", "unknown")
            return
        if kind == "redirect":
            if not self.tls():
                self.error(404, "MANIFEST_UNKNOWN", "unknown")
                return
            if not self.basic_ok():
                return
            self.send(302, b"", [("Location", plain_base + path)])
            return
        if kind == "realm":
            h = self.headers.get("Authorization") or ""
            if h != "Bearer t":
                self.error(401, "UNAUTHORIZED", "authentication required",
                           [("WWW-Authenticate",
                             'Bearer realm="%s/token",service="hostile",scope="repository:%s:pull"'
                             % (plain_base, repo))])
                return
            self.error(404, "MANIFEST_UNKNOWN", "unknown")
            return
        if what != "manifests":
            self.error(404, "BLOB_UNKNOWN", "unknown")
            return
        if kind == "forge":
            if rest == "body":
                doc = {"schemaVersion": 2, "mediaType": FORGED}
                self.send(200, json.dumps(doc).encode())
            else:
                self.error(404, "MANIFEST_UNKNOWN", FORGED)
            return
        if kind == "drip":
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            if self.command == "HEAD":
                return
            for _ in range(1000):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(1.0)
            return
        if kind == "endless404":
            self.endless(404, [])
            return
        if kind == "endless302":
            self.endless(302, [("Location", path)])
            return
        if kind == "manyheaders":
            self.send(200, b"{}", [("X-Many-%d" % i, "v") for i in range(5000)],
                      "application/vnd.oci.image.manifest.v1+json")
            return
        self.error(404, "NAME_UNKNOWN", "no such repository")

    do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = dispatch


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    ssl_ctx = None

    def finish_request(self, request, client_address):
        # Runs in the request's thread: a client that never sends a byte
        # or never finishes a handshake blocks only itself.
        request.settimeout(30)
        try:
            first = request.recv(1, socket.MSG_PEEK)
        except OSError:
            return
        if first == b"\x16":
            try:
                request = self.ssl_ctx.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return
        request.settimeout(None)
        self.RequestHandlerClass(request, client_address, self)

    def handle_error(self, request, client_address):
        pass


def main():
    global ARGS, PORT
    ap = argparse.ArgumentParser(description="hostile registry for tests")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--tls-cert", required=True)
    ap.add_argument("--tls-key", required=True)
    ap.add_argument("--user", default="airlock:s3cret")
    ap.add_argument("-v", "--verbose", action="store_true")
    ARGS = ap.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ARGS.tls_cert, ARGS.tls_key)
    srv.ssl_ctx = ctx
    PORT = srv.server_address[1]
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % PORT)
    os.rename(tmp, ARGS.port_file)
    try:
        srv.serve_forever(poll_interval=0.2)
    except (KeyboardInterrupt, SystemExit):
        pass


if __name__ == "__main__":
    main()
