#!/usr/bin/env bash
# benchmarks/wan-start.sh — where the start of a small-file push goes, seen from outside.
#
#   bash benchmarks/wan-start.sh                          # 1,000 x 16 KiB, 40 ms and 40 ms + 200 ms replies
#   CELLS="40:200" RUNS=5 R2UP_BIN=path bash benchmarks/wan-start.sh
#   R2UP_BINS="base=/path/a new=/path/b" bash benchmarks/wan-start.sh   # binaries interleaved run by run
#   R2UP_ARGS="--overwrite" bash benchmarks/wan-start.sh    # flags added to each push
#   TRACE=1 bash benchmarks/wan-start.sh                   # under strace: the local phases too
#
# Issue 26: s5cmd's first requests leave within milliseconds of exec; r2up's first connection
# opened 0.25-0.59 s after it. Each run pushes the 1,000 files of benchmarks/wan.sh's small
# workload through tools/wanrelay.py (CELLS of RTT_MS:REPLY_DELAY_MS, 2 round trips of
# connection set-up, 2 worker processes) and prints, in ms after exec, when the relay saw the
# first connection, the first request (which), the first PUT, the 64th and the 128th, and when
# the process exited: the relay logs wall-clock times, so nothing in the client is traced.
# With TRACE=1 each run goes under `strace -f` (system calls only) and also shows when the
# process opened the database, opened the folder (the scan) and first wrote the queue (the
# database's first write after the scan); strace slows every traced call, so those runs are
# slower: compare binaries with each other. A fresh database per run, as wan.sh has.
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work/wan-start
CELLS=${CELLS:-40:0 40:200}
RUNS=${RUNS:-3}
R2UP_ARGS=${R2UP_ARGS:-}
TRACE=${TRACE:-0}
mkdir -p "$WORK"
bash scripts/setup.sh >&2
export VIRTUAL_ENV=$ROOT/.venv PATH=$ROOT/.venv/bin:$PATH
if [ -n "${R2UP_BINS:-}" ]; then
  BINS=$R2UP_BINS
elif [ -n "${R2UP_BIN:-}" ]; then
  BINS="r2up=$R2UP_BIN"
else
  swift build -c release --product r2up >&2
  BINS="r2up=$ROOT/.build/release/r2up"
fi
# shellcheck source=benchmarks/relay-server.sh
. benchmarks/relay-server.sh
relay_server "$WORK/server"

DATA=$ROOT/benchmarks/work/wan-data/small
if ! [ -f "$DATA.done" ]; then
  rm -rf "$DATA" && mkdir -p "$DATA"
  for i in $(seq -w 1 1000); do head -c 16384 /dev/urandom >"$DATA/s$i.bin"; done
  touch "$DATA.done"
fi

printf '| binary | cell | load | db open | scan | queue written | first connection | first request | first PUT | 64th PUT | 128th PUT | exit |\n'
printf '|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|\n'
for cell in $CELLS; do
  IFS=: read -r rtt reply <<<"$cell"
  for run in $(seq 1 "$RUNS"); do
    for named in $BINS; do
      name=${named%%=*} bin=${named#*=}
      bucket=start-$RANDOM$RANDOM
      new_bucket "$bucket"
      rm -f "$WORK"/db.sqlite* "$WORK/trace" "$WORK/relay.json"
      coproc RELAYP { exec python3 tools/wanrelay.py --upstream "$DIRECT" --rtt-ms "$rtt" --setup-rtts 2 \
        --reply-delay-ms "$reply" --workers 2 --max-seconds 300 --stats "$WORK/relay.json" 2>"$WORK/relay.err"; }
      RELAY_PID=$RELAYP_PID
      read -r word port <&"${RELAYP[0]}"
      [ "$word" = PORT ] || { echo "wan-start: the relay did not start" >&2; cat "$WORK/relay.err" >&2; exit 1; }
      load=$(cut -d' ' -f1 /proc/loadavg)
      tracer=()
      [ "$TRACE" = 1 ] && tracer=(strace -f --seccomp-bpf -ttt -s 64 -o "$WORK/trace"
        -e trace=execve,openat,pwrite64,exit_group)
      (
        date +%s.%N >"$WORK/started"
        export R2UP_ENDPOINT=http://127.0.0.1:$port R2UP_BUCKET=$bucket R2UP_PUBLIC_URL="http://127.0.0.1:$port/$bucket"
        # shellcheck disable=SC2086
        exec "${tracer[@]}" "$bin" push "$DATA" --prefix run/ --db "$WORK/db.sqlite" --quiet $R2UP_ARGS 2>"$WORK/push.err"
      ) || echo "wan-start: $name failed: $(tail -1 "$WORK/push.err")" >&2
      date +%s.%N >"$WORK/ended"
      kill "$RELAY_PID" 2>/dev/null || true
      wait "$RELAY_PID" 2>/dev/null || true
      RELAY_PID=""
      aws --endpoint-url "$DIRECT" s3 rb --force "s3://$bucket" >/dev/null 2>&1 || echo "wan-start: could not delete $bucket" >&2
      python3 - "$WORK" "$name" "$cell" "$load" "$DATA" <<'EOF'
import json, os, re, sys
work, name, cell, load, data = sys.argv[1:6]
started = float(open(f"{work}/started").read())
ended = float(open(f"{work}/ended").read())
stats = json.load(open(f"{work}/relay.json"))
def ms(t):
    return f"{(t - started) * 1000:.0f}"
marks = {"exit": ms(ended)}
if stats["first_connections"]:
    marks["connection"] = ms(stats["first_connections"][0])
requests = stats["first_requests"]
if requests:
    t, method, path = requests[0]
    what = "bucket" if path.rstrip("/").count("/") == 1 else "key"
    marks["request"] = f"{ms(t)} ({method} {what})"
puts = [r for r in requests if r[1] == "PUT"]
for n, key in ((1, "put"), (64, "put64"), (128, "put128")):
    if len(puts) >= n:
        marks[key] = ms(puts[n - 1][0])
trace = f"{work}/trace"
if os.path.exists(trace):
    t0, scanned, db_fds = None, False, set()
    for line in open(trace, errors="replace"):
        m = re.match(r"(\d+)\s+(\d+\.\d+) (\w+)\((.*)", line)
        if not m:
            continue
        t, call, args = float(m.group(2)), m.group(3), m.group(4)
        if call == "execve" and t0 is None:
            t0 = t
        if t0 is None:
            continue
        at = f"{(t - t0) * 1000:.0f}"
        if call == "openat" and "db.sqlite" in args:
            marks.setdefault("db", at)
            fd = re.search(r"= (\d+)$", line.strip())
            if fd:
                db_fds.add(fd.group(1))
        if call == "openat" and data in args and "O_DIRECTORY" in args:
            marks.setdefault("scan", at)
        if call == "pwrite64" and "scan" in marks and args.split(",")[0] in db_fds:
            marks.setdefault("queued", at)
cols = ["db", "scan", "queued", "connection", "request", "put", "put64", "put128", "exit"]
print(f"| {name} | {cell} | {load} | " + " | ".join(marks.get(c, "-") for c in cols) + " |")
EOF
    done
  done
done
