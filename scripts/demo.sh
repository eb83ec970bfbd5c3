#!/usr/bin/env bash
# scripts/demo.sh — r2up end to end on this machine, in one command:
#
#   scripts/demo.sh
#
# 1. builds r2up in release (swift build -c release),
# 2. starts a local S3 server (SeaweedFS, scripts/seaweedfs.sh) in .r2up-demo/server,
# 3. writes a 3-second 440 Hz sine tone, .r2up-demo/sample-track.wav
#    (44.1 kHz, 16-bit PCM, stereo; python3's wave module),
# 4. runs `r2up push .r2up-demo/sample-track.wav --db .r2up-demo/r2up.sqlite`
#    with the server's settings, and takes the public URL it prints last,
# 5. fetches that URL with plain curl (no credentials) and compares the bytes.
#
# The server keeps running afterwards (try `r2up history --db .r2up-demo/r2up.sqlite`
# after `. .r2up-demo/server/env`); stop it with:
#   scripts/seaweedfs.sh stop .r2up-demo/server
# R2UP_BIN=/path/to/r2up skips the build and uses that binary. First it runs
# scripts/setup.sh (installs missing Debian packages and the .venv tools; quiet when all is there).
set -euo pipefail
exec </dev/null

cd "$(dirname "${BASH_SOURCE[0]}")/.."
DEMO=.r2up-demo
SERVER=$DEMO/server
TRACK=$DEMO/sample-track.wav
DB=$DEMO/r2up.sqlite
mkdir -p "$DEMO"
bash scripts/setup.sh
export VIRTUAL_ENV=$PWD/.venv PATH=$PWD/.venv/bin:$PATH

step() { printf '\n==> %s\n' "$*" >&2; }

if [ -n "${R2UP_BIN:-}" ]; then
  BIN=$R2UP_BIN
  step "using $BIN"
else
  step "building r2up (swift build -c release)"
  swift build -c release
  BIN=.build/release/r2up
fi
[ -x "$BIN" ] || { echo "demo.sh: $BIN is missing" >&2; exit 1; }

step "starting a local S3 server (SeaweedFS) in $SERVER"
bash scripts/seaweedfs.sh start "$SERVER"

step "writing $TRACK (3 s of a 440 Hz tone, 44.1 kHz 16-bit stereo PCM)"
python3 - "$TRACK" <<'EOF'
import math, struct, sys, wave
path, rate, seconds, freq = sys.argv[1], 44100, 3, 440.0
frames = bytearray()
for i in range(rate * seconds):
    fade = min(1.0, i / 2205, (rate * seconds - i) / 2205)   # 50 ms in and out
    v = int(0.4 * 32767 * fade * math.sin(2 * math.pi * freq * i / rate))
    frames += struct.pack("<hh", v, v)
with wave.open(path, "wb") as w:
    w.setnchannels(2)
    w.setsampwidth(2)
    w.setframerate(rate)
    w.writeframes(bytes(frames))
EOF
ls -l "$TRACK" >&2

step "r2up push $TRACK --db $DB"
out=$(
  # shellcheck source=/dev/null
  . "$SERVER/env"
  "$BIN" push "$TRACK" --db "$DB"
)
printf '%s\n' "$out"
url=$(printf '%s\n' "$out" | awk 'NF { last = $0 } END { print last }' | tr -d '[:space:]')
case "$url" in
  http://* | https://*) ;;
  *) echo "demo.sh: r2up push did not print a URL as its last line (got: '$url')" >&2; exit 1 ;;
esac

step "fetching $url with plain curl"
curl -fsS "$url" -o "$DEMO/fetched.wav"
if cmp "$TRACK" "$DEMO/fetched.wav"; then
  echo "fetched back OK: $url ($(wc -c <"$TRACK" | tr -d ' ') bytes, identical)"
else
  echo "demo.sh: the fetched bytes differ from $TRACK" >&2
  exit 1
fi

printf '\nThe server is still running. Stop it with:\n  scripts/seaweedfs.sh stop %s\n' "$SERVER"
