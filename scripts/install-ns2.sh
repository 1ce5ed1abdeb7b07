#!/usr/bin/env bash
# Install ns-2.35 (Debian package ns2, binary `ns`) for the vegaslab ns-2 bridge.
# Idempotent: does nothing when `ns` is already on PATH; runs `apt-get update` only when the
# package is not known to apt yet. Needs root (or sudo) when it has to install.
set -euo pipefail

if command -v ns >/dev/null 2>&1; then
    echo "ns already installed: $(command -v ns)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-ns2.sh: need root or sudo to install ns2" >&2; exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show ns2 >/dev/null 2>&1; then
    $SUDO apt-get update
fi
$SUDO apt-get install -y ns2

command -v ns >/dev/null 2>&1 || { echo "install-ns2.sh: ns still not on PATH" >&2; exit 1; }
echo "ns installed: $(command -v ns)"
