#!/usr/bin/env python3
# sigserver.py: a loopback static-file signature store for tests, with stores that hang, stall mid-body or reset.
"""Signature-store test server (Python 3 standard library only).

Usage:
    python3 tests/tools/sigserver.py --root DIR --port-file FILE [--port 0]

Binds 127.0.0.1 (port 0 = any free port), writes the port to FILE
(temp file + rename) once it listens, serves until killed (SIGTERM/SIGINT)
or until its parent process is gone.
Each request runs in its own thread.

Paths (GET and HEAD):
  /files/<rel>     the file DIR/<rel> (200), or 404; ".." and absolute
                   parts are refused (404). So /files is a signature store
                   base URL: /files/sha256=<hex>/signature-<n>.
  /hang/<any>      read the request, never answer (until the client closes
                   or 5 minutes passed)
  /stall/<any>     200 with Content-Length 1000, send 10 bytes, then stall
                   until the client closes
  /reset/<any>     close the connection with RST before any response byte
  /_log            200, the paths requested so far (one per line, in order)
  anything else    404
"""

import argparse
import os
import signal
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = []
LOG_LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = "."

    def log_message(self, fmt, *args):  # quiet
        pass

    def _send(self, code, body, ctype="application/octet-stream"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _wait_closed(self, limit):
        end = time.monotonic() + limit
        self.connection.settimeout(0.5)
        while time.monotonic() < end:
            try:
                if self.connection.recv(1) == b"":
                    return
            except socket.timeout:
                continue
            except OSError:
                return

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path != "/_log":
            with LOG_LOCK:
                LOG.append(path)
        if path == "/_log":
            with LOG_LOCK:
                text = "".join(p + "\n" for p in LOG)
            self._send(200, text.encode(), "text/plain")
            return
        if path.startswith("/hang/"):
            self._wait_closed(300)
            self.close_connection = True
            return
        if path.startswith("/stall/"):
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"\x00" * 10)
            self.wfile.flush()
            self._wait_closed(300)
            self.close_connection = True
            return
        if path.startswith("/reset/"):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        if path.startswith("/files/"):
            rel = path[len("/files/"):]
            parts = rel.split("/")
            if rel and all(p not in ("", ".", "..") for p in parts):
                full = os.path.join(self.root, *parts)
                if os.path.isfile(full):
                    with open(full, "rb") as f:
                        self._send(200, f.read())
                    return
        self._send(404, b"not found\n", "text/plain")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    Handler.root = os.path.abspath(a.root)
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # never outlive the test that started us (e.g. when it crashed)
    parent = os.getppid()

    def watchdog():
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    try:
        srv.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass


if __name__ == "__main__":
    main()
