#!/usr/bin/env bash
# Installs what `a2a inspect`'s browser test (a2a-client/tests/inspect_browser.rs) needs: Debian's
# headless-capable Chromium and its ChromeDriver (packages chromium, chromium-driver). Run by
# tests/interop/setup.sh and by the test itself. Idempotent: nothing is done when both are there.
# Installs with apt-get as root (or through passwordless sudo); otherwise fails saying what to
# install. Set CHROMIUM and CHROMEDRIVER to use other binaries.
set -euo pipefail

chromium="${CHROMIUM:-chromium}"
driver="${CHROMEDRIVER:-chromedriver}"

installed() { command -v "$chromium" >/dev/null 2>&1 && command -v "$driver" >/dev/null 2>&1; }
if installed; then
    echo "ok: $(command -v "$chromium") and $(command -v "$driver")"
    exit 0
fi

# Several browser tests may run this at once (cargo runs them in parallel): one installs, the
# others wait for it on this lock (bounded), then find both installed.
lock="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.scratch/browser-setup.lock"
mkdir -p "$(dirname "$lock")"
exec 9>"$lock"
if ! flock -w 600 9; then
    echo "browser setup FAILED: another install held $lock for 10 minutes" >&2
    exit 1
fi
if installed; then
    echo "ok: $(command -v "$chromium") and $(command -v "$driver") (installed meanwhile)"
    exit 0
fi

as_root=()
if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        as_root=(sudo -n)
    else
        echo "browser setup FAILED: install Chromium and ChromeDriver: apt-get install chromium chromium-driver" >&2
        exit 1
    fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "browser setup FAILED: no apt-get here; install Chromium and its ChromeDriver, and set CHROMIUM and CHROMEDRIVER" >&2
    exit 1
fi
echo "installing chromium and chromium-driver with apt-get ..."
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq chromium chromium-driver >/dev/null ||
    { echo "browser setup FAILED: apt-get install chromium chromium-driver" >&2; exit 1; }
installed ||
    { echo "browser setup FAILED: chromium or chromedriver still missing after apt-get" >&2; exit 1; }
echo "ok: $(command -v "$chromium") and $(command -v "$driver") installed"
