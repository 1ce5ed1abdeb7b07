"""`vegaslab run --trace` (issue 14, "Packet traces"): the trace lands in the output directory,
in ns-2's line format or as a pcap Wireshark's tshark reads (skipped without tshark, unless
VEGASLAB_REQUIRE_TSHARK=1, which `make test` sets after installing it); a run without --trace
writes none."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from vegaslab import cli


@pytest.fixture(autouse=True)
def core():
    return pytest.importorskip("vegaslab._core")


def test_run_trace_writes_ns2_lines_of_the_chosen_link_into_the_output_directory(tmp_path):
    out = tmp_path / "out"
    assert cli.main(["run", "va-reroute", "--no-plots", "-q", "--out", str(out), "--trace", "R1->R2",
                     "--set", "run.duration=5s"]) == 0
    lines = (out / "trace.tr").read_text().splitlines()
    assert lines and all(ln.split()[0] in "+-rd" for ln in lines)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["trace"]["file"] == str(out / "trace.tr") and meta["trace"]["lines"] == len(lines)
    # Only the chosen direction: its two nodes' numbers on every line.
    assert len({(ln.split()[2], ln.split()[3]) for ln in lines}) == 1
    assert not list(tmp_path.glob(".*trace*"))     # the staged file moved in, nothing left beside


def test_a_run_without_trace_writes_no_trace(tmp_path):
    out = tmp_path / "out"
    assert cli.main(["run", "va-reroute", "--no-plots", "-q", "--out", str(out), "--set", "run.duration=2s"]) == 0
    assert not (out / "trace.tr").exists() and "trace" not in json.loads((out / "meta.json").read_text())


@pytest.mark.skipif(shutil.which("tshark") is None and os.environ.get("VEGASLAB_REQUIRE_TSHARK") != "1",
                    reason="tshark not installed (make test installs it)")
def test_a_pcap_trace_reads_in_tshark_as_tcp_between_the_flow_ends(tmp_path):
    out = tmp_path / "out"
    assert cli.main(["run", "va-reroute", "--no-plots", "-q", "--out", str(out), "--trace", "R1->R2",
                     "--trace-format", "pcap", "--set", "run.duration=5s"]) == 0
    p = subprocess.run(["tshark", "-r", str(out / "trace.pcap"), "-T", "fields", "-e", "tcp.len"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    lengths = [int(x) for x in p.stdout.split()]
    assert lengths and max(lengths) > 0          # data segments with payload, and their ACKs
    # One frame per packet received over the link: the ns-2 trace's `r` lines of the same run.
    assert cli.main(["run", "va-reroute", "--no-plots", "-q", "--out", str(tmp_path / "text"), "--trace", "R1->R2",
                     "--set", "run.duration=5s"]) == 0
    received = [ln for ln in (tmp_path / "text" / "trace.tr").read_text().splitlines() if ln.startswith("r ")]
    assert len(lengths) == len(received)
