#!/usr/bin/env python3
# tcpfault.py: loopback TCP proxy that injects per-connection faults (reset, stall, drip, truncate, wrong Content-Length, 5xx, bit flip).
"""TCP fault proxy for tests (Python 3 stdlib only).

    tcpfault.py --upstream 127.0.0.1:PORT --port-file FILE
                [--rules FILE] [--rule RULE]... [--seed N]
                [--stats-file FILE] [--latency-ms MS] [-v]

Listens on 127.0.0.1, port 0 (any free port, written to --port-file with
temp + rename once listening), one thread per direction of a connection,
and relays bytes to the upstream unchanged unless a rule says otherwise.
It knows just enough HTTP/1.1 to aim: every request line the client sends
(GET /v2/... HTTP/1.1 at the start of a line) picks the fault for the
response that follows it (clients such as curl do not pipeline, so the
response bytes after a request line belong to that request), and the
"badlen" and "5xx" faults write or rewrite a header block.

A RULE is a line of space-separated key=value words (the rules file holds
one a line, '#' starts a comment; it is re-read for every request, so a
test changes the schedule by rewriting the file):

    fault=reset|stall|drip|truncate|badlen|5xx|flip   what to do (required)
    conn=LIST      connection numbers (1-based, counted from the proxy's
                   start): "3", "2,5", "4-9"; default any
    prob=P         apply with probability P (random.Random(--seed))
    match=REGEX    re.search on the request line, e.g. "^GET\s.*/blobs/"
                   (no spaces: a rule is split on white space)
    times=N        apply to at most N requests (default 1; -1 forever);
                   a 5xx burst is times=N
    after=N        reset/stall/drip/truncate: response bytes (header
                   block included) passed first; flip: body offset
                   (default 0)
    seconds=S      stall: how long (default -1: until the client closes)
    ms=M           drip: one byte every M ms (default 1)
    bytes=N        drip: how many bytes are dripped (default 4096), then
                   the rest flows at full speed
    delta=D        badlen: add D to the Content-Length of the response
                   header block (default -1; may be positive)
    status=C       5xx: the status code answered (default 503)

Faults act on the response direction (upstream -> client):
    reset     pass `after` bytes, then close both sides with RST
    stall     pass `after` bytes, then forward nothing for `seconds`
    drip      pass `after` bytes, then `bytes` bytes one at a time
    truncate  pass `after` bytes, then close both sides cleanly (FIN)
    badlen    rewrite Content-Length in the first header block
    5xx       do not forward the request: answer it with `status`
              (Connection: close) and close the connection
    flip      invert the bits of the byte at offset `after` of the
              response body (counted after the header block, which must
              arrive in one piece): silent corruption that only a digest
              or signature check can catch

The first matching rule with uses left applies (rules are tried in order).
Counters (uses per rule text) survive a re-read of an unchanged file; a
new schedule (different text) starts with fresh counters and a random
stream seeded from (--seed, the schedule's text), so what `prob` draws in
one schedule does not depend on how many requests earlier schedules saw.

--latency-ms MS: a WAN-like round trip on every connection, faults or not:
each new connection waits MS before it is connected upstream (the TCP
handshake's round trip) and each request waits MS before it is forwarded
(its own round trip), so that the response to every request arrives MS
later than on loopback, and a request on a new connection 2*MS later.
Bandwidth is not limited. tests/bench/mirror_latency.sh uses it.

--stats-file FILE: rewritten (temp + rename) after every fault as JSON
{"connections": N, "injected": {"reset": n, ...}, "log": ["3 reset ..."]}.
"""

import argparse
import os
import random
import re
import socket
import struct
import sys
import threading
import time

KINDS = ("reset", "stall", "drip", "truncate", "badlen", "5xx", "flip")
LOCK = threading.Lock()
STATE = {"conns": 0, "used": {}, "injected": {k: 0 for k in KINDS},
         "log": [], "schedule": None}
ARGS = None
RNG = None


def log(msg):
    if ARGS.verbose:
        sys.stderr.write("tcpfault: %s\n" % msg)
        sys.stderr.flush()


def parse_rule(line):
    rule = {}
    for word in line.split():
        k, sep, v = word.partition("=")
        if not sep:
            raise ValueError("rule word %r is not key=value" % word)
        rule[k] = v
    if rule.get("fault") not in KINDS:
        raise ValueError("rule %r: fault must be one of %s" % (line, KINDS))
    rule["_text"] = line
    return rule


def in_list(n, spec):
    for part in spec.split(","):
        lo, sep, hi = part.partition("-")
        if sep:
            if int(lo) <= n <= int(hi):
                return True
        elif n == int(part):
            return True
    return False


def load_rules():
    lines = list(ARGS.rule)
    if ARGS.rules:
        try:
            with open(ARGS.rules) as f:
                lines += f.read().splitlines()
        except FileNotFoundError:
            pass
    rules = []
    lines = [line.split("#", 1)[0].strip() for line in lines]
    schedule = "\n".join(line for line in lines if line)
    global RNG
    with LOCK:
        if schedule != STATE["schedule"]:
            STATE["schedule"] = schedule
            STATE["used"] = {}
            RNG = random.Random("%d\n%s" % (ARGS.seed, schedule))
    for line in lines:
        if line:
            try:
                rules.append(parse_rule(line))
            except ValueError as e:
                log("ignored: %s" % e)
    return rules


def write_stats():
    if not ARGS.stats_file:
        return
    import json
    tmp = ARGS.stats_file + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"connections": STATE["conns"],
                   "injected": STATE["injected"],
                   "log": STATE["log"]}, f)
    os.replace(tmp, ARGS.stats_file)


def choose(n, first_line):
    """The rule for connection n (or None); counts its use."""
    rules = load_rules()
    with LOCK:
        for r in rules:
            if "conn" in r and not in_list(n, r["conn"]):
                continue
            if "match" in r and not re.search(r["match"], first_line):
                continue
            times = int(r.get("times", "1"))
            used = STATE["used"].get(r["_text"], 0)
            if times >= 0 and used >= times:
                continue
            if "prob" in r and RNG.random() >= float(r["prob"]):
                continue
            STATE["used"][r["_text"]] = used + 1
            STATE["injected"][r["fault"]] += 1
            STATE["log"].append("%d %s %s" % (n, r["fault"], first_line))
            write_stats()
            return r
    return None


def hard_close(*socks):
    for s in socks:
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                         struct.pack("ii", 1, 0))
            # Wakes the other direction's recv(): the RST goes out when
            # the last reference to the socket is dropped.
            s.shutdown(socket.SHUT_RD)
        except OSError:
            pass
        try:
            s.close()
        except OSError:
            pass


def soft_close(*socks):
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            s.close()
        except OSError:
            pass


REQUEST_LINE = re.compile(
    rb"(?m)^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (\S+) HTTP/1\.[01]\r$")


class Conn:
    """One proxied connection; the rule armed for the current response."""

    def __init__(self, client, up, n):
        self.client, self.up, self.n = client, up, n
        self.lock = threading.Lock()
        self.rule = None
        self.gen = 0

    def arm(self, rule):
        with self.lock:
            self.rule = rule
            self.gen += 1

    def current(self):
        with self.lock:
            return self.rule, self.gen


def inject_status(conn, rule):
    code = int(rule.get("status", "503"))
    body = b'{"errors":[{"code":"UNAVAILABLE","message":"tcpfault"}]}'
    try:
        conn.client.sendall(b"HTTP/1.1 %d Injected\r\nContent-Type: application/json\r\n"
                            b"Content-Length: %d\r\nConnection: close\r\n\r\n"
                            % (code, len(body)) + body)
    except OSError:
        pass
    soft_close(conn.client, conn.up)


def pump_up(conn):
    """client -> upstream; each request line seen picks the next fault.

    HTTP/1.1 clients (curl) do not pipeline: a request is sent only once
    the previous response was read, so the response bytes that follow a
    request line belong to it."""
    latency = ARGS.latency_ms / 1000.0
    try:
        while True:
            data = conn.client.recv(65536)
            if not data:
                conn.up.shutdown(socket.SHUT_WR)
                return
            m = REQUEST_LINE.search(data)
            if m and latency > 0:
                time.sleep(latency)
            if m:
                line = m.group(0).rstrip(b"\r").decode("latin-1", "replace")
                log("conn %d: %.3f %s" % (conn.n, time.monotonic(), line))
                rule = choose(conn.n, line)
                if rule:
                    log("conn %d: %s on %r" % (conn.n, rule["_text"], line))
                if rule and rule["fault"] == "5xx":
                    inject_status(conn, rule)
                    return
                conn.arm(rule)
            conn.up.sendall(data)
    except OSError:
        pass


def rewrite_length(head, delta):
    m = re.search(rb"(?im)^content-length:[ \t]*(\d+)", head)
    if not m:
        return head
    value = max(0, int(m.group(1)) + delta)
    return head[:m.start(1)] + str(value).encode() + head[m.end(1):]


def pump_down(conn):
    """upstream -> client, applying the armed rule to each response."""
    client, up, n = conn.client, conn.up, conn.n
    gen = 0
    rule, kind, after = None, None, 0
    sent, head, head_done, dripped = 0, b"", True, 0
    stalled = flipped = False
    body_at = None
    try:
        while True:
            data = up.recv(65536)
            if not data:
                soft_close(client, up)
                return
            r, g = conn.current()
            if g != gen:
                gen, rule = g, r
                kind = rule["fault"] if rule else None
                after = int(rule.get("after", "0")) if rule else 0
                sent = 0
                head = b""
                head_done = kind != "badlen"
                dripped = 0
                stalled = flipped = False
                body_at = None
            if not head_done:
                head += data
                end = head.find(b"\r\n\r\n")
                if end < 0 and len(head) < 65536:
                    continue
                head = rewrite_length(head[:end + 4], int(rule.get("delta", "-1"))) + head[end + 4:]
                head_done = True
                data, head = head, b""
            if kind == "flip" and not flipped and body_at is None:
                end = data.find(b"\r\n\r\n") if data.startswith(b"HTTP/") else -4
                body_at = sent + end + 4
            if kind == "flip" and not flipped and sent + len(data) > body_at + after:
                i = body_at + after - sent
                data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]
                flipped = True
                log("conn %d: flipped byte %d" % (n, after))
            if kind in ("reset", "truncate", "stall", "drip") and sent + len(data) > after:
                keep = max(0, after - sent)
                if keep:
                    client.sendall(data[:keep])
                    sent += keep
                data = data[keep:]
                if kind == "reset":
                    log("conn %d: reset after %d bytes" % (n, sent))
                    hard_close(client, up)
                    return
                if kind == "truncate":
                    log("conn %d: truncated after %d bytes" % (n, sent))
                    soft_close(client, up)
                    return
                if kind == "stall" and not stalled:
                    stalled = True
                    secs = float(rule.get("seconds", "-1"))
                    log("conn %d: stall after %d bytes for %ss" % (n, sent, secs))
                    deadline = time.monotonic() + secs if secs >= 0 else None
                    while deadline is None or time.monotonic() < deadline:
                        # Until the client goes away (or the time is up).
                        try:
                            client.settimeout(0.2)
                            if client.recv(1, socket.MSG_PEEK) == b"":
                                soft_close(client, up)
                                return
                        except socket.timeout:
                            pass
                        except OSError:
                            soft_close(client, up)
                            return
                    client.settimeout(None)
                if kind == "drip":
                    limit = int(rule.get("bytes", "4096"))
                    delay = float(rule.get("ms", "1")) / 1000.0
                    while data and dripped < limit:
                        client.sendall(data[:1])
                        data = data[1:]
                        dripped += 1
                        sent += 1
                        time.sleep(delay)
            if data:
                client.sendall(data)
                sent += len(data)
    except OSError:
        soft_close(client, up)


def handle(client, n):
    host, port = ARGS.upstream.rsplit(":", 1)
    if ARGS.latency_ms > 0:
        time.sleep(ARGS.latency_ms / 1000.0)
    try:
        up = socket.create_connection((host, int(port)), timeout=10)
        up.settimeout(None)
        up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError as e:
        log("conn %d: upstream: %s" % (n, e))
        hard_close(client)
        return
    conn = Conn(client, up, n)
    threading.Thread(target=pump_up, args=(conn,), daemon=True).start()
    pump_down(conn)


def main():
    global ARGS, RNG
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--rules")
    ap.add_argument("--rule", action="append", default=[])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stats-file")
    ap.add_argument("--latency-ms", type=float, default=0.0)
    ap.add_argument("-v", "--verbose", action="store_true")
    ARGS = ap.parse_args()
    if not ARGS.upstream.startswith(("127.", "localhost:", "[::1]:")):
        sys.exit("tcpfault: the upstream must be a loopback address")
    for r in ARGS.rule:
        parse_rule(r)
    load_rules()
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(128)
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
    os.replace(tmp, ARGS.port_file)
    write_stats()
    parent = os.getppid()
    ls.settimeout(1.0)
    while True:
        try:
            client, _ = ls.accept()
        except socket.timeout:
            if os.getppid() != parent:
                return
            continue
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with LOCK:
            STATE["conns"] += 1
            n = STATE["conns"]
        threading.Thread(target=handle, args=(client, n), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
