#!/usr/bin/env bash
# scripts/mutate-run.sh — r2up through randomly mutated replies (issue 28 item 4).
#
#   scripts/mutate-run.sh --runs 40 --seed 1 [--rate 0.25] [--from K] [--keep]
#   (--from K starts at run K: replays one failure with the same seed and operation)
#
# Starts a private SeaweedFS (scripts/seaweedfs.sh) and, per run, tools/mutateproxy.py in
# front of it with seed SEED+RUN, then one operation of r2up through it, in turn: push of a
# small file (single PUT), push of an 11 MiB file (3 parts), sync of a folder, pull of a
# 3-part object, and sync after a rename (a server-side copy). Each run is bounded (timeout).
# After each run, checked against the server directly (boto3, no relay):
#   - r2up ended by itself (no timeout: no hang), with a documented exit code 0-5 (no crash);
#   - every object under the run's prefix holds the bytes of its file (no torn or wrong object);
#   - every history row's key exists with the row's size (no row for an object that is not there);
#   - exit 0 means every file is there (push/sync/copy) or the pulled file equals the object;
#   - a pull never leaves a file that differs from the object.
# One line per run; a summary at the end; exit 1 if any check failed. Needs the built
# binary (.build/debug/r2up, or R2UP_BIN) and .venv (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
RUNS=20 SEED=1 RATE=0.25 KEEP=0 FROM=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --from) FROM=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "mutate-run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
SCRATCH=mutate
# shellcheck source=scratch-server.sh
. scripts/scratch-server.sh
UPSTREAM=${R2UP_ENDPOINT#http://}

python3 - "$WORK" <<'EOF'
import os, sys
work = sys.argv[1]
os.makedirs(work + "/files/album", exist_ok=True)
def put(path, n, seed):
    import random
    r = random.Random(seed)
    with open(path, "wb") as f:
        f.write(bytes(r.getrandbits(8) for _ in range(n)) if n < 1 << 20 else os.urandom(n))
put(work + "/files/small.m4a", 70_000, 1)
put(work + "/files/big.wav", 11 << 20, 2)
for i in range(4):
    put(work + f"/files/album/{i:02d} track.m4a", 20_000 + i * 1000, 10 + i)
EOF

# check.py PREFIX DB OPERATION STATUS [PULLED FILE]: the assertions above; prints problems.
cat >"$WORK/check.py" <<'EOF'
import boto3, hashlib, json, os, sqlite3, sys
from botocore.config import Config
prefix, db, op, status = sys.argv[1:5]
pulled = sys.argv[5] if len(sys.argv) > 5 else None
status = int(status)
s3 = boto3.client("s3", endpoint_url=os.environ["R2UP_ENDPOINT"], region_name="us-east-1",
                  config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
bucket = os.environ["R2UP_BUCKET"]
work = os.environ["WORK"]
def digest(b): return hashlib.sha256(b).hexdigest()
files = {}
for root, _, names in os.walk(work + "/files"):
    for n in names:
        p = os.path.join(root, n)
        files[os.path.relpath(p, work + "/files")] = digest(open(p, "rb").read())
problems = []
if status == 124 or status == 137:
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
if status == 0 and op in ("push-small", "push-big", "sync", "copy"):
    want = {"push-small": ["small.m4a"], "push-big": ["big.wav"],
            "sync": [f"album/{i:02d} track.m4a" for i in range(4)],
            "copy": [f"moved/{i:02d} track.m4a" for i in range(4)]}[op]
    for name in want:
        if by_name.get(name) != files.get(source(name)):
            problems.append(f"exit 0 but {name} is not in the bucket with its bytes")
if op == "pull" and pulled:
    if os.path.exists(pulled):
        if digest(open(pulled, "rb").read()) != files["big.wav"]:
            problems.append("pulled file differs from the object")
    elif status == 0:
        problems.append("exit 0 but no pulled file")
print(json.dumps(problems))
EOF

# A 3-part object to pull, put there directly (not through the relay).
PULL_PREFIX=mutate-pull/
"$BIN" push "$WORK/files/big.wav" --key "${PULL_PREFIX}big.wav" --part-size 5M --multipart-threshold 5M \
  --db "$WORK/setup.sqlite" --quiet

OPS=(push-small push-big sync pull copy)
failed=0 crashes=0 hangs=0 wrong=0 clean=0 errors=0
declare -A exits=()
for run in $(seq "$FROM" "$RUNS"); do
  op=${OPS[$(( (run - 1) % ${#OPS[@]} ))]}
  seed=$((SEED * 100000 + run))
  prefix="mutate-$SEED-$run/"
  db=$WORK/run-$run.sqlite
  log=$WORK/run-$run.mutations.jsonl
  python3 "$ROOT/tools/mutateproxy.py" --upstream "$UPSTREAM" --seed "$seed" --rate "$RATE" \
    --delay-seconds 35 --log "$log" --max-seconds 400 >"$WORK/proxy.out" 2>/dev/null &
  proxy_pid=$!
  # Up to 60 s: on a loaded machine the relay's Python start alone has taken over 30.
  for _ in $(seq 1 600); do grep -q '^PORT ' "$WORK/proxy.out" 2>/dev/null && break; sleep 0.1; done
  port=$(sed -n 's/^PORT //p' "$WORK/proxy.out")
  [ -n "$port" ] || { echo "mutate-run.sh: mutateproxy did not start" >&2; exit 1; }
  via=(env R2UP_ENDPOINT="http://127.0.0.1:$port")
  pulled=""
  set +e
  case "$op" in
    push-small) timeout -k 5 300 "${via[@]}" "$BIN" push "$WORK/files/small.m4a" --key "${prefix}small.m4a" --db "$db" --quiet ;;
    push-big) timeout -k 5 300 "${via[@]}" "$BIN" push "$WORK/files/big.wav" --key "${prefix}big.wav" --part-size 5M --multipart-threshold 5M --db "$db" --quiet ;;
    sync) timeout -k 5 300 "${via[@]}" "$BIN" sync "$WORK/files/album" --prefix "${prefix}album/" --min-age 0 --db "$db" --quiet ;;
    pull) pulled=$WORK/pulled-$run/big.wav
          timeout -k 5 300 "${via[@]}" "$BIN" pull "${PULL_PREFIX}big.wav" "$WORK/pulled-$run/" --db "$db" --quiet ;;
    copy) # The folder synced clean, then renamed: the second sync copies server-side, through the relay.
          mkdir -p "$WORK/copy-$run" && cp -a "$WORK/files/album" "$WORK/copy-$run/album"
          "$BIN" sync "$WORK/copy-$run" --prefix "$prefix" --min-age 0 --db "$db" --quiet >/dev/null 2>&1
          mv "$WORK/copy-$run/album" "$WORK/copy-$run/moved"
          timeout -k 5 300 "${via[@]}" "$BIN" sync "$WORK/copy-$run" --prefix "$prefix" --min-age 0 --db "$db" --quiet ;;
  esac >"$WORK/run-$run.out" 2>"$WORK/run-$run.err"
  status=$?
  set -e
  kill "$proxy_pid" 2>/dev/null || true
  wait "$proxy_pid" 2>/dev/null || true
  proxy_pid=""
  mutated=$(grep -c '"mutation": "' "$log" || true)
  problems=$(WORK=$WORK python3 "$WORK/check.py" "$prefix" "$db" "$op" "$status" $pulled)
  exits[$status]=$(( ${exits[$status]:-0} + 1 ))
  [ "$status" = 0 ] && clean=$((clean + 1)) || errors=$((errors + 1))
  line="run $run seed $seed $op: exit $status, $mutated replies mutated"
  if [ "$problems" != "[]" ]; then
    failed=$((failed + 1))
    case "$problems" in *hang*) hangs=$((hangs + 1)) ;; esac
    case "$problems" in *crash*) crashes=$((crashes + 1)) ;; esac
    case "$problems" in *wrong*|*differs*|*missing*) wrong=$((wrong + 1)) ;; esac
    echo "$line: FAILED $problems; stderr: $(head -c 300 "$WORK/run-$run.err" | tr '\n' ' ')"
  else
    echo "$line: ok$( [ "$status" != 0 ] && printf '; %s' "$(head -1 "$WORK/run-$run.err" | cut -c1-160)")"
  fi
done
summary="runs $FROM-$RUNS (seed $SEED, rate $RATE): $clean exit 0, $errors clear errors; $crashes crashes, $hangs hangs, $wrong wrong objects or states; $failed failed checks; exit codes:"
for code in "${!exits[@]}"; do summary+=" $code×${exits[$code]}"; done
echo "$summary"
[ "$failed" = 0 ]
