"""What a run (:class:`~vegaslab.results.Results`) and a set of runs
(:class:`~vegaslab.results.ResultsSet`) show in a notebook: plots of the time series that draw on
a matplotlib ``Axes`` and return it (:class:`NotebookViews`), and the pieces of their HTML view
for Jupyter (:func:`html_table`, :func:`html_rows`, every name and value escaped).

matplotlib is imported only when a plot is drawn (:mod:`vegaslab.plots`), pandas only when a
table is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from .frames import LazyPandas

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyPandas(globals())

#: Rows of the per-flow summary the HTML view shows (the rest are counted).
HTML_MAX_ROWS = 20


class NotebookViews:
    """What :class:`Results` and :class:`ResultsSet` share for notebooks: plots
    that take and return a matplotlib ``Axes``, and an HTML view for Jupyter. matplotlib is
    imported only when a plot is drawn. The tables are those of :class:`Results`; a
    :class:`ResultsSet`'s have its run-label columns in front (``_label_columns``), and its
    lines are labelled ``"<run label>: <flow>"``."""

    _label_columns: tuple[str, ...] = ()
    series_flows: pd.DataFrame
    series_queues: pd.DataFrame
    flows: pd.DataFrame

    def _title(self, what: str) -> str:  # pragma: no cover - overridden
        return what

    def _line_keys(self, frame: pd.DataFrame, key: str) -> np.ndarray:
        """Each row's line label: its ``key`` value, after the run labels for a set."""
        labels = frame[key].astype(str).to_numpy(dtype=object)
        for col in reversed(self._label_columns):
            labels = frame[col].astype(str).to_numpy(dtype=object) + ": " + labels
        return labels

    def _samples(self, table: str, value: str, key: str, only: Iterable[str] | None, monitor: str,
                 option: str) -> pd.DataFrame:
        """The rows of ``table`` with a ``value``, limited to the names in ``only``; a clear
        error when there are none (the monitor was off) or a name has no samples."""
        frame = getattr(self, table)
        s = frame[frame[value].notna()] if value in frame.columns else frame.iloc[:0]
        if s.empty:
            raise ValueError(f"{self._title('')}: no {value} samples in {table} (the run had {monitor} "
                             f"off; switch it on in [monitor] or with --set {monitor}=true)".lstrip(": "))
        if only is not None:
            wanted = [only] if isinstance(only, str) else list(only)
            known = list(dict.fromkeys(s[key]))
            unknown = [str(n) for n in wanted if n not in known]
            if unknown:
                raise ValueError(f"{option}: no {value} samples for {', '.join(map(repr, unknown))} "
                                 f"(with samples: {', '.join(map(str, known))})")
            s = s[s[key].isin(wanted)]
        return s

    def plot_cwnd(self, ax=None, flows: Iterable[str] | None = None):
        """Congestion window (packets) over time, one line per flow (``flows``: only these),
        on ``ax`` or a new figure; returns the axes. Needs ``monitor.cwnd``."""
        from .. import plots

        s = self._samples("series_flows", "cwnd_pkts", "flow", flows, "monitor.cwnd", "flows")
        title = None if ax is not None else self._title("congestion window")
        ax = plots.new_axes() if ax is None else ax
        plots.draw_lines(ax, s["time_s"], s["cwnd_pkts"], self._line_keys(s, "flow"), lw=1.2)
        plots.finish_axes(ax, ylabel="cwnd (packets)", title=title)
        return ax

    def plot_throughput(self, ax=None, flows: Iterable[str] | None = None, *, running_mean: bool = False,
                        unit: str | None = None, window: float | None = None):
        """Throughput per sample bin over time, one line per flow; ``running_mean=True`` draws
        each flow's mean since its start instead (the Vegas-A paper's "average throughput"), and
        ``window=1.0`` its mean over the trailing second (as ``vegaslab run``'s throughput.png).
        ``unit``: bit/s, kbit/s, Mbit/s or Gbit/s (default: Mbit/s from a 1 Mbit/s peak up,
        else kbit/s), named in the axis label. Returns the axes. Needs ``monitor.throughput``."""
        from .. import plots

        if window is not None and (running_mean or not window > 0):
            raise ValueError(f"window: a number of seconds > 0, without running_mean, got {window!r}"
                             + (" with running_mean=True" if running_mean else ""))
        s = self._samples("series_flows", "throughput_bps", "flow", flows, "monitor.throughput", "flows")
        scale, unit = plots.rate_unit(float(s["throughput_bps"].max()), unit)
        if running_mean:  # from each flow's start, as the PNG figure does
            keys = [*self._label_columns, "flow"]
            starts = s[keys].merge(self.flows[[*keys, "start_s"]], on=keys, how="left")["start_s"].to_numpy()
            s = s[~(s["time_s"].to_numpy() < starts)]
        what = " (running mean)" if running_mean else f" ({window:g} s mean)" if window is not None else ""
        title = None if ax is not None else self._title("throughput" + what)
        ax = plots.new_axes() if ax is None else ax
        plots.draw_lines(ax, s["time_s"], s["throughput_bps"] / scale, self._line_keys(s, "flow"),
                         transform=plots.running_mean if running_mean else None, window=window,
                         lw=1.6 if running_mean else 0.8)
        plots.finish_axes(ax, ylabel=f"throughput ({unit})", title=title)
        return ax

    def plot_rtt(self, ax=None, flows: Iterable[str] | None = None, *, unit: str = "ms"):
        """Each flow's latest RTT sample over time, in ``unit`` (``"ms"`` or ``"s"``), one line
        per flow; returns the axes. Needs ``monitor.cwnd`` (the RTT is sampled with it)."""
        from .. import plots

        if unit not in plots.TIME_UNITS:
            raise ValueError(f"unit: must be one of {', '.join(plots.TIME_UNITS)}, got {unit!r}")
        s = self._samples("series_flows", "rtt_s", "flow", flows, "monitor.cwnd", "flows")
        title = None if ax is not None else self._title("round-trip time")
        ax = plots.new_axes() if ax is None else ax
        plots.draw_lines(ax, s["time_s"], s["rtt_s"] / plots.TIME_UNITS[unit], self._line_keys(s, "flow"), lw=1.0)
        plots.finish_axes(ax, ylabel=f"RTT ({unit})", title=title)
        return ax

    def plot_queue(self, ax=None, queues: Iterable[str] | None = None):
        """Queue length (packets waiting) over time as steps, one line per monitored queue:
        ``queues`` names them, by default the busiest (highest mean length) up to
        ``plots.MAX_QUEUES``, as in queue.png. Returns the axes. Needs ``monitor.queues`` or
        ``monitor.all_queues``."""
        from .. import plots

        s = self._samples("series_queues", "length_pkts", "queue", queues, "monitor.queues", "queues")
        keys = self._line_keys(s, "queue")
        if queues is None:
            means = pd.Series(s["length_pkts"].to_numpy(dtype=float)).groupby(keys, sort=False).mean()
            busiest = means.sort_values(ascending=False, kind="stable").index[:plots.MAX_QUEUES]
            keep = np.isin(keys, np.asarray(busiest, dtype=object))
            s, keys = s[keep], keys[keep]
        title = None if ax is not None else self._title("queue length")
        ax = plots.new_axes() if ax is None else ax
        plots.draw_lines(ax, s["time_s"], s["length_pkts"], keys, drawstyle="steps-post", lw=1.0)
        plots.finish_axes(ax, ylabel="queue length (packets)", title=title)
        return ax

    def _series_html(self) -> list[tuple[str, int, str]]:
        """``(table, rows, what it holds)`` of the two time-series tables for the HTML view."""
        out = []
        for table, key, monitors in (("series_flows", "flow", "monitor.cwnd / monitor.throughput"),
                                     ("series_queues", "queue", "monitor.queues")):
            frame = getattr(self, table)
            skip = {"time_s", key, *self._label_columns}
            present = [c for c in frame.columns if c not in skip and frame[c].notna().any()]
            if len(frame) and present:
                what = f"{', '.join(present)} of {frame[key].nunique()} {key}{'s' if frame[key].nunique() != 1 else ''}"
            else:
                what = f"none ({monitors} off)"
            out.append((table, len(frame), what))
        return out


def html_table(df: pd.DataFrame, max_rows: int) -> str:
    """``df`` as an escaped HTML table of at most ``max_rows`` rows (and a line saying how
    many more there are)."""
    shown = df.head(max_rows)
    text = shown.to_html(index=False, escape=True, border=0, na_rep="-", classes="vegaslab",
                         float_format=lambda v: f"{v:.6g}")
    if len(df) > max_rows:
        text += f"<p>... {len(df) - max_rows} more rows</p>"
    return text


def html_rows(rows: Iterable[tuple[str, int, str]]) -> str:
    esc = escape
    body = "".join(f"<tr><td><code>{esc(t)}</code></td><td>{n:,}</td><td>{esc(w)}</td></tr>" for t, n, w in rows)
    return f'<table class="vegaslab" border="0"><tr><th>table</th><th>rows</th><th>holds</th></tr>{body}</table>'


def escape(value: Any) -> str:
    import html

    return html.escape(str(value), quote=True)
