#!/usr/bin/env bash
# scripts/sanitize.sh — r2up's tests under AddressSanitizer or ThreadSanitizer.
#
#   scripts/sanitize.sh                    # address, then thread; the unit suites
#   scripts/sanitize.sh address            # one sanitizer
#   scripts/sanitize.sh thread --all       # every suite, integration included (long)
#   scripts/sanitize.sh address --filter X # your own selection (arguments go to swift test)
#
# Runs scripts/test.sh with R2UP_TEST_SANITIZE set: the same private SeaweedFS and moto, a
# build with `--sanitize=KIND` into .build-KIND (apart from .build), then `swift test`. A
# sanitizer report fails the test process, so any report fails the run. The default
# selection is the unit suites (UNIT below: the model, SigV4, the transfer layer's parsers
# and engine against the local server, the store, audio tags); --all runs everything.
# Suppressions, if ever needed, are listed with their reasons in docs/development/reliability.md.
# Exit status: test.sh's (0 when every selected test passed with no report).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

UNIT='^(SigV4Tests|R2UpModelTests|R2UpTransferTests|R2UpStoreTests|R2UpAudioTests)\.'

kinds=()
rest=()
all=0
for argument in "$@"; do
  case "$argument" in
    address|thread) kinds+=("$argument") ;;
    --all) all=1 ;;
    *) rest+=("$argument") ;;
  esac
done
[ ${#kinds[@]} -gt 0 ] || kinds=(address thread)
if [ "$all" = 0 ] && [ ${#rest[@]} -eq 0 ]; then
  rest=(--filter "$UNIT")
  # Those suites need neither the CLI nor the web app: the package leaves them out (Package.swift).
  export R2UP_UNIT_ONLY=1
fi

# Reports go to stderr and end the process with an error; halt_on_error keeps it so for TSan too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}

status=0
for kind in "${kinds[@]}"; do
  echo "sanitize.sh: $kind: ${rest[*]}" >&2
  R2UP_TEST_SANITIZE=$kind bash scripts/test.sh "${rest[@]}" || { status=$?; echo "sanitize.sh: $kind failed ($status)" >&2; }
done
exit "$status"
