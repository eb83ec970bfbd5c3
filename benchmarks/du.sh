#!/usr/bin/env bash
# benchmarks/du.sh — `r2up du DIR` over 100,000 files, 20,000 of them known to the store as
# uploaded, 5,000 of those offloaded (their files gone).
#
#   benchmarks/du.sh                     # release build, 3 runs, medians
#   RUNS=1 BIN=.build/debug/r2up benchmarks/du.sh
#
# Makes 1,000 folders of 100 small files (as benchmarks/status.sh does), records the first
# 20,000 as uploaded tracks (straight into the store with sqlite3, as a push would leave them),
# deletes 5,000 of those files (what `offload` leaves), then times `r2up du DIR` and
# `du DIR --json` to /dev/null: wall seconds and peak RSS (/usr/bin/time). The endpoint is a
# closed port and the run is traced (strace -f -e connect): a request would show as a connect
# call. The budget (issue 30): ≤ 2 s, 0 requests. No server is needed.
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work/du
RUNS=${RUNS:-3}
command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
command -v sqlite3 >/dev/null || { apt-get update -qq && apt-get install -y -qq sqlite3 >/dev/null; }
command -v strace >/dev/null || { apt-get update -qq && apt-get install -y -qq strace >/dev/null; }
if [ -z "${BIN:-}" ]; then
  swift build -c release >&2
  BIN=$ROOT/.build/release/r2up
fi

if [ ! -f "$WORK/ready" ]; then
  rm -rf "$WORK" && mkdir -p "$WORK/music"
  python3 benchmarks/library.py files "$WORK/music" 1000
  # Creates the store (the run itself stops at the missing configuration).
  HOME=$WORK "$BIN" retry --all --db "$WORK/r2up.sqlite" >/dev/null 2>&1 || true
  python3 benchmarks/library.py rows "$WORK/music" b 20000 | sqlite3 "$WORK/r2up.sqlite"
  # Offloaded: the first 5,000 known files are gone, their tracks cloud only.
  find "$WORK/music" -type f | LC_ALL=C sort | awk 'NR <= 5000' | tr '\n' '\0' | xargs -0 rm -f
  touch "$WORK/ready"
fi

export HOME=$WORK R2UP_ENDPOINT=http://127.0.0.1:9 R2UP_BUCKET=b AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=y
for mode in text json; do
  extra=()
  [ "$mode" = json ] && extra=(--json)
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$BIN" du "$WORK/music" "${extra[@]}" --db "$WORK/r2up.sqlite" >"$WORK/out.$mode"
    read -r wall user sys rss <"$WORK/time"
    # CPU seconds too: on a shared machine the wall time measures the neighbours as well.
    echo "du $mode: $wall s wall, $(python3 -c "print(round($user + $sys, 2))") s CPU, $((rss / 1024)) MiB (load $(cut -d' ' -f1 /proc/loadavg))"
  done
done
tail -1 "$WORK/out.text"
strace -f -e trace=connect -o "$WORK/strace" "$BIN" du "$WORK/music" --db "$WORK/r2up.sqlite" >/dev/null
echo "requests: $(grep -c 'sin_port' "$WORK/strace" || true) inet connect calls"
