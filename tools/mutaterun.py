#!/usr/bin/env python3
"""mutaterun: the runner behind scripts/mutate-run.sh (issue 28 item 4); not run by itself.

The script starts a private SeaweedFS, writes the files and the object to pull, and hands
the runs to this. Each of --workers processes keeps one mutateproxy relay (an asyncio loop
on a thread) and one boto3 client for its whole life; the runs come from one queue. Per
run the worker opens a new relay listener (a fresh mutateproxy.Relay, seed SEED*100000+RUN,
request counter from 1, its own log) on a new port, runs one r2up operation through it
(bounded, like `timeout -k 5 300`), closes the listener, and checks the result against the
server directly. So a run is what it was with a relay process and check.py per run, and
`--from K --runs K` replays run K alone with the same seed and operation. Each worker has
its own HOME and per-run stores; a run whose checks pass has its files, objects and
unfinished uploads removed (the bucket and the disk stay small over thousands of runs).

One line per run on stdout (in the order runs end), a summary line, exit 1 on a failed check.
"""
import argparse
import asyncio
import hashlib
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutateproxy  # noqa: E402

OPS = ["push-small", "push-big", "sync", "pull", "copy"]
PULL_KEY = "mutate-pull/big.wav"


def digest(data):
    return hashlib.sha256(data).hexdigest()


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class RelayHost:
    """One asyncio loop on a thread; a new mutateproxy.Relay listener per run."""

    def __init__(self, upstream):
        host, _, port = upstream.rpartition(":")
        self.host, self.port = host, int(port)
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def call(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def open(self, seed, rate, delay_seconds, delay_share, log):
        a = argparse.Namespace(seed=seed, rate=rate, delay_seconds=delay_seconds, delay_share=delay_share,
                               log=log, host=self.host, port=self.port)

        async def start():
            relay = mutateproxy.Relay(a)
            server = await asyncio.start_server(relay.handle, "127.0.0.1", 0, limit=1 << 20, backlog=256)
            return relay, server
        relay, server = self.call(start())
        return relay, server, server.sockets[0].getsockname()[1]

    def close(self, relay, server):
        async def stop():
            server.close()   # a held (delayed) reply of this run may still end later: it writes no log
            if relay.log:
                relay.log.close()
                relay.log = None
        self.call(stop())


def run_op(a, wdir, run, op, port, db, prefix):
    """Runs one operation through the relay; returns (exit status, pulled file or None)."""
    via = dict(os.environ, R2UP_ENDPOINT=f"http://127.0.0.1:{port}", HOME=f"{wdir}/home",
               XDG_CONFIG_HOME=f"{wdir}/home/.config", XDG_DATA_HOME=f"{wdir}/home/.local/share")
    plain = dict(via, R2UP_ENDPOINT=os.environ["R2UP_ENDPOINT"])
    files = f"{a.work}/files"
    pulled = None
    if op == "push-small":
        argv = ["push", f"{files}/small.m4a", "--key", f"{prefix}small.m4a", "--db", db, "--quiet"]
    elif op == "push-big":
        argv = ["push", f"{files}/big.wav", "--key", f"{prefix}big.wav", "--part-size", "5M",
                "--multipart-threshold", "5M", "--db", db, "--quiet"]
    elif op == "sync":
        argv = ["sync", f"{files}/album", "--prefix", f"{prefix}album/", "--min-age", "0", "--db", db, "--quiet"]
    elif op == "pull":
        pulled = f"{wdir}/pulled-{run}/big.wav"
        argv = ["pull", PULL_KEY, f"{wdir}/pulled-{run}/", "--db", db, "--quiet"]
    else:
        # The folder synced clean (not through the relay), then renamed: the second sync
        # copies server-side, through the relay.
        tree = f"{wdir}/copy-{run}"
        os.makedirs(tree, exist_ok=True)
        shutil.copytree(f"{files}/album", f"{tree}/album")
        subprocess.run([a.bin, "sync", tree, "--prefix", prefix, "--min-age", "0", "--db", db, "--quiet"],
                       env=plain, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.rename(f"{tree}/album", f"{tree}/moved")
        argv = ["sync", tree, "--prefix", prefix, "--min-age", "0", "--db", db, "--quiet"]
    with open(f"{wdir}/run-{run}.out", "wb") as out, open(f"{wdir}/run-{run}.err", "wb") as err:
        p = subprocess.Popen([a.bin] + argv, env=via, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        try:
            status = p.wait(timeout=a.timeout)
        except subprocess.TimeoutExpired:
            p.terminate()
            try:
                p.wait(timeout=5)
                status = 124
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                status = 137
    if status < 0:
        status = 128 - status   # killed by a signal: as a shell reports it
    return status, pulled


def check(s3, bucket, files, prefix, db, op, status, pulled):
    """The assertions of scripts/mutate-run.sh's header; returns the problems found."""
    import sqlite3
    problems = []
    if status in (124, 137):
        problems.append("hang: killed by the timeout")
    elif status not in (0, 1, 2, 3, 4, 5):
        problems.append(f"crash or undocumented exit code {status}")
    objects = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for o in page.get("Contents", []):
            body = s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
            objects[o["Key"]] = (len(body), digest(body))

    def source(name):
        # A renamed folder's copies hold the files of album/.
        return "album/" + name[len("moved/"):] if name.startswith("moved/") else name
    by_name = {}
    for key, (size, d) in objects.items():
        name = key[len(prefix):]
        by_name[name] = d
        if files.get(source(name)) != d:
            problems.append(f"wrong or torn object {key} ({size} bytes)")
    if os.path.exists(db):
        with sqlite3.connect(db) as c:
            for key, size in c.execute("SELECT r2Key, fileSize FROM history WHERE r2Key LIKE ?", (prefix + "%",)):
                if key not in objects:
                    problems.append(f"history row for missing object {key}")
                elif objects[key][0] != size:
                    problems.append(f"history row size {size} for {key} of {objects[key][0]} bytes")
        c.close()
    if status == 0 and op in ("push-small", "push-big", "sync", "copy"):
        want = {"push-small": ["small.m4a"], "push-big": ["big.wav"],
                "sync": [f"album/{i:02d} track.m4a" for i in range(4)],
                "copy": [f"moved/{i:02d} track.m4a" for i in range(4)]}[op]
        for name in want:
            if by_name.get(name) != files.get(source(name)):
                problems.append(f"exit 0 but {name} is not in the bucket with its bytes")
    if op == "pull" and pulled:
        if os.path.exists(pulled):
            if file_digest(pulled) != files["big.wav"]:
                problems.append("pulled file differs from the object")
        elif status == 0:
            problems.append("exit 0 but no pulled file")
    return problems, sorted(objects)


def clean_up(s3, bucket, wdir, run, prefix, keys):
    """A run that passed leaves nothing: its objects, unfinished uploads and files."""
    for key in keys:
        s3.delete_object(Bucket=bucket, Key=key)
    for up in s3.list_multipart_uploads(Bucket=bucket, Prefix=prefix).get("Uploads", []):
        s3.abort_multipart_upload(Bucket=bucket, Key=up["Key"], UploadId=up["UploadId"])
    for name in (f"pulled-{run}", f"copy-{run}"):
        shutil.rmtree(f"{wdir}/{name}", ignore_errors=True)
    for name in (f"run-{run}.sqlite", f"run-{run}.sqlite-wal", f"run-{run}.sqlite-shm",
                 f"run-{run}.out", f"run-{run}.err", f"run-{run}.mutations.jsonl"):
        try:
            os.remove(f"{wdir}/{name}")
        except FileNotFoundError:
            pass


def worker(a, index, runs, results):
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent stops us
    import boto3
    from botocore.config import Config
    s3 = boto3.client("s3", endpoint_url=os.environ["R2UP_ENDPOINT"], region_name="us-east-1",
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
    bucket = os.environ["R2UP_BUCKET"]
    files = {}
    for root, _, names in os.walk(a.work + "/files"):
        for n in names:
            p = os.path.join(root, n)
            files[os.path.relpath(p, a.work + "/files")] = file_digest(p)
    wdir = f"{a.work}/w{index}"
    os.makedirs(f"{wdir}/home", exist_ok=True)
    relays = RelayHost(os.environ["R2UP_ENDPOINT"].removeprefix("http://"))
    while True:
        run = runs.get()
        if run is None:
            return
        op = OPS[(run - 1) % len(OPS)]
        seed = a.seed * 100000 + run
        prefix = f"mutate-{a.seed}-{run}/"
        db = f"{wdir}/run-{run}.sqlite"
        log = f"{wdir}/run-{run}.mutations.jsonl"
        started = time.monotonic()
        relay, server, port = relays.open(seed, a.rate, a.delay_seconds, a.delay_share, log)
        try:
            status, pulled = run_op(a, wdir, run, op, port, db, prefix)
        finally:
            relays.close(relay, server)
        ran = time.monotonic() - started
        mutated = sum(v for k, v in relay.counts.items() if k != "requests")
        problems, keys = check(s3, bucket, files, prefix, db, op, status, pulled)
        with open(f"{wdir}/run-{run}.err", "rb") as f:
            err = f.read(300).decode("utf-8", "replace")
        if not problems and not a.keep:
            clean_up(s3, bucket, wdir, run, prefix, keys)
        results.put({"run": run, "seed": seed, "op": op, "status": status, "mutated": mutated,
                     "requests": relay.counts["requests"], "problems": problems, "err": err,
                     "seconds": round(time.monotonic() - started, 2), "r2up_seconds": round(ran, 2),
                     "worker": index})


def main():
    ap = argparse.ArgumentParser(description="scripts/mutate-run.sh's runner (see its header).")
    ap.add_argument("--work", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--from", type=int, default=1, dest="first")
    ap.add_argument("--runs", type=int, required=True, help="the last run")
    ap.add_argument("--rate", type=float, default=0.25)
    ap.add_argument("--delay-seconds", type=float, default=35.0)
    ap.add_argument("--delay-share", type=float, default=0.2)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--only", help="comma list of run numbers: replay just these (within --from..--runs)")
    ap.add_argument("--results", help="also append each run's result as a JSON line here")
    ap.add_argument("--keep", action="store_true", help="keep every run's files and objects")
    a = ap.parse_args()
    ctx = multiprocessing.get_context("fork")
    runs, results = ctx.Queue(), ctx.Queue()
    wanted = list(range(a.first, a.runs + 1))
    if a.only:
        only = {int(n) for n in a.only.split(",") if n.strip()}
        wanted = [run for run in wanted if run in only]
    for run in wanted:
        runs.put(run)
    workers = [ctx.Process(target=worker, args=(a, i, runs, results), daemon=True)
               for i in range(max(1, min(a.workers, len(wanted))))]
    for _ in workers:
        runs.put(None)
    for w in workers:
        w.start()
    sink = open(a.results, "a", buffering=1) if a.results else None
    failed = crashes = hangs = wrong = clean = errors = 0
    exits = {}
    seconds = 0.0
    started = time.monotonic()
    for _ in wanted:
        while True:
            try:
                r = results.get(timeout=5)
                break
            except Exception:
                if not any(w.is_alive() for w in workers):
                    sys.exit("mutaterun: every worker ended early")
        if sink:
            sink.write(json.dumps(r) + "\n")
        status, problems = r["status"], r["problems"]
        exits[status] = exits.get(status, 0) + 1
        seconds += r["seconds"]
        if status == 0:
            clean += 1
        else:
            errors += 1
        line = f"run {r['run']} seed {r['seed']} {r['op']}: exit {status}, {r['mutated']} replies mutated"
        if problems:
            failed += 1
            text = json.dumps(problems)
            hangs += "hang" in text
            crashes += "crash" in text
            wrong += any(w in text for w in ("wrong", "differs", "missing"))
            print(f"{line}: FAILED {text}; stderr: {' '.join(r['err'].splitlines())}", flush=True)
        else:
            first = r["err"].splitlines()[0][:160] if r["err"] else ""
            print(f"{line}: ok" + (f"; {first}" if status != 0 else ""), flush=True)
    for w in workers:
        w.join()
    wall = time.monotonic() - started
    which = f"runs {a.only}" if a.only else f"runs {a.first}-{a.runs}"
    summary = (f"{which} (seed {a.seed}, rate {a.rate}): {clean} exit 0, {errors} clear errors; "
               f"{crashes} crashes, {hangs} hangs, {wrong} wrong objects or states; {failed} failed checks; "
               f"exit codes:" + "".join(f" {k}×{v}" for k, v in sorted(exits.items())) +
               f"; {len(wanted)} runs in {wall:.0f} s with {len(workers)} workers "
               f"({wall / len(wanted):.2f} s a run, {seconds / len(wanted):.2f} s each)")
    print(summary, flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
