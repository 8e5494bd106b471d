#!/usr/bin/env bash
# make demo: the whole path on one machine. Starts Postgres, the demo app,
# the dispatcher (with embedded NATS JetStream) and a worker; creates a
# tenant, submits the example scenario through the CLI, follows it, prints
# the generated spec and its cost, runs the spec under @playwright/test, and
# ends with the job's page in the web console (checked: its steps, their
# pictures and the spec are there). Run from a terminal, the stack stays up
# until Enter so the page can be opened; otherwise everything shuts down.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export WEBPILOT_PG_PORT=${WEBPILOT_PG_PORT:-55433}
export WEBPILOT_PG_DIR=/var/tmp/webpilot-demo-pg
export WEBPILOT_DATA_DIR=$ROOT/.data/demo
export WEBPILOT_ADDR=127.0.0.1:18080
export WEBPILOT_API=http://$WEBPILOT_ADDR
export WEBPILOT_NATS_PORT=14222
export WEBPILOT_ALLOW_HOSTS=127.0.0.1
DEMO_ADDR=127.0.0.1:8090
LOGS=$WEBPILOT_DATA_DIR/logs
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  bash scripts/pg.sh stop
}
trap cleanup EXIT

rm -rf "$WEBPILOT_DATA_DIR"; mkdir -p "$LOGS"
echo "== starting PostgreSQL"
PGURL=$(bash scripts/pg.sh start)
psql -q "$PGURL" -c "DROP DATABASE IF EXISTS webpilot_demo" -c "CREATE DATABASE webpilot_demo" >/dev/null
export DATABASE_URL=${PGURL/\/postgres\?/\/webpilot_demo?}

echo "== starting the demo app, the dispatcher (embedded NATS) and a worker"
bin/demoapp -addr $DEMO_ADDR >"$LOGS/demoapp.log" 2>&1 & pids+=($!)
bin/dispatcher >"$LOGS/dispatcher.log" 2>&1 & pids+=($!)
for _ in $(seq 100); do curl -sf "$WEBPILOT_API/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "$WEBPILOT_API/healthz" >/dev/null || { cat "$LOGS/dispatcher.log"; exit 1; }
bin/worker >"$LOGS/worker.log" 2>&1 & pids+=($!)

if [ -n "${OPENAI_API_KEY:-}" ]; then echo "   agent tier: live (${WEBPILOT_MODEL:-gpt-4o-mini})"; else echo "   agent tier: off (no OPENAI_API_KEY); deterministic steps only"; fi

echo "== creating a tenant and granting 10 credits"
out=$(bin/webpilot tenant create demo)
export WEBPILOT_API_KEY=$(awk '/^api_key:/ {print $2}' <<<"$out")
tenant=$(awk '/^tenant_id:/ {print $2}' <<<"$out")
bin/webpilot credits grant "$tenant" 10 >/dev/null

echo "== submitting examples/demo-scenario.json"
sub=$(bin/webpilot submit examples/demo-scenario.json --base "http://$DEMO_ADDR/login")
echo "$sub"
job=$(awk '/^submitted job/ {print $3}' <<<"$sub")
bin/webpilot watch "$job" || { echo "--- worker log"; tail -30 "$LOGS/worker.log"; exit 1; }

SPEC=$WEBPILOT_DATA_DIR/demo.spec.ts
bin/webpilot script "$job" >"$SPEC"
echo
echo "== generated test ($SPEC)"
cat "$SPEC"
echo
echo "== cost"
bin/webpilot credits show
echo
echo "== running the generated test under @playwright/test"
RUN=$ROOT/.cache/pwtest/runs/demo; rm -rf "$RUN"; mkdir -p "$RUN"
cp "$SPEC" "$RUN/demo.spec.ts"
cat >"$RUN/playwright.config.ts" <<CFG
import { defineConfig } from '@playwright/test';
export default defineConfig({ testDir: '.', outputDir: './test-results', reporter: 'list', retries: 0,
  use: { launchOptions: { executablePath: '/usr/lib/chromium/chromium-headless-shell', args: ['--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-dev-shm-usage'] } } });
CFG
(cd "$RUN" && PASSWORD='s3cret-pass' node "$ROOT/.cache/pwtest/node_modules/@playwright/test/cli.js" test --config playwright.config.ts)

echo
echo "== the job in the web console"
CONSOLE=$WEBPILOT_API/console/jobs/$job
jar=$(mktemp)
curl -sf -o /dev/null -c "$jar" -H "Origin: $WEBPILOT_API" --data-urlencode "api_key=$WEBPILOT_API_KEY" "$WEBPILOT_API/console/login"
page=$(curl -sf -b "$jar" "$CONSOLE")
rm -f "$jar"
steps=$(grep -o 'id="step-[0-9]*"' <<<"$page" | sort -u | wc -l)
shots=$(grep -o "/console/jobs/$job/artifacts/step-[^\"]*" <<<"$page" | sort -u | wc -l)
grep -q 'id="spec"' <<<"$page" || { echo "the console's job page shows no spec"; exit 1; }
[ "$steps" -gt 0 ] && [ "$shots" -eq "$steps" ] || { echo "the console's job page shows $steps steps and $shots step pictures"; exit 1; }
echo "   the page shows $steps steps, a picture of each and the spec"
echo "== demo finished"
echo "console: $CONSOLE"
echo "   (sign in with the demo tenant's API key: $WEBPILOT_API_KEY)"
if [ -t 0 ] && [ -t 1 ]; then
  read -r -p "the stack stays up for the console; press Enter to stop it " _ || true
fi
