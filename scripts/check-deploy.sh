#!/usr/bin/env bash
# Validates the deployment files with the tools their users run, offline.
# Called by scripts/test.sh (make test) before go test; exits non-zero on
# the first invalid file. deploy/deploy_test.go checks them against the code.
#
#   docker-compose.yml  docker-compose config -q, with no variables set (every
#                       ${VAR:-default} must resolve) and with all of them set.
#                       Debian's docker-compose package is installed with
#                       apt-get if missing (we run as root in CI).
#   deploy/             kubectl kustomize, if kubectl is installed (optional:
#                       nothing here needs a cluster).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { echo "check-deploy: $*" >&2; }
die() { log "$*"; exit 1; }

ensure_docker_compose() {
  command -v docker-compose >/dev/null 2>&1 && return 0
  command -v apt-get >/dev/null 2>&1 ||
    die "docker-compose is missing and there is no apt-get to install it; install docker-compose 1.29 or later"
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "docker-compose is missing; installing it needs root (apt-get install docker-compose)"
    sudo=(sudo -n)
  fi
  local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300)
  local out
  out="$(mktemp)"
  log "installing Debian's docker-compose"
  # The package lists may be missing or stale: update only when a plain install fails.
  if ! "${apt[@]}" install -y --no-install-recommends docker-compose >"$out" 2>&1; then
    log "apt-get install failed; running apt-get update and retrying"
    if ! { "${apt[@]}" update >>"$out" 2>&1 && "${apt[@]}" install -y --no-install-recommends docker-compose >>"$out" 2>&1; }; then
      tail -n 15 "$out" >&2
      rm -f "$out"
      die "could not install docker-compose with apt-get (output above)"
    fi
  fi
  rm -f "$out"
  command -v docker-compose >/dev/null 2>&1 || die "apt-get installed docker-compose but it is not on PATH"
}

# compose_config NAME [VAR=value...]: docker-compose config -q in a clean
# environment holding only the given variables; warnings (an unset
# variable, for one) count as failures.
compose_config() {
  local what=$1
  shift
  local err
  err="$(mktemp)"
  if ! env -i PATH="$PATH" HOME="${HOME:-/root}" "$@" docker-compose -f docker-compose.yml --profile inspect config -q 2>"$err"; then
    cat "$err" >&2
    rm -f "$err"
    die "docker-compose.yml is invalid ($what)"
  fi
  if [[ -s "$err" ]]; then
    cat "$err" >&2
    rm -f "$err"
    die "docker-compose config warned ($what)"
  fi
  rm -f "$err"
}

ensure_docker_compose
log "docker-compose config ($(docker-compose version --short 2>/dev/null || echo '?'))"
compose_config "no variables set"
compose_config "every variable set" RUN=other BOARD=6 PLIES=12 BLOB_POSITIONS=1000 FAN_IN=4 \
  CONCURRENCY=2 VISIBILITY=2m LOG_FORMAT=text LOG_LEVEL=debug AZURITE_BIND=0.0.0.0 \
  AZURE_STORAGE_CONNECTION_STRING= AZURE_STORAGE_ACCOUNT=myaccount AZURE_TENANT_ID=t AZURE_CLIENT_ID=c AZURE_CLIENT_SECRET=s
# With no variables set, nothing may be left for the environment to fill.
if env -i PATH="$PATH" HOME="${HOME:-/root}" docker-compose -f docker-compose.yml --profile inspect config | grep -n '\${' >&2; then
  die "docker-compose config left a variable unresolved (above)"
fi

if command -v kubectl >/dev/null 2>&1; then
  log "kubectl kustomize deploy/"
  out="$(mktemp)"
  if ! kubectl kustomize deploy/ >"$out" 2>&1; then
    cat "$out" >&2
    rm -f "$out"
    die "deploy/ does not build with kubectl kustomize"
  fi
  rm -f "$out"
else
  log "kubectl not installed: deploy/ is checked by go test only"
fi
log "ok"
