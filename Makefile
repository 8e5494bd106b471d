# webpilot — see README.md
SHELL := /bin/bash
export PLAYWRIGHT_DRIVER_PATH := $(CURDIR)/.cache/playwright-driver-1.52.0
export WEBPILOT_SPEC_RUNNER := $(CURDIR)/.cache/pwtest

.PHONY: setup demo test test-long lint bench build pg-start pg-stop

setup:
	@bash scripts/setup.sh

build:
	@mkdir -p bin && go build -o bin/ ./cmd/...

demo: setup build
	@bash scripts/demo.sh

test: setup
	@bash scripts/test.sh

# Every test, the long tier too (see docs/operations.md).
test-long: setup
	@bash scripts/setup.sh peer
	@WEBPILOT_TEST_LONG=1 bash scripts/test.sh

lint:
	@bash scripts/lint.sh

bench: build
	@bash scripts/setup.sh peer
	@bash scripts/bench.sh

pg-start:
	@bash scripts/pg.sh start

pg-stop:
	@bash scripts/pg.sh stop
