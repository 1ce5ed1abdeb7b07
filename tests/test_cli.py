"""The ``vegaslab`` command line. Tests whose name starts with ``test_core_`` run simulations
and need the compiled core; the others check arguments, help and error handling."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import vegaslab
from vegaslab.scenario import load_scenario
from vegaslab import bench, cli
from vegaslab.cli.options import resolve_scenario
from vegaslab.cli.reproduce import DefaultIds
from scenario_text import TWO_HOP

SUBCOMMANDS = ("run", "reproduce", "bench", "sweep")

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


def test_run_help_documents_set_seed_out_no_plots_and_csv(capsys):
    _exit_code(["run", "--help"])
    text = capsys.readouterr().out
    for option in ("--set KEY=VALUE", "--seed N", "--out DIR", "--no-plots", "--csv"):
        assert option in text


def test_bench_help_documents_ns2_switch_and_duration(capsys):
    _exit_code(["bench", "--help"])
    text = capsys.readouterr().out
    assert "--ns2, --no-ns2" in text and "--duration S" in text


def test_the_command_line_starts_without_reading_package_metadata():
    # importlib.metadata took 35-45 ms of every command's start; __version__ reads it lazily
    code = "import sys, vegaslab.cli; print('importlib.metadata' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"
    import importlib.metadata

    assert vegaslab.__version__ == importlib.metadata.version("vegaslab")


def test_the_package_and_its_compiled_core_have_one_version(core):
    # pyproject.toml declares the version dynamic: maturin takes it from Cargo.toml
    assert vegaslab.__version__ == vegaslab.core_version()


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
    assert resolve_scenario("tiny") == tiny
    assert resolve_scenario(str(tiny)) == tiny


def _listing_catalog(tmp_path: Path) -> Path:
    """Three entries in two papers: tiny (1 variant, seeds 1-3, quick: seed 1) and other
    (the file itself, one seed) in paper-x; solo in paper-y."""
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "tiny.toml").write_text(TINY.replace('id = "tiny"', 'id = "tiny"\ntitle = "Tiny two-hop"\n'
                                                'paper = "paper-x"\nseeds = [1, 2, 3]\nquick = { seeds = [1] }'))
    other = TINY.split("[[variant]]")[0]
    (cat / "other.toml").write_text(other.replace('id = "tiny"', 'id = "other"\ntitle = "Other"\npaper = "paper-x"'))
    (cat / "solo.toml").write_text(other.replace('id = "tiny"', 'id = "solo"\ntitle = "Solo"\npaper = "paper-y"'))
    return cat


def test_reproduce_list_groups_every_entry_by_paper_with_its_runs_and_runs_nothing(tmp_path, monkeypatch,
                                                                                   capsys, no_simulation):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(_listing_catalog(tmp_path)))
    assert cli.main(["reproduce", "--list", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "3 entries in 2 papers, 5 runs (3 with --quick)" in out
    x, y = out.index("paper-x: 2 entries, 4 runs (2 with --quick)"), out.index("paper-y: 1 entry, 1 run (1 with --quick)")
    assert x < y
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith("  ") and "title" not in line}
    assert rows == {"other": ["1", "1", "Other"], "tiny": ["3", "1", "Tiny", "two-hop"], "solo": ["1", "1", "Solo"]}
    assert out.index("  other") < out.index("  tiny") < y < out.index("  solo")
    assert not (tmp_path / "out").exists()


def test_reproduce_list_with_a_paper_name_lists_only_that_papers_entries(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(_listing_catalog(tmp_path)))
    assert cli.main(["reproduce", "--list", "paper-y"]) == 0
    out = capsys.readouterr().out
    assert "solo" in out and "tiny" not in out and "paper-x" not in out


def test_reproduce_list_with_an_unknown_name_exits_2_naming_the_papers(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(_listing_catalog(tmp_path)))
    assert cli.main(["reproduce", "--list", "nope"]) == 2
    line = _one_line_error(capsys)
    assert "'nope'" in line and "papers: paper-x, paper-y" in line


def test_reproduce_list_of_an_empty_catalog_exits_2_naming_the_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(tmp_path))
    assert cli.main(["reproduce", "--list"]) == 2
    assert str(tmp_path) in _one_line_error(capsys)


def test_reproduce_names_typed_out_are_told_apart_from_the_default():
    parser = cli.build_parser()
    assert isinstance(parser.parse_args(["reproduce"]).ids, DefaultIds)
    assert not isinstance(parser.parse_args(["reproduce", "va-reroute", "va-file", "va-buffer"]).ids, DefaultIds)


# ---------------------------------------------------------------------- the installed command, anywhere


def _console_script() -> Path:
    """The `vegaslab` command pip installed beside this interpreter (.venv/bin/vegaslab)."""
    script = Path(sys.executable).parent / ("vegaslab.exe" if os.name == "nt" else "vegaslab")
    assert script.is_file(), f"{script}: the vegaslab console script is not installed in this environment"
    return script


def _run_anywhere(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "VEGASLAB_CATALOG"}
    return subprocess.run([str(_console_script()), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_reproduce_list_from_any_directory_lists_every_builtin_entry_and_paper(tmp_path):
    from vegaslab.study.catalog import builtin_dir, list_entries

    proc = _run_anywhere(tmp_path, "reproduce", "--list")
    assert proc.returncode == 0, proc.stderr
    entries = list_entries(builtin_dir())
    for e in entries:
        assert f"\n  {e.id} " in proc.stdout
    for paper in {e.paper for e in entries}:
        assert f"\n{paper}: " in proc.stdout


def test_core_run_by_catalog_id_works_from_any_directory(core, tmp_path):
    from vegaslab.study.catalog import builtin_dir

    proc = _run_anywhere(tmp_path, "run", "va-reroute", "--set", "run.duration=2s", "--no-plots")
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((tmp_path / "out" / "va-reroute" / "meta.json").read_text())
    assert meta["duration_s"] == pytest.approx(2.0)
    assert Path(meta["provenance"]["source"]) == builtin_dir() / "va-reroute.toml"


def test_core_bench_works_from_any_directory_with_the_builtin_scenario(core, tmp_path):
    from vegaslab.study.catalog import builtin_dir

    proc = _run_anywhere(tmp_path, "bench", "--duration", "0.5s", "--no-ns2", "--no-end-to-end", "--repeat", "1", "--out", "b")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "b" / "bench.json").read_text())
    assert Path(report["scenario"]) == builtin_dir() / bench.BENCH_SCENARIO
    assert report["flows"] == 50 and report["vegaslab"]["events"] > 0


def test_the_linux_stack_benchmark_puts_every_flow_on_linux_stack(core):
    from vegaslab.simulation import normalize
    from vegaslab.study.catalog import builtin_dir

    path = builtin_dir() / bench.BENCH_SCENARIO
    sets = bench.linux_stack_overrides(load_scenario(path))
    flows = normalize(path, overrides=sets)["flows"]
    assert len(flows) == 50
    assert all(f["tcp"]["stack"] == "linux" for f in flows)
    vegas = [f["algorithm"]["Vegas"] for f in flows if isinstance(f["algorithm"], dict)]
    assert len(vegas) == 25 and all(v["flavour"] == "linux" for v in vegas)
    assert "stack" not in normalize(path)["flows"][0]["tcp"], "the ns-2 stack stays the default"


def test_core_bench_scenario_accepts_a_catalog_id(core, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("VEGASLAB_CATALOG", raising=False)
    assert cli.main(["bench", "--scenario", "va-reroute", "--duration", "0.5s", "--no-ns2", "--no-end-to-end", "--repeat", "1"]) == 0
    assert "va-reroute.toml" in capsys.readouterr().out


# ---------------------------------------------------------------------- with the compiled core


def test_core_run_prints_the_summary_and_writes_tables_and_plots(core, tiny, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["run", str(tiny), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "f1" in printed and "Mbit/s" in printed
    for table in ("flows", "queues", "links", "series_flows", "series_queues"):
        assert (out / f"{table}.parquet").is_file()
    assert json.loads((out / "meta.json").read_text())["duration_s"] == pytest.approx(3.0)
    for png in ("cwnd.png", "throughput.png", "queue.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"


def test_core_run_writes_csv_copies_only_with_csv_and_they_equal_the_parquet_tables(core, tiny, tmp_path):
    import pandas as pd

    from vegaslab.results import TABLES

    assert cli.main(["run", str(tiny), "--out", str(tmp_path / "plain"), "--seed", "3"]) == 0
    assert not list((tmp_path / "plain").glob("*.csv"))
    assert cli.main(["run", str(tiny), "--out", str(tmp_path / "csv"), "--seed", "3", "--csv"]) == 0
    with_csv = tmp_path / "csv"
    assert sorted(p.name for p in with_csv.glob("*.csv")) == sorted(f"{t}.csv" for t in TABLES)
    for table in TABLES:
        parquet = pd.read_parquet(with_csv / f"{table}.parquet")
        # the same run with and without --csv: the same Parquet tables
        pd.testing.assert_frame_equal(parquet, pd.read_parquet(tmp_path / "plain" / f"{table}.parquet"))
        csv = pd.read_csv(with_csv / f"{table}.csv")
        assert list(csv.columns) == list(parquet.columns) and len(csv) == len(parquet)
        if len(parquet):
            pd.testing.assert_frame_equal(csv, parquet, check_dtype=False)
    assert vegaslab.Results.from_dir(with_csv).meta["seed"] == 3  # the copies are checksummed in meta.json


def test_core_run_with_no_plots_never_imports_matplotlib(core, tiny, tmp_path):
    code = ("import sys; from vegaslab import cli; "
            f"assert cli.main(['run', {str(tiny)!r}, '--out', {str(tmp_path / 'out')!r}, '--no-plots']) == 0; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'PIL')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("options", [["--no-plots"], [], ["--no-plots", "--json"]], ids=["no-plots", "plots", "json"])
def test_core_run_never_imports_pandas(core, tiny, tmp_path, options):
    # Not before the core simulates, and not after: printing the summary, writing the Parquet
    # files (vegaslab.columns) and drawing the figures (vegaslab.plots) go without it. The
    # background import is switched off, so nothing it loads can hide an import the run itself
    # makes, and every figure is drawn in this process (a forked child's imports are not seen).
    code = ("import sys, vegaslab, vegaslab.core; from vegaslab import cli; from vegaslab.cli import run\n"
            "if '--no-plots' not in sys.argv:\n"
            "    import vegaslab.plots; vegaslab.plots.usable_processes = lambda *a, **k: 1\n"
            "class NoImportAhead(run.ImportAhead):\n"
            "    def _load(self): pass\n"
            "run.ImportAhead = NoImportAhead\n"
            "seen = []\n"
            "real = vegaslab.core.call_core\n"
            "def spy(fn, *a, **k):\n"
            "    seen.append('pandas' in sys.modules)\n"
            "    return real(fn, *a, **k)\n"
            "vegaslab.core.call_core = spy\n"
            f"assert cli.main(['run', {str(tiny)!r}, '--out', {str(tmp_path / 'out')!r}, *{options!r}]) == 0\n"
            "print(seen[0], 'pandas' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code, *options], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "False False"
    assert options or {"cwnd.png", "throughput.png", "queue.png"} <= {f.name for f in (tmp_path / "out").iterdir()}


def test_resolving_a_catalog_id_does_not_import_pandas():
    code = ("import sys; from vegaslab.cli.options import resolve_scenario; p = resolve_scenario('bench/grids-net2'); "
            "print(p.name, 'pandas' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["grids-net2.toml", "False"]


def test_core_run_imports_plots_during_the_simulation_and_reports_its_failure_in_one_line(
        core, tiny, tmp_path, capsys, monkeypatch):
    import threading

    importers = []

    class BrokenPlots:  # a finder that fails the import of vegaslab.plots, as a broken matplotlib would
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name == "vegaslab.plots":
                importers.append(threading.current_thread().name)
                raise RuntimeError("the plotting backend is broken")
            return None

    monkeypatch.delitem(sys.modules, "vegaslab.plots", raising=False)
    monkeypatch.setattr(sys, "meta_path", [BrokenPlots, *sys.meta_path])
    out = tmp_path / "out"
    assert cli.main(["run", str(tiny), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == ("vegaslab: internal error: RuntimeError: the plotting backend is broken "
                   "(set VEGASLAB_DEBUG=1 for a traceback, and please report it)\n")
    # first on the background thread (overlapping the simulation), then again on the main
    # thread, which raises what the background import swallowed
    assert importers == ["vegaslab: import vegaslab.results, pyarrow.parquet, importlib.metadata, vegaslab.plots",
                         threading.main_thread().name]
    assert not out.exists() and not list(tmp_path.glob(".out*"))
    assert not [t for t in threading.enumerate() if t.name.startswith("vegaslab: import")]


def test_core_run_with_no_plots_writes_tables_only(core, tiny, tmp_path):
    out = tmp_path / "out"
    assert cli.main(["run", str(tiny), "--out", str(out), "--no-plots", "--seed", "4"]) == 0
    assert not list(out.glob("*.png"))
    assert json.loads((out / "meta.json").read_text())["seed"] == 4


def test_core_run_quiet_does_not_even_format_the_summary(core, tiny, tmp_path, monkeypatch):
    # Formatting a 20,000-flow summary took 1.5 s, for nothing under -q.
    from vegaslab.results import Results

    def refuse(self, *args, **kwargs):
        raise AssertionError("format_table called under -q")

    monkeypatch.setattr(Results, "format_table", refuse)
    assert cli.main(["-q", "run", str(tiny), "--out", str(tmp_path / "o"), "--no-plots"]) == 0
    assert (tmp_path / "o" / "flows.parquet").is_file()


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
    assert "newreno" in set(vegaslab.Results.from_dir(out).flows["cc"])


def test_core_run_invalid_override_exits_2_naming_the_field(core, tiny, tmp_path, capsys):
    code = cli.main(["run", str(tiny), "--out", str(tmp_path / "out"), "--set", "flows[0].start=-3s"])
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
    assert cli.main(["bench", "--duration", "0.5s", "--no-ns2", "--repeat", "1", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "events/s" in printed and "peak RSS" in printed and "reno" in printed and "vegas" in printed
    report = json.loads((tmp_path / "bench.json").read_text())
    ours = report["vegaslab"]
    assert report["flows"] == 50 and report["ns2"] is None and report["ns2_skipped"] == "--no-ns2"
    assert ours["wall_s"] > 0 and ours["events_per_s"] > 0 and ours["peak_rss_bytes"] > 0
    # CPU time of the simulating process: the run is single-threaded, so no more than its
    # wall time (plus the clock's resolution).
    assert 0 < ours["cpu_s"] <= ours["wall_s"] + 0.01 and ours["cpus_s"] == [ours["cpu_s"]]
    assert ours["bottleneck_departures"] > 0
    assert set(ours["goodput_bps"]) == {"reno", "vegas"}
    # Packet-hops: every link's packets, so more than the bottleneck's (each data packet
    # crosses three links, each ACK three more), and ns per packet-hop from the same count.
    assert ours["packet_hops"] > 3 * ours["bottleneck_departures"]
    assert ours["ns_per_packet_hop"] == pytest.approx(ours["wall_s"] * 1e9 / ours["packet_hops"])
    assert "ns per packet-hop" in printed
    # The whole `vegaslab run` command, tables only and with the default plots, each timed from
    # start to exit: its files written (the plots only in the second), never less CPU time than
    # the core's run inside it. (CPU time, not wall time: the wall times of two processes on a
    # busy host say nothing about each other.)
    e2e = report["end_to_end"]
    assert [e2e[k]["command"] for k in ("run_tables", "run_plots")] == ["vegaslab run --no-plots", "vegaslab run"]
    assert "flows.parquet" in e2e["run_tables"]["files"] and not any(f.endswith(".png") for f in e2e["run_tables"]["files"])
    assert {"cwnd.png", "throughput.png", "queue.png"} <= set(e2e["run_plots"]["files"])
    assert all(e2e[k]["wall_s"] > 0 and e2e[k]["cpu_s"] > ours["cpu_s"] for k in e2e)
    assert "`vegaslab run --no-plots` end to end" in printed and "`vegaslab run` end to end" in printed
    # The results boundary: the plots' monitors on, every series row counted, the conversion
    # timed on its own (much less than the run that made the rows).
    converted = report["results_to_pandas"]
    assert converted["series_rows"] > 1000 and converted["table_rows"] > 50
    assert converted["wall_s"] > 0 and converted["cpus_s"] == [converted["cpu_s"]]
    assert 0 < converted["cpu_s"] < e2e["run_plots"]["cpu_s"]
    assert "results to pandas (" in printed


def test_bench_refuses_a_repeat_count_out_of_range(capsys):
    assert _exit_code(["bench", "--repeat", "0"]) == 2
    assert "--repeat: must be from 1 to 100, got 0" in capsys.readouterr().err


def test_core_bench_without_end_to_end_runs_the_core_alone(core, tmp_path):
    assert cli.main(["bench", "--duration", "0.2s", "--no-ns2", "--no-end-to-end", "--repeat", "1", "--out", str(tmp_path)]) == 0
    assert "end_to_end" not in json.loads((tmp_path / "bench.json").read_text())


def test_core_bench_stops_with_an_error_when_an_end_to_end_command_fails(core, capsys, monkeypatch):
    # A benchmark missing one of its numbers is an error, never a shorter report.
    monkeypatch.setattr(bench, "END_TO_END", (("run_tables", "vegaslab run --trace", ["--trace", "NOSUCH->LINK"]),))
    assert cli.main(["bench", "--duration", "0.2s", "--no-ns2", "--repeat", "1"]) == 1
    err = _one_line_error(capsys)
    assert "vegaslab run --trace NOSUCH->LINK" in err and "failed (exit" in err


@pytest.mark.skipif(shutil.which("ns") is None and os.environ.get("VEGASLAB_REQUIRE_NS2") != "1",
                    reason="ns-2 ('ns') not on PATH")
def test_core_bench_gives_ns2s_wall_over_the_core_and_each_end_to_end_command(core, tmp_path, capsys):
    # Two rounds: every command twice; each reports its median (the lower of two) and the
    # ratios are of medians.
    assert cli.main(["bench", "--duration", "0.5s", "--repeat", "2", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "bench.json").read_text())
    assert report["repeat"] == 2
    for n in (report["vegaslab"], report["ns2"], *report["end_to_end"].values()):
        assert len(n["walls_s"]) == 2 and n["wall_s"] == min(n["walls_s"])
    ns2_wall = report["ns2"]["wall_s"]
    assert report["ns2_over_vegaslab_wall"] == pytest.approx(ns2_wall / report["vegaslab"]["wall_s"])
    for key, timed in report["end_to_end"].items():
        assert report["ns2_over_end_to_end_wall"][key] == pytest.approx(ns2_wall / timed["wall_s"])
    # CPU time too (the core's target is in CPU time): the median of each command's rounds,
    # and its ratios beside the wall ratios.
    ns2_cpu = report["ns2"]["cpu_s"]
    assert len(report["ns2"]["cpus_s"]) == 2 and ns2_cpu == min(report["ns2"]["cpus_s"]) > 0
    assert report["ns2_over_vegaslab_cpu"] == pytest.approx(ns2_cpu / report["vegaslab"]["cpu_s"])
    for key, timed in report["end_to_end"].items():
        assert report["ns2_over_end_to_end_cpu"][key] == pytest.approx(ns2_cpu / timed["cpu_s"])
    # Each round's own ratio, in the order the rounds ran: the machine's noise made visible.
    assert report["ns2_over_vegaslab_cpu_by_round"] == pytest.approx(
        [a / b for a, b in zip(report["ns2"]["cpus_s"], report["vegaslab"]["cpus_s"])])
    printed = capsys.readouterr().out
    assert "ns-2's CPU time over the core's in each round: " in printed
    assert "ns-2's CPU time over ours: " in printed and "(the core)" in printed and "(`vegaslab run --no-plots`)" in printed
    assert "ns-2's wall time over ours: " in printed


# ---------------------------------------------------------------------- bad input and outputs


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vegaslab: "), err
    return lines[0]


@pytest.fixture
def no_simulation(monkeypatch):
    """Fail the test if the CLI starts a simulation (bad outputs must be found before)."""
    def refuse(*a, **k):
        raise AssertionError("a simulation ran before the output directory was checked")

    monkeypatch.setattr(vegaslab, "run", refuse)


def test_run_a_non_utf8_file_exits_2_naming_the_file_and_line(tmp_path, capsys):
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'[run]\nduration = "3s"\n# caf\xe9\n')
    assert _exit_code(["run", str(bad), "--out", str(tmp_path / "o")]) == 2
    line = _one_line_error(capsys)
    assert "latin1.toml" in line and "UTF-8" in line and "line 3" in line


def test_run_an_unreadable_file_exits_2_naming_the_file(tiny, tmp_path, capsys, monkeypatch):
    import builtins

    real = builtins.open

    def denied(file, *args, **kwargs):  # root reads any file: refuse this one by hand
        if isinstance(file, (str, os.PathLike)) and Path(file).name == tiny.name:
            raise PermissionError(13, "Permission denied", str(file))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", denied)
    assert _exit_code(["run", str(tiny), "--out", str(tmp_path / "o")]) == 2
    line = _one_line_error(capsys)
    assert "tiny.toml" in line and "Permission denied" in line


def test_run_a_directory_as_scenario_exits_2(tmp_path, capsys):
    assert _exit_code(["run", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "is a directory" in _one_line_error(capsys)


@pytest.mark.parametrize("out", ["a-file", "a-file/sub"])
def test_run_out_that_is_or_is_under_a_file_exits_2_before_simulating(tiny, tmp_path, capsys, no_simulation, out):
    (tmp_path / "a-file").write_text("not a directory")
    assert _exit_code(["run", str(tiny), "--out", str(tmp_path / out)]) == 2
    line = _one_line_error(capsys)
    assert "a-file" in line and "not a directory" in line


def test_run_out_that_cannot_be_written_exits_2_before_simulating(tiny, tmp_path, capsys, no_simulation, monkeypatch):
    import tempfile

    def read_only(*a, **k):  # as on a read-only mount (a chmod would not stop root)
        raise PermissionError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    assert _exit_code(["run", str(tiny), "--out", str(tmp_path / "o")]) == 2
    line = _one_line_error(capsys)
    assert str(tmp_path / "o") in line and "Read-only file system" in line


def test_run_out_holding_other_files_is_refused_and_left_alone(tiny, tmp_path, capsys, no_simulation):
    (tmp_path / "thesis.tex").write_text("precious")
    assert _exit_code(["run", str(tiny), "--out", str(tmp_path)]) == 2
    assert "thesis.tex" in _one_line_error(capsys)
    assert (tmp_path / "thesis.tex").read_text() == "precious"


def test_reproduce_out_that_is_a_file_exits_2_before_running(tiny, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(tiny.parent))
    (tmp_path / "rep").write_text("x")
    assert _exit_code(["reproduce", "tiny", "--out", str(tmp_path / "rep")]) == 2
    assert "not a directory" in _one_line_error(capsys)


@pytest.mark.parametrize("command", ["run", "reproduce"])
@pytest.mark.parametrize("seed", [str(2**64), str(2**63), "-1", "seven"])
def test_seed_outside_the_cores_range_is_a_one_line_usage_error_naming_the_range(tiny, tmp_path, capsys, command, seed):
    target = str(tiny) if command == "run" else "tiny"
    assert _exit_code([command, target, "--seed", seed, "--out", str(tmp_path / "o")]) == 2
    # A usage error shows the subcommand's usage first, then the one-line error.
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith(f"usage: vegaslab {command} ")
    line = err.strip().splitlines()[-1]
    assert line.startswith("vegaslab: ")
    assert "--seed" in line and "2**63-1" in line and str(vegaslab.MAX_SEED) in line
    assert not (tmp_path / "o").exists()


def test_largest_seed_is_accepted_by_the_parser():
    args = cli.build_parser().parse_args(["run", "x.toml", "--seed", str(2**63 - 1)])
    assert args.seed == 2**63 - 1


def test_core_a_failed_run_out_leaves_the_previous_output_whole(core, tiny, tmp_path, monkeypatch):
    import vegaslab.results.directory

    out = tmp_path / "out"
    assert cli.main(["run", str(tiny), "--out", str(out), "--no-plots", "--seed", "1"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    calls = {"n": 0}
    real = vegaslab.results.directory.write_parquet

    def interrupted(*a, **k):  # Ctrl-C after the first tables of the new run are written
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(vegaslab.results.directory, "write_parquet", interrupted)
    assert cli.main(["run", str(tiny), "--out", str(out), "--no-plots", "--seed", "2",
                     "--set", "run.duration=2s"]) == 130
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary directory left
    assert vegaslab.Results.from_dir(out).meta["seed"] == 1


def test_core_run_out_replaces_an_earlier_run_directory_whole(core, tiny, tmp_path):
    out = tmp_path / "out"
    assert cli.main(["run", str(tiny), "--out", str(out), "--seed", "1"]) == 0
    assert (out / "cwnd.png").is_file()
    assert cli.main(["run", str(tiny), "--out", str(out), "--seed", "2", "--no-plots"]) == 0
    assert not list(out.glob("*.png"))  # nothing of the first run is left next to the second
    assert vegaslab.Results.from_dir(out).meta["seed"] == 2


def test_core_run_out_records_provenance_that_reruns_to_the_same_numbers(core, tiny, tmp_path):
    import shlex

    import pandas as pd

    out = tmp_path / "out"
    assert cli.main(["run", str(tiny), "--out", str(out), "--seed", "3", "--set", "run.duration=2s"]) == 0
    prov = json.loads((out / "meta.json").read_text())["provenance"]
    assert prov["seed"] == 3 and "run.duration=2s" in prov["overrides"]
    assert prov["scenario"] == vegaslab.normalize(tiny, seed=3, overrides=prov["overrides"])
    assert prov["scenario_sha256"] == vegaslab.scenario_hash(prov["scenario"])
    assert prov["core_version"] == vegaslab.core_version() and prov["source_revision"] == vegaslab.source_revision()
    assert prov["vegaslab_version"] == vegaslab.__version__
    argv = shlex.split(prov["command"])
    assert argv[:2] == ["vegaslab", "run"]
    again = tmp_path / "again"
    assert cli.main(argv[1:] + ["--out", str(again)]) == 0
    pd.testing.assert_frame_equal(vegaslab.Results.from_dir(out).flows, vegaslab.Results.from_dir(again).flows)


def test_building_the_command_line_does_not_import_pandas():
    # `vegaslab --help` and every command pay for what the parser imports (pandas: ~0.35 s).
    code = "import sys; from vegaslab.cli import build_parser; build_parser(); print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
