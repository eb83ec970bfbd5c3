#!/usr/bin/env bash
# scripts/fuzz.sh — build and run r2up's libFuzzer harnesses (Fuzz/Sources, Fuzz/README.md).
#
#   scripts/fuzz.sh                          # every target, 60 s each
#   scripts/fuzz.sh xml-reply sigv4 --seconds 600
#   scripts/fuzz.sh --list                   # the targets
#   scripts/fuzz.sh --no-build ...           # run what .build-fuzz holds
#   scripts/fuzz.sh --build-only --debug     # build, run nothing (CI builds while the suite runs)
#   scripts/fuzz.sh --debug --seconds 20     # a debug build: builds in a third of the time,
#                                            # runs ~10x fewer inputs a second (CI's choice)
#   scripts/fuzz.sh --jobs 1 ...             # one target at a time (default: one per core)
#
# Targets run side by side, one per core (--jobs), each from its committed seeds
# (Fuzz/Corpus/TARGET) plus what earlier runs here found (.build-fuzz/corpus/TARGET), with its
# dictionary (Fuzz/Dictionaries/TARGET.dict). The harnesses are declared only with R2UP_FUZZ=1
# and built in release with AddressSanitizer and libFuzzer's coverage into .build-fuzz, apart
# from the normal build. Prints one line per target: runs, coverage (cov = edges, ft =
# features), corpus size. Exits 1 when a target found something (a crash, a sanitizer report,
# a timeout, memory past 2 GB): the input is saved under .build-fuzz/findings/TARGET/ and the
# command to replay it is printed; 2 on bad usage or a failed build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD

declare -A PRODUCTS=(
  [xml-reply]=FuzzXMLReply [reply-head]=FuzzReplyHead [sigv4]=FuzzSigV4 [key-template]=FuzzKeyTemplate
  [ini]=FuzzINI [catalog-index]=FuzzCatalogIndex [inotify]=FuzzInotify [serve-request]=FuzzServeRequest
)
# Cheap builds first: inotify, ini and catalog-index link R2UpKit (GRDB, TagLib); serve-request
# also R2UpServe (Hummingbird, NIO).
ORDER=(xml-reply reply-head sigv4 key-template inotify ini catalog-index serve-request)

seconds=60
jobs=$(nproc 2>/dev/null || echo 1)
build=1
run=1
configuration=release
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=${2:-}; shift 2 || { echo "fuzz.sh: --seconds needs a number" >&2; exit 2; } ;;
    --seconds=*) seconds=${1#--seconds=}; shift ;;
    --jobs) jobs=${2:-}; shift 2 || { echo "fuzz.sh: --jobs needs a number" >&2; exit 2; } ;;
    --no-build) build=0; shift ;;
    --build-only) run=0; shift ;;
    --debug) configuration=debug; shift ;;
    --list) printf '%s\n' "${ORDER[@]}"; exit 0 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) [ -n "${PRODUCTS[$1]:-}" ] || { echo "fuzz.sh: no target '$1' (scripts/fuzz.sh --list)" >&2; exit 2; }
       targets+=("$1"); shift ;;
  esac
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --seconds wants a positive number, not '$seconds'" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --jobs wants a positive number, not '$jobs'" >&2; exit 2; }
[ ${#targets[@]} -gt 0 ] || targets=("${ORDER[@]}")

SCRATCH=$ROOT/.build-fuzz
BIN=$SCRATCH/$configuration
mkdir -p "$SCRATCH"
if [ "$build" = 1 ]; then
  for target in "${targets[@]}"; do
    product=${PRODUCTS[$target]}
    echo "fuzz.sh: building $product ($configuration)" >&2
    # -parse-as-library: with -sanitize=fuzzer a main file's top-level code would become
    # LLVMFuzzerTestOneInput; lld: gold fails on these links; -enable-testing: @testable import
    # in release too.
    if ! R2UP_FUZZ=1 swift build -c "$configuration" --scratch-path "$SCRATCH" --product "$product" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -use-ld=lld \
        -Xswiftc -enable-testing >"$SCRATCH/build.log" 2>&1; then
      grep -v "Cannot export local symbol" "$SCRATCH/build.log" | tail -30 >&2
      echo "fuzz.sh: building $product failed" >&2
      exit 2
    fi
  done
fi

# fuzz_one TARGET: runs one harness; its summary goes to stdout, a finding to stderr (exit 1).
fuzz_one() {
  local target=$1 product=${PRODUCTS[$1]}
  local corpus=$SCRATCH/corpus/$1 findings=$SCRATCH/findings/$1 log=$SCRATCH/logs/$1.log
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  local dict=()
  [ -f "Fuzz/Dictionaries/$target.dict" ] && dict=(-dict="Fuzz/Dictionaries/$target.dict")
  # SWIFT_BACKTRACE=enable=no: Swift's backtracer would hold a crashing input's process for minutes.
  # detect_leaks=0: the Swift runtime's metadata caches look like leaks to LeakSanitizer.
  local status=0
  SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
    timeout --signal=KILL $((seconds + 120)) "$BIN/$product" "$corpus" "Fuzz/Corpus/$target" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$findings/" >"$log" 2>&1 || status=$?
  local runs last cov ft units
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+[[:space:]].*cov: ' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  units=$(find "$corpus" -type f | wc -l)
  if [ "$status" = 0 ]; then
    echo "fuzz.sh: $target ${seconds}s: ${runs:-?} runs, cov ${cov:-?}, ft ${ft:-?}, corpus $units: no finding"
    return 0
  fi
  local artifact
  artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  {
    echo "fuzz.sh: $target FOUND something (exit $status) after ${runs:-?} runs; log $log"
    grep -E "ERROR: |Fatal error|precondition|SUMMARY" "$log" | head -5 || true
    [ -n "$artifact" ] && echo "fuzz.sh: replay: SWIFT_BACKTRACE=enable=no $BIN/$product $artifact"
  } >&2
  return 1
}

[ "$run" = 1 ] || exit 0

for target in "${targets[@]}"; do
  [ -x "$BIN/${PRODUCTS[$target]}" ] || { echo "fuzz.sh: $BIN/${PRODUCTS[$target]} is not built (run without --no-build)" >&2; exit 2; }
done
# Up to $jobs at once; each target's lines are printed whole, in the order given, when all are done.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  { rc=0; fuzz_one "$target" >"$out/$target.out" 2>"$out/$target.err" || rc=$?; echo "$rc" >"$out/$target.rc"; } &
  running=$((running + 1))
done
wait
found=0
for target in "${targets[@]}"; do
  cat "$out/$target.out"
  cat "$out/$target.err" >&2
  [ "$(cat "$out/$target.rc" 2>/dev/null)" = 0 ] || found=1
done
exit "$found"
