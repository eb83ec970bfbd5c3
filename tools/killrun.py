#!/usr/bin/env python3
"""SIGKILL r2up at many moments, then check the rerun (issue 28 item 6); run by scripts/kill-run.sh.

Per moment: one operation (push of a 16 MiB file in 4 parts, sync of a folder of five tracks
and an 11 MiB set, pull of a 3-part object; offload and fetch are in tools/killrun_space.py), slowed by --bwlimit so it lasts ~2 s, is killed
with SIGKILL after a seeded delay spread over that time (the n-th moment of an operation
lands at n/N of it, plus jitter: no two alike). All requests go through tools/faultproxy.py
--log-all (no faults), so the step a kill landed on is known: requests answered, body bytes.
Checked after the kill, before the rerun:
  - PRAGMA integrity_check is ok;
  - `r2up queue --json` shows no job uploading (its owner is dead);
  - a pull's destination holds no file under its final name that differs from the object.
Then the same operation runs again, unhindered, and:
  - it exits 0;
  - it sends no UploadPart the store had recorded before it (an acknowledged part);
  - every object under the moment's prefix holds its file's bytes (nothing torn), the foreign
    object put there beforehand is untouched (nothing replaced), and every file is there;
  - one history row per file, each naming an object that is there with its size;
  - no multipart upload the store knows is left open under the prefix (one whose
    CreateMultipartUpload reply the kill cut off is counted apart, then aborted);
  - a pull leaves exactly the object's bytes under the final name and no temporary file.
Prints one line per moment and a summary; exit 1 if any check failed.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import boto3
from botocore.config import Config

from killrun_space import Space


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Run:
    def __init__(self, args):
        self.a = args
        self.work = args.work
        self.env = dict(os.environ, R2UP_ENDPOINT=f"http://127.0.0.1:{args.proxy_port}")
        self.s3 = boto3.client("s3", endpoint_url=os.environ["R2UP_ENDPOINT"], region_name="us-east-1",
                               config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3}))
        self.bucket = os.environ["R2UP_BUCKET"]
        self.files = {}
        self.problems_total = 0
        self.kills = 0
        self.ended_first = 0
        self.orphans = 0
        self.space = Space(self)
        self.slow_env = dict(os.environ, R2UP_ENDPOINT=f"http://127.0.0.1:{args.slow_port}") if args.slow_port else None

    def make_files(self):
        rng = random.Random(self.a.seed)
        sizes = {"big.wav": 16 << 20, "album/set.flac": 11 << 20}
        for i in range(5):
            sizes[f"album/{i:02d} track.m4a"] = 30_000 + rng.randrange(50_000)
        for name, size in sizes.items():
            path = os.path.join(self.work, "files", name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(os.urandom(size))
            self.files[name] = sha(path)
        # The object every pull moment fetches, put there directly (3 parts of 5 MiB, 5 MiB, 1 MiB).
        path = os.path.join(self.work, "files", "album", "set.flac")
        self.r2up(["push", path, "--key", "kill-pull/set.flac", "--part-size", "5M",
                   "--multipart-threshold", "5M", "--db", os.path.join(self.work, "setup.sqlite"), "--quiet"],
                  direct=True, check=True)
        if {"offload", "fetch"} & set(self.a.ops):
            self.space.setup()

    def r2up(self, arguments, direct=False, check=False, timeout=600):
        env = dict(os.environ) if direct else self.env
        p = subprocess.run([self.a.bin] + arguments, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise SystemExit(f"killrun: {arguments[0]} failed: {p.stderr.decode(errors='replace')}")
        return p

    def command(self, op, n, bwlimit):
        prefix = f"kill-{self.a.seed}-{n}/"
        db = os.path.join(self.work, f"m{n}.sqlite")
        files = os.path.join(self.work, "files")
        limit = ["--bwlimit", bwlimit] if bwlimit else []
        if op in ("offload", "fetch"):
            return prefix, db, self.space.command(op, db, bwlimit)
        if op == "push":
            return prefix, db, ["push", files + "/big.wav", "--key", prefix + "big.wav", "--part-size", "5M",
                                "--multipart-threshold", "5M", "--db", db, "--quiet"] + limit
        if op == "sync":
            return prefix, db, ["sync", files + "/album", "--prefix", prefix + "album/", "--min-age", "0",
                                "--db", db, "--quiet", "--concurrency", "4"] + limit
        dest = os.path.join(self.work, f"pulled-{n}") + "/"
        return prefix, db, ["pull", "kill-pull/set.flac", dest, "--db", db, "--quiet"] + limit

    def log_entries(self):
        with open(self.a.proxy_log) as f:
            return [json.loads(line) for line in f if line.startswith("{")]

    @staticmethod
    def upload_part(entry):
        target = entry.get("target") or ""
        if entry.get("method") != "PUT" or "partNumber=" not in target or "uploadId=" not in target:
            return None
        query = dict(item.split("=", 1) for item in target.split("?", 1)[1].split("&") if "=" in item)
        return f"{query.get('uploadId')}#{query.get('partNumber')}"

    @staticmethod
    def recorded_parts(db):
        if not os.path.exists(db):
            return set()
        with sqlite3.connect(db) as c:
            try:
                rows = c.execute("SELECT jobs.uploadID, parts.partNumber FROM parts JOIN jobs ON jobs.id = parts.jobID")
                return {f"{u}#{p}" for u, p in rows}
            except sqlite3.OperationalError:
                return set()  # killed before the schema was made

    def after_kill(self, op, n, prefix, db):
        problems = []
        if os.path.exists(db):
            with sqlite3.connect(db) as c:
                result = c.execute("PRAGMA integrity_check").fetchone()[0]
            if result != "ok":
                problems.append(f"integrity_check: {result}")
            if op in ("push", "sync"):
                q = self.r2up(["queue", "--json", "--db", db])
                if q.returncode != 0:
                    problems.append(f"queue exit {q.returncode}: {q.stderr.decode(errors='replace')[:200]}")
                else:
                    counts = json.loads(q.stdout)["counts"]
                    if counts.get("uploading", 0) != 0:
                        problems.append(f"queue shows {counts['uploading']} uploading after the kill")
        if op in ("offload", "fetch"):
            problems += self.space.after_kill(op, db)
        if op == "pull":
            final = os.path.join(self.work, f"pulled-{n}", "set.flac")
            if os.path.exists(final) and sha(final) != self.files["album/set.flac"]:
                problems.append("a pull left a torn file under its final name")
        return problems

    def objects(self, prefix):
        found = {}
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            for o in page.get("Contents", []):
                body = self.s3.get_object(Bucket=self.bucket, Key=o["Key"])["Body"].read()
                found[o["Key"]] = (len(body), hashlib.sha256(body).hexdigest())
        return found

    def end_state(self, op, n, prefix, db, foreign):
        problems = []
        if op in ("offload", "fetch"):
            return self.space.end_state(op, db)
        objects = self.objects(prefix)
        if op == "pull":
            folder = os.path.join(self.work, f"pulled-{n}")
            names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
            if names != ["set.flac"]:
                problems.append(f"pull folder holds {names}")
            elif sha(os.path.join(folder, "set.flac")) != self.files["album/set.flac"]:
                problems.append("pulled file differs from the object")
            return problems
        want = {"push": {prefix + "big.wav": "big.wav"},
                "sync": {prefix + "album/" + name[len("album/"):]: name for name in self.files if name.startswith("album/")}}[op]
        foreign_key, foreign_digest = foreign
        for key, (size, digest) in objects.items():
            if key == foreign_key:
                if digest != foreign_digest:
                    problems.append("the foreign object was replaced")
            elif key not in want:
                problems.append(f"unexpected object {key}")
            elif digest != self.files[want[key]]:
                problems.append(f"torn or wrong object {key} ({size} bytes)")
        for key in want:
            if key not in objects:
                problems.append(f"missing {key}")
        if foreign_key not in objects:
            problems.append("the foreign object was deleted")
        rows = {}
        with sqlite3.connect(db) as c:
            for key, size in c.execute("SELECT r2Key, fileSize FROM history WHERE r2Key LIKE ?", (prefix + "%",)):
                rows[key] = rows.get(key, 0) + 1
                if key not in objects:
                    problems.append(f"history row for missing object {key}")
                elif objects[key][0] != size:
                    problems.append(f"history row size {size} for {key}")
        for key in want:
            if rows.get(key, 0) != 1:
                problems.append(f"{rows.get(key, 0)} history rows for {key}")
        # An upload the store knows must not be left open. One it never heard of was created by a
        # CreateMultipartUpload whose reply the kill cut off: no run can know its id (counted apart).
        known = set()
        with sqlite3.connect(db) as c:
            known = {row[0] for row in c.execute("SELECT uploadID FROM jobs WHERE uploadID IS NOT NULL")}
        for upload in self.s3.list_multipart_uploads(Bucket=self.bucket, Prefix=prefix).get("Uploads", []):
            if upload["UploadId"] in known:
                problems.append(f"multipart upload {upload['UploadId']} left open")
            else:
                self.orphans += 1
                self.s3.abort_multipart_upload(Bucket=self.bucket, Key=upload["Key"], UploadId=upload["UploadId"])
        return problems

    def moment(self, op, n, index, total):
        prefix, db, killed_cmd = self.command(op, n, self.a.bwlimit)
        foreign = (prefix + "keep/foreign.bin", None)
        if op in ("offload", "fetch"):
            self.space.prepare(op, db)
        elif op != "pull":
            body = os.urandom(4096)
            self.s3.put_object(Bucket=self.bucket, Key=foreign[0], Body=body)
            foreign = (foreign[0], hashlib.sha256(body).hexdigest())
        rng = random.Random(f"{self.a.seed}:{n}")
        # The index-th of `total` moments of this operation: spread over its span, jittered.
        delay = self.a.start + (index + rng.random()) * (self.a.span - self.a.start) / total
        log_start = len(self.log_entries())
        env = self.slow_env if op == "offload" and self.slow_env else self.env
        p = subprocess.Popen([self.a.bin] + killed_cmd, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(delay)
        ended_first = p.poll() is not None
        if not ended_first:
            p.send_signal(signal.SIGKILL)
        p.wait()
        fresh = self.log_entries()[log_start:]
        if op == "offload" and self.slow_env:
            fresh += self.space.entries(self.a.slow_log)[self.space.slow_mark:]
        step = f"{len(fresh)} requests, {sum(e.get('length') or 0 for e in fresh if e.get('method') == 'PUT')} body bytes"
        problems = [] if ended_first else self.after_kill(op, n, prefix, db)
        recorded = self.recorded_parts(db)
        log_start = len(self.log_entries())
        _, _, rerun_cmd = self.command(op, n, None)
        rerun = self.r2up(rerun_cmd)
        if rerun.returncode != 0:
            problems.append(f"rerun exit {rerun.returncode}: {rerun.stderr.decode(errors='replace')[:300]}")
        resent = [part for e in self.log_entries()[log_start:] if (part := self.upload_part(e)) in recorded]
        if resent:
            problems.append(f"rerun re-sent acknowledged parts {resent}")
        problems += self.end_state(op, n, prefix, db, foreign)
        if ended_first:
            self.ended_first += 1
        else:
            self.kills += 1
        self.problems_total += bool(problems)
        what = "ended before the kill" if ended_first else f"killed at {delay * 1000:.0f} ms ({step})"
        if op in ("offload", "fetch") and not ended_first:
            what += f", {self.space.killed_state}"
        status = "FAILED " + json.dumps(problems) if problems else "ok"
        print(f"moment {n} {op}: {what}; {len(recorded)} parts recorded; rerun exit {rerun.returncode}: {status}",
              flush=True)
        shutil.rmtree(os.path.join(self.work, f"pulled-{n}"), ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--proxy-port", type=int, required=True)
    ap.add_argument("--proxy-log", required=True)
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bwlimit", default="8M", help="rate of the killed runs (the rerun is unlimited)")
    ap.add_argument("--start", type=float, default=0.01, help="earliest kill, seconds after exec")
    ap.add_argument("--span", type=float, default=2.4, help="latest kill, seconds after exec")
    ap.add_argument("--ops", default="push,sync,pull,offload,fetch", help="comma list of the operations to kill")
    ap.add_argument("--slow-port", type=int, help="a relay holding HEAD replies, for the killed offloads")
    ap.add_argument("--slow-log", help="that relay's --log-all file")
    a = ap.parse_args()
    a.ops = [op for op in a.ops.split(",") if op]
    if set(a.ops) - {"push", "sync", "pull", "offload", "fetch"}:
        ap.error(f"unknown operation in --ops {a.ops}")
    run = Run(a)
    run.make_files()
    ops = a.ops
    per_op = (a.kills + len(ops) - 1) // len(ops)
    started = time.monotonic()
    for n in range(1, a.kills + 1):
        op = ops[(n - 1) % len(ops)]
        run.moment(op, n, (n - 1) // len(ops), per_op)
    print(f"kill-run: {a.kills} moments (seed {a.seed}) in {time.monotonic() - started:.0f} s: {run.kills} killed, "
          f"{run.ended_first} ended before the kill; {run.problems_total} with a failed check; "
          f"{run.orphans} multipart uploads created by a request whose reply the kill cut off; "
          f"{run.space.stray_uploaded} fetched tracks left showing uploaded (killed between the rename and the row)",
          flush=True)
    return 1 if run.problems_total else 0


if __name__ == "__main__":
    sys.exit(main())
