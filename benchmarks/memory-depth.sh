#!/usr/bin/env bash
# benchmarks/memory-depth.sh — r2up's peak RSS against the depth it keeps in flight.
#
#   bash benchmarks/memory-depth.sh                 # 1,000 x 16 KiB and 24 x 3 MiB, depths 16..512 and adaptive
#   DEPTHS="256 512" WORKLOADS=small bash benchmarks/memory-depth.sh
#
# Issue 26: peak RSS <= 64 MiB at any depth and file mix. Each push goes through
# tools/wanrelay.py (RTT_MS, 40 by default; REPLY_MS, R2's commit time, 0; 2 worker processes) so a pinned depth is really
# reached: on bare loopback the requests finish before hundreds are in flight. Prints one row
# per run (peak RSS from /usr/bin/time, wall seconds, the most requests the relay saw in flight)
# and fails (exit 1) when a run goes over LIMIT_MIB (64). R2UP_BIN=path uses that binary
# instead of building this tree's release binary.
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work/memory
DEPTHS=${DEPTHS:-16 64 128 256 384 512 adaptive}
WORKLOADS=${WORKLOADS:-small album}
RTT_MS=${RTT_MS:-40}
REPLY_MS=${REPLY_MS:-0}
LIMIT_MIB=${LIMIT_MIB:-64}
mkdir -p "$WORK"
bash scripts/setup.sh >&2
export VIRTUAL_ENV=$ROOT/.venv PATH=$ROOT/.venv/bin:$PATH
if [ -n "${R2UP_BIN:-}" ]; then
  BIN=$R2UP_BIN
else
  swift build -c release --product r2up >&2
  BIN=$ROOT/.build/release/r2up
fi
# shellcheck source=benchmarks/relay-server.sh
. benchmarks/relay-server.sh
relay_server "$WORK/server"

make_data() {
  local dir=$WORK/data-$1
  [ -f "$dir.done" ] && return
  rm -rf "$dir" && mkdir -p "$dir"
  case $1 in
    small) for i in $(seq -w 1 1000); do head -c 16384 /dev/urandom >"$dir/s$i.bin"; done ;;
    album) for i in $(seq -w 1 24); do head -c $((3 << 20)) /dev/urandom >"$dir/t$i.flac"; done ;;
  esac
  touch "$dir.done"
}

over=0
printf '| workload | depth | peak RSS MiB | wall s | most in flight (relay) | status |\n|---|---|---:|---:|---:|---|\n'
for workload in $WORKLOADS; do
  make_data "$workload"
  for depth in $DEPTHS; do
    bucket=mem-$RANDOM$RANDOM
    new_bucket "$bucket"
    stats=$WORK/relay.json
    rm -f "$stats" "$WORK"/db.sqlite*
    coproc RELAYP { exec python3 tools/wanrelay.py --upstream "$DIRECT" --rtt-ms "$RTT_MS" --reply-delay-ms "$REPLY_MS" --workers 2 \
      --stats "$stats" --max-seconds 900 2>"$WORK/relay.err"; }
    RELAY_PID=$RELAYP_PID
    read -r word port <&"${RELAYP[0]}"
    [ "$word" = PORT ] || { echo "memory: the relay did not start" >&2; cat "$WORK/relay.err" >&2; exit 1; }
    flags=()
    [ "$depth" = adaptive ] || flags=(--concurrency "$depth")
    status=ok
    R2UP_ENDPOINT=http://127.0.0.1:$port R2UP_BUCKET=$bucket R2UP_PUBLIC_URL="http://127.0.0.1:$port/$bucket" \
      /usr/bin/time -f "%e %M" -o "$WORK/time.out" "$BIN" push "$WORK/data-$workload" --prefix m/ \
      --db "$WORK/db.sqlite" --quiet "${flags[@]}" 2>"$WORK/push.err" || status="failed: $(tail -1 "$WORK/push.err")"
    kill "$RELAY_PID" 2>/dev/null || true
    wait "$RELAY_PID" 2>/dev/null || true
    RELAY_PID=""
    read -r wall rss < <(grep -v '^Command' "$WORK/time.out" | tail -1)
    peak=0
    [ -f "$stats" ] && peak=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(max([v for _, v in s["in_flight_per_100ms"]] or [0]))' "$stats")
    mib=$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')
    awk -v m="$mib" -v l="$LIMIT_MIB" 'BEGIN { exit !(m > l) }' && { status="$status, over ${LIMIT_MIB} MiB"; over=1; }
    printf '| %s | %s | %s | %s | %s | %s |\n' "$workload" "$depth" "$mib" "$wall" "$peak" "$status"
    aws --endpoint-url "$DIRECT" s3 rb --force "s3://$bucket" >/dev/null 2>&1 || true
  done
done
exit $over
