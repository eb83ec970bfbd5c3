#!/usr/bin/env python3
"""A wide-area link in front of a loopback S3 server (asyncio, stdlib only).

    python3 tools/wanrelay.py --upstream http://127.0.0.1:18306 --rtt-ms 40 \
        --setup-rtts 2 --reply-delay-ms 200 --up-mbit 20 --stats stats.json &
    # prints "PORT n" on stdout once it listens on 127.0.0.1:n; stop it by its PID

What it models (there is no netem on this machine, see BUILD-NOTES 2026-11-26):
  --rtt-ms R          every byte waits R/2 on the way up and R/2 on the way down
  --setup-rtts N      a new connection carries nothing for N round trips (TCP + TLS handshakes)
  --reply-delay-ms D  the first byte of each reply leaves D later (R2 commits a write before
                      it answers: ~200 ms median measured from a nearby VM)
  --up-mbit M         one shared uplink of M Mbit/s for every connection (client to server);
                      its queue holds about one bandwidth-delay product, so a full link stops
                      the relay reading and back-pressure reaches the client as on a real
                      bottleneck; each connection also keeps at most --window bytes in flight
  --drop-after T      after T seconds the uplink runs at a tenth of --up-mbit
Faults (answered by the relay, the request never reaches the server):
  --slowdown-every N  every Nth request gets 503 SlowDown
  --key-429 S         a PUT to a key written (or tried, refused ones too) less than S seconds
                      ago gets 429
Bounds: --max-connections (further ones are closed at once), --max-seconds (then it exits).
--workers N         N processes share the listening socket (the kernel hands each new
                    connection to one), so a thousand small requests at once are not queued
                    behind one Python event loop. Only without --up-mbit and faults (those
                    need one shared clock); stop the parent by its PID, it stops the workers
                    (and they stop by themselves if it dies), then merges their stats.
--stats FILE gets a JSON summary on exit (SIGTERM/SIGINT too): requests, connections, the
payload bytes PUT a second time (same key and part), faults sent, requests in flight per
100 ms, and the wall-clock times of the first 300 connections and requests (method, path).
Requests are parsed for these: Content-Length bodies and chunked ones (the AWS CLI over HTTPS
sends aws-chunked bodies with a trailing checksum; x-amz-decoded-content-length is their payload).
"""
import argparse
import asyncio
import json
import os
import signal
import socket
import sys
import time
from urllib.parse import urlsplit, parse_qs

CHUNK = 16 * 1024
# The first connections and requests whose wall-clock times the stats keep.
FIRST_LOGGED = 300


class Link:
    """The shared uplink: one serialisation clock (link_free) and a queue bounded in time."""

    def __init__(self, bytes_per_second, queue_seconds, drop_after, start):
        self.rate = bytes_per_second
        self.queue_seconds = queue_seconds
        self.drop_after = drop_after
        self.start = start
        self.free = 0.0

    def current_rate(self, now):
        if self.rate is None:
            return None
        if self.drop_after is not None and now - self.start >= self.drop_after:
            return self.rate / 10
        return self.rate

    async def send(self, n):
        """Waits while the queue is full, then returns when these n bytes leave the bottleneck."""
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            rate = self.current_rate(now)
            if rate is None:
                return now
            backlog = self.free - now
            if backlog <= self.queue_seconds:
                self.free = max(now, self.free) + n / rate
                return self.free
            await asyncio.sleep(backlog - self.queue_seconds)


class Stats:
    def __init__(self, start):
        self.start = start
        self.connections = 0
        self.refused = 0
        self.requests = 0
        self.puts = 0
        self.bytes_up = 0
        self.put_payload = 0
        self.put_payload_again = 0
        self.seen_put = set()
        self.put_lengths = {}
        self.faults = {"503": 0, "429": 0}
        self.in_flight = 0
        self.timeline = {}  # 100 ms slot -> max requests in flight
        self.first_fault_at = None
        # Wall-clock times (epoch seconds) of the first connections and request heads: a
        # client's start measured from outside (benchmarks/wan-start.sh).
        self.first_connections = []
        self.first_requests = []  # [time, method, path]

    def note_in_flight(self, now):
        slot = int((now - self.start) * 10)
        self.timeline[slot] = max(self.timeline.get(slot, 0), self.in_flight)

    def summary(self):
        # Every PUT's (key, part, upload id, length): workers' stats merge into one count.
        puts = [list(k) + [n] for k, n in self.put_lengths.items()]
        return {
            "put_keys": puts,
            "connections": self.connections,
            "refused": self.refused,
            "requests": self.requests,
            "puts": self.puts,
            "bytes_up": self.bytes_up,
            "put_payload": self.put_payload,
            "put_payload_again": self.put_payload_again,
            "faults": self.faults,
            "first_fault_at": self.first_fault_at,
            "in_flight_per_100ms": [[k / 10, v] for k, v in sorted(self.timeline.items())],
            "first_connections": self.first_connections,
            "first_requests": self.first_requests,
        }


def error_reply(status, reason, code, message):
    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
            f"<Message>{message}</Message><RequestId>wanrelay</RequestId></Error>").encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/xml\r\n"
            f"Content-Length: {len(body)}\r\nx-amz-request-id: wanrelay\r\n\r\n").encode()
    return head + body


class Relay:
    def __init__(self, args):
        self.args = args
        self.loop = asyncio.get_running_loop()
        self.start = self.loop.time()
        self.half = args.rtt_ms / 2000
        self.setup = args.setup_rtts * args.rtt_ms / 1000
        self.reply_delay = args.reply_delay_ms / 1000
        rate = args.up_mbit * 1e6 / 8 if args.up_mbit else None
        queue = max(0.005, args.rtt_ms / 1000) if rate else 0
        self.link = Link(rate, queue, args.drop_after, self.start)
        u = urlsplit(args.upstream)
        self.upstream = (u.hostname or "127.0.0.1", u.port or 80)
        self.stats = Stats(self.start)
        self.open = 0
        self.request_number = 0
        self.last_write = {}  # key -> time of the last PUT to it

    def now(self):
        return self.loop.time()

    async def handle(self, client_r, client_w):
        if self.open >= self.args.max_connections:
            self.stats.refused += 1
            client_w.close()
            return
        self.open += 1
        self.stats.connections += 1
        if len(self.stats.first_connections) < FIRST_LOGGED:
            self.stats.first_connections.append(time.time())
        try:
            await Connection(self, client_r, client_w).run()
        finally:
            self.open -= 1


class Connection:
    """One client connection: two delayed pipes, the upward one parsing requests."""

    def __init__(self, relay, client_r, client_w):
        self.relay = relay
        self.client_r, self.client_w = client_r, client_w
        self.up = asyncio.Queue()    # (deliver_at, bytes | ("reply", bytes))
        self.down = asyncio.Queue()  # (deliver_at, bytes)
        self.window = relay.args.window
        self.up_bytes = 0            # bytes queued upward, not yet delivered
        self.up_room = asyncio.Event()
        self.up_room.set()
        self.awaiting_reply = False  # a request went up since the last reply byte came down
        self.outstanding = False     # counts in the relay's in-flight figure
        self.last_up = 0.0
        self.last_down = 0.0

    async def run(self):
        r = self.relay
        await asyncio.sleep(r.setup)  # handshakes: nothing moves yet
        try:
            server_r, server_w = await asyncio.open_connection(*r.upstream, limit=CHUNK)
        except OSError:
            self.client_w.close()
            return
        tasks = [
            asyncio.ensure_future(self.read_requests()),
            asyncio.ensure_future(self.deliver_up(server_w)),
            asyncio.ensure_future(self.read_replies(server_r)),
            asyncio.ensure_future(self.deliver_down()),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            # Let what is already queued arrive before closing: a reply the server sent just
            # before it closed (SeaweedFS closes after an aws-chunked PUT) still takes its delay.
            await asyncio.sleep(max(r.half, self.last_down - r.now()) + 0.01)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.done_request()
            for w in (server_w, self.client_w):
                try:
                    w.close()
                except Exception:  # noqa: BLE001
                    pass

    def done_request(self):
        if self.outstanding:
            self.outstanding = False
            st = self.relay.stats
            st.in_flight -= 1
            st.note_in_flight(self.relay.now())

    # -- upward ----------------------------------------------------------------------------
    async def queue_up(self, data):
        """Sends bytes through the uplink and the propagation delay, in order."""
        r = self.relay
        while self.up_bytes >= self.window:
            self.up_room.clear()
            await self.up_room.wait()
        left = await r.link.send(len(data))
        at = max(left + r.half, self.last_up)
        self.last_up = at
        self.up_bytes += len(data)
        r.stats.bytes_up += len(data)
        self.up.put_nowait((at, data))

    async def read_exact(self, n, sink):
        while n > 0:
            data = await self.client_r.read(min(CHUNK, n))
            if not data:
                raise EOFError
            n -= len(data)
            await sink(data)

    async def read_requests(self):
        r = self.relay
        reader = self.client_r
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.LimitOverrunError:
                await self.raw_up()
                return
            except asyncio.IncompleteReadError:
                return
            lines = head.decode("latin-1").split("\r\n")
            parts = lines[0].split(" ")
            method = parts[0]
            target = parts[1] if len(parts) > 1 else "/"
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            # A chunked body (the AWS CLI over HTTPS: aws-chunked with a trailing checksum) is
            # parsed chunk by chunk, so its request is counted and its reply delayed like any.
            chunked = "chunked" in headers.get("transfer-encoding", "").lower()
            try:
                length = int(headers.get("x-amz-decoded-content-length" if chunked else "content-length", "0") or 0)
            except ValueError:
                await self.queue_up(head)
                await self.raw_up()
                return
            now = r.now()
            st = r.stats
            st.requests += 1
            if len(st.first_requests) < FIRST_LOGGED:
                st.first_requests.append([time.time(), method, target.partition("?")[0]])
            r.request_number += 1
            if not self.outstanding:
                self.outstanding = True
                st.in_flight += 1
            st.note_in_flight(now)
            fault = None
            path, _, query = target.partition("?")
            q = parse_qs(query, keep_blank_values=True)
            if r.args.key_429 and method == "PUT" and "partNumber" not in q:
                # Every attempt counts as a write to its key, refused ones too.
                last = r.last_write.get(path)
                r.last_write[path] = now
                if last is not None and now - last < r.args.key_429:
                    fault = error_reply(429, "Too Many Requests", "TooManyRequests",
                                        "Reduce your concurrent request rate for the same object.")
                    st.faults["429"] += 1
            if fault is None and r.args.slowdown_every and r.request_number % r.args.slowdown_every == 0:
                fault = error_reply(503, "Slow Down", "SlowDown", "Please reduce your request rate.")
                st.faults["503"] += 1
            if fault is not None:
                if st.first_fault_at is None:
                    st.first_fault_at = round(now - r.start, 3)
                # The body still crosses the link (the client sends it), then the reply comes.
                async def discard(data):
                    await self.queue_up_void(data)
                await self.read_body(chunked, length, discard)
                at = max(r.now() + r.half, self.last_up)
                self.last_up = at
                self.up.put_nowait((at, ("reply", fault)))
                continue
            if method == "PUT":
                st.puts += 1
                st.put_payload += length
                key = (path, q.get("partNumber", [""])[0], q.get("uploadId", [""])[0])
                if key in st.seen_put:
                    st.put_payload_again += length
                st.seen_put.add(key)
                st.put_lengths[key + (st.puts,)] = length
            self.awaiting_reply = True
            await self.queue_up(head)
            await self.read_body(chunked, length, self.queue_up)

    async def read_body(self, chunked, length, sink):
        if not chunked:
            await self.read_exact(length, sink)
            return
        reader = self.client_r
        while True:
            line = await reader.readuntil(b"\r\n")
            await sink(line)
            try:
                size = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                raise EOFError from None  # not HTTP: the connection ends
            if size == 0:
                break
            await self.read_exact(size + 2, sink)  # the data and its CRLF
        while True:  # trailer fields (a checksum), up to the empty line
            line = await reader.readuntil(b"\r\n")
            await sink(line)
            if line == b"\r\n":
                return

    async def queue_up_void(self, data):
        # Through the link (it costs the uplink) but never delivered.
        r = self.relay
        await r.link.send(len(data))
        r.stats.bytes_up += len(data)

    async def raw_up(self):
        self.awaiting_reply = True
        while True:
            data = await self.client_r.read(CHUNK)
            if not data:
                return
            await self.queue_up(data)

    async def deliver_up(self, server_w):
        r = self.relay
        while True:
            at, data = await self.up.get()
            delay = at - r.now()
            if delay > 0:
                await asyncio.sleep(delay)
            if isinstance(data, tuple):
                # A fault reply: it leaves the "server" now and takes the way down.
                self.awaiting_reply = False
                self.queue_down(data[1], extra=0)
                continue
            self.up_bytes -= len(data)
            if self.up_bytes < self.window:
                self.up_room.set()
            server_w.write(data)
            await server_w.drain()

    # -- downward --------------------------------------------------------------------------
    def queue_down(self, data, extra, final=True):
        r = self.relay
        if self.outstanding and final:
            self.done_request()
        at = max(r.now() + r.half + extra, self.last_down)
        self.last_down = at
        self.down.put_nowait((at, data))

    async def read_replies(self, server_r):
        r = self.relay
        while True:
            data = await server_r.read(CHUNK)
            if not data:
                return
            if self.awaiting_reply and data.startswith(b"HTTP/1.1 100 "):
                # An interim 100 Continue (the AWS CLI sends Expect): R2 answers it before it
                # has the body, so the commit delay goes on the final reply that follows.
                end = data.find(b"\r\n\r\n")
                if end >= 0:
                    self.queue_down(data[:end + 4], 0.0, final=False)
                    data = data[end + 4:]
                    if not data:
                        continue
            extra = 0.0
            if self.awaiting_reply:
                self.awaiting_reply = False
                extra = r.reply_delay
            self.queue_down(data, extra)
            # A TCP window's worth in flight downward, like the way up.
            while self.down.qsize() * CHUNK > self.window:
                await asyncio.sleep(r.half / 4 + 0.001)

    async def deliver_down(self):
        r = self.relay
        while True:
            at, data = await self.down.get()
            delay = at - r.now()
            if delay > 0:
                await asyncio.sleep(delay)
            self.client_w.write(data)
            await self.client_w.drain()


def listening_socket(port):
    # Small kernel buffers on our side, so the relay's queue is where bytes wait.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    sock.bind(("127.0.0.1", port))
    sock.listen(1024)
    return sock


def write_json(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f)
    os.replace(tmp, path)


async def main_async(args, sock, stats_path, announce):
    relay = Relay(args)
    server = await asyncio.start_server(relay.handle, sock=sock, limit=CHUNK, backlog=1024)
    if announce:
        print(f"PORT {sock.getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        relay.loop.add_signal_handler(sig, stop.set)
    parent = os.getppid()

    async def orphaned():
        # A worker whose parent died (SIGKILL) stops by itself.
        while not announce and os.getppid() == parent:
            await asyncio.sleep(0.5)
        if not announce:
            stop.set()
    watch = asyncio.ensure_future(orphaned())
    try:
        await asyncio.wait_for(stop.wait(), timeout=args.max_seconds)
    except asyncio.TimeoutError:
        print("wanrelay: --max-seconds reached", file=sys.stderr)
    watch.cancel()
    server.close()
    if stats_path:
        write_json(stats_path, relay.stats.summary())


def merge_stats(parts):
    """One summary from the workers': counts added, PUT keys pooled (a retry may have gone
    through another worker), in-flight slots added."""
    out = {"connections": 0, "refused": 0, "requests": 0, "puts": 0, "bytes_up": 0, "put_payload": 0,
           "put_payload_again": 0, "faults": {"503": 0, "429": 0}, "first_fault_at": None}
    seen, timeline = set(), {}
    for part in parts:
        for k in ("connections", "refused", "requests", "puts", "bytes_up", "put_payload"):
            out[k] += part[k]
        for k, v in part["faults"].items():
            out["faults"][k] += v
        for key in sorted(part["put_keys"], key=lambda item: item[3]):
            if tuple(key[:3]) in seen:
                out["put_payload_again"] += key[4]
            seen.add(tuple(key[:3]))
        for slot, n in part["in_flight_per_100ms"]:
            timeline[slot] = timeline.get(slot, 0) + n
    out["in_flight_per_100ms"] = [[k, v] for k, v in sorted(timeline.items())]
    out["first_connections"] = sorted(t for part in parts for t in part["first_connections"])[:FIRST_LOGGED]
    out["first_requests"] = sorted((r for part in parts for r in part["first_requests"]), key=lambda r: r[0])[:FIRST_LOGGED]
    return out


def run_workers(args):
    """The parent: forks --workers processes on one listening socket, waits for SIGTERM/SIGINT
    (or --max-seconds), stops them, and merges their stats."""
    sock = listening_socket(args.port)
    port = sock.getsockname()[1]
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    pids = []
    for i in range(args.workers):
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            path = f"{args.stats}.w{i}" if args.stats else None
            try:
                asyncio.run(main_async(args, sock, path, announce=False))
            finally:
                os._exit(0)
        pids.append(pid)
    sock.close()
    print(f"PORT {port}", flush=True)
    deadline = time.monotonic() + args.max_seconds
    while not stop and time.monotonic() < deadline and all(os.waitpid(p, os.WNOHANG) == (0, 0) for p in pids):
        time.sleep(0.1)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    if args.stats:
        parts = []
        for i in range(args.workers):
            try:
                with open(f"{args.stats}.w{i}") as f:
                    parts.append(json.load(f))
                os.remove(f"{args.stats}.w{i}")
            except (OSError, ValueError):
                pass
        write_json(args.stats, merge_stats(parts))


def main():
    # A parent that spawned us from a thread with SIGTERM blocked passes that mask on: unblock,
    # or "stopped by PID" would not stop us.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--upstream", required=True, help="http://127.0.0.1:PORT of the server")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--rtt-ms", type=float, default=40)
    p.add_argument("--setup-rtts", type=float, default=2)
    p.add_argument("--reply-delay-ms", type=float, default=0)
    p.add_argument("--up-mbit", type=float, default=0, help="0: unlimited")
    p.add_argument("--drop-after", type=float, default=None, help="seconds; then a tenth of --up-mbit")
    p.add_argument("--window", type=int, default=4 * 1024 * 1024, help="bytes in flight per connection and way")
    p.add_argument("--slowdown-every", type=int, default=0)
    p.add_argument("--key-429", type=float, default=0, help="seconds")
    p.add_argument("--max-connections", type=int, default=1024)
    p.add_argument("--max-seconds", type=float, default=3600)
    p.add_argument("--workers", type=int, default=1, help="processes sharing the port (1-8)")
    p.add_argument("--stats", help="write a JSON summary here on exit")
    args = p.parse_args()
    u = urlsplit(args.upstream)
    if u.scheme != "http" or u.hostname not in ("127.0.0.1", "localhost", "::1"):
        p.error("--upstream must be http:// on loopback")
    if args.drop_after is not None and not args.up_mbit:
        p.error("--drop-after needs --up-mbit")
    if not 1 <= args.workers <= 8:
        p.error("--workers must be from 1 to 8")
    if args.workers > 1 and (args.up_mbit or args.slowdown_every or args.key_429):
        p.error("--workers above 1 only without --up-mbit, --slowdown-every and --key-429 (one shared clock)")
    if args.workers > 1:
        args.max_connections = max(1, args.max_connections // args.workers)
        run_workers(args)
        return
    asyncio.run(main_async(args, listening_socket(args.port), args.stats, announce=True))


if __name__ == "__main__":
    main()
