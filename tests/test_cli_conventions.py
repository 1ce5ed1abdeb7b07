"""Command-line conventions: ``--json``, ``-q``/``-v``, usage of the subcommand on
argument errors, a closed stdout, ``--version`` without the heavy imports, progress bars only
on a terminal, quoted ``--set`` paths in the docs, and ``vegaslab run`` keeping the scenario's
monitors. Tests whose name starts with ``test_core_`` need the compiled core."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import vegaslab
from vegaslab import cli
from vegaslab.cli.console import jsonable
from scenario_text import TWO_HOP

ROOT = Path(__file__).resolve().parent.parent

TINY = """
[meta]
id = "tiny"
title = "A tiny entry"

[run]
duration = "2s"
""" + TWO_HOP + """
[[variant]]
name = "newreno"
set = { "flows[0].cc" = "newreno" }
published = { "f1.retransmitted_pkts" = 3 }

[[meta.claim]]
text = "NewReno retransmits no more than ten packets"
expr = "newreno:f1.retransmitted_pkts <= 10"
"""


@pytest.fixture
def core():
    return pytest.importorskip("vegaslab._core")


@pytest.fixture
def tiny(tmp_path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def _exit_code(argv) -> int:
    try:
        return cli.main(argv)
    except SystemExit as exc:
        return exc.code


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "VEGASLAB_CATALOG"}
    env.update(extra)
    return env


# ---------------------------------------------------------------------- --json


def test_core_run_json_prints_one_document_with_out_files_flows_wall_time_and_versions(core, tiny, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["run", str(tiny), "--out", str(out), "--json", "--no-plots"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)  # stdout is the document and nothing else
    assert doc["command"] == "run" and doc["out"] == str(out)
    assert sorted(doc["files"]) == sorted(str(p) for p in out.iterdir())
    assert [f["flow"] for f in doc["flows"]] == ["f1"]
    assert doc["flows"][0]["goodput_bps"] == pytest.approx(vegaslab.Results.from_dir(out).flows["goodput_bps"][0])
    assert doc["wall_s"] > 0 and doc["duration_s"] == pytest.approx(2.0)
    assert doc["core_version"] == vegaslab.core_version() and doc["vegaslab_version"] == vegaslab.__version__
    assert "Mbit/s" in captured.err  # the human summary went to stderr


def test_core_run_json_flows_are_the_flows_table_row_by_row(core, tiny, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["run", str(tiny), "--out", str(out), "--json", "--no-plots"]) == 0
    doc = json.loads(capsys.readouterr().out)
    frame = vegaslab.Results.from_dir(out).flows
    assert doc["flows"] == json.loads(json.dumps(jsonable(frame.to_dict(orient="records"))))
    assert set(doc["flows"][0]) == set(frame.columns)


def test_core_run_json_after_an_error_still_prints_a_document_naming_it(core, tiny, tmp_path, capsys):
    code = cli.main(["run", str(tiny), "--out", str(tmp_path / "o"), "--json", "--set", "flows[0].start=-3s"])
    assert code == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_status"] == 2 and "flows[0].start" in doc["error"]


def test_core_reproduce_json_gives_per_entry_published_ours_verdicts_and_the_report(core, tiny, tmp_path, capsys,
                                                                                    monkeypatch):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(tiny.parent))
    out = tmp_path / "rep"
    assert cli.main(["reproduce", "tiny", "--out", str(out), "--scheduler", "synchronous", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "reproduce" and doc["report"] == str(out / "index.html")
    assert Path(doc["report"]).is_file() and doc["exit_status"] == 0
    (entry,) = doc["entries"]
    assert entry["id"] == "tiny" and entry["status"] == "ok"
    (row,) = [c for c in entry["comparisons"] if c["metric"] == "f1.retransmitted_pkts"]
    assert row["published"] == 3 and row["run"] == "newreno" and isinstance(row["ours"], (int, float))
    (claim,) = entry["claims"]
    assert claim["verdict"] in ("holds", "fails") and claim["text"].startswith("NewReno")


def test_reproduce_list_json_lists_the_entries(tiny, monkeypatch, capsys):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(tiny.parent))
    assert cli.main(["reproduce", "--list", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(e["id"], e["runs"]) for e in doc["entries"]] == [("tiny", 1)]


# ---------------------------------------------------------------------- -q / -v


def test_core_quiet_prints_nothing_on_success_and_the_error_on_failure(core, tiny, tmp_path, capsys):
    assert cli.main(["-q", "run", str(tiny), "--out", str(tmp_path / "o"), "--no-plots"]) == 0
    assert capsys.readouterr() == ("", "")
    assert (tmp_path / "o" / "flows.parquet").is_file()
    assert cli.main(["run", str(tmp_path / "missing.toml"), "-q"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "missing.toml" in captured.err


def test_core_verbose_names_the_added_monitors_and_every_file_on_stderr(core, tiny, tmp_path, capsys):
    out = tmp_path / "o"
    assert cli.main(["run", str(tiny), "--out", str(out), "--no-plots", "-v"]) == 0
    captured = capsys.readouterr()
    assert "Mbit/s" in captured.out
    for f in out.iterdir():
        assert str(f) in captured.err
    assert "wall time" in captured.err


def test_quiet_and_verbose_are_accepted_before_and_after_the_subcommand_but_not_together(capsys):
    parse = cli.build_parser().parse_args
    assert parse(["-q", "run", "x.toml"]).quiet and parse(["run", "x.toml", "-q"]).quiet
    assert parse(["-v", "reproduce"]).verbose and parse(["reproduce", "--verbose"]).verbose
    assert not parse(["-v", "run", "x.toml"]).quiet  # the sub-parser does not reset the top-level's
    assert _exit_code(["run", "x.toml", "-q", "-v"]) == 2


# ---------------------------------------------------------------------- usage errors


def test_a_bad_option_of_run_prints_the_run_usage_and_exits_2(capsys):
    assert _exit_code(["run", "x.toml", "--bogus"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: vegaslab run ") and "--no-plots" in err
    assert err.strip().splitlines()[-1] == "vegaslab: unrecognized arguments: --bogus (see `vegaslab run --help`)"


def test_a_bad_option_of_a_nested_subcommand_prints_its_usage(capsys):
    assert _exit_code(["kernel", "list", "--bogus"]) == 2
    assert capsys.readouterr().err.startswith("usage: vegaslab kernel list ")


# ---------------------------------------------------------------------- a closed stdout


def _into_a_closed_pipe(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """Run ``python -m vegaslab ARGS`` with stdout a pipe whose reader has already gone (what
    ``| head -1`` leaves once head has its line)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "vegaslab", *args], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, cwd=cwd, env=_env(**env), timeout=120)
    finally:
        os.close(write_end)


def test_core_run_into_a_closed_pipe_exits_0_and_still_writes_its_output(core, tmp_path):
    # 120 flows: a summary larger than Python's pipe buffer, so it is written while running
    flows = "".join(f'\n[[flows]]\nname = "x{i}"\nfrom = "S1"\nto = "D1"\ncc = "reno"\n' for i in range(120))
    (tmp_path / "many.toml").write_text('[run]\nduration = "1s"\n' + TWO_HOP + flows)
    proc = _into_a_closed_pipe(["run", "many.toml", "--out", "o", "--no-plots"], tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    assert (tmp_path / "o" / "flows.parquet").is_file()


def test_reproduce_list_into_a_closed_pipe_exits_0_without_a_traceback(tmp_path):
    proc = _into_a_closed_pipe(["reproduce", "--list"], tmp_path)
    assert proc.returncode in (0, 141) and "Traceback" not in proc.stderr and proc.stderr == ""


# ---------------------------------------------------------------------- --version stays light


def test_version_imports_neither_pandas_nor_numpy_matplotlib_dask_or_tqdm(tmp_path):
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "vegaslab", "--version"], capture_output=True,
                          text=True, cwd=tmp_path, env=_env(), timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("vegaslab ")
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert "vegaslab" in imported  # the listing is real
    assert not imported & {"pandas", "numpy", "matplotlib", "dask", "distributed", "pyarrow", "tqdm"}


# ---------------------------------------------------------------------- progress bars


def test_core_run_asks_for_a_progress_bar_only_when_stderr_is_a_terminal(core, tiny, tmp_path, monkeypatch):
    asked = []
    real = vegaslab.run

    def spy(*a, **k):
        asked.append(k.get("progress"))
        return real(*a, **k)

    monkeypatch.setattr(vegaslab, "run", spy)
    for tty in (False, True):
        monkeypatch.setattr(sys.stderr, "isatty", lambda tty=tty: tty)
        assert cli.main(["run", str(tiny), "--out", str(tmp_path / f"o{tty}"), "--no-plots"]) == 0
    assert asked == [False, True]


def test_core_reproduce_into_a_redirected_stderr_writes_no_progress_bar_frames(core, tiny, tmp_path):
    # A log file is not a terminal: no bar frames (tqdm's "\r" redraws, or its "0%|" lines).
    proc = subprocess.run([sys.executable, "-m", "vegaslab", "reproduce", "tiny", "--out", str(tmp_path / "rep"),
                           "--scheduler", "synchronous"], capture_output=True, text=True, cwd=tmp_path,
                          env=_env(VEGASLAB_CATALOG=str(tiny.parent)), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "f1.retransmitted_pkts" in proc.stdout  # the command did print its results
    for stream in (proc.stderr, proc.stdout):
        assert "\r" not in stream and not re.search(r"\d+%\|", stream), stream


# ---------------------------------------------------------------------- quoted --set paths

#: ``--set`` followed by an unquoted value holding a bracket: a shell glob pattern.
UNQUOTED_SET = re.compile(r"--set[ =](?!['\"])[^\s`'\"]*\[")


def _cli_help_texts() -> dict[str, str]:
    parser = cli.build_parser()
    texts = {"vegaslab --help": parser.format_help()}
    for action in parser._actions:
        if isinstance(action, __import__("argparse")._SubParsersAction):
            for name, sub in action.choices.items():
                texts[f"vegaslab {name} --help"] = sub.format_help()
    return texts


def test_docs_and_cli_help_quote_every_set_with_brackets():
    sources = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
               for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
    sources.update(_cli_help_texts())
    bad = [f"{where}: {line.strip()}" for where, text in sources.items()
           for line in text.splitlines() if UNQUOTED_SET.search(line)]
    assert not bad, "quote --set values with brackets ('flows[0]...'), or the shell may glob them:\n" + "\n".join(bad)


def test_the_unquoted_set_check_finds_what_it_should():
    assert UNQUOTED_SET.search("vegaslab run x --set flows[0].cc=reno")
    assert UNQUOTED_SET.search("`vegaslab run FILE --set links[1].queue.limit=20`")
    assert not UNQUOTED_SET.search("vegaslab run x --set 'flows[0].cc=reno' --set run.duration=5s")
    assert not UNQUOTED_SET.search('--set "flows[0].cc=reno"')


# ---------------------------------------------------------------------- run keeps the scenario's monitors


def _series_queues(out: Path) -> set[str]:
    return set(vegaslab.Results.from_dir(out).series_queues["queue"])


def test_core_run_keeps_the_scenarios_queue_list(core, tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text('[run]\nduration = "2s"\n' + TWO_HOP + '\n[monitor]\nqueues = ["R1->D1"]\n')
    assert cli.main(["run", str(scenario), "--out", str(tmp_path / "o"), "-q"]) == 0
    assert _series_queues(tmp_path / "o") == {"R1->D1"}
    res = vegaslab.Results.from_dir(tmp_path / "o")
    assert res.series_flows["cwnd_pkts"].notna().any()  # cwnd was unset: switched on for the plot


def test_core_run_of_a_scenario_monitoring_nothing_monitors_cwnd_throughput_and_the_bottleneck(core, tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text('[run]\nduration = "2s"\n' + TWO_HOP)
    assert cli.main(["run", str(scenario), "--out", str(tmp_path / "o"), "-q"]) == 0
    assert _series_queues(tmp_path / "o") == {"R1->D1", "D1->R1"}  # the 500 kbit/s link, both ways
    res = vegaslab.Results.from_dir(tmp_path / "o")
    assert res.series_flows["cwnd_pkts"].notna().any() and res.series_flows["throughput_bps"].notna().any()
    assert (tmp_path / "o" / "queue.png").is_file()


def test_core_run_keeps_a_monitor_switched_off_by_set(core, tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text('[run]\nduration = "2s"\n' + TWO_HOP)
    assert cli.main(["run", str(scenario), "--out", str(tmp_path / "o"), "-q",
                     "--set", "monitor.cwnd=false", "--set", "monitor.all_queues=true"]) == 0
    res = vegaslab.Results.from_dir(tmp_path / "o")
    assert not res.series_flows["cwnd_pkts"].notna().any()
    assert _series_queues(tmp_path / "o") == {"S1->R1", "R1->S1", "R1->D1", "D1->R1"}


def test_run_help_says_parquet_only_unless_csv_and_how_monitors_are_chosen(capsys):
    assert _exit_code(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "no CSV unless --csv" in text
    assert "monitor.queues = the slowest link's two directions" in text


def test_core_run_warns_on_stderr_when_the_receiver_window_caps_a_flow(core, tmp_path, capsys):
    """A flow whose cwnd sits at tcp.window most of the run is capped by the window, not by its
    congestion control: `run` says so (ns-2's window_ = 20 silently capped a parking-lot Reno flow)."""
    scenario = tmp_path / "capped.toml"
    scenario.write_text('[run]\nduration = "2s"\n' + TWO_HOP.replace('cc = "vegas"', 'cc = "reno"\ntcp = { window = 2 }'))
    assert _exit_code(["run", str(scenario), "--no-plots", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "vegaslab: warning: 1 flow capped by the receiver window" in err and "f1" in err
    assert "--set 'flows[f1].tcp.window=1000'" in err
    # Raising the window (the warning's own advice) removes the warning.
    assert _exit_code(["run", str(scenario), "--no-plots", "--out", str(tmp_path / "out2"),
                       "--set", "flows[f1].tcp.window=1000"]) == 0
    assert "capped by the receiver window" not in capsys.readouterr().err
