#!/usr/bin/env python3
"""The soak of issue 28 item 5, driven by benchmarks/soak.sh (which starts the server).

`r2up watch` runs over a tree changed at --rate operations a second for --minutes: new files,
appends, renames, folders moved out of the tree and back in, deletions. Meanwhile the server is
restarted every --restart-every seconds and the connection is cut (every connection refused
and the open ones closed) for --cut-seconds, twice. r2up talks to a relay of this script's on a
fixed port, so a restarted server on another port is the same endpoint to it.

The tree grows to --files files (default 2,000), then stays about that size: a new file gives way
to a deletion while it holds that many (a folder left empty is removed), so the workload is
steady after warm-up, as the RSS bound assumes. The base of RSS and descriptors is taken once
the tree first holds --files files (and not before --warmup).

Then the changes stop and watch gets --settle seconds to finish: every key with its file's size
and `r2up queue --json` idle. Then --idle seconds idle, six samples 5 s apart (the final RSS and
descriptors), SIGTERM. Checked, with boto3 and the store:
  - every file in the tree is in the bucket under its key with its bytes (0 lost);
  - no key holds two history rows with the same ETag that are uploads (not copies): nothing
    uploaded twice without a change;
  - watch exits 0 and `r2up queue --json` shows nothing failed, interrupted, queued or uploading;
  - a watch started again over the settled tree uploads nothing, leaves the queue empty, exits 0;
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

    def __init__(self, root, outside, seed, target=0):
        self.root, self.outside = root, outside
        self.rng = random.Random(seed)
        # At or above `target` files (0: no bound) a new file gives way to a deletion, so the tree
        # holds about `target` files after warm-up: a steady workload, as the RSS bound assumes.
        self.target = target
        self.reached_at = None  # seconds into the run when the tree first held `target` files
        self.counts = {"new": 0, "append": 0, "rename": 0, "move-out": 0, "move-in": 0, "delete": 0,
                       "folders-removed": 0}
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

    def step(self, now=0.0):
        roll = self.rng.random()
        full = self.target and len(self.paths) >= self.target
        if full and self.reached_at is None:
            self.reached_at = now
        if roll < 0.40 and full:
            self.delete()
        elif roll < 0.40 or len(self.paths) < 20:
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
            self.delete()

    def delete(self):
        path = self.rng.choice(self.paths)
        os.remove(path)
        self.drop(path)
        self.counts["delete"] += 1
        folder = os.path.dirname(path)
        if self.target and not self.albums[folder]:
            # A steady tree keeps a steady number of folders too (each one an inotify watch).
            os.rmdir(folder)
            del self.albums[folder]
            self.counts["folders-removed"] += 1


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


def arguments():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--server-dir", required=True)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--rate", type=float, default=20, help="tree operations a second")
    ap.add_argument("--files", type=int, default=2000,
                    help="the tree's size after warm-up: at this many files deletions take the place of new files "
                         "(0: the tree grows all along, as before 2026-11-27 08:00)")
    ap.add_argument("--restart-every", type=float, default=300)
    ap.add_argument("--cut-seconds", type=float, default=30)
    ap.add_argument("--settle", type=float, default=240, help="seconds watch gets to finish after the changes")
    ap.add_argument("--idle", type=float, default=40,
                    help="seconds of idle watch before the final samples (r2up closes connections idle for 30 s)")
    ap.add_argument("--warmup", type=float, default=None,
                    help="seconds before RSS and descriptors are taken as the base (default: min(120, a third of the "
                         "run), and not before the tree first holds --files files)")
    ap.add_argument("--seed", type=int, default=1)
    return ap.parse_args()


class Soak:
    """The run's server, relay, tree and watch, and what was seen of them."""

    def __init__(self, a):
        self.a = a
        self.duration = a.minutes * 60
        self.env = self.server_env()
        self.relay = Relay(self.port(self.env))
        self.tree = Tree(os.path.join(a.work, "tree"), os.path.join(a.work, "outside"), a.seed, a.files)
        self.prefix = f"soak-{int(time.time())}/"
        self.db = os.path.join(a.work, "soak.sqlite")
        self.r2env = {**os.environ, **self.env, "R2UP_ENDPOINT": f"http://127.0.0.1:{self.relay.port}"}
        self.samples = []
        self.log = []
        self.ops = 0
        self.started = time.monotonic()
        self.watch = self.start_watch("watch.jsonl")

    def server_env(self):
        with open(os.path.join(self.a.server_dir, "env")) as f:
            return dict(line.strip()[len("export "):].split("=", 1) for line in f if line.startswith("export "))

    @staticmethod
    def port(env):
        return int(env["R2UP_ENDPOINT"].rsplit(":", 1)[1])

    def s3(self):
        return boto3.client("s3", endpoint_url=self.server_env()["R2UP_ENDPOINT"], region_name="us-east-1",
                            aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=self.env["AWS_SECRET_ACCESS_KEY"],
                            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5}))

    def start_watch(self, events):
        out = open(os.path.join(self.a.work, events), "w")
        err = open(os.path.join(self.a.work, events.replace(".jsonl", ".err")), "w")
        return subprocess.Popen(
            [self.a.bin, "watch", self.tree.root, "--prefix", self.prefix, "--min-age", "1s", "--json", "--db", self.db],
            env=self.r2env, stdout=out, stderr=err)

    def now(self):
        return time.monotonic() - self.started

    def take_sample(self):
        self.samples.append((self.now(), *sample(self.watch.pid)))

    def queue(self):
        return self.queue_report()["counts"]

    def queue_report(self):
        run = subprocess.run([self.a.bin, "queue", "--json", "--db", self.db], env=self.r2env, capture_output=True)
        return json.loads(run.stdout)

    def failed_jobs(self):
        """Each job left failed: its key, the file's state now and the error, for the problem's line."""
        rows = []
        for job in self.queue_report().get("failed", []):
            there = "present" if os.path.exists(job.get("path", "")) else "gone"
            rows.append(f"{job.get('key')} ({job.get('state')}, {job.get('attempts')} tries, file {there}"
                        f"{', a copy' if job.get('copyOf') else ''}): {job.get('lastError')}")
        return rows

    def restart_server(self):
        subprocess.run(["bash", "scripts/seaweedfs.sh", "stop", self.a.server_dir], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        self.relay.close_all()
        subprocess.run(["bash", "scripts/seaweedfs.sh", "start", self.a.server_dir], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        self.relay.upstream_port = self.port(self.server_env())

    def change(self):
        """The changes, paced, with the restarts, cuts and samples on time."""
        a, relay = self.a, self.relay
        cuts = [self.duration * 0.3, self.duration * 0.7]
        restarts = [t for t in (a.restart_every * k for k in range(1, 100)) if t < self.duration]
        next_sample = 0.0
        cut_until = None
        while (now := self.now()) < self.duration:
            if self.watch.poll() is not None:
                raise SystemExit(f"soak: watch ended early with {self.watch.returncode}")
            if restarts and now >= restarts[0]:
                restarts.pop(0)
                t0 = time.monotonic()
                self.restart_server()
                self.log.append(f"server restarted at {now:.0f} s ({time.monotonic() - t0:.1f} s down)")
            if cuts and now >= cuts[0]:
                cuts.pop(0)
                relay.cut = True
                relay.close_all()
                cut_until = now + a.cut_seconds
                self.log.append(f"connection cut at {now:.0f} s for {a.cut_seconds:.0f} s")
            if cut_until is not None and now >= cut_until:
                relay.cut, cut_until = False, None
            if now >= next_sample:
                self.samples.append((now, *sample(self.watch.pid), len(self.tree.paths)))
                next_sample = now + 5
            # Paced: operation n runs at n/rate seconds, catching up after a restart for at most half
            # a second at a time, so the restarts, cuts and samples keep their times when the machine
            # cannot make --rate changes a second (the figures then say how many it made).
            catch_up_until = time.monotonic() + 0.5
            while self.ops < now * a.rate and time.monotonic() < catch_up_until:
                self.tree.step(now)
                self.ops += 1
            time.sleep(0.01)
        relay.cut = False

    def settle(self, sizes):
        """Until every file is in the bucket with its size and the queue is idle, or --settle."""
        s3 = self.s3()

        def missing():
            present = {}
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=self.env["R2UP_BUCKET"], Prefix=self.prefix):
                for o in page.get("Contents", []):
                    present[o["Key"]] = o["Size"]
            # A key holding another size is not settled either (a file appended in the last seconds).
            return [k for k in sizes if present.get(k) != sizes[k]]

        deadline = time.monotonic() + self.a.settle
        while time.monotonic() < deadline:
            self.take_sample()
            # Idle too: a job still queued or uploading at the stop would be cut by it (the 30-minute
            # run of 2026-11-27 06:12 stopped watch while one was left).
            if not missing() and not any(self.queue().values()):
                return True
            time.sleep(5)
        return False

    def stop(self, watch):
        watch.send_signal(signal.SIGTERM)
        return watch.wait(timeout=60)

    def restart_watch(self):
        """A second watch over the settled tree: it must find nothing to send and leave nothing queued."""
        self.watch = self.start_watch("watch-again.jsonl")
        deadline = time.monotonic() + 120
        first = None
        while time.monotonic() < deadline and first is None:
            time.sleep(1)
            with open(os.path.join(self.a.work, "watch-again.jsonl")) as f:
                first = next((json.loads(l) for l in f if '"event":"watching"' in l), None)
        while time.monotonic() < deadline and any(self.queue().values()):
            time.sleep(1)
        code = self.stop(self.watch)
        return first, code


def check_bucket(soak, expected):
    s3 = soak.s3()
    lost, wrong = 0, 0
    for key, digest in expected.items():
        try:
            body = s3.get_object(Bucket=soak.env["R2UP_BUCKET"], Key=key)["Body"].read()
        except s3.exceptions.NoSuchKey:
            lost += 1
            continue
        if hashlib.sha256(body).hexdigest() != digest:
            wrong += 1
    return lost, wrong


def history(soak):
    with sqlite3.connect(soak.db) as c:
        rows = c.execute("SELECT r2Key, etag, copiedFrom, fileSize FROM history WHERE r2Key LIKE ?",
                         (soak.prefix + "%",)).fetchall()
    uploads = [(k, e) for k, e, copied, _ in rows if copied is None]
    uploaded_bytes = sum(size for _, _, copied, size in rows if copied is None)
    return uploads, uploaded_bytes, len(rows) - len(uploads)


def main():
    a = arguments()
    soak = Soak(a)
    tree = soak.tree
    soak.change()
    changes_ended = soak.now()
    expected, sizes = {}, {}
    for path in tree.files():
        expected[soak.prefix + os.path.relpath(path, tree.root)] = sha(path)
        sizes[soak.prefix + os.path.relpath(path, tree.root)] = os.path.getsize(path)
    settled_in_time = soak.settle(sizes)
    settled = soak.now() - changes_ended
    # Idle, then the final samples: what a watch holds between bursts.
    idle_until = time.monotonic() + a.idle
    while time.monotonic() < idle_until:
        soak.take_sample()
        time.sleep(5)
    end = []
    for _ in range(6):
        soak.take_sample()
        end.append(soak.samples[-1])
        time.sleep(5)
    watch_exit = soak.stop(soak.watch)

    problems = []
    if not settled_in_time:
        problems.append(f"not settled in {a.settle:.0f} s (a key without its file's size, or the queue not idle)")
    if watch_exit != 0:
        problems.append(f"watch exited {watch_exit} on SIGTERM")
    queue = soak.queue()
    if any(queue.values()):
        problems.append(f"queue not empty at the stop: {queue}; failed: {soak.failed_jobs()}")
    lost, wrong = check_bucket(soak, expected)
    if lost or wrong:
        problems.append(f"{lost} files not in the bucket, {wrong} with other bytes")
    uploads, uploaded_bytes, copies = history(soak)
    duplicated = len(uploads) - len(set(uploads))
    if duplicated:
        problems.append(f"{duplicated} uploads of a key with the same ETag again (no change)")

    # A restart of watch over the settled tree: nothing to send again, nothing left queued.
    again, again_exit = soak.restart_watch()
    again_queue = soak.queue()
    again_uploads = len(history(soak)[0]) - len(uploads)
    if again is None or again_exit != 0 or again_uploads or any(again_queue.values()):
        problems.append(f"watch started again: {again_uploads} uploads, exit {again_exit}, queue {again_queue}, "
                        f"first pass {again}")

    warmup = a.warmup if a.warmup is not None else min(120, soak.duration / 3)
    if a.warmup is None and tree.reached_at is not None:
        warmup = max(warmup, tree.reached_at)
    base = [s for s in soak.samples if warmup <= s[0] < warmup + 30] or soak.samples[:1]
    median = lambda rows, i: statistics.median(r[i] for r in rows)
    rss_growth = median(end, 1) - median(base, 1)
    fd_growth = median(end, 2) - median(base, 2)
    if rss_growth > 5 << 20:
        problems.append(f"RSS grew by {rss_growth / 1048576:.1f} MiB after warm-up")
    if fd_growth > 5:
        problems.append(f"{fd_growth:.0f} more open descriptors after warm-up")
    figures = {
        "minutes": a.minutes, "operations": soak.ops, "operationsPerSecond": round(soak.ops / changes_ended, 1),
        "changes": tree.counts, "bytesWritten": tree.bytes_written, "targetFiles": a.files,
        "targetReachedAtSeconds": None if tree.reached_at is None else round(tree.reached_at),
        "filesAtEnd": len(expected), "foldersAtEnd": len(tree.albums), "uploads": len(uploads), "copies": copies,
        "bytesUploaded": uploaded_bytes,
        "settleSeconds": round(settled, 1), "lost": lost, "wrongBytes": wrong, "duplicated": duplicated,
        "queue": queue, "watchExit": watch_exit,
        "again": {"uploads": again_uploads, "exit": again_exit, "queue": again_queue},
        "baseSeconds": round(warmup),
        "rssMiB": {"base": round(median(base, 1) / 1048576, 1),
                   "peak": round(max(s[1] for s in soak.samples) / 1048576, 1),
                   "final": round(median(end, 1) / 1048576, 1)},
        "fds": {"base": median(base, 2), "peak": max(s[2] for s in soak.samples), "final": median(end, 2)},
        # A sample a minute: seconds, RSS MiB, descriptors, files in the tree (while it changed).
        "timeline": [[round(s[0]), round(s[1] / 1048576, 1), s[2], s[3] if len(s) > 3 else None]
                     for i, s in enumerate(soak.samples) if i % 12 == 0],
        "events": soak.log, "problems": problems,
    }
    with open(os.path.join(a.work, "samples.jsonl"), "w") as f:
        for s in soak.samples:
            f.write(json.dumps({"t": round(s[0], 1), "rss": s[1], "fds": s[2], "files": s[3] if len(s) > 3 else None}) + "\n")
    print(json.dumps(figures, indent=1))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
