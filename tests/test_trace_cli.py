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
