# benchmarks/relay-server.sh — sourced by the wide-area benchmarks (wan.sh, wan-start.sh,
# memory-depth.sh), from the project root: `relay_server DIR` starts a private SeaweedFS in DIR,
# reads its settings (R2UP_ENDPOINT, R2UP_BUCKET, keys) and sets DIRECT to its endpoint; the
# caller keeps the PID of the relay it runs in front of it in RELAY_PID. On exit the relay is
# killed, the server stopped and DIR removed.
relay_server() {
  SERVER=$1
  bash scripts/seaweedfs.sh start "$SERVER" >/dev/null
  RELAY_PID=""
  trap relay_server_cleanup EXIT
  # shellcheck source=/dev/null
  . "$SERVER/env"
  DIRECT=$R2UP_ENDPOINT
}

relay_server_cleanup() {
  [ -n "$RELAY_PID" ] && kill "$RELAY_PID" 2>/dev/null || true
  bash scripts/seaweedfs.sh stop "$SERVER" >/dev/null 2>&1 || true
  rm -rf "$SERVER"
}
