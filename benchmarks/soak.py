#!/usr/bin/env python3
"""The soak of issue 28 item 5, driven by benchmarks/soak.sh (which starts the server).

`r2up watch` runs over a tree changed at --rate operations a second for --minutes: new files,
appends, renames, folders moved out of the tree and back in, deletions. Meanwhile the server is
restarted every --restart-every seconds and the connection is cut (every connection refused
and the open ones closed) for --cut-seconds, twice. r2up talks to a relay of this script's on a
fixed port, so a restarted server on another port is the same endpoint to it.

Then the changes stop and watch gets --settle seconds to finish. Checked, with boto3 and the store:
  - every file in the tree is in the bucket under its key with its bytes (0 lost);
  - no key holds two history rows with the same ETag that are uploads (not copies): nothing
    uploaded twice without a change;
  - `r2up queue --json` shows nothing failed, interrupted, queued or uploading;
  - watch's RSS and open descriptors after warm-up grew by at most 5 MiB and 5.
Prints the figures as one JSON object; exit 1 if a check failed.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time

import boto3
from botocore.config import Config


class Relay:
    """TCP relay on a fixed loopback port to the server's current port; can be cut."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.cut = False
        self.conns = set()
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(256)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.sock.accept()
            if self.cut:
                client.close()
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.conns.update((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self.pump, args=(a, b), daemon=True).start()

    def pump(self, source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
            with self.lock:
                self.conns.discard(s)

    def close_all(self):
        with self.lock:
            conns, self.conns = list(self.conns), set()
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


class Tree:
    """The watched tree and the changes made to it, at random (seeded).

    Every file is root/FOLDER/NAME. The tree is known in memory (only this class changes it), so
    a change costs the same however large the tree grows: a walk of the whole tree at every
    change (as the first version did) took most of a loaded core by 4,000 files.
    """

    def __init__(self, root, outside, seed):
        self.root, self.outside = root, outside
        self.rng = random.Random(seed)
        self.counts = {"new": 0, "append": 0, "rename": 0, "move-out": 0, "move-in": 0, "delete": 0}
        self.serial = 0
        self.bytes_written = 0
        self.paths = []  # the files under root, in a list for seeded picks
        self.position = {}  # path -> its index in self.paths
        self.albums = {}  # folder under root -> {path: None} (insertion-ordered)
        self.away = {}  # folder name moved outside -> its file names
        os.makedirs(root, exist_ok=True)
        os.makedirs(outside, exist_ok=True)

    def files(self):
        """The files really in the tree (a walk: the truth the checks use)."""
        found = []
        for folder, _, names in os.walk(self.root):
            found += [os.path.join(folder, n) for n in names]
        return found

    def add(self, path):
        self.position[path] = len(self.paths)
        self.paths.append(path)
        self.albums[os.path.dirname(path)][path] = None

    def drop(self, path):
        index = self.position.pop(path)
        last = self.paths.pop()
        if index < len(self.paths):
            self.paths[index] = last
            self.position[last] = index
        del self.albums[os.path.dirname(path)][path]

    def size(self):
        roll = self.rng.random()
        if roll < 0.01:
            return self.rng.randrange(9 << 20, 12 << 20)  # multipart
        if roll < 0.06:
            return self.rng.randrange(1 << 20, 3 << 20)
        return self.rng.randrange(2_000, 64_000)

    def write(self, path, size, mode="wb"):
        with open(path, mode) as f:
            f.write(os.urandom(size))
        self.bytes_written += size

    def step(self):
        roll = self.rng.random()
        if roll < 0.40 or len(self.paths) < 20:
            if not self.albums or self.rng.random() < 0.1:
                folder = os.path.join(self.root, f"album {self.serial:05d}")
                os.makedirs(folder, exist_ok=True)
                self.albums.setdefault(folder, {})
            else:
                folder = self.rng.choice(list(self.albums))
            self.serial += 1
            path = os.path.join(folder, f"track {self.serial:06d}.m4a")
            self.write(path, self.size())
            self.add(path)
            self.counts["new"] += 1
        elif roll < 0.55:
            self.write(self.rng.choice(self.paths), self.rng.randrange(1_000, 20_000), "ab")
            self.counts["append"] += 1
        elif roll < 0.70:
            source = self.rng.choice(self.paths)
            self.serial += 1
            target = os.path.join(os.path.dirname(source), f"renamed {self.serial:06d}.m4a")
            os.rename(source, target)
            self.drop(source)
            self.add(target)
            self.counts["rename"] += 1
        elif roll < 0.78:
            folder = self.rng.choice(list(self.albums))
            name = os.path.basename(folder)
            files = list(self.albums[folder])
            shutil.move(folder, os.path.join(self.outside, name))
            for path in files:
                self.drop(path)
            del self.albums[folder]
            self.away[name] = [os.path.basename(p) for p in files]
            self.counts["move-out"] += 1
        elif roll < 0.88:
            if self.away:
                name = self.rng.choice(list(self.away))
                folder = os.path.join(self.root, name)
                if folder not in self.albums:
                    shutil.move(os.path.join(self.outside, name), folder)
                    self.albums[folder] = {}
                    for file in self.away.pop(name):
                        self.add(os.path.join(folder, file))
                    self.counts["move-in"] += 1
        else:
            path = self.rng.choice(self.paths)
            os.remove(path)
            self.drop(path)
            self.counts["delete"] += 1


def sample(pid):
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return rss * 1024, len(os.listdir(f"/proc/{pid}/fd"))


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--server-dir", required=True)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--rate", type=float, default=20, help="tree operations a second")
    ap.add_argument("--restart-every", type=float, default=300)
    ap.add_argument("--cut-seconds", type=float, default=30)
    ap.add_argument("--settle", type=float, default=240, help="seconds watch gets to finish after the changes")
    ap.add_argument("--warmup", type=float, default=None, help="seconds before RSS and descriptors are taken as the base")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    duration = a.minutes * 60
    warmup = a.warmup if a.warmup is not None else min(120, duration / 3)
    server_env = lambda: dict(line.split("=", 1) for line in (
        l.strip()[len("export "):] for l in open(os.path.join(a.server_dir, "env")) if l.startswith("export ")))
    env = server_env()
    port = lambda e: int(e["R2UP_ENDPOINT"].rsplit(":", 1)[1])
    relay = Relay(port(env))
    s3 = boto3.client("s3", endpoint_url=env["R2UP_ENDPOINT"], region_name="us-east-1",
                      aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5}))
    tree = Tree(os.path.join(a.work, "tree"), os.path.join(a.work, "outside"), a.seed)
    prefix = f"soak-{int(time.time())}/"
    db = os.path.join(a.work, "soak.sqlite")
    r2env = {**os.environ, **env, "R2UP_ENDPOINT": f"http://127.0.0.1:{relay.port}"}
    events = open(os.path.join(a.work, "watch.jsonl"), "w")
    watch = subprocess.Popen([a.bin, "watch", tree.root, "--prefix", prefix, "--min-age", "1s", "--json", "--db", db],
                             env=r2env, stdout=events, stderr=open(os.path.join(a.work, "watch.err"), "w"))
    samples = []
    started = time.monotonic()
    cuts = [duration * 0.3, duration * 0.7]
    restarts = [t for t in (a.restart_every * k for k in range(1, 100)) if t < duration]
    log = []

    def restart():
        subprocess.run(["bash", "scripts/seaweedfs.sh", "stop", a.server_dir], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        relay.close_all()
        subprocess.run(["bash", "scripts/seaweedfs.sh", "start", a.server_dir], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        relay.upstream_port = port(server_env())

    next_sample = 0.0
    cut_until = None
    ops = 0
    while (now := time.monotonic() - started) < duration:
        if watch.poll() is not None:
            raise SystemExit(f"soak: watch ended early with {watch.returncode}")
        if restarts and now >= restarts[0]:
            restarts.pop(0)
            t0 = time.monotonic()
            restart()
            log.append(f"server restarted at {now:.0f} s ({time.monotonic() - t0:.1f} s down)")
        if cuts and now >= cuts[0]:
            cuts.pop(0)
            relay.cut = True
            relay.close_all()
            cut_until = now + a.cut_seconds
            log.append(f"connection cut at {now:.0f} s for {a.cut_seconds:.0f} s")
        if cut_until is not None and now >= cut_until:
            relay.cut, cut_until = False, None
        if now >= next_sample:
            samples.append((now, *sample(watch.pid)))
            next_sample = now + 5
        # Paced: operation n runs at n/rate seconds, catching up after a restart for at most half
        # a second at a time, so the restarts, cuts and samples keep their times when the machine
        # cannot make --rate changes a second (the figures then say how many it made).
        catch_up_until = time.monotonic() + 0.5
        while ops < now * a.rate and time.monotonic() < catch_up_until:
            tree.step()
            ops += 1
        time.sleep(0.01)
    relay.cut = False
    changes_ended = time.monotonic() - started

    # Settle: until every file is in the bucket with its size, or --settle.
    expected, sizes = {}, {}
    for path in tree.files():
        expected[prefix + os.path.relpath(path, tree.root)] = sha(path)
        sizes[prefix + os.path.relpath(path, tree.root)] = os.path.getsize(path)
    s3 = boto3.client("s3", endpoint_url=server_env()["R2UP_ENDPOINT"], region_name="us-east-1",
                      aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5}))

    def missing():
        present = {}
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=env["R2UP_BUCKET"], Prefix=prefix):
            for o in page.get("Contents", []):
                present[o["Key"]] = o["Size"]
        # A key holding another size is not settled either (a file appended in the last seconds).
        return [k for k in expected if present.get(k) != sizes[k]]

    deadline = time.monotonic() + a.settle
    while time.monotonic() < deadline:
        samples.append((time.monotonic() - started, *sample(watch.pid)))
        if not missing():
            break
        time.sleep(5)
    settled = time.monotonic() - started - changes_ended
    for _ in range(6):  # the last half minute of samples, idle
        samples.append((time.monotonic() - started, *sample(watch.pid)))
        time.sleep(5)
    watch.send_signal(signal.SIGTERM)
    watch.wait(timeout=60)

    problems = []
    lost, wrong = 0, 0
    for key, digest in expected.items():
        try:
            body = s3.get_object(Bucket=env["R2UP_BUCKET"], Key=key)["Body"].read()
        except s3.exceptions.NoSuchKey:
            lost += 1
            continue
        if hashlib.sha256(body).hexdigest() != digest:
            wrong += 1
    if lost or wrong:
        problems.append(f"{lost} files not in the bucket, {wrong} with other bytes")
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT r2Key, etag, copiedFrom, fileSize FROM history WHERE r2Key LIKE ?",
                         (prefix + "%",)).fetchall()
    uploads = [(k, e) for k, e, copied, _ in rows if copied is None]
    uploaded_bytes = sum(size for _, _, copied, size in rows if copied is None)
    copies = len(rows) - len(uploads)
    duplicated = len(uploads) - len(set(uploads))
    if duplicated:
        problems.append(f"{duplicated} uploads of a key with the same ETag again (no change)")
    queue = json.loads(subprocess.run([a.bin, "queue", "--json", "--db", db], env=r2env, capture_output=True).stdout)
    if any(queue["counts"].values()):
        problems.append(f"queue not empty: {queue['counts']}")
    base = [s for s in samples if warmup <= s[0] < warmup + 30] or samples[:1]
    end = samples[-6:]
    rss_growth = statistics.median(r for _, r, _ in end) - statistics.median(r for _, r, _ in base)
    fd_growth = statistics.median(f for _, _, f in end) - statistics.median(f for _, _, f in base)
    if rss_growth > 5 << 20:
        problems.append(f"RSS grew by {rss_growth / 1048576:.1f} MiB after warm-up")
    if fd_growth > 5:
        problems.append(f"{fd_growth:.0f} more open descriptors after warm-up")
    figures = {
        "minutes": a.minutes, "operations": ops, "operationsPerSecond": round(ops / changes_ended, 1),
        "changes": tree.counts, "bytesWritten": tree.bytes_written,
        "filesAtEnd": len(expected), "uploads": len(uploads), "copies": copies,
        "bytesUploaded": uploaded_bytes,
        "settleSeconds": round(settled, 1), "lost": lost, "wrongBytes": wrong, "duplicated": duplicated,
        "queue": queue["counts"], "watchExit": watch.returncode,
        "rssMiB": {"base": round(statistics.median(r for _, r, _ in base) / 1048576, 1),
                   "peak": round(max(r for _, r, _ in samples) / 1048576, 1),
                   "final": round(statistics.median(r for _, r, _ in end) / 1048576, 1)},
        "fds": {"base": statistics.median(f for _, _, f in base), "peak": max(f for _, _, f in samples),
                "final": statistics.median(f for _, _, f in end)},
        "events": log, "problems": problems,
    }
    print(json.dumps(figures, indent=1))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
