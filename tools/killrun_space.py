"""Offload and fetch moments for tools/killrun.py (issue 30: SIGKILL during an offload or a fetch
leaves every track either fully local or cloud only, never a half-written file at its path).

Set up once: a library of OFFLOAD_TRACKS small tracks pushed to kill-offload/ (a seed copy of it
with its mtimes kept, and its database), and a copy of killrun's files (big.wav and album/)
pushed to kill-fetch/ and offloaded. Before each moment the library is restored from the seed
(or emptied, for a fetch) and the moment's database is a copy of the set-up one, so every
moment starts from the same state.
  - offload: `offload LIB --concurrency 2` through a relay holding every HEAD reply (a run of
    ~2 s), killed; then `offload LIB` unhindered.
  - fetch: `fetch LIB --bwlimit R` (~3 s), killed; then `fetch LIB` unhindered.
Checked after the kill: every file at a track's path has the track's bytes (none torn), nothing
else is there but a fetch's hidden temporaries, and `status --json` shows each present track
uploaded or downloaded and each absent one cloud only. After the rerun: it exits 0, an offload
left no track file and every track cloud only, a fetch left every track whole with its upload
mtime and no temporary, and no GET was sent by an offload (killed or rerun).
"""
import hashlib
import json
import os
import random
import shutil
import sqlite3

OFFLOAD_TRACKS = 120


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Space:
    def __init__(self, run):
        self.run = run
        w = run.work
        self.olib, self.oseed, self.odb = (os.path.join(w, n) for n in ("olib", "olib.seed", "olib.sqlite"))
        self.flib, self.fdb = os.path.join(w, "flib"), os.path.join(w, "flib.sqlite")
        self.want = {"offload": {}, "fetch": {}}  # op -> {absolute path: (sha256, mtime ns)}
        self.slow_mark = 0
        self.log_mark = 0
        self.stray_uploaded = 0  # fetches whose kill fell between the rename and the row's update

    def setup(self):
        run = self.run
        rng = random.Random(run.a.seed)
        for i in range(OFFLOAD_TRACKS):
            path = os.path.join(self.oseed, f"Album {i // 40}", f"{i:03d}.m4a")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(os.urandom(1000 + rng.randrange(2000)))
        shutil.copytree(self.oseed, self.olib)  # copy2: mtimes to the nanosecond
        run.r2up(["push", self.olib + "/", "--prefix", "kill-offload/", "--db", self.odb, "--quiet"],
                 direct=True, check=True)
        shutil.copytree(os.path.join(run.work, "files"), self.flib)
        run.r2up(["push", self.flib + "/", "--prefix", "kill-fetch/", "--db", self.fdb, "--quiet"],
                 direct=True, check=True)
        for op, lib in (("offload", self.olib), ("fetch", self.flib)):
            for folder, _, names in os.walk(lib):
                for name in names:
                    path = os.path.join(folder, name)
                    self.want[op][path] = (sha(path), os.stat(path).st_mtime_ns)
        run.r2up(["offload", self.flib, "--db", self.fdb, "--quiet"], direct=True, check=True)
        if any(os.path.isfile(p) for p in self.want["fetch"]):
            raise SystemExit("killrun: the fetch library's set-up offload left files")

    def prepare(self, op, db):
        """The moment's library and database, as set up."""
        shutil.rmtree(self.olib if op == "offload" else self.flib, ignore_errors=True)
        if op == "offload":
            shutil.copytree(self.oseed, self.olib)
        else:
            os.makedirs(self.flib)
        with sqlite3.connect(self.odb if op == "offload" else self.fdb) as src, sqlite3.connect(db) as dst:
            src.backup(dst)
        self.slow_mark = len(self.entries(self.run.a.slow_log))
        self.log_mark = len(self.entries(self.run.a.proxy_log))

    def command(self, op, db, bwlimit):
        if op == "offload":
            # The killed run goes through the slow relay (moment's env), two HEADs at a time.
            return ["offload", self.olib, "--db", db, "--quiet"] + (["--concurrency", "2"] if bwlimit else [])
        return ["fetch", self.flib, "--db", db, "--quiet"] + (["--bwlimit", bwlimit] if bwlimit else [])

    @staticmethod
    def entries(path):
        if not path or not os.path.exists(path):
            return []
        with open(path) as f:
            return [json.loads(line) for line in f if line.startswith("{")]

    def look(self, op, db):
        """Problems with the files and the states; the present and absent track paths."""
        problems, present, absent = [], [], []
        lib = self.olib if op == "offload" else self.flib
        want = self.want[op]
        for folder, _, names in os.walk(lib):
            for name in names:
                path = os.path.join(folder, name)
                if path in want:
                    present.append(path)
                    if sha(path) != want[path][0]:
                        problems.append(f"torn or wrong file at {path}")
                elif op == "offload" or not name.startswith("."):
                    problems.append(f"stray file {path}")
        absent = [p for p in want if p not in present]
        p = self.run.r2up(["status", lib, "--json", "--db", db])
        if p.returncode != 0:
            return problems + [f"status exit {p.returncode}: {p.stderr.decode(errors='replace')[:200]}"], present, absent
        icons = {t["path"]: t["icon"] for g in json.loads(p.stdout) for t in g.get("tracks", [])}
        for path in present:
            if icons.get(path) not in ("uploaded", "downloaded"):
                problems.append(f"{path} is on disk but shows {icons.get(path)}")
        for path in absent:
            if icons.get(path) != "cloudOnly":
                problems.append(f"{path} is gone but shows {icons.get(path)}")
        return problems, present, absent

    def after_kill(self, op, db):
        problems, present, absent = self.look(op, db)
        self.killed_state = f"{len(present)} local, {len(absent)} cloud only"
        return problems

    def end_state(self, op, db):
        problems, present, absent = self.look(op, db)
        if op == "offload":
            if present:
                problems.append(f"{len(present)} tracks still local after the rerun")
            gets = [e for e in self.entries(self.run.a.slow_log)[self.slow_mark:] + self.entries(self.run.a.proxy_log)[self.log_mark:]
                    if e.get("method") == "GET"]
            if gets:
                problems.append(f"{len(gets)} GETs sent by an offload")
        else:
            if absent:
                problems.append(f"{len(absent)} tracks still cloud only after the rerun")
            for path in present:
                if os.stat(path).st_mtime_ns != self.want[op][path][1]:
                    problems.append(f"{path} lacks its upload mtime")
            leftovers = [n for _, _, names in os.walk(self.flib) for n in names if n.startswith(".")]
            if leftovers:
                problems.append(f"temporaries left: {leftovers}")
            p = self.run.r2up(["status", self.flib, "--json", "--db", db])
            icons = {t["path"]: t["icon"] for g in json.loads(p.stdout) for t in g.get("tracks", [])}
            self.stray_uploaded += sum(1 for path in present if icons.get(path) == "uploaded")
        return problems
