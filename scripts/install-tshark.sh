#!/usr/bin/env bash
# Install Wireshark's tshark (Debian package tshark) for the test that reads vegaslab's pcap
# packet traces (tests/test_trace_cli.py). Idempotent: does nothing when `tshark` is already on
# PATH; runs `apt-get update` only when the package is not known to apt yet. Needs root (or
# sudo) when it has to install; answers the package's "capture as non-root" question with no.
set -euo pipefail

if command -v tshark >/dev/null 2>&1; then
    echo "tshark already installed: $(command -v tshark)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-tshark.sh: need root or sudo to install tshark" >&2; exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show tshark >/dev/null 2>&1; then
    $SUDO apt-get update
fi
$SUDO apt-get install -y tshark

command -v tshark >/dev/null 2>&1 || { echo "install-tshark.sh: tshark still not on PATH" >&2; exit 1; }
echo "tshark installed: $(command -v tshark)"
