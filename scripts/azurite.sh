#!/usr/bin/env bash
# Install, start and stop a local Azurite (Azure Storage emulator) for tests.
#
#   scripts/azurite.sh install              install Azurite $AZURITE_VERSION into .tools/azurite if missing
#   scripts/azurite.sh start [--location DIR] [--ports BLOB,QUEUE,TABLE]
#                                           start in the background on free loopback ports (in memory,
#                                           or with data on disk under DIR), wait until blob, queue and
#                                           table answer, and print shell exports (connection string)
#   scripts/azurite.sh restart              stop and start again with the same ports and location
#                                           (data survives only with --location)
#   scripts/azurite.sh stop                 stop the Azurite started by this script
#   scripts/azurite.sh env                  print the exports again
#   scripts/azurite.sh connection-string    print only the connection string
#
# State (pid, ports, log) lives in $AZURITE_STATE_DIR (default .azurite/ in the repo root), so
# several checkouts do not collide. The account is Azurite's well-known development account;
# its key is public and not a secret.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
AZURITE_VERSION="${AZURITE_VERSION:-3.35.0}"
TOOLS_DIR="${AZURITE_TOOLS_DIR:-$ROOT/.tools/azurite}"
STATE_DIR="${AZURITE_STATE_DIR:-$ROOT/.azurite}"
AZURITE_BIN="$TOOLS_DIR/node_modules/.bin/azurite"
ACCOUNT=devstoreaccount1
# Azurite's published development key (documented by Microsoft; not a secret).
KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

log() { echo "azurite.sh: $*" >&2; }

installed_version() {
  local pj="$TOOLS_DIR/node_modules/azurite/package.json"
  [[ -f "$pj" ]] || return 1
  node -e 'process.stdout.write(require(process.argv[1]).version)' "$pj"
}

cmd_install() {
  if [[ -x "$AZURITE_BIN" ]] && [[ "$(installed_version || true)" == "$AZURITE_VERSION" ]]; then
    return 0
  fi
  mkdir -p "$TOOLS_DIR"
  # Concurrent installs into one directory (parallel test runs from
  # several work trees sharing .tools) break each other: take turns. The
  # subshell keeps the lock's descriptor away from the Azurite we start.
  (
    flock 9
    install_locked
  ) 9>"$TOOLS_DIR.lock"
}

install_locked() {
  if [[ -x "$AZURITE_BIN" ]] && [[ "$(installed_version || true)" == "$AZURITE_VERSION" ]]; then
    return 0
  fi
  command -v node >/dev/null || { log "node is not installed"; exit 1; }
  command -v npm >/dev/null || { log "npm is not installed"; exit 1; }
  log "installing azurite@$AZURITE_VERSION into $TOOLS_DIR"
  mkdir -p "$TOOLS_DIR"
  local try
  for try in 1 2 3; do
    if npm install --prefix "$TOOLS_DIR" --no-audit --no-fund --no-update-notifier \
         --loglevel=error --save-exact "azurite@$AZURITE_VERSION" >&2; then
      break
    fi
    if [[ $try == 3 ]]; then log "npm install failed"; exit 1; fi
    log "npm install failed; retrying"
    sleep $((try * 5))
  done
  [[ -x "$AZURITE_BIN" ]] || { log "azurite binary missing after install"; exit 1; }
}

# free_ports N: print N distinct free TCP ports on 127.0.0.1, space separated.
free_ports() {
  node -e '
    const net = require("net");
    const n = Number(process.argv[1]);
    const servers = [];
    const ports = [];
    function next() {
      if (ports.length === n) {
        servers.forEach(s => s.close());
        console.log(ports.join(" "));
        return;
      }
      const s = net.createServer();
      s.listen(0, "127.0.0.1", () => { servers.push(s); ports.push(s.address().port); next(); });
    }
    next();' "$1"
}

# wait_ready BLOB QUEUE TABLE PID: wait until every service answers HTTP, or fail.
wait_ready() {
  node -e '
    const http = require("http");
    const ports = process.argv.slice(1, 4).map(Number);
    const pid = Number(process.argv[4]);
    const deadline = Date.now() + 60000;
    function alive() { try { process.kill(pid, 0); return true; } catch (e) { return false; } }
    function probe(port) {
      return new Promise(resolve => {
        const req = http.get({ host: "127.0.0.1", port, path: "/devstoreaccount1?comp=list", timeout: 2000 },
          res => { res.resume(); resolve(true); });
        req.on("error", () => resolve(false));
        req.on("timeout", () => { req.destroy(); resolve(false); });
      });
    }
    (async () => {
      for (;;) {
        const ok = await Promise.all(ports.map(probe));
        if (ok.every(Boolean)) process.exit(0);
        if (!alive()) { console.error("azurite exited during start-up"); process.exit(2); }
        if (Date.now() > deadline) { console.error("azurite did not answer within 60s"); process.exit(3); }
        await new Promise(r => setTimeout(r, 200));
      }
    })();' "$@"
}

connection_string() {
  local b q t
  read -r b q t < "$STATE_DIR/ports"
  printf 'DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=http://127.0.0.1:%s/%s;QueueEndpoint=http://127.0.0.1:%s/%s;TableEndpoint=http://127.0.0.1:%s/%s;' \
    "$ACCOUNT" "$KEY" "$b" "$ACCOUNT" "$q" "$ACCOUNT" "$t" "$ACCOUNT"
}

cmd_env() {
  [[ -f "$STATE_DIR/ports" ]] || { log "not started (no $STATE_DIR/ports)"; exit 1; }
  printf "export AZURE_STORAGE_CONNECTION_STRING='%s'\n" "$(connection_string)"
}

running_pid() {
  [[ -f "$STATE_DIR/pid" ]] || return 1
  local pid
  pid="$(cat "$STATE_DIR/pid")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

launch() { # launch BLOB QUEUE TABLE LOCATION
  local b=$1 q=$2 t=$3 location=$4
  local args=(--blobHost 127.0.0.1 --blobPort "$b" --queueHost 127.0.0.1 --queuePort "$q"
              --tableHost 127.0.0.1 --tablePort "$t" --disableTelemetry --skipApiVersionCheck --silent
              --blobKeepAliveTimeout 60 --queueKeepAliveTimeout 60 --tableKeepAliveTimeout 60)
  if [[ -n "$location" ]]; then
    mkdir -p "$location"
    args+=(--location "$location")
  else
    # Nothing on disk; the process runs in $STATE_DIR/work in case it writes anything anyway.
    args+=(--inMemoryPersistence)
  fi
  mkdir -p "$STATE_DIR/work"
  # setsid: a job of its own, so Ctrl-C in the test run does not kill it half-way and stop can
  # signal the whole group.
  (cd "$STATE_DIR/work" && exec setsid "$AZURITE_BIN" "${args[@]}" </dev/null >>"$STATE_DIR/azurite.log" 2>&1) &
  local pid=$!
  echo "$pid" > "$STATE_DIR/pid"
  echo "$b $q $t" > "$STATE_DIR/ports"
  printf '%s' "$location" > "$STATE_DIR/location"
  if ! wait_ready "$b" "$q" "$t" "$pid"; then
    log "start failed; last log lines:"
    tail -n 20 "$STATE_DIR/azurite.log" >&2 || true
    stop_pid "$pid"
    return 1
  fi
}

stop_pid() {
  local pid=$1 i
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
}

cmd_start() {
  local location="" ports=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --location) location="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
      --ports) ports="${2//,/ }"; shift 2 ;;
      *) log "unknown option $1"; exit 2 ;;
    esac
  done
  cmd_install
  mkdir -p "$STATE_DIR"
  if pid="$(running_pid)"; then
    log "already running (pid $pid)"
    cmd_env
    return 0
  fi
  : > "$STATE_DIR/azurite.log"
  local try b q t
  for try in 1 2 3; do
    if [[ -n "$ports" ]]; then read -r b q t <<<"$ports"; else read -r b q t <<<"$(free_ports 3)"; fi
    if launch "$b" "$q" "$t" "$location"; then
      log "running (pid $(cat "$STATE_DIR/pid"), blob $b, queue $q, table $t${location:+, data in $location})"
      cmd_env
      return 0
    fi
    [[ -z "$ports" ]] || break
    log "retrying on other ports"
  done
  exit 1
}

cmd_stop() {
  local pid
  if pid="$(running_pid)"; then
    stop_pid "$pid"
    log "stopped (pid $pid)"
  fi
  rm -f "$STATE_DIR/pid"
}

cmd_restart() {
  [[ -f "$STATE_DIR/ports" ]] || { log "never started"; exit 1; }
  local b q t location
  read -r b q t < "$STATE_DIR/ports"
  location="$(cat "$STATE_DIR/location" 2>/dev/null || true)"
  cmd_stop
  launch "$b" "$q" "$t" "$location"
  log "restarted (pid $(cat "$STATE_DIR/pid"))"
}

case "${1:-}" in
  install) cmd_install ;;
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  restart) cmd_restart ;;
  env) cmd_env ;;
  connection-string) connection_string; echo ;;
  *) echo "usage: $0 install|start [--location DIR] [--ports B,Q,T]|restart|stop|env|connection-string" >&2; exit 2 ;;
esac
