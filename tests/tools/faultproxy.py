#!/usr/bin/env python3
# faultproxy.py: loopback HTTP reverse proxy in front of a registry that injects faults (5xx, 429, resets, stalls, hangs).
"""Fault-injecting reverse proxy for registry tests (Python 3 stdlib only).

    faultproxy.py --upstream 127.0.0.1:5000 --port-file FILE [--fault RULE]...

Listens on 127.0.0.1 on a free port (written to --port-file once listening)
and forwards every request faithfully to the upstream registry: method, path,
query, headers (Range, Authorization, Docker-Content-Digest, ...) and bodies,
streamed both ways. Location headers that name the upstream are rewritten to
the proxy.

A RULE is a query string, the same as the control endpoint takes:

    kind=500|503|429|reset|cut|stall|hang|norange|cutreq   what to inject
                      (cut: a plain close (FIN) where reset sends a RST, so
                      the client receives every byte relayed before it;
                      norange: forward without the Range header, as a
                      server that ignores ranges; cutreq: forward the
                      first `after` bytes of the request body upstream,
                      then close both connections, as a connection cut
                      while the client sends)
    path=REGEX        re.search()ed against the request path+query (default .*)
    method=REGEX      re.fullmatch()ed against the method (default: GET for
                      reset and stall, any method otherwise)
    times=N           how many requests to fault (default 1; -1 = forever)
    skip=N            let the first N matching requests through unfaulted
                      (default 0): "the third PATCH" is skip=2
    after=K           reset/cut/stall: body bytes forwarded first (default 0;
                      clamped so at least one byte is withheld)
    seconds=S         stall: how long before the body continues (default -1:
                      forever, i.e. until the client goes away)

429 answers carry "Retry-After: 1". A hang reads the request and never
answers. Rules are tried in the order given; the first match wins.

Control endpoints (answered by the proxy, never forwarded):
    GET /_fault?RULE      add a rule           -> {"rules": [...]}
    GET /_fault?clear=1   remove every rule
    GET /_stats           {"requests": N, "injected": {"500": n, ...},
                           "rules": [{..., "injected": n, "left": n}],
                           "body_bytes": response body bytes relayed,
                           "request_bytes": request body bytes forwarded
                           upstream,
                           "log": ["METHOD PATH STATUS BYTES RANGE|- REQBYTES",
                           ...] (the first 10000 requests; REQBYTES: request
                           body bytes forwarded upstream)}
    GET /_stats?reset=1   the same, then zero the counters and the log
"""

import argparse
import http.client
import http.server
import json
import os
import re
import select
import socket
import struct
import sys
import threading
import time
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate",
              "proxy-authorization", "te", "trailer", "trailers",
              "transfer-encoding", "upgrade", "expect"}
KINDS = ("500", "503", "429", "reset", "cut", "stall", "hang", "norange",
         "cutreq")
CHUNK = 64 * 1024


class Rules:
    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []
        self.requests = 0
        self.injected = {k: 0 for k in KINDS}
        self.body_bytes = 0
        self.request_bytes = 0
        self.log = []

    def record(self, method, path, status, nbytes, rng, reqbytes=0):
        with self.lock:
            self.body_bytes += nbytes
            self.request_bytes += reqbytes
            if len(self.log) < 10000:
                self.log.append("%s %s %d %d %s %d" % (
                    method, path, status, nbytes, rng or "-", reqbytes))

    def reset_counts(self):
        with self.lock:
            self.requests = 0
            self.injected = {k: 0 for k in KINDS}
            self.body_bytes = 0
            self.request_bytes = 0
            self.log = []

    def add(self, query):
        q = urllib.parse.parse_qs(query, keep_blank_values=True)
        get = lambda k, d: q[k][-1] if k in q else d
        if "clear" in q:
            with self.lock:
                self.rules = []
            return
        kind = get("kind", "")
        if kind not in KINDS:
            raise ValueError("unknown fault kind '%s'" % kind)
        body_fault = kind in ("reset", "cut", "stall")
        rule = {
            "kind": kind,
            "path": get("path", ".*"),
            "method": get("method", "GET" if body_fault else ".*"),
            "times": int(get("times", "1")),
            "skip": int(get("skip", "0")),
            "after": int(get("after", "0")),
            "seconds": float(get("seconds", "-1")),
            "injected": 0,
        }
        rule["_path"] = re.compile(rule["path"])
        rule["_method"] = re.compile(rule["method"])
        with self.lock:
            self.rules.append(rule)

    def match(self, method, path):
        with self.lock:
            self.requests += 1
            for r in self.rules:
                if r["times"] == 0:
                    continue
                if not r["_method"].fullmatch(method):
                    continue
                if not r["_path"].search(path):
                    continue
                if r["skip"] > 0:
                    r["skip"] -= 1
                    continue
                if r["times"] > 0:
                    r["times"] -= 1
                r["injected"] += 1
                self.injected[r["kind"]] += 1
                return dict(r)
        return None

    def snapshot(self):
        with self.lock:
            rules = [{k: v for k, v in r.items() if not k.startswith("_")}
                     for r in self.rules]
            for r in rules:
                r["left"] = r.pop("times")
            return {"requests": self.requests, "injected": dict(self.injected),
                    "rules": rules, "body_bytes": self.body_bytes,
                    "request_bytes": self.request_bytes,
                    "log": list(self.log)}


RULES = Rules()
UPSTREAM = ("127.0.0.1", 0)
STOP = threading.Event()


def wait_client_gone(sock, seconds):
    """Sleep up to seconds (<0: forever) or until the peer closes sock."""
    deadline = None if seconds < 0 else time.monotonic() + seconds
    while not STOP.is_set():
        left = 1.0 if deadline is None else min(1.0, deadline - time.monotonic())
        if left <= 0:
            return True
        try:
            r, _, _ = select.select([sock], [], [], left)
            if r and not sock.recv(4096, socket.MSG_PEEK):
                return False
            if r:
                # Pipelined bytes: drop them so select() blocks again.
                sock.recv(4096)
        except OSError:
            return False
    return False


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "faultproxy"

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("faultproxy: " + (fmt % args) + "\n")

    def send_small(self, code, body, extra=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def control(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/_stats":
            self.send_small(200, json.dumps(RULES.snapshot(), indent=1) + "\n")
            if "reset=1" in u.query.split("&"):
                RULES.reset_counts()
        else:
            try:
                RULES.add(u.query)
            except (ValueError, re.error) as e:
                self.send_small(400, json.dumps({"error": str(e)}) + "\n")
                return
            self.send_small(200, json.dumps(RULES.snapshot()) + "\n")

    def read_request_body(self):
        """Yields the request body in pieces (Content-Length or chunked)."""
        te = self.headers.get("Transfer-Encoding", "").lower()
        if "chunked" in te:
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return
                left = size
                while left:
                    piece = self.rfile.read(min(left, CHUNK))
                    if not piece:
                        raise ConnectionError("client closed mid-chunk")
                    left -= len(piece)
                    yield piece
                self.rfile.readline(3)
        else:
            left = int(self.headers.get("Content-Length", "0") or "0")
            while left > 0:
                piece = self.rfile.read(min(left, CHUNK))
                if not piece:
                    raise ConnectionError("client closed mid-body")
                left -= len(piece)
                yield piece

    def reset(self):
        try:
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close_connection = True
        try:
            self.connection.close()
        except OSError:
            pass

    def proxy(self):
        fault = RULES.match(self.command, self.path)
        kind = fault["kind"] if fault else None
        if kind == "hang":
            self.close_connection = True
            wait_client_gone(self.connection, -1)
            return
        if kind in ("500", "503", "429"):
            # Drain the body so the connection stays usable.
            for _ in self.read_request_body():
                pass
            extra = [("Retry-After", "1")] if kind == "429" else []
            msg = {"errors": [{"code": "UNAVAILABLE" if kind != "429" else "TOOMANYREQUESTS",
                               "message": "faultproxy injected %s" % kind,
                               "detail": None}]}
            self.send_small(int(kind), json.dumps(msg) + "\n", extra)
            RULES.record(self.command, self.path, int(kind), 0,
                         self.headers.get("Range"))
            return

        up = http.client.HTTPConnection(UPSTREAM[0], UPSTREAM[1], timeout=300)
        self.forwarded = 0
        try:
            up.putrequest(self.command, self.path, skip_host=True,
                          skip_accept_encoding=True)
            chunked = "chunked" in self.headers.get("Transfer-Encoding", "").lower()
            for k, v in self.headers.items():
                if k.lower() in HOP_BY_HOP:
                    continue
                if kind == "norange" and k.lower() == "range":
                    continue
                up.putheader(k, v)
            if chunked:
                up.putheader("Transfer-Encoding", "chunked")
            up.endheaders()
            for piece in self.read_request_body():
                if kind == "cutreq":
                    piece = piece[:max(0, fault["after"] - self.forwarded)]
                if chunked:
                    up.send(b"%x\r\n" % len(piece) + piece + b"\r\n")
                else:
                    up.send(piece)
                self.forwarded += len(piece)
                if kind == "cutreq" and self.forwarded >= fault["after"]:
                    self.log_message("request cut after %d bytes",
                                     self.forwarded)
                    RULES.record(self.command, self.path, 0, 0,
                                 self.headers.get("Range"), self.forwarded)
                    up.close()
                    self.reset()
                    return
            if chunked:
                up.send(b"0\r\n\r\n")
            resp = up.getresponse()
            self.relay(resp, fault)
        except (ConnectionError, socket.timeout, http.client.HTTPException, OSError) as e:
            self.log_message("upstream error: %s", e)
            self.close_connection = True
        finally:
            up.close()

    def relay(self, resp, fault):
        self.relayed = 0
        try:
            self.relay_body(resp, fault)
        finally:
            RULES.record(self.command, self.path, resp.status, self.relayed,
                         self.headers.get("Range"), self.forwarded)

    def relay_body(self, resp, fault):
        self.log_request(resp.status)
        self.send_response_only(resp.status, resp.reason)
        length = None
        me = "%s:%d" % self.server.server_address[:2]
        them = "%s:%d" % UPSTREAM
        for k, v in resp.getheaders():
            lk = k.lower()
            if lk in HOP_BY_HOP:
                continue
            if lk == "content-length":
                length = int(v)
            if lk == "location":
                v = v.replace("//" + them, "//" + me)
            self.send_header(k, v)
        no_body = (self.command == "HEAD" or resp.status in (204, 304)
                   or 100 <= resp.status < 200)
        use_chunked = length is None and not no_body
        if use_chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if no_body:
            self.wfile.flush()
            return
        stop_at = None
        if fault and fault["kind"] in ("reset", "cut", "stall"):
            stop_at = fault["after"]
            if length is not None and length > 0:
                stop_at = min(stop_at, length - 1)
        sent = 0
        while True:
            want = CHUNK
            if stop_at is not None:
                want = max(0, min(CHUNK, stop_at - sent))
            piece = resp.read(want) if want else b""
            if want and not piece:
                break
            if piece:
                self.write_piece(piece, use_chunked)
                sent += len(piece)
                self.relayed = sent
            if stop_at is not None and sent >= stop_at:
                self.wfile.flush()
                if fault["kind"] == "reset":
                    self.log_message("reset after %d bytes", sent)
                    self.reset()
                    return
                if fault["kind"] == "cut":
                    self.log_message("cut after %d bytes", sent)
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                self.log_message("stall after %d bytes", sent)
                if not wait_client_gone(self.connection, fault["seconds"]):
                    self.close_connection = True
                    return
                stop_at = None
        if use_chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def write_piece(self, piece, use_chunked):
        if use_chunked:
            self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
        else:
            self.wfile.write(piece)

    def handle_one(self):
        if self.path.startswith("/_fault") or self.path.startswith("/_stats"):
            self.control()
        else:
            self.proxy()

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = handle_one

    def handle(self):
        try:
            super().handle()
        except (ConnectionError, socket.timeout, OSError):
            pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main(argv):
    global UPSTREAM
    ap = argparse.ArgumentParser(description="fault-injecting registry proxy")
    ap.add_argument("--upstream", required=True, help="HOST:PORT of the registry")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--fault", action="append", default=[],
                    help="rule as a query string, e.g. 'kind=500&path=/blobs/&times=2'")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    host, _, port = a.upstream.rpartition(":")
    if host not in ("127.0.0.1", "localhost", "::1"):
        ap.error("upstream must be a loopback address")
    UPSTREAM = ("127.0.0.1" if host == "localhost" else host, int(port))
    for f in a.fault:
        try:
            RULES.add(f)
        except (ValueError, re.error) as e:
            ap.error(str(e))
    srv = Server(("127.0.0.1", a.port), Handler)
    srv.verbose = a.verbose
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.replace(tmp, a.port_file)
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        STOP.set()
        srv.server_close()
    return 0


def on_sigterm(signum, frame):
    raise KeyboardInterrupt()


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, on_sigterm)
    sys.exit(main(sys.argv[1:]))
