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
  python3 - "$WORK/music" <<'PY'
import os, sys
root = sys.argv[1]
for a in range(1000):
    folder = os.path.join(root, f"Artist {a // 10:03d}", f"Album {a:04d}")
    os.makedirs(folder, exist_ok=True)
    for t in range(100):
        with open(os.path.join(folder, f"{t:02d} - A Track Title Long Enough.flac"), "w") as f:
            f.write("x" * (t + 1))
PY
  # Creates the store (the run itself stops at the missing configuration).
  HOME=$WORK "$BIN" retry --all --db "$WORK/r2up.sqlite" >/dev/null 2>&1 || true
  find "$WORK/music" -type f -printf '%P\t%s\t%T@\n' | LC_ALL=C sort | awk 'NR <= 20000' | python3 -c '
import sys
root = sys.argv[1]
print("BEGIN;")
for line in sys.stdin:
    rel, size, mtime = line.rstrip("\n").split("\t")
    seconds, _, frac = mtime.partition(".")
    ns = int(seconds) * 1_000_000_000 + int((frac + "000000000")[:9])
    path = (root + "/" + rel).replace("'"'"'", "'"''"'")
    key = rel.replace("'"'"'", "'"''"'")
    print(f"INSERT INTO tracks (path, size, mtimeNs, uploadState, bucket, \"key\", etag, updatedAt) VALUES ('"'"'{path}'"'"', {size}, {ns}, '"'"'uploaded'"'"', '"'"'b'"'"', '"'"'{key}'"'"', '"'"'\"e\"'"'"', '"'"'2026-11-24T00:00:00Z'"'"');")
print("COMMIT;")
' "$WORK/music" | sqlite3 "$WORK/r2up.sqlite"
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
