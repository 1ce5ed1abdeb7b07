"""`vegaslab run --trace`: the trace lands in the output directory,
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
    assert meta["trace"]["file"] == "trace.tr" and meta["trace"]["lines"] == len(lines)   # relative to the run directory
    # Only the chosen direction: its two nodes' numbers on every line.
    assert len({(ln.split()[2], ln.split()[3]) for ln in lines}) == 1
    assert not list(tmp_path.glob(".*trace*"))     # the staged file moved in, nothing left beside


def test_a_run_without_trace_writes_no_trace(tmp_path):
    out = tmp_path / "out"
    assert cli.main(["run", "va-reroute", "--no-plots", "-q", "--out", str(out), "--set", "run.duration=2s"]) == 0
    assert not (out / "trace.tr").exists() and "trace" not in json.loads((out / "meta.json").read_text())


needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None and os.environ.get("VEGASLAB_REQUIRE_TSHARK") != "1",
                                  reason="tshark not installed (make test installs it)")


def _tshark_fields(pcap, *fields: str) -> list[list[str]]:
    """One row per frame: the fields' values ('' when absent), with TCP analysis on."""
    p = subprocess.run(["tshark", "-r", str(pcap), "-o", "tcp.analyze_sequence_numbers:TRUE", "-T", "fields",
                        "-E", "separator=\t", *[a for f in fields for a in ("-e", f)]],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return [line.split("\t") for line in p.stdout.splitlines()]


@needs_tshark
def test_a_pcap_of_a_link_direction_holds_what_its_first_node_sends_and_receives(tmp_path):
    out = tmp_path / "out"
    assert cli.main(["run", "va-reroute", "--no-plots", "-q", "--out", str(out), "--trace", "R1->R2",
                     "--trace-format", "pcap", "--set", "run.duration=5s"]) == 0
    lengths = [int(row[0]) for row in _tshark_fields(out / "trace.pcap", "tcp.len")]
    assert lengths and max(lengths) > 0 and min(lengths) == 0    # data segments and their ACKs
    # One frame per packet R1 offers to R1->R2 and per packet reaching R1 over R2->R1: the
    # ns-2 trace's `+` lines of the one and `r` lines of the other, same run.
    assert cli.main(["run", "va-reroute", "--no-plots", "-q", "--out", str(tmp_path / "text"), "--trace", "R1->R2",
                     "--trace", "R2->R1", "--set", "run.duration=5s"]) == 0
    lines = [ln.split() for ln in (tmp_path / "text" / "trace.tr").read_text().splitlines()]
    forward = {(ln[2], ln[3]) for ln in lines if ln[0] == "+" and ln[4] == "tcp"}
    assert len(forward) == 1
    (r1, r2), = forward
    captured = [ln for ln in lines if (ln[0] == "+" and (ln[2], ln[3]) == (r1, r2)) or (ln[0] == "r" and (ln[2], ln[3]) == (r2, r1))]
    assert len(lengths) == len(captured)


# A flow over a 1 Mbit/s bottleneck; its queue's limit decides whether it loses packets.
DUMBBELL = """
[run]
duration = "5s"
[[links]]
endpoints = ["S", "R1"]
bandwidth = "10Mbps"
delay = "1ms"
[[links]]
endpoints = ["R1", "R2"]
bandwidth = "1Mbps"
delay = "20ms"
queue = {{ kind = "droptail", limit = {limit} }}
[[links]]
endpoints = ["R2", "D"]
bandwidth = "10Mbps"
delay = "1ms"
[[flows]]
name = "f1"
from = "S"
to = "D"
cc = "{cc}"
tcp = {{ stack = "{stack}" }}
"""

# ns-2's agents (Vegas's sends no SYN and 1000 bytes with its headers) and Linux's stack (52-byte
# headers with the timestamp option, SACK blocks on its ACKs).
ALGORITHMS = [("reno", "ns2"), ("newreno", "ns2"), ("vegas", "ns2"), ("cubic", "ns2"), ("cubic", "linux")]

ANALYSIS = ("tcp.flags.syn", "tcp.len", "tcp.analysis.flags", "tcp.analysis.lost_segment", "tcp.analysis.retransmission",
            "tcp.analysis.ack_rtt")


def _captured_at_the_sender(tmp_path, cc: str, stack: str, limit: int):
    """The flow's pcap (a capture at its sender) analysed by tshark: per field, the frames where
    it is present and not 0; the frames; and the flow's row of the flows table."""
    import pandas as pd

    scenario = tmp_path / f"{cc}.toml"
    scenario.write_text(DUMBBELL.format(cc=cc, stack=stack, limit=limit))
    out = tmp_path / cc
    assert cli.main(["run", str(scenario), "--no-plots", "-q", "--out", str(out), "--trace", "f1",
                     "--trace-format", "pcap"]) == 0
    rows = _tshark_fields(out / "trace.pcap", *ANALYSIS)
    frames = {field: [i for i, row in enumerate(rows) if row[k] not in ("", "0")] for k, field in enumerate(ANALYSIS)}
    return frames, len(rows), pd.read_parquet(out / "flows.parquet").iloc[0]


@needs_tshark
@pytest.mark.parametrize("cc,stack", ALGORITHMS)
def test_a_lossless_capture_has_no_analysis_flags_and_measures_the_rtt(tmp_path, cc, stack):
    frames, n, flow = _captured_at_the_sender(tmp_path, cc, stack, limit=200)
    acks = sorted(set(range(1, n)) - set(frames["tcp.len"]))     # frame 0: the SYN
    assert flow["dropped_pkts"] == 0 and flow["retransmitted_pkts"] == 0
    # The connection's first packet is its SYN, answered by one SYN-ACK.
    assert frames["tcp.flags.syn"][0] == 0 and len(frames["tcp.flags.syn"]) == 2
    assert frames["tcp.analysis.lost_segment"] == [] and frames["tcp.analysis.retransmission"] == []
    assert frames["tcp.analysis.flags"] == []
    # Data and ACKs in one capture: every ACK gives an RTT sample.
    assert len(acks) > 100 and frames["tcp.analysis.ack_rtt"] == acks


@needs_tshark
def test_a_window_beyond_64_kb_is_not_read_as_a_full_receive_window(tmp_path):
    # 20 Mbit/s over 84 ms of RTT: some 200 packets (190 KB) in flight, beyond an unscaled
    # 65535-byte window; the SYN and SYN-ACK announce a window scale, so none fills it.
    text = (DUMBBELL.format(cc="reno", stack="ns2", limit=2000).replace('"1Mbps"', '"20Mbps"')
            .replace('"10Mbps"', '"100Mbps"').replace('delay = "20ms"', 'delay = "40ms"')
            .replace('duration = "5s"', 'duration = "3s"').replace('stack = "ns2"', 'stack = "ns2", window = 1000'))
    scenario = tmp_path / "wide.toml"
    scenario.write_text(text)
    out = tmp_path / "wide"
    assert cli.main(["run", str(scenario), "--no-plots", "-q", "--out", str(out), "--trace", "f1",
                     "--trace-format", "pcap"]) == 0
    rows = _tshark_fields(out / "trace.pcap", "tcp.analysis.bytes_in_flight", "tcp.analysis.flags",
                          "tcp.analysis.window_full")
    assert max(int(r[0]) for r in rows if r[0]) > 100_000
    assert [r for r in rows if r[1] or r[2]] == []


@needs_tshark
@pytest.mark.parametrize("cc,stack", ALGORITHMS)
def test_a_lossy_capture_flags_exactly_the_retransmissions_the_flows_table_counts(tmp_path, cc, stack):
    frames, _, flow = _captured_at_the_sender(tmp_path, cc, stack, limit=5)
    assert flow["dropped_pkts"] > 0 and flow["retransmitted_pkts"] > 0
    assert len(frames["tcp.analysis.retransmission"]) == flow["retransmitted_pkts"]
    assert frames["tcp.analysis.lost_segment"] == []   # the sender's capture sees every packet it sends


# ---------------------------------------------------------------- where a trace may be written

TINY = """
[run]
duration = "2s"
[[links]]
endpoints = ["S", "D"]
bandwidth = "1Mbps"
delay = "10ms"
[[flows]]
name = "f1"
from = "S"
to = "D"
cc = "reno"
"""


def _scenario(tmp_path, trace: str) -> str:
    path = tmp_path / "shared.toml"
    path.write_text(TINY + "\n[trace]\n" + trace + "\n")
    return str(path)


@pytest.mark.parametrize("name", ["ABSOLUTE", "../victim.tr", "sub/victim.tr", ".hidden.tr"])
def test_a_scenario_cannot_name_a_trace_file_outside_the_output_directory(tmp_path, capsys, name):
    victim = tmp_path / "victim.tr"
    victim.write_text("keep me")
    absolute = tmp_path / "elsewhere" / "victim.tr"  # this test's own: a shared path may exist already
    absolute.parent.mkdir()
    name = str(absolute) if name == "ABSOLUTE" else name
    scenario = _scenario(tmp_path, f"file = {json.dumps(name)}")
    code = cli.main(["run", scenario, "--no-plots", "-q", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "trace.file" in err and "plain file name" in err, err
    assert victim.read_text() == "keep me" and not (tmp_path / "out").exists()
    assert not absolute.exists()


def test_a_scenarios_own_trace_lands_in_the_output_directory_under_its_name(tmp_path):
    scenario = _scenario(tmp_path, 'file = "mine.tr"')
    out = tmp_path / "out"
    assert cli.main(["run", scenario, "--no-plots", "-q", "--out", str(out)]) == 0
    assert (out / "mine.tr").read_text().startswith("+ ")
    assert json.loads((out / "meta.json").read_text())["trace"]["file"] == "mine.tr"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "shared.toml"]   # nothing staged left beside


def test_run_replaces_an_earlier_run_directory_holding_its_trace(tmp_path):
    scenario = _scenario(tmp_path, 'format = "pcap"')
    out = tmp_path / "out"
    for _ in range(2):
        assert cli.main(["run", scenario, "--no-plots", "-q", "--out", str(out)]) == 0
    assert (out / "trace.pcap").stat().st_size > 24


def test_the_api_keeps_a_trace_in_a_private_directory_until_the_results_are_saved(tmp_path):
    import gc

    import vegaslab
    from vegaslab.results import Results

    res = vegaslab.run(TINY + "\n[trace]\n")
    staged = res.trace_path
    assert staged is not None and staged.name == "trace.tr" and staged.read_text().startswith("+ ")
    res.to_dir(tmp_path / "saved")
    assert (tmp_path / "saved" / "trace.tr").read_bytes() == staged.read_bytes()
    assert Results.from_dir(tmp_path / "saved").trace_path == tmp_path / "saved" / "trace.tr"
    del res
    gc.collect()
    assert not staged.parent.exists()       # the private directory went with the results


def test_the_api_never_replaces_a_file_in_the_trace_dir_it_is_given(tmp_path):
    import vegaslab

    (tmp_path / "trace.tr").write_text("an older trace")
    os.symlink(tmp_path / "victim", tmp_path / "link.tr")
    for name in ("trace.tr", "link.tr"):
        with pytest.raises(vegaslab.ScenarioError, match=r"trace\.file.*already exists") as info:
            vegaslab.run(TINY + f'\n[trace]\nfile = "{name}"\n', trace_dir=tmp_path)
        assert info.value.field == "trace.file" and str(tmp_path / name) in str(info.value)
    assert (tmp_path / "trace.tr").read_text() == "an older trace" and not (tmp_path / "victim").exists()


def test_a_trace_dir_that_does_not_exist_is_an_error_naming_the_path(tmp_path):
    import vegaslab

    with pytest.raises(vegaslab.ScenarioError, match="cannot create the trace") as info:
        vegaslab.run(TINY + "\n[trace]\n", trace_dir=tmp_path / "missing")
    assert str(tmp_path / "missing" / "trace.tr") in str(info.value)


@pytest.fixture
def full_disk(small_tmpfs):
    """Room for a short run's tables, not for its trace."""
    return small_tmpfs("256k")


def test_a_trace_that_does_not_fit_on_the_disk_fails_the_run_naming_the_path_and_the_tables_stay(full_disk, capsys):
    out = full_disk / "out"
    code = cli.main(["run", "va-reroute", "--no-plots", "-q", "--out", str(out), "--trace", "all",
                     "--set", "run.duration=20s"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "No space left on device" in err and f"{out / 'trace.tr'}:" in err and "tables were written" in err, err
    assert str(out / "trace.tr") in json.loads((out / "meta.json").read_text())["trace"]["error"]
    assert (out / "flows.parquet").exists() and not (out / "trace.tr").exists()
    assert sorted(p.name for p in full_disk.iterdir()) == ["out"]   # no staged or partial trace left


def test_the_api_raises_trace_error_with_the_results_when_the_trace_cannot_be_written(full_disk):
    import vegaslab

    with pytest.raises(vegaslab.TraceError, match="No space left on device") as info:
        vegaslab.run("va-reroute", overrides=["run.duration=20s", "trace.flows=[]"], trace_dir=full_disk)
    assert len(info.value.results.flows) > 0 and list(full_disk.iterdir()) == []
