#!/usr/bin/env bash
# install-apt-tool.sh COMMAND PACKAGE: install the Debian package PACKAGE unless COMMAND is
# already on PATH (the shared body of install-ns2.sh and install-tshark.sh). Idempotent; runs
# `apt-get update` only when the package is not known to apt yet; non-interactive (a package's
# debconf questions get their defaults). Needs root (or sudo) when it has to install.
set -euo pipefail
cmd="$1" pkg="$2"

if command -v "$cmd" >/dev/null 2>&1; then
    echo "$cmd already installed: $(command -v "$cmd")"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-apt-tool.sh: need root or sudo to install $pkg" >&2; exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show "$pkg" >/dev/null 2>&1; then
    $SUDO apt-get update
fi
$SUDO apt-get install -y "$pkg"

command -v "$cmd" >/dev/null 2>&1 || { echo "install-apt-tool.sh: $cmd still not on PATH after installing $pkg" >&2; exit 1; }
echo "$cmd installed: $(command -v "$cmd")"
