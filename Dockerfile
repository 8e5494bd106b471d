# Image for docker-compose.yml: Go binaries, Debian Chromium, and the
# Playwright driver laid out from the npm registry (no browser download).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN mkdir -p /app/bin && go build -o /app/bin/ ./cmd/...

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends chromium nodejs npm ca-certificates && rm -rf /var/lib/apt/lists/*
RUN mkdir -p /opt/pw && cd /opt/pw && npm pack playwright-core@1.52.0 --silent && tar xzf playwright-core-1.52.0.tgz && rm *.tgz && ln -s "$(command -v node)" node
ENV PLAYWRIGHT_DRIVER_PATH=/opt/pw WEBPILOT_CHROMIUM=/usr/lib/chromium/chromium
COPY --from=build /app/bin /app/bin
