#!/usr/bin/env bash
# scripts/test.sh — build r2up and run its tests against a real S3 server.
#
#   scripts/test.sh                      # swift build, then swift test, one test at a time
#   scripts/test.sh --filter SigV4Tests  # extra arguments go to `swift test`
#
# Starts a private SeaweedFS (scripts/seaweedfs.sh) in a fresh temporary
# folder, exports its settings, builds, runs `swift test "$@"`, stops the
# server on exit (also on failure or Ctrl-C) and exits with swift test's
# status (or swift build's, if the build fails; 1 if the docs checks after the
# build fail: scripts/reference.sh --check, scripts/check-links.py). Needs no TTY and no stdin.
#
# The tests see (same values, two spellings):
#   R2UP_TEST_ENDPOINT   = R2UP_ENDPOINT     http://127.0.0.1:PORT (S3, path-style;
#                                            virtual-hosted: http://BUCKET.localhost:PORT)
#   R2UP_TEST_ACCESS_KEY = AWS_ACCESS_KEY_ID
#   R2UP_TEST_SECRET_KEY = AWS_SECRET_ACCESS_KEY
#   R2UP_TEST_BUCKET     = R2UP_BUCKET       r2up-test (exists, empty at start)
#   R2UP_TEST_PUBLIC_URL = R2UP_PUBLIC_URL   http://127.0.0.1:PORT/r2up-test (anonymous GET)
#   AWS_REGION=us-east-1
#   R2UP_TEST_WRITER_ACCESS_KEY, R2UP_TEST_WRITER_SECRET_KEY: an identity without Admin rights
#   (SeaweedFS creates a missing bucket on PUT for an admin; R2 and S3 never do)
# First it runs scripts/setup.sh (missing Debian packages, the .venv tools) and puts
# .venv/bin first on PATH: the tests find python3 (boto3), aws, weed and moto_server there.
#   R2UP_TEST_MOTO_ENDPOINT, R2UP_TEST_MOTO_BUCKET: moto's S3 server (any keys accepted)
#   R2UP_TEST_MINIO_ENDPOINT, R2UP_TEST_MINIO_BUCKET, R2UP_TEST_MINIO_ACCESS_KEY,
#   R2UP_TEST_MINIO_SECRET_KEY: MinIO's S3 code as `juicefs gateway` runs it (a local JuiceFS
#   volume with SQLite metadata; --keep-etag), the third S3 implementation
# R2UP_KEEP_SERVER=1 leaves the server and its folder in place (prints where).
# R2UP_TEST_SANITIZE=address|thread builds and tests with that sanitizer into .build-SANITIZER
# (scripts/sanitize.sh sets it) and skips the docs checks, which the normal run makes.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
# No file in Sources/ over 400 lines, no function over 80 (scripts/size-check.sh; no exceptions).
bash scripts/size-check.sh
# swift-format's rules over Sources/ and Tests/ (scripts/format.sh; layout findings aside).
bash scripts/format.sh --check
# The CLI uses the layers below R2UpKit only through it (issue 25). SwiftPM on Linux does not
# refuse an import of a module a target does not depend on, so this does.
if grep -rlE '^\s*(@_exported\s+)?((public|package|internal)\s+)?import\s+(R2UpStore|R2UpTransfer|R2UpAudio|R2UpModel|GRDB|CCurl|CAudioTags)\b' Sources/r2up Sources/R2UpServe; then
  echo "test.sh: the files above import a layer below R2UpKit: the r2up and R2UpServe targets depend on R2UpKit alone" >&2
  exit 1
fi
# An app that imports R2UpKit sees the model and the face, never the store, the transfer layer,
# the audio layer, SigV4, GRDB or curl (issue 25): R2UpKit imports those as `package` or
# internal, and re-exports the model alone. scripts/face-check.sh checks the built interface.
if grep -rnE '^\s*(@_exported\s+)?public\s+import\s+(R2UpStore|R2UpTransfer|R2UpAudio|GRDB|CCurl|CAudioTags|SigV4)\b' Sources/R2UpKit ||
  grep -rnE '@_exported' Sources/R2UpKit | grep -vE ':\s*@_exported\s+public\s+import\s+R2UpModel\s*$'; then
  echo "test.sh: R2UpKit shows a lower layer to apps above: import it as \`package import\` (or internal), and re-export only R2UpModel" >&2
  exit 1
fi
# Presentation is the CLI's (docs/development/architecture.md; no exceptions, comments aside).
# Messages below the CLI say which option they mean (OptionName) and what to do (Remedy); the CLI
# names its flags, variables and commands (Sources/r2up/Presentation/OptionWords+CLI.swift,
# RemedyWords+CLI.swift) and reads the environment (Sources/r2up/EnvironmentSettings.swift).
below_cli=(Sources/R2UpKit Sources/R2UpModel Sources/R2UpTransfer Sources/R2UpStore)
if grep -rnE --include='*.swift' '"[^"]*(--[a-z]|R2UP_|AWS_[A-Z])' "${below_cli[@]}" | grep -vE '^[^:]+:[0-9]+:\s*//'; then
  echo "test.sh: the strings above name a CLI flag or an environment variable: use OptionName, which the CLI renders, or a SettingVariable it supplies" >&2
  exit 1
fi
commands='push|pull|cat|sync|queue|retry|history|copy-url|status|ls|presign|rm|config (init|show)|doctor|catalog|watch|offload|fetch|du|serve|help'
if grep -rnE --include='*.swift' "r2up ($commands)\b" "${below_cli[@]}" | grep -vE '^[^:]+:[0-9]+:\s*//'; then
  echo "test.sh: the lines above name an r2up command: use a Remedy, which the CLI renders as its command line" >&2
  exit 1
fi
bash scripts/setup.sh
export VIRTUAL_ENV=$ROOT/.venv PATH=$ROOT/.venv/bin:$PATH

SERVER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/r2up-seaweedfs.XXXXXX")
stopped=0
child=""
moto_pid=""
minio_pid=""
cleanup() {
  local rc=$?
  if [ -n "$minio_pid" ] && kill -0 "$minio_pid" 2>/dev/null; then
    kill -TERM "$minio_pid" 2>/dev/null || true
    wait "$minio_pid" 2>/dev/null || true
  fi
  if [ -n "$moto_pid" ] && kill -0 "$moto_pid" 2>/dev/null; then
    kill -TERM "$moto_pid" 2>/dev/null || true
    wait "$moto_pid" 2>/dev/null || true
  fi
  if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
  if [ "$stopped" = 0 ]; then
    stopped=1
    if [ "${R2UP_KEEP_SERVER:-0}" = 1 ]; then
      echo "test.sh: server left running: $ROOT/scripts/seaweedfs.sh stop $SERVER_DIR" >&2
    else
      # Quietly: swift test's summary should stay the last thing printed.
      bash "$ROOT/scripts/seaweedfs.sh" stop "$SERVER_DIR" >/dev/null 2>&1 || true
      rm -rf "$SERVER_DIR"
    fi
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bash scripts/seaweedfs.sh start "$SERVER_DIR" >/dev/null </dev/null
# shellcheck source=/dev/null
. "$SERVER_DIR/env"
export R2UP_TEST_ENDPOINT=$R2UP_ENDPOINT
export R2UP_TEST_ACCESS_KEY=$AWS_ACCESS_KEY_ID
export R2UP_TEST_SECRET_KEY=$AWS_SECRET_ACCESS_KEY
export R2UP_TEST_BUCKET=$R2UP_BUCKET
export R2UP_TEST_PUBLIC_URL=$R2UP_PUBLIC_URL
export R2UP_TEST_WRITER_ACCESS_KEY=$R2UP_WRITER_ACCESS_KEY
export R2UP_TEST_WRITER_SECRET_KEY=$R2UP_WRITER_SECRET_KEY
echo "test.sh: S3 server $R2UP_TEST_ENDPOINT bucket $R2UP_TEST_BUCKET (dir $SERVER_DIR)" >&2

# moto's server: a second, independent S3 implementation (loopback, any keys, stopped by PID).
# The two-server suites run the core commands against both (R2UP_TEST_MOTO_*).
moto_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
moto_server -H 127.0.0.1 -p "$moto_port" >"$SERVER_DIR/moto.out" 2>&1 </dev/null &
moto_pid=$!
for _ in $(seq 1 100); do
  curl -s -o /dev/null "http://127.0.0.1:$moto_port/" && break
  kill -0 "$moto_pid" 2>/dev/null || { cat "$SERVER_DIR/moto.out" >&2; echo "test.sh: moto_server did not start" >&2; exit 1; }
  sleep 0.2
done
curl -sf -o /dev/null -X PUT "http://127.0.0.1:$moto_port/$R2UP_TEST_BUCKET" \
  || { echo "test.sh: moto_server did not create the bucket" >&2; exit 1; }
export R2UP_TEST_MOTO_ENDPOINT=http://127.0.0.1:$moto_port R2UP_TEST_MOTO_BUCKET=$R2UP_TEST_BUCKET
echo "test.sh: moto server $R2UP_TEST_MOTO_ENDPOINT (pid $moto_pid)" >&2

# juicefs gateway: MinIO's S3 code over a JuiceFS volume in this folder (file storage, SQLite
# metadata, its cache here too), loopback only, stopped by PID. The volume's name is its only
# bucket. --keep-etag: without it HEAD replies carry no ETag (r2up then refuses to call an
# upload confirmed; IntegrityCommandTests checks that through faultproxy instead).
JFS=$SERVER_DIR/juicefs
mkdir -p "$JFS/data" "$JFS/cache"
minio_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
juicefs format --storage file --bucket "$JFS/data/" "sqlite3://$JFS/meta.db" "$R2UP_TEST_BUCKET" >"$JFS/format.out" 2>&1 </dev/null \
  || { cat "$JFS/format.out" >&2; echo "test.sh: juicefs format failed" >&2; exit 1; }
MINIO_ROOT_USER=r2upminiokey MINIO_ROOT_PASSWORD=r2upminiosecret-0123456789 \
  juicefs gateway "sqlite3://$JFS/meta.db" "127.0.0.1:$minio_port" --no-usage-report --keep-etag \
  --cache-dir "$JFS/cache" >"$JFS/gateway.out" 2>&1 </dev/null &
minio_pid=$!
for _ in $(seq 1 150); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$minio_port/")" != 000 ] && break
  kill -0 "$minio_pid" 2>/dev/null || { tail -20 "$JFS/gateway.out" >&2; echo "test.sh: juicefs gateway did not start" >&2; exit 1; }
  sleep 0.2
done
export R2UP_TEST_MINIO_ENDPOINT=http://127.0.0.1:$minio_port R2UP_TEST_MINIO_BUCKET=$R2UP_TEST_BUCKET \
  R2UP_TEST_MINIO_ACCESS_KEY=r2upminiokey R2UP_TEST_MINIO_SECRET_KEY=r2upminiosecret-0123456789
echo "test.sh: juicefs gateway (MinIO) $R2UP_TEST_MINIO_ENDPOINT (pid $minio_pid)" >&2

# run CMD...: in the background and wait, so that SIGTERM/SIGINT reach the
# trap at once (and are passed on to CMD) instead of after CMD ends.
run() {
  "$@" </dev/null &
  child=$!
  local rc=0
  wait "$child" || rc=$?
  child=""
  return "$rc"
}

# A sanitized build goes to its own scratch folder: the normal .build stays as it was.
build_flags=()
sanitize=${R2UP_TEST_SANITIZE:-}
case "$sanitize" in
  "") ;;
  address|thread) build_flags=(--sanitize="$sanitize" --scratch-path "$ROOT/.build-$sanitize")
    # LeakSanitizer reports XCTest's own runner (XCTMainMisc's suite objects) at exit.
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} ;;
  *) echo "test.sh: R2UP_TEST_SANITIZE must be address or thread, not '$sanitize'" >&2; exit 2 ;;
esac

status=0
run swift build "${build_flags[@]}" --build-tests || status=$?
if [ "$status" != 0 ]; then
  echo "test.sh: swift build failed ($status)" >&2
  exit "$status"
fi
# The docs cannot go stale (a second each): the command reference regenerated from the binary
# just built must equal docs/reference/commands/, and every relative link in README.md and
# docs/ must resolve. Each names what is wrong and how to fix it.
if [ -z "$sanitize" ]; then
  R2UP_BIN=$(swift build --show-bin-path)/r2up bash scripts/reference.sh --check || exit 1
  python3 scripts/check-links.py || exit 1
  # R2UpKit's built public interface names no lower layer; the embedding example needs public API only.
  bash scripts/face-check.sh || exit 1
  # The DocC catalog builds with warnings as errors (a broken symbol link fails here).
  if [ "${R2UP_SKIP_DOCS:-0}" != 1 ]; then
    docs_start=$SECONDS
    run bash scripts/docs.sh >"$SERVER_DIR/docs.out" 2>&1 || { cat "$SERVER_DIR/docs.out" >&2; echo "test.sh: scripts/docs.sh failed" >&2; exit 1; }
    echo "test.sh: DocC catalog built in $((SECONDS - docs_start)) s" >&2
  fi
fi
# One test at a time unless --parallel is given: in parallel on two cores, the tests'
# subprocesses and the server starve Swift's two-thread cooperative pool, and a test's
# await resumed up to 15 s late (a kill after the upload it meant to interrupt had ended).
# Serial, the suite takes about 7 minutes instead of 3, and no timing is at the mercy of
# its neighbours.
# R2UP_TEST_BUILT_MARK=FILE: touched as the tests start (.ci/run then builds the sanitizer and
# fuzz binaries at the lowest priority while they run).
[ -z "${R2UP_TEST_BUILT_MARK:-}" ] || touch "$R2UP_TEST_BUILT_MARK"
parallel=--no-parallel
for argument in "$@"; do
  case "$argument" in --parallel|--no-parallel) parallel="" ;; esac
done
xunit=$SERVER_DIR/results.xml
run swift test "${build_flags[@]}" --skip-build $parallel --xunit-output "$xunit" "$@" || status=$?
# A test that failed runs once more, alone (R2UP_TEST_RERUN=0: not): a failure that comes back
# fails the suite; one that does not is named as FLAKY on the last lines, for a look at why
# (docs/development/tests.md). Only a few: many failures are a real break, not timing.
if [ "$status" != 0 ] && [ "${R2UP_TEST_RERUN:-1}" = 1 ]; then
  mapfile -t failed < <(python3 scripts/failed-tests.py "${xunit%.xml}-swift-testing.xml" "$xunit")
  if [ "${#failed[@]}" -gt 0 ] && [ "${#failed[@]}" -le 3 ]; then
    echo "test.sh: ${#failed[@]} test(s) failed; each runs once more: ${failed[*]}" >&2
    status=0
    mkdir -p "$ROOT/.build"
    for pattern in "${failed[@]}"; do
      if run swift test "${build_flags[@]}" --skip-build --filter "$pattern"; then
        echo "test.sh: FLAKY: $pattern failed, then passed when run again" | tee -a "$ROOT/.build/flaky-tests.txt" >&2
      else
        status=1
        echo "test.sh: $pattern failed twice" | tee -a "$ROOT/.build/flaky-tests.txt" >&2
      fi
    done
  fi
fi
exit "$status"
