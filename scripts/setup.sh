#!/usr/bin/env bash
# Installs what webpilot needs on a Debian machine, idempotently:
# Chromium and PostgreSQL from apt, the Playwright driver and @playwright/test
# from the npm registry. Nothing is downloaded from anywhere else.
set -euo pipefail
cd "$(dirname "$0")/.."
PW_VERSION=1.52.0
CACHE=$PWD/.cache
DRIVER=$CACHE/playwright-driver-$PW_VERSION
RUNNER=$CACHE/pwtest
AXE_VERSION=4.10.3

need_apt=()
# The old headless shell is the browser every headless run uses (as
# @playwright/test's own default); the full browser is for headful use. Both
# come from one source package and are installed together, at one version.
[ -x /usr/lib/chromium/chromium ] && [ -x /usr/lib/chromium/chromium-headless-shell ] || need_apt+=(chromium chromium-headless-shell)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
command -v node >/dev/null || need_apt+=(nodejs)
command -v npm >/dev/null || need_apt+=(npm)
# bubblewrap: the sandbox a customer's own test code runs in.
command -v bwrap >/dev/null || need_apt+=(bubblewrap)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]} from apt"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

command -v node >/dev/null || { echo "setup: node did not install" >&2; exit 1; }

if [ ! -f "$DRIVER/package/cli.js" ] || [ "$("$DRIVER/node" "$DRIVER/package/cli.js" --version 2>/dev/null)" != "Version $PW_VERSION" ]; then
  echo "setup: laying out the Playwright $PW_VERSION driver from the npm registry"
  rm -rf "$DRIVER"; mkdir -p "$DRIVER"
  (cd "$DRIVER" && npm pack "playwright-core@$PW_VERSION" --silent >/dev/null && tar xzf "playwright-core-$PW_VERSION.tgz" && rm "playwright-core-$PW_VERSION.tgz")
  ln -sf "$(command -v node)" "$DRIVER/node"
fi
got=$("$DRIVER/node" "$DRIVER/package/cli.js" --version)
[ "$got" = "Version $PW_VERSION" ] || { echo "setup: driver reports '$got', want $PW_VERSION" >&2; exit 1; }

if [ ! -f "$RUNNER/node_modules/@playwright/test/package.json" ]; then
  echo "setup: installing @playwright/test@$PW_VERSION for running generated specs"
  mkdir -p "$RUNNER"
  (cd "$RUNNER" && [ -f package.json ] || echo '{"name":"webpilot-spec-runner","private":true}' > package.json)
  (cd "$RUNNER" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-audit --no-fund "@playwright/test@$PW_VERSION" >/dev/null)
fi

# axe-core is injected by the explorer's accessibility detector (the worker
# reads its file) and by reproduction specs of accessibility findings.
if [ ! -f "$RUNNER/node_modules/axe-core/package.json" ] || ! grep -q "\"version\": \"$AXE_VERSION\"" "$RUNNER/node_modules/axe-core/package.json"; then
  echo "setup: installing axe-core@$AXE_VERSION for accessibility checks"
  (cd "$RUNNER" && npm install --silent --no-audit --no-fund "axe-core@$AXE_VERSION" >/dev/null)
fi

# make bench measures webpilot side by side with Playwright MCP (the peer),
# driving the same Chromium: `setup.sh peer` installs it.
# It also installs Debian's ffmpeg, which the reference runs of projects that
# record videos need (the runner cannot download its own).
if [ "${1:-}" = peer ]; then
  command -v ffmpeg >/dev/null || { SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo; $SUDO apt-get update -qq;
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq ffmpeg >/dev/null; }
  PEER=$CACHE/pwmcp PEER_VERSION=0.0.83
  if [ ! -f "$PEER/node_modules/@playwright/mcp/package.json" ] || ! grep -q "\"version\": \"$PEER_VERSION\"" "$PEER/node_modules/@playwright/mcp/package.json"; then
    echo "setup: installing @playwright/mcp@$PEER_VERSION for the side-by-side bench"
    mkdir -p "$PEER"
    (cd "$PEER" && [ -f package.json ] || echo '{"name":"webpilot-bench-peer","private":true}' > package.json)
    (cd "$PEER" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-audit --no-fund "@playwright/mcp@$PEER_VERSION" >/dev/null)
  fi
fi

go mod download
echo "setup: ok (chromium $(/usr/lib/chromium/chromium --version 2>/dev/null | awk '{print $2}') and its headless shell, playwright driver $PW_VERSION, $(ls -d /usr/lib/postgresql/*/ | xargs -n1 basename | sed 's/^/postgres /'))"
