"""PNG plots of one run's time series, in the style of the Vegas-A paper.

Every function takes a :class:`~vegaslab.results.Results` and an output path, and returns the
path written, or ``None`` when the series it needs is empty (the monitor was off). The
figures are drawn on matplotlib's Agg canvas directly, so importing this module never changes
the global pyplot backend.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

if TYPE_CHECKING:  # pragma: no cover
    from .results import Results

#: More lines than this and the legend is left out (it would hide the data).
MAX_LEGEND = 12
#: At most this many queues are drawn (the busiest ones).
MAX_QUEUES = 8


def _figure(title: str, ylabel: str) -> tuple[Figure, object]:
    fig = Figure(figsize=(8, 4), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(title)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def _save(fig: Figure, ax, path: str | os.PathLike, n_lines: int) -> Path:
    if 0 < n_lines <= MAX_LEGEND:
        ax.legend(loc="best", fontsize="small")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    return out


def _title(results: "Results", what: str) -> str:
    return f"{results.meta.get('scenario', '')}: {what}".strip(": ")


def plot_cwnd(results: "Results", path: str | os.PathLike, *, ssthresh: bool = False) -> Path | None:
    """cwnd (packets) over time, one line per flow; ``ssthresh=True`` adds it dashed (the y
    axis stays scaled to cwnd, so ns-2's huge initial ssthresh does not flatten the plot)."""
    s = results.series_flows.dropna(subset=["cwnd"])
    if s.empty:
        return None
    fig, ax = _figure(_title(results, "congestion window"), "cwnd (packets)")
    top = 0.0
    for flow, g in s.groupby("flow", sort=False):
        (line,) = ax.plot(g["time"], g["cwnd"], lw=1.2, label=str(flow))
        top = max(top, float(g["cwnd"].max()))
        if ssthresh and g["ssthresh"].notna().any():
            ax.plot(g["time"], g["ssthresh"], ls="--", lw=0.8, color=line.get_color(),
                    label=f"{flow} ssthresh")
    ax.set_ylim(0, top * 1.1 if top > 0 else 1)
    return _save(fig, ax, path, s["flow"].nunique() * (2 if ssthresh else 1))


def running_mean(values: np.ndarray) -> np.ndarray:
    """Mean of the values so far at every point (the paper's "average throughput" curve)."""
    values = np.asarray(values, dtype=float)
    return np.cumsum(values) / np.arange(1, len(values) + 1) if len(values) else values


def plot_throughput(results: "Results", path: str | os.PathLike) -> Path | None:
    """Throughput per sample bin (0.1 s by default) as a thin line and its running mean since
    the flow's start as a thick line, per flow (the Vegas-A paper's figures)."""
    s = results.series_flows.dropna(subset=["throughput_bps"])
    if s.empty:
        return None
    scale, unit = (1e6, "Mbit/s") if s["throughput_bps"].max() >= 1e6 else (1e3, "kbit/s")
    fig, ax = _figure(_title(results, "throughput"), f"throughput ({unit})")
    spans = results.flows.set_index("flow")[["start_s", "end_s"]] if len(results.flows) else None
    for flow, g in s.groupby("flow", sort=False):
        g = g.sort_values("time")
        if spans is not None and flow in spans.index:
            start, end = spans.loc[flow, "start_s"], spans.loc[flow, "end_s"]
            active = g["time"] >= start if np.isfinite(start) else g["time"] == g["time"]
            if np.isfinite(end):
                active &= g["time"] <= end + 1e-9
            if active.any():
                g = g[active]
        y = g["throughput_bps"].to_numpy() / scale
        (line,) = ax.plot(g["time"], y, lw=0.5, alpha=0.6)
        ax.plot(g["time"], running_mean(y), lw=2.2, color=line.get_color(), label=f"{flow} (running mean)")
    ax.set_ylim(bottom=0)
    return _save(fig, ax, path, s["flow"].nunique())


def plot_queues(results: "Results", path: str | os.PathLike) -> Path | None:
    """Queue length (packets) over time for the busiest queues (at most ``MAX_QUEUES``)."""
    s = results.series_queues.dropna(subset=["length"])
    if s.empty:
        return None
    busiest = s.groupby("queue", sort=False)["length"].mean().sort_values(ascending=False, kind="stable")
    chosen = list(busiest.index[:MAX_QUEUES])
    fig, ax = _figure(_title(results, "queue length"), "queue length (packets)")
    for queue in chosen:
        g = s[s["queue"] == queue].sort_values("time")
        ax.plot(g["time"], g["length"], drawstyle="steps-post", lw=1.0, label=str(queue))
    ax.set_ylim(bottom=0)
    return _save(fig, ax, path, len(chosen))


def plot_all(results: "Results", out_dir: str | os.PathLike) -> list[Path]:
    """cwnd.png, throughput.png and queue.png in ``out_dir`` (each one only if its series
    has data). Returns the paths written."""
    out = Path(out_dir)
    made = [
        plot_cwnd(results, out / "cwnd.png", ssthresh=True),
        plot_throughput(results, out / "throughput.png"),
        plot_queues(results, out / "queue.png"),
    ]
    return [p for p in made if p is not None]
