# syntax=docker/dockerfile:1
# Two slim images from one build: `--target dispatcher` (static binaries on
# distroless, no shell, no browser, no model key) and `--target worker`
# (Debian's Chromium, the Playwright 1.52.0 driver and @playwright/test from
# the npm registry, tini as PID 1 to reap Chromium's children, bubblewrap
# for the sandbox customers' own test code runs in). Both run as a non-root
# user and say whether they serve through HEALTHCHECK.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/dispatcher ./cmd/worker ./cmd/webpilot

FROM gcr.io/distroless/static-debian12:nonroot AS dispatcher
COPY --from=build /out/dispatcher /out/webpilot /app/
ENV WEBPILOT_ADDR=0.0.0.0:8080 WEBPILOT_DATA_DIR=/data
USER nonroot:nonroot
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD ["/app/dispatcher", "healthcheck"]
ENTRYPOINT ["/app/dispatcher"]

FROM debian:bookworm-slim AS worker
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium chromium-headless-shell nodejs npm ca-certificates tini bubblewrap \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/pw
RUN npm pack playwright-core@1.52.0 --silent \
 && tar xzf playwright-core-1.52.0.tgz && rm playwright-core-1.52.0.tgz \
 && ln -s "$(command -v node)" node
WORKDIR /opt/pwtest
RUN npm install --no-audit --no-fund --silent @playwright/test@1.52.0 axe-core@4.10.3
RUN useradd --system --uid 10001 --home-dir /home/webpilot --create-home webpilot
COPY --from=build /out/worker /app/worker
ENV PLAYWRIGHT_DRIVER_PATH=/opt/pw WEBPILOT_CHROMIUM=/usr/lib/chromium/chromium-headless-shell WEBPILOT_SPEC_RUNNER=/opt/pwtest \
    WEBPILOT_METRICS_ADDR=0.0.0.0:9090 WEBPILOT_DATA_DIR=/home/webpilot/data
USER 10001:10001
WORKDIR /home/webpilot
EXPOSE 9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["/app/worker", "healthcheck"]
ENTRYPOINT ["/usr/bin/tini", "--", "/app/worker"]
