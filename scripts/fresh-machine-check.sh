#!/usr/bin/env bash
# scripts/fresh-machine-check.sh — prove that scripts/setup.sh + scripts/demo.sh set up
# everything on a fresh Debian machine that has only Swift and Debian's base.
#
#   sudo scripts/fresh-machine-check.sh [ROOTFS]     # default /tmp/r2up-fresh-rootfs
#
# 1. debootstrap --variant=minbase bookworm ROOTFS (only when ROOTFS is not there yet;
#    apt-get installs debootstrap first if needed). minbase = essential packages + apt:
#    no python3, no curl, no compiler, no libcurl headers.
# 2. copies this checkout (the files git tracks, plus your uncommitted edits) to ROOTFS/r2up,
#    bind-mounts the Swift toolchain (SWIFT_ROOT, default: the one `swift` on PATH comes
#    from, e.g. /opt/swift) read-only, and /proc, /dev, /sys.
# 3. chroot: scripts/setup.sh, then scripts/demo.sh, and checks that the demo's last
#    lines say "fetched back OK"; then stops the demo's server and unmounts everything.
# Needs root, the Debian mirror and PyPI. Where GitHub is not reachable (this project's
# build machine) R2UP_FRESH_COPY_PACKAGES=1 (the default) copies the Swift package
# checkouts (.build/checkouts, .build/repositories, workspace-state.json, Package.resolved)
# from this checkout, so that SwiftPM need not fetch them; nothing else comes from the host.
# Where HTTPS leaves through an intercepting proxy (this build machine's egress), the
# host's local CAs (/usr/local/share/ca-certificates/*.crt) are copied in too and pip is
# pointed at the system bundle (PIP_CERT); Debian's own ca-certificates package, which
# setup.sh installs, folds them into that bundle.
# Takes ~10 min on 2 cores (a release build from scratch): not part of scripts/test.sh or CI.
# R2UP_FRESH_KEEP=1 keeps ROOTFS afterwards (a second run then reuses it: setup.sh is quiet).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SRC=$PWD
ROOTFS=${1:-/tmp/r2up-fresh-rootfs}
say() { echo "fresh-machine-check: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mount): sudo $0 $*"
SWIFT_ROOT=${SWIFT_ROOT:-$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")}
[ -x "$SWIFT_ROOT/usr/bin/swift" ] || die "no Swift toolchain at $SWIFT_ROOT (set SWIFT_ROOT)"

if [ ! -x "$ROOTFS/usr/bin/apt-get" ]; then
  command -v debootstrap >/dev/null 2>&1 || apt-get install -y -qq debootstrap >/dev/null
  say "debootstrap --variant=minbase bookworm $ROOTFS"
  debootstrap --variant=minbase bookworm "$ROOTFS" http://deb.debian.org/debian >/dev/null
fi

mounted=()
cleanup() {
  local rc=$?
  if [ -x "$ROOTFS/r2up/scripts/seaweedfs.sh" ]; then
    chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
      bash /r2up/scripts/seaweedfs.sh stop /r2up/.r2up-demo/server >/dev/null 2>&1 || true
  fi
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" || true; done
  if [ "${R2UP_FRESH_KEEP:-0}" != 1 ] && [ "$rc" = 0 ]; then rm -rf "$ROOTFS"; fi
  exit "$rc"
}
trap cleanup EXIT
bind() { mkdir -p "$ROOTFS$2"; mount --bind "$1" "$ROOTFS$2"; mounted+=("$ROOTFS$2"); }
bind /proc /proc
bind /dev /dev
bind /sys /sys
bind "$SWIFT_ROOT" /opt/swift
mount -o remount,bind,ro "$ROOTFS/opt/swift"
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
extra_env=()
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$ROOTFS/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$ROOTFS/usr/local/share/ca-certificates/"
  extra_env=(PIP_CERT=/etc/ssl/certs/ca-certificates.crt)
  # A reused ROOTFS has ca-certificates already: fold the copied CAs in now.
  if [ -x "$ROOTFS/usr/sbin/update-ca-certificates" ]; then chroot "$ROOTFS" /usr/sbin/update-ca-certificates >/dev/null; fi
fi

say "copying the checkout to $ROOTFS/r2up"
rm -rf "$ROOTFS/r2up" && mkdir -p "$ROOTFS/r2up"
git ls-files -z --cached --others --exclude-standard | (cd "$SRC" && tar --null -T - -cf -) | tar -C "$ROOTFS/r2up" -xf -
if [ "${R2UP_FRESH_COPY_PACKAGES:-1}" = 1 ] && [ -d .build/checkouts ]; then
  mkdir -p "$ROOTFS/r2up/.build"
  cp -a .build/checkouts .build/repositories .build/workspace-state.json "$ROOTFS/r2up/.build/"
  [ -f Package.resolved ] && cp Package.resolved "$ROOTFS/r2up/"
fi

say "chroot: scripts/setup.sh && scripts/demo.sh"
log=$ROOTFS/r2up/fresh-machine.log
chroot "$ROOTFS" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 "${extra_env[@]}" \
  PATH=/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c 'cd /r2up && time bash scripts/setup.sh && time bash scripts/setup.sh && bash scripts/demo.sh' 2>&1 | tee "$log"
grep -q '^fetched back OK: ' "$log" || die "the demo did not end with 'fetched back OK' (log: $log)"
say "OK: a fresh Debian bookworm with only Swift added ran scripts/setup.sh and scripts/demo.sh"
