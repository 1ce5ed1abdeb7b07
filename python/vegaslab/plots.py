"""Figures of one run's time series (PNG, PDF or SVG), in the style of the Vegas-A paper: titled
with the scenario's title, units on the axes, the legend beside the axes, the run's events
marked (:mod:`vegaslab.figure_marks`), windowed throughput beside its running mean, RED's average
and thresholds on the queue figure.

Every function takes a :class:`~vegaslab.results.Results` and an output path, and returns the
path written, or ``None`` when the series it needs is empty (the monitor was off). The
figures are drawn on matplotlib's Agg canvas directly, so importing this module never changes
the global pyplot backend. :func:`plot_all` (and :func:`start_plots`, which lets the caller
write its tables meanwhile) draws the figures in forked processes where the machine has a
second core.
"""

from __future__ import annotations

import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from . import figure_marks as marks
from .figure_formats import check_format, figure_bytes
from .errors import VegaslabError
from .columns import Column, NameColumn, frame_columns

if TYPE_CHECKING:  # pragma: no cover
    from .results import Results

#: More lines than this and a notebook axes' legend (:func:`finish_axes`) is left out; the
#: figures' own legends sit beside the axes and group flows by algorithm instead.
MAX_LEGEND = 12
#: More flows than this and the throughput figure draws each flow's running mean alone.
#: The thin per-bin lines of that many noisy flows only cover each other (the running means
#: stay readable) and cost most of the figure's time. The per-bin values are still in
#: series_flows.parquet and drawn by ``Results.plot_throughput``.
MAX_PER_BIN_LINES = MAX_LEGEND
#: More flows than this and the cwnd figure leaves out the dashed ssthresh lines: beyond the
#: legend's limit the lines are unlabelled and the dashed ones only cover the cwnd lines.
#: ssthresh is still in series_flows.parquet.
MAX_SSTHRESH_LINES = MAX_LEGEND
#: At most this many queues are drawn (the busiest ones).
MAX_QUEUES = 8


class PlotError(VegaslabError):
    """A figure could not be drawn. The message is one line naming the file and the cause;
    for a figure drawn in a child process, ``child_traceback`` holds the child's traceback."""

    def __init__(self, message: str, child_traceback: str = "") -> None:
        super().__init__(message)
        self.child_traceback = child_traceback


def m4_indices(columns: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the samples to draw so that every pixel column looks as with all of them
    (M4 decimation, Jugel et al., VLDB 2014): of each run of consecutive samples that fall in
    the same pixel column, the first, the last, the lowest and the highest. A line through
    those spans the same rows in every column as the line through all samples (the run's
    lowest to highest value) and enters and leaves the column at the same samples, so a
    one-sample spike stays. Exact for a hairline; a wider anti-aliased line can differ by the
    ink its half-width spills into the neighbouring column, i.e. within a pixel
    (tests/test_plots.py measures it). Non-finite values (gaps in the line) are all kept and
    end a run, so a gap never closes. ``columns`` is the pixel column of each sample."""
    n = len(y)
    if n == 0:
        return np.arange(0)
    columns = np.asarray(columns)
    y = np.asarray(y, dtype=float)
    finite = np.isfinite(y)
    change = np.empty(n, dtype=bool)
    change[0] = True
    change[1:] = (columns[1:] != columns[:-1]) | ~finite[1:] | ~finite[:-1]
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], n) - 1
    counts = ends - starts + 1
    position = np.arange(n)
    low = np.where(finite, y, np.inf)  # a non-finite sample is a run of its own; kept as first
    high = np.where(finite, y, -np.inf)
    at_min = low == np.repeat(np.minimum.reduceat(low, starts), counts)
    at_max = high == np.repeat(np.maximum.reduceat(high, starts), counts)
    argmin = np.minimum.reduceat(np.where(at_min, position, n), starts)
    argmax = np.minimum.reduceat(np.where(at_max, position, n), starts)
    return np.unique(np.concatenate([starts, ends, argmin, argmax]))


def decimate(x: np.ndarray, y: np.ndarray, pixel_x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` reduced to :func:`m4_indices` of the pixel columns ``floor(pixel_x)`` (each
    sample's x in display pixels); returned as given when there are at most four samples per
    column spanned (nothing to gain) or a position is not finite."""
    x, y, pixel_x = (np.asarray(v, dtype=float) for v in (x, y, pixel_x))
    if len(x) == 0 or not np.isfinite(pixel_x).all():
        return x, y
    columns = np.floor(pixel_x).astype(np.int64)
    if len(x) <= 4 * (int(columns.max()) - int(columns.min()) + 1):
        return x, y
    keep = m4_indices(columns, y)
    return x[keep], y[keep]


def _groups(keys) -> list[tuple[object, np.ndarray]]:
    """``(key, row positions)`` per distinct key, in order of first appearance and with the
    rows in their order, rows with a missing key left out (what ``groupby(sort=False)``
    iterates), from one stable sort instead of a sub-frame per group.

    ``keys`` is a :class:`~vegaslab.columns.NameColumn` (the core's interned names, grouped by
    their codes with numpy alone) or any other text column (an object array, a frame's
    column), grouped by ``pandas.factorize``, which also sets missing keys apart."""
    if isinstance(keys, NameColumn):
        codes = keys.codes.astype(np.int64)
        used, first = np.unique(codes, return_index=True)
        seen = used[np.argsort(first, kind="stable")]  # codes in order of first appearance
        rank = np.zeros(len(keys.names), dtype=np.int64)
        rank[seen] = np.arange(len(seen))
        codes, names = rank[codes], [keys.names[c] for c in seen]
    else:
        import pandas as pd

        codes, names = pd.factorize(keys)
    order = np.argsort(codes, kind="stable")
    order = order[codes[order] >= 0]
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return list(zip(list(names), np.split(order, bounds))) if len(order) else []


def _table(results: "Results", name: str) -> dict[str, Column]:
    """Table ``name`` of ``results`` as columns: ``Results._typed_columns`` (the core's typed
    columns, or the frame the user read or assigned), else, for an object that holds only
    frames (a ``ResultsSet``), its frame's columns as they are."""
    typed = getattr(results, "_typed_columns", None)
    if typed is not None:
        return typed(name)
    return frame_columns(getattr(results, name))


def _rows_with(results: "Results", table: str, column: str) -> dict[str, Column] | None:
    """The rows of ``results``' ``table`` where ``column`` is present (:func:`_table`), or
    ``None`` when no row has it (the monitor was off).

    The figures read the tables as the core's typed columns (``Results._typed_columns``), so
    ``vegaslab run`` draws them without importing pandas or building frames; a table the user
    already read as a frame is read from that frame, so the figure shows what the frame holds.
    Columns keep their type (a flow named by an integer keeps it); the figures read their numbers
    through :func:`_floats`."""
    columns = _table(results, table)
    if column not in columns:
        return None
    keep = ~np.isnan(_floats(columns[column]))
    if not keep.any():
        return None
    return {name: col[keep] for name, col in columns.items()}


def _floats(col: Column) -> np.ndarray:
    """A numeric column as float64 (what ``Series.to_numpy(dtype=float)`` gave the figures)."""
    return np.asarray(col, dtype=float)


def _texts(col: Column) -> np.ndarray:
    """A text column's values as an object array."""
    return col.to_numpy() if isinstance(col, NameColumn) else np.asarray(col, dtype=object)


#: The throughput figure's default averaging window in seconds: ten of the default 0.1 s sample
#: bins, the scale on which the Vegas-A paper's figures show a transient (va-reroute's fall after
#: the delay change) that the running mean since t = 0 hides.
THROUGHPUT_WINDOW_S = 1.0
#: Up to this many flows each has a colour and a legend entry of its own; beyond it, flows are
#: coloured by algorithm with one legend entry per algorithm.
MAX_FLOW_ENTRIES = 8
_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22")


def _figure(title: str, ylabel: str, what: str = "") -> tuple[Figure, object]:
    """A figure titled ``title`` (the scenario's, wrapped) whose axes are titled ``what``, with
    the time axis and ``ylabel``."""
    fig = Figure(figsize=(9, 4.2), dpi=110, layout="none")  # laid out once, by _save
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if title:
        fig.suptitle(marks.wrapped(title), fontsize="medium")
    ax.set_title(what, fontsize="medium", loc="left")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def _decimate_lines(ax) -> None:
    """Replace each line's data by what :func:`decimate` keeps for the pixel columns of the
    axes as they will be drawn (the limits and the layout must be final)."""
    for line in ax.get_lines():
        x, y = (np.asarray(v, dtype=float) for v in line.get_data())
        if len(x) <= 4 * ax.bbox.width:  # cannot have more than four samples per column
            continue
        pixel_x = line.get_transform().transform(np.column_stack([x, np.ones_like(x)]))[:, 0]
        x2, y2 = decimate(x, y, pixel_x)
        if len(x2) < len(x):
            line.set_data(x2, y2)


def _save(fig: Figure, ax, path: str | os.PathLike, handles: list | None = None) -> Path:
    """Put the legend of ``handles`` beside the axes, lay the figure out once, decimate its
    lines to the pixel columns they land in and write it in the format of ``path``'s suffix
    (:data:`vegaslab.figure_formats.FORMATS`).

    The legend is outside the axes (:func:`vegaslab.figure_marks.outside_legend`), so it never
    covers data and needs no search for a free corner. The figure has no layout engine; the
    constrained layout runs once, here, before anything is drawn, so ``savefig`` draws once
    instead of twice (with an engine it first draws every line in a layout pass). With the
    axes' pixel box known, lines with more than four samples per pixel column are decimated
    (:func:`m4_indices`): what the renderer is handed shrinks to at most four points per column,
    with the same pixels covered in every column (docs/decisions.md, "Figures are laid out
    once and decimated to pixels")."""
    ax.autoscale_view()
    marks.outside_legend(ax, handles or [])
    ConstrainedLayoutEngine().execute(fig)
    _decimate_lines(ax)
    out = Path(path)
    data = figure_bytes(fig, check_format(out.suffix.lstrip(".").lower(), f"{out.name}: the figure's format"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return out


def _meta(results: "Results") -> dict:
    meta = getattr(results, "meta", None)
    return meta if isinstance(meta, dict) else {}


def _what(results: "Results", what: str) -> str:
    """The axes' title: what the figure shows, and the seed the run used."""
    seed = _meta(results).get("seed")
    return f"{what}, seed {seed}" if seed is not None else what


def run_events(results: "Results", flows: dict[str, Column] | None = None) -> list:
    """The events :func:`vegaslab.figure_marks.draw_events` marks: the links' (normalised
    scenario) and the flows' starts and ends (the ``flows`` table)."""
    meta = _meta(results)
    duration = float(meta.get("duration_s") or math.inf)
    scenario = marks.normalised_scenario(meta)
    out = marks.link_events(scenario, duration) if scenario else []
    flows = _table(results, "flows") if flows is None else flows
    if all(c in flows for c in ("flow", "start_s", "end_s")):
        out += marks.flow_events(_texts(flows["flow"]), _floats(flows["start_s"]), _floats(flows["end_s"]), duration)
    return out


class _FlowStyles:
    """Colours and legend entries of a figure's flows: up to :data:`MAX_FLOW_ENTRIES` flows, a
    colour and an entry ("f1 (Vegas)") each; beyond, a colour per algorithm and one entry each
    ("Vegas: 75 flows")."""

    def __init__(self, flows: list, algorithms: dict[str, str]) -> None:
        self.by_algorithm = len(flows) > MAX_FLOW_ENTRIES and bool(algorithms)
        self._colors: dict[str, str] = {}
        self._entries: dict[str, str] = {}
        if self.by_algorithm:
            names = {str(f): marks.algorithm_name(algorithms.get(str(f), "other")) for f in flows}
            order = list(dict.fromkeys(names.values()))
            counts = {a: list(names.values()).count(a) for a in order}
            for f, a in names.items():
                self._colors[f] = _PALETTE[order.index(a) % len(_PALETTE)]
                self._entries.setdefault(a, f"{a}: {counts[a]} flows")
            self._key = names
        else:
            for i, f in enumerate(flows):
                f = str(f)
                self._colors[f] = _PALETTE[i % len(_PALETTE)]
                cc = algorithms.get(f)
                self._entries[f] = f"{f} ({marks.algorithm_name(cc)})" if cc else f
            self._key = {str(f): str(f) for f in flows}

    def color(self, flow) -> str:
        return self._colors.get(str(flow), _PALETTE[0])

    @property
    def colors(self) -> dict[str, str]:
        return dict(self._colors)

    def handles(self, **style) -> list:
        """One legend handle per flow or algorithm, drawn in ``style``."""
        from matplotlib.lines import Line2D

        first = {}
        for f, key in self._key.items():
            first.setdefault(key, f)
        return [Line2D([], [], color=self._colors[f], label=self._entries[key], **style) for key, f in first.items()]


def _flow_styles(results: "Results", groups: list) -> _FlowStyles:
    flows = _table(results, "flows")
    algorithms = ({str(f): str(c) for f, c in zip(_texts(flows["flow"]), _texts(flows["cc"]))}
                  if "flow" in flows and "cc" in flows else {})
    return _FlowStyles([flow for flow, _rows in groups], algorithms)


def _packet_axis(ax, top: float) -> None:
    """A y axis of packets: from 0 to 10% above ``top`` (at least 1, so an empty queue's axis is
    not a scale of hundredths), with whole-number ticks."""
    from matplotlib.ticker import MaxNLocator

    ax.set_ylim(0, top * 1.1 if top > 0 else 1.0)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def _style_entry(label: str, **style):
    from matplotlib.lines import Line2D

    return Line2D([], [], color="#333333", label=label, **style)


def plot_cwnd(results: "Results", path: str | os.PathLike, *, ssthresh: bool = False) -> Path | None:
    """cwnd (packets) over time, one line per flow; ``ssthresh=True`` adds it dashed (the y
    axis stays scaled to cwnd, so ns-2's huge initial ssthresh does not flatten the plot) for
    up to :data:`MAX_SSTHRESH_LINES` flows. Events are marked (:func:`run_events`)."""
    s = _rows_with(results, "series_flows", "cwnd_pkts")
    if s is None:
        return None
    fig, ax = _figure(marks.scenario_title(_meta(results)), "cwnd (packets)", _what(results, "congestion window"))
    time, cwnd, sst = (_floats(s[c]) for c in ("time_s", "cwnd_pkts", "ssthresh_pkts"))
    groups = _groups(s["flow"])
    styles = _flow_styles(results, groups)
    ssthresh = ssthresh and len(groups) <= MAX_SSTHRESH_LINES
    dashed = False
    for flow, rows in groups:
        color = styles.color(flow)
        ax.plot(time[rows], cwnd[rows], lw=1.2, color=color, label=str(flow))
        if ssthresh and not np.isnan(sst[rows]).all():
            dashed = True
            ax.plot(time[rows], sst[rows], ls="--", lw=0.8, color=color, label=f"{flow} ssthresh")
    _packet_axis(ax, float(np.nanmax(cwnd)) if len(cwnd) else 0.0)
    handles = styles.handles(lw=1.2) + ([_style_entry("ssthresh (dashed)", ls="--", lw=0.8)] if dashed else [])
    return _save(fig, ax, path, handles + marks.draw_events(ax, run_events(results), styles.colors))


def running_mean(values: np.ndarray) -> np.ndarray:
    """Mean of the values so far at every point (the paper's "average throughput" curve)."""
    values = np.asarray(values, dtype=float)
    return np.cumsum(values) / np.arange(1, len(values) + 1) if len(values) else values


def windowed_mean(time: np.ndarray, values: np.ndarray, window_s: float) -> np.ndarray:
    """At every sample, the mean of the samples of the trailing ``window_s`` seconds (those
    with time in ``(t - window_s, t]``, the sample itself included): throughput over a sliding
    window, as the papers plot it, from bins that each hold the bits delivered in one sample
    interval. Near the start the window holds fewer bins and averages those; a NaN bin (no
    value) is left out of its windows, and a window of NaN bins only is NaN."""
    time, values = np.asarray(time, dtype=float), np.asarray(values, dtype=float)
    if not len(values):
        return values
    known = np.isfinite(values)
    sums = np.concatenate([[0.0], np.cumsum(np.where(known, values, 0.0))])
    counts = np.concatenate([[0], np.cumsum(known)])
    first = np.searchsorted(time, time - window_s + 1e-9 * max(1.0, window_s), side="left")
    last = np.arange(1, len(values) + 1)
    n = counts[last] - counts[first]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, (sums[last] - sums[first]) / np.maximum(n, 1), np.nan)


def plot_throughput(results: "Results", path: str | os.PathLike, *,
                    window_s: float = THROUGHPUT_WINDOW_S) -> Path | None:
    """Throughput per flow averaged over a sliding ``window_s`` window (thin) beside its running
    mean since the flow's start (thick), as in the Vegas-A paper's figures; with more than
    ``MAX_PER_BIN_LINES`` flows, the running means alone. Events are marked."""
    drawn = _throughput_figure(results, window_s)
    if drawn is None:
        return None
    fig, ax, _n_flows, handles = drawn
    return _save(fig, ax, path, handles)


def throughput_axes(results: "Results", *, window_s: float = THROUGHPUT_WINDOW_S) -> tuple[Figure, Any, int] | None:
    """:func:`plot_throughput`'s figure, axes and number of flows, before layout and saving
    (``None`` without throughput samples)."""
    drawn = _throughput_figure(results, window_s)
    return None if drawn is None else drawn[:3]


def _throughput_figure(results: "Results", window_s: float) -> tuple[Figure, Any, int, list] | None:
    """:func:`throughput_axes` and the legend's handles."""
    if not window_s > 0:
        raise ValueError(f"window_s: the throughput window must be > 0 seconds, got {window_s}")
    s = _rows_with(results, "series_flows", "throughput_bps")
    if s is None:
        return None
    time, bps = _floats(s["time_s"]), _floats(s["throughput_bps"])
    scale, unit = rate_unit(float(bps.max()))
    flows = _table(results, "flows")
    spans = dict(zip(_texts(flows["flow"]), zip(*(_floats(flows[c]) for c in ("start_s", "end_s")))))
    groups = _groups(s["flow"])
    styles = _flow_styles(results, groups)
    windowed = len(groups) <= MAX_PER_BIN_LINES
    what = f"throughput: {window_s:g} s mean (thin), running mean (thick)" if windowed \
        else "throughput (running mean per flow)"
    fig, ax = _figure(marks.scenario_title(_meta(results)), f"throughput ({unit})", _what(results, what))
    for flow, rows in groups:
        rows = rows[np.argsort(time[rows], kind="stable")]
        t = time[rows]
        if flow in spans:
            start, end = spans[flow]
            active = t >= start if np.isfinite(start) else np.ones(len(t), dtype=bool)
            if np.isfinite(end):
                active &= t <= end + 1e-9
            if active.any():
                rows, t = rows[active], t[active]
        y = bps[rows] / scale
        color = styles.color(flow)
        if windowed:
            ax.plot(t, windowed_mean(t, y, window_s), lw=0.9, alpha=0.85, color=color,
                    label=f"{flow} ({window_s:g} s mean)")
        ax.plot(t, running_mean(y), lw=2.2, color=color, label=f"{flow} (running mean)")
    ax.set_ylim(bottom=0)
    handles = styles.handles(lw=2.2)
    if windowed:
        handles += [_style_entry(f"{window_s:g} s mean", lw=0.9), _style_entry("running mean since start", lw=2.2)]
    return fig, ax, len(groups), handles + marks.draw_events(ax, run_events(results, flows), styles.colors)


def plot_queues(results: "Results", path: str | os.PathLike) -> Path | None:
    """Queue length (packets) over time for the busiest queues (at most ``MAX_QUEUES``); for a
    RED queue also its average (``avg_pkts``, dashed) and its ``min``/``max`` thresholds
    (dotted). Events are marked."""
    s = _rows_with(results, "series_queues", "length_pkts")
    if s is None:
        return None
    time, length = _floats(s["time_s"]), _floats(s["length_pkts"])
    avg = _floats(s["avg_pkts"]) if "avg_pkts" in s else None
    groups = _groups(s["queue"])
    means = np.array([length[rows].mean() for _, rows in groups])
    busiest = np.argsort(-means, kind="stable")[:MAX_QUEUES]  # ties: the first seen first
    thresholds = marks.red_thresholds(marks.normalised_scenario(_meta(results)))
    fig, ax = _figure(marks.scenario_title(_meta(results)), "queue length (packets)", _what(results, "queue length"))
    handles: list = []
    red_avg = red_th = False
    for i, g in enumerate(busiest):
        queue, rows = groups[g]
        rows = rows[np.argsort(time[rows], kind="stable")]
        color = _PALETTE[i % len(_PALETTE)]
        handles.append(ax.plot(time[rows], length[rows], drawstyle="steps-post", lw=1.0, color=color,
                               label=str(queue))[0])
        if avg is not None and np.isfinite(avg[rows]).any():
            red_avg = True
            ax.plot(time[rows], avg[rows], ls="--", lw=1.4, color=color, label=f"{queue} RED average")
        if str(queue) in thresholds:
            red_th = True
            for level, name in zip(thresholds[str(queue)], ("min", "max")):
                ax.axhline(level, ls=":", lw=1.2, color=color, label=f"{queue} RED {name} threshold")
            handles[-1].set_label(f"{queue} (RED min {thresholds[str(queue)][0]:g}, max {thresholds[str(queue)][1]:g})")
    top = max([float(np.nanmax(length)) if len(length) else 0.0]
              + [t for q, th in thresholds.items() for t in th if q in {str(groups[g][0]) for g in busiest}])
    _packet_axis(ax, top)
    if red_avg:
        handles.append(_style_entry("RED average (dashed)", ls="--", lw=1.4))
    if red_th:
        handles.append(_style_entry("RED thresholds (dotted)", ls=":", lw=1.2))
    return _save(fig, ax, path, handles + marks.draw_events(ax, run_events(results)))


#: The figures :func:`plot_all` draws: file name without its format's suffix, function, keyword
#: arguments; the first ones go to child processes. On the benchmark (CPU seconds): throughput
#: 0.14, cwnd 0.16, queue 0.09;
#: throughput stays first, as the figure that grows most with longer runs (one line per flow
#: and bin).
FIGURES: tuple[tuple[str, Callable[..., "Path | None"], dict], ...] = (
    ("throughput", plot_throughput, {}),
    ("cwnd", plot_cwnd, {"ssthresh": True}),
    ("queue", plot_queues, {}),
)
#: The order :func:`plot_all` returns the paths in.
ORDER = ("cwnd", "throughput", "queue")


def usable_processes(loadavg: str | os.PathLike = "/proc/loadavg") -> int:
    """How many processes :func:`start_plots` uses by default: this one plus the CPUs that are
    idle right now (of those this process may run on), or 1 where ``fork`` is not available
    (the children rely on inheriting the imported matplotlib and the results; spawning would
    import them again, 0.5 s).

    A child process pays only with a core free: with the second core busy the two processes take
    turns on one core and cost more CPU time for no gain. So the idle CPUs are counted from the
    kernel's number of runnable tasks (``/proc/loadavg``, this process included) at the moment the
    figures start; where that cannot be read, every usable CPU counts as idle. Only the speed
    depends on it: each file is the same either way."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        usable = os.cpu_count() or 1
    try:
        runnable = int(Path(loadavg).read_text().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return max(1, usable)
    idle = (os.cpu_count() or usable) - runnable  # runnable counts this process
    return max(1, min(usable, 1 + idle))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _failure(name: str, exc: BaseException) -> str:
    return f"{name}: could not draw the plot: {type(exc).__name__}: {_one_line(str(exc))}"


def _ended(exitcode: int | None) -> str:
    """How a child process ended, from ``Process.exitcode`` (negative: the signal)."""
    if exitcode is not None and exitcode < 0:
        try:
            return f"was killed by signal {-exitcode} ({signal.Signals(-exitcode).name})"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"ended with exit status {exitcode}"


def _render_child(conn, func, results, path: Path, kwargs: dict) -> None:
    """Body of a child process: draw one figure and send ``("ok", path or None)`` or
    ``("error", message, traceback)`` to the parent; exit status 1 on an error."""
    try:
        made = func(results, path, **kwargs)
        conn.send(("ok", None if made is None else str(made)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as one line
        detail = traceback.format_exc()
        if os.environ.get("VEGASLAB_DEBUG"):
            sys.stderr.write(detail)
        try:
            conn.send(("error", _failure(path.name, exc), detail))
        except OSError:  # the parent is gone: nobody to tell
            pass
        raise SystemExit(1) from None
    finally:
        conn.close()


class PendingPlots:
    """Figures being drawn: :func:`start_plots` returns it; :meth:`finish` draws the figures
    kept for this process and collects those of the children. Use it as a context manager:
    leaving the block without :meth:`finish` (e.g. on an error) stops the children, so none
    writes into a directory that is being removed."""

    def __init__(self, results: "Results", out_dir: Path, processes: int, *, fmt: str = "png",
                 window_s: float = THROUGHPUT_WINDOW_S) -> None:
        self._results = results
        self._out = out_dir
        self._children: list[tuple[str, multiprocessing.process.BaseProcess,
                                   multiprocessing.connection.Connection]] = []
        # (file name, function, keyword arguments): the stem gets the format's suffix, the
        # throughput figure its window
        self._names = {stem: f"{stem}.{fmt}" for stem, _f, _k in FIGURES}
        self._here = [(self._names[stem], func, {**kwargs, **({"window_s": window_s} if stem == "throughput" else {})})
                      for stem, func, kwargs in FIGURES]
        if processes > 1:
            forked, self._here = self._here[:processes - 1], self._here[processes - 1:]
            out_dir.mkdir(parents=True, exist_ok=True)
            # Anything still buffered would be written a second time by each child at its exit
            # (multiprocessing's fork start flushes too; explicit, as the summary must not repeat).
            sys.stdout.flush()
            sys.stderr.flush()
            context = multiprocessing.get_context("fork")
            try:
                for at, (name, func, kwargs) in enumerate(forked):
                    receive, send = context.Pipe(duplex=False)
                    child = context.Process(target=_render_child, args=(send, func, results, out_dir / name, kwargs),
                                            name=f"vegaslab: plot {name}", daemon=True)
                    try:
                        child.start()
                    except OSError:  # no process to be had (EAGAIN, ENOMEM): draw the rest here
                        receive.close()
                        self._here[:0] = forked[at:]
                        break
                    finally:
                        send.close()  # the child holds the only sending end: its exit ends our recv
                    self._children.append((name, child, receive))
            except BaseException:
                self.close()
                raise

    def finish(self) -> list[Path]:
        """Draw the remaining figures here, wait for the children and return the paths
        written in :data:`ORDER`. Raises :class:`PlotError` (one line, the first failed
        figure in :data:`ORDER`) if a figure could not be drawn or a child died."""
        made: dict[str, Path | None] = {}
        errors: dict[str, PlotError] = {}
        for name, func, kwargs in self._here:
            try:
                made[name] = func(self._results, self._out / name, **kwargs)
            except Exception as exc:  # noqa: BLE001 - reported as one line, the cause chained
                error = PlotError(_failure(name, exc))
                error.__cause__ = exc
                errors[name] = error
        for name, child, receive in self._children:
            try:
                reply = receive.recv()
            except EOFError:  # died without a word: a signal, a crash in C, os._exit
                reply = None
            finally:
                receive.close()
            child.join()
            if reply and reply[0] == "ok":
                made[name] = None if reply[1] is None else Path(reply[1])
            elif reply:
                errors[name] = PlotError(reply[1], reply[2])
            else:
                errors[name] = PlotError(f"{name}: could not draw the plot: its process {_ended(child.exitcode)} "
                                         "without a report")
        self._children = []
        order = [self._names[stem] for stem in ORDER]
        for name in order:
            if name in errors:
                raise errors[name]
        return [made[name] for name in order if made.get(name) is not None]

    def close(self) -> None:
        """Stop and reap children that are still running (after an error elsewhere)."""
        for _, child, receive in self._children:
            if child.is_alive():
                child.terminate()
            child.join()
            receive.close()
        self._children = []

    def __enter__(self) -> "PendingPlots":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def start_plots(results: "Results", out_dir: str | os.PathLike, *, processes: int | None = None,
                format: str = "png", window_s: float = THROUGHPUT_WINDOW_S) -> PendingPlots:
    """Start drawing cwnd, throughput and queue figures into ``out_dir`` as ``format`` files
    (:data:`vegaslab.figure_formats.FORMATS`; ``cwnd.png`` ...), the throughput figure averaged over ``window_s``
    seconds; the caller may do other work (write its tables) before :meth:`PendingPlots.finish`.

    The figures' work is almost all in matplotlib's C++ Agg renderer, which holds the GIL, so they
    are drawn in processes forked from this one, which has matplotlib imported and the results in
    memory. Of ``processes`` (default :func:`usable_processes`), all but one are children, each
    drawing one figure, costliest first; this process draws the rest in :meth:`finish`. On 2
    cores: throughput.png in a child, while this process writes the tables and draws cwnd.png and
    queue.png. Each file is drawn by exactly one process with the same code, so the files are byte
    for byte those drawn one after the other (tests/test_plots.py)."""
    processes = usable_processes() if processes is None else int(processes)
    if processes < 1:
        raise ValueError(f"processes: must be >= 1, got {processes}")
    check_format(format)
    if not window_s > 0:
        raise ValueError(f"window_s: the throughput window must be > 0 seconds, got {window_s}")
    return PendingPlots(results, Path(out_dir), min(processes, len(FIGURES)), fmt=format, window_s=window_s)


def plot_all(results: "Results", out_dir: str | os.PathLike, *, processes: int | None = None,
             format: str = "png", window_s: float = THROUGHPUT_WINDOW_S) -> list[Path]:
    """cwnd, throughput and queue figures in ``out_dir`` as ``format`` files (each one only if
    its series has data), drawn in up to ``processes`` processes (:func:`start_plots`). Returns
    the paths written, in that order; raises :class:`PlotError` if one could not be drawn."""
    with start_plots(results, out_dir, processes=processes, format=format, window_s=window_s) as pending:
        return pending.finish()


# ---------------------------------------------------------------------- notebook axes
#
# ``Results.plot_cwnd`` / ``plot_throughput`` / ``plot_queue`` /
# ``plot_rtt`` (and the same on a ``ResultsSet``) draw onto a matplotlib ``Axes`` the caller
# gives, or a new pyplot figure, and return it, as pandas' and seaborn's plot functions do.
# They share the grouping and running mean with the PNG figures above but not the figures
# themselves: the PNGs' look, decimation and file bytes are pinned by tests/test_plots.py, and a
# notebook axes must stay interactive (no decimation: the user zooms).

#: Throughput axis units: name -> bit/s per unit.
RATE_UNITS = {"bit/s": 1.0, "kbit/s": 1e3, "Mbit/s": 1e6, "Gbit/s": 1e9}
#: RTT axis units: name -> seconds per unit.
TIME_UNITS = {"s": 1.0, "ms": 1e-3}


def new_axes():
    """A new pyplot figure's axes (so Jupyter shows it inline), 8 x 4 inches, laid out."""
    import matplotlib.pyplot as plt  # pyplot only here: it picks a backend on import

    _fig, ax = plt.subplots(figsize=(8, 4), layout="constrained")
    return ax


def rate_unit(peak_bps: float, unit: str | None = None) -> tuple[float, str]:
    """``(bit/s per unit, unit)`` for a throughput axis: ``unit`` if given (one of
    :data:`RATE_UNITS`), else Mbit/s from a peak of 1 Mbit/s up and kbit/s below (the rule of
    :func:`plot_throughput`)."""
    if unit is None:
        unit = "Mbit/s" if peak_bps >= 1e6 else "kbit/s"
    if unit not in RATE_UNITS:
        raise ValueError(f"unit: must be one of {', '.join(RATE_UNITS)}, got {unit!r}")
    return RATE_UNITS[unit], unit


def draw_lines(ax, x: np.ndarray, y: np.ndarray, keys, *, transform: Callable | None = None,
               window: float | None = None, **style) -> int:
    """One line per distinct key (in order of first appearance), its samples sorted by x and
    labelled ``str(key)``; ``transform`` maps each line's y values (e.g. :func:`running_mean`),
    ``window`` averages them over the trailing ``window`` of x (:func:`windowed_mean`).
    Returns the number of lines drawn."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    groups = _groups(keys)
    for key, rows in groups:
        rows = rows[np.argsort(x[rows], kind="stable")]
        values = y[rows] if transform is None else transform(y[rows])
        if window is not None:
            values = windowed_mean(x[rows], values, window)
        ax.plot(x[rows], values, label=str(key), **style)
    return len(groups)


def finish_axes(ax, *, ylabel: str, title: str | None = None) -> None:
    """Axis labels with units, a light grid, y from 0, a title (only given for new axes) and a
    legend while at most :data:`MAX_LEGEND` lines are labelled."""
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    handles, _labels = ax.get_legend_handles_labels()
    if 0 < len(handles) <= MAX_LEGEND:
        ax.legend(loc="best", fontsize="small")
