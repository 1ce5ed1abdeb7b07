"""Results in a notebook: column dtypes that do not depend on a table being empty,
the HTML view, plots that take and return a matplotlib ``ax``, several runs as one set of
tables (``vegaslab.concat``), and the README's notebook recipe run verbatim."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported anywhere: no display in the tests

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import vegaslab  # noqa: E402
from vegaslab.results import Results  # noqa: E402
from scenario_text import TWO_HOP  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
#: What pandas gives a non-empty text column (``str`` in pandas 3, ``object`` in pandas 2).
TEXT = pd.Series(["x"]).dtype

#: The documented columns by kind (docs/results-format.md), written out here so the test does
#: not take them from the code it checks.
TEXT_COLS = {
    "flows": ["flow", "cc", "from", "to"], "queues": ["queue", "kind"], "links": ["link"],
    "udp": ["source", "model", "from", "to"], "series_flows": ["flow"], "series_queues": ["queue"],
}
COUNT_COLS = {
    "flows": ["sent_pkts", "sent_bytes", "retransmitted_pkts", "fast_retransmits", "timeouts",
              "slow_start_entries", "received_pkts", "received_bytes", "delivered_pkts", "delivered_bytes",
              "in_flight_pkts", "dropped_pkts"],
    "queues": ["limit_pkts", "arrived_pkts", "dropped_pkts", "departed_pkts", "max_len_pkts"],
    "links": ["sent_bytes"],
    "udp": ["sent_pkts", "sent_bytes", "received_pkts", "received_bytes", "dropped_pkts", "dropped_bytes",
            "in_flight_pkts"],
    "series_flows": [], "series_queues": ["length_pkts"],
}
FLOAT_COLS = {
    "flows": ["start_s", "end_s", "throughput_bps", "goodput_bps", "active_throughput_bps", "completion_time_s",
              "final_cwnd_pkts"],
    "queues": ["loss_ratio", "mean_len_pkts", "std_len_pkts"],
    "links": ["bandwidth_bps", "utilisation_ratio"],
    "udp": ["start_s", "end_s", "throughput_bps", "active_throughput_bps", "offered_bps", "nominal_rate_bps"],
    "series_flows": ["time_s", "cwnd_pkts", "ssthresh_pkts", "rtt_s", "throughput_bps"],
    "series_queues": ["time_s"],
}
TABLE_NAMES = list(TEXT_COLS)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def _axes():
    return Figure(figsize=(6, 3)).add_subplot()


def _wrong_dtypes(res: Results) -> list[str]:
    wrong = []
    for table in TABLE_NAMES:
        df = getattr(res, table)
        for kind, cols, ok in (("text", TEXT_COLS, lambda d: d == TEXT),
                               ("int64", COUNT_COLS, lambda d: d == np.int64),
                               ("float64", FLOAT_COLS, lambda d: d == np.float64)):
            wrong += [f"{table}.{c}: {df[c].dtype}, want {kind}" for c in cols[table] if not ok(df[c].dtype)]
    return wrong


# ---------------------------------------------------------------------- dtypes


def test_an_empty_table_keeps_text_columns_as_text_and_counts_as_integers(doc):
    doc["series"] = None
    doc["udp"] = []
    res = Results.from_dict(doc)
    assert res.udp.empty and res.series_flows.empty and res.series_queues.empty
    assert _wrong_dtypes(res) == []


def test_a_document_with_nothing_but_meta_has_every_column_in_its_dtype():
    res = Results.from_dict({"meta": {"scenario": "nothing"}})
    assert all(getattr(res, t).empty for t in TABLE_NAMES)
    assert _wrong_dtypes(res) == []


def test_a_run_gives_text_names_integer_counts_and_float_measures_in_every_table():
    res = vegaslab.run(TWO_HOP + '\n[run]\nduration = "2s"\n[monitor]\ncwnd = true\nthroughput = true\nall_queues = true\n')
    assert len(res.flows) and len(res.series_flows) and len(res.series_queues) and res.udp.empty
    assert _wrong_dtypes(res) == []
    assert res.series_queues["length_pkts"].dtype == np.int64  # a count of packets, not float64 as before
    assert res.series_flows["active"].dtype == np.int64


def test_a_count_missing_on_some_rows_is_float_with_nan_and_whole_counts_stay_integers(doc):
    doc["flows"][0]["vegas_decisions"] = 12  # the Vegas flow has it, the Reno flow not
    res = Results.from_dict(doc)
    col = res.flows["vegas_decisions"]
    assert col.dtype == np.float64 and col.iloc[0] == 12 and np.isnan(col.iloc[1])
    doc["flows"][1]["vegas_decisions"] = 3
    assert Results.from_dict(doc).flows["vegas_decisions"].dtype == np.int64


def test_a_documented_count_the_document_lacks_is_nan_not_zero(doc):
    for row in doc["flows"]:
        row.pop("acked_pkts", None)
    col = Results.from_dict(doc).flows["acked_pkts"]
    assert col.dtype == np.float64 and col.isna().all()


def test_parquet_round_trip_keeps_every_dtype_including_empty_tables(tmp_path):
    res = vegaslab.run(TWO_HOP + '\n[run]\nduration = "1s"\n[monitor]\ncwnd = true\nqueues = ["R1->D1"]\n')
    res.to_dir(tmp_path / "run")
    back = Results.from_dir(tmp_path / "run")
    for table in TABLE_NAMES:
        pd.testing.assert_frame_equal(getattr(back, table), getattr(res, table), check_dtype=True, obj=table)
    assert _wrong_dtypes(back) == []


def test_the_json_and_the_column_paths_give_the_same_dtypes():
    import json

    from vegaslab.core import run_core

    text = TWO_HOP + '\n[run]\nduration = "1s"\n[monitor]\ncwnd = true\nqueues = ["R1->D1"]\n'
    direct = vegaslab.run(text, seed=1)
    via_json = Results.from_json(json.dumps(run_core(text, "<string>", 1, []).document()))
    for table in TABLE_NAMES:
        a, b = getattr(direct, table), getattr(via_json, table)
        assert dict(a.dtypes) == dict(b.dtypes), table


# ---------------------------------------------------------------------- HTML


def test_html_view_names_the_run_and_lists_the_tables_and_the_recorded_series(res):
    res.meta["provenance"] = {"vegaslab_version": "9.9.9"}
    html = res._repr_html_()
    assert "tiny" in html and "seed 7" in html and "0.6 s simulated" in html
    assert "vegaslab 9.9.9" in html and "core 0.1.0" in html
    assert "goodput_mbps" in html and ">vegas<" in html and ">reno<" in html  # the summary table
    rows = dict(re.findall(r"<code>(\w+)</code></td><td>([\d,]+)</td>", html))
    assert rows == {"flows": "2", "queues": "3", "links": "2", "udp": "0", "series_flows": "12",
                    "series_queues": str(len(res.series_queues))}
    assert "cwnd_pkts, ssthresh_pkts, rtt_s, throughput_bps of 2 flows" in html
    assert "length_pkts of" in html


def test_html_view_says_which_monitors_were_off(doc):
    doc["series"] = None
    html = Results.from_dict(doc)._repr_html_()
    assert "none (monitor.cwnd / monitor.throughput off)" in html and "none (monitor.queues off)" in html


def test_html_view_escapes_every_name_and_value(doc):
    doc["meta"]["scenario"] = "<script>alert(1)</script>"
    doc["meta"]["version"] = '"><img src=x onerror=alert(2)>'
    doc["meta"]["seed"] = "<i>7</i>"
    doc["flows"][0]["flow"] = "<b>vegas</b>"
    doc["flows"][0]["cc"] = "a&b"
    html = Results.from_dict(doc)._repr_html_()
    assert "<script" not in html and "<img" not in html and "<b>" not in html and "<i>" not in html
    assert "&lt;script&gt;" in html and "&lt;b&gt;vegas&lt;/b&gt;" in html and "a&amp;b" in html


def test_html_view_of_many_flows_shows_the_first_twenty_and_counts_the_rest(doc):
    base = doc["flows"][0]
    doc["flows"] = [dict(base, flow=f"f{i}") for i in range(25)]
    html = Results.from_dict(doc)._repr_html_()
    assert ">f19<" in html and ">f20<" not in html and "5 more rows" in html


# ---------------------------------------------------------------------- plots


def test_plot_cwnd_draws_one_labelled_line_per_flow_on_the_given_ax_and_returns_it(res):
    ax = _axes()
    assert res.plot_cwnd(ax=ax) is ax
    assert [line.get_label() for line in ax.get_lines()] == ["vegas", "reno"]
    assert ax.get_xlabel() == "time (s)" and ax.get_ylabel() == "cwnd (packets)"
    vegas = res.series_flows[res.series_flows["flow"] == "vegas"].dropna(subset=["cwnd_pkts"]).sort_values("time_s")
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), vegas["cwnd_pkts"].to_numpy())
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["vegas", "reno"]


def test_plots_pick_flows_by_name_and_reject_unknown_names(res):
    ax = res.plot_rtt(ax=_axes(), flows=["reno"])
    assert [line.get_label() for line in ax.get_lines()] == ["reno"] and ax.get_ylabel() == "RTT (ms)"
    reno = res.series_flows[res.series_flows["flow"] == "reno"].dropna(subset=["rtt_s"]).sort_values("time_s")
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), reno["rtt_s"].to_numpy() * 1e3)
    with pytest.raises(ValueError, match=r"flows: no cwnd_pkts samples for 'nope' \(with samples: vegas, reno\)"):
        res.plot_cwnd(ax=_axes(), flows=["nope"])


def test_plot_throughput_names_its_unit_and_can_draw_the_running_mean_from_each_flows_start(res):
    ax = res.plot_throughput(ax=_axes(), unit="kbit/s")
    assert ax.get_ylabel() == "throughput (kbit/s)" and len(ax.get_lines()) == 2
    s = res.series_flows
    vegas = s[s["flow"] == "vegas"].dropna(subset=["throughput_bps"]).sort_values("time_s")
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), vegas["throughput_bps"].to_numpy() / 1e3)
    ax = res.plot_throughput(ax=_axes(), running_mean=True, unit="bit/s")
    reno = s[(s["flow"] == "reno") & (s["time_s"] >= 0.2)].dropna(subset=["throughput_bps"]).sort_values("time_s")
    y = reno["throughput_bps"].to_numpy()
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata(), np.cumsum(y) / np.arange(1, len(y) + 1))
    with pytest.raises(ValueError, match="unit: must be one of bit/s, kbit/s, Mbit/s, Gbit/s"):
        res.plot_throughput(ax=_axes(), unit="Mbps")


def test_plot_throughput_draws_each_flows_mean_over_a_trailing_window(res):
    from vegaslab.plots import windowed_mean

    ax = res.plot_throughput(ax=_axes(), window=0.5, unit="bit/s")
    s = res.series_flows
    vegas = s[s["flow"] == "vegas"].dropna(subset=["throughput_bps"]).sort_values("time_s")
    t, y = vegas["time_s"].to_numpy(), vegas["throughput_bps"].to_numpy()
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), windowed_mean(t, y, 0.5))
    assert not np.allclose(ax.get_lines()[0].get_ydata(), y)  # averaged, not the bins
    with pytest.raises(ValueError, match="window: a number of seconds > 0, without running_mean"):
        res.plot_throughput(ax=_axes(), window=1.0, running_mean=True)


def test_plot_queue_draws_steps_per_queue(res):
    ax = res.plot_queue(ax=_axes())
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == list(dict.fromkeys(res.series_queues["queue"]))
    assert all(line.get_drawstyle() == "steps-post" for line in ax.get_lines())
    assert ax.get_ylabel() == "queue length (packets)"


def test_a_plot_of_a_series_not_recorded_names_the_monitor_to_switch_on(doc):
    doc["series"] = None
    res = Results.from_dict(doc)
    with pytest.raises(ValueError, match=r"tiny seed 7: no cwnd_pkts samples .*monitor\.cwnd"):
        res.plot_cwnd(ax=_axes())
    with pytest.raises(ValueError, match=r"monitor\.queues"):
        res.plot_queue(ax=_axes())


def test_a_plot_without_ax_draws_a_new_titled_pyplot_figure(res):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    ax = res.plot_cwnd()
    assert plt.get_fignums() != before and ax.figure.number in plt.get_fignums()
    assert ax.get_title() == "tiny seed 7: congestion window"


def test_importing_and_using_results_does_not_import_matplotlib():
    code = ("import json, sys; from vegaslab.results import Results; "
            f"r = Results.from_json(open({str(DATA / 'results-small.json')!r}).read()); "
            "r._repr_html_(); r.summary; print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------- several runs


def _two(doc) -> list[Results]:
    other = copy.deepcopy(doc)
    other["meta"]["seed"] = 8
    other["flows"] = other["flows"][:1]
    return [Results.from_dict(doc), Results.from_dict(other)]


def test_concat_stacks_every_table_with_a_run_column_from_scenario_and_seed(doc):
    a, b = _two(doc)
    both = vegaslab.concat([a, b])
    assert isinstance(both, vegaslab.ResultsSet) and len(both) == 2
    assert list(both.flows["run"]) == ["tiny seed 7", "tiny seed 7", "tiny seed 8"]
    assert list(both.flows.columns[:3]) == ["run", "flow", "cc"]
    for table in TABLE_NAMES:
        stacked, parts = getattr(both, table), [getattr(a, table), getattr(b, table)]
        assert len(stacked) == sum(map(len, parts)), table
        pd.testing.assert_frame_equal(stacked[stacked["run"] == "tiny seed 8"].drop(columns="run").reset_index(drop=True),
                                      parts[1], check_dtype=True, obj=table)
    assert both.flows["retransmitted_pkts"].dtype == np.int64 and both.udp["model"].dtype == TEXT
    assert list(both.summary["run"]) == ["tiny seed 7", "tiny seed 7", "tiny seed 8"]
    assert list(both.meta["seed"]) == [7, 8] and list(both.meta["run"]) == ["tiny seed 7", "tiny seed 8"]
    assert both.runs["tiny seed 8"] is b
    assert "2 runs" in both._repr_html_() and "tiny seed 8" in repr(both)


def test_concat_types_frames_a_user_assigned_by_the_rules_of_the_cores_columns(doc):
    # A nullable-integer count with a missing value (pandas' Int64) used to stop concat with
    # "cannot convert NA to integer"; it is now a float count with NaN, as everywhere else.
    from vegaslab.columns import typed_columns
    from vegaslab.results import TABLES

    a, b = _two(doc)
    a.flows = a.flows.assign(sent_pkts=pd.array([None] + [3] * (len(a.flows) - 1), dtype="Int64"),
                             timeouts=pd.array([1] * len(a.flows), dtype="Int64"))
    b.flows = b.flows.assign(sent_pkts=pd.array([4] * len(b.flows), dtype="Int64"),
                             goodput_bps=["1.5e6"] * len(b.flows), timeouts=pd.array([2] * len(b.flows), dtype="Int64"))
    both = vegaslab.concat([a, b]).flows
    assert both["sent_pkts"].dtype == np.float64 and np.isnan(both["sent_pkts"].iloc[0])
    assert list(both["sent_pkts"].iloc[1:]) == [3.0] * (len(a.flows) - 1) + [4.0] * len(b.flows)
    assert both["timeouts"].dtype == np.int64  # every value present and whole
    assert both["goodput_bps"].dtype == np.float64 and both["goodput_bps"].iloc[-1] == 1.5e6
    raw = {c: both[c].to_numpy() for c in ("sent_pkts", "timeouts", "goodput_bps")}
    expected = typed_columns(raw, TABLES["flows"][1])
    for c in raw:
        assert both[c].dtype == expected[c].dtype, c


def test_concat_takes_keys_with_several_label_columns_or_a_mapping(doc):
    a, b = _two(doc)
    both = Results.concat([a, b], keys=[("newreno", 1), ("vegas", 2)], names=("cc_variant", "n"))
    assert list(both.flows.columns[:2]) == ["cc_variant", "n"]
    assert list(both.flows["n"]) == [1, 1, 2] and both.flows["n"].dtype == np.int64
    by_map = vegaslab.concat({"left": a, "right": b}, names="side")
    assert list(by_map.series_flows["side"].unique()) == ["left", "right"]


def test_concat_refuses_labels_that_do_not_tell_the_runs_apart_and_names_that_are_columns(doc):
    a, _ = _two(doc)
    with pytest.raises(ValueError, match=r"keys\[1\]: 'tiny seed 7' labels run 0 too"):
        vegaslab.concat([a, a])
    with pytest.raises(ValueError, match=r"names: 'flow' is already a column of flows"):
        vegaslab.concat([a], names="flow")
    with pytest.raises(ValueError, match="keys: one per run, got 1 keys for 2 runs"):
        vegaslab.concat([a, a], keys=["x"])
    with pytest.raises(TypeError, match=r"results\[1\]: expected a vegaslab Results, got DataFrame"):
        vegaslab.concat([a, a.flows])
    with pytest.raises(ValueError, match="nothing to concatenate"):
        vegaslab.concat([])


def test_a_set_draws_one_line_per_run_and_flow(doc):
    both = vegaslab.concat(_two(doc), keys=["A", "B"])
    ax = both.plot_cwnd(ax=_axes())
    assert [line.get_label() for line in ax.get_lines()] == ["A: vegas", "A: reno", "B: vegas", "B: reno"]
    ax = both.plot_queue(ax=_axes(), queues=["R1->R2"])
    assert [line.get_label() for line in ax.get_lines()] == ["A: R1->R2", "B: R1->R2"]


# ---------------------------------------------------------------------- README recipe


def _readme_recipe() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- recipe: notebook[^>]*-->\n```python\n(.*?)\n```", text, re.S)
    assert m, "README.md: no ```python block after the '<!-- recipe: notebook' marker"
    return m.group(1)


def test_the_readme_notebook_recipe_runs_verbatim(capsys):
    import matplotlib.pyplot as plt

    namespace: dict = {"__name__": "readme_recipe"}
    exec(compile(_readme_recipe(), "README.md (In a notebook)", "exec"), namespace)  # noqa: S102
    both, runs, axes = namespace["both"], namespace["runs"], namespace["axes"]
    assert len(both) == 2 and set(both.flows["run"]) == {"av-onoff-10 seed 1", "av-onoff-10 seed 2"}
    for ax, r in zip(axes, runs):  # one line per flow that has cwnd samples
        assert [line.get_label() for line in ax.get_lines()] == list(dict.fromkeys(
            r.series_flows.dropna(subset=["cwnd_pkts"])["flow"]))
        assert ax.get_ylabel() == "cwnd (packets)"
    last = plt.gcf().axes[0]
    assert [line.get_label() for line in last.get_lines()] == [
        "av-onoff-10 seed 1: u1", "av-onoff-10 seed 1: u2", "av-onoff-10 seed 2: u1", "av-onoff-10 seed 2: u2"]
    printed = capsys.readouterr().out
    assert "goodput_mbps" in printed and "av-onoff-10 seed 2" in printed
