"""A sweep figure: a metric's mean over seeds against a swept parameter, one line per hue, with
its confidence band (:meth:`vegaslab.sweeps.results.SweepResults.plot`; docs/sweep-format.md,
"Figures").

What makes it fit for a paper, and why:

- **The band stays in the metric's physical range.** The band is the Student-t interval of the
  mean over seeds (:meth:`~vegaslab.sweeps.results.SweepResults.summary`), clipped to the range
  the metric can take (:mod:`.metrics`: a rate, a count or a time is not negative, Jain's
  index and a ratio lie in [0, 1]); the subtitle says so when a bound was clipped. A t-interval
  over few seeds is wide (t = 12.7 for two): unclipped, it would draw negative goodput or a
  fairness index above 1. Bootstrap intervals were not chosen: over 3-10 seeds a percentile
  bootstrap is no wider than the sample's range and understates the uncertainty
  (docs/decisions.md, "Sweep bands are t-intervals clipped to the metric's range").
- **The axis says what and in which unit.** The y label is the metric's name in words with its
  unit, rates in Mbit/s or kbit/s (:func:`vegaslab.plots.rate_unit`), times in ms below 1 s,
  plain numbers (no ``1e7`` offset); y starts at the bottom of the physical range, so a small
  difference is not magnified.
- **The x axis is the sweep's.** An integer parameter gets integer ticks (the swept values when
  there are few), and a parameter of a zip is labelled by every member (``alpha / beta``, ticks
  ``1 / 3``): the points vary all of them.
- **The legend sits outside the axes**, never on the data.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..figure_marks import outside_legend
from .metrics import Metric

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .planning import SweepAxis

#: Fewer seeds per point than this draws the figure with a warning: the interval of the mean
#: over two values is unstable (t_{0.975, 1} = 12.7).
MIN_SEEDS = 3
#: At most this many swept values are each given a tick (more: integer ticks by matplotlib).
MAX_VALUE_TICKS = 12
#: Seconds per unit of a time axis (``plots.TIME_UNITS``'s ms below 1 s).
_MS = 1e-3
#: The figure size of a sweep figure written to a file, inches.
FIGSIZE = (7.5, 4.2)


def y_unit(m: Metric, peak: float) -> tuple[float, str]:
    """``(metric units per axis unit, axis unit)`` for values up to ``peak``."""
    from ..plots import rate_unit

    if m.unit == "bit/s":
        return rate_unit(peak if math.isfinite(peak) else 0.0)
    if m.unit == "s" and math.isfinite(peak) and 0 < peak < 1:
        return _MS, "ms"
    return 1.0, m.unit


def y_label(m: Metric, unit: str, flow: str | None) -> str:
    """``goodput of flow reno (Mbit/s)``; a run-level metric is never labelled with a flow."""
    what = m.label + (f" of flow {flow}" if flow is not None and m.per_flow else "")
    return f"{what} ({unit})" if unit else what


def x_label(axis: "SweepAxis") -> str:
    """The parameter's name; a zip's members joined with `` / ``."""
    return " / ".join(p.name for p in axis.params)


def band_text(stats: "pd.DataFrame", m: Metric, confidence: float) -> str:
    """``mean and 95% t-interval over 3 seeds``, with the clipping said when a bound was
    clipped to the metric's range."""
    n = sorted({int(v) for v in stats["n"]}) if len(stats) else [0]
    seeds = f"{n[0]}" if len(n) == 1 else f"{n[0]}-{n[-1]}"
    text = f"mean and {confidence:.0%} t-interval over {seeds} seed{'s' if n[-1] != 1 else ''}"
    if "clipped" in stats and bool(stats["clipped"].any()):
        lower = "" if m.lower is None else f"{m.lower:g}"
        upper = "" if m.upper is None else f"{m.upper:g}"
        text += f", clipped to [{lower}, {upper}]" if m.upper is not None else f", clipped at {lower}"
    return text


def draw(ax: Any, stats: "pd.DataFrame", *, x: str, axis: "SweepAxis", hue: str | None, metric: Metric,
         flow: str | None, title: str, subtitle: str) -> None:
    """Draw ``stats`` (:meth:`~vegaslab.sweeps.results.SweepResults.summary`'s table) on ``ax``."""
    peak = float(np.nanmax(stats[["mean", "hi"]].to_numpy(dtype=float))) if len(stats) else 0.0
    scale, unit = y_unit(metric, peak)
    groups = [(None, stats)] if hue is None else list(stats.groupby(hue, sort=True))
    for value, g in groups:
        xs = g[x].to_numpy()
        label = None if hue is None else f"{hue} = {value[0] if isinstance(value, tuple) else value}"
        line, = ax.plot(xs, g["mean"].to_numpy(dtype=float) / scale, marker="o", label=label)
        lo, hi = g["lo"].to_numpy(dtype=float) / scale, g["hi"].to_numpy(dtype=float) / scale
        if np.isfinite(lo).any():
            ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
    _x_axis(ax, x, axis)
    ax.set_ylabel(y_label(metric, unit, flow))
    formatter = ax.yaxis.get_major_formatter()
    if hasattr(formatter, "set_useOffset"):  # a ScalarFormatter: plain numbers, no offset
        formatter.set_useOffset(False)
        formatter.set_scientific(False)
    if metric.lower is not None:
        ax.set_ylim(bottom=metric.lower / scale)
    if metric.upper is not None:
        ax.set_ylim(top=metric.upper / scale * 1.02)
    ax.set_title(f"{title}\n{subtitle}", fontsize=9)
    ax.grid(True, alpha=0.3)
    if hue is not None:
        outside_legend(ax, ax.get_legend_handles_labels()[0])


def _x_axis(ax: Any, x: str, axis: "SweepAxis") -> None:
    """Label the x axis by the axis's parameters; integer ticks for an integer parameter, a tick
    per swept value when there are few (labelled with every zip member's value)."""
    from matplotlib.ticker import FixedLocator, MaxNLocator

    param = next(p for p in axis.params if p.name == x)
    ax.set_xlabel(x_label(axis))
    numeric = param.type in ("integer", "float")
    if numeric and len(param.values) <= MAX_VALUE_TICKS:
        ax.set_xticks([float(v) for v in param.values],
                      labels=[" / ".join(_value(p.values[i]) for p in axis.params) for i in range(len(param.values))])
        ax.xaxis.set_minor_locator(FixedLocator([]))
    elif param.type == "integer":
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _value(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)
