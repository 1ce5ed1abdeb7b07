#!/usr/bin/env bash
# Install ns-2.35 (Debian package ns2, binary `ns`) for the vegaslab ns-2 bridge, unless `ns` is
# already on PATH (scripts/install-apt-tool.sh).
set -euo pipefail
exec bash "$(dirname "$0")/install-apt-tool.sh" ns ns2
