#!/usr/bin/env bash
# benchmarks/watch.sh — `r2up watch` against a private SeaweedFS on loopback (issue 18's numbers).
#
#   benchmarks/watch.sh                       # release build, all three workloads
#   BIN=.build/debug/r2up benchmarks/watch.sh latency burst
#
# latency  a 10 MB file closed in a watched folder → its URL printed (median of 20, --min-age 2s).
#          Budget: ≤ --min-age + 1 s.
# burst    2,000 × 16 KiB files: `r2up sync --min-age 0` on one copy, `r2up watch` on another
#          (files written while it watches); objects/s of both (default --concurrency).
#          Budget: watch ≥ 0.9 × sync, counted from the first upload to the last.
# idle     a 100,000-file library in 5,000 folders already recorded as uploaded: the first
#          pass (no request), then 30 s of nothing: RSS and CPU. Budget: ≤ 64 MiB, ≤ 1% of a core.
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work/watch
export VIRTUAL_ENV=$ROOT/.venv PATH=$ROOT/.venv/bin:$PATH
command -v sqlite3 >/dev/null || { apt-get update -qq && apt-get install -y -qq sqlite3 >/dev/null; }
if [ -z "${BIN:-}" ]; then
  swift build -c release >&2
  BIN=$ROOT/.build/release/r2up
fi
WORKLOADS=${*:-latency burst idle}
mkdir -p "$WORK"
scripts/seaweedfs.sh start "$WORK/server" >/dev/null
trap 'scripts/seaweedfs.sh stop "$WORK/server" >/dev/null 2>&1 || true' EXIT
# shellcheck disable=SC1091
. "$WORK/server/env"
export HOME=$WORK BIN WORK

python3 - $WORKLOADS <<'PY'
import json, os, shutil, statistics, subprocess, sys, threading, time

BIN, WORK = os.environ["BIN"], os.environ["WORK"]
RUN = f"{int(time.time())}"

class Watch:
    """r2up watch --json, its events timestamped as they arrive."""
    def __init__(self, folder, db, prefix, *extra):
        self.events, self.lock = [], threading.Condition()
        self.p = subprocess.Popen([BIN, "watch", folder, "--db", db, "--prefix", prefix, "--json", *extra],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, daemon=True).start()
    def _read(self):
        for line in self.p.stdout:
            event = json.loads(line)
            with self.lock:
                self.events.append((time.monotonic(), event))
                self.lock.notify_all()
    def wait(self, predicate, timeout=600):
        deadline = time.monotonic() + timeout
        with self.lock:
            while not predicate(self.events):
                left = deadline - time.monotonic()
                if left <= 0 or self.p.poll() is not None:
                    raise SystemExit(f"watch: timed out; stderr: {self.p.stderr.read() if self.p.poll() is not None else ''}")
                self.lock.wait(min(left, 0.5))
    def stop(self):
        self.p.terminate()
        self.p.wait(30)

def count(events, kind):
    return sum(1 for _, e in events if e["event"] == kind)

def fresh(name):
    path = os.path.join(WORK, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path

def latency():
    folder, db = fresh("latency"), os.path.join(WORK, "latency.sqlite")
    if os.path.exists(db): os.remove(db)
    w = Watch(folder, db, f"bench-watch-{RUN}/latency/")
    w.wait(lambda ev: count(ev, "watching") == 1)
    block = os.urandom(1 << 20)
    samples = []
    for i in range(20):
        path = os.path.join(folder, f"take-{i:02d}.wav")
        with open(path, "wb") as f:
            for _ in range(10): f.write(block)
        closed = time.monotonic()
        w.wait(lambda ev: any(e["event"] == "uploaded" and e["file"] == path for _, e in ev))
        at = next(t for t, e in w.events if e["event"] == "uploaded" and e["file"] == path)
        samples.append(at - closed)
    w.stop()
    print(f"latency: 10 MB closed → URL printed: median {statistics.median(samples):.2f} s "
          f"(min {min(samples):.2f}, max {max(samples):.2f}; --min-age 2s, budget 3.00 s)")

def burst():
    body = os.urandom(16 * 1024)
    sync_dir = fresh("burst-sync")
    for i in range(2000):
        with open(os.path.join(sync_dir, f"{i:04d}.wav"), "wb") as f: f.write(body)
    db = os.path.join(WORK, "burst-sync.sqlite")
    if os.path.exists(db): os.remove(db)
    start = time.monotonic()
    subprocess.run([BIN, "sync", sync_dir, "--db", db, "--prefix", f"bench-watch-{RUN}/sync/", "--min-age", "0", "--quiet"], check=True)
    sync_rate = 2000 / (time.monotonic() - start)

    watch_dir = fresh("burst-watch")
    db = os.path.join(WORK, "burst-watch.sqlite")
    if os.path.exists(db): os.remove(db)
    w = Watch(watch_dir, db, f"bench-watch-{RUN}/watch/")
    w.wait(lambda ev: count(ev, "watching") == 1)
    written = time.monotonic()
    for i in range(2000):
        with open(os.path.join(watch_dir, f"{i:04d}.wav"), "wb") as f: f.write(body)
    done_writing = time.monotonic()
    w.wait(lambda ev: count(ev, "uploaded") >= 2000)
    ups = [t for t, e in w.events if e["event"] == "uploaded"]
    w.stop()
    rate = 2000 / (ups[-1] - ups[0])
    print(f"burst: sync {sync_rate:.0f} objects/s; watch {rate:.0f} objects/s first to last upload "
          f"({rate / sync_rate:.2f}x sync; budget 0.90x); written in {done_writing - written:.1f} s, "
          f"all uploaded {ups[-1] - written:.1f} s after the first write (--min-age 2s)")

def idle():
    lib, db = os.path.join(WORK, "library"), os.path.join(WORK, "idle.sqlite")
    bucket = os.environ["R2UP_BUCKET"]
    if not os.path.exists(os.path.join(WORK, "library.ready")):
        shutil.rmtree(lib, ignore_errors=True)
        for a in range(5000):
            folder = os.path.join(lib, f"Artist {a // 10:03d}", f"Album {a:04d}")
            os.makedirs(folder, exist_ok=True)
            for t in range(20):
                with open(os.path.join(folder, f"{t:02d} - Track.flac"), "w") as f: f.write("x" * (t + 1))
        open(os.path.join(WORK, "library.ready"), "w").close()
    if os.path.exists(db): os.remove(db)
    subprocess.run([BIN, "retry", "--all", "--db", db], capture_output=True)  # makes the store
    rows = []
    for dirpath, _, names in os.walk(lib):
        for n in names:
            p = os.path.join(dirpath, n)
            st = os.stat(p)
            rows.append((p, st.st_size, st.st_mtime_ns, "uploaded", bucket, os.path.relpath(p, lib), '"e"', "2026-11-24T00:00:00Z"))
    import sqlite3
    con = sqlite3.connect(db)
    con.executemany('INSERT INTO tracks (path, size, mtimeNs, uploadState, bucket, "key", etag, updatedAt) VALUES (?,?,?,?,?,?,?,?)', rows)
    con.commit(); con.close()
    start = time.monotonic()
    w = Watch(lib, db, "")
    w.wait(lambda ev: count(ev, "watching") == 1)
    first = time.monotonic() - start
    folders = next(e for _, e in w.events if e["event"] == "watching")["folders"]
    def cpu():
        fields = open(f"/proc/{w.p.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    time.sleep(2)
    before, t0 = cpu(), time.monotonic()
    time.sleep(30)
    share = (cpu() - before) / (time.monotonic() - t0) * 100
    status = open(f"/proc/{w.p.pid}/status").read()
    rss = int(next(l for l in status.splitlines() if l.startswith("VmRSS")).split()[1]) / 1024
    hwm = int(next(l for l in status.splitlines() if l.startswith("VmHWM")).split()[1]) / 1024
    w.stop()
    print(f"idle: {len(rows):,} files, {folders:,} folders watched; first pass {first:.1f} s; "
          f"then idle: {rss:.1f} MiB RSS (peak {hwm:.1f}), {share:.2f}% of a core over 30 s (budget 64 MiB, 1%)")

for name in sys.argv[1:]:
    {"latency": latency, "burst": burst, "idle": idle}[name]()
PY
