"""``vegaslab sweep`` and ``vegaslab.sweep``: a scenario's [sweep] run through the Dask engine
into a results store, resumed, counted, and read back as tidy tables, xarray and plots.

The study is 2 alpha values x 2 queue limits x 2 seeds of 0.5 s simulated time on a two-hop
path with seeded packet errors (so the seeds differ). The end-to-end tests use the embedded
cluster with 2 workers; the others run in this process (``scheduler="synchronous"``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("vegaslab._core")

import vegaslab  # noqa: E402
from vegaslab import cli  # noqa: E402
from vegaslab.sweeps.store import Store  # noqa: E402
from vegaslab.sweeps.results import FAILURES_FILE, SweepResults, t_quantile  # noqa: E402
from scenario_text import LOSSY_TWO_HOP  # noqa: E402

BASE = """
[meta]
id = "tiny-study"

[run]
duration = "0.5s"
""" + LOSSY_TWO_HOP

SWEEP = """
[sweep]
seeds = 2

[[sweep.axis]]
name = "alpha"
path = "flows[0].params.alpha"
values = [1, 2]

[[sweep.axis]]
name = "limit"
path = "links[1].queue.limit"
values = [5, 20]
"""


@pytest.fixture
def study(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text(BASE + SWEEP, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _embedded(monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# ---------------------------------------------------------------------- end to end


def test_cli_sweep_runs_every_run_on_two_workers_then_resume_computes_nothing(study, tmp_path, capsys):
    out = tmp_path / "store"
    assert cli.main(["sweep", str(study), "--out", str(out), "--scheduler", "local", "--jobs", "2", "--no-progress",
                     "--plot", "throughput_bps:alpha", "--flow", "f1"]) == 0
    text = capsys.readouterr().out
    assert "8 runs: ran 8, already stored 0, failed 0" in text
    assert "local Dask cluster, 2 worker processes" in text
    png = out / "throughput_bps-vs-alpha.png"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(Store(out)) == 8

    assert cli.main(["sweep", str(study), "--out", str(out), "--no-progress"]) == 0
    assert "8 runs: ran 0, already stored 8, failed 0" in capsys.readouterr().out

    assert cli.main(["sweep", str(study), "--out", str(out), "--status"]) == 0
    assert "stored 8, missing 0, failed 0" in capsys.readouterr().out


def test_api_sweep_returns_tidy_typed_tables_xarray_and_a_plot(study, tmp_path):
    res = vegaslab.sweep(study, out=tmp_path / "store", scheduler="local", workers=2)
    assert isinstance(res, SweepResults)
    assert (res.execution.ran, res.execution.failed) == (8, 0)
    assert res.execution.executor == "local Dask cluster, 2 worker processes"

    flows = res.flows
    assert len(flows) == 8  # one flow per run
    assert list(flows.columns[:5]) == ["run_key", "point", "alpha", "limit", "seed"]
    assert {c: str(flows[c].dtype) for c in ("alpha", "limit", "seed")} == {
        "alpha": "int64", "limit": "int64", "seed": "int64"}
    assert sorted(zip(flows["alpha"], flows["limit"], flows["seed"])) == [
        (a, q, s) for a in (1, 2) for q in (5, 20) for s in (1, 2)]
    assert res.to_pandas().equals(flows)
    assert len(res.runs) == 8 and "throughput_bps_total" in res.runs.columns
    assert flows["throughput_bps"].nunique() > 1, "the seeds and points must give different numbers"

    arr = res.to_xarray("throughput_bps", entity="f1")
    assert arr.dims == ("alpha", "limit", "seed") and arr.shape == (2, 2, 2)
    assert list(arr.coords["limit"].values) == [5, 20]
    row = flows[(flows["alpha"] == 2) & (flows["limit"] == 5) & (flows["seed"] == 2)].iloc[0]
    assert arr.sel(alpha=2, limit=5, seed=2).item() == row["throughput_bps"]
    assert res.to_xarray("jain_throughput").shape == (2, 2, 2)

    # Mean and a Student-t 95% interval over the 2 seeds (t_{0.975, 1} = 12.706).
    stats = res.summary("throughput_bps", "alpha", hue="limit", flow="f1")
    one = flows[(flows["alpha"] == 1) & (flows["limit"] == 20)]["throughput_bps"]
    got = stats[(stats["alpha"] == 1) & (stats["limit"] == 20)].iloc[0]
    half = 12.7062047 * one.std(ddof=1) / math.sqrt(2)
    assert got["mean"] == pytest.approx(one.mean())
    # The band is clipped to the metric's physical range: a throughput is not negative.
    assert (got["lo"], got["hi"]) == pytest.approx((max(0.0, one.mean() - half), one.mean() + half), rel=1e-6)
    assert got["clipped"] == (one.mean() - half < 0)

    with pytest.warns(UserWarning, match="only 2 seeds"):
        ax = res.plot("throughput_bps", x="alpha", flow="f1")
    assert len(ax.get_lines()) == 2  # the other varying parameter (limit) is the hue
    assert ax.collections, "a confidence band is drawn"
    with pytest.warns(UserWarning, match="only 2 seeds"):
        path = res.save_plot("throughput_bps", "limit", flow="f1")
    assert path == tmp_path / "store" / "throughput_bps-vs-limit.png" and path.is_file()


def test_t_quantile_matches_the_published_table():
    for df, expected in [(1, 12.7062047), (2, 4.30265273), (4, 2.77644511), (9, 2.26215716), (30, 2.04227246)]:
        assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-7)


# ---------------------------------------------------------------------- dry run and status


def test_dry_run_counts_stored_runs_and_estimates_from_their_wall_times_without_computing(study, tmp_path, capsys):
    out = tmp_path / "store"
    assert cli.main(["sweep", str(study), "--out", str(out), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "4 points x 2 seeds = 8 runs" in text
    assert "0 of 8 runs already stored, 8 to compute" in text
    assert "estimated time: unknown" in text
    assert not out.exists(), "a dry run creates nothing"

    # Half the runs (seed 1 of each point) stored, in this process.
    assert cli.main(["sweep", str(study), "--out", str(out), "--set", "sweep.seeds=[1]",
                     "--scheduler", "synchronous", "--no-progress"]) == 0
    capsys.readouterr()
    walls = Store(out).read("runs")["wall_s"]
    assert cli.main(["sweep", str(study), "--out", str(out), "--dry-run", "--jobs", "1"]) == 0
    text = capsys.readouterr().out
    assert "4 of 8 runs already stored, 4 to compute" in text
    assert f"4 runs x {walls.mean():.3g} s" in text
    assert len(Store(out)) == 4, "a dry run computes nothing"

    assert cli.main(["sweep", str(study), "--out", str(out), "--status"]) == 0
    assert "stored 4, missing 4, failed 0" in capsys.readouterr().out


def test_status_counts_a_failed_run_until_it_succeeds(study, tmp_path, capsys, monkeypatch):
    import vegaslab.sweeps.engine as engine

    real = engine.execute

    def fail_point_3_seed_2(prepared, text, types):
        if prepared.spec.params == {"alpha": 2, "limit": 20} and prepared.seed == 2:
            return engine.WorkerResult(prepared.key, None, "study.toml: simulated failure", 0.0, "test")
        return engine.run_payload(prepared, text, types)

    monkeypatch.setattr(engine, "execute", lambda *a, **kw: real(*a, **kw, run_fn=fail_point_3_seed_2))
    out = tmp_path / "store"
    argv = ["sweep", str(study), "--out", str(out), "--scheduler", "synchronous", "--no-progress"]
    assert cli.main(argv) == 1
    captured = capsys.readouterr()
    assert "ran 7, already stored 0, failed 1" in captured.out
    assert "FAILED study.toml: simulated failure" in captured.err
    assert cli.main(["sweep", str(study), "--out", str(out), "--status"]) == 0
    text = capsys.readouterr().out
    assert "stored 7, missing 0, failed 1" in text and "simulated failure" in text

    monkeypatch.setattr(engine, "execute", real)
    assert cli.main(argv) == 0
    assert "ran 1, already stored 7, failed 0" in capsys.readouterr().out
    assert not (out / FAILURES_FILE).exists()
    assert cli.main(["sweep", str(study), "--out", str(out), "--status"]) == 0
    assert "stored 8, missing 0, failed 0" in capsys.readouterr().out


# ---------------------------------------------------------------------- errors


def test_a_file_without_sweep_is_a_one_line_error_naming_the_file_and_the_docs(tmp_path, capsys):
    plain = tmp_path / "plain.toml"
    plain.write_text(BASE, encoding="utf-8")
    assert cli.main(["sweep", str(plain), "--out", str(tmp_path / "store")]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert line.startswith(f"vegaslab: {plain}: has no [sweep] table")
    assert "add a [sweep] table" in line and "docs/sweep-format.md" in line
    assert not (tmp_path / "store").exists()
    with pytest.raises(vegaslab.ScenarioError, match=r"no \[sweep\] table"):
        vegaslab.sweep(plain, out=tmp_path / "store")


def test_a_bad_sweep_is_the_cores_one_line_error(study, tmp_path, capsys):
    study.write_text(BASE + SWEEP.replace("values = [5, 20]", "values = [5, 0]"), encoding="utf-8")
    assert cli.main(["sweep", str(study), "--out", str(tmp_path / "store"), "--dry-run"]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert line.startswith(f"vegaslab: {study}: sweep.axis[1].values[1]:")


def test_a_bad_set_is_a_one_line_error(study, tmp_path, capsys):
    assert cli.main(["sweep", str(study), "--set", "flows[9].cc=reno", "--status"]) == 2
    assert "flows[9]" in _one_line_error(capsys.readouterr().err)


def test_plot_of_an_unknown_parameter_is_refused_before_anything_runs(study, tmp_path, capsys):
    out = tmp_path / "store"
    assert cli.main(["sweep", str(study), "--out", str(out), "--plot", "throughput_bps:beta"]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "'beta' is not a swept parameter" in line and "alpha, limit" in line
    assert not out.exists()


def test_out_that_is_a_file_is_a_one_line_error(study, tmp_path, capsys):
    out = tmp_path / "file"
    out.write_text("x")
    assert cli.main(["sweep", str(study), "--out", str(out), "--scheduler", "synchronous"]) == 2
    assert str(out) in _one_line_error(capsys.readouterr().err)


def test_sweep_help_has_examples(capsys):
    assert cli.main(["sweep", "--help"]) == 0
    text = capsys.readouterr().out
    assert "usage: vegaslab sweep" in text and "--dry-run" in text and "examples:" in text


def test_unknown_metric_names_the_numeric_columns(study, tmp_path):
    res = vegaslab.sweep(study, out=tmp_path / "store", scheduler="synchronous", overrides=["sweep.seeds=1"])
    with pytest.raises(vegaslab.VegaslabError, match="metric 'nope'.*throughput_bps"):
        res.to_xarray("nope")
    assert np.isfinite(res.to_xarray("throughput_bps").values).all()


def test_a_metric_renamed_in_0_3_names_its_new_name(study, tmp_path):
    res = vegaslab.sweep(study, out=tmp_path / "store", scheduler="synchronous", overrides=["sweep.seeds=1"])
    with pytest.raises(vegaslab.VegaslabError, match="'final_cwnd' was renamed 'final_cwnd_pkts' in 0.3"):
        res.to_xarray("final_cwnd")
    with pytest.raises(vegaslab.VegaslabError, match="'queue_drops_total' was renamed 'queue_dropped_pkts_total'"):
        res.to_xarray("queue_drops_total")
    assert np.isfinite(res.to_xarray("final_cwnd_pkts").values).all()
    assert np.isfinite(res.to_xarray("queue_dropped_pkts_total").values).all()


def test_the_default_store_is_named_by_the_id_the_core_accepted_after_overrides(study):
    # The raw file's meta.id ("../../escaped") is replaced by --set before the core checks it:
    # the store must be named from the checked id, never from the raw text.
    from vegaslab.sweeps.results import default_out, load_sweep

    text = study.read_text(encoding="utf-8")
    text = text.replace('id = "tiny-study"', 'id = "../../escaped"', 1)
    hostile = study.with_name("hostile.toml")
    hostile.write_text(text, encoding="utf-8")
    sw = load_sweep(hostile, ["meta.id=ok"])
    assert sw.scenario_id == "ok"
    assert str(default_out(sw.scenario_id)) == "out/sweep-ok"
