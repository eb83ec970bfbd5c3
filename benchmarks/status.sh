#!/usr/bin/env bash
# benchmarks/status.sh — `r2up status DIR` over 100,000 files, 20,000 of them known to the store.
#
#   benchmarks/status.sh                 # release build, 3 runs, medians
#   RUNS=1 BIN=.build/debug/r2up benchmarks/status.sh
#
# Makes 1,000 folders of 100 small files, records the first 20,000 as uploaded tracks
# (straight into the store with sqlite3, as a push would leave them), then times
# `r2up status DIR` and `status DIR --json` to /dev/null: wall seconds and peak RSS
# (/usr/bin/time). The budget (issue 14): ≤ 2 s, ≤ 64 MiB. No server is needed.
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work/status
RUNS=${RUNS:-3}
command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
command -v sqlite3 >/dev/null || { apt-get update -qq && apt-get install -y -qq sqlite3 >/dev/null; }
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
  touch "$WORK/ready"
fi

for mode in text json; do
  extra=()
  [ "$mode" = json ] && extra=(--json)
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$BIN" status "$WORK/music" --by folder "${extra[@]}" --db "$WORK/r2up.sqlite" >/dev/null
    read -r wall rss <"$WORK/time"
    echo "status $mode: $wall s, $((rss / 1024)) MiB"
  done
done
