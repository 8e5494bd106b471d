#!/usr/bin/env bash
# make lint: module hygiene, formatting, go vet and staticcheck (pinned in
# go.mod as a tool, so every machine runs the same version).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! go mod tidy -diff >/dev/null; then
  echo "go.mod/go.sum are not tidy (direct dependencies must be listed as such): run go mod tidy" >&2
  go mod tidy -diff >&2 || true
  exit 1
fi
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
if [ -n "$unformatted" ]; then echo "gofmt needed: $unformatted" >&2; exit 1; fi
go vet ./...
go tool staticcheck ./...
