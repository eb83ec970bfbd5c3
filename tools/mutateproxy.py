#!/usr/bin/env python3
"""mutateproxy: a reply-mutating HTTP/1.1 relay for r2up's random reliability runs (issue 28 item 4).

Python 3 stdlib only (asyncio), loopback only. Each request is forwarded unchanged to the
upstream S3 server (one upstream connection per request); the whole reply is read, and with
probability --rate it is changed in one random way before it goes back:

  status        the status code replaced (500, 503, 429, 404, 403, 400, 200, 206, 301, 412)
  drop-header   one header left out (ETag, Content-Length, Content-Range, Content-Type, ...)
  double-header one header sent twice, the second time with another value
  truncate      the body cut short (the head still promises all of it), then the connection closed
  flip          one bit of one body byte flipped
  bad-chunked   the body sent chunked with a wrong chunk size or no last chunk
  delay         the reply held --delay-seconds (past the client's timeouts), then sent
  cut-head      the head cut off mid-line, then the connection closed

Every reply goes out with "Connection: close". Decisions come from random.Random("SEED:N")
for the N-th request, so a sequential client gets the same mutations for the same seed.
The first stdout line is "PORT <n>". With --log, one JSON line per request (and its
mutation). It stops after --max-seconds and on SIGTERM/SIGINT.

    python3 tools/mutateproxy.py --upstream 127.0.0.1:18306 --seed 7 --rate 0.25 --log m.jsonl
"""
import argparse
import asyncio
import contextlib
import ipaddress
import json
import random
import signal
import socket
import sys
import time

MUTATIONS = ["status", "drop-header", "double-header", "truncate", "flip", "bad-chunked", "delay", "cut-head"]
STATUSES = [(500, "Internal Server Error"), (503, "Service Unavailable"), (429, "Too Many Requests"),
            (404, "Not Found"), (403, "Forbidden"), (400, "Bad Request"), (200, "OK"),
            (206, "Partial Content"), (301, "Moved Permanently"), (412, "Precondition Failed")]
HEADERS = ["etag", "content-length", "content-range", "content-type", "last-modified",
           "x-amz-mp-parts-count", "date", "server"]


async def read_head(reader):
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw[:-4].decode("latin-1").split("\r\n")
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers.append((name.strip(), value.strip()))
    return lines[0], headers


def header(headers, name):
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


async def read_body(reader, headers, head_only):
    if head_only:
        return b""
    if "chunked" in (header(headers, "transfer-encoding") or "").lower():
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass
                return bytes(body)
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    length = header(headers, "content-length")
    if length is not None:
        return await reader.readexactly(int(length))
    return await reader.read()


class Relay:
    def __init__(self, a):
        self.a = a
        self.n = 0
        self.counts = {m: 0 for m in MUTATIONS}
        self.counts["requests"] = 0
        self.log = open(a.log, "a", buffering=1) if a.log else None

    def emit(self, record):
        if self.log:
            self.log.write(json.dumps(record) + "\n")

    async def handle(self, creader, cwriter):
        try:
            await self.one(creader, cwriter)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, OSError):
            pass
        finally:
            with contextlib.suppress(Exception):
                cwriter.close()

    async def one(self, creader, cwriter):
        start, headers = await read_head(creader)
        method = start.split(" ")[0]
        body = await read_body(creader, headers, False) if header(headers, "content-length") or \
            "chunked" in (header(headers, "transfer-encoding") or "").lower() else b""
        self.n += 1
        n = self.n
        self.counts["requests"] += 1
        rng = random.Random(f"{self.a.seed}:{n}")
        mutation = rng.choice(MUTATIONS) if rng.random() < self.a.rate else None
        if mutation == "delay" and rng.random() >= self.a.delay_share:
            mutation = None   # delays are slow: only a share of the draws keeps them
        ureader, uwriter = await asyncio.open_connection(self.a.host, self.a.port, limit=1 << 20)
        try:
            out = [start] + [f"{k}: {v}" for k, v in headers if k.lower() != "connection"] + ["Connection: close"]
            uwriter.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body)
            await uwriter.drain()
            status_line, rheaders = await read_head(ureader)
            while status_line.split(" ")[1].startswith("1"):
                status_line, rheaders = await read_head(ureader)
            status = int(status_line.split(" ")[1])
            rbody = await read_body(ureader, rheaders, method == "HEAD" or status in (204, 304))
        finally:
            with contextlib.suppress(Exception):
                uwriter.close()
        rheaders = [(k, v) for k, v in rheaders if k.lower() not in ("connection", "transfer-encoding")]
        if method != "HEAD" and header(rheaders, "content-length") is None:
            rheaders.append(("Content-Length", str(len(rbody))))
        detail = {}
        chunked_break = None
        cut_body = None
        cut_head = None
        if mutation == "status":
            code, reason = rng.choice(STATUSES)
            detail = {"from": status, "to": code}
            status_line = f"HTTP/1.1 {code} {reason}"
        elif mutation == "drop-header":
            present = [h for h in HEADERS if header(rheaders, h) is not None]
            if present:
                name = rng.choice(present)
                rheaders = [(k, v) for k, v in rheaders if k.lower() != name]
                detail = {"header": name}
            else:
                mutation = None
        elif mutation == "double-header":
            present = [h for h in HEADERS if header(rheaders, h) is not None]
            if present:
                name = rng.choice(present)
                value = header(rheaders, name)
                other = {"etag": '"00000000000000000000000000000000"', "content-length": str(max(0, len(rbody) - 1)),
                         "content-range": "bytes 0-0/1"}.get(name, value + "x")
                rheaders.append((name, other))
                detail = {"header": name, "second": other}
            else:
                mutation = None
        elif mutation == "truncate":
            if rbody:
                cut_body = rng.randrange(0, len(rbody))
                detail = {"kept": cut_body, "of": len(rbody)}
            else:
                mutation = None
        elif mutation == "flip":
            if rbody:
                b = bytearray(rbody)
                i = rng.randrange(0, len(b))
                b[i] ^= 1 << rng.randrange(0, 8)
                rbody = bytes(b)
                detail = {"offset": i}
            else:
                mutation = None
        elif mutation == "bad-chunked":
            if method != "HEAD":
                rheaders = [(k, v) for k, v in rheaders if k.lower() != "content-length"]
                rheaders.append(("Transfer-Encoding", "chunked"))
                chunked_break = rng.choice(["wrong-size", "no-last-chunk"])
                detail = {"how": chunked_break}
            else:
                mutation = None
        elif mutation == "delay":
            detail = {"seconds": self.a.delay_seconds}
        elif mutation == "cut-head":
            cut_head = True
        if mutation:
            self.counts[mutation] += 1
        self.emit({"n": n, "method": method, "target": start.split(" ")[1][:200], "status": status,
                   "mutation": mutation, **detail})
        head = ("\r\n".join([status_line] + [f"{k}: {v}" for k, v in rheaders] + ["Connection: close"])
                + "\r\n\r\n").encode("latin-1")
        if mutation == "delay":
            await asyncio.sleep(self.a.delay_seconds)
        if cut_head:
            cwriter.write(head[:rng.randrange(1, max(2, len(head) - 4))])
            await cwriter.drain()
            return
        cwriter.write(head)
        if method == "HEAD":
            await cwriter.drain()
            return
        if cut_body is not None:
            cwriter.write(rbody[:cut_body])
        elif chunked_break == "wrong-size":
            cwriter.write(b"%x\r\n" % (len(rbody) + 7) + rbody + b"\r\n0\r\n\r\n")
        elif chunked_break == "no-last-chunk":
            if rbody:
                cwriter.write(b"%x\r\n" % len(rbody) + rbody + b"\r\n")
        else:
            cwriter.write(rbody)
        await cwriter.drain()


def loopback(host, what):
    for info in socket.getaddrinfo(host, None):
        if not ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback:
            raise SystemExit(f"mutateproxy: {what} {host} is not a loopback address")


async def amain(a):
    relay = Relay(a)
    server = await asyncio.start_server(relay.handle, a.listen, a.listen_port, limit=1 << 20)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=a.max_seconds)
    server.close()
    relay.emit({"summary": relay.counts})
    print(json.dumps({"summary": relay.counts}), file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description="Reply-mutating HTTP/1.1 relay (loopback only).")
    ap.add_argument("--upstream", required=True, help="HOST:PORT of the real server (loopback)")
    ap.add_argument("--listen", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, dest="listen_port")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rate", type=float, default=0.25, help="share of replies mutated")
    ap.add_argument("--delay-seconds", type=float, default=35.0, help="how long a delayed reply is held")
    ap.add_argument("--delay-share", type=float, default=0.2, help="share of drawn delays that are kept")
    ap.add_argument("--log")
    ap.add_argument("--max-seconds", type=float, default=900.0)
    a = ap.parse_args()
    host, _, port = a.upstream.rpartition(":")
    a.host, a.port = host, int(port)
    loopback(a.host, "--upstream")
    loopback(a.listen, "--listen")
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    asyncio.run(amain(a))


if __name__ == "__main__":
    main()
