"""The report's figures (matplotlib, embedded as base64 PNG), with the papers drawn in.

Every figure is a dict: ``title``, ``png`` (base64), ``caption``, ``kind``, ``paper_figure``
(the paper's figure or table the figure corresponds to) and ``references``: one entry per
reference line drawn, with the numbers behind it, which the page shows under the figure and
emits as data attributes (pixels cannot be checked, the attributes can). A figure that could
not be drawn is ``{title, error}``.

Reference lines, so that the report shows the papers beside our runs (docs/catalog-format.md,
"Figures"):

- **Published level.** A time-series panel (``throughput``, ``cwnd``, ``queue``) of variant V
  that draws entity E's column C gets a dashed horizontal line at V's published ``E.M``, where
  M is the published metric that is C's mean over the run: ``throughput_bps`` for
  ``throughput_bps`` (the running mean converges on it), ``mean_cwnd_pkts`` for
  ``cwnd_pkts``, ``mean_len_pkts`` for a queue's ``length_pkts`` (:data:`LEVEL_METRIC`).
- **Published end.** V's published ``E.completion_time_s`` is a dotted vertical line: where
  the paper's transfer ends.
- **Described level over an interval** (a figure spec's ``reference``): the level a claim or
  the paper's text gives over an interval, e.g. "recovers fully: over 0.9 Mbit/s from 40 s on".
  The interval is shaded and the level drawn across it. **Departure rule:** a sample departs
  from the description where the trailing ``window``-second mean of the plotted series (1 s
  by default, ten 0.1 s bins), taken inside the interval only, is below ``below`` times the
  level (0.5 by default); departures are shaded red and listed with their times, beside the
  series' mean over the interval. So a claim about a mean that holds (Vegas-A's 40-200 s mean
  is over 0.9 Mbit/s) is shown together with the collapses it averages over (near 75 s and
  150 s), and neither hides the other.
- ``bar`` and ``line`` figures already draw the published numbers (hatched bars, dashed
  series); their references list them.

Each panel's title names the variant and the paper's figure (the spec's ``paper_figure``, a
string or a table variant -> string, else the entry's ``meta.figure``); every panel has both
axis labels. Flows are named as the paper names them (:func:`flow_names`), legends sit beside
the axes, the run's events are marked (:mod:`vegaslab.figure_marks`), throughput is drawn as
its trailing ``window``-second mean (not as bins, which fill a long panel as a band), and a line
figure's y axis does not magnify a small difference (:func:`honest_ylim`).
"""

from __future__ import annotations

import base64
import fnmatch
import io
import math
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from .. import figure_marks as marks
from .. import plots
from ..plots import run_events, running_mean, windowed_mean
from ..study import claims
from ..study.claims import RunSet, timecourse
from .tables import num_cell
from ..results import renamed_column_message as claims_renamed

if TYPE_CHECKING:  # pragma: no cover - type names only
    from ..study.catalog import Entry

#: At most this many variants in one time-series figure (one panel each).
MAX_PANELS = 6
_COLORS = ["#1f4e9c", "#c0392b", "#2e8b57", "#8e44ad", "#d68910", "#17a2b8", "#5d6d7e", "#a04000"]
#: The published metric that is a time series column's mean over the run.
LEVEL_METRIC = {"throughput_bps": "throughput_bps", "cwnd_pkts": "mean_cwnd_pkts", "length_pkts": "mean_len_pkts"}
#: The published metric drawn as a vertical line: when the paper's transfer ends.
END_METRIC = "completion_time_s"
#: Defaults of a ``reference`` table's departure rule.
DEFAULT_BELOW, DEFAULT_WINDOW_S = 0.5, timecourse.DEFAULT_WINDOW_S
#: A throughput panel's averaging window in seconds (a figure's ``window``), the run figures'
#: own: ten 0.1 s bins drawn one by one fill a 200 s panel as a solid band; their trailing 1 s
#: mean is a line.
THROUGHPUT_WINDOW_S = plots.THROUGHPUT_WINDOW_S
#: A line figure's y axis spans at least this fraction of its largest |value|, so a difference of
#: a percent cannot fill the axes (:func:`honest_ylim`).
MIN_RELATIVE_SPAN = 0.2
_REF_COLOR, _DEPART_COLOR = "#111111", "#e74c3c"


def _mpl_figure(w: float, h: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _style(ax) -> None:
    ax.grid(True, color="#d5d8dc", lw=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=9)


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", facecolor="white")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _pick_variants(spec: Mapping[str, Any], rs: RunSet, have: Any = None) -> list[str]:
    wanted = spec.get("variants")
    names = [n for n in rs.names() if n in rs.runs]
    if wanted:
        if isinstance(wanted, str):
            wanted = [wanted]
        out = []
        for w in wanted:
            for n in names:
                if fnmatch.fnmatchcase(n, str(w)) and n not in out:
                    out.append(n)
        names = out
    if have is not None:
        names = [n for n in names if have(n)]
    return names


def _unit(values: np.ndarray, metric: str) -> tuple[float, str]:
    if metric.endswith("_bps") or metric == "throughput_bps":
        top = float(np.nanmax(np.abs(values))) if len(values) else 0.0
        for scale, unit in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
            if top >= scale:
                return scale, unit
        return 1.0, "bit/s"
    return 1.0, ""


def honest_ylim(values: np.ndarray) -> tuple[float, float] | None:
    """y limits that do not magnify small differences: the values' range, widened about its
    middle to at least :data:`MIN_RELATIVE_SPAN` of their largest magnitude and padded by 4%;
    for values that cannot be negative, never below 0 (two completion times 1.5% apart then span
    less than a tenth of the axis, not all of it). ``None`` without a finite value."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not len(v):
        return None
    lo, hi = float(v.min()), float(v.max())
    span = max(hi - lo, MIN_RELATIVE_SPAN * max(abs(lo), abs(hi))) or 1.0
    mid = (lo + hi) / 2
    bottom, top = mid - 0.54 * span, mid + 0.54 * span
    if lo >= 0 and bottom < 0:
        bottom, top = 0.0, top - bottom
    return bottom, top


def flow_names(spec: Mapping[str, Any], res: Any, flows: list) -> dict[str, str]:
    """How the panel names each of ``flows``: the figure's ``flow_names`` table where it names
    the flow, else as the paper would (:func:`vegaslab.figure_marks.paper_flow_names`: by
    algorithm, "connection k (Vegas)" when several of the run's flows run the same one, k
    counting the run's flows in the order of its flows table, whichever the panel shows)."""
    table = res.flows
    ccs = dict(zip(table["flow"].astype(str), table["cc"].astype(str))) if {"flow", "cc"} <= set(table.columns) else {}
    shown = [str(f) for f in flows]
    names = marks.paper_flow_names(ccs, [*ccs, *(f for f in shown if f not in ccs)])
    given = spec.get("flow_names") or {}
    return {f: str(given.get(f, names[f])) for f in shown}


def _scaled_label(label: Any, metric: str, unit: str) -> str:
    """A y label in the axis' unit: the figure's ``ylabel`` with a "(bit/s)" it names turned
    into ``unit``, else the metric and ``unit``."""
    if not label:
        return f"{metric} ({unit})" if unit else metric
    return str(label).replace("(bit/s)", f"({unit})") if unit else str(label)


def _fmt_level(value: float, scale: float, unit: str) -> str:
    return f"{value / scale:.3g} {unit}".strip() if unit else num_cell(value)


def paper_figure(spec: Mapping[str, Any], entry: "Entry", variant: str | None = None) -> str:
    """The paper's figure a figure (or one of its panels) corresponds to."""
    pf = spec.get("paper_figure")
    if isinstance(pf, Mapping):
        got = pf.get(variant) if variant is not None else None
        if got is None and variant is None:
            got = ", ".join(dict.fromkeys(str(v) for v in pf.values()))
        return str(got or "")
    if pf:
        return str(pf)
    return str(entry.meta.get("figure") or "")


def references_of(spec: Mapping[str, Any]) -> list[dict]:
    """The spec's ``reference`` tables (one table or an array of them)."""
    ref = spec.get("reference")
    if ref is None:
        return []
    return [dict(ref)] if isinstance(ref, Mapping) else [dict(r) for r in ref]


def departures(t: np.ndarray, y: np.ndarray, level: float, interval: tuple[float, float], *,
               below: float = DEFAULT_BELOW, window: float = DEFAULT_WINDOW_S) -> dict:
    """The departure rule (module docstring), the one time-course claims judge by
    (:func:`vegaslab.study.claims.timecourse.departures`): inside ``interval`` (t0 < t <= t1),
    the spans where the trailing ``window``-second mean of ``y`` is below ``below * level``, the
    time spent there, and the plain mean of ``y`` over the interval."""
    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    t0, t1 = interval
    shaded = timecourse.departures(t, y, below * level, math.inf, t0, t1, window)
    inside = y[(t > t0) & (t <= t1) & np.isfinite(y)]
    return {**shaded, "mean": float(np.mean(inside)) if len(inside) else math.nan}


def _spans_text(spans: list[list[float]], limit: int = 6) -> str:
    txt = ", ".join(f"{a:.1f}-{b:.1f} s" for a, b in spans[:limit])
    return txt + (f" and {len(spans) - limit} more" if len(spans) > limit else "")


def _series_figure(kind: str, spec: Mapping[str, Any], entry: "Entry", rs: RunSet) -> dict | None:
    """throughput / cwnd / queue over time, one panel per variant (first seed), with the
    published levels, ends and described levels of the module docstring."""
    table, key, column = {"throughput": ("series_flows", "flow", "throughput_bps"),
                          "cwnd": ("series_flows", "flow", "cwnd_pkts"),
                          "queue": ("series_queues", "queue", "length_pkts")}[kind]
    column = spec.get("column", column)
    if renamed := claims_renamed(column):
        raise ValueError(f"column {column!r}: {renamed}")

    def has(n: str) -> bool:
        df = getattr(rs.runs[n][0], table)
        return column in df.columns and df[column].notna().any()

    variants = _pick_variants(spec, rs, has)[:int(spec.get("max_panels", MAX_PANELS))]
    if not variants:
        return None
    who = spec.get("flows") if key == "flow" else spec.get("queues")
    if isinstance(who, str):
        who = [who]
    frames = {}
    for n in variants:
        res = rs.runs[n][0]
        df = getattr(res, table)
        df = df[df[column].notna()]
        if who:
            df = df[df[key].isin([str(w) for w in who])]
        elif kind == "queue":  # the busiest few queues
            busiest = df.groupby(key)[column].mean().sort_values(ascending=False).index[:4]
            df = df[df[key].isin(busiest)]
        frames[n] = (res, df)
    all_vals = np.concatenate([d[column].to_numpy(dtype=float) for _, d in frames.values()] or [np.array([])])
    scale, unit = _unit(all_vals, column)
    if spec.get("scale"):
        scale, unit = float(spec["scale"]), str(spec.get("unit", ""))
    ylabel = spec.get("ylabel") or {"throughput": f"throughput ({unit})", "cwnd": "cwnd (packets)",
                                     "queue": "queue length (packets)"}[kind]
    if kind == "cwnd" and column != "cwnd_pkts" and not spec.get("ylabel"):
        ylabel = f"{column} (packets)"
    level_metric = LEVEL_METRIC.get(column)
    described = references_of(spec)
    mean_window = float(spec.get("window", THROUGHPUT_WINDOW_S))
    ncols = 2 if len(variants) > 2 else 1
    nrows = math.ceil(len(variants) / ncols)
    fig = _mpl_figure(12.5 if ncols == 2 else 9.5, 0.5 + 2.4 * nrows)
    grid = fig.subplots(nrows, ncols, sharex=True, squeeze=False)
    axes = list(grid.flat)
    for ax in axes[len(variants):]:
        ax.set_visible(False)
    ymax = float(np.nanmax(all_vals) / scale) if len(all_vals) else 1.0
    refs: list[dict] = []
    for ax, n in zip(axes, variants):
        res, df = frames[n]
        _style(ax)
        published = entry.published_of(n)
        entities = list(dict.fromkeys(df[key]))
        spans = res.flows.set_index("flow")[["start_s", "end_s"]] if kind == "throughput" and len(res.flows) else None
        names = flow_names(spec, res, entities[:8]) if key == "flow" else {str(e): str(e) for e in entities}
        colors: dict[str, str] = {}
        drawn: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for i, ent in enumerate(entities[:8]):
            g = df[df[key] == ent].sort_values("time_s")
            color = colors[str(ent)] = _COLORS[i % len(_COLORS)]
            name = names[str(ent)]
            if kind == "throughput":
                if spans is not None and ent in spans.index:
                    start, end = spans.loc[ent, "start_s"], spans.loc[ent, "end_s"]
                    keep = g["time_s"] >= (start if np.isfinite(start) else -1)
                    if np.isfinite(end):
                        keep &= g["time_s"] <= end + 1e-9
                    g = g[keep] if keep.any() else g
                t = g["time_s"].to_numpy(dtype=float)
                y = g[column].to_numpy(dtype=float) / scale
                ax.plot(t, windowed_mean(t, y, mean_window), lw=0.9, alpha=0.8, color=color,
                        label=f"{name} ({mean_window:g} s mean)")
                ax.plot(t, running_mean(y), lw=2.0, color=color, label=f"{name} (running mean)")
            elif kind == "queue":
                ax.plot(g["time_s"], g[column], drawstyle="steps-post", lw=0.9, color=color, label=name)
            else:
                ax.plot(g["time_s"], g[column] / scale, lw=1.2, color=color, label=name)
            drawn[str(ent)] = (g["time_s"].to_numpy(dtype=float), g[column].to_numpy(dtype=float))
            # the paper's level of this entity's column, and where its transfer ends
            metric = f"{ent}.{level_metric}" if level_metric else None
            if metric and metric in published:
                lv = float(published[metric])
                ax.axhline(lv / scale, color=color, ls="--", lw=1.3, alpha=0.9,
                           label=f"{name} published {_fmt_level(lv, scale, unit)}")
                refs.append({"kind": "published-level", "variant": n, "metric": metric, "level": lv,
                             "text": f"{n}: {metric} published {_fmt_level(lv, scale, unit)} (dashed line)"})
            end_metric = f"{ent}.{END_METRIC}"
            if end_metric in published:
                te = float(published[end_metric])
                ax.axvline(te, color=color, ls=":", lw=1.4, label=f"{name} published end {te:g} s")
                refs.append({"kind": "published-end", "variant": n, "metric": end_metric, "level": te,
                             "text": f"{n}: {end_metric} published {te:g} s (dotted line)"})
        for ref in described:
            if ref.get("variant") != n:
                continue
            ent, _, metric_name = str(ref["metric"]).partition(".")
            level = float(ref["level"]) if ref.get("level") is not None else float(published.get(str(ref["metric"]), math.nan))
            t0, t1 = (float(x) for x in ref.get("interval") or (-math.inf, math.inf))
            if ent not in drawn or not math.isfinite(level):
                refs.append({"kind": "described", "variant": n, "metric": str(ref["metric"]), "level": level,
                             "text": f"{n}: {ref['metric']} not drawn in this panel (no such series, or no level)"})
                continue
            t, y = drawn[ent]
            below = float(ref.get("below", DEFAULT_BELOW))
            window = float(ref.get("window", DEFAULT_WINDOW_S))
            lo, hi = max(t0, float(t.min()) if len(t) else t0), min(t1, float(t.max()) if len(t) else t1)
            ax.axvspan(lo, hi, color="#f2f3f4", zorder=0)
            ax.hlines(level / scale, lo, hi, colors=_REF_COLOR, linestyles="-.", lw=1.3,
                      label=f"described {_fmt_level(level, scale, unit)}")
            dep = departures(t, y, level, (t0, t1), below=below, window=window)
            for a, b in dep["spans"]:
                ax.axvspan(a, b, color=_DEPART_COLOR, alpha=0.25, lw=0, zorder=0.5)
            where = f"{t0:g}-{t1:g} s" if math.isfinite(t0) and math.isfinite(t1) else "the run"
            src = f" ({ref['source']})" if ref.get("source") else ""
            msg = (f"{n}: {ref['metric']} described {_fmt_level(level, scale, unit)} over {where}{src} "
                   f"(dash-dot line, interval shaded); mean over the interval {_fmt_level(dep['mean'], scale, unit)}; ")
            if dep["spans"]:
                msg += (f"the {window:g} s mean is below {below:.0%} of the described level for "
                        f"{dep['seconds']:.1f} s: {_spans_text(dep['spans'])} (shaded red)")
            else:
                msg += f"the {window:g} s mean never falls below {below:.0%} of the described level"
            refs.append({"kind": "described", "variant": n, "metric": str(ref["metric"]), "level": level,
                         "interval": [t0, t1], "below": below, "window": window, "mean": dep["mean"],
                         "departures": dep["spans"], "text": msg})
        # the axis holds the series and every level drawn on it (a published level above our curve)
        levels = [r["level"] / scale for r in refs
                  if r["variant"] == n and r["kind"] in ("published-level", "described") and math.isfinite(r["level"])]
        ax.set_ylim(0, (spec.get("ylim") or [0, max(max([ymax, *levels]) * 1.08, 1e-9)])[1])
        if spec.get("xlim"):
            ax.set_xlim(*spec["xlim"])
        seed_txt = f", seed {res.meta.get('seed')}" if len(rs.runs[n]) > 1 else ""
        pf = paper_figure(spec, entry, n)
        ax.set_title(f"{n}{seed_txt}" + (f" · paper: {pf}" if pf else ""), fontsize=10, loc="left")
        ax.set_ylabel(ylabel, fontsize=9)
        ax.set_xlabel("time (s)", fontsize=9)
        ax.xaxis.set_tick_params(labelbottom=True)
        event_handles = marks.draw_events(ax, run_events(res), colors, names)
        handles = [h for h in ax.get_legend_handles_labels()[0] if h not in event_handles] + event_handles
        marks.outside_legend(ax, handles, fontsize=7.5)
    what = {"throughput": f"Throughput averaged over {mean_window:g} s (thin) and running mean since the flow's "
                          "start (thick)",
            "cwnd": "Congestion window over time", "queue": "Queue length over time"}[kind]
    caption = spec.get("caption") or f"{what}; one panel per variant."
    return {"png": _png(fig), "caption": str(caption), "references": refs}


def _variant_values(rs: RunSet, variant: str, metric: str) -> list[float]:
    vals = []
    for res in rs.runs.get(variant, []):
        try:
            v = res.value(metric)
            vals.append(float(v))
        except (KeyError, TypeError, ValueError):
            pass
    return [v for v in vals if not math.isnan(v)]


def _published(entry: "Entry", variant: str, metric: str) -> float:
    return float(entry.published_of(variant).get(metric, math.nan))


def _bar_figure(spec: Mapping[str, Any], entry: "Entry", rs: RunSet) -> dict | None:
    metric = str(spec["metric"])
    variants = [n for n in _pick_variants(spec, rs) if _variant_values(rs, n, metric)]
    if not variants:
        return None
    ours = [_variant_values(rs, n, metric) for n in variants]
    means = np.array([np.mean(v) for v in ours])
    errs = np.array([np.std(v, ddof=1) if len(v) > 1 else 0.0 for v in ours])
    pubs = np.array([_published(entry, n, metric) for n in variants])
    scale, unit = _unit(np.concatenate([means, pubs[~np.isnan(pubs)]]), metric)
    if spec.get("scale"):
        scale, unit = float(spec["scale"]), str(spec.get("unit", ""))
    fig = _mpl_figure(max(6.5, 2.5 + 0.9 * len(variants)), 3.4)
    ax = fig.add_subplot()
    _style(ax)
    x = np.arange(len(variants))
    has_pub = bool(np.isfinite(pubs).any())
    w = 0.38 if has_pub else 0.6
    ax.bar(x - (w / 2 if has_pub else 0), means / scale, w, yerr=errs / scale if errs.any() else None,
           color=_COLORS[0], label="ours (vegaslab)", capsize=3)
    if has_pub:
        ax.bar(x + w / 2, np.where(np.isfinite(pubs), pubs, 0) / scale, w, color="white",
               edgecolor="#333333", hatch="///", label="published")
    ax.set_xticks(x, variants, rotation=30 if len(variants) > 4 else 0, ha="right" if len(variants) > 4 else "center",
                  fontsize=9)
    ax.set_xlabel("variant", fontsize=9)
    ax.set_ylabel(_scaled_label(spec.get("ylabel"), metric, unit), fontsize=9)
    pf = paper_figure(spec, entry)
    if pf:
        ax.set_title(f"paper: {pf}", fontsize=10, loc="left")
    marks.outside_legend(ax, ax.get_legend_handles_labels()[0], fontsize=8)
    cap = spec.get("caption") or f"{metric}: ours (mean over seeds, bar = std) beside the published number."
    refs = [{"kind": "published-bar", "variant": n, "metric": metric, "level": float(p),
             "text": f"{n}: {metric} published {_fmt_level(float(p), scale, unit)} (hatched bar)"}
            for n, p in zip(variants, pubs) if np.isfinite(p)]
    return {"png": _png(fig), "caption": str(cap), "references": refs}


def _line_figure(spec: Mapping[str, Any], entry: "Entry", rs: RunSet) -> dict | None:
    metric = str(spec["metric"])
    xs = list(spec.get("x") or [])
    series = spec.get("series") or []
    if not xs or not series:
        raise ValueError('a line figure needs x = [...] and series = [{label, variant = "name-{x}"}]')
    fig = _mpl_figure(9.0, 3.6)
    ax = fig.add_subplot()
    _style(ax)
    drawn = 0
    refs: list[dict] = []
    plotted: list[np.ndarray] = []
    lines = []
    for i, s in enumerate(series):
        tmpl = str(s.get("variant") or s.get("variants"))
        # The strict {name} filler of claims, not str.format (which follows {x.attr} anywhere).
        names = [claims.interpolate(tmpl, {"x": x}, "figure variant") for x in xs]
        ours = [_variant_values(rs, n, metric) for n in names]
        pubs = [_published(entry, n, metric) for n in names]
        color = _COLORS[i % len(_COLORS)]
        label = str(s.get("label", tmpl))
        m = np.array([np.mean(o) if o else np.nan for o in ours])
        e = np.array([np.std(o, ddof=1) if len(o) > 1 else 0.0 for o in ours])
        pubs_a = np.array(pubs, dtype=float)
        lines.append((color, label, m, e, pubs_a))
        plotted += [m - e, m + e, pubs_a]
    values = np.concatenate(plotted) if plotted else np.array([])
    scale, unit = _unit(values, metric)
    if spec.get("scale"):
        scale, unit = float(spec["scale"]), str(spec.get("unit", ""))
    order: list[str] = []  # legend: each series' ours, then its published
    for color, label, m, e, pubs_a in lines:
        order += [f"{label} (ours)", f"{label} (published)"]
        if np.isfinite(m).any():
            ax.errorbar(xs, m / scale, yerr=e / scale if e.any() else None, color=color, marker="o", lw=1.8,
                        ms=5, capsize=3, label=f"{label} (ours)")
            drawn += 1
        if np.isfinite(pubs_a).any():
            ax.plot(xs, pubs_a / scale, color=color, ls="--", marker="s", mfc="white", ms=5, lw=1.2,
                    label=f"{label} (published)")
            shown = ", ".join(f"{x}: {num_cell(p)}" for x, p in zip(xs, pubs_a) if np.isfinite(p))
            refs.append({"kind": "published-line", "variant": tmpl, "metric": metric,
                         "level": float(np.nanmean(pubs_a)),
                         "text": f"{label}: {metric} published ({spec.get('xlabel', 'x')}: value) {shown} (dashed)"})
    if not drawn:
        return None
    ax.set_xticks(xs)
    ax.set_xlabel(spec.get("xlabel", "x"), fontsize=9)
    ax.set_ylabel(_scaled_label(spec.get("ylabel"), metric, unit), fontsize=9)
    pf = paper_figure(spec, entry)
    if pf:
        ax.set_title(f"paper: {pf}", fontsize=10, loc="left")
    if spec.get("log_y"):
        ax.set_yscale("log")
    elif spec.get("ylim"):
        ax.set_ylim(*spec["ylim"])
    elif (limits := honest_ylim(values / scale)) is not None:
        ax.set_ylim(*limits)
    handles, labels = ax.get_legend_handles_labels()
    ranked = sorted(zip(handles, labels), key=lambda hl: order.index(hl[1]) if hl[1] in order else len(order))
    marks.outside_legend(ax, [h for h, _label in ranked], fontsize=8)
    cap = spec.get("caption") or f"{metric} against {spec.get('xlabel', 'x')}: ours (solid) and published (dashed)."
    return {"png": _png(fig), "caption": str(cap), "references": refs}


def default_figures(entry: "Entry", rs: RunSet) -> list[dict]:
    """Figures for an entry that lists none: throughput and cwnd of the first variants that
    have the series, and a bar chart per published metric."""
    figs: list[dict] = [{"kind": "throughput"}, {"kind": "cwnd"}]
    metrics: list[str] = []
    for v in entry.variants or [{"published": entry.meta.get("published", {})}]:
        for k in (v.get("published") or {}):
            if k not in metrics:
                metrics.append(k)
    figs += [{"kind": "bar", "metric": m} for m in metrics[:4]]
    return figs


def render_figures(entry: "Entry", rs: RunSet) -> list[dict]:
    """[{title, caption, png (base64), kind, paper_figure, references} or {title, error}] for
    the entry's figures."""
    specs = entry.figures or default_figures(entry, rs)
    out = []
    for spec in specs:
        kind = spec.get("kind")
        title = spec.get("title") or {"throughput": "Throughput", "cwnd": "Congestion window",
                                      "queue": "Queue length", "bar": f"{spec.get('metric', '')}",
                                      "line": f"{spec.get('metric', '')}"}.get(kind, str(kind))
        try:
            if kind in ("throughput", "cwnd", "queue"):
                got = _series_figure(kind, spec, entry, rs)
            elif kind == "bar":
                got = _bar_figure(spec, entry, rs)
            elif kind == "line":
                got = _line_figure(spec, entry, rs)
            else:
                raise ValueError(f"unknown figure kind {kind!r}")
        except Exception as exc:  # noqa: BLE001 - one bad figure must not lose the report
            out.append({"title": title, "error": f"{type(exc).__name__}: {exc}"})
            continue
        if got is None:
            if entry.figures:  # asked for explicitly: say why it is missing
                out.append({"title": title, "error": "no data for this figure (monitor off, or its variants failed)"})
            continue
        out.append({"title": title, "kind": str(kind), "paper_figure": paper_figure(spec, entry), **got})
    return out
