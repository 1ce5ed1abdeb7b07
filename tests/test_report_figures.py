"""The report's figures as a reader of a paper sees them: flows named as the paper names them,
y axes that do not magnify a sub-percent difference, windowed throughput instead of bins drawn
as a solid band, legends beside the axes, the run's events marked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import vegaslab
from vegaslab.plots import windowed_mean
from vegaslab.report import figures
from vegaslab.study import catalog
from vegaslab.study.claims import RunSet

#: examples/figure-events.toml (a link failure, a delay change, a late flow) as a catalog entry
#: of two variants with a published level, and two figures.
EVENTS = Path(__file__).resolve().parents[1] / "examples" / "figure-events.toml"
ENTRY_TABLES = """
[[variant]]
name = "vegas-a"
set = { "flows[0].cc" = "vegas-a", "flows[1].cc" = "newreno" }
published = { "f1.throughput_bps" = 900000 }

[[variant]]
name = "two-reno"
set = { "flows[0].cc" = "reno", "flows[1].cc" = "reno" }

[[meta.figures]]
kind = "throughput"
title = "Throughput"

[[meta.figures]]
kind = "cwnd"
title = "Congestion window"
flow_names = { f1 = "the long connection" }
"""


@pytest.fixture(scope="module")
def entry_and_runs(tmp_path_factory):
    pytest.importorskip("vegaslab._core")
    path = tmp_path_factory.mktemp("catalog") / "named.toml"
    text = EVENTS.read_text().replace("[meta]\n", '[meta]\nid = "named"\npaper = "vegas-a"\nfigure = "Fig. 2"\n', 1)
    path.write_text(text.replace("[monitor]", ENTRY_TABLES + "\n[monitor]", 1))
    entry = catalog.load_entry(path)
    runs = {v.name: [vegaslab.run(v.scenario_path, overrides=list(v.overrides))] for v in entry.runs()}
    return entry, RunSet(runs=runs)


@pytest.fixture
def drawn(monkeypatch):
    """The matplotlib figures the report encodes, in order."""
    figs = []
    encode = figures._png

    def keep(fig):
        figs.append(fig)
        return encode(fig)

    monkeypatch.setattr(figures, "_png", keep)
    return figs


def _panels(fig) -> dict[str, object]:
    return {ax.get_title(loc="left").split(" ·")[0]: ax for ax in fig.axes if ax.get_visible()}


def _legend_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_flows_are_named_by_their_algorithm_as_the_paper_spells_it(entry_and_runs, drawn):
    entry, rs = entry_and_runs
    figures.render_figures(entry, rs)
    panels = _panels(drawn[0])
    assert "Vegas-A (running mean)" in _legend_texts(panels["vegas-a"])
    assert "Vegas-A published 900 kbit/s" in _legend_texts(panels["vegas-a"])
    assert "NewReno (running mean)" in _legend_texts(panels["vegas-a"])
    # two flows of one algorithm: connections, numbered
    texts = _legend_texts(panels["two-reno"])
    assert "connection 1 (Reno) (running mean)" in texts and "connection 2 (Reno) (running mean)" in texts
    assert not any(t.startswith("f1") for t in texts)


def test_a_figures_flow_names_table_names_a_flow_as_the_paper_does(entry_and_runs, drawn):
    entry, rs = entry_and_runs
    figures.render_figures(entry, rs)
    assert "the long connection" in _legend_texts(_panels(drawn[1])["vegas-a"])


def test_throughput_panels_draw_the_windowed_mean_not_the_bins(entry_and_runs, drawn):
    entry, rs = entry_and_runs
    figures.render_figures(entry, rs)
    ax = _panels(drawn[0])["vegas-a"]
    lines = {line.get_label(): line for line in ax.get_lines()}
    t, y = (np.asarray(v, dtype=float) for v in lines["Vegas-A (1 s mean)"].get_data())
    bins = rs.runs["vegas-a"][0].series_flows
    bins = bins[bins["flow"] == "f1"].sort_values("time_s")
    assert ax.get_ylabel() == "throughput (kbit/s)"
    assert np.allclose(y, windowed_mean(t, bins["throughput_bps"].to_numpy(dtype=float) / 1e3, 1.0))
    assert not any(line.get_linewidth() <= 0.5 for line in ax.get_lines())  # no per-bin band


def test_a_published_level_above_our_curve_stays_inside_the_axis(entry_and_runs, drawn):
    entry, rs = entry_and_runs
    figures.render_figures(entry, rs)
    ax = _panels(drawn[0])["vegas-a"]
    (level,) = [line for line in ax.get_lines() if line.get_label().startswith("Vegas-A published")]
    assert ax.get_ylim()[1] > level.get_ydata()[0] == 900.0


def test_every_panels_legend_sits_beside_it_and_the_delay_change_is_marked(entry_and_runs, drawn):
    entry, rs = entry_and_runs
    figures.render_figures(entry, rs)
    for fig in drawn:
        renderer = fig.canvas.get_renderer()
        for name, ax in _panels(fig).items():
            assert ax.get_legend().get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1 - 0.5, name
            assert {"S1-R1 delay 60 ms at 8 s", "R1-D1 down"} <= set(_legend_texts(ax)), name
    assert "flow starts (NewReno)" in _legend_texts(_panels(drawn[0])["vegas-a"])


@pytest.mark.parametrize("values, expected", [
    ([160.2, 162.5], (143.8, 178.9)),     # a 1.4% difference: at least a 20% span about the middle
    ([0.0, 40.0], (0.0, 43.2)),           # from 0, never below it for values that cannot be negative
    ([1.0, 1.02], (0.9, 1.12)),
    ([-3.0, 5.0], (-3.32, 5.32)),         # a wide range: padded, not widened
])
def test_honest_limits_keep_a_small_difference_small(values, expected):
    lo, hi = figures.honest_ylim(np.array(values))
    assert (lo, hi) == pytest.approx(expected, abs=0.01)
    assert hi - lo >= figures.MIN_RELATIVE_SPAN * max(map(abs, values))


class _Measured:
    """A run that only answers :meth:`value` (what a line figure reads)."""

    def __init__(self, value: float) -> None:
        self._value = value

    def value(self, key: str) -> float:
        return self._value


def test_a_line_figure_of_near_equal_completion_times_does_not_fill_its_axis(entry_and_runs, drawn):
    entry, _rs = entry_and_runs
    spec = {"kind": "line", "metric": "f1.completion_time_s", "x": [10, 30],
            "series": [{"label": "Vegas-A", "variant": "q{x}"}]}
    rs = RunSet(runs={"q10": [_Measured(160.2)], "q30": [_Measured(162.5)]})
    assert figures._line_figure(spec, entry, rs) is not None
    (ax,) = drawn[-1].axes
    lo, hi = ax.get_ylim()
    assert (162.5 - 160.2) / (hi - lo) < 0.1  # the 1.4% difference takes less than a tenth of the axis


def test_paper_flow_names_keep_a_flow_without_an_algorithm():
    from vegaslab.figure_marks import paper_flow_names

    assert paper_flow_names({"f1": "vegas-a", "f2": "newreno"}, ["f1", "f2", "vbr"]) == {
        "f1": "Vegas-A", "f2": "NewReno", "vbr": "vbr"}
    assert paper_flow_names({"a": "cubic", "b": "cubic"}, ["a", "b"]) == {"a": "connection 1 (CUBIC)",
                                                                         "b": "connection 2 (CUBIC)"}



def test_a_connection_keeps_its_number_in_the_run_when_a_panel_shows_only_some_flows():
    import pandas as pd

    from vegaslab.report.figures import flow_names

    class Run:
        flows = pd.DataFrame({"flow": ["f1", "f2", "f3"], "cc": ["vegas", "reno", "reno"]})

    assert flow_names({}, Run(), ["f3", "f2"]) == {"f3": "connection 3 (Reno)", "f2": "connection 2 (Reno)"}
    assert flow_names({"flow_names": {"f3": "late"}}, Run(), ["f1", "f3"]) == {"f1": "Vegas", "f3": "late"}
