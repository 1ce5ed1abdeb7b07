"""PNG plots of one run's time series, in the style of the Vegas-A paper.

Every function takes a :class:`~vegaslab.results.Results` and an output path, and returns the
path written, or ``None`` when the series it needs is empty (the monitor was off). The
figures are drawn on matplotlib's Agg canvas directly, so importing this module never changes
the global pyplot backend. :func:`plot_all` (and :func:`start_plots`, which lets the caller
write its tables meanwhile) draws the figures in forked processes where the machine has a
second core.
"""

from __future__ import annotations

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

from .errors import VegaslabError
from .columns import Column, NameColumn, frame_columns

if TYPE_CHECKING:  # pragma: no cover
    from .results import Results

#: More lines than this and the legend is left out (it would hide the data).
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
#: Options for PIL's PNG encoder: zlib level 1 instead of PIL's 6 encodes about twice as fast
#: for files 8-20 % larger. The pixels are the same: PNG is lossless at every level.
PNG_OPTIONS = {"compress_level": 1}


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


def _figure(title: str, ylabel: str) -> tuple[Figure, object]:
    fig = Figure(figsize=(8, 4), dpi=110, layout="none")  # laid out once, by _save
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(title)
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


def _save(fig: Figure, ax, path: str | os.PathLike, n_lines: int) -> Path:
    """Lay the figure out once, decimate its lines to the pixel columns they land in, add the
    legend and write the PNG.

    The figure has no layout engine; the constrained layout runs once, here, before the legend
    and before anything is drawn, so ``savefig`` draws once instead of twice (with an engine it
    first draws every line in a layout pass). With the axes' pixel box known, lines with more
    than four samples per pixel column are decimated (:func:`m4_indices`): what Agg rasterises
    and what ``loc="best"`` scans to place the legend shrinks to at most four points per
    column, with the same pixels covered in every column (docs/decisions.md, "Figures are laid
    out once and decimated to pixels")."""
    ax.autoscale_view()
    ConstrainedLayoutEngine().execute(fig)
    _decimate_lines(ax)
    if 0 < n_lines <= MAX_LEGEND:
        ax.legend(loc="best", fontsize="small")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, pil_kwargs=dict(PNG_OPTIONS))
    return out


def _title(results: "Results", what: str) -> str:
    return f"{results.meta.get('scenario', '')}: {what}".strip(": ")


def plot_cwnd(results: "Results", path: str | os.PathLike, *, ssthresh: bool = False) -> Path | None:
    """cwnd (packets) over time, one line per flow; ``ssthresh=True`` adds it dashed (the y
    axis stays scaled to cwnd, so ns-2's huge initial ssthresh does not flatten the plot) for
    up to :data:`MAX_SSTHRESH_LINES` flows."""
    s = _rows_with(results, "series_flows", "cwnd_pkts")
    if s is None:
        return None
    fig, ax = _figure(_title(results, "congestion window"), "cwnd (packets)")
    time, cwnd, sst = (_floats(s[c]) for c in ("time_s", "cwnd_pkts", "ssthresh_pkts"))
    groups = _groups(s["flow"])
    ssthresh = ssthresh and len(groups) <= MAX_SSTHRESH_LINES
    for flow, rows in groups:
        (line,) = ax.plot(time[rows], cwnd[rows], lw=1.2, label=str(flow))
        if ssthresh and not np.isnan(sst[rows]).all():
            ax.plot(time[rows], sst[rows], ls="--", lw=0.8, color=line.get_color(), label=f"{flow} ssthresh")
    top = float(cwnd.max())
    ax.set_ylim(0, top * 1.1 if top > 0 else 1)
    return _save(fig, ax, path, len(groups) * (2 if ssthresh else 1))


def running_mean(values: np.ndarray) -> np.ndarray:
    """Mean of the values so far at every point (the paper's "average throughput" curve)."""
    values = np.asarray(values, dtype=float)
    return np.cumsum(values) / np.arange(1, len(values) + 1) if len(values) else values


def plot_throughput(results: "Results", path: str | os.PathLike) -> Path | None:
    """Throughput per sample bin (0.1 s by default) as a thin line and its running mean since
    the flow's start as a thick line, per flow (the Vegas-A paper's figures); with more than
    ``MAX_PER_BIN_LINES`` flows, the running means alone."""
    drawn = throughput_axes(results)
    if drawn is None:
        return None
    fig, ax, n_flows = drawn
    return _save(fig, ax, path, n_flows)


def throughput_axes(results: "Results") -> tuple[Figure, Any, int] | None:
    """:func:`plot_throughput`'s figure, axes and number of flows, before layout and saving
    (``None`` without throughput samples)."""
    s = _rows_with(results, "series_flows", "throughput_bps")
    if s is None:
        return None
    time, bps = _floats(s["time_s"]), _floats(s["throughput_bps"])
    scale, unit = (1e6, "Mbit/s") if bps.max() >= 1e6 else (1e3, "kbit/s")
    flows = _table(results, "flows")
    spans = dict(zip(_texts(flows["flow"]), zip(*(_floats(flows[c]) for c in ("start_s", "end_s")))))
    groups = _groups(s["flow"])
    per_bin = len(groups) <= MAX_PER_BIN_LINES
    what = "throughput" if per_bin else "throughput (running mean per flow)"
    fig, ax = _figure(_title(results, what), f"throughput ({unit})")
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
        color = ax.plot(t, y, lw=0.5, alpha=0.6)[0].get_color() if per_bin else None
        ax.plot(t, running_mean(y), lw=2.2, color=color, label=f"{flow} (running mean)")
    ax.set_ylim(bottom=0)
    return fig, ax, len(groups)


def plot_queues(results: "Results", path: str | os.PathLike) -> Path | None:
    """Queue length (packets) over time for the busiest queues (at most ``MAX_QUEUES``)."""
    s = _rows_with(results, "series_queues", "length_pkts")
    if s is None:
        return None
    time, length = _floats(s["time_s"]), _floats(s["length_pkts"])
    groups = _groups(s["queue"])
    means = np.array([length[rows].mean() for _, rows in groups])
    busiest = np.argsort(-means, kind="stable")[:MAX_QUEUES]  # ties: the first seen first
    fig, ax = _figure(_title(results, "queue length"), "queue length (packets)")
    for g in busiest:
        queue, rows = groups[g]
        rows = rows[np.argsort(time[rows], kind="stable")]
        ax.plot(time[rows], length[rows], drawstyle="steps-post", lw=1.0, label=str(queue))
    ax.set_ylim(bottom=0)
    return _save(fig, ax, path, len(busiest))


#: The figures :func:`plot_all` draws: file name, function, keyword arguments; the first ones go
#: to child processes. On the benchmark (CPU seconds): throughput 0.14, cwnd 0.16, queue 0.09;
#: throughput stays first, as the figure that grows most with longer runs (one line per flow
#: and bin).
FIGURES: tuple[tuple[str, Callable[..., "Path | None"], dict], ...] = (
    ("throughput.png", plot_throughput, {}),
    ("cwnd.png", plot_cwnd, {"ssthresh": True}),
    ("queue.png", plot_queues, {}),
)
#: The order :func:`plot_all` returns the paths in.
ORDER = ("cwnd.png", "throughput.png", "queue.png")


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

    def __init__(self, results: "Results", out_dir: Path, processes: int) -> None:
        self._results = results
        self._out = out_dir
        self._children: list[tuple[str, multiprocessing.process.BaseProcess,
                                   multiprocessing.connection.Connection]] = []
        self._here = list(FIGURES)
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
        for name in ORDER:
            if name in errors:
                raise errors[name]
        return [made[name] for name in ORDER if made.get(name) is not None]

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


def start_plots(results: "Results", out_dir: str | os.PathLike, *, processes: int | None = None) -> PendingPlots:
    """Start drawing cwnd.png, throughput.png and queue.png into ``out_dir``; the caller may
    do other work (write its tables) before :meth:`PendingPlots.finish`.

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
    return PendingPlots(results, Path(out_dir), min(processes, len(FIGURES)))


def plot_all(results: "Results", out_dir: str | os.PathLike, *, processes: int | None = None) -> list[Path]:
    """cwnd.png, throughput.png and queue.png in ``out_dir`` (each one only if its series
    has data), drawn in up to ``processes`` processes (:func:`start_plots`). Returns the paths
    written, in that order; raises :class:`PlotError` if one could not be drawn."""
    with start_plots(results, out_dir, processes=processes) as pending:
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
               **style) -> int:
    """One line per distinct key (in order of first appearance), its samples sorted by x and
    labelled ``str(key)``; ``transform`` maps each line's y values (e.g. :func:`running_mean`).
    Returns the number of lines drawn."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    groups = _groups(keys)
    for key, rows in groups:
        rows = rows[np.argsort(x[rows], kind="stable")]
        values = y[rows] if transform is None else transform(y[rows])
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
