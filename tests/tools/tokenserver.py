#!/usr/bin/env python3
"""tokenserver.py: a minimal in-memory OCI registry behind Bearer tokens from its own realm, for tests.

Usage: tokenserver.py --port-file FILE [--user USER:PASS] [--cuts N] [--max-page N]
                      [--expires-in S] [--token-field token|access_token]
                      [--bad-token crlf|lf|esc|space|nul|utf8]

Listens on 127.0.0.1 on a free port (written to FILE once ready). Loopback only.
  GET  /token?service=&scope=   token endpoint (Basic USER:PASS required when
                                --user is given); {"access_token" (or "token"
                                with --token-field), "expires_in": S (default
                                300, left out with --expires-in 0)}
                                ?bad=crlf|lf|esc|space|nul|utf8 (put it in
                                the realm) appends a hostile suffix to
                                the token: airlock must refuse it
  GET  /stats                   {"token_calls", "unauthorized", "leaked_auth", "storage_gets"}
  /v2/...                       manifests (GET/HEAD/PUT), blobs (HEAD, GET as a
                                307 redirect to /storage), uploads (POST,
                                PATCH, PUT ?digest=), tags/list (honours n=
                                and last=, at most --max-page per page,
                                sends Link: <...>; rel="next").
                                Every /v2 request needs a Bearer token whose
                                scope covers the repository and action.
  GET  /storage/<digest>?sig=N  on a second port (another origin): one-shot
                                signed URLs (403 when reused), Range
                                supported; refuses requests carrying an
                                Authorization header (400, counted in
                                leaked_auth). --cuts N: the first N GETs of
                                each blob (ranged or not) are cut after half
                                of the bytes they announced.
Stops on SIGTERM/SIGINT.
"""
import argparse
import base64
import hashlib
import json
import os
import re
import secrets
import signal
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {
    "tokens": {},      # token -> set of (repo, action)
    "manifests": {},   # (repo, ref) -> (bytes, media type, digest)
    "blobs": {},       # digest -> bytes
    "repo_blobs": set(),  # (repo, digest)
    "uploads": {},     # uuid -> (repo, bytearray)
    "sigs": {},        # sig -> used?
    "cuts": {},        # digest -> transfers cut so far
    "stats": {"token_calls": 0, "unauthorized": 0, "leaked_auth": 0, "storage_gets": 0},
}
ARGS = None
STORAGE_PORT = 0  # a second listener, so storage is another origin
SERVICE = "airlock-tokenserver"


def parse_scope(scope):
    """'repository:a/b:pull,push repository:c:pull' -> {(a/b, pull), ...}"""
    out = set()
    for part in (scope or "").split(" "):
        m = re.match(r"^repository:([^:]+):(.+)$", part)
        if m:
            for action in m.group(2).split(","):
                out.add((m.group(1), action))
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    # --- helpers -------------------------------------------------------
    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def send(self, code, data=b"", headers=None, ctype="application/json"):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if ctype is not None and data:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD" and data:
            self.wfile.write(data)

    def error(self, code, ecode, msg, headers=None):
        data = json.dumps({"errors": [{"code": ecode, "message": msg}]}).encode()
        self.send(code, data, headers)

    def base(self):
        return "http://%s:%d" % self.server.server_address[:2]

    def authorized(self, repo, action):
        h = self.headers.get("Authorization") or ""
        if h.startswith("Bearer "):
            with LOCK:
                granted = STATE["tokens"].get(h[7:])
            if granted is not None and (repo is None or (repo, action) in granted):
                return True
        with LOCK:
            STATE["stats"]["unauthorized"] += 1
        scope = "" if repo is None else ',scope="repository:%s:%s"' % (
            repo, "pull" if action == "pull" else "pull,push")
        self.error(401, "UNAUTHORIZED", "authentication required", {
            "WWW-Authenticate": 'Bearer realm="%s/token",service="%s"%s' % (self.base(), SERVICE, scope)})
        return False

    # --- endpoints -----------------------------------------------------
    def token(self, query):
        with LOCK:
            STATE["stats"]["token_calls"] += 1
        if ARGS.user:
            want = "Basic " + base64.b64encode(ARGS.user.encode()).decode()
            if self.headers.get("Authorization") != want:
                self.send(401, b'{"details":"bad credentials"}')
                return
        if query.get("service", [""])[0] != SERVICE:
            self.send(400, b'{"details":"unknown service"}')
            return
        granted = set()
        for s in query.get("scope", []):
            granted |= parse_scope(s)
        tok = "tok-" + secrets.token_hex(8)
        with LOCK:
            STATE["tokens"][tok] = granted
        # A hostile token server: ?bad=KIND in the realm appends a header
        # injection (crlf), a terminal escape (esc), a space, a NUL or a
        # non-ASCII byte to the token it hands out.
        bad = {"crlf": "\r\nX-Injected: yes", "lf": "\nX-Injected: yes",
               "esc": "\x1b[31m", "space": " x", "nul": "\x00x",
               "utf8": "\u00e9"}.get(query.get("bad", [ARGS.bad_token])[0])
        if bad is not None:
            tok += bad
        answer = {ARGS.token_field: tok}
        if ARGS.expires_in > 0:
            answer["expires_in"] = ARGS.expires_in
        self.send(200, json.dumps(answer).encode())

    def storage(self, path, query):
        with LOCK:
            STATE["stats"]["storage_gets"] += 1
        if self.headers.get("Authorization") is not None:
            with LOCK:
                STATE["stats"]["leaked_auth"] += 1
            self.send(400, b"credentials sent to storage")
            return
        digest = path[len("/storage/"):]
        sig = query.get("sig", [""])[0]
        with LOCK:
            used = STATE["sigs"].get(sig)
            if used is None or used:
                data = None
            else:
                STATE["sigs"][sig] = True
                data = STATE["blobs"].get(digest)
        if data is None:
            self.send(403, b"<Error>AccessDenied: signature expired</Error>", ctype="application/xml")
            return
        start = 0
        rng = self.headers.get("Range")
        if rng:
            m = re.match(r"^bytes=(\d+)-$", rng)
            start = int(m.group(1)) if m else 0
            if start >= len(data):
                self.send(416, b"")
                return
        with LOCK:
            done = STATE["cuts"].get(digest, 0)
            cut = done < ARGS.cuts and len(data) - start > 1
            if cut:
                STATE["cuts"][digest] = done + 1
        part = data[start:]
        headers = {}
        if rng:
            headers["Content-Range"] = "bytes %d-%d/%d" % (start, len(data) - 1, len(data))
        if cut:
            # announce the whole remainder, send half of it, drop the connection
            self.send_response(206 if rng else 200)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(part)))
            self.end_headers()
            self.wfile.write(part[:len(part) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if rng:
            self.send(206, part, headers, ctype="application/octet-stream")
            return
        self.send(200, data, ctype="application/octet-stream")

    def v2(self, path, query):
        if path in ("/v2", "/v2/"):
            if self.authorized(None, "pull"):
                self.send(200, b"{}")
            return
        m = re.match(r"^/v2/(.+?)/(manifests|blobs|tags)/(.*)$", path)
        if not m:
            self.error(404, "NAME_UNKNOWN", "no such endpoint")
            return
        repo, kind, rest = m.groups()
        action = "pull" if self.command in ("GET", "HEAD") else "push"
        data = self.body() if self.command in ("PUT", "POST", "PATCH") else b""
        if not self.authorized(repo, action):
            return
        if kind == "manifests":
            self.manifests(repo, rest, data)
        elif kind == "tags":
            self.tags(repo, query)
        elif rest.startswith("uploads"):
            self.uploads(repo, rest, query, data)
        else:
            self.blobs(repo, rest)

    def manifests(self, repo, ref, data):
        if self.command == "PUT":
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            mt = self.headers.get("Content-Type", "")
            with LOCK:
                STATE["manifests"][(repo, ref)] = (data, mt, digest)
                STATE["manifests"][(repo, digest)] = (data, mt, digest)
            self.send(201, b"", {"Location": "/v2/%s/manifests/%s" % (repo, digest),
                                 "Docker-Content-Digest": digest})
            return
        with LOCK:
            entry = STATE["manifests"].get((repo, ref))
        if entry is None:
            self.error(404, "MANIFEST_UNKNOWN", "manifest unknown")
            return
        data, mt, digest = entry
        self.send(200, data, {"Docker-Content-Digest": digest}, ctype=mt)

    def blobs(self, repo, digest):
        with LOCK:
            data = STATE["blobs"].get(digest) if (repo, digest) in STATE["repo_blobs"] else None
            sig = None
            if data is not None and self.command == "GET":
                sig = secrets.token_hex(8)
                STATE["sigs"][sig] = False
        if data is None:
            self.error(404, "BLOB_UNKNOWN", "blob unknown to registry")
            return
        if self.command == "HEAD":
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Docker-Content-Digest", digest)
            self.end_headers()
            return
        self.send(307, b"", {"Location": "http://127.0.0.1:%d/storage/%s?sig=%s" % (STORAGE_PORT, digest, sig)})

    def uploads(self, repo, rest, query, data):
        uid = rest[len("uploads"):].strip("/")
        if self.command == "POST" and uid == "":
            uid = secrets.token_hex(8)
            with LOCK:
                STATE["uploads"][uid] = (repo, bytearray())
            self.send(202, b"", {"Location": "/v2/%s/blobs/uploads/%s" % (repo, uid), "Range": "0-0"})
            return
        with LOCK:
            up = STATE["uploads"].get(uid)
        if up is None or up[0] != repo:
            self.error(404, "BLOB_UPLOAD_UNKNOWN", "upload unknown")
            return
        buf = up[1]
        if self.command == "PATCH":
            cr = self.headers.get("Content-Range")
            if cr is not None:
                m = re.match(r"^(\d+)-(\d+)$", cr)
                if not m or int(m.group(1)) != len(buf) or int(m.group(2)) != len(buf) + len(data) - 1:
                    self.error(416, "BLOB_UPLOAD_INVALID", "bad range")
                    return
            buf.extend(data)
            self.send(202, b"", {"Location": "/v2/%s/blobs/uploads/%s" % (repo, uid),
                                 "Range": "0-%d" % (len(buf) - 1)})
            return
        if self.command == "PUT":
            buf.extend(data)
            digest = query.get("digest", [""])[0]
            if "sha256:" + hashlib.sha256(bytes(buf)).hexdigest() != digest:
                self.error(400, "DIGEST_INVALID", "digest did not match")
                return
            with LOCK:
                STATE["blobs"][digest] = bytes(buf)
                STATE["repo_blobs"].add((repo, digest))
                del STATE["uploads"][uid]
            self.send(201, b"", {"Location": "/v2/%s/blobs/%s" % (repo, digest), "Docker-Content-Digest": digest})
            return
        if self.command == "DELETE":
            with LOCK:
                STATE["uploads"].pop(uid, None)
            self.send(204)
            return
        self.error(405, "UNSUPPORTED", "method not allowed")

    def tags(self, repo, query):
        with LOCK:
            tags = sorted({ref for (r, ref) in STATE["manifests"] if r == repo and ":" not in ref})
        if not tags:
            self.error(404, "NAME_UNKNOWN", "repository name not known to registry")
            return
        n = int(query.get("n", ["1000"])[0])
        if ARGS.max_page > 0:
            n = min(n, ARGS.max_page)
        last = query.get("last", [""])[0]
        if last:
            tags = [t for t in tags if t > last]
        page, more = tags[:n], len(tags) > n
        headers = {}
        if more:
            headers["Link"] = '</v2/%s/tags/list?n=%d&last=%s>; rel="next"' % (repo, n, page[-1])
        self.send(200, json.dumps({"name": repo, "tags": page}).encode(), headers)

    def dispatch(self):
        u = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(u.query)
        if u.path == "/token" and self.command == "GET":
            self.token(query)
        elif u.path == "/stats":
            with LOCK:
                data = json.dumps(STATE["stats"]).encode()
            self.send(200, data)
        elif u.path.startswith("/storage/") and self.command in ("GET", "HEAD"):
            self.storage(u.path, query)
        elif u.path.startswith("/v2"):
            self.v2(u.path, query)
        else:
            self.send(404, b"not found", ctype="text/plain")

    do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = dispatch


def main():
    global ARGS, STORAGE_PORT
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--user")
    p.add_argument("--cuts", type=int, default=0)
    p.add_argument("--max-page", type=int, default=0)
    p.add_argument("--expires-in", type=int, default=300, help="0: leave expires_in out")
    p.add_argument("--token-field", default="access_token", choices=["token", "access_token"])
    p.add_argument("--bad-token", default="", help="as ?bad=KIND, for every token")
    ARGS = p.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    storage = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    storage.daemon_threads = True
    STORAGE_PORT = storage.server_address[1]
    threading.Thread(target=storage.serve_forever, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, ARGS.port_file)
    try:
        srv.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass


if __name__ == "__main__":
    main()
