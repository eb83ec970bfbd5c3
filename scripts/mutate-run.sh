#!/usr/bin/env bash
# scripts/mutate-run.sh — r2up through randomly mutated replies (issue 28 item 4).
#
#   scripts/mutate-run.sh --runs 40 --seed 1 [--rate 0.25] [--from K] [--workers N]
#                         [--delay-seconds S] [--results FILE.jsonl] [--only K,L,...] [--keep]
#   (--from K --runs K replays run K alone with the same seed and operation; --only K,L,...
#   replays just those runs of the seed, in one server start)
#
# Starts a private SeaweedFS (scripts/seaweedfs.sh), writes the files, and hands runs FROM..RUNS
# to tools/mutateproxy.py's runner, tools/mutaterun.py: each of N workers (default 1; at most
# 4 here) keeps one relay and one boto3 checker alive and takes runs from one queue. Per run it
# opens a new relay listener with seed SEED*100000+RUN (the request counter from 1), runs one
# operation of r2up through it, in turn by run number: push of a small file (single PUT), push
# of an 11 MiB file (3 parts), sync of a folder, pull of a 3-part object, and sync after a
# rename (a server-side copy). Each run is bounded (300 s, then killed). Then, checked against
# the server directly (boto3, no relay):
#   - r2up ended by itself (no timeout: no hang), with a documented exit code 0-5 (no crash);
#   - every object under the run's prefix holds the bytes of its file (no torn or wrong object);
#   - every history row's key exists with the row's size (no row for an object that is not there);
#   - exit 0 means every file is there (push/sync/copy) or the pulled file equals the object;
#   - a pull never leaves a file that differs from the object.
# A run that passes has its objects, unfinished uploads and files removed (the bucket and disk
# stay small over thousands of runs); replay a failed one with --from K --runs K --keep to keep
# its store, stderr and mutation log (the scratch folder's path is printed at the end).
# "delay" holds a reply --delay-seconds (default 35, past r2up's 30 s low-speed timeout); with
# R2UP_TEST_LOW_SPEED_SECONDS=T in the environment (test-only, read by the CLI) r2up gives up
# after T s instead, so e.g. T=5 with --delay-seconds 8 keeps the delay past the timeout.
# One line per run; a summary at the end; exit 1 if any check failed. Needs the built
# binary (.build/debug/r2up, or R2UP_BIN) and .venv (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
RUNS=20 SEED=1 RATE=0.25 KEEP=0 FROM=1 WORKERS=1 DELAY=35 RESULTS="" ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --from) FROM=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --delay-seconds) DELAY=$2; shift 2 ;;
    --results) RESULTS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
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

# A 3-part object to pull, put there directly (not through the relay).
PULL_PREFIX=mutate-pull/
"$BIN" push "$WORK/files/big.wav" --key "${PULL_PREFIX}big.wav" --part-size 5M --multipart-threshold 5M \
  --db "$WORK/setup.sqlite" --quiet

# Each worker keeps one relay and one checker for all its runs (tools/mutaterun.py).
python3 "$ROOT/tools/mutaterun.py" --work "$WORK" --bin "$BIN" --seed "$SEED" --from "$FROM" --runs "$RUNS" \
  --rate "$RATE" --workers "$WORKERS" --delay-seconds "$DELAY" ${RESULTS:+--results "$RESULTS"} ${ONLY:+--only "$ONLY"} \
  $( [ "$KEEP" = 1 ] && echo --keep )
