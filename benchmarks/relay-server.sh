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

# new_bucket NAME: makes bucket NAME on the server and writes and deletes one object there,
# untimed. SeaweedFS grows a new bucket's volumes on its first writes: those waited ~1 s at the
# server (measured 2026-11-28: 1.03-1.33 s for each tool's first requests, then none), which a
# bucket in use, on R2 or here, never does. Without it the cell measured when each tool's first
# bodies reached the server, not the link.
new_bucket() {
  aws --endpoint-url "$DIRECT" s3 mb "s3://$1" >/dev/null
  printf 'warm' | aws --endpoint-url "$DIRECT" s3 cp - "s3://$1/warm-up" >/dev/null
  aws --endpoint-url "$DIRECT" s3 rm "s3://$1/warm-up" >/dev/null
}
