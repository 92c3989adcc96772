#!/usr/bin/env python3
# graphserver.py: a loopback update-graph (Cincinnati) server for tests, with recorded-shape graphs and hang/500/slow/flaky fault modes.
"""Update-graph test server (Python 3 standard library only).

Usage:
    python3 tests/tools/graphserver.py --port-file FILE [--port 0]
    python3 tests/tools/graphserver.py --dump CHANNEL ARCH   (print a graph)

Binds 127.0.0.1 only (port 0 = any free port), writes the port to FILE
(temp file + rename) once it listens, serves until killed (SIGTERM/SIGINT).

Paths (GET):
  [/MODE]/graph?channel=C&arch=A   the graph of channel C for arch A, in the
        shape api.openshift.com answers: {"nodes":[{"version","payload",
        "metadata"}],"edges":[[i,j]...],"conditionalEdges":[{"edges":
        [{"from","to"}],"risks":[...]}]}. An unknown channel gives an empty
        graph (as the real service does). Without "Accept: application/json"
        the answer is 406. MODE:
          (none)  answer at once
          hang    read the request, never answer (until the client closes
                  or 5 minutes passed)
          500     always HTTP 500
          slow    answer after 1 second
          flaky   HTTP 500 for the first request of each channel, then 200
  /_count          200, the number of /graph requests so far
  anything else    404

The fixture channels (amd64 and arm64, payload digests derived from the
version and arch):
  stable-4.14   4.14.1 4.14.2 4.14.5 4.14.9 4.14.10 with a conditional
                update 4.14.1 -> 4.14.9 (risk ExampleRisk)
  stable-4.15   4.14.9 4.14.10 4.15.0 4.15.1 (4.14.9 and 4.14.10 are in
                two channels)
  candidate-4.15  4.14.10 4.15.0-rc.1 4.15.0-rc.2 4.15.0 4.15.1
  empty-4.16    no releases
"""

import argparse
import hashlib
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

EDGES = [
    ("4.14.1", "4.14.2"), ("4.14.1", "4.14.5"), ("4.14.2", "4.14.5"),
    ("4.14.2", "4.14.9"), ("4.14.5", "4.14.9"), ("4.14.5", "4.14.10"),
    ("4.14.9", "4.14.10"), ("4.14.9", "4.15.0"), ("4.14.10", "4.15.1"),
    ("4.15.0", "4.15.1"), ("4.14.10", "4.15.0-rc.1"),
    ("4.15.0-rc.1", "4.15.0-rc.2"), ("4.15.0-rc.2", "4.15.0"),
]
COND = [
    {
        "edges": [{"from": "4.14.1", "to": "4.14.9"}],
        "risks": [{
            "url": "https://example.test/risks/ExampleRisk",
            "name": "ExampleRisk",
            "message": "Clusters on example infrastructure may degrade.",
            "matchingRules": [{
                "type": "PromQL",
                "promql": {"promql": "cluster_infrastructure_provider{type=\"Example\"}"},
            }],
        }],
    },
    # Names a release outside every channel: a client drops it.
    {"edges": [{"from": "4.13.0", "to": "4.14.1"}],
     "risks": [{"url": "https://example.test/r", "name": "Old",
                "message": "old", "matchingRules": [{"type": "Always"}]}]},
]
# Listed out of version order on purpose (the service does too).
CHANNELS = {
    "stable-4.14": ["4.14.10", "4.14.1", "4.14.5", "4.14.2", "4.14.9"],
    "stable-4.15": ["4.15.1", "4.14.9", "4.15.0", "4.14.10"],
    "candidate-4.15": ["4.15.0", "4.14.10", "4.15.0-rc.2", "4.15.1",
                       "4.15.0-rc.1"],
    "empty-4.16": [],
}
COUNT = [0]
SEEN = set()
LOCK = threading.Lock()


def payload(version, arch):
    h = hashlib.sha256(("%s+%s" % (version, arch)).encode()).hexdigest()
    return "quay.io/openshift-release-dev/ocp-release@sha256:" + h


def graph(channel, arch):
    versions = CHANNELS.get(channel, [])
    if arch not in ("amd64", "arm64"):
        versions = []
    index = {v: i for i, v in enumerate(versions)}
    nodes = []
    for v in versions:
        chans = sorted(c for c, vs in CHANNELS.items() if v in vs)
        nodes.append({
            "version": v,
            "payload": payload(v, arch),
            "metadata": {
                "io.openshift.upgrades.graph.release.channels": ",".join(chans),
                "io.openshift.upgrades.graph.release.manifestref":
                    payload(v, arch).split("@", 1)[1],
                "url": "https://example.test/errata/" + v,
            },
        })
    edges = [[index[a], index[b]] for a, b in EDGES
             if a in index and b in index]
    cond = []
    for ce in COND:
        kept = [e for e in ce["edges"]
                if e["from"] in index and e["to"] in index]
        if ce["edges"][0]["from"] == "4.13.0" and versions:
            kept = ce["edges"]  # the out-of-channel case, on purpose
        if kept:
            cond.append({"edges": kept, "risks": ce["risks"]})
    return {"nodes": nodes, "edges": edges, "conditionalEdges": cond}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def _send(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _hang(self):
        end = time.monotonic() + 300
        self.connection.settimeout(0.5)
        while time.monotonic() < end:
            try:
                if self.connection.recv(1) == b"":
                    return
            except OSError:
                continue

    def do_GET(self):
        u = urlsplit(self.path)
        parts = u.path.strip("/").split("/")
        if u.path == "/_count":
            with LOCK:
                n = COUNT[0]
            self._send(200, ("%d\n" % n).encode(), "text/plain")
            return
        mode = ""
        if len(parts) == 2 and parts[1] == "graph":
            mode = parts[0]
        elif parts != ["graph"]:
            self._send(404, b"not found\n", "text/plain")
            return
        q = parse_qs(u.query)
        channel = q.get("channel", [""])[0]
        arch = q.get("arch", ["amd64"])[0]
        with LOCK:
            COUNT[0] += 1
            first = channel not in SEEN
            SEEN.add(channel)
        if mode == "hang":
            self._hang()
            self.close_connection = True
            return
        if mode == "500" or (mode == "flaky" and first):
            self._send(500, b'{"kind":"Error","value":"internal"}')
            return
        if mode == "slow":
            time.sleep(1.0)
        if "application/json" not in self.headers.get("Accept", ""):
            self._send(406, b'{"kind":"InvalidContentType"}')
            return
        if not channel:
            self._send(400, b'{"kind":"MissingParams","value":"channel"}')
            return
        self._send(200, json.dumps(graph(channel, arch)).encode())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--dump", nargs=2, metavar=("CHANNEL", "ARCH"))
    a = ap.parse_args()
    if a.dump:
        json.dump(graph(a.dump[0], a.dump[1]), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return
    if not a.port_file:
        ap.error("--port-file is required")
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
