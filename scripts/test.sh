#!/usr/bin/env bash
# make test: go vet, the deployment files (scripts/check-deploy.sh), then the
# whole test suite against a private Azurite. Chromium is installed with
# apt-get if missing, and REVERSI_REQUIRE_BROWSER=1 makes the browser tests
# of browse/ fail rather than skip without it.
#
# Azurite (pinned in scripts/azurite.sh) is installed into .tools/azurite
# if missing, started in memory on free loopback ports with its state in a
# directory of this run's own (so a developer's running emulator is left
# alone), and stopped however the tests end. The exit code is go test's.
#
#   TEST_PKGS   packages to test (default ./...)
#   TEST_FLAGS  extra go test flags (default none), e.g. "-run Conformance -v"
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# The commands' CPU profiles (cmd/*/default.pgo) change no behaviour, and
# builds that used them (e2e's go build and go run) would compile every
# dependency a second time beside go test's own build: minutes more on a
# new machine. The tests build without them.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-pgo=off"

echo "== go vet ./..."
go vet ./...
# packed and dedup have assembly for amd64; the build without it must
# stay sound (dedup's TestClimb runs its Go twin beside it).
echo "== go vet ./packed ./dedup without assembly (-tags purego, GOARCH=arm64)"
go vet -tags purego ./packed ./dedup
GOARCH=arm64 go vet ./packed ./dedup
# solve and board have vector code for GOEXPERIMENT=simd on x86-64-v3;
# the scalar code serves every other build.
echo "== go vet ./solve ./board without the vector code"
GOEXPERIMENT= GOAMD64=v1 go vet ./solve ./board
GOARCH=arm64 go vet ./solve ./board

echo "== deployment files (scripts/check-deploy.sh)"
"$ROOT/scripts/check-deploy.sh"

echo "== chromium, for the browser tests of browse/ (scripts/ensure-apt.sh)"
"$ROOT/scripts/ensure-apt.sh" chromium chromium
export REVERSI_REQUIRE_BROWSER=1

"$ROOT/scripts/azurite.sh" install

AZURITE_STATE_DIR="$(mktemp -d "${TMPDIR:-/tmp}/reversi-azurite.XXXXXX")"
export AZURITE_STATE_DIR
cleanup() {
  "$ROOT/scripts/azurite.sh" stop || true
  rm -rf "$AZURITE_STATE_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== starting Azurite"
exports="$("$ROOT/scripts/azurite.sh" start)" # fails the script if Azurite does not come up
eval "$exports"
export REVERSI_REQUIRE_AZURITE=1

echo "== go test ${TEST_PKGS:-./...}"
rc=0
# shellcheck disable=SC2086 # TEST_FLAGS and TEST_PKGS are word lists
go test -count=1 -timeout 20m ${TEST_FLAGS:-} ${TEST_PKGS:-./...} || rc=$?
# The readers and writers that lend pooled buffers, again under the race
# detector: a buffer given back while a goroutine still decodes into it
# reads right most of the time, and only the detector sees it every time.
if [[ $rc -eq 0 && -z "${TEST_FLAGS:-}${TEST_PKGS:-}" ]]; then
  echo "== go test -race (pooled buffers)"
  go test -count=1 -race -run 'Reuse|Ahead' ./packed || rc=$?
fi
if [[ $rc -ne 0 ]]; then
  echo "== go test failed (exit $rc); last Azurite log lines:" >&2
  tail -n 20 "$AZURITE_STATE_DIR/azurite.log" >&2 || true
fi
exit "$rc"
