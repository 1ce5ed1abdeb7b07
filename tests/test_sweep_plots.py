"""Sweep figures as a reader sees them, checked on the drawn artists: bands inside a metric's
physical range, a warning below three seeds, units on the y axis without an offset, integer
ticks for an integer parameter, a zip labelled by all its members, the scenario's title, PNG,
PDF and SVG, and a pyplot figure (shown by Jupyter) when no axes are given.

Every sweep here runs in this process (``scheduler="synchronous"``): 0.5 s of simulated time on
a two-hop path with seeded packet errors, so the seeds differ."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("vegaslab._core")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import vegaslab  # noqa: E402
from vegaslab import cli  # noqa: E402
from scenario_text import LOSSY_TWO_HOP  # noqa: E402

BASE = """
[meta]
id = "plot-study"
title = "Vegas on a lossy path"

[run]
duration = "0.5s"
""" + LOSSY_TWO_HOP + """
[[flows]]
name = "f2"
from = "S1"
to = "D1"
cc = "reno"
"""

ZIPPED = """
[sweep]
seeds = SEEDS

[[sweep.axis]]
zip = [ { name = "alpha", path = "flows[0].params.alpha", values = [1, 2, 4] },
        { name = "beta",  path = "flows[0].params.beta",  values = [3, 4, 6] } ]
"""


def _sweep(tmp_path, seeds: int):
    path = tmp_path / f"study{seeds}.toml"
    path.write_text(BASE + ZIPPED.replace("SEEDS", str(seeds)), encoding="utf-8")
    return vegaslab.sweep(path, out=tmp_path / f"store{seeds}", scheduler="synchronous"), path


@pytest.fixture(scope="module")
def two_seeds(tmp_path_factory):
    return _sweep(tmp_path_factory.mktemp("two"), 2)


@pytest.fixture(scope="module")
def three_seeds(tmp_path_factory):
    return _sweep(tmp_path_factory.mktemp("three"), 3)


def _axes():
    from matplotlib.figure import Figure

    return Figure().add_subplot()


def _band_ys(ax) -> np.ndarray:
    return np.concatenate([p.vertices[:, 1] for c in ax.collections for p in c.get_paths()])


def test_a_band_never_leaves_the_metrics_physical_range_and_the_clipping_is_said(two_seeds):
    res, _ = two_seeds
    for metric, low, high in [("jain_throughput", 0.0, 1.0), ("goodput_bps_total", 0.0, np.inf)]:
        stats = res.summary(metric, "alpha")
        assert (stats["lo"] >= low).all() and (stats["hi"] <= high).all()
        ax = _axes()
        with pytest.warns(UserWarning):
            res.plot(metric, "alpha", ax=ax)
        scale = 1e6 if metric.endswith("_bps_total") else 1.0
        ys = _band_ys(ax)
        assert ys.size and ys.min() >= low / scale and ys.max() <= high / scale
        assert ("clipped" in ax.get_title()) == bool(stats["clipped"].any())
    # With 2 seeds the t factor is 12.7: the fairness band is clipped at a point that varies.
    stats = res.summary("jain_throughput", "alpha")
    assert stats["clipped"].any(), stats


def test_fewer_than_three_seeds_warn_in_python_and_on_the_command_line(two_seeds, three_seeds, capsys):
    res, path = two_seeds
    with pytest.warns(UserWarning, match="only 2 seeds at a point.*at least 3"):
        res.plot("jain_throughput", "alpha", ax=_axes())
    res3, _ = three_seeds
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res3.plot("jain_throughput", "alpha", ax=_axes())

    assert cli.main(["sweep", str(path), "--out", str(res.out), "--plot", "jain_throughput:alpha"]) == 0
    err = capsys.readouterr().err
    assert "vegaslab: warning: jain_throughput vs alpha: only 2 seeds at a point" in err


def test_the_y_axis_has_the_unit_in_mbit_per_s_and_no_offset_or_exponent(three_seeds):
    res, _ = three_seeds
    ax = _axes()
    res.plot("goodput_bps", "alpha", flow="f1", ax=ax)
    assert ax.get_ylabel() == "goodput of flow f1 (Mbit/s)"
    ax.figure.canvas.draw()
    fmt = ax.yaxis.get_major_formatter()
    assert fmt.get_offset() == "" and not fmt.get_useOffset()
    assert all("e" not in t.get_text() for t in ax.get_yticklabels())
    mean = res.summary("goodput_bps", "alpha", flow="f1")["mean"].to_numpy()
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), mean / 1e6)
    assert ax.get_ylim()[0] == 0.0, "a goodput axis starts at zero"


def test_a_run_level_metric_is_not_labelled_with_the_flow_of_another_plot(three_seeds):
    res, _ = three_seeds
    ax = _axes()
    res.plot("jain_throughput", "alpha", flow="f1", ax=ax)
    assert "f1" not in ax.get_ylabel() and "f1" not in ax.get_title()
    assert ax.get_ylabel() == "Jain's fairness index of throughput"
    assert ax.get_ylim()[1] <= 1.05


def test_an_integer_zipped_axis_has_a_tick_per_value_labelled_by_every_member(three_seeds):
    res, _ = three_seeds
    ax = _axes()
    res.plot("jain_throughput", "alpha", ax=ax)
    assert ax.get_xlabel() == "alpha / beta"
    assert list(ax.get_xticks()) == [1, 2, 4]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1 / 3", "2 / 4", "4 / 6"]
    assert "alpha / beta" in ax.get_title()


def test_per_flow_lines_have_a_legend_outside_the_axes_and_the_title_is_the_scenarios(three_seeds):
    res, _ = three_seeds
    ax = _axes()
    res.plot("goodput_bps", "alpha", ax=ax)  # two flows, only alpha varies: a line per flow
    assert ax.get_title().splitlines()[0] == "Vegas on a lossy path"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["flow = f1", "flow = f2"]
    anchor = legend.get_bbox_to_anchor().transformed(ax.transAxes.inverted())
    assert anchor.x0 >= 1.0, "the legend sits to the right of the axes, not on the data"


@pytest.mark.parametrize("fmt, magic", [("png", b"\x89PNG"), ("pdf", b"%PDF"), ("svg", b"<?xml")])
def test_figures_are_written_as_png_pdf_or_svg_with_the_same_bytes_each_time(three_seeds, tmp_path, fmt, magic):
    res, _ = three_seeds
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = res.save_plot("jain_throughput", "alpha", tmp_path / "a", format=fmt)
    again = res.save_plot("jain_throughput", "alpha", tmp_path / "b", format=fmt)
    assert first.name == f"jain_throughput-vs-alpha.{fmt}"
    assert first.read_bytes().startswith(magic)
    assert first.read_bytes() == again.read_bytes()
    # no date (which two saves in one second would share)
    assert b"CreationDate" not in first.read_bytes() and b"<dc:date>" not in first.read_bytes()


def test_the_command_line_writes_the_format_asked_for(three_seeds, capsys):
    res, path = three_seeds
    assert cli.main(["sweep", str(path), "--out", str(res.out), "--plot", "goodput_bps:alpha", "--flow", "f2",
                     "--format", "svg"]) == 0
    assert (res.out / "goodput_bps-vs-alpha.svg").read_bytes().startswith(b"<?xml")
    assert "wrote" in capsys.readouterr().out


def test_plot_without_axes_draws_on_a_pyplot_figure_that_a_notebook_shows(three_seeds):
    import matplotlib.pyplot as plt

    res, _ = three_seeds
    ax = res.plot("jain_throughput", "alpha")
    try:
        assert ax.figure.number in plt.get_fignums(), "pyplot manages it, so Jupyter displays it"
    finally:
        plt.close(ax.figure)


def test_plot_with_a_bad_metric_leaves_no_empty_figure_behind(three_seeds):
    import matplotlib.pyplot as plt

    res, _ = three_seeds
    before = plt.get_fignums()
    with pytest.raises(Exception, match="goodput_bsp"):
        res.plot("goodput_bsp", "alpha")
    assert plt.get_fignums() == before


def test_a_misspelt_metric_parameter_or_flow_is_refused_before_any_run_with_a_suggestion(tmp_path, capsys):
    path = tmp_path / "study.toml"
    path.write_text(BASE + ZIPPED.replace("SEEDS", "3"), encoding="utf-8")
    out = tmp_path / "store"
    for plot, flow, expected in [("goodput_bsp:alpha", "f1", "did you mean 'goodput_bps'?"),
                                 ("goodput_bps:alpah", "f1", "did you mean 'alpha'?"),
                                 ("goodput_bps:alpha", "f11", "did you mean 'f1'?")]:
        assert cli.main(["sweep", str(path), "--out", str(out), "--plot", plot, "--flow", flow]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"vegaslab: --plot {plot}:") and expected in err, err
        assert not out.exists(), "nothing ran"


def test_a_metric_without_a_value_in_any_run_is_an_error_not_an_empty_figure(three_seeds):
    res, _ = three_seeds  # 0.5 s runs of unlimited flows: none completes
    assert res.runs["completion_time_s_max"].isna().all()
    with pytest.raises(vegaslab.VegaslabError, match="'completion_time_s_max' has no value in any stored run"):
        res.plot("completion_time_s_max", "alpha", ax=_axes())
