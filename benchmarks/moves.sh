#!/usr/bin/env bash
# benchmarks/moves.sh — issue 14's "renamed album of 1 GiB" on a local SeaweedFS (release build).
#
#   benchmarks/moves.sh              # RUNS=3 by default; medians are printed
#   FILES=2 FILE_MIB=8 RUNS=1 benchmarks/moves.sh    # a smoke run in seconds
#
# M1 an album of FILES x FILE_MIB MiB (10 x 100 MiB = 1000 MiB) is synced once; then its folder
#    is renamed and synced again, through tools/faultproxy.py logging every request: the second
#    sync's wall time, its PUT/POST body bytes (target 0: each new key is a server-side
#    CopyObject) and its CopyObject count. Each run renames the folder again (new keys).
#    The floor: the same CopyObjects sent by boto3, 4 at a time (the server's copying time).
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work/moves
RUNS=${RUNS:-3}
FILES=${FILES:-10}
FILE_MIB=${FILE_MIB:-100}
bash scripts/setup.sh >&2
export VIRTUAL_ENV=$ROOT/.venv PATH=$ROOT/.venv/bin:$PATH
rm -rf "$WORK" && mkdir -p "$WORK/lib/Album r0"
swift build -c release >&2
BIN=$ROOT/.build/release/r2up
proxy_pid=""
cleanup() {
  [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null || true
  bash scripts/seaweedfs.sh stop "$WORK/server" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
bash scripts/seaweedfs.sh start "$WORK/server" >/dev/null
# shellcheck source=/dev/null
. "$WORK/server/env"
export HOME=$WORK

for i in $(seq -w 1 "$FILES"); do head -c $((FILE_MIB << 20)) /dev/urandom >"$WORK/lib/Album r0/$i - Track $i.flac"; done
"$BIN" sync "$WORK/lib" --prefix bench --min-age 0 --quiet --db "$WORK/db.sqlite"

# The counting relay: every request logged with its method and body length.
python3 tools/faultproxy.py --upstream "${R2UP_ENDPOINT#http://}" --only-methods NONE --log "$WORK/relay.jsonl" \
  --log-all --max-seconds 3600 >"$WORK/relay.port" 2>/dev/null &
proxy_pid=$!
for _ in $(seq 1 50); do grep -q '^PORT ' "$WORK/relay.port" 2>/dev/null && break; sleep 0.1; done
RELAY="http://127.0.0.1:$(sed -n 's/^PORT //p' "$WORK/relay.port")"

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs=() bytes=() copies=()
for run in $(seq 1 "$RUNS"); do
  mv "$WORK/lib/Album r$((run - 1))" "$WORK/lib/Album r$run"
  : >"$WORK/relay.jsonl"
  s=$(now)
  R2UP_ENDPOINT=$RELAY "$BIN" sync "$WORK/lib" --prefix bench --min-age 0 --json --db "$WORK/db.sqlite" >"$WORK/out.json"
  e=$(now)
  secs+=("$(echo "$e - $s" | bc -l)")
  read -r sent copied < <(python3 - "$WORK/relay.jsonl" "$WORK/out.json" <<'PY'
import json, sys
sent = copies = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("method") in ("PUT", "POST"):
        sent += r.get("length") or 0
        copies += r.get("method") == "PUT" and not r.get("length")
summary = json.load(open(sys.argv[2]))
assert summary["copied"] == copies, (summary, copies)
print(sent, copies)
PY
)
  bytes+=("$sent") copies+=("$copied")
done
# The server's own floor: the same CopyObjects from boto3, 4 at a time (r2up's default concurrency).
floor=$(python3 - "$FILES" "$RUNS" <<'PY'
import boto3, os, sys, time
from concurrent.futures import ThreadPoolExecutor
e = os.environ
s3 = boto3.client("s3", endpoint_url=e["R2UP_ENDPOINT"], region_name="us-east-1")
bucket, files, run = e["R2UP_BUCKET"], int(sys.argv[1]), sys.argv[2]
keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=f"bench/Album r{run}/")["Contents"]]
assert len(keys) == files, keys
start = time.monotonic()
with ThreadPoolExecutor(4) as pool:
    list(pool.map(lambda k: s3.copy_object(Bucket=bucket, Key="floor/" + k, CopySource={"Bucket": bucket, "Key": k}), keys))
print("%.2f" % (time.monotonic() - start))
PY
)
total=$((FILES * FILE_MIB))
printf '| M1 renamed album (%d x %d MiB = %d MiB), sync again | %.2f s (median of %d; runs: %s) | %s payload bytes sent | %s copies | boto3 CopyObject floor %s s |\n' \
  "$FILES" "$FILE_MIB" "$total" "$(printf '%s\n' "${secs[@]}" | median)" "$RUNS" "$(printf '%.2f ' "${secs[@]}")" \
  "$(printf '%s\n' "${bytes[@]}" | sort -n | tail -1)" "$(printf '%s\n' "${copies[@]}" | median)" "$floor"
