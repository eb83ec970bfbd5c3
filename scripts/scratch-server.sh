# scripts/scratch-server.sh — sourced by kill-run.sh and mutate-run.sh (not run by itself): the
# r2up binary to try, a scratch folder holding a private SeaweedFS and a HOME, and a cleanup on
# exit that stops the server and the proxy whose pid is in proxy_pid (kept with --keep).
# The sourcing script sets ROOT, KEEP and SCRATCH (its short name: "kill", "mutate").
BIN=${R2UP_BIN:-$ROOT/.build/debug/r2up}
[ -x "$BIN" ] || { echo "$SCRATCH-run.sh: no r2up binary at $BIN (swift build first)" >&2; exit 2; }
export VIRTUAL_ENV=$ROOT/.venv PATH=$ROOT/.venv/bin:$PATH

WORK=$(mktemp -d "${TMPDIR:-/tmp}/r2up-$SCRATCH.XXXXXX")
proxy_pid=""
cleanup() {
  local rc=$?
  [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null || true
  bash "$ROOT/scripts/seaweedfs.sh" stop "$WORK/server" >/dev/null 2>&1 || true
  if [ "$KEEP" = 1 ]; then echo "$SCRATCH-run.sh: kept $WORK" >&2; else rm -rf "$WORK"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$WORK/server"
bash scripts/seaweedfs.sh start "$WORK/server" >/dev/null </dev/null
# shellcheck source=/dev/null
. "$WORK/server/env"
export TZ=UTC HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/.config XDG_DATA_HOME=$WORK/home/.local/share
mkdir -p "$HOME"
