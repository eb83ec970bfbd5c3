#!/usr/bin/env python3
"""Self-test of tools/faultproxy.py against a real S3 server (stdlib only).

    scripts/seaweedfs.sh start && . .seaweedfs/env && python3 tools/faultproxy_selftest.py

Starts faultproxy in front of R2UP_ENDPOINT with every fault enabled, sends
--requests PUTs (Content-MD5, UNSIGNED-PAYLOAD, unique keys) over keep-alive
connections through it, and checks each client outcome against the fault the
proxy logged for that key, reading the truth from the server directly:
  clean/trickle -> 200 and the object is there, intact
  reset-before -> connection error and no object
  reset-during-body -> connection error and no object
  reset-after -> connection error but the object IS stored, intact
  error -> 500/503/429 with the matching S3 XML code, no object
  truncate -> broken response, object stored
  corrupt-body -> 400 BadDigest (the server checks Content-MD5), no object
Then a second run with --script checks determinism, GET truncation and a stall
(a client time-out, the object still stored), and a third the 403 RequestTimeTooSkewed reply with a Date moved by --error-date-offset.
Exit 0 when every outcome matched.
"""
import argparse
import email.utils
import hashlib
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep tools/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3facts import Client, b64md5, sign, xml_code  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def start_proxy(upstream, log, extra):
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "faultproxy.py"),
                          "--upstream", upstream, "--log", log, "--log-all",
                          "--max-seconds", "300"] + extra,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.startswith("PORT "):
        raise SystemExit(f"faultproxy did not start: {line!r} {p.stderr.read()}")
    return p, int(line.split()[1])


class KeepAliveClient:
    """SigV4 PUT/GET over one persistent connection, reopened after errors."""

    def __init__(self, port, access, secret, region, timeout):
        self.port, self.access, self.secret, self.region = port, access, secret, region
        self.timeout = timeout
        self.conn = None
        self.connections = 0

    def request(self, method, path, body=b"", headers=None):
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            self.connections += 1
        h = sign(method, f"127.0.0.1:{self.port}", path, "", dict(headers or {}),
                 "UNSIGNED-PAYLOAD", self.access, self.secret, self.region)
        if method in ("PUT", "POST"):
            h["content-length"] = str(len(body))
        try:
            self.conn.request(method, path, body=body or None, headers=h)
            r = self.conn.getresponse()
            data = r.read()
            if r.getheader("connection", "").lower() == "close":
                self.conn.close()
                self.conn = None
            return r.status, data, None
        except Exception as e:  # noqa: BLE001 - we classify whatever broke
            self.conn.close()
            self.conn = None
            return None, b"", type(e).__name__


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", default=os.environ.get("R2UP_ENDPOINT"))
    ap.add_argument("--bucket", default=os.environ.get("R2UP_BUCKET", "r2up-test"))
    ap.add_argument("--access-key", default=os.environ.get("AWS_ACCESS_KEY_ID"))
    ap.add_argument("--secret-key", default=os.environ.get("AWS_SECRET_ACCESS_KEY"))
    ap.add_argument("--region", default=os.environ.get("AWS_REGION", "us-east-1"))
    ap.add_argument("--requests", type=int, default=120)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    if not (a.endpoint and a.access_key and a.secret_key):
        ap.error("source the server's env file first (scripts/seaweedfs.sh env)")
    direct = Client(a.endpoint, a.access_key, a.secret_key, a.region)
    upstream = a.endpoint.split("://", 1)[1].rstrip("/")
    tmp = tempfile.mkdtemp(prefix="faultproxy-selftest.")
    log = os.path.join(tmp, "faults.jsonl")
    failures = []
    run = f"fpst-{int(time.time())}-{os.getpid()}"

    rates = ["--reset-before", "0.1", "--reset-during-body", "0.1", "--reset-after", "0.1",
             "--error-rate", "0.1",
             "--truncate-rate", "0.1", "--trickle-rate", "0.05", "--trickle-bps", "200000",
             "--corrupt-body-rate", "0.1", "--only-methods", "PUT"]
    proxy, port = start_proxy(upstream, log, ["--seed", str(a.seed)] + rates)
    # No stalls here, so the client can wait long: CI, busy with other tests,
    # saw clean PUTs take over 6 s. The scripted run checks the stall alone.
    c = KeepAliveClient(port, a.access_key, a.secret_key, a.region, timeout=60.0)
    outcomes = {}
    t0 = time.monotonic()
    for i in range(a.requests):
        body = os.urandom(20000 + (i * 7919) % 50000)
        key = f"{run}/obj-{i:04d}"
        s, d, err = c.request("PUT", f"/{a.bucket}/{key}", body, {"Content-MD5": b64md5(body)})
        outcomes[key] = (s, xml_code(d), err, hashlib.md5(body).hexdigest())
    elapsed = time.monotonic() - t0
    proxy.terminate()
    _, perr = proxy.communicate(timeout=10)
    records = [json.loads(x) for x in open(log)]
    by_key = {}
    for r in records:
        if "target" in r and r.get("method") == "PUT":
            by_key[r["target"].split("/", 2)[2]] = r

    seen = {}
    for key, (s, code, err, md5) in outcomes.items():
        r = by_key.get(key)
        fault = r.get("fault") if r else "unlogged"
        label = fault or "clean"
        seen[label] = seen.get(label, 0) + 1
        hs, hh, _ = direct.req("HEAD", f"/{a.bucket}/{key}")
        stored = hs == 200
        intact = stored and hh.get("etag", "").strip('"') == md5
        ok = {
            None: s == 200 and intact,
            "trickle": s == 200 and intact,
            "reset-before": s is None and not stored,
            "reset-during-body": s is None and not stored,
            "reset-after": s is None and intact,
            "error": s in (500, 503, 429) and code in ("InternalError", "SlowDown", "TooManyRequests")
                     and not stored,
            "truncate": s is None and intact,
            "corrupt-body": s == 400 and code == "BadDigest" and not stored,
        }.get(fault, False)
        if not ok:
            failures.append(f"{key}: fault={fault} client=({s},{code},{err}) stored={stored} intact={intact}")
    summary = json.loads(perr.strip().splitlines()[-1])["summary"]
    print(f"random run: {a.requests} PUTs in {elapsed:.1f}s over {c.connections} connections; "
          f"faults by kind: {json.dumps(seen, sort_keys=True)}")
    print(f"proxy summary: {json.dumps(summary)}")
    if summary["requests"] != a.requests:
        failures.append(f"proxy counted {summary['requests']} requests, sent {a.requests}")
    missing = [f for f in ("reset-before", "reset-during-body", "reset-after", "error",
                           "truncate", "trickle", "corrupt-body") if f not in seen]
    if missing:
        failures.append(f"kinds never drawn (raise --requests): {missing}")

    # Deterministic script, GETs included: clean, 503, truncated GET, clean GET,
    # DELETE answered then reset, stalled PUT.
    log2 = os.path.join(tmp, "script.jsonl")
    proxy, port = start_proxy(upstream, log2, ["--script", "2=error:503,3=truncate,5=reset-after,6=stall",
                                               "--stall-seconds", "8"])
    c = KeepAliveClient(port, a.access_key, a.secret_key, a.region, timeout=60.0)
    body = os.urandom(100000)
    key = f"/{a.bucket}/{run}/scripted"
    got = []
    got.append(c.request("PUT", key, body, {"Content-MD5": b64md5(body)})[:2])   # 1 clean
    got.append(c.request("PUT", key, body, {"Content-MD5": b64md5(body)})[:2])   # 2 503
    s, d, err = c.request("GET", key)                                              # 3 truncated
    got.append((s, len(d), err))
    s, d, err = c.request("GET", key)                                              # 4 clean
    got.append((s, d == body))
    got.append(c.request("DELETE", key)[:1])                                       # 5 reset-after
    c.timeout = 2.0  # a stall outlasts it; a slow clean reply would too, and also store the object
    stalled = f"/{a.bucket}/{run}/stalled"
    s, _, err = c.request("PUT", stalled, body, {"Content-MD5": b64md5(body)})       # 6 stall
    got.append((s, err))
    proxy.terminate()
    proxy.communicate(timeout=10)
    want_ok = (got[0][0] == 200 and got[1][0] == 503 and xml_code(got[1][1]) == "SlowDown"
               and got[2][0] is None and got[3] == (200, True) and got[4] == (None,)
               and got[5][0] is None and got[5][1] in ("TimeoutError", "timeout"))
    print(f"scripted run: {[(g[0],) + tuple(x for x in g[1:] if not isinstance(x, bytes)) for g in got]}")
    if not want_ok:
        failures.append(f"scripted run gave {got!r}")
    hs, _, _ = direct.req("HEAD", key)
    if hs != 404:
        failures.append(f"DELETE behind reset-after should still have deleted the object (HEAD {hs})")
    # The stalled PUT reached the server before the proxy sat on the reply.
    for _ in range(20):
        hs, hh, _ = direct.req("HEAD", stalled)
        if hs == 200:
            break
        time.sleep(0.5)
    if hs != 200 or hh.get("etag", "").strip('"') != hashlib.md5(body).hexdigest():
        failures.append(f"a stalled PUT should leave the object stored intact (HEAD {hs})")
    direct.req("DELETE", stalled)

    # A server clock 15 minutes ahead: 403 RequestTimeTooSkewed whose Date says so.
    proxy, port = start_proxy(upstream, os.path.join(tmp, "skew.jsonl"),
                              ["--script", "1=error:403:RequestTimeTooSkewed", "--error-date-offset", "900"])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5.0)
    conn.request("PUT", f"/{a.bucket}/{run}/skewed", body=b"x")
    reply = conn.getresponse()
    skew_body = reply.read()
    ahead = email.utils.parsedate_to_datetime(reply.getheader("Date")).timestamp() - time.time()
    conn.close()
    proxy.terminate()
    proxy.communicate(timeout=10)
    print(f"skew run: {reply.status} {xml_code(skew_body)}, Date {ahead:+.0f} s")
    if reply.status != 403 or xml_code(skew_body) != "RequestTimeTooSkewed" or not 880 < ahead < 920:
        failures.append(f"skew run gave {reply.status} {skew_body!r}, Date {ahead:+.0f} s")

    # Clean up what the run stored.
    for key in outcomes:
        direct.req("DELETE", f"/{a.bucket}/{key}")
    for f in failures:
        print("FAIL", f)
    print("faultproxy self-test:", "OK" if not failures else f"{len(failures)} problem(s)")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
