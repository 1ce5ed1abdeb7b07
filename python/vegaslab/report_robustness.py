"""The report's section "How robust are the papers' conclusions?" (issue 13, item 3).

It renders the study summaries that ``vegaslab robustness --out DIR`` saves in
``DIR/robustness/<entry>.json`` (:func:`vegaslab.robustness.summary`): the verdict table, with
our figure at the default set-up, ns-2.35's at the same set-up and the figure's range across
the study, then per study its sentence, its points and its figures (embedded, so the page
stands alone). The markup is the template ``templates/robustness.html.j2`` (issue 14); this
module gathers the cells (:func:`section_model`).

Decided: the section sits between two markers in ``index.html``. ``reproduce`` writes it from
whatever studies the directory holds (none: a line saying how to run them), and ``robustness``
replaces what is between the markers, so running the studies after the reproduction updates
the report without re-running or re-drawing anything else. The ns-2.35 column and sentences
appear only when at least one study was checked with ns-2 (``--no-ns2`` leaves them out).
"""
from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from .report_render import Markup, render
from .report_table import anchor
from .robustness import default_cell, default_status, fmt, ns2_cell, study_cell

START = "<!-- vegaslab:robustness -->"
END = "<!-- /vegaslab:robustness -->"
ANCHOR = "robustness"
TITLE = "How robust are the papers' conclusions?"


def _figure(base: Path, rel: str, alt: str) -> dict:
    try:
        return {"rel": rel, "alt": alt, "data": base64.b64encode((base / rel).read_bytes()).decode("ascii")}
    except OSError as exc:
        return {"rel": rel, "alt": alt, "data": "", "error": str(exc)}


def _point(p: Mapping[str, Any]) -> dict:
    lo, hi = p["interval"]
    v = p.get("values") or []
    return {"label": p["label"], "errors": list(p.get("errors", []))[:3], "holds": f"{p['holds']}/{p['seeds']}",
            "interval": f"{lo:.2f}-{hi:.2f}", "status": p["status"],
            "figure": "–" if not v else f"{fmt(sum(v) / len(v))} ({fmt(min(v))}-{fmt(max(v))})"}


def section_model(summaries: Sequence[Mapping[str, Any]], base: str | os.PathLike) -> dict:
    """The section's cells; ``base`` is the directory the summaries' figure paths are
    relative to (the report's)."""
    base = Path(base)
    studies = [{"entry": s["entry"], "anchor": anchor(s["entry"]), "conclusion": s.get("conclusion", ""),
                "figure_label": s.get("figure_label") or "–", "default": default_cell(s), "ns2": ns2_cell(s),
                "study": study_cell(s), "default_status": default_status(s), "verdict": s["verdict"],
                "verdict_class": s["verdict"].split()[0], "sentence": s.get("sentence", ""), "runs": s.get("runs", 0),
                "compute": f"{s.get('compute_s', 0):,.0f}",
                "points": [_point(p) for p in s.get("points", [])],
                "figures": [_figure(base, f, f"{s['entry']}: share of seeds where the conclusion holds")
                            for f in s.get("figures", [])]}
               for s in summaries]
    total = sum(s.get("compute_s", 0) for s in summaries)
    return {"start": Markup(START), "end": Markup(END), "anchor_id": ANCHOR, "title": TITLE, "studies": studies,
            "ns2": any(s.get("ns2") for s in summaries),
            "totals": f"{len(summaries)} studies, {sum(s.get('runs', 0) for s in summaries):,} runs, "
                      f"{total:,.0f} s of compute ({total / 3600:.2f} CPU hours; the runs' own wall times)"}


def section_html(summaries: Sequence[Mapping[str, Any]], base: str | os.PathLike) -> str:
    """The whole section, markers included."""
    return render("robustness.html.j2", **section_model(summaries, base)).strip()


def splice(page: str | os.PathLike, summaries: Sequence[Mapping[str, Any]]) -> bool:
    """Replace the section in an existing ``index.html``; False (nothing written) when the page
    has no markers (written by an older vegaslab: ``reproduce`` again to get them)."""
    page = Path(page)
    text = page.read_text(encoding="utf-8")
    i, j = text.find(START), text.find(END)
    if i < 0 or j < i:
        return False
    new = text[:i] + section_html(summaries, page.parent) + text[j + len(END):]
    tmp = page.with_suffix(".html.tmp")
    tmp.write_text(new, encoding="utf-8")
    os.replace(tmp, page)
    return True
