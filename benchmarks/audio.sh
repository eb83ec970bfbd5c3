#!/usr/bin/env bash
# benchmarks/audio.sh — the audio figures of issue 16 on a local SeaweedFS (release build).
#
#   benchmarks/audio.sh          # RUNS=5 by default; medians are printed
#   RUNS=1 BIN=.build/debug/r2up benchmarks/audio.sh   # a quick check that it runs
#
# A1 reading the tags of 2,000 tagged 16 KiB mp3 files: `sync --dry-run --key-template` (reads
#    every file's tags) minus `sync --dry-run` (the same scan without them).
# A2 push of 2,000 tagged 16 KiB mp3 files, against the same push with --no-tag-metadata (tags
#    read, none sent) and against the same bytes as .dat files, which r2up reads no tags of; the three run in
#    turn, in a different order each round, so a load from outside falls on all of them.
#    Besides wall seconds: the client's CPU (user+sys) and the server's (weed), per push.
# A3 catalog publish of 10,000 tracks: first from the machine that pushed them (its store knows
#    what it sent: no HEAD), first from a machine that knows nothing (10,000 HEADs), again
#    (one listing, cache); index.json size. index.json and index.html are deleted before each first.
# A4 the page showing those 10,000 tracks in headless Chromium (page clock: navigation to list built).
# Needs ffmpeg, mutagen, chromium, chromium-driver, selenium (as the tests do).
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work/audio
RUNS=${RUNS:-5}
LOAD_BEFORE=$(cut -d" " -f1-3 /proc/loadavg)
rm -rf "$WORK" && mkdir -p "$WORK/tagged" "$WORK/plain" "$WORK/ten"
if [ -z "${BIN:-}" ]; then
  swift build -c release >&2
  BIN=$ROOT/.build/release/r2up
fi
# weed, mutagen and selenium come from the project's .venv (scripts/setup.sh).
export VIRTUAL_ENV=$ROOT/.venv PATH=$ROOT/.venv/bin:$PATH
command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
bash scripts/seaweedfs.sh start "$WORK/server" >/dev/null
trap 'bash scripts/seaweedfs.sh stop "$WORK/server" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
# shellcheck source=/dev/null
. "$WORK/server/env"
export HOME=$WORK

cat >"$WORK/spec.json" <<'JSON'
[{"name": "one.mp3", "seconds": 2, "tags": {"title": "Bench Title", "artist": "Bench Artist", "albumartist": "Bench",
  "album": "Bench Album", "date": "2020", "tracknumber": "1", "discnumber": "1"}}]
JSON
python3 tools/audiocheck.py make "$WORK" "$WORK/spec.json"
head -c 16384 "$WORK/one.mp3" >"$WORK/16k.mp3"
for i in $(seq -w 1 2000); do cp "$WORK/16k.mp3" "$WORK/tagged/t$i.mp3"; cp "$WORK/16k.mp3" "$WORK/plain/p$i.dat"; done
for i in $(seq -w 1 10000); do ln "$WORK/16k.mp3" "$WORK/ten/t$i.mp3"; done

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# The server's CPU seconds so far (user+sys of weed, one process).
server_cpu() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$(cat "$WORK/server/weed.pid")/stat"; }
# timed NAME CMD…: appends "wall client_cpu server_cpu" to $WORK/times-NAME.
timed() {
  local name=$1 s e c0 c1; shift
  c0=$(server_cpu); s=$(now)
  /usr/bin/time -f "%U %S" -o "$WORK/time.out" "$@"
  e=$(now); c1=$(server_cpu)
  echo "$(echo "$e - $s" | bc -l) $(awk '{print $1 + $2}' "$WORK/time.out") $(echo "$c1 - $c0" | bc -l)" >>"$WORK/times-$name"
}
column() { awk -v c="$1" '{print $c}' "$WORK/times-$2" | median; }
a1=()
for run in $(seq 1 "$RUNS"); do
  rm -f "$WORK"/*.sqlite*
  s=$(now); "$BIN" sync "$WORK/tagged" --dry-run --min-age 0 --quiet --db "$WORK/d.sqlite"
  m=$(now); "$BIN" sync "$WORK/tagged" --dry-run --min-age 0 --quiet --key-template '{title}/{stem}' --db "$WORK/d.sqlite"
  e=$(now); a1+=("$(echo "($e - $m) - ($m - $s)" | bc -l)")
done
push() {  # push NAME FOLDER [FLAGS…]: a fresh store, a fresh prefix
  local name=$1 folder=$2; shift 2
  rm -f "$WORK/$name".sqlite*
  timed "$name" "$BIN" push "$folder" --prefix "$name-$run/" --quiet --db "$WORK/$name.sqlite" "$@"
}
for run in $(seq 1 "$RUNS"); do
  case $((run % 3)) in
    1) push tagged "$WORK/tagged"; push notag "$WORK/tagged" --no-tag-metadata; push plain "$WORK/plain" ;;
    2) push notag "$WORK/tagged" --no-tag-metadata; push plain "$WORK/plain"; push tagged "$WORK/tagged" ;;
    0) push plain "$WORK/plain"; push tagged "$WORK/tagged"; push notag "$WORK/tagged" --no-tag-metadata ;;
  esac
done

"$BIN" push "$WORK/ten" --prefix ten/ --quiet --concurrency 8 --db "$WORK/ten.sqlite"
unpublish() {
  for name in index.json index.html; do
    curl -fsS -X DELETE --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
      "$R2UP_ENDPOINT/$R2UP_BUCKET/ten/$name" >/dev/null
  done
}
for run in $(seq 1 "$RUNS"); do
  # The pushing machine's store as the push left it (a copy: a publish adds to its cache).
  python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).backup(sqlite3.connect(sys.argv[2]))' "$WORK/ten.sqlite" "$WORK/own.sqlite"
  unpublish
  timed own "$BIN" catalog publish --prefix ten/ --quiet --db "$WORK/own.sqlite"
  rm -f "$WORK"/other.sqlite*
  unpublish
  timed other "$BIN" catalog publish --prefix ten/ --quiet --db "$WORK/other.sqlite"
  timed again "$BIN" catalog publish --prefix ten/ --quiet --db "$WORK/other.sqlite"
done
size=$(curl -sf "$R2UP_PUBLIC_URL/ten/index.json" | wc -c)
page=$(python3 tools/audiocheck.py browse "$R2UP_PUBLIC_URL/ten/index.html" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(round(d["page_ms"][1]), d["tracks"])')

f() { printf '%.2f' "$1"; }
row() { echo "$(f "$(column 1 "$1")") s ($(f "$(column 2 "$1")") / $(f "$(column 3 "$1")") CPU s)"; }
t=$(column 1 tagged) n=$(column 1 notag) p=$(column 1 plain)
echo "Medians of $RUNS runs; wall s (client / server CPU s). $(nproc) cores, load average before: $LOAD_BEFORE, after: $(cut -d" " -f1-3 /proc/loadavg)."
echo
echo "| figure | median of $RUNS |"
echo "| --- | --- |"
echo "| A1 tags of 2,000 tracks read | $(printf '%s\n' "${a1[@]}" | median | xargs printf '%.2f') s |"
echo "| A2 push 2,000 × 16 KiB tagged mp3 | $(row tagged) |"
echo "| A2 the same with --no-tag-metadata | $(row notag) → tagged at $(f "$(echo "$n / $t" | bc -l)")× its speed |"
echo "| A2 the same bytes as .dat files (no tags read) | $(row plain) → tagged at $(f "$(echo "$p / $t" | bc -l)")× its speed |"
echo "| A3 catalog publish, 10,000 tracks: first, from the machine that pushed them | $(row own) |"
echo "| A3 first, from a machine that knows nothing (10,000 HEADs) | $(row other) |"
echo "| A3 again (one listing) | $(row again) |"
echo "| A3 index.json | $size bytes |"
echo "| A4 page: 10,000 tracks listed | ${page% *} ms after navigation (${page#* } rows) |"
