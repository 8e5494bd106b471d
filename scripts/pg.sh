#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL cluster for development, the demo and tests.
#   scripts/pg.sh start   -> prints the DATABASE_URL
#   scripts/pg.sh stop
set -euo pipefail
PORT=${WEBPILOT_PG_PORT:-55432}
ROOT=${WEBPILOT_PG_DIR:-/var/tmp/webpilot-pg-$PORT}
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "${1:-}" in
start)
  if [ ! -f "$ROOT/data/PG_VERSION" ]; then
    rm -rf "$ROOT"; mkdir -p "$ROOT"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$ROOT"
    as_pg "$BIN/initdb" -D "$ROOT/data" -U postgres --auth-local=trust --auth-host=trust \
      -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
  fi
  if ! as_pg "$BIN/pg_ctl" -D "$ROOT/data" status >/dev/null 2>&1; then
    if ! as_pg "$BIN/pg_ctl" -D "$ROOT/data" -l "$ROOT/log" -w -t 30 start \
      -o "-c listen_addresses=127.0.0.1 -p $PORT -k $ROOT -c fsync=off -c max_connections=200" >/dev/null; then
      echo "pg.sh: PostgreSQL did not start on port $PORT (in use?); log:" >&2; tail -5 "$ROOT/log" >&2; exit 1
    fi
  fi
  echo "postgres://postgres@127.0.0.1:$PORT/postgres?sslmode=disable"
  ;;
stop)
  [ -d "$ROOT/data" ] && as_pg "$BIN/pg_ctl" -D "$ROOT/data" -m fast -w stop >/dev/null 2>&1 || true
  ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
