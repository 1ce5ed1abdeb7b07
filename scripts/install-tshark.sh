#!/usr/bin/env bash
# Install Wireshark's tshark (Debian package tshark) for the test that reads vegaslab's pcap
# packet traces (tests/test_trace_cli.py), unless it is already on PATH
# (scripts/install-apt-tool.sh; the package's "capture as non-root" question gets its default, no).
set -euo pipefail
exec bash "$(dirname "$0")/install-apt-tool.sh" tshark tshark
