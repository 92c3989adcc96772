#!/usr/bin/env python3
# faultserver.py: a loopback HTTP/1.1 server that injects faults on demand (hangs, stalls, resets, statuses, redirects) for tests.
"""Fault-injecting HTTP/1.1 test server (Python 3 standard library only).

Usage:
    python3 tests/tools/faultserver.py --port-file FILE [--host 127.0.0.1] [--port 0]
                                       [--tls-cert PEM --tls-key PEM] [-v]

Binds a loopback address (127.0.0.1 by default, port 0 = any free port),
writes the port number to FILE (atomically: temp file + rename) once it
listens, and serves until killed (SIGTERM/SIGINT). Each request runs in its
own thread, so a hanging request never blocks another. Keep-alive works for
every answer that has a Content-Length. With --tls-cert/--tls-key it speaks
HTTPS instead.

A request line in absolute form ("GET http://host:port/path HTTP/1.1", as
sent to a proxy) is served as if it were for /path, and /echo reports it as
"proxied": so one instance can stand in for an HTTP proxy.

Behaviour is chosen by the request path. Methods GET, HEAD, PUT, POST, PATCH
and DELETE all dispatch the same way (HEAD sends headers only). A request
body (Content-Length or chunked) is always read before answering.

Deterministic data: byte i of every generated body is (i % 251).

Hit counters are kept per path (without the query string); /_reset clears
them, /_hits?path=P returns the count for P as text.

Paths:
  /ok/<n>                   200 with n bytes of data (ignores Range)
  /range/<n>                n bytes with Range support: "bytes=a-" or
                            "bytes=a-b" -> 206 + Content-Range; else 200;
                            an unsatisfiable range -> 416
  /hang                     read the request, never answer (the thread ends
                            when the client closes, or after 5 minutes)
  /stall/<n>/<k>            200 with Content-Length n, send k bytes, then
                            stall until the client closes
  /reset/<k>                200 with Content-Length 2k+1, send k bytes, then
                            close with RST (SO_LINGER 0); k=0 resets before
                            any response byte
  /status/<code>?times=N    answer <code> N times for this path, then 200
                            "ok\n"; without times always <code>; &size=S
                            makes the <code> body S bytes of data
  /retry-after/<s>?times=N  429 with "Retry-After: <s>" N times (default 1),
                            then 200 "ok\n"; &date=1 sends the HTTP-date
                            now+s instead of delta-seconds
  /redirect?to=URL&code=C   redirect (C default 302) to URL
  /redirect-n/<k>?to=URL    a chain: redirect to /redirect-n/<k-1>, and at
                            0 to URL (or /ok/16)
  /echo-auth                200 with the Authorization header value, or
                            "none"
  /echo                     200 JSON: method, path, query, headers (list of
                            [name, value]), body_len, body_sha256, proxied
                            (absolute-form request line), peer_port (the
                            client's source port: equal ports on two
                            requests mean a reused connection)
  /headers?h=Name:value     200 "ok\n" with each h (repeatable, in order) as
                            a response header
  /flaky-body/<n>           first request for this path: Content-Length n,
                            send n/2 bytes, then RST; later requests behave
                            like /range/<n> (with ?norange=1: like
                            /ok/<n>, Range ignored; with ?badrange=1: 206
                            with a Content-Range that always starts at 0)
  /slowdrip/<n>/<ms>        Content-Length n, one byte every ms milliseconds
  /endless/<code>?to=URL    <code> (Location: URL when given) with no
                            Content-Length and a body that never ends, sent
                            as fast as the client reads (for 120 s at most)
  /endless-1xx              "102 Processing" answers that never end
  /drip-status/<code>/<ms>  <code> announcing a 1 GB body, one byte every
                            ms milliseconds, until the client gives up
  /many-headers/<n>         200 "ok\n" with n extra headers X-Many-<i>
  /big-headers/<n>/<size>   200 "ok\n" with n headers of size bytes each
  /upload?fail=N            read the body; answer 500 the first N times for
                            this path, then 201 JSON {"bytes": B,
                            "sha256": "<hex>"} of the body received
  /_reset                   clear every hit counter, 200 "ok\n"
  /_hits?path=P             200 with the hit count of path P
  anything else             404 "not found\n"
"""

import argparse
import email.utils
import hashlib
import http.server
import json
import os
import socket
import struct
import sys
import threading
import time
import urllib.parse

LOOPBACK = ("127.0.0.1", "::1", "localhost")

_lock = threading.Lock()
_hits = {}


def data_bytes(start, end):
    """Bytes start..end-1 of the deterministic stream."""
    return bytes((i % 251) for i in range(start, end))


def bump(path):
    """Count a hit on path and return the count before this hit."""
    with _lock:
        n = _hits.get(path, 0)
        _hits[path] = n + 1
        return n


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "faultserver/1"
    verbose = False

    def log_message(self, fmt, *args):
        if self.verbose:
            sys.stderr.write("faultserver: " + (fmt % args) + "\n")

    # -- helpers ---------------------------------------------------------

    def read_body(self):
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            out = bytearray()
            while True:
                line = self.rfile.readline(1024)
                if not line:
                    break
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while True:
                        trailer = self.rfile.readline(1024)
                        if trailer in (b"\r\n", b"\n", b""):
                            break
                    break
                out += self.rfile.read(size)
                self.rfile.readline(16)
            return bytes(out)
        n = int(self.headers.get("Content-Length", "0") or "0")
        return self.rfile.read(n) if n > 0 else b""

    def send(self, code, body=b"", headers=None, ctype="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or []):
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def wait_for_close(self, limit=300.0):
        """Block until the client closes the connection (or limit s)."""
        self.close_connection = True
        self.connection.settimeout(1.0)
        end = time.monotonic() + limit
        while time.monotonic() < end:
            try:
                if not self.connection.recv(65536):
                    return
            except socket.timeout:
                continue
            except OSError:
                return

    def rst(self):
        """Close the connection with a TCP RST."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
        except OSError:
            pass
        for f in (self.wfile, self.rfile, self.connection):
            try:
                f.close()
            except OSError:
                pass

    def serve_range(self, n):
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            spec = rng[len("bytes="):].split(",")[0].strip()
            first, _, last = spec.partition("-")
            try:
                a = int(first)
                b = int(last) if last else n - 1
            except ValueError:
                self.send(416, b"bad range\n")
                return
            if a >= n or b < a:
                self.send(416, b"unsatisfiable\n",
                          [("Content-Range", "bytes */%d" % n)])
                return
            b = min(b, n - 1)
            self.send(206, data_bytes(a, b + 1),
                      [("Content-Range", "bytes %d-%d/%d" % (a, b, n)),
                       ("Accept-Ranges", "bytes")],
                      "application/octet-stream")
            return
        self.send(200, data_bytes(0, n), [("Accept-Ranges", "bytes")],
                  "application/octet-stream")

    # -- dispatch --------------------------------------------------------

    def dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        proxied = bool(url.scheme)
        path = url.path
        query = urllib.parse.parse_qs(url.query)
        parts = [p for p in path.split("/") if p]
        body = self.read_body()
        hit = bump(path)

        def q(name, default=None):
            v = query.get(name)
            return v[0] if v else default

        def qint(name, default):
            try:
                return int(q(name, default))
            except (TypeError, ValueError):
                return default

        head = parts[0] if parts else ""
        args = parts[1:]
        try:
            if head == "ok" and len(args) == 1:
                self.send(200, data_bytes(0, int(args[0])), None,
                          "application/octet-stream")
            elif head == "range" and len(args) == 1:
                self.serve_range(int(args[0]))
            elif head == "hang":
                self.wait_for_close()
            elif head == "stall" and len(args) == 2:
                n, k = int(args[0]), int(args[1])
                self.send_response(200)
                self.send_header("Content-Length", str(n))
                self.end_headers()
                self.wfile.write(data_bytes(0, min(k, n)))
                self.wfile.flush()
                self.wait_for_close()
            elif head == "reset" and len(args) == 1:
                k = int(args[0])
                if k > 0:
                    self.send_response(200)
                    self.send_header("Content-Length", str(2 * k + 1))
                    self.end_headers()
                    self.wfile.write(data_bytes(0, k))
                    self.wfile.flush()
                    time.sleep(0.05)
                self.rst()
            elif head == "status" and len(args) == 1:
                code = int(args[0])
                times = qint("times", -1)
                if times < 0 or hit < times:
                    size = qint("size", -1)
                    body = (data_bytes(0, size) if size >= 0
                            else b"status %d\n" % code)
                    self.send(code, body)
                else:
                    self.send(200, b"ok\n")
            elif head == "retry-after" and len(args) == 1:
                secs = int(args[0])
                if hit < qint("times", 1):
                    if q("date"):
                        value = email.utils.formatdate(time.time() + secs,
                                                       usegmt=True)
                    else:
                        value = str(secs)
                    self.send(429, b"slow down\n", [("Retry-After", value)])
                else:
                    self.send(200, b"ok\n")
            elif head == "redirect" and not args:
                self.send(qint("code", 302), b"",
                          [("Location", q("to", "/ok/16"))])
            elif head == "redirect-n" and len(args) == 1:
                k = int(args[0])
                if k > 0:
                    loc = "/redirect-n/%d" % (k - 1)
                    if q("to"):
                        loc += "?" + urllib.parse.urlencode({"to": q("to")})
                else:
                    loc = q("to", "/ok/16")
                self.send(302, b"", [("Location", loc)])
            elif head == "echo-auth":
                value = self.headers.get("Authorization")
                self.send(200, (value if value is not None else "none")
                          .encode())
            elif head == "echo":
                doc = {
                    "method": self.command,
                    "path": path,
                    "query": url.query,
                    "headers": [[k, v] for k, v in self.headers.items()],
                    "body_len": len(body),
                    "body_sha256": hashlib.sha256(body).hexdigest(),
                    "proxied": proxied,
                    "peer_port": self.client_address[1],
                }
                self.send(200, json.dumps(doc).encode(), None,
                          "application/json")
            elif head == "headers" and not args:
                hdrs = []
                for h in query.get("h", []):
                    name, _, value = h.partition(":")
                    hdrs.append((name.strip(), value.strip()))
                self.send(200, b"ok\n", hdrs)
            elif head == "flaky-body" and len(args) == 1:
                n = int(args[0])
                if hit == 0:
                    self.send_response(200)
                    self.send_header("Content-Length", str(n))
                    self.send_header("Accept-Ranges", "bytes")
                    self.end_headers()
                    self.wfile.write(data_bytes(0, n // 2))
                    self.wfile.flush()
                    time.sleep(0.05)
                    self.rst()
                elif q("badrange"):
                    self.send(206, data_bytes(0, n),
                              [("Content-Range", "bytes 0-%d/%d" % (n - 1, n))],
                              "application/octet-stream")
                elif q("norange"):
                    self.send(200, data_bytes(0, n), None,
                              "application/octet-stream")
                else:
                    self.serve_range(n)
            elif head == "slowdrip" and len(args) == 2:
                n, ms = int(args[0]), int(args[1])
                self.send_response(200)
                self.send_header("Content-Length", str(n))
                self.end_headers()
                for i in range(n):
                    self.wfile.write(data_bytes(i, i + 1))
                    self.wfile.flush()
                    time.sleep(ms / 1000.0)
            elif head == "endless" and len(args) == 1:
                self.close_connection = True
                self.send_response(int(args[0]))
                if q("to"):
                    self.send_header("Location", q("to"))
                self.send_header("Content-Type", "text/plain")
                self.send_header("Connection", "close")
                self.end_headers()
                chunk = b"endless body " * 5000
                end = time.monotonic() + 120
                while time.monotonic() < end:
                    self.wfile.write(chunk)
                self.wfile.flush()
            elif head == "endless-1xx":
                self.close_connection = True
                end = time.monotonic() + 120
                while time.monotonic() < end:
                    self.wfile.write(b"HTTP/1.1 102 Processing\r\n\r\n")
                    self.wfile.flush()
            elif head == "drip-status" and len(args) == 2:
                self.close_connection = True
                code, ms = int(args[0]), int(args[1])
                self.send_response(code)
                self.send_header("Content-Length", str(10 ** 9))
                self.end_headers()
                end = time.monotonic() + 120
                while time.monotonic() < end:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(ms / 1000.0)
            elif head == "many-headers" and len(args) == 1:
                self.send(200, b"ok\n", [("X-Many-%d" % i, "v")
                                         for i in range(int(args[0]))])
            elif head == "big-headers" and len(args) == 2:
                n, size = int(args[0]), int(args[1])
                self.send(200, b"ok\n", [("X-Big-%d" % i, "b" * size)
                                         for i in range(n)])
            elif head == "upload":
                if hit < qint("fail", 0):
                    self.send(500, b"injected failure\n")
                else:
                    doc = {"bytes": len(body),
                           "sha256": hashlib.sha256(body).hexdigest()}
                    self.send(201, json.dumps(doc).encode(), None,
                              "application/json")
            elif head == "_reset":
                with _lock:
                    _hits.clear()
                self.send(200, b"ok\n")
            elif head == "_hits":
                with _lock:
                    n = _hits.get(q("path", ""), 0)
                self.send(200, b"%d\n" % n)
            else:
                self.send(404, b"not found\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except ValueError:
            self.send(400, b"bad request\n")

    do_GET = dispatch
    do_HEAD = dispatch
    do_PUT = dispatch
    do_POST = dispatch
    do_PATCH = dispatch
    do_DELETE = dispatch


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # Clients that give up mid-answer are the point of this server.
        pass


def main():
    ap = argparse.ArgumentParser(description="fault-injecting HTTP test server")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("-v", "--verbose", action="store_true")
    opts = ap.parse_args()
    if opts.host not in LOOPBACK and not opts.host.startswith("127."):
        sys.exit("faultserver: refusing non-loopback address %r" % opts.host)
    Handler.verbose = opts.verbose
    if ":" in opts.host:
        Server.address_family = socket.AF_INET6
    srv = Server((opts.host, opts.port), Handler)
    if opts.tls_cert:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(opts.tls_cert, opts.tls_key)
        # Handshake in the request thread, not in accept(): a client that
        # never completes it must not block the server.
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True,
                                     do_handshake_on_connect=False)
    tmp = opts.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, opts.port_file)
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    srv.server_close()


if __name__ == "__main__":
    main()
