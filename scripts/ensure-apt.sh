#!/usr/bin/env bash
# ensure-apt.sh COMMAND PACKAGE: installs Debian's PACKAGE with apt-get
# unless COMMAND is on PATH already. Used by scripts/test.sh (chromium, for
# the browser tests of browse/) and scripts/check-deploy.sh
# (docker-compose). Needs root, or sudo without a password.
set -euo pipefail

log() { echo "ensure-apt: $*" >&2; }
die() { log "$*"; exit 1; }

[[ $# -eq 2 ]] || die "usage: ensure-apt.sh COMMAND PACKAGE"
cmd=$1
pkg=$2

command -v "$cmd" >/dev/null 2>&1 && exit 0
command -v apt-get >/dev/null 2>&1 ||
  die "$cmd is missing and there is no apt-get to install it; install $pkg"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || die "$cmd is missing; installing it needs root (apt-get install $pkg)"
  sudo=(sudo -n)
fi
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300)
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
log "installing Debian's $pkg"
# The package lists may be missing or stale: update only when a plain install fails.
if ! "${apt[@]}" install -y --no-install-recommends "$pkg" >"$out" 2>&1; then
  log "apt-get install failed; running apt-get update and retrying"
  if ! { "${apt[@]}" update >>"$out" 2>&1 && "${apt[@]}" install -y --no-install-recommends "$pkg" >>"$out" 2>&1; }; then
    tail -n 15 "$out" >&2
    die "could not install $pkg with apt-get (output above)"
  fi
fi
command -v "$cmd" >/dev/null 2>&1 || die "apt-get installed $pkg but $cmd is not on PATH"
