#!/usr/bin/env bash
# make bench: starts the throwaway PostgreSQL cluster and prints the tables.
set -euo pipefail
cd "$(dirname "$0")/.."
export WEBPILOT_PG_PORT=${WEBPILOT_PG_PORT:-55434}
export WEBPILOT_PG_DIR=/var/tmp/webpilot-bench-pg
DATABASE_URL=$(bash scripts/pg.sh start)
export DATABASE_URL
trap 'bash scripts/pg.sh stop' EXIT
go run ./cmd/bench "$@"
