"""Plot decimation (vegaslab.plots.m4_indices and the figures that use it): a dense series is
reduced to what its pixel columns show, without losing a peak, a dip or a gap."""

from __future__ import annotations

import numpy as np
import pytest

from vegaslab import plots


def _column_summary(columns, y):
    """Per pixel column: first, last, lowest and highest value (what M4 must preserve)."""
    out = {}
    for c in np.unique(columns):
        v = y[columns == c]
        out[int(c)] = (v[0], v[-1], v.min(), v.max())
    return out


def test_m4_keeps_the_first_last_lowest_and_highest_sample_of_every_pixel_column():
    rng = np.random.default_rng(7)
    n, width = 100_000, 300
    y = rng.normal(10.0, 1.0, n)
    y[12_345] = 1000.0  # a one-sample spike
    y[67_890] = -500.0  # and a one-sample dip
    columns = np.floor(np.linspace(0, width, n, endpoint=False)).astype(np.int64)
    keep = plots.m4_indices(columns, y)
    assert 12_345 in keep and 67_890 in keep
    assert len(keep) <= 4 * width and np.all(np.diff(keep) > 0)  # at most 4 a column, in order
    assert _column_summary(columns[keep], y[keep]) == _column_summary(columns, y)


def test_decimate_keeps_a_spike_and_the_end_points_of_a_dense_series():
    t = np.linspace(0.0, 200.0, 200_001)
    y = np.sin(t)
    y[150_000] = 50.0
    x2, y2 = plots.decimate(t, y, t / 200.0 * 800)  # 800 pixel columns
    assert len(x2) <= 4 * 801 and y2.max() == 50.0 and x2[np.argmax(y2)] == t[150_000]
    assert (x2[0], y2[0], x2[-1], y2[-1]) == (t[0], y[0], t[-1], y[-1])


@pytest.mark.parametrize("n", [0, 1, 2, 50, 3200])
def test_decimate_leaves_series_with_at_most_four_samples_per_column_untouched(n):
    rng = np.random.default_rng(n)
    x, y = np.sort(rng.random(n)) * 10, rng.random(n)
    x2, y2 = plots.decimate(x, y, np.linspace(0.0, 799.99, n))  # spread over 800 pixel columns
    assert np.array_equal(x2, x) and np.array_equal(y2, y)


def test_m4_keeps_every_gap_and_the_samples_on_both_sides_of_it():
    n = 10_000
    y = np.cos(np.arange(n) / 100.0)
    gaps = [10, 11, 5_000, 9_999]
    y[gaps] = np.nan
    columns = np.arange(n) // 100  # 100 samples a column
    keep = set(plots.m4_indices(columns, y).tolist())
    for g in gaps:
        assert g in keep  # the line stays broken there
    assert {9, 12, 4_999, 5_001, 9_998} <= keep  # and ends/resumes at the same samples


def _dark_extent(png, box):
    """Per pixel column of ``box`` (x0, y0, x1, y1): the first and last row drawn in black
    (``10**6`` and ``-1`` where nothing is)."""
    from PIL import Image

    px = np.asarray(Image.open(png).convert("L"), dtype=int)[box[1]:box[3], box[0]:box[2]]
    dark = px < 100
    rows = np.arange(dark.shape[0])[:, None]
    return np.where(dark, rows, 10**6).min(axis=0), np.where(dark, rows, -1).max(axis=0)


def _within_a_pixel(inner, outer) -> bool:
    """Whether every column of ``inner`` is drawn within the rows ``outer`` covers in the same
    column or its neighbours (the half-width of a line spills ink sideways), give or take a
    row of anti-aliasing."""
    (top_i, bottom_i), (top_o, bottom_o) = inner, outer
    top = np.minimum.reduce([top_o, np.roll(top_o, 1), np.roll(top_o, -1)])
    bottom = np.maximum.reduce([bottom_o, np.roll(bottom_o, 1), np.roll(bottom_o, -1)])
    drawn = bottom_i >= 0
    return bool(np.all(top_i[drawn] >= top[drawn] - 1) and np.all(bottom_i[drawn] <= bottom[drawn] + 1))


def test_a_decimated_figure_draws_the_same_pixels_to_within_a_pixel_and_keeps_a_spike(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    t = np.linspace(0.0, 100.0, 60_001)
    y = np.cumsum(rng.normal(0, 1, t.size))
    y[33_333] = y.max() + 200.0  # a one-sample spike, narrower than a pixel

    def draw(path):
        fig, ax = plots._figure("dense", "value")
        ax.plot(t, y, color="black", lw=1.0)
        plots._save(fig, ax, path, 0)
        return ax

    ax = draw(tmp_path / "decimated.png")
    (line,) = ax.get_lines()
    assert len(line.get_xdata()) <= 4 * (ax.bbox.width + 1)  # what Agg was handed
    assert y[33_333] in line.get_ydata()
    monkeypatch.setattr(plots, "_decimate_lines", lambda ax: None)
    draw(tmp_path / "full.png")

    height = ax.figure.bbox.height
    x0, y0, x1, y1 = ax.bbox.extents
    box = tuple(int(v) for v in (x0 + 2, height - y1 + 2, x1 - 2, height - y0 - 2))  # inside the frame
    decimated = _dark_extent(tmp_path / "decimated.png", box)
    full = _dark_extent(tmp_path / "full.png", box)
    assert _within_a_pixel(full, decimated) and _within_a_pixel(decimated, full)
    assert decimated[0].min() == full[0].min()  # the spike reaches the same row
