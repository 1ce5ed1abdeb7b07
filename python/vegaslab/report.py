"""The reproduction report: ``index.html`` (self-contained), ``summary.md`` and ``results/``.

:func:`build` gathers, for each catalog entry, the stored runs of its variants and seeds, the
published-vs-ours table (mean and sample std over seeds) and the claim verdicts
(:mod:`vegaslab.claims`); :func:`write_report` draws the figures (matplotlib, embedded as
base64 PNG data URIs) and writes

- ``index.html``: one page, CSS inline, no external request: a summary (claims held, numbers
  within 10% and 25% of the paper's, the worst disagreements with links), then per experiment
  its set-up, assumptions, notes, the published / ours / ratio table (|ratio - 1| > 25% marked),
  figures in the paper's style and a verdict per claim. An experiment with a disagreement
  (a number off by more than 25%, a claim that fails) says so at the top of its section and
  shows the entry's notes there.
- ``summary.md``: the same tables in Markdown; ``summary.csv``: the comparison table.
- ``results/comparison.parquet``, ``results/claims.parquet``, ``results/runs.parquet`` and the
  runs' own tables in ``results/<entry>/<variant>/seed<k>/`` (written by the runner).
- Provenance: every run directory's meta.json holds the run's ``provenance`` (normalised
  scenario, overrides, seed, versions, source revision, a ``vegaslab run`` command);
  ``results/provenance.json`` lists them all (without the scenarios, which stay in the run
  directories) with the build they ran on, ``runs.parquet`` has each run's scenario hash and
  revision, and summary.md and index.html say which build produced the numbers.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import math
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from . import claims
from .claims import RunSet, Verdict, evaluate_all, fmt

if TYPE_CHECKING:  # pragma: no cover
    from .catalog import Entry
    from .runner import Execution, Job

#: |ratio - 1| above these is "off by more than 10% / 25%".
CLOSE, FAR = 0.10, 0.25
#: At most this many variants in one time-series figure (one panel each).
MAX_PANELS = 6
WORST = 5


# ---------------------------------------------------------------------- data


@dataclass
class Built:
    """Everything the report shows, before the figures are drawn."""

    entries: list["Entry"]
    table: pd.DataFrame
    verdicts: dict[str, list[Verdict]]
    runsets: dict[str, RunSet]
    jobs: list["Job"]
    execution: "Execution"
    quick: bool = False
    seed: int | None = None
    t_start: float = field(default_factory=time.perf_counter)
    reproduce_wall_s: float = 0.0
    entry_stats: dict[str, dict] = field(default_factory=dict)
    #: Each finished run's ``meta["provenance"]``, by job key.
    provenance: dict[str, dict] = field(default_factory=dict)


def ratio_stats(table: pd.DataFrame) -> dict[str, int]:
    """Counts over the rows with a published number: ``total``, ``within10``, ``within25``
    (|ours / published - 1| <= 10% / 25%; a failed or missing value counts as outside)."""
    rows = table[table["published"].notna()]
    dev = (rows["ratio"].astype(float) - 1).abs()
    return {"total": int(len(rows)), "within10": int((dev <= CLOSE + 1e-12).sum()),
            "within25": int((dev <= FAR + 1e-12).sum())}


def disagreement(r: float) -> float:
    """How far a ratio is from 1, symmetric in over- and under-shoot: |log(ratio)| (inf for
    0, inf or NaN)."""
    try:
        r = float(r)
    except (TypeError, ValueError):
        return math.inf
    if not math.isfinite(r) or r <= 0:
        return math.inf
    return abs(math.log(r))


def worst(table: pd.DataFrame, n: int = WORST) -> pd.DataFrame:
    """The ``n`` rows farthest from the paper by |log(ratio)|, worst first; only rows off by
    more than 10%. A ratio to a published 0 measures nothing, so those rows are listed apart
    (:func:`zero_mismatches`)."""
    rows = table[table["published"].notna() & (table["published"] != 0)].copy()
    if rows.empty:
        return rows
    rows["_d"] = rows["ratio"].map(disagreement)
    rows = rows[(rows["ratio"].astype(float) - 1).abs().fillna(math.inf) > CLOSE]
    return rows.sort_values("_d", ascending=False, kind="stable").head(n).drop(columns="_d")


def zero_mismatches(table: pd.DataFrame) -> pd.DataFrame:
    """Rows where the paper prints 0 and our mean is not 0 (e.g. retransmissions)."""
    rows = table[(table["published"] == 0) & table["ours"].notna() & (table["ours"] != 0)]
    return rows.sort_values("ours", ascending=False, kind="stable")


def _zero_text(z: pd.DataFrame) -> str:
    return "; ".join(f"{r.entry}/{r.run} {r.metric} = {_num_cell(r.ours)}" for r in z.itertuples(index=False))


def _comparison_rows(entry_id: str, variant: str, published: Mapping[str, float], results: Sequence[Any],
                     error: str) -> list[dict]:
    from .catalog import ratio

    if not results:
        return [{"entry": entry_id, "run": variant, "metric": "(run failed)", "published": math.nan,
                 "ours": math.nan, "std": math.nan, "n": 0, "ratio": math.nan, "note": error or "no results"}]
    rows = []
    if not published:
        rows.append({"entry": entry_id, "run": variant, "metric": "(no published numbers)", "published": math.nan,
                     "ours": math.nan, "std": math.nan, "n": len(results), "ratio": math.nan, "note": ""})
    for key, pub in published.items():
        vals, note = [], ""
        for res in results:
            try:
                v = res.value(key)
                vals.append(float(v) if v is not None else math.nan)
            except KeyError as exc:
                note = str(exc.args[0]) if exc.args else str(exc)
                break
            except (TypeError, ValueError):
                vals.append(math.nan)
        good = [v for v in vals if not math.isnan(v)] if not note else []
        ours = float(np.mean(good)) if good else math.nan
        std = float(np.std(good, ddof=1)) if len(good) > 1 else math.nan
        # A mean over only some of the seeds is shown, but it is not compared with the paper:
        # missing data never counts as agreement (the ratio is NaN, "outside" in the counts).
        complete = not error and not note and len(good) == len(vals)
        if error and not note:
            note = f"some seeds failed, so the ratio is not computed: {error}"
        elif not note and len(good) < len(vals):
            note = f"missing value (NaN) in {len(vals) - len(good)} of {len(vals)} seeds, so the ratio is not computed"
        rows.append({"entry": entry_id, "run": variant, "metric": key, "published": pub, "ours": ours,
                     "std": std, "n": len(good), "ratio": ratio(ours, pub) if complete else math.nan, "note": note})
    return rows


def build(entries: Sequence["Entry"], jobs: Sequence["Job"], execution: "Execution",
          results: Mapping[str, Any], *, quick: bool = False, seed: int | None = None) -> Built:
    """Compare the finished runs (``results``: :class:`vegaslab.Results` by job key, from
    :func:`vegaslab.runner.load`) with the published numbers and check the claims."""
    from .catalog import REPRODUCE_COLUMNS, expand

    rows: list[dict] = []
    verdicts: dict[str, list[Verdict]] = {}
    runsets: dict[str, RunSet] = {}
    stats: dict[str, dict] = {}
    prov: dict[str, dict] = {}
    by_variant: dict[tuple[str, str], list["Job"]] = {}
    for job in jobs:
        by_variant.setdefault((job.entry_id, job.variant), []).append(job)
    for entry in entries:
        runs: dict[str, list] = {}
        failed: dict[str, str] = {}
        order = []
        st = {"runs": 0, "ran": 0, "cached": 0, "failed": 0, "sim_wall_s": 0.0, "seeds": set()}
        for spec in expand(entry, quick=quick):
            order.append(spec.name)
            got, errors = [], []
            for job in by_variant.get((entry.id, spec.name), []):
                o = execution.outcomes.get(job.key)
                st["runs"] += 1
                st["seeds"].add(job.seed)
                if o is None:
                    errors.append(f"seed {job.seed}: not run")
                    st["failed"] += 1
                    continue
                st[o.status] += 1
                st["sim_wall_s"] += o.wall_s
                if o.status == "failed":
                    errors.append(f"seed {job.seed}: {o.error}")
                    continue
                res = results.get(job.key)
                if res is None:
                    errors.append(f"seed {job.seed}: the run is not readable from the store "
                                  "(removed, or stored with a parameter that replaced a results column)")
                    continue
                got.append(res)
                if isinstance(res.meta.get("provenance"), dict):
                    prov[job.key] = res.meta["provenance"]
            if got:
                runs[spec.name] = got
            if errors:
                failed[spec.name] = "; ".join(errors)
            rows += _comparison_rows(entry.id, spec.name, spec.published, got, failed.get(spec.name, ""))
        st["seeds"] = sorted(st["seeds"])
        stats[entry.id] = st
        rs = RunSet(runs=runs, failed=failed, order=order)
        runsets[entry.id] = rs
        verdicts[entry.id] = evaluate_all(entry.claims, rs)
    table = pd.DataFrame(rows, columns=REPRODUCE_COLUMNS)
    return Built(entries=list(entries), table=table, verdicts=verdicts, runsets=runsets, jobs=list(jobs),
                 execution=execution, quick=quick, seed=seed, entry_stats=stats, provenance=prov)


def builds(b: Built) -> list[dict]:
    """The distinct builds (vegaslab version, core version, source revision) the report's runs
    ran on; more than one when stored runs from another build are reused (run keys hold the
    core's semantic version, not its revision: see vegaslab.runner)."""
    seen: dict[tuple, dict] = {}
    for p in b.provenance.values():
        k = (p.get("vegaslab_version"), p.get("core_version"), p.get("source_revision"))
        seen.setdefault(k, {"vegaslab_version": k[0], "core_version": k[1], "source_revision": k[2], "runs": 0})
        seen[k]["runs"] += 1
    return list(seen.values())


def provenance_line(b: Built) -> str:
    """One sentence: which build produced the numbers, and where each run's record is."""
    bs = builds(b)
    if not bs:
        return "Provenance: no finished run."
    which = "; ".join(f"vegaslab {x['vegaslab_version']}, core {x['core_version']}, source revision "
                      f"{x['source_revision']} ({x['runs']} runs)" for x in bs)
    return (f"Provenance: {which}. Each run's normalised scenario, overrides, seed and re-run command: "
            "results/<entry>/<variant>/seed<k>/meta.json (provenance); all runs: results/provenance.json.")


# ---------------------------------------------------------------------- figures

_COLORS = ["#1f4e9c", "#c0392b", "#2e8b57", "#8e44ad", "#d68910", "#17a2b8", "#5d6d7e", "#a04000"]


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
    import fnmatch

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


def _series_figure(kind: str, spec: Mapping[str, Any], rs: RunSet) -> tuple[str, str] | None:
    """throughput / cwnd / queue over time, one panel per variant (first seed)."""
    table, key, column = {"throughput": ("series_flows", "flow", "throughput_bps"),
                          "cwnd": ("series_flows", "flow", "cwnd"),
                          "queue": ("series_queues", "queue", "length")}[kind]
    column = spec.get("column", column)

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
    ncols = 2 if len(variants) > 2 else 1
    nrows = math.ceil(len(variants) / ncols)
    fig = _mpl_figure(11.0 if ncols == 2 else 9.0, 0.5 + 2.2 * nrows)
    grid = fig.subplots(nrows, ncols, sharex=True, squeeze=False)
    axes = list(grid.flat)
    for ax in axes[len(variants):]:
        ax.set_visible(False)
    for ax in axes[len(variants) - ncols:len(variants)]:
        ax.set_xlabel("time (s)", fontsize=9)
        ax.xaxis.set_tick_params(labelbottom=True)
    ymax = float(np.nanmax(all_vals) / scale) if len(all_vals) else 1.0
    for ax, n in zip(axes, variants):
        res, df = frames[n]
        _style(ax)
        entities = list(dict.fromkeys(df[key]))
        spans = res.flows.set_index("flow")[["start_s", "end_s"]] if kind == "throughput" and len(res.flows) else None
        for i, ent in enumerate(entities[:8]):
            g = df[df[key] == ent].sort_values("time")
            color = _COLORS[i % len(_COLORS)]
            if kind == "throughput":
                if spans is not None and ent in spans.index:
                    start, end = spans.loc[ent, "start_s"], spans.loc[ent, "end_s"]
                    keep = g["time"] >= (start if np.isfinite(start) else -1)
                    if np.isfinite(end):
                        keep &= g["time"] <= end + 1e-9
                    g = g[keep] if keep.any() else g
                y = g[column].to_numpy(dtype=float) / scale
                ax.plot(g["time"], y, lw=0.5, alpha=0.45, color=color)
                mean = np.cumsum(y) / np.arange(1, len(y) + 1) if len(y) else y
                ax.plot(g["time"], mean, lw=2.0, color=color, label=f"{ent} (running mean)")
            elif kind == "queue":
                ax.plot(g["time"], g[column], drawstyle="steps-post", lw=0.9, color=color, label=str(ent))
            else:
                ax.plot(g["time"], g[column] / scale, lw=1.2, color=color, label=str(ent))
        ax.set_ylim(0, (spec.get("ylim") or [0, max(ymax * 1.08, 1e-9)])[1])
        if spec.get("xlim"):
            ax.set_xlim(*spec["xlim"])
        seed_txt = f", seed {res.meta.get('seed')}" if len(rs.runs[n]) > 1 else ""
        ax.set_title(f"{n}{seed_txt}", fontsize=10, loc="left")
        ax.set_ylabel(ylabel, fontsize=9)
        if 0 < len(entities) <= 8:
            ax.legend(loc="upper right", fontsize=8, frameon=False)
    what = {"throughput": "Throughput in 0.1 s bins (thin) and running mean since the flow's start (thick)",
            "cwnd": "Congestion window over time", "queue": "Queue length over time"}[kind]
    caption = spec.get("caption") or f"{what}; one panel per variant."
    return _png(fig), str(caption)


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
    for v in entry.variants:
        if v["name"] == variant:
            return float(v.get("published", {}).get(metric, math.nan))
    if not entry.variants and variant == entry.id:
        return float(entry.meta.get("published", {}).get(metric, math.nan))
    return math.nan


def _bar_figure(spec: Mapping[str, Any], entry: "Entry", rs: RunSet) -> tuple[str, str] | None:
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
    fig = _mpl_figure(max(5.0, 1.0 + 0.9 * len(variants)), 3.4)
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
    ax.set_ylabel(spec.get("ylabel") or (f"{metric} ({unit})" if unit else metric), fontsize=9)
    ax.legend(fontsize=8, frameon=False)
    cap = spec.get("caption") or f"{metric}: ours (mean over seeds, bar = std) beside the published number."
    return _png(fig), str(cap)


def _line_figure(spec: Mapping[str, Any], entry: "Entry", rs: RunSet) -> tuple[str, str] | None:
    metric = str(spec["metric"])
    xs = list(spec.get("x") or [])
    series = spec.get("series") or []
    if not xs or not series:
        raise ValueError('a line figure needs x = [...] and series = [{label, variant = "name-{x}"}]')
    fig = _mpl_figure(7.5, 3.6)
    ax = fig.add_subplot()
    _style(ax)
    drawn = 0
    allv = []
    for i, s in enumerate(series):
        tmpl = str(s.get("variant") or s.get("variants"))
        # The strict {name} filler of claims, not str.format (which follows {x.attr} anywhere).
        names = [claims.interpolate(tmpl, {"x": x}, "figure variant") for x in xs]
        ours = [_variant_values(rs, n, metric) for n in names]
        pubs = [_published(entry, n, metric) for n in names]
        allv += [v for o in ours for v in o] + [p for p in pubs if np.isfinite(p)]
        color = _COLORS[i % len(_COLORS)]
        label = str(s.get("label", tmpl))
        m = np.array([np.mean(o) if o else np.nan for o in ours])
        e = np.array([np.std(o, ddof=1) if len(o) > 1 else 0.0 for o in ours])
        scale, _ = (float(spec.get("scale", 1.0)), "")
        if np.isfinite(m).any():
            ax.errorbar(xs, m / scale, yerr=e / scale if e.any() else None, color=color, marker="o", lw=1.8,
                        ms=5, capsize=3, label=f"{label} (ours)")
            drawn += 1
        pubs_a = np.array(pubs, dtype=float)
        if np.isfinite(pubs_a).any():
            ax.plot(xs, pubs_a / scale, color=color, ls="--", marker="s", mfc="white", ms=5, lw=1.2,
                    label=f"{label} (published)")
    if not drawn:
        return None
    ax.set_xticks(xs)
    ax.set_xlabel(spec.get("xlabel", "x"), fontsize=9)
    ax.set_ylabel(spec.get("ylabel", metric), fontsize=9)
    if spec.get("log_y"):
        ax.set_yscale("log")
    ax.legend(fontsize=8, frameon=False, ncol=2)
    cap = spec.get("caption") or f"{metric} against {spec.get('xlabel', 'x')}: ours (solid) and published (dashed)."
    return _png(fig), str(cap)


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
    """[{title, caption, png (base64)} or {title, error}] for the entry's figures."""
    specs = entry.figures or default_figures(entry, rs)
    out = []
    for spec in specs:
        kind = spec.get("kind")
        title = spec.get("title") or {"throughput": "Throughput", "cwnd": "Congestion window",
                                      "queue": "Queue length", "bar": f"{spec.get('metric', '')}",
                                      "line": f"{spec.get('metric', '')}"}.get(kind, str(kind))
        try:
            if kind in ("throughput", "cwnd", "queue"):
                got = _series_figure(kind, spec, rs)
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
        out.append({"title": title, "png": got[0], "caption": got[1]})
    return out


# ---------------------------------------------------------------------- set-up facts


def _fmt_value(v: Any) -> str:
    if isinstance(v, Mapping):
        return ", ".join(f"{k} {_fmt_value(x)}" for k, x in v.items())
    if isinstance(v, list):
        return "; ".join(_fmt_value(x) for x in v)
    return str(v)


def setup_facts(entry: "Entry") -> list[tuple[str, str]]:
    """(label, text) lines describing the scenario: duration, topology, flows, monitors."""
    sc = entry.scenario
    facts: list[tuple[str, str]] = []
    run = sc.get("run", {}) or {}
    if run:
        facts.append(("run", _fmt_value(run)))
    for i, link in enumerate(sc.get("links", []) or []):
        ends = link.get("endpoints", ["?", "?"])
        parts = [f"{link.get('bandwidth', '?')}", f"delay {link.get('delay', '?')} one way"]
        if link.get("queue"):
            parts.append(f"queue {_fmt_value(link['queue'])}")
        if link.get("delay_schedule"):
            parts.append("delay schedule " + "; ".join(f"at {d.get('at')}: {d.get('delay')}" for d in link["delay_schedule"]))
        extra = {k: v for k, v in link.items() if k not in ("endpoints", "bandwidth", "delay", "queue", "delay_schedule")}
        if extra:
            parts.append(_fmt_value(extra))
        facts.append((f"links[{i}] {ends[0]}–{ends[-1]}", ", ".join(parts)))
    for key in ("dumbbell", "parking_lot", "lte", "aqt"):
        if sc.get(key):
            facts.append((key, _fmt_value(sc[key])))
    for f in sc.get("flows", []) or []:
        parts = [f"{f.get('from', '?')} → {f.get('to', '?')}", str(f.get("cc", "?"))]
        for k in ("range", "app", "file_size", "start", "stop", "params", "tcp"):
            if f.get(k) not in (None, {}, ""):
                parts.append(f"{k} {_fmt_value(f[k])}")
        facts.append((f"flow {f.get('name', '?')}", ", ".join(parts)))
    others = {k: v for k, v in sc.items() if k not in ("run", "links", "flows", "dumbbell", "parking_lot", "lte", "aqt")}
    for k, v in others.items():
        facts.append((k, _fmt_value(v)))
    return facts


# ---------------------------------------------------------------------- HTML

_CSS = """
:root{--ink:#1c2833;--muted:#5d6d7e;--line:#d5d8dc;--bg:#f7f9fb;--ok:#1e8449;--okbg:#e9f7ef;--bad:#b03a2e;
--badbg:#fdedec;--warn:#9a6700;--warnbg:#fef5e7;--accent:#1f4e9c}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",Helvetica,Arial,sans-serif;color:var(--ink);background:var(--bg)}
main{max-width:1180px;margin:0 auto;padding:28px 32px 60px}
header.top{background:#13243f;color:#fff;padding:26px 32px}
header.top .wrap{max-width:1180px;margin:0 auto}
header.top h1{margin:0 0 6px;font-size:26px;font-weight:600}
header.top p{margin:2px 0;color:#c9d6ea;font-size:13.5px}
h2{font-size:21px;margin:0 0 4px}
h3{font-size:15px;margin:22px 0 8px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(200px,1fr));gap:14px;margin:4px 0 20px}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 16px}
.card .big{font-size:28px;font-weight:650}
.card .lbl{color:var(--muted);font-size:13px}
section.panel,section.experiment{background:#fff;border:1px solid var(--line);border-radius:10px;padding:22px 26px;margin:0 0 26px}
.sub{color:var(--muted);font-size:13.5px;margin:0 0 10px}
table{border-collapse:collapse;width:100%;font-size:13.5px;margin:6px 0 8px}
th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{background:#eef2f7;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.far td{background:var(--badbg)}tr.near td{background:var(--warnbg)}
tr.failed td{background:var(--badbg);color:var(--bad)}
code,.mono{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600}
.b-holds{background:var(--okbg);color:var(--ok)}.b-fails{background:var(--badbg);color:var(--bad)}
.b-error,.b-skipped{background:var(--warnbg);color:var(--warn)}
ul.verdicts{list-style:none;padding:0;margin:6px 0}
ul.verdicts li{border:1px solid var(--line);border-left:5px solid var(--line);border-radius:6px;padding:8px 12px;margin:0 0 8px}
li.verdict.holds{border-left-color:var(--ok)}li.verdict.fails{border-left-color:var(--bad)}
li.verdict.error,li.verdict.skipped{border-left-color:#d68910}
li.verdict .detail{display:block;margin-top:3px;color:#34495e;word-break:break-word}
.callout{border-radius:8px;padding:12px 16px;margin:12px 0}
.callout.disagree{background:var(--badbg);border:1px solid #f1b0a9}
.callout.quick{background:var(--warnbg);border:1px solid #f5cba7}
.callout p{margin:4px 0}
.notes{white-space:pre-wrap;background:#fbfcfd;border:1px solid var(--line);border-radius:6px;padding:10px 12px;font-size:13.5px}
figure{margin:14px 0 18px;text-align:center}
figure img{max-width:100%;height:auto;border:1px solid var(--line);border-radius:6px;background:#fff}
figcaption{color:var(--muted);font-size:13px;margin-top:4px}
.figerr{color:var(--bad);font-size:13px}
img.broken{outline:3px solid red}
footer{color:var(--muted);font-size:12.5px;text-align:center;margin-top:30px}
"""

_SCRIPT = """
(function(){function check(){var imgs=document.images,ok=0,bad=0;
for(var i=0;i<imgs.length;i++){var im=imgs[i];if(im.complete&&im.naturalWidth>0){ok++;}else{bad++;im.classList.add('broken');}}
document.body.setAttribute('data-images-total',imgs.length);document.body.setAttribute('data-images-loaded',ok);
document.body.setAttribute('data-images-broken',bad);document.body.setAttribute('data-report-ready','1');}
if(document.readyState==='complete'){check();}else{window.addEventListener('load',check);}})();
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def anchor(entry_id: str) -> str:
    return "exp-" + re.sub(r"[^A-Za-z0-9_-]+", "-", entry_id)


def _num_cell(v: Any) -> str:
    from .results import _num

    return _num(v, 7)


def _ratio_txt(r: Any) -> str:
    try:
        r = float(r)
    except (TypeError, ValueError):
        return "-"
    if math.isnan(r):
        return "-"
    return "inf" if math.isinf(r) else f"{r:.3f}"


def _row_class(r) -> str:
    if r.metric == "(run failed)":
        return "failed"
    if pd.isna(r.published):
        return ""
    d = abs(float(r.ratio) - 1) if not pd.isna(r.ratio) else math.inf
    return "far" if d > FAR else ("near" if d > CLOSE else "")


def _comparison_html(part: pd.DataFrame) -> str:
    from .catalog import _ours_cell

    rows = []
    for r in part.itertuples(index=False):
        cls = _row_class(r)
        note = f'<br><span class="sub">{_e(r.note)}</span>' if r.note else ""
        if r.metric in ("(run failed)", "(no published numbers)"):
            rows.append(f'<tr class="{cls}"><td>{_e(r.run)}</td><td colspan="5">{_e(r.metric)}{note}</td></tr>')
            continue
        n = "" if pd.isna(r.n) else str(int(r.n))
        rows.append(f'<tr class="{cls}"><td>{_e(r.run)}</td><td><code>{_e(r.metric)}</code>{note}</td>'
                    f'<td class="num">{_e(_num_cell(r.published))}</td>'
                    f'<td class="num">{_e(_ours_cell(r.ours, r.std, r.n))}</td><td class="num">{_e(n)}</td>'
                    f'<td class="num">{_e(_ratio_txt(r.ratio))}</td></tr>')
    if not rows:
        rows.append('<tr><td colspan="6">no runs</td></tr>')
    return ('<table class="comparison"><thead><tr><th>variant</th><th>metric</th><th class="num">published</th>'
            '<th class="num">ours (mean ± std)</th><th class="num">seeds</th><th class="num">ratio</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _verdicts_html(vs: Sequence[Verdict]) -> str:
    if not vs:
        return '<ul class="verdicts"><li class="verdict none">No claims recorded for this experiment.</li></ul>'
    items = []
    for v in vs:
        src = f' <span class="sub">({_e(v.claim.source)})</span>' if v.claim.source else ""
        items.append(f'<li class="verdict {_e(v.status)}"><span class="badge b-{_e(v.status)}">{_e(v.status)}</span> '
                     f'{_e(v.text)}{src}<span class="detail mono">{_e(v.expr)}</span>'
                     f'<span class="detail mono">→ {_e(v.detail)}</span></li>')
    return f'<ul class="verdicts">{"".join(items)}</ul>'


def _kv_table(rows: Iterable[Sequence[str]], headers: Sequence[str], cls: str = "") -> str:
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows)
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _entry_disagreements(part: pd.DataFrame, vs: Sequence[Verdict]) -> list[str]:
    out = []
    for r in part.itertuples(index=False):
        if r.metric == "(run failed)":
            out.append(f"{r.run}: the run failed ({r.note.splitlines()[0] if r.note else ''})")
        elif not pd.isna(r.published) and (pd.isna(r.ratio) or abs(float(r.ratio) - 1) > FAR):
            out.append(f"{r.run} {r.metric}: ours {_num_cell(r.ours)} vs published {_num_cell(r.published)} "
                       f"(ratio {_ratio_txt(r.ratio)})")
    for v in vs:
        if v.status == "fails":
            out.append(f"claim fails: {v.text}")
    return out


def _section_html(b: Built, entry: "Entry", figures: list[dict], render_s: float) -> str:
    from .catalog import expand

    part = b.table[b.table["entry"] == entry.id]
    vs = b.verdicts.get(entry.id, [])
    st = b.entry_stats.get(entry.id, {})
    cite = " · ".join(_e(x) for x in (entry.meta.get("paper"), entry.meta.get("figure")) if x)
    seeds = st.get("seeds", [])
    sub = (f"{cite} · {st.get('runs', 0)} runs ({len(entry.variants) or 1} variants × {len(seeds)} seed"
           f"{'s' if len(seeds) != 1 else ''}: {', '.join(map(str, seeds))}) · {st.get('ran', 0)} computed, "
           f"{st.get('cached', 0)} from the store, {st.get('failed', 0)} failed · simulation {st.get('sim_wall_s', 0):.1f} s "
           f"(sum over runs), figures {render_s:.1f} s")
    out = [f'<section class="experiment" id="{anchor(entry.id)}" data-entry="{_e(entry.id)}">',
           f"<h2>{_e(entry.id)}: {_e(entry.title)}</h2>", f'<p class="sub">{sub}</p>']
    if b.quick and entry.quick_description():
        shortened = bool(entry.quick.get("set")) or entry.seeds(quick=True) != entry.seeds()
        tail = " Numbers are not the full experiment's." if shortened else " Same runs as the full experiment."
        out.append(f'<div class="callout quick"><p><b>Quick mode:</b> {_e(entry.quick_description())}.{tail}</p></div>')
    notes = str(entry.meta.get("notes", "")).strip()
    dis = _entry_disagreements(part, vs)
    if dis:
        items = "".join(f"<li>{_e(d)}</li>" for d in dis)
        out.append(f'<div class="callout disagree"><p><b>Disagreements with the paper</b> (a number off by more '
                   f'than 25%, a failed run or a claim that fails):</p><ul>{items}</ul>'
                   + (f'<p><b>The entry\'s notes on likely causes:</b></p><div class="notes">{_e(notes)}</div>'
                      if notes else "<p>The entry has no notes explaining this.</p>") + "</div>")
    out.append("<h3>Set-up</h3>")
    out.append(_kv_table(setup_facts(entry), ["item", "value"], "setup"))
    specs = expand(entry, quick=b.quick)
    vrows = []
    for s in specs:
        status = "failed" if s.name in b.runsets[entry.id].failed and s.name not in b.runsets[entry.id].runs else (
            "partly failed" if s.name in b.runsets[entry.id].failed else "ok")
        vrows.append([s.name, " ".join(s.overrides) or "(the file as is)", status])
    out.append(_kv_table(vrows, ["variant", "overrides", "status"], "variants"))
    assumptions = entry.meta.get("assumptions") or []
    out.append("<h3>Assumptions (where the paper is silent)</h3>")
    if assumptions:
        out.append(_kv_table([[a.get("field", "?"), a.get("value", "?"), a.get("reason", "")] for a in assumptions],
                             ["field", "value", "reason"], "assumptions"))
    else:
        out.append('<p class="sub">None recorded.</p>')
    if notes and not dis:
        out += ["<h3>Notes</h3>", f'<div class="notes">{_e(notes)}</div>']
    out += ["<h3>Published vs ours</h3>", _comparison_html(part)]
    out.append("<h3>Figures</h3>")
    if not figures:
        out.append('<p class="sub">No figures (no time series were recorded).</p>')
    for f in figures:
        if "png" in f:
            out.append(f'<figure><img alt="{_e(f["title"])}" src="data:image/png;base64,{f["png"]}">'
                       f'<figcaption><b>{_e(f["title"])}.</b> {_e(f["caption"])}</figcaption></figure>')
        else:
            out.append(f'<p class="figerr">Figure “{_e(f["title"])}” could not be drawn: {_e(f["error"])}</p>')
    out += ["<h3>Claims</h3>", _verdicts_html(vs), "</section>"]
    return "\n".join(out)


def summary_counts(b: Built) -> dict[str, Any]:
    vs = [v for lst in b.verdicts.values() for v in lst]
    counts = {s: sum(1 for v in vs if v.status == s) for s in ("holds", "fails", "error", "skipped")}
    return {"claims": len(vs), **counts, **ratio_stats(b.table),
            "runs": len(b.execution.outcomes), "ran": b.execution.ran, "cached": b.execution.cached,
            "failed_runs": b.execution.failed}


def _summary_html(b: Built, total_wall: float) -> str:
    c = summary_counts(b)

    def pct(a: int, n: int) -> str:
        return f"{100 * a / n:.0f}%" if n else "-"

    cards = [
        (f"{c['holds']}/{c['claims']}", "claims hold",
         f"{c['fails']} fail, {c['error']} error, {c['skipped']} skipped"),
        (f"{c['within10']}/{c['total']}", "numbers within 10%", pct(c["within10"], c["total"])),
        (f"{c['within25']}/{c['total']}", "numbers within 25%", pct(c["within25"], c["total"])),
        (f"{c['runs']}", "runs", f"{c['ran']} computed, {c['cached']} from the store, {c['failed_runs']} failed"),
        (f"{total_wall:.1f} s", "wall time", f"simulation and report, {b.execution.wall_s:.1f} s running"),
    ]
    cards_html = "".join(f'<div class="card"><div class="big">{_e(a)}</div><div class="lbl">{_e(l)}</div>'
                         f'<div class="sub">{_e(s)}</div></div>' for a, l, s in cards)
    w = worst(b.table)
    if len(w):
        rows = "".join(
            f'<tr><td><a href="#{anchor(r.entry)}">{_e(r.entry)}</a></td><td>{_e(r.run)}</td><td><code>{_e(r.metric)}</code></td>'
            f'<td class="num">{_e(_num_cell(r.published))}</td><td class="num">{_e(_num_cell(r.ours))}</td>'
            f'<td class="num">{_e(_ratio_txt(r.ratio))}</td></tr>' for r in w.itertuples(index=False))
        worst_html = ('<h3>Worst disagreements</h3><table class="worst"><thead><tr><th>experiment</th><th>variant</th>'
                      '<th>metric</th><th class="num">published</th><th class="num">ours</th><th class="num">ratio</th>'
                      f'</tr></thead><tbody>{rows}</tbody></table>')
    else:
        worst_html = '<h3>Worst disagreements</h3><p class="sub">Every published number is within 10%.</p>'
    z = zero_mismatches(b.table)
    if len(z):
        worst_html += (f'<p class="sub">Where the paper reports 0 and we do not ({len(z)}): '
                       f'{_e(_zero_text(z))}.</p>')
    fails = [(eid, v) for eid, lst in b.verdicts.items() for v in lst if v.status in ("fails", "error")]
    fail_html = ""
    if fails:
        fail_html = "<h3>Claims that fail or could not be checked</h3><ul>" + "".join(
            f'<li><a href="#{anchor(eid)}">{_e(eid)}</a>: <span class="badge b-{_e(v.status)}">{_e(v.status)}</span> '
            f"{_e(v.text)}</li>" for eid, v in fails) + "</ul>"
    toc_rows = []
    for e in b.entries:
        part = b.table[b.table["entry"] == e.id]
        rs = ratio_stats(part)
        vs = b.verdicts.get(e.id, [])
        held = sum(1 for v in vs if v.status == "holds")
        st = b.entry_stats.get(e.id, {})
        toc_rows.append(f'<tr><td><a href="#{anchor(e.id)}">{_e(e.id)}</a></td><td>{_e(e.title)}</td>'
                        f'<td>{_e(e.meta.get("paper", ""))} {_e(e.meta.get("figure", ""))}</td>'
                        f'<td class="num">{held}/{len(vs)}</td><td class="num">{rs["within25"]}/{rs["total"]}</td>'
                        f'<td class="num">{st.get("sim_wall_s", 0):.1f} s</td></tr>')
    toc = ('<h3>Experiments</h3><table class="toc"><thead><tr><th>id</th><th>title</th><th>paper</th>'
           '<th class="num">claims held</th><th class="num">within 25%</th><th class="num">simulation</th></tr></thead>'
           f'<tbody>{"".join(toc_rows)}</tbody></table>')
    return f'<section class="panel" id="summary"><h2>Summary</h2><div class="cards">{cards_html}</div>{worst_html}{fail_html}{toc}</section>'


def render_html(b: Built, figures: Mapping[str, list[dict]], render_s: Mapping[str, float], total_wall: float,
                robustness_html: str = "") -> str:
    """The page; ``robustness_html`` is the robustness section (:mod:`vegaslab.report_robustness`),
    placed after the summary."""
    from . import __version__, core_version

    when = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    mode = "quick (shortened: see each experiment)" if b.quick else "full"
    seed = f" · every run with seed {b.seed}" if b.seed is not None else ""
    head = (f'<header class="top"><div class="wrap"><h1>vegaslab reproduction report</h1>'
            f"<p>{len(b.entries)} experiments · mode {_e(mode)}{_e(seed)} · generated {_e(when)} · vegaslab "
            f"{_e(__version__)} (core {_e(core_version() or 'not built')}) · wall time {total_wall:.1f} s</p>"
            "<p>ratio = ours / published. Published numbers are ns-2 runs with each paper's own patches; "
            "rows off by more than 25% are red, by more than 10% amber.</p></div></header>")
    sections = [_section_html(b, e, figures.get(e.id, []), render_s.get(e.id, 0.0)) for e in b.entries]
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>vegaslab reproduction report</title><style>{_CSS}</style></head><body>{head}<main>"
            f"{_summary_html(b, total_wall)}{robustness_html}{''.join(sections)}"
            "<footer>Generated by <code>vegaslab reproduce</code>. Raw tables: <code>results/</code> (Parquet); "
            f"Markdown: <code>summary.md</code>.<p>{_e(provenance_line(b))}</p></footer></main>"
            f"<script>{_SCRIPT}</script></body></html>")


# ---------------------------------------------------------------------- writing


def _markdown(b: Built, total_wall: float, render_s: Mapping[str, float]) -> str:
    from .catalog import summary_markdown

    c = summary_counts(b)
    header = [f"Mode: {'quick' if b.quick else 'full'}. Wall time {total_wall:.1f} s. "
              f"runs: {c['ran']} computed, {c['cached']} from the store, {c['failed_runs']} failed (of {c['runs']}).", "",
              f"- Claims held: {c['holds']}/{c['claims']} ({c['fails']} fail, {c['error']} error, {c['skipped']} skipped)",
              f"- Numbers within 10%: {c['within10']}/{c['total']}; within 25%: {c['within25']}/{c['total']}", "",
              provenance_line(b), ""]
    w = worst(b.table)
    if len(w):
        header += ["Worst disagreements:", "", "| entry | run | metric | published | ours | ratio |",
                   "|---|---|---|---:|---:|---:|"]
        header += [f"| {r.entry} | {r.run} | {r.metric} | {_num_cell(r.published)} | {_num_cell(r.ours)} | "
                   f"{_ratio_txt(r.ratio)} |" for r in w.itertuples(index=False)]
        header.append("")
    z = zero_mismatches(b.table)
    if len(z):
        header += [f"Where the paper reports 0 and we do not ({len(z)}): {_zero_text(z)}.", ""]
    extra = {}
    for e in b.entries:
        st = b.entry_stats.get(e.id, {})
        lines = [f"Runs: {st.get('runs', 0)} (seeds {st.get('seeds', [])}); {st.get('ran', 0)} computed, "
                 f"{st.get('cached', 0)} from the store, {st.get('failed', 0)} failed; simulation {st.get('sim_wall_s', 0):.1f} s, "
                 f"figures {render_s.get(e.id, 0):.1f} s.", ""]
        if b.quick and e.quick_description():
            lines += [f"Quick mode: {e.quick_description()}.", ""]
        dis = _entry_disagreements(b.table[b.table["entry"] == e.id], b.verdicts.get(e.id, []))
        if dis:
            lines += ["**Disagreements** (see the notes for likely causes):", ""] + [f"- {d}" for d in dis] + [""]
        extra[e.id] = lines
    return summary_markdown(b.table, b.entries, b.verdicts, header=header, extra=extra)


def _write_provenance(b: Built, path: Path) -> None:
    import json

    from .catalog import safe_name

    runs = []
    for o in b.execution.per_job:
        p = b.provenance.get(o.job.key)
        if p is None:
            continue
        runs.append({"entry": o.job.entry_id, "variant": o.job.variant, "seed": o.job.seed, "status": o.status,
                     "dir": f"{safe_name(o.job.entry_id)}/{safe_name(o.job.variant)}/seed{o.job.seed}",
                     **{k: v for k, v in p.items() if k != "scenario"}})
    doc = {"builds": builds(b), "quick": b.quick, "seed": b.seed, "runs": runs}
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def write_report(b: Built, out: str | os.PathLike) -> list[Path]:
    """Draw the figures and write index.html, summary.md, summary.csv and the result tables."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    figures, render_s = {}, {}
    for e in b.entries:
        t = time.perf_counter()
        figures[e.id] = render_figures(e, b.runsets[e.id])
        render_s[e.id] = time.perf_counter() - t
    # The whole reproduce (simulations, comparison, claims) plus drawing the figures; when
    # called on its own, the time since the build started.
    drawn = sum(render_s.values())
    total = b.reproduce_wall_s + drawn if b.reproduce_wall_s else time.perf_counter() - b.t_start
    res_dir = out / "results"
    res_dir.mkdir(parents=True, exist_ok=True)
    b.table.to_parquet(res_dir / "comparison.parquet", index=False)
    claims = pd.DataFrame([{"entry": eid, "text": v.text, "source": v.claim.source, "expr": v.expr,
                            "status": v.status, "detail": v.detail} for eid, lst in b.verdicts.items() for v in lst],
                          columns=["entry", "text", "source", "expr", "status", "detail"])
    claims.to_parquet(res_dir / "claims.parquet", index=False)
    prov = b.provenance
    runs = pd.DataFrame([{"entry": o.job.entry_id, "variant": o.job.variant, "seed": o.job.seed, "status": o.status,
                          "wall_s": o.wall_s, "error": o.error, "key": o.job.key, "overrides": " ".join(o.job.overrides),
                          "scenario_sha256": prov.get(o.job.key, {}).get("scenario_sha256"),
                          "source_revision": prov.get(o.job.key, {}).get("source_revision")}
                         for o in b.execution.per_job],
                        columns=["entry", "variant", "seed", "status", "wall_s", "error", "key", "overrides",
                                 "scenario_sha256", "source_revision"])
    runs.to_parquet(res_dir / "runs.parquet", index=False)
    _write_provenance(b, res_dir / "provenance.json")
    b.table.to_csv(out / "summary.csv", index=False)
    md = out / "summary.md"
    md.write_text(_markdown(b, total, render_s), encoding="utf-8")
    from .report_robustness import section_html
    from .robustness import load_summaries

    section = section_html(load_summaries(out / "robustness"), out)
    page = out / "index.html"
    page.write_text(render_html(b, figures, render_s, total, section), encoding="utf-8")
    return [page, md, res_dir]
