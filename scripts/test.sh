#!/usr/bin/env bash
# make test: starts a throwaway PostgreSQL cluster, then vets and runs every
# test against real Postgres, embedded NATS and Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
export WEBPILOT_PG_PORT=${WEBPILOT_PG_PORT:-55432}
export WEBPILOT_PG_DIR=${WEBPILOT_PG_DIR:-/var/tmp/webpilot-test-pg}
export PLAYWRIGHT_DRIVER_PATH=${PLAYWRIGHT_DRIVER_PATH:-$PWD/.cache/playwright-driver-1.52.0}
export WEBPILOT_SPEC_RUNNER=${WEBPILOT_SPEC_RUNNER:-$PWD/.cache/pwtest}
# Reuse a cluster already answering on the port (a developer's); otherwise
# start a throwaway one and stop it afterwards.
if pg_isready -q -h 127.0.0.1 -p "$WEBPILOT_PG_PORT" 2>/dev/null; then
  DATABASE_URL="postgres://postgres@127.0.0.1:$WEBPILOT_PG_PORT/postgres?sslmode=disable"
else
  DATABASE_URL=$(bash scripts/pg.sh start)
  trap 'bash scripts/pg.sh stop' EXIT
fi
export DATABASE_URL
echo "test: postgres at $DATABASE_URL"
bash scripts/lint.sh
# gotestsum (pinned in go.mod as a tool) runs go test and keeps its JSON,
# so the slowest tests can be printed whatever the outcome.
# WEBPILOT_TEST_REPORT keeps the JSON (every test's output and time).
report=${WEBPILOT_TEST_REPORT:-$(mktemp)}
status=0
# The packages whose tests take minutes go first: go test starts packages
# in the order given, and the two cores are busy throughout only if the
# short packages are what is left at the end (in alphabetical order the
# suite package's 4-minute test ran alone for the last few minutes).
pkgs=("$@")
if [ $# -eq 0 ]; then
  long=(./e2e ./e2e/drills ./internal/suite ./internal/explore ./internal/orchestrator ./internal/browser ./internal/mcpserver)
  mod=$(go list -m)
  pkgs=("${long[@]}")
  while read -r p; do
    p=".${p#"$mod"}"
    [[ " ${long[*]} " == *" $p "* ]] || pkgs+=("$p")
  done < <(go list ./...)
fi
# The heavy tests (a whole stack, a sandboxed run, a drill) take one of
# WEBPILOT_TEST_SLOTS machine-wide slots (internal/testslot; the number of
# CPUs by default), whatever package they are in: three packages run at
# once, but never more heavy tests than cores, so that a slow or busy
# machine makes the run longer, not the tests' own timeouts decide their
# verdicts. A package's timeout is for a hung test, not for the time its
# tests wait for a slot.
# The race and fuzz passes below build every package again, instrumented:
# on a machine whose build cache is cold that is minutes of compiling. It
# is done beside the pass above, at a lower priority, so that it takes the
# CPU the tests leave idle (a test waiting out its timeouts) rather than
# adding to the run.
race=(./api/... ./internal/console ./internal/outbox ./internal/store ./internal/reconcile ./internal/config ./internal/metrics ./internal/jobs ./internal/netguard ./internal/scenario ./internal/llm ./internal/webhook)
warm=
if [ $# -eq 0 ]; then
  ( nice -n 10 go test -race -short -count=1 -run '^$' "${race[@]}" && nice -n 10 go test -run='^$' -fuzz=FuzzSubmitJob -fuzztime=1x ./api/ ) >/dev/null 2>&1 &
  warm=$!
fi
go tool gotestsum --format standard-quiet --jsonfile "$report" -- -count=1 -timeout 85m -p 3 "${pkgs[@]}" || status=$?
echo "test: the 15 slowest tests"
go tool gotestsum tool slowest --jsonfile "$report" --num 15 || true
[ -n "${WEBPILOT_TEST_REPORT:-}" ] || rm -f "$report"
if [ "$status" -ne 0 ]; then
  [ -z "$warm" ] || wait "$warm" || true
  exit "$status"
fi
if [ $# -eq 0 ]; then
  # The race detector where its cost is affordable: the packages whose
  # goroutines share state (the API, the outbox sender, the store's pool,
  # the reconciler) and the pure ones. -short leaves out only what runs
  # other processes (the clustered queue's nats-servers), which the pass
  # above ran.
  wait "$warm" || true # its builds only: the pass below reports
  go test -race -short -count=1 -timeout 10m -p 2 "${race[@]}"
  # Brief fuzzing of the API's bad-input paths: any 5xx is a failure.
  # Bounded by executions, not seconds: a duration's deadline can race a
  # worker still in its call on a loaded host, and Go before 1.27 reports
  # that as a failure with no input behind it (go.dev/issue/75804). The
  # counts are a few seconds' work each on a quiet 2-core machine.
  go test -run='^$' -fuzz=FuzzSubmitJob -fuzztime=3000x ./api/
  go test -run='^$' -fuzz=FuzzAdminAPI -fuzztime=3000x ./api/
  # Suite runs and repairs, whatever their bodies: no 5xx.
  go test -run='^$' -fuzz=FuzzSuites -fuzztime=4000x ./api/
  go test -run='^$' -fuzz=FuzzQueryAndPath -fuzztime=1500x ./api/
fi
