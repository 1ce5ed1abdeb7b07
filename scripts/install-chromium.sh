#!/usr/bin/env bash
# Install Debian's Chromium (binary /usr/bin/chromium) for the report's headless-browser test
# (tests/test_report_browser.py). Idempotent: does nothing when chromium is already on PATH;
# runs `apt-get update` only when the package is not known to apt yet. Needs root (or sudo)
# when it has to install.
set -euo pipefail

find_chromium() {
    command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null || true
}

if [ -n "$(find_chromium)" ]; then
    echo "chromium already installed: $(find_chromium)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-chromium.sh: need root or sudo to install chromium" >&2; exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show chromium 2>/dev/null | grep -q '^Package: chromium$'; then
    $SUDO apt-get update
fi
$SUDO apt-get install -y --no-install-recommends chromium fonts-dejavu-core

[ -n "$(find_chromium)" ] || { echo "install-chromium.sh: chromium still not on PATH" >&2; exit 1; }
echo "chromium installed: $(find_chromium)"
