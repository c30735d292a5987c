#!/usr/bin/env bash
# Installs what `a2a inspect`'s browser test (a2a-client/tests/inspect_browser.rs) needs: Debian's
# headless-capable Chromium and its ChromeDriver (packages chromium, chromium-driver). Run by
# tests/interop/setup.sh and by the test itself. Idempotent: nothing is done when both are there.
# Installs with apt-get as root (or through passwordless sudo); otherwise fails saying what to
# install. Set CHROMIUM and CHROMEDRIVER to use other binaries.
set -euo pipefail

chromium="${CHROMIUM:-chromium}"
driver="${CHROMEDRIVER:-chromedriver}"

if command -v "$chromium" >/dev/null 2>&1 && command -v "$driver" >/dev/null 2>&1; then
    echo "ok: $(command -v "$chromium") and $(command -v "$driver")"
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
command -v "$chromium" >/dev/null 2>&1 && command -v "$driver" >/dev/null 2>&1 ||
    { echo "browser setup FAILED: chromium or chromedriver still missing after apt-get" >&2; exit 1; }
echo "ok: $(command -v "$chromium") and $(command -v "$driver") installed"
