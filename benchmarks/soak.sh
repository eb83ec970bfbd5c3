#!/usr/bin/env bash
# benchmarks/soak.sh — `r2up watch` for a long time over a tree that keeps changing (issue 28 item 5).
#
#   benchmarks/soak.sh                      # the full soak: 30 minutes, server restarted every 5,
#                                           # two 30 s cuts (about 40 minutes with the settling)
#   benchmarks/soak.sh --minutes 3 --restart-every 60 --cut-seconds 15 --settle 240 --files 500
#                                           # the short version, CI's (.ci/run; about 5 minutes)
#   BIN=.build/release/r2up benchmarks/soak.sh ...
#
# A private SeaweedFS (scripts/seaweedfs.sh), then benchmarks/soak.py: watch over a tree changed
# at 20 operations a second (new files, appends, renames, folders moved out and in, deletions)
# that grows to --files files (2,000) and then stays that size, the server restarted and the
# connection cut meanwhile; at the end every file in the bucket with its bytes, nothing uploaded
# twice without a change, the queue empty (also after watch is started again), RSS and
# descriptors flat after warm-up. Prints the figures as JSON; exit 1 if a check failed.
# Arguments go to soak.py (--help). KEEP=1 keeps the work folder (watch.jsonl, samples.jsonl).
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
export VIRTUAL_ENV=$ROOT/.venv PATH=$ROOT/.venv/bin:$PATH
BIN=${BIN:-$ROOT/.build/debug/r2up}
[ -x "$BIN" ] || { echo "soak.sh: no r2up binary at $BIN (swift build first, or BIN=...)" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/r2up-soak.XXXXXX")
cleanup() {
  local rc=$?
  bash "$ROOT/scripts/seaweedfs.sh" stop "$WORK/server" >/dev/null 2>&1 || true
  [ "${KEEP:-0}" = 1 ] && echo "soak.sh: kept $WORK" >&2 || rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$WORK/server"
bash scripts/seaweedfs.sh start "$WORK/server" >/dev/null
export HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/.config XDG_DATA_HOME=$WORK/home/.local/share TZ=UTC
mkdir -p "$HOME"
python3 benchmarks/soak.py --bin "$BIN" --work "$WORK" --server-dir "$WORK/server" "$@"
