"""The robustness studies' summaries as text: the cells of the verdict table, which the report's
HTML section (:mod:`vegaslab.report.robustness`) and ``robustness.md`` share, and
``robustness.md`` itself (:func:`markdown`, which ``vegaslab robustness --out DIR`` writes).

Both render the plain-data summaries :func:`vegaslab.study.robustness.summary` makes and
:func:`vegaslab.study.robustness.load_summaries` reads back; nothing here runs a study.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from .tables import md, md_cell, md_code
from ..study.robustness.summaries import study_name


def fmt(x: float | None) -> str:
    """A figure for a table: three significant digits, "–" for none."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.3g}"


def default_cell(s: Mapping[str, Any]) -> str:
    """Our figure at the default point: the mean over seeds and, when they differ, the range."""
    pts = s.get("points") or []
    vals = pts[0].get("values") if pts else None
    if not vals:
        return "–"
    mean, lo, hi = sum(vals) / len(vals), min(vals), max(vals)
    return fmt(mean) if fmt(lo) == fmt(hi) else f"{fmt(mean)} ({fmt(lo)}-{fmt(hi)})"


def study_cell(s: Mapping[str, Any]) -> str:
    """The figure across the study: the lowest and highest mean over the points."""
    r = s.get("study_range")
    return "–" if not r else f"{fmt(r[0])} to {fmt(r[1])}"


def ns2_cell(s: Mapping[str, Any]) -> str:
    from ..study.ns2_check import Ns2Check, describe

    return describe(Ns2Check.from_dict(s["ns2"]) if s.get("ns2") else None)


def default_status(s: Mapping[str, Any]) -> str:
    pts = s.get("points") or []
    if not pts:
        return "–"
    d = pts[0]
    return f"{d['status']} ({holds_cell(d)})"


def holds_cell(p: Mapping[str, Any]) -> str:
    """"7/10 seeds", or "10/10 seeds, one run" when every seed gave the same run (with the
    margin from the figure's threshold when the study gives one)."""
    text = f"{p['holds']}/{p['seeds']} seeds"
    if p.get("single_run"):
        text += ", one run"
        if p.get("margin") is not None:
            text += f", margin {p['margin']:+.1%}"
    return text


def setup_cell(p: Mapping[str, Any]) -> str:
    """"paper's" for a point with the paper's stated set-up, else its departures ("departs:
    queue = 20, stated 50"); "–" for a summary that does not say (vegaslab 0.4.0's)."""
    if "departures" not in p:
        return "–"
    if not p["departures"]:
        return "paper's"
    return "departs: " + "; ".join(f"{d['factor']} = {d['level']}, stated {d['stated']}" for d in p["departures"])


def markdown(summaries: Sequence[Mapping[str, Any]]) -> str:
    """"How robust are the papers' conclusions?": the verdict table, then each study (as
    :func:`vegaslab.study.robustness.load_summaries` gives them, set-aside files included: named with the reason).
    Written beside ``robustness/``, so figures are linked as ``robustness/<name>`` (plain
    names, checked when read); every text from a study or a file read back is quoted inert
    (:func:`vegaslab.report.tables.md`)."""
    studies = [s for s in summaries if "set_aside" not in s]
    lines = ["# How robust are the papers' conclusions?", "",
             "Each study takes one conclusion and varies, one at a time and in the pairs that matter, "
             "the assumptions the paper leaves open; at every point the conclusion is judged per seed "
             "(holds: the exact interval of the share of seeds, at a level corrected for the study's "
             "number of points, is above one half; a point whose seeds all gave the same run rests on "
             "that one run). The verdict is judged at the points with the paper's stated set-up; "
             "departures from it are reported apart. "
             "The figure is the quantity the conclusion is about; ns-2.35 runs the default set-up at "
             "the first seed. vegaslab.study.robustness documents the rules.", "",
             "| study | conclusion | figure | ours at default | ns-2.35 at default | across the study | at our default | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    total = sum(s.get("compute_s", 0) for s in studies)
    lines[4:4] = [f"{len(studies)} studies, {sum(s.get('runs', 0) for s in studies):,} runs, "
                  f"{total:,.0f} s of compute ({total / 3600:.2f} CPU hours).", ""]
    for s in summaries:
        if "set_aside" in s:
            lines.append(f"| {md_cell(set_aside_name(s))} | set aside: {md_cell(s['set_aside'])} | – | – | – | – | – | "
                         "**set aside** |")
            continue
        cells = (study_name(s), s["conclusion"], s.get("figure_label") or "–", default_cell(s), ns2_cell(s),
                 study_cell(s), default_status(s))
        verdict = s["verdict"] + (" (quick)" if s.get("quick") else "")
        lines.append("| " + " | ".join(md_cell(c) for c in cells) + f" | **{md_cell(verdict)}** |")
    for s in summaries:
        if "set_aside" in s:
            lines += ["", f"## {md(set_aside_name(s))}: set aside", "",
                      f"Not shown: {md(s['set_aside'])}."]
            continue
        lines += ["", f"## {md(study_name(s))}: {md(s['conclusion'])}", "",
                  f"Claim {md_code(s['entry'] + '#' + s['claim'])}. {md(s.get('sentence', ''))}", "",
                  f"{s.get('runs', 0)} runs, {s.get('compute_s', 0):.0f} s of compute (the runs' wall times); "
                  f"{s.get('computed', 0)} computed in the last call, in {s.get('wall_s', 0):.0f} s.", "",
                  f"ns-2.35 at the default point: {md(ns2_cell(s))}.", "",
                  "| point | set-up | holds in | interval | status | figure (mean, seeds' range) |",
                  "|---|---|---|---|---|---|"]
        for p in s.get("points", []):
            lo, hi = p["interval"]
            v = p.get("values") or []
            fig = "–" if not v else f"{fmt(sum(v) / len(v))} ({fmt(min(v))}-{fmt(max(v))})"
            lines.append(f"| {md_cell(p['label'])} | {md_cell(setup_cell(p))} | {holds_cell(p)} | {lo:.2f}-{hi:.2f} | "
                         f"{md_cell(p['status'])} | {fig} |")
            for e in p.get("errors", [])[:3]:
                lines.append(f"|  | error: {md_cell(e)} |  |  |  |  |")
        for name in s.get("figures", []):
            lines += ["", f"![{md(study_name(s))}](robustness/{name})"]
        for f in s.get("refused_figures", []):
            lines += ["", f"Figure {md_code(f['name'])} not shown: {md(f['reason'])}."]
    return "\n".join(lines) + "\n"


def set_aside_name(s: Mapping[str, Any]) -> str:
    """How a report names a set-aside file: relative to the report's directory."""
    return f"robustness/{s['file']}" if s["file"] else "robustness/"
