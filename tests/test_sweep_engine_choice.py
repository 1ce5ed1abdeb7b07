"""A sweep's engine chosen by its work, and a stopped sweep reported as interrupted.

- ``scheduler="auto"`` (the sweep's default) runs a small sweep in this process and moves a
  large one to the local cluster, after the runs done here or abandoning the run in progress;
  every run is stored once, none is counted failed.
- Ctrl-C or SIGTERM: the runs not finished are ``interrupted`` (not ``failed``) in the
  outcomes, the summary line, the failures file and ``--json``; exit status 130."""

from __future__ import annotations

import json
import os
import signal

import pytest

pytest.importorskip("distributed")
pytest.importorskip("vegaslab._core")

import vegaslab  # noqa: E402
from vegaslab import cli  # noqa: E402
from vegaslab.sweeps.engine import choice  # noqa: E402
from vegaslab.sweeps.results import FAILURES_FILE  # noqa: E402
from vegaslab.sweeps.store import Store  # noqa: E402
from scenario_text import LOSSY_TWO_HOP  # noqa: E402

STUDY = """
[meta]
id = "engine-study"

[run]
duration = "DURATION"
""" + LOSSY_TWO_HOP + """
[sweep]
seeds = SEEDS

[[sweep.axis]]
name = "alpha"
path = "flows[0].params.alpha"
values = [1, 2]
"""


@pytest.fixture(autouse=True)
def _embedded(monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)


def _study(tmp_path, duration: str = "0.5s", seeds: int = 3):
    path = tmp_path / "study.toml"
    path.write_text(STUDY.replace("DURATION", duration).replace("SEEDS", str(seeds)), encoding="utf-8")
    return path


# ---------------------------------------------------------------------- the threshold


def test_the_cluster_threshold_is_where_its_cost_is_repaid_within_the_allowed_slowdown():
    assert choice.cluster_threshold_s(1) == float("inf"), "one worker process is never faster"
    for workers in (2, 4, 16):
        t = choice.cluster_threshold_s(workers)
        # At the threshold the cluster takes exactly MAX_SLOWDOWN x the runs' own time.
        assert choice.CLUSTER_COST_S + t / workers == pytest.approx(choice.MAX_SLOWDOWN * t)
    assert choice.cluster_threshold_s(2) > choice.cluster_threshold_s(4)


def test_the_budget_projects_a_run_in_progress_from_its_simulated_time(monkeypatch):
    clock = iter([0.0, 0.1, 0.5, 0.5])  # perf_counter: watch() starts, then three callbacks
    monkeypatch.setattr(choice.time, "perf_counter", lambda: next(clock))
    budget = choice.WorkBudget(runs=10, limit_s=12.0)
    check = budget.watch()
    check(1.0, 100.0)  # before PROBE_S: no judgement yet
    assert budget.estimate_s == 0.0
    with pytest.raises(choice.MovingToCluster):
        check(10.0, 100.0)  # 0.5 s for a tenth: 5 s a run, 50 s for ten
    assert budget.estimate_s == pytest.approx(50.0) and budget.exceeded

    budget = choice.WorkBudget(runs=10, limit_s=11.0)
    assert not budget.finished(1.0) and budget.estimate_s == pytest.approx(10.0)  # 9 s left
    assert budget.finished(2.0) and budget.estimate_s == pytest.approx(15.0)  # 12 s left


def test_the_move_is_judged_on_the_work_left_and_needs_a_run_for_every_worker():
    budget = choice.WorkBudget(runs=4, limit_s=10.0, workers=2)
    # 12 s in all passes the limit, but the 9 s left do not: the first run's 3 s are spent
    assert not budget.finished(3.0) and budget.estimate_s == pytest.approx(12.0)
    one_left = choice.WorkBudget(runs=2, limit_s=1.0, workers=2)
    assert not one_left.finished(30.0), "one run left cannot use two workers"
    two_left = choice.WorkBudget(runs=3, limit_s=1.0, workers=2)
    assert two_left.finished(30.0)


# ---------------------------------------------------------------------- end to end


def test_a_small_sweep_runs_in_this_process_by_default(tmp_path, monkeypatch):
    monkeypatch.setattr(choice, "CLUSTER_COST_S", 1e6)  # small whatever the host's load
    res = vegaslab.sweep(_study(tmp_path), out=tmp_path / "store", workers=2)
    ex = res.execution
    assert ex.executor.startswith("in this process: estimated work"), ex.executor
    assert (ex.ran, ex.failed) == (6, 0) and len(Store(tmp_path / "store")) == 6
    assert 0 < ex.estimate_s


def test_dry_run_says_where_the_runs_would_go(tmp_path, capsys, monkeypatch):
    study, out = _study(tmp_path), tmp_path / "store"
    assert cli.main(["sweep", str(study), "--out", str(out), "--dry-run", "--jobs", "2"]) == 0
    limit = choice.cluster_threshold_s(2)
    assert (f"engine: this process while the estimated work is under {limit:.1f} s, then a local Dask cluster of 2 "
            "worker processes") in capsys.readouterr().out
    assert cli.main(["sweep", str(study), "--out", str(out), "--dry-run", "--jobs", "1"]) == 0
    assert "engine: this process (one worker process would not be faster)" in capsys.readouterr().out
    assert cli.main(["sweep", str(study), "--out", str(out), "--dry-run", "--scheduler", "local", "-j", "2"]) == 0
    assert "engine: a local Dask cluster of 2 worker processes (--scheduler local)" in capsys.readouterr().out
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:8786")
    assert cli.main(["sweep", str(study), "--out", str(out), "--dry-run"]) == 0
    assert "engine: the Dask scheduler at tcp://127.0.0.1:8786" in capsys.readouterr().out


def test_a_sweep_whose_work_passes_the_threshold_moves_to_the_cluster_after_its_first_run(tmp_path, monkeypatch):
    monkeypatch.setattr(choice, "CLUSTER_COST_S", 1e-6)  # any work pays for the cluster
    monkeypatch.setattr(choice, "PROBE_S", float("inf"))  # judged only when a run ends
    res = vegaslab.sweep(_study(tmp_path), out=tmp_path / "store", workers=2)
    ex = res.execution
    assert ex.executor.startswith("local Dask cluster, 2 worker processes: estimated work"), ex.executor
    assert ex.executor.endswith("after 1 run in this process")
    assert (ex.ran, ex.failed) == (6, 0)
    workers = set(Store(tmp_path / "store").read("runs")["worker"])
    assert any(w.startswith("tcp://") for w in workers) and any(":pid" in w for w in workers)


def test_a_run_abandoned_for_the_cluster_is_run_there_and_not_counted_failed(tmp_path, monkeypatch):
    monkeypatch.setattr(choice, "CLUSTER_COST_S", 1e-6)
    # Runs of a second or more (the core reports progress every 0.2 s of wall time): the first
    # is judged while it runs, and abandoned.
    res = vegaslab.sweep(_study(tmp_path, duration="100000s", seeds=1), out=tmp_path / "store", workers=2)
    ex = res.execution
    assert ex.executor.endswith("after 0 runs in this process"), ex.executor
    assert (ex.ran, ex.failed) == (2, 0)
    assert all(w.startswith("tcp://") for w in Store(tmp_path / "store").read("runs")["worker"])


# ---------------------------------------------------------------------- interrupted


def _stopping_after(n: int, sig: int, monkeypatch):
    """Make the sweep's engine send ``sig`` to this process once ``n`` runs have finished."""
    import vegaslab.sweeps.engine as engine

    real = engine.execute
    seen: list = []

    def stop(outcome) -> None:
        seen.append(outcome)
        if outcome.status == "ran" and sum(o.status == "ran" for o in seen) == n:
            os.kill(os.getpid(), sig)

    monkeypatch.setattr(engine, "execute", lambda *a, **kw: real(*a, **kw, on_outcome=stop))


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler, as in a fresh interpreter (a test elsewhere in the session
    may have left SIGINT ignored, and an ignored SIGINT stays ignored by design)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_runs_a_signal_stopped_are_interrupted_not_failed_everywhere_the_sweep_reports(tmp_path, monkeypatch,
                                                                                        capsys, sig, python_sigint):
    _stopping_after(2, sig, monkeypatch)
    out = tmp_path / "store"
    status = cli.main(["sweep", str(_study(tmp_path)), "--out", str(out), "--scheduler", "synchronous",
                       "--no-progress", "--json"])
    assert status == 130
    captured = capsys.readouterr()
    assert "6 runs: ran 2, already stored 0, failed 0, interrupted 4" in captured.err
    assert "FAILED" not in captured.err
    doc = json.loads(captured.out)
    assert doc["runs"] == {"total": 6, "ran": 2, "stored": 0, "failed": 0, "interrupted": 4}
    assert doc["interrupted"] is True and doc["exit_status"] == 130 and doc["failures"] == []
    assert not (out / FAILURES_FILE).exists(), "an interrupted run is not remembered as a failure"
    assert len(Store(out)) == 2

    monkeypatch.undo()
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    assert cli.main(["sweep", str(_study(tmp_path)), "--out", str(out), "--no-progress"]) == 0
    assert "ran 4, already stored 2, failed 0" in capsys.readouterr().out


def test_sweep_json_is_one_document_with_integer_counts_and_millisecond_times(tmp_path, capsys):
    out = tmp_path / "store"
    assert cli.main(["sweep", str(_study(tmp_path)), "--out", str(out), "--no-progress", "--json",
                     "--plot", "jain_throughput:alpha"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["command"] == "sweep" and doc["exit_status"] == 0
    assert doc["runs"] == {"total": 6, "ran": 6, "stored": 0, "failed": 0, "interrupted": 0}
    assert doc["figures"] == [str(out / "jain_throughput-vs-alpha.png")]
    for key in ("runs_wall_s", "sweep_wall_s", "wall_s", "estimated_work_s"):
        assert isinstance(doc[key], float) and doc[key] == round(doc[key], 3), (key, doc[key])
    assert "6 runs: ran 6" in captured.err, "the summary goes to stderr under --json"

    assert cli.main(["sweep", str(_study(tmp_path)), "--out", str(out), "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["runs"] == {"total": 6, "stored": 6, "missing": 0, "failed": 0}
    assert plan["parameters"] == [{"name": "alpha", "path": "flows[0].params.alpha", "type": "integer",
                                   "values": [1, 2]}]

    assert cli.main(["sweep", str(_study(tmp_path)), "--out", str(out), "--json", "--plot", "nope:alpha"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "sweep" and doc["exit_status"] == 2 and doc["error"].startswith("--plot nope:alpha")
