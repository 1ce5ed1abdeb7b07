"""vegaslab.sweeps.planning.plan: the core's expansion of a [sweep] table, presented as a plan and a
pandas table (one row per (point, seed), a typed column per parameter)."""

from __future__ import annotations

import pandas as pd
import pytest

import vegaslab
from scenario_text import TWO_HOP
from vegaslab.sweeps.planning import SweepPlan, plan

BASE = '[run]\nduration = "2s"\nseed = 5\n' + TWO_HOP + "params = { beta = 100 }\n"

SWEEP = """
[sweep]
seeds = 3

[[sweep.axis]]
name = "alpha"
path = "flows[0].params.alpha"
values = [1, 2.5]

[[sweep.axis]]
path = "links[1].queue.limit"
range = { start = 10, stop = 30, step = 10 }

[[sweep.axis]]
zip = [ { path = "flows[0].params.flavour", values = ["ns2", "linux"], name = "flavour" },
        { path = "monitor.cwnd", values = [true, false], name = "cwnd" } ]
"""


@pytest.fixture
def study(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text(BASE + SWEEP, encoding="utf-8")
    return path


def test_plan_lists_axes_seeds_and_points_in_row_major_order(study):
    p = plan(study)
    assert isinstance(p, SweepPlan)
    assert [a.name for a in p.axes] == ["alpha", "links[1].queue.limit", "flavour+cwnd"]
    assert [len(a) for a in p.axes] == [2, 3, 2]
    assert p.seeds == (1, 2, 3)
    assert len(p.points) == 12 and p.runs == 36
    # The last axis varies fastest.
    assert [pt.coords for pt in p.points[:3]] == [(0, 0, 0), (0, 0, 1), (0, 1, 0)]
    assert p.points[3].values == {"alpha": 1.0, "links[1].queue.limit": 20, "flavour": "linux", "cwnd": False}
    assert p.points[3].overrides == (
        "flows[0].params.alpha=1.0", "links[1].queue.limit=20", "flows[0].params.flavour=linux", "monitor.cwnd=false")


def test_plan_table_has_one_row_per_point_and_seed_with_typed_columns(study):
    df = plan(study).to_pandas()
    assert list(df.columns) == ["point", "alpha", "links[1].queue.limit", "flavour", "cwnd", "seed", "overrides"]
    assert len(df) == 36
    assert df.dtypes["alpha"] == "float64"
    assert df.dtypes["links[1].queue.limit"] == "int64"
    assert df.dtypes["flavour"] == pd.StringDtype()
    assert df.dtypes["cwnd"] == "bool"
    assert df.dtypes["seed"] == "int64"
    # Seeds fastest within a point.
    assert df["seed"].tolist()[:4] == [1, 2, 3, 1]
    assert df["point"].tolist()[:4] == [0, 0, 0, 1]
    row = df.iloc[3 * 7 + 1]
    assert (row["point"], row["alpha"], row["links[1].queue.limit"], row["flavour"], row["cwnd"], row["seed"]) == (
        7, 2.5, 10, "linux", False, 2)
    assert df.attrs["axes"] == {"alpha": ["alpha"], "links[1].queue.limit": ["links[1].queue.limit"],
                                "flavour+cwnd": ["flavour", "cwnd"]}


def test_every_plan_row_reruns_as_the_point_it_names(study):
    df = plan(study, overrides=["run.duration=1s"]).to_pandas()
    row = df.iloc[10 * 3 + 2]  # point 10: alpha 2.5, limit 30, ns2, cwnd on; seed 3
    assert (row["point"], row["flavour"], row["seed"]) == (10, "ns2", 3)
    assert row["overrides"][0] == "run.duration=1s"
    normalized = vegaslab.normalize(study, seed=int(row["seed"]), overrides=list(row["overrides"]))
    assert normalized["duration_ns"] == 1_000_000_000
    assert normalized["seed"] == 3
    assert normalized["links"][1]["forward"]["queue"]["limit"] == row["links[1].queue.limit"] == 30
    assert normalized["flows"][0]["algorithm"]["Vegas"]["alpha"] == row["alpha"] == 2.5
    assert normalized["monitor"]["cwnd"] == bool(row["cwnd"]) is True


def test_user_overrides_may_edit_the_sweep_itself(study):
    p = plan(study, overrides=["sweep.seeds=[4, 9]"])
    assert p.seeds == (4, 9)
    assert p.runs == 24


def test_a_scenario_without_sweep_is_one_run_with_its_own_seed():
    p = plan(BASE)
    assert p.axes == () and p.seeds == (5,) and len(p.points) == 1
    df = p.to_pandas()
    assert list(df.columns) == ["point", "seed", "overrides"]
    assert df["seed"].tolist() == [5]


def test_a_bad_axis_is_a_scenario_error_naming_the_field(study):
    bad = BASE + '[[sweep.axis]]\npath = "links[1].queue.limit"\nvalues = [10, 20, 30, 0]\n'
    with pytest.raises(vegaslab.ScenarioError) as info:
        plan(bad)
    err = info.value
    assert err.field == "sweep.axis[0].values[3]"
    assert err.kind == "out-of-range"
    assert str(err).startswith("<string>: sweep.axis[0].values[3]: must be between")


def test_too_many_runs_is_refused_with_the_count(study):
    big = BASE + '[sweep]\nseeds = 1000\n[[sweep.axis]]\npath = "links[1].queue.limit"\nrange = { start = 2, stop = 2000, step = 1 }\n'
    with pytest.raises(vegaslab.ScenarioError, match=r"1999 points x 1000 seeds = 1999000 runs; at most 1000000") as info:
        plan(big)
    assert info.value.kind == "too-large"


def test_a_dict_scenario_with_a_sweep_table_is_planned():
    import tomllib

    doc = tomllib.loads(BASE + SWEEP)
    assert plan(doc).runs == 36
