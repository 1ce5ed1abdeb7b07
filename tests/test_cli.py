"""The ``vegaslab`` command line. Tests whose name starts with ``test_core_`` run simulations
and need the compiled core; the others check arguments, help and error handling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import vegaslab
from vegaslab import cli
from scenario_text import TWO_HOP

SUBCOMMANDS = ("run", "reproduce", "bench")

TINY = """
[meta]
id = "tiny"

[run]
duration = "3s"
""" + TWO_HOP + """
[[variant]]
name = "newreno"
set = { "flows[0].cc" = "newreno" }
published = { "f1.retransmitted_pkts" = 3 }
"""


@pytest.fixture
def tiny(tmp_path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


@pytest.fixture
def core():
    return pytest.importorskip("vegaslab._core")


def _exit_code(argv) -> int:
    try:
        return cli.main(argv)
    except SystemExit as exc:  # argparse exits for --help, --version and usage errors
        return exc.code


# ---------------------------------------------------------------------- help and version


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_has_help_with_examples(command, capsys):
    assert _exit_code([command, "--help"]) == 0
    text = capsys.readouterr().out
    assert f"usage: vegaslab {command}" in text
    assert "examples:" in text and f"vegaslab {command}" in text.split("examples:")[1]


def test_top_level_help_lists_the_subcommands_and_examples(capsys):
    assert _exit_code(["--help"]) == 0
    text = capsys.readouterr().out
    for command in SUBCOMMANDS:
        assert command in text
    assert "examples:" in text


def test_run_help_documents_set_seed_out_and_no_plots(capsys):
    _exit_code(["run", "--help"])
    text = capsys.readouterr().out
    for option in ("--set KEY=VALUE", "--seed N", "--out DIR", "--no-plots"):
        assert option in text


def test_bench_help_documents_ns2_switch_and_duration(capsys):
    _exit_code(["bench", "--help"])
    text = capsys.readouterr().out
    assert "--ns2, --no-ns2" in text and "--duration S" in text


def test_version_prints_the_package_version_even_without_the_core(capsys):
    assert _exit_code(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"vegaslab {vegaslab.__version__} (core ")


def test_no_subcommand_prints_help_and_fails(capsys):
    assert _exit_code([]) == 2
    assert "usage: vegaslab" in capsys.readouterr().out


def test_python_dash_m_vegaslab_runs_the_same_cli():
    proc = subprocess.run([sys.executable, "-m", "vegaslab", "--help"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              [str(Path(vegaslab.__file__).parents[1]), os.environ.get("PYTHONPATH", "")])})
    assert proc.returncode == 0, proc.stderr
    assert "usage: vegaslab" in proc.stdout


# ---------------------------------------------------------------------- errors without running


def test_run_with_a_missing_file_exits_2_with_a_message(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(tmp_path))
    assert _exit_code(["run", str(tmp_path / "nope.toml")]) == 2
    assert "nope.toml" in capsys.readouterr().err


def test_reproduce_with_an_unknown_id_exits_2_before_running_anything(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(tmp_path))
    assert cli.main(["reproduce", "va-nothing", "--out", str(tmp_path / "out")]) == 2
    assert "va-nothing" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_reproduce_defaults_to_the_three_vegas_a_entries():
    args = cli.build_parser().parse_args(["reproduce"])
    assert args.ids == ["va-reroute", "va-file", "va-buffer"]


def test_run_resolves_a_catalog_id_to_its_file(tmp_path, tiny, monkeypatch):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(tiny.parent))
    assert cli._resolve_scenario("tiny") == tiny
    assert cli._resolve_scenario(str(tiny)) == tiny


# ---------------------------------------------------------------------- with the compiled core


def test_core_run_prints_the_summary_and_writes_tables_and_plots(core, tiny, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["run", str(tiny), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "f1" in printed and "Mbit/s" in printed
    for table in ("flows", "queues", "links", "series_flows", "series_queues"):
        assert (out / f"{table}.parquet").is_file() and (out / f"{table}.csv").is_file()
    assert json.loads((out / "meta.json").read_text())["duration_s"] == pytest.approx(3.0)
    for png in ("cwnd.png", "throughput.png", "queue.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"


def test_core_run_with_no_plots_writes_tables_only(core, tiny, tmp_path):
    out = tmp_path / "out"
    assert cli.main(["run", str(tiny), "--out", str(out), "--no-plots", "--seed", "4"]) == 0
    assert not list(out.glob("*.png"))
    assert json.loads((out / "meta.json").read_text())["seed"] == 4


def test_core_run_defaults_to_out_slash_the_scenario_stem(core, tiny, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", str(tiny), "--no-plots"]) == 0
    assert (tmp_path / "out" / "tiny" / "flows.parquet").is_file()


def test_core_run_set_applies_overrides(core, tiny, tmp_path):
    out = tmp_path / "out"
    assert cli.main(["run", str(tiny), "--out", str(out), "--no-plots",
                     "--set", "flows[0].cc=newreno", "--set", "run.duration=2s"]) == 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["duration_s"] == pytest.approx(2.0)
    assert "newreno" in (out / "flows.csv").read_text()


def test_core_run_invalid_override_exits_2_naming_the_field(core, tiny, tmp_path, capsys):
    code = cli.main(["run", str(tiny), "--out", str(tmp_path), "--set", "flows[0].start=-3s"])
    assert code == 2
    assert "flows[0].start" in capsys.readouterr().err


def test_core_reproduce_writes_summary_md_and_per_run_tables(core, tiny, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(tiny.parent))
    out = tmp_path / "rep"
    assert cli.main(["reproduce", "tiny", "--out", str(out)]) == 0
    assert "f1.retransmitted_pkts" in capsys.readouterr().out
    assert "| newreno | f1.retransmitted_pkts | 3 |" in (out / "summary.md").read_text()
    assert (out / "results" / "tiny" / "newreno" / "seed1" / "flows.parquet").is_file()
    assert (out / "index.html").is_file()


def test_core_bench_reports_speed_memory_and_split_and_writes_bench_json(core, tmp_path, capsys):
    assert cli.main(["bench", "--duration", "0.5s", "--no-ns2", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "events/s" in printed and "peak RSS" in printed and "reno" in printed and "vegas" in printed
    report = json.loads((tmp_path / "bench.json").read_text())
    ours = report["vegaslab"]
    assert report["flows"] == 50 and report["ns2"] is None and report["ns2_skipped"] == "--no-ns2"
    assert ours["wall_s"] > 0 and ours["events_per_s"] > 0 and ours["peak_rss_bytes"] > 0
    assert ours["bottleneck_departures"] > 0
    assert set(ours["goodput_bps"]) == {"reno", "vegas"}
