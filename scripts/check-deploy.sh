#!/usr/bin/env bash
# Validates the deployment files with the tools their users run, offline.
# Called by scripts/test.sh (make test) before go test; exits non-zero on
# the first invalid file. deploy/deploy_test.go checks them against the code.
#
#   docker-compose.yml  docker-compose config -q, with no variables set (every
#                       ${VAR:-default} must resolve) and with all of them set.
#                       Debian's docker-compose package is installed with
#                       apt-get if missing (scripts/ensure-apt.sh).
#   deploy/             kubectl kustomize, if kubectl is installed (optional:
#                       nothing here needs a cluster).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { echo "check-deploy: $*" >&2; }
die() { log "$*"; exit 1; }

ensure_docker_compose() { "$ROOT/scripts/ensure-apt.sh" docker-compose docker-compose; }

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
