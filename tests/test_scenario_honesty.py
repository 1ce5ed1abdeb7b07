"""`vegaslab run` stays light and honest, and its errors help, as Python sees it: hints in
ScenarioError, one flow of a group overridden by name, RED's average queue in ``series_queues``,
and the flows their receiver window capped."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import vegaslab
from vegaslab.core import run_core
from vegaslab.results import Results

GROUP = """
[run]
duration = "3s"
sample_interval = "50ms"
[dumbbell]
pairs = 4
access = { bandwidth = "10Mbps", delay = "2ms" }
bottleneck = { bandwidth = "1.5Mbps", delay = "10ms", queue = { kind = "red", limit = 40, min = 5, max = 15, weight = 0.02 } }
[[flows]]
name = "vegas{i}"
range = "1-4"
from = "S{i}"
to = "D{i}"
cc = "vegas"
[monitor]
queues = ["R1->R2", "S1->R1"]
"""


def _error(scenario: str, overrides: list[str]) -> vegaslab.ScenarioError:
    with pytest.raises(vegaslab.ScenarioError) as info:
        vegaslab.normalize(scenario, overrides=overrides)
    return info.value


# ---------------------------------------------------------------------------- error hints


def test_reno_params_say_reno_takes_none_instead_of_an_empty_list():
    e = _error(GROUP, ["flows[0].cc=reno", "flows[0].params.alpha=1"])
    assert e.field == "flows[0].params.alpha" and e.kind == "unknown-field"
    assert '"reno" takes no params' in e.reason and "allowed here" not in e.reason


def test_red_max_th_suggests_max():
    e = _error(GROUP, ["dumbbell.bottleneck.queue.max_th=20"])
    assert "did you mean 'max'?" in e.reason, e.reason


def test_set_of_flow_index_is_an_unknown_key_suggesting_flows():
    e = _error(GROUP, ["flow[0].cc=reno"])
    assert e.kind == "unknown-field" and "did you mean 'flows'?" in e.reason, e.reason


def test_an_unknown_bandwidth_unit_lists_the_accepted_spellings():
    e = _error(GROUP, ["dumbbell.bottleneck.bandwidth=2Mb/s"])
    assert "Mbit/s" in e.reason and "Mbps" in e.reason and "kbps" in e.reason, e.reason


def test_a_name_pattern_without_a_group_is_rejected():
    e = _error(GROUP, ["flows[0].range=", "flows[0]={ name = 'v{i}', from = 'S1', to = 'D1', cc = 'reno' }"])
    assert e.field == "flows[0].name" and "this entry is a single flow" in e.reason, e.reason


# ---------------------------------------------------------------------------- one flow of a group


def test_an_override_by_flow_name_reaches_one_flow_of_a_range_group():
    doc = vegaslab.normalize(GROUP, overrides=["flows[vegas3].params.alpha=3", "flows[vegas3].params.beta=5"])
    alphas = [f["algorithm"]["Vegas"]["alpha"] for f in doc["flows"]]
    assert [f["name"] for f in doc["flows"]] == ["vegas1", "vegas2", "vegas3", "vegas4"]
    assert alphas == [1.0, 1.0, 3.0, 1.0]


def test_an_unknown_flow_name_lists_the_flows():
    e = _error(GROUP, ["flows[vegas9].params.alpha=3"])
    assert e.kind == "reference" and "vegas1, vegas2, vegas3, vegas4" in e.reason


# ---------------------------------------------------------------------------- RED average


def test_series_queues_carry_red_average_on_red_rows_and_nan_elsewhere():
    r = vegaslab.run(GROUP)
    q = r.series_queues
    assert "avg_pkts" in q.columns and q["avg_pkts"].dtype == np.float64
    red, other = q[q["queue"] == "R1->R2"], q[q["queue"] == "S1->R1"]
    assert len(red) == 60 and red["avg_pkts"].notna().all() and (red["avg_pkts"] >= 0).all()
    assert other["avg_pkts"].isna().all()
    assert red["avg_pkts"].max() > 0
    # Without a RED queue monitored there is no such column.
    r = vegaslab.run(GROUP, overrides=["dumbbell.bottleneck.queue={ kind = 'droptail', limit = 40 }"])
    assert "avg_pkts" not in r.series_queues.columns


def test_the_average_column_is_the_same_by_json_and_by_columns_and_survives_to_dir(tmp_path):
    core_run = run_core(GROUP, "g.toml", 1, [])
    by_json = Results.from_json(json.dumps(core_run.document()))
    by_columns = Results._from_core(core_run)
    assert "avg_pkts" in by_columns.series_queues.columns
    pd.testing.assert_frame_equal(by_json.series_queues, by_columns.series_queues, check_exact=True)
    by_columns.to_dir(tmp_path / "out")
    back = Results.from_dir(tmp_path / "out")
    pd.testing.assert_frame_equal(back.series_queues, by_columns.series_queues, check_exact=True)


# ---------------------------------------------------------------------------- window-limited

CAPPED = """
[run]
duration = "10s"
[[links]]
endpoints = ["S", "D"]
bandwidth = "10Mbps"
delay = "50ms"
queue = { limit = 1000 }
[[flows]]
name = "big"
from = "S"
to = "D"
cc = "reno"
[[flows]]
name = "free"
from = "D"
to = "S"
cc = "reno"
tcp = { window = 100000 }
"""


def test_a_flow_capped_by_the_default_window_is_named_with_its_window_and_share():
    r = vegaslab.run(CAPPED)
    df = r.window_limited_flows()
    assert list(df.columns) == ["flow", "window", "limited_s", "share"]
    assert list(df["flow"]) == ["big"] and df.loc[0, "window"] == 20.0 and df.loc[0, "share"] > 0.2
    s = r.summary.set_index("flow")["window_limited_s"]
    assert s["big"] == pytest.approx(df.loc[0, "limited_s"]) and s["free"] == 0.0
    line = r.window_warning()
    assert line is not None and "\n" not in line
    assert "big" in line and "window 20" in line and "flows[big].tcp.window=" in line


def test_no_warning_when_the_window_is_raised_and_the_record_round_trips(tmp_path):
    r = vegaslab.run(CAPPED, overrides=["flows[big].tcp.window=100000"])
    assert r.window_limited_flows().empty and r.window_warning() is None
    capped = vegaslab.run(CAPPED)
    capped.to_dir(tmp_path / "o")
    assert Results.from_dir(tmp_path / "o").window_limited_flows().equals(capped.window_limited_flows())


def test_results_without_the_record_say_nothing_rather_than_zero():
    doc = run_core(CAPPED, "c.toml", 1, []).document()
    del doc["meta"]["window_limited"]
    old = Results.from_dict(doc)
    assert old.window_limited_flows().empty and old.summary["window_limited_s"].isna().all()
