#!/usr/bin/env bash
# scripts/kill-run.sh — SIGKILL r2up push, sync, pull, offload and fetch at many moments
# (issue 28 item 6, issue 30).
#
#   scripts/kill-run.sh [--kills 200] [--seed 1] [--bwlimit 8M] [--span 2.4] [--ops push,sync,pull,offload,fetch] [--keep]
#
# Starts a private SeaweedFS (scripts/seaweedfs.sh) and tools/faultproxy.py --log-all in front
# of it (no faults: it logs every request, so each kill's step is known and a rerun that
# re-sends an acknowledged part is caught). tools/killrun.py then, per moment, starts one
# operation slowed by --bwlimit, SIGKILLs it after a seeded delay (the moments of each
# operation spread over 0.01 s to --span), checks the store and the queue, reruns it
# unhindered and checks the bucket, the history and the files (see tools/killrun.py). A killed
# offload goes through a second faultproxy that holds every HEAD reply 30 ms (its HEADs are
# what takes time); offload and fetch moments are in tools/killrun_space.py.
# One line per moment, a summary at the end; exit 1 if any check failed. Needs the built
# binary (.build/debug/r2up, or R2UP_BIN) and .venv (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
KEEP=0
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) KEEP=1; shift ;;
    --kills|--seed|--bwlimit|--span|--start|--ops) args+=("$1" "$2"); shift 2 ;;
    *) echo "kill-run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
SCRATCH=kill
# shellcheck source=scratch-server.sh
. scripts/scratch-server.sh

python3 tools/faultproxy.py --upstream "${R2UP_ENDPOINT#http://}" --log-all --log "$WORK/proxy.jsonl" \
  --max-seconds 86400 >"$WORK/proxy.out" 2>/dev/null &
proxy_pid=$!
python3 tools/faultproxy.py --upstream "${R2UP_ENDPOINT#http://}" --only-methods HEAD --stall-rate 1.0 \
  --stall-seconds 0.03 --log-all --log "$WORK/slow.jsonl" --max-seconds 86400 >"$WORK/slow.out" 2>/dev/null &
slow_pid=$!
trap 'rc=$?; kill "$slow_pid" 2>/dev/null || true; set +e; (exit $rc); cleanup' EXIT
for _ in $(seq 1 300); do grep -q '^PORT ' "$WORK/proxy.out" 2>/dev/null && grep -q '^PORT ' "$WORK/slow.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^PORT //p' "$WORK/proxy.out")
slow_port=$(sed -n 's/^PORT //p' "$WORK/slow.out")
[ -n "$port" ] && [ -n "$slow_port" ] || { echo "kill-run.sh: faultproxy did not start" >&2; exit 1; }

python3 tools/killrun.py --bin "$BIN" --work "$WORK" --proxy-port "$port" --proxy-log "$WORK/proxy.jsonl" \
  --slow-port "$slow_port" --slow-log "$WORK/slow.jsonl" ${args[@]+"${args[@]}"}
