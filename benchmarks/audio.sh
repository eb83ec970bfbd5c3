#!/usr/bin/env bash
# benchmarks/audio.sh — the audio figures of issue 16 on a local SeaweedFS (release build).
#
#   benchmarks/audio.sh          # RUNS=3 by default; medians are printed
#
# A1 reading the tags of 2,000 tagged 16 KiB mp3 files: `sync --dry-run --key-template` (reads
#    every file's tags) minus `sync --dry-run` (the same scan without them).
# A2 push of 2,000 tagged 16 KiB mp3 files against 2,000 16 KiB files r2up reads no tags of.
# A3 catalog publish of 10,000 tracks: first (10,000 HEADs), again (one listing, cache), index.json size.
# A4 the page showing those 10,000 tracks in headless Chromium (page clock: navigation to list built).
# Needs ffmpeg, mutagen, chromium, chromium-driver, selenium (as the tests do).
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work/audio
RUNS=${RUNS:-3}
rm -rf "$WORK" && mkdir -p "$WORK/tagged" "$WORK/plain" "$WORK/ten"
swift build -c release >&2
BIN=$ROOT/.build/release/r2up
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
for i in $(seq -w 1 2000); do cp "$WORK/16k.mp3" "$WORK/tagged/t$i.mp3"; head -c 16384 /dev/urandom >"$WORK/plain/p$i.bin"; done
for i in $(seq -w 1 10000); do ln "$WORK/16k.mp3" "$WORK/ten/t$i.mp3"; done

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
a1=() a2t=() a2p=()
for run in $(seq 1 "$RUNS"); do
  rm -f "$WORK"/*.sqlite*
  s=$(now); "$BIN" sync "$WORK/tagged" --dry-run --min-age 0 --quiet --db "$WORK/d.sqlite"
  m=$(now); "$BIN" sync "$WORK/tagged" --dry-run --min-age 0 --quiet --key-template '{title}/{stem}' --db "$WORK/d.sqlite"
  e=$(now); a1+=("$(echo "($e - $m) - ($m - $s)" | bc -l)")
  s=$(now); "$BIN" push "$WORK/tagged" --prefix "t$run/" --quiet --db "$WORK/t.sqlite"
  m=$(now); "$BIN" push "$WORK/plain" --prefix "p$run/" --quiet --db "$WORK/p.sqlite"
  e=$(now); a2t+=("$(echo "$m - $s" | bc -l)"); a2p+=("$(echo "$e - $m" | bc -l)")
done
"$BIN" push "$WORK/ten" --prefix ten/ --quiet --concurrency 8 --db "$WORK/ten.sqlite"
first=() again=()
for run in $(seq 1 "$RUNS"); do
  rm -f "$WORK"/c.sqlite*
  s=$(now); "$BIN" catalog publish --prefix ten/ --quiet --db "$WORK/c.sqlite"
  m=$(now); "$BIN" catalog publish --prefix ten/ --quiet --db "$WORK/c.sqlite"
  e=$(now); first+=("$(echo "$m - $s" | bc -l)"); again+=("$(echo "$e - $m" | bc -l)")
done
size=$(curl -sf "$R2UP_PUBLIC_URL/ten/index.json" | wc -c)
page=$(python3 tools/audiocheck.py browse "$R2UP_PUBLIC_URL/ten/index.html" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(round(d["page_ms"][1]), d["tracks"])')

t=$(printf '%s\n' "${a2t[@]}" | median); p=$(printf '%s\n' "${a2p[@]}" | median)
echo "| figure | median of $RUNS |"
echo "| --- | --- |"
echo "| A1 tags of 2,000 tracks read | $(printf '%s\n' "${a1[@]}" | median | xargs printf '%.2f') s |"
echo "| A2 push 2,000 × 16 KiB tagged / not | $(printf '%.2f' "$t") s / $(printf '%.2f' "$p") s ($(echo "$p / $t" | bc -l | xargs printf '%.2f')×) |"
echo "| A3 catalog publish, 10,000 tracks: first / again | $(printf '%s\n' "${first[@]}" | median | xargs printf '%.2f') s / $(printf '%s\n' "${again[@]}" | median | xargs printf '%.2f') s |"
echo "| A3 index.json | $size bytes |"
echo "| A4 page: 10,000 tracks listed | ${page% *} ms after navigation (${page#* } rows) |"
