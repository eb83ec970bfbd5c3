#!/usr/bin/env bash
# benchmarks/loopback-ab.sh OLD_R2UP NEW_R2UP [RUNS]: two r2up binaries, each at its defaults,
# against the curl floor on a local SeaweedFS, interleaved run by run so both meet the same
# machine (it is shared: absolute figures drift, the pairing is what to read).
#
#   W3: 2,000 x 16 KiB, `push DIR` and `sync DIR --min-age 0`, against curl --parallel-max 4
#   W1: one 1 GiB file, `push FILE`, against curl's single PUT
# Prints medians (wall s, client CPU s/GiB, peak RSS MiB) and the W3 ratios to the floor of
# the same run (floor wall / tool wall: above 1 is faster). RUNS defaults to 3.
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
OLD=$1 NEW=$2 RUNS=${3:-3}
WORK=$ROOT/benchmarks/work
mkdir -p "$WORK/data"
export PATH=$ROOT/.venv/bin:$PATH
SERVER=$WORK/ab-server
bash scripts/seaweedfs.sh start "$SERVER" >/dev/null
trap 'bash scripts/seaweedfs.sh stop "$SERVER" >/dev/null 2>&1 || true; rm -rf "$SERVER"' EXIT
# shellcheck source=/dev/null
. "$SERVER/env"
B=$R2UP_BUCKET
w3=$WORK/data/w3
if [ ! -d "$w3" ]; then
  mkdir -p "$w3"
  for i in $(seq -w 0 1999); do head -c 16384 /dev/urandom >"$w3/track-$i.m4a"; done
fi
w1=$WORK/data/w1-1GiB.bin
[ -f "$w1" ] || head -c $((1 << 30)) /dev/urandom >"$w1"
samples=$WORK/ab-samples
: >"$samples"

check() {  # PREFIX COUNT BYTES, then delete
  local got
  got=$(aws --endpoint-url "$R2UP_ENDPOINT" s3api list-objects-v2 --bucket "$B" --prefix "$1/" \
    --query '[length(Contents), sum(Contents[].Size)]' --output text | awk '{ n += $1; b += $2 } END { printf "%d %d", n, b }')
  [ "$got" = "$2 $3" ] || { echo "ab: $1 holds '$got', expected '$2 $3'" >&2; exit 1; }
  aws --endpoint-url "$R2UP_ENDPOINT" s3 rm --recursive --only-show-errors "s3://$B/$1/"
}
measure() {  # NAME GIB CMD…
  local name=$1 gib=$2
  shift 2
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/ab-time.out" "$@" >/dev/null 2>"$WORK/ab-cmd.err" \
    || { echo "ab: $name failed:" >&2; cat "$WORK/ab-cmd.err" >&2; exit 1; }
  read -r wall user sys rss <"$WORK/ab-time.out"
  echo "$name|$gib|$wall|$(awk "BEGIN { print $user + $sys }")|$rss" >>"$samples"
}
n=0
for run in $(seq "$RUNS"); do
  n=$((n + 1))
  p=ab$n-floor
  measure "W3 curl floor" 0.03125 bash benchmarks/curl-floor-many.sh "$w3" "$R2UP_ENDPOINT/$B/$p"
  check "$p" 2000 $((2000 * 16384))
  for which in old new; do
    bin=$OLD
    [ $which = new ] && bin=$NEW
    p=ab$n-$which-push
    rm -f "$WORK"/ab.sqlite*
    measure "W3 push ($which)" 0.03125 "$bin" push "$w3" --prefix "$p" --db "$WORK/ab.sqlite"
    check "$p" 2000 $((2000 * 16384))
    p=ab$n-$which-sync
    rm -f "$WORK"/ab.sqlite*
    measure "W3 sync ($which)" 0.03125 "$bin" sync "$w3" --prefix "$p" --db "$WORK/ab.sqlite" --min-age 0 --quiet
    check "$p" 2000 $((2000 * 16384))
  done
  p=ab$n-w1curl
  measure "W1 curl single PUT" 1 curl -fsS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$w1" "$R2UP_ENDPOINT/$B/$p/w1.bin"
  check "$p" 1 $((1 << 30))
  for which in old new; do
    bin=$OLD
    [ $which = new ] && bin=$NEW
    p=ab$n-w1$which
    rm -f "$WORK"/ab.sqlite*
    measure "W1 push ($which)" 1 "$bin" push "$w1" --key "$p/w1.bin" --db "$WORK/ab.sqlite"
    check "$p" 1 $((1 << 30))
  done
done
python3 - "$samples" "$RUNS" <<'PY'
import statistics, sys
rows, floor, paired = {}, None, {}
for line in open(sys.argv[1]):
    name, gib, wall, cpu, rss = line.strip().split("|")
    rows.setdefault(name, []).append((float(gib), float(wall), float(cpu), int(rss)))
    if name == "W3 curl floor":
        floor = float(wall)
    elif name.startswith("W3") and floor:
        paired.setdefault(name, []).append(floor / float(wall))
print(f"medians of {sys.argv[2]} interleaved runs\n")
print("| workload | wall s | client CPU s/GiB | peak RSS MiB | vs the curl floor (paired) |")
print("| --- | ---: | ---: | ---: | --- |")
for name, s in rows.items():
    gib = s[0][0]
    ratios = paired.get(name)
    shown = f"{statistics.median(ratios):.2f}x ({', '.join(f'{r:.2f}' for r in ratios)})" if ratios else ""
    print(f"| {name} | {statistics.median(x[1] for x in s):.2f} | {statistics.median(x[2] for x in s) / gib:.2f} "
          f"| {statistics.median(x[3] for x in s) / 1024:.1f} | {shown} |")
PY
