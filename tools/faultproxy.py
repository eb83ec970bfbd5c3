#!/usr/bin/env python3
"""faultproxy: a fault-injecting HTTP/1.1 proxy for r2up's failure tests.

Python 3 stdlib only (asyncio). It listens on loopback, forwards each request
unchanged (the Host header too, so SigV4 signatures made for the proxy's
address still verify upstream) to an upstream S3 server on loopback, and
injects faults into chosen requests.

    python3 tools/faultproxy.py --upstream 127.0.0.1:18306 --seed 7 \\
        --reset-before 0.1 --reset-during-body 0.05 --reset-after 0.05 \\
        --error-rate 0.05 --stall-rate 0.01 --stall-seconds 40 \\
        --truncate-rate 0.02 --trickle-rate 0.01 --corrupt-body-rate 0.0 \\
        --only-methods PUT,POST --log /tmp/faults.jsonl --max-seconds 900
    # first stdout line: "PORT <n>"; point the client at http://127.0.0.1:<n>

    # deterministic: the 1st eligible request gets a 503 SlowDown, the 3rd is
    # reset after the server has stored it, everything else passes clean:
    python3 tools/faultproxy.py --upstream 127.0.0.1:18306 --script 1=error:503,3=reset-after

Faults (each request gets at most one; the rates are probabilities, summing to <= 1):
  reset-before       RST the client connection before anything reaches upstream
  reset-during-body  forward the head and part of the body, then RST (upstream aborted)
  reset-after        forward the whole request, wait for upstream's final answer,
                     then RST the client without it (the object may well be stored)
  error              answer without upstream: 500 InternalError, 503 SlowDown or
                     429 TooManyRequests (--error-statuses, e.g. 503:ServiceUnavailable
                     as R2 says it), S3 XML error body; --script N=error:503[:CODE];
                     403 is RequestTimeTooSkewed, its Date moved by --error-date-offset
  stall              hold upstream's final response for --stall-seconds, then send it
  truncate           send the response head and only part of its body (or, if it
                     has no body, part of its status line), then close
  trickle            pace the request body and the response at --trickle-bps bytes/s
  corrupt-body       flip one bit of one request-body byte in transit
Reply rewrites (issue 15: a reply missing what S3 sends must never count as success):
  cut-head           send the response head only up to its Content-Length/ETag lines,
                     end it there (a complete-looking head) with no body, then close
  drop-etag          send the response without its ETag header
  drop-checksum      send the response without its x-amz-checksum-* headers
  wrong-range        shift a 206's Content-Range by one byte (the body is unchanged)
  loop-token         a ListObjectsV2 reply says IsTruncated and gives the continuation
                     token the request carried (or "faultproxy-loop"): a token loop
  no-token           a ListObjectsV2 reply says IsTruncated with no NextContinuationToken
  bad-length         a HEAD reply's Content-Length is one more than the object's size
  flip-reply         flip one bit of one byte of a GET reply's body (200 or 206, with a
                     Content-Length): bytes damaged on the way to the client (issue 28)
Requests without a body get no reset-during-body/corrupt-body (they pass clean); a reply
a rewrite does not apply to (no 206, no listing) passes clean and is not counted.

Which requests are eligible: --only-methods, --path-regex, --skip-first-n-requests,
--first-n-requests (counted among requests that pass the method/path filters),
--max-faults. Each injected fault is one JSON line in --log (with --log-all,
clean requests too); on exit a {"summary": ...} line goes to the log and to
stderr. It stops by itself after --max-seconds (default 900) and on
SIGTERM/SIGINT. Decisions are drawn from random.Random("SEED:N") for the N-th
request, so a sequential client sees the same faults for the same seed.
Only loopback addresses are accepted for --listen and --upstream.
"""
import argparse
import asyncio
import contextlib
import ipaddress
import json
import random
import re
import signal
import socket
import struct
import sys
import time
from email.utils import formatdate

FAULTS = ["reset-before", "reset-during-body", "reset-after", "error", "stall",
          "truncate", "trickle", "corrupt-body"]
REWRITES = ["cut-head", "drop-etag", "drop-checksum", "wrong-range", "loop-token", "no-token", "bad-length", "flip-reply"]
FAULTS += REWRITES
ERROR_CODES = {
    500: ("Internal Server Error", "InternalError",
          "We encountered an internal error. Please try again."),
    503: ("Service Unavailable", "SlowDown", "Please reduce your request rate."),
    429: ("Too Many Requests", "TooManyRequests",
          "Too many requests, please slow down."),
    502: ("Bad Gateway", "BadGateway", "faultproxy could not reach the upstream server."),
    # A server whose clock disagrees with the signature's; pair with --error-date-offset.
    403: ("Forbidden", "RequestTimeTooSkewed",
          "The difference between the request time and the current time is too large."),
}
MAX_HEAD = 1 << 20


class ProtocolError(Exception):
    pass


class Head:
    """A parsed request or response head (start line + headers), raw bytes kept."""

    def __init__(self, raw):
        self.raw = raw
        lines = raw[:-4].decode("latin-1").split("\r\n")
        self.start = lines[0]
        self.headers = []
        for line in lines[1:]:
            if not line:
                continue
            name, sep, value = line.partition(":")
            if not sep:
                raise ProtocolError(f"bad header line {line!r}")
            self.headers.append((name.strip(), value.strip()))

    def get(self, name, default=None):
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return default

    def tokens(self, name):
        return {t.strip().lower() for k, v in self.headers if k.lower() == name.lower()
                for t in v.split(",")}

    def framing(self):
        """('chunked', None) | ('length', n) | ('none', 0)."""
        if "chunked" in self.tokens("transfer-encoding"):
            return "chunked", None
        cl = self.get("content-length")
        if cl is not None:
            try:
                n = int(cl)
            except ValueError:
                raise ProtocolError(f"bad Content-Length {cl!r}")
            return "length", n
        return "none", 0


async def read_head(reader):
    """Read one head; None on clean EOF before any byte."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial:
            return None
        raise ProtocolError("connection closed inside a head")
    except asyncio.LimitOverrunError:
        raise ProtocolError("head too large")
    # Tolerate stray CRLFs between messages.
    raw = raw.lstrip(b"\r\n")
    if not raw:
        return await read_head(reader)
    return Head(raw)


def rst(writer):
    """Close with a TCP RST (SO_LINGER 0) instead of a FIN."""
    if writer is None:
        return
    with contextlib.suppress(Exception):
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(Exception):
        writer.transport.abort()


def fin(writer):
    if writer is None:
        return
    with contextlib.suppress(Exception):
        writer.close()


class Pacer:
    """Pace writes at a number of bytes per second (None: no pacing)."""

    def __init__(self, bps):
        self.bps = bps
        self.sent = 0
        self.t0 = time.monotonic()

    async def write(self, writer, data):
        if not self.bps:
            writer.write(data)
            await writer.drain()
            return
        step = max(1, min(len(data), self.bps // 10 or 1))
        for i in range(0, len(data), step):
            piece = data[i:i + step]
            writer.write(piece)
            await writer.drain()
            self.sent += len(piece)
            due = self.t0 + self.sent / self.bps
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)


class Cut(Exception):
    """The body relay stopped at the planned cut point."""


async def relay_body(reader, writer, framing, length, *, cut_at=None, flip_at=None,
                     pacer=None, on_flip=None):
    """Copy one message body from reader to writer (writer None: discard).

    cut_at: stop after this many body data bytes and raise Cut.
    flip_at: flip one bit of the data byte at this offset (calls on_flip(orig, new)).
    Returns the number of body data bytes relayed.
    """
    done = 0

    async def out(data):
        # Callers pick cut_at below the body's length, so a cut always leaves it short.
        if cut_at is not None and done + len(data) >= cut_at:
            data = data[:cut_at - done]
            if data:
                await emit(data)
            raise Cut()
        await emit(data)

    async def emit(data):
        nonlocal done
        if flip_at is not None and done <= flip_at < done + len(data):
            b = bytearray(data)
            i = flip_at - done
            orig = b[i]
            b[i] ^= 0x01
            data = bytes(b)
            if on_flip:
                on_flip(orig, b[i])
        done += len(data)
        if writer is not None:
            if pacer is not None:
                await pacer.write(writer, data)
            else:
                writer.write(data)
                await writer.drain()

    if framing == "length":
        left = length
        while left > 0:
            data = await reader.read(min(left, 65536))
            if not data:
                raise ProtocolError("body cut short by the sender")
            left -= len(data)
            await out(data)
    elif framing == "chunked":
        while True:
            line = await reader.readuntil(b"\r\n")
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if writer is not None:
                writer.write(line)
            if size == 0:
                # trailers up to the empty line
                while True:
                    t = await reader.readuntil(b"\r\n")
                    if writer is not None:
                        writer.write(t)
                    if t == b"\r\n":
                        break
                if writer is not None:
                    await writer.drain()
                break
            left = size
            while left > 0:
                data = await reader.read(min(left, 65536))
                if not data:
                    raise ProtocolError("chunk cut short")
                left -= len(data)
                await out(data)
            crlf = await reader.readexactly(2)
            if writer is not None:
                writer.write(crlf)
    elif framing == "eof":
        while True:
            data = await reader.read(65536)
            if not data:
                break
            await out(data)
    return done


def parse_error_spec(text):
    """'503' or '503:ServiceUnavailable' -> (503, code)."""
    st, _, code = text.strip().partition(":")
    try:
        status = int(st)
    except ValueError:
        raise SystemExit(f"faultproxy: bad error status {text!r}")
    if status not in ERROR_CODES and not code:
        raise SystemExit(f"faultproxy: give an S3 code for status {status}, e.g. {status}:SomeCode")
    return status, code or ERROR_CODES[status][1]


def s3_error_response(status, code, resource, request_id, keep_alive, head_only,
                      retry_after=None, date_offset=0.0):
    reason, default_code, message = ERROR_CODES.get(
        status, ("Error", code, "faultproxy injected this error."))
    if code != default_code:
        message = f"faultproxy injected {code}."
    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
            f"<Message>{message}</Message><Resource>{resource}</Resource>"
            f"<RequestId>{request_id}</RequestId></Error>").encode()
    headers = [
        f"HTTP/1.1 {status} {reason}",
        "Content-Type: application/xml",
        f"Content-Length: {0 if head_only else len(body)}",
        f"x-amz-request-id: {request_id}",
        f"Date: {formatdate(time.time() + date_offset, usegmt=True)}",
        "Server: faultproxy",
        f"Connection: {'keep-alive' if keep_alive else 'close'}",
    ]
    if retry_after is not None:
        headers.append(f"Retry-After: {retry_after}")
    return ("\r\n".join(headers) + "\r\n\r\n").encode("latin-1") + (b"" if head_only else body)


class Proxy:
    def __init__(self, args):
        self.a = args
        self.t0 = time.monotonic()
        self.req_seq = 0          # every request
        self.eligible_seq = 0     # requests passing method/path filters
        self.conn_seq = 0
        self.faults_injected = 0
        self.counts = {"requests": 0, "clean": 0}
        for f in FAULTS:
            self.counts[f] = 0
        self.log = open(args.log, "a", buffering=1) if args.log else None
        self.methods = {m.strip().upper() for m in args.only_methods.split(",")} if args.only_methods else None
        self.path_re = re.compile(args.path_regex) if args.path_regex else None
        self.script = parse_script(args.script) if args.script else None
        self.rates = [(f, getattr(args, f.replace("-", "_") + "_rate_value")) for f in FAULTS]
        total = sum(r for _, r in self.rates)
        if total > 1.0 + 1e-9:
            raise SystemExit(f"faultproxy: fault rates add up to {total:.3f} > 1")
        self.error_statuses = [parse_error_spec(x) for x in args.error_statuses.split(",") if x.strip()]
        self.tasks = set()

    # --- logging ------------------------------------------------------------
    def emit(self, record):
        if self.log:
            record = {"t": round(time.monotonic() - self.t0, 3), **record}
            self.log.write(json.dumps(record, sort_keys=False) + "\n")

    def summary(self):
        return {"summary": dict(self.counts, faults=self.faults_injected,
                                seconds=round(time.monotonic() - self.t0, 1))}

    # --- decisions ------------------------------------------------------------
    def decide(self, head, method, path):
        """Return (req_index, eligible_index or None, fault or None, params, rng)."""
        self.req_seq += 1
        idx = self.req_seq
        rng = random.Random(f"{self.a.seed}:{idx}")
        if self.methods is not None and method not in self.methods:
            return idx, None, None, {}, rng
        if self.path_re is not None and not self.path_re.search(path):
            return idx, None, None, {}, rng
        self.eligible_seq += 1
        n = self.eligible_seq
        rng = random.Random(f"{self.a.seed}:e{n}")
        if n <= self.a.skip_first_n_requests:
            return idx, n, None, {}, rng
        if self.a.first_n_requests is not None and n > self.a.skip_first_n_requests + self.a.first_n_requests:
            return idx, n, None, {}, rng
        if self.a.max_faults is not None and self.faults_injected >= self.a.max_faults:
            return idx, n, None, {}, rng
        params = {}
        fault = None
        if self.script is not None:
            if n in self.script:
                fault, arg = self.script[n]
                if fault == "error" and arg:
                    params["status"] = arg
        else:
            u = rng.random()
            acc = 0.0
            for f, r in self.rates:
                acc += r
                if r > 0 and u < acc:
                    fault = f
                    break
        return idx, n, fault, params, rng

    # --- connections ----------------------------------------------------------
    async def open_upstream(self):
        return await asyncio.wait_for(
            asyncio.open_connection(self.a.upstream_host, self.a.upstream_port, limit=MAX_HEAD),
            timeout=10)

    async def handle(self, creader, cwriter):
        task = asyncio.current_task()
        self.tasks.add(task)
        self.conn_seq += 1
        conn = self.conn_seq
        try:
            while True:
                try:
                    head = await read_head(creader)
                except (ProtocolError, ConnectionError):
                    break
                if head is None:
                    break
                if not await self.one_request(conn, head, creader, cwriter):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ProtocolError, asyncio.TimeoutError, OSError, ValueError) as e:
            self.emit({"conn": conn, "event": "connection-error", "error": repr(e)})
        except asyncio.CancelledError:
            pass
        finally:
            fin(cwriter)
            self.tasks.discard(task)

    async def one_request(self, conn, head, creader, cwriter):
        """Handle one request (one upstream connection each); return keep-alive."""
        parts = head.start.split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise ProtocolError(f"bad request line {head.start!r}")
        method, target, version = parts
        path = target.split("?", 1)[0]
        framing, length = head.framing()
        has_body = framing == "chunked" or (framing == "length" and length > 0)
        expect_continue = "100-continue" in head.tokens("expect")
        client_close = "close" in head.tokens("connection") or (
            version == "HTTP/1.0" and "keep-alive" not in head.tokens("connection"))
        idx, n, fault, params, rng = self.decide(head, method, path)
        self.counts["requests"] += 1
        if fault in ("reset-during-body", "corrupt-body") and not has_body:
            fault = None
        # "arrived": when the request head came in ("t" is when the line is written).
        rec = {"req": idx, "eligible": n, "conn": conn, "method": method, "target": target[:300],
               "length": length, "amzDate": head.get("x-amz-date"), "arrived": round(time.monotonic() - self.t0, 3)}

        def record(fault_name, **extra):
            self.counts[fault_name] += 1
            self.faults_injected += 1
            self.emit({**rec, "fault": fault_name, **extra})

        if fault == "reset-before":
            record("reset-before")
            rst(cwriter)
            return False

        if fault == "error":
            if params.get("status"):
                status, code = parse_error_spec(params["status"])
            else:
                status, code = rng.choice(self.error_statuses)
            rid = f"FAULTPROXY{idx:08d}"
            if has_body and not expect_continue:
                await relay_body(creader, None, framing, length)
                keep = not client_close
            else:
                # With Expect: 100-continue the client may or may not send the body now.
                keep = not has_body and not client_close
            retry_after = 1 if status == 429 else None
            # Logged before the client can see the reply, so a test reading the log after
            # its request returned always finds the line.
            record("error", status=status, code=code)
            cwriter.write(s3_error_response(status, code, path, rid, keep, method == "HEAD",
                                            retry_after, self.a.error_date_offset))
            await cwriter.drain()
            return keep

        try:
            ureader, uwriter = await self.open_upstream()
        except (OSError, asyncio.TimeoutError) as e:
            self.emit({**rec, "event": "upstream-connect-failed", "error": repr(e)})
            if has_body and not expect_continue:
                with contextlib.suppress(Exception):
                    await relay_body(creader, None, framing, length)
            cwriter.write(s3_error_response(502, "BadGateway", path, f"FAULTPROXY{idx:08d}", False,
                                            method == "HEAD"))
            await cwriter.drain()
            return False
        try:
            return await self.forward(rec, record, fault, rng, method, head, framing, length,
                                      has_body, client_close, creader, cwriter, ureader, uwriter)
        finally:
            rst(uwriter)

    async def forward(self, rec, record, fault, rng, method, head, framing, length, has_body,
                      client_close, creader, cwriter, ureader, uwriter):
        uwriter.write(head.raw)
        await uwriter.drain()

        cut_at = flip_at = None
        flip_info = {}
        if fault == "reset-during-body":
            cut_at = rng.randrange(0, max(1, length if framing == "length" else 65536))
        if fault == "corrupt-body":
            flip_at = rng.randrange(0, max(1, length if framing == "length" else 4096))

        def on_flip(orig, new):
            flip_info.update(orig=orig, new=new)

        body_task = None
        if has_body:
            body_task = asyncio.create_task(relay_body(
                creader, uwriter, framing, length, cut_at=cut_at, flip_at=flip_at,
                pacer=Pacer(self.a.trickle_bps) if fault == "trickle" else None,
                on_flip=on_flip))

        # Upstream's answers; interim 1xx ones (100 Continue) go to the client as they come.
        while True:
            resp_task = asyncio.create_task(read_head(ureader))
            try:
                while True:
                    pending = {resp_task}
                    if body_task is not None and not body_task.done():
                        pending.add(body_task)
                    done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                    if body_task is not None and body_task in done:
                        exc = body_task.exception()
                        if isinstance(exc, Cut):
                            resp_task.cancel()
                            record("reset-during-body", after_bytes=cut_at)
                            rst(cwriter)
                            return False
                        if exc is not None:
                            raise ProtocolError(f"request body: {exc!r}")
                    if resp_task in done:
                        break
            except BaseException:
                resp_task.cancel()
                if body_task is not None:
                    body_task.cancel()
                raise
            resp = resp_task.result()
            if resp is None:
                raise ProtocolError("upstream closed without a response")
            status = int(resp.start.split(" ")[1])
            if 100 <= status < 200 and status != 101:
                cwriter.write(resp.raw)
                await cwriter.drain()
                continue
            break

        if fault == "reset-during-body":
            fault = None   # the body ended before the cut point (chunked): nothing injected
        early = False
        if body_task is not None and not body_task.done():
            # Upstream answered before taking the whole body (an error, or no 100 Continue).
            try:
                await asyncio.wait_for(asyncio.shield(body_task), timeout=0.5)
            except Exception:
                body_task.cancel()
                early = True
        if fault == "corrupt-body":
            if flip_info:
                record("corrupt-body", offset=flip_at, upstream_status=status, **flip_info)
            else:
                fault = None

        if fault == "reset-after":
            record("reset-after", upstream_status=status)
            rst(cwriter)
            return False

        if fault == "stall":
            record("stall", seconds=self.a.stall_seconds, upstream_status=status)
            await asyncio.sleep(self.a.stall_seconds)

        rframing, rlength = resp.framing()
        if method == "HEAD" or status in (204, 304):
            rframing, rlength = "length", 0
        elif rframing == "none":
            rframing, rlength = "eof", None
        upstream_close = "close" in resp.tokens("connection") or rframing == "eof"

        if fault == "truncate":
            if rframing == "length" and rlength > 0:
                keep_bytes = rng.randrange(0, rlength)
                record("truncate", upstream_status=status, body_bytes_sent=keep_bytes,
                       of=rlength)
                cwriter.write(resp.raw)
                await cwriter.drain()
                with contextlib.suppress(Cut):
                    await relay_body(ureader, cwriter, rframing, rlength, cut_at=keep_bytes)
            else:
                # Cut before the status code is whole ("HTTP/1.1 2" at most): a cut
                # later looks like a complete, if short, head to lenient parsers.
                keep_bytes = rng.randrange(1, min(11, len(resp.raw)))
                record("truncate", upstream_status=status, head_bytes_sent=keep_bytes,
                       of_head=len(resp.raw))
                cwriter.write(resp.raw[:keep_bytes])
                await cwriter.drain()
            fin(cwriter)
            return False

        if fault in REWRITES:
            done = await self.rewrite(fault, record, rec, head, resp, status, method, rframing, rlength,
                                      ureader, cwriter)
            if done is not None:
                return done
            fault = None

        # Logged before the reply goes out (see "error" above).
        if fault == "trickle":
            record("trickle", bps=self.a.trickle_bps, upstream_status=status)
        if fault in (None, "reset-during-body"):
            self.counts["clean"] += 1
            if self.a.log_all:
                self.emit({**rec, "fault": None, "status": status})
        pacer = Pacer(self.a.trickle_bps) if fault == "trickle" else None
        if pacer is not None:
            await pacer.write(cwriter, resp.raw)
        else:
            cwriter.write(resp.raw)
            await cwriter.drain()
        await relay_body(ureader, cwriter, rframing, rlength, pacer=pacer)
        return not (client_close or upstream_close or early)


    async def rewrite(self, fault, record, rec, head, resp, status, method, rframing, rlength,
                      ureader, cwriter):
        """Send upstream's reply changed by a reply-rewrite fault; None when it does not apply."""
        def drop(names):
            lines = resp.raw[:-4].split(b"\r\n")
            return [lines[0]] + [l for l in lines[1:] if l.split(b":", 1)[0].strip().lower() not in names]

        def build(lines):
            return b"\r\n".join(lines) + b"\r\n\r\n"

        if fault == "cut-head":
            lines = resp.raw[:-4].split(b"\r\n")
            kept = [lines[0]]
            for line in lines[1:]:
                if line.split(b":", 1)[0].strip().lower() in (b"content-length", b"etag"):
                    break
                kept.append(line)
            kept = [l for l in kept if not l.lower().startswith(b"connection:")] + [b"Connection: close",
                                                                                 b"Content-Length: 0"]
            record("cut-head", upstream_status=status, headers_kept=len(kept) - 3)
            cwriter.write(build(kept))
            await cwriter.drain()
            fin(cwriter)
            return False
        if fault in ("drop-etag", "drop-checksum"):
            wanted = (lambda n: n == "etag") if fault == "drop-etag" else (lambda n: n.startswith("x-amz-checksum-"))
            names = {name.lower().encode() for name, _ in resp.headers if wanted(name.lower())}
            if not names:
                return None
            record(fault, upstream_status=status, dropped=sorted(n.decode() for n in names))
            cwriter.write(build(drop(names)))
            await cwriter.drain()
            await relay_body(ureader, cwriter, rframing, rlength)
            return False
        if fault == "flip-reply":
            if method != "GET" or status not in (200, 206) or rframing != "length" or not rlength:
                return None
            offset = random.Random(f"{self.a.seed}:flip{rec['req']}").randrange(0, rlength)
            record("flip-reply", upstream_status=status, offset=offset, of=rlength)
            cwriter.write(resp.raw)
            await cwriter.drain()
            await relay_body(ureader, cwriter, rframing, rlength, flip_at=offset)
            return not ("close" in resp.tokens("connection"))
        if fault == "bad-length":
            length = resp.get("content-length")
            if method != "HEAD" or status != 200 or length is None or not length.isdigit():
                return None
            record("bad-length", upstream_status=status, was=length)
            cwriter.write(build(drop({b"content-length"}) + [f"Content-Length: {int(length) + 1}".encode()]))
            await cwriter.drain()
            return not ("close" in resp.tokens("connection"))
        if fault == "wrong-range":
            cr = resp.get("content-range")
            m = re.match(r"bytes (\d+)-(\d+)/(\S+)", cr or "")
            if status != 206 or not m:
                return None
            shifted = f"bytes {int(m.group(1)) + 1}-{int(m.group(2)) + 1}/{m.group(3)}"
            record("wrong-range", upstream_status=status, sent=shifted, was=cr)
            cwriter.write(build(drop({b"content-range"}) + [f"Content-Range: {shifted}".encode()]))
            await cwriter.drain()
            await relay_body(ureader, cwriter, rframing, rlength)
            return False
        # loop-token / no-token: ListObjectsV2 replies only (GET ...?list-type=2).
        target = rec["target"]
        if method != "GET" or "list-type=2" not in target or status != 200 or rframing != "length":
            return None
        body = bytearray()
        body_writer = _Collect(body)
        await relay_body(ureader, body_writer, rframing, rlength)
        text = bytes(body).decode("utf-8", "replace")
        text = re.sub(r"<IsTruncated>\w+</IsTruncated>", "<IsTruncated>true</IsTruncated>", text)
        text = re.sub(r"<NextContinuationToken>.*?</NextContinuationToken>", "", text, flags=re.S)
        if fault == "loop-token":
            from urllib.parse import parse_qs, urlsplit
            asked = parse_qs(urlsplit(target).query).get("continuation-token", ["faultproxy-loop"])[0]
            token = asked.replace("&", "&amp;").replace("<", "&lt;")
            text = text.replace("</ListBucketResult>",
                                f"<NextContinuationToken>{token}</NextContinuationToken></ListBucketResult>")
        out = text.encode()
        record(fault, upstream_status=status)
        cwriter.write(build(drop({b"content-length", b"connection"}) + [f"Content-Length: {len(out)}".encode(),
                                                                       b"Connection: close"]) + out)
        await cwriter.drain()
        fin(cwriter)
        return False


class _Collect:
    """A writer that keeps what relay_body writes (to rewrite a whole reply body)."""

    def __init__(self, buffer):
        self.buffer = buffer

    def write(self, data):
        self.buffer.extend(data)

    async def drain(self):
        pass


def parse_script(text):
    out = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        k, sep, v = item.partition("=")
        if not sep:
            raise SystemExit(f"faultproxy: bad --script item {item!r} (want N=FAULT[:ARG])")
        fault, _, arg = v.partition(":")
        if fault not in FAULTS:
            raise SystemExit(f"faultproxy: unknown fault {fault!r}; one of {', '.join(FAULTS)}")
        out[int(k)] = (fault, arg)
    return out


def loopback_only(host, what):
    try:
        infos = socket.getaddrinfo(host, None)
    except socket.gaierror as e:
        raise SystemExit(f"faultproxy: cannot resolve {what} {host!r}: {e}")
    for info in infos:
        addr = ipaddress.ip_address(info[4][0].split("%")[0])
        if not addr.is_loopback:
            raise SystemExit(f"faultproxy: {what} {host} is not a loopback address "
                             "(this tool only proxies to and listens on 127.0.0.0/8 or ::1)")


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Fault-injecting HTTP/1.1 proxy for S3 failure tests (loopback only).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", required=True, help="HOST:PORT of the real server (loopback)")
    ap.add_argument("--listen", default="127.0.0.1", help="address to listen on (loopback)")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port (printed)")
    ap.add_argument("--seed", type=int, default=0)
    for f in FAULTS:
        flag = {"error": "--error-rate", "stall": "--stall-rate", "truncate": "--truncate-rate",
                "trickle": "--trickle-rate", "corrupt-body": "--corrupt-body-rate"}.get(f, "--" + f)
        ap.add_argument(flag, type=float, default=0.0, dest=f.replace("-", "_") + "_rate_value",
                        metavar="P", help=f"probability of {f} per eligible request")
    ap.add_argument("--error-statuses", default="500,503,429",
                    help="what the error fault picks from: STATUS[:CODE],... e.g. "
                         "500,503:ServiceUnavailable,429 (defaults: 500 InternalError, "
                         "503 SlowDown, 429 TooManyRequests, 502 BadGateway)")
    ap.add_argument("--error-date-offset", type=float, default=0.0, metavar="SECONDS",
                    help="shift the Date header of injected errors, as a server whose clock is "
                         "SECONDS ahead (with --script 1=error:403:RequestTimeTooSkewed)")
    ap.add_argument("--stall-seconds", type=float, default=40.0)
    ap.add_argument("--trickle-bps", type=int, default=4096, help="bytes per second when trickling")
    ap.add_argument("--only-methods", help="comma list, e.g. PUT,POST: only these get faults")
    ap.add_argument("--path-regex", help="only requests whose path matches get faults")
    ap.add_argument("--skip-first-n-requests", type=int, default=0,
                    help="let the first N eligible requests through clean")
    ap.add_argument("--first-n-requests", type=int, default=None,
                    help="only the first N eligible requests (after the skipped) may get faults")
    ap.add_argument("--max-faults", type=int, default=None, help="stop injecting after N faults")
    ap.add_argument("--script", help="deterministic faults: N=FAULT[:ARG],... by eligible-request "
                                     "number (1-based), e.g. 1=error:503,3=reset-after; "
                                     "rates are then ignored")
    ap.add_argument("--log", help="append one JSON line per injected fault to this file")
    ap.add_argument("--log-all", action="store_true", help="log clean requests too")
    ap.add_argument("--max-seconds", type=float, default=900.0, help="exit after this long")
    a = ap.parse_args(argv)
    host, sep, port = a.upstream.rpartition(":")
    if not sep or not port.isdigit():
        ap.error("--upstream must be HOST:PORT")
    a.upstream_host, a.upstream_port = host.strip("[]"), int(port)
    loopback_only(a.upstream_host, "--upstream")
    loopback_only(a.listen, "--listen")
    if a.max_seconds <= 0:
        ap.error("--max-seconds must be positive")
    return a


async def amain(a):
    proxy = Proxy(a)
    server = await asyncio.start_server(proxy.handle, a.listen, a.port, limit=MAX_HEAD)
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    proxy.emit({"event": "start", "port": port, "upstream": a.upstream, "seed": a.seed,
                "max_seconds": a.max_seconds})
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    reason = {"why": "max-seconds"}

    def on_signal(name):
        reason["why"] = name
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig.name)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=a.max_seconds)
    server.close()
    for t in list(proxy.tasks):
        t.cancel()
    if proxy.tasks:
        await asyncio.wait(list(proxy.tasks), timeout=2)
    s = proxy.summary()
    s["summary"]["stopped_by"] = reason["why"]
    proxy.emit(s)
    print(json.dumps(s), file=sys.stderr, flush=True)
    if proxy.log:
        proxy.log.close()


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    # Started from a thread that blocks signals (a Swift test's dispatch worker), we would
    # inherit that mask and never see SIGTERM; unblock what we handle.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    asyncio.run(amain(a))
    return 0


if __name__ == "__main__":
    sys.exit(main())
