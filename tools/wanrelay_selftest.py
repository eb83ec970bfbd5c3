#!/usr/bin/env python3
"""Self-test of tools/wanrelay.py against a real S3 server (stdlib only), about 25 s.

    scripts/seaweedfs.sh start && . .seaweedfs/env && python3 tools/wanrelay_selftest.py

Checks, each with a client of its own and the relay's --stats:
  latency    a new connection costs setup + 1 round trip, a reused one 1 round trip,
             --reply-delay-ms adds its delay once per reply; a chunked PUT (the AWS CLI
             over HTTPS) is counted, and its delay goes on the final reply, not the 100 Continue;
             a reply the server sends as it closes the connection still arrives
  bandwidth  2 MiB at 8 Mbit/s takes ~2.1 s; the client's send returns close to the end
             (back-pressure: the relay does not swallow the body), and after --drop-after
             the same body takes ten times longer
  faults     --slowdown-every 3 answers the 3rd request 503 SlowDown (nothing stored),
             --key-429 1 answers a second PUT to one key within a second 429, one after
             the second has passed 200; --stats counts the payload PUT twice
Exit 0 when every check passed.
"""
import argparse
import base64
import hashlib
import http.client
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.dont_write_bytecode = True  # keep tools/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3facts import Client, b64md5, sign, xml_code  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def start_relay(upstream, stats, extra):
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "wanrelay.py"), "--upstream", upstream,
                          "--stats", stats, "--max-seconds", "120"] + extra,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.startswith("PORT "):
        raise SystemExit(f"wanrelay did not start: {line!r} {p.stderr.read()}")
    return p, int(line.split()[1])


def stop_relay(p, stats):
    p.terminate()
    p.communicate(timeout=10)
    with open(stats) as f:
        return json.load(f)


class Conn:
    def __init__(self, port, a, sndbuf=None):
        self.port, self.a = port, a
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.c.connect()
        if sndbuf:
            self.c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)

    def put(self, path, body, close=False):
        a = self.a
        h = sign("PUT", f"127.0.0.1:{self.port}", path, "", {"Content-MD5": b64md5(body)},
                 "UNSIGNED-PAYLOAD", a.access_key, a.secret_key, a.region)
        h["content-length"] = str(len(body))
        if close:
            h["connection"] = "close"  # the server closes right after its reply
        t0 = time.monotonic()
        self.c.putrequest("PUT", path, skip_host=True, skip_accept_encoding=True)
        for k, v in h.items():
            self.c.putheader(k, v)
        self.c.endheaders()
        self.c.send(body)
        sent = time.monotonic() - t0
        r = self.c.getresponse()
        data = r.read()
        return r.status, xml_code(data), sent, time.monotonic() - t0


def chunked_put(port, a, path, body):
    """A PUT as the AWS CLI sends one over HTTPS: Expect: 100-continue, then an aws-chunked
    body with a trailing CRC-32 inside HTTP chunks. Returns (status, seconds to the 100
    Continue, seconds from the body to the final reply)."""
    crc = base64.b64encode(struct.pack(">I", zlib.crc32(body))).decode()
    h = sign("PUT", f"127.0.0.1:{port}", path, "",
             {"content-encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(body)),
              "x-amz-trailer": "x-amz-checksum-crc32", "x-amz-sdk-checksum-algorithm": "CRC32"},
             "STREAMING-UNSIGNED-PAYLOAD-TRAILER", a.access_key, a.secret_key, a.region)
    head = f"PUT {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items())
    head += "transfer-encoding: chunked\r\nexpect: 100-continue\r\n\r\n"
    inner = b"".join(b"%x\r\n" % len(body[i:i + 65536]) + body[i:i + 65536] + b"\r\n"
                     for i in range(0, len(body), 65536))
    inner += b"0\r\nx-amz-checksum-crc32:" + crc.encode() + b"\r\n\r\n"
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    t0 = time.monotonic()
    s.sendall(head.encode())
    interim = b""
    while b"\r\n\r\n" not in interim:
        got = s.recv(4096)
        if not got:
            return 0, None, None
        interim += got
    to_continue = time.monotonic() - t0
    if not interim.startswith(b"HTTP/1.1 100 "):
        return int(interim.split(b" ")[1]), to_continue, None
    t1 = time.monotonic()
    for i in range(0, len(inner), 50000):
        part = inner[i:i + 50000]
        s.sendall(b"%x\r\n" % len(part) + part + b"\r\n")
    s.sendall(b"0\r\n\r\n")
    r = http.client.HTTPResponse(s)
    r.begin()
    r.read()
    s.close()
    return r.status, to_continue, time.monotonic() - t1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", default=os.environ.get("R2UP_ENDPOINT"))
    ap.add_argument("--bucket", default=os.environ.get("R2UP_BUCKET", "r2up-test"))
    ap.add_argument("--access-key", default=os.environ.get("AWS_ACCESS_KEY_ID"))
    ap.add_argument("--secret-key", default=os.environ.get("AWS_SECRET_ACCESS_KEY"))
    ap.add_argument("--region", default=os.environ.get("AWS_REGION", "us-east-1"))
    a = ap.parse_args()
    if not (a.endpoint and a.access_key and a.secret_key):
        ap.error("source the server's env file first (scripts/seaweedfs.sh env)")
    direct = Client(a.endpoint, a.access_key, a.secret_key, a.region)
    tmp = tempfile.mkdtemp(prefix="wanrelay-selftest.")
    run = f"/{a.bucket}/wrst-{int(time.time())}-{os.getpid()}"
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    # Latency: 100 ms round trips, 2 of set-up, then 300 ms reply delay.
    stats = os.path.join(tmp, "lat.json")
    p, port = start_relay(a.endpoint, stats, ["--rtt-ms", "100", "--setup-rtts", "2"])
    c = Conn(port, a)
    s1, _, _, first = c.put(f"{run}/l1", b"x" * 1000)
    s2, _, _, second = c.put(f"{run}/l2", b"x" * 1000)
    stop_relay(p, stats)
    check(s1 == 200 and 0.29 < first < 0.45, f"new connection: 200 in setup + 1 RTT (~0.30 s): {s1} {first:.3f} s")
    check(s2 == 200 and 0.095 < second < 0.16, f"reused connection: 200 in 1 RTT (~0.10 s): {s2} {second:.3f} s")
    p, port = start_relay(a.endpoint, stats, ["--rtt-ms", "100", "--setup-rtts", "0", "--reply-delay-ms", "300"])
    c = Conn(port, a)
    times = [c.put(f"{run}/d{i}", b"y" * 1000)[3] for i in range(2)]
    stop_relay(p, stats)
    check(all(0.395 < t < 0.55 for t in times), f"reply delay 300 ms + 1 RTT per reply (~0.40 s): {times}")
    p, port = start_relay(a.endpoint, stats, ["--rtt-ms", "100", "--setup-rtts", "0", "--reply-delay-ms", "300"])
    try:
        cs, _, _, closing = Conn(port, a).put(f"{run}/closing", b"c" * 1000, close=True)
    except (http.client.HTTPException, OSError) as e:
        cs, closing = repr(e), 0.0
    stop_relay(p, stats)
    check(cs == 200 and 0.395 < closing < 0.55,
          f"a reply the server sends as it closes still arrives, delayed (~0.40 s): {cs} {closing:.3f} s")
    # The AWS CLI over HTTPS: the relay parses its chunked body, counts the request, and
    # delays the final reply, not the 100 Continue.
    p, port = start_relay(a.endpoint, stats, ["--rtt-ms", "100", "--setup-rtts", "0", "--reply-delay-ms", "300"])
    chunked_body = os.urandom(150000)
    cs, to_continue, to_reply = chunked_put(port, a, f"{run}/chunked", chunked_body)
    st = stop_relay(p, stats)
    check(cs == 200 and to_continue is not None and 0.095 < to_continue < 0.2 and 0.395 < to_reply < 0.55,
          f"chunked PUT: 100 Continue in 1 RTT (~0.10 s), the reply 300 ms + 1 RTT later (~0.40 s): "
          f"{cs} {to_continue} {to_reply}")
    check(st["requests"] == 1 and st["put_payload"] == len(chunked_body),
          f"stats count the chunked PUT and its payload: {st['requests']} {st['put_payload']}")
    hs, hh, _ = direct.req("HEAD", f"{run}/chunked")
    check(hs == 200 and hh.get("content-length") == str(len(chunked_body)), f"the chunked body arrived whole (HEAD {hs})")

    # Bandwidth and back-pressure: 2 MiB at 8 Mbit/s (1 MB/s), 20 ms round trip.
    body = os.urandom(2 << 20)
    p, port = start_relay(a.endpoint, stats, ["--rtt-ms", "20", "--setup-rtts", "0", "--up-mbit", "8"])
    c = Conn(port, a, sndbuf=64 * 1024)
    s, _, sent, total = c.put(f"{run}/bw", body)
    st = stop_relay(p, stats)
    want = len(body) / 1e6
    check(s == 200 and want * 0.95 < total < want * 1.15, f"2 MiB at 8 Mbit/s: {s} in {total:.2f} s (link: {want:.2f} s)")
    check(sent > total - 0.5, f"back-pressure: the client's send returned {total - sent:.2f} s before the reply")
    hs, hh, _ = direct.req("HEAD", f"{run}/bw")
    check(hs == 200 and hh.get("etag", "").strip('"') == hashlib.md5(body).hexdigest(), "the body arrived intact")
    check(st["put_payload"] == len(body) and st["put_payload_again"] == 0, f"stats count the payload once: {st['put_payload']}")

    # The link drops to a tenth after 1 s: 512 KiB then takes ~5 s instead of 0.5 s.
    small = body[: 512 * 1024]
    p, port = start_relay(a.endpoint, stats, ["--rtt-ms", "20", "--setup-rtts", "0", "--up-mbit", "8",
                                              "--drop-after", "1"])
    c = Conn(port, a, sndbuf=64 * 1024)
    _, _, _, before = c.put(f"{run}/drop1", small)
    time.sleep(max(0.0, 1.1 - before))
    s, _, _, after = c.put(f"{run}/drop2", small)
    stop_relay(p, stats)
    check(before < 0.8 and s == 200 and 4.5 < after < 6.5, f"rate drop: {before:.2f} s before, {after:.2f} s after (~5.2 s)")

    # Faults: every 3rd request 503; a rewrite of a key within 1 s 429.
    p, port = start_relay(a.endpoint, stats, ["--rtt-ms", "10", "--setup-rtts", "0", "--slowdown-every", "3",
                                              "--key-429", "1"])
    c = Conn(port, a)
    got = [c.put(f"{run}/f{i}", b"z" * 5000)[:2] for i in range(3)]
    check(got[:2] == [(200, ''), (200, '')] and got[2] == (503, "SlowDown"),
          f"every 3rd request 503 SlowDown: {got}")
    hs, _, _ = direct.req("HEAD", f"{run}/f2")
    check(hs == 404, f"a 503'd PUT stores nothing (HEAD {hs})")
    r4 = c.put(f"{run}/f0", b"w" * 5000)[:2]    # request 4: f0 again within 1 s
    r5 = c.put(f"{run}/k", b"k" * 5000)[:2]     # 5
    r6 = c.put(f"{run}/f9", b"z" * 10)[:2]      # 6: a 503
    time.sleep(1.05)
    r7 = c.put(f"{run}/f0", b"v" * 5000)[:2]    # 7: f0 again, a second later
    st = stop_relay(p, stats)
    check(r4 == (429, "TooManyRequests") and r5 == (200, '') and r6[0] == 503 and r7 == (200, ''),
          f"a key rewritten within 1 s 429, after 1 s 200: {r4} {r5} {r6} {r7}")
    check(st["faults"] == {"503": 2, "429": 1} and st["requests"] == 7,
          f"stats count faults and requests: {st['faults']} {st['requests']}")
    check(st["put_payload_again"] == 5000, f"stats: f0's second stored write is payload sent twice: {st['put_payload_again']}")

    for k in ("l1", "l2", "d0", "d1", "chunked", "closing", "bw", "drop1", "drop2", "f0", "f1", "k"):
        direct.req("DELETE", f"{run}/{k}")
    print("wanrelay self-test:", "OK" if not failures else f"{len(failures)} problem(s)")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
