"""The report's section "How robust are the papers' conclusions?".

It renders the study summaries that ``vegaslab robustness --out DIR`` saves in
``DIR/robustness/<id>.json`` (:func:`vegaslab.study.robustness.summary`): the verdict table, with
our figure at the default set-up, ns-2.35's at the same set-up and the figure's range across
the study, then per study its sentence, its points and its figures (embedded, so the page
stands alone). The markup is the template ``templates/robustness.html.j2``; this
module gathers the cells (:func:`section_model`).

The section sits between two markers in ``index.html``, and its line in the table of contents
between two more (:func:`contents_html`). ``reproduce`` writes it from
whatever studies the directory holds (none: a line saying how to run them), and ``robustness``
replaces what is between the markers, so running the studies after the reproduction updates
the report without re-running or re-drawing anything else. The ns-2.35 column and sentences
appear only when at least one study was checked with ns-2 (``--no-ns2`` leaves them out).

The summaries and figures are read back from a directory vegaslab does not own
(:func:`vegaslab.study.robustness.load_summaries`): a summary that is not one vegaslab wrote is not
shown; its file and the reason stand where the study would be. A figure is embedded only if it
is a PNG of that study inside ``robustness/``; otherwise its name and the reason stand in its
place.
"""
from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from .. import safe_io
from .render import Markup, render
from .tables import anchor
from .robustness_text import (default_cell, default_status, fmt, holds_cell, ns2_cell, set_aside_name, setup_cell,
                              study_cell)
from ..study.robustness import read_figure, study_name

START = "<!-- vegaslab:robustness -->"
END = "<!-- /vegaslab:robustness -->"
#: The section's line in the page's table of contents sits between these (empty without studies).
TOC_START = "<!-- vegaslab:robustness-contents -->"
TOC_END = "<!-- /vegaslab:robustness-contents -->"
ANCHOR = "robustness"
TITLE = "How robust are the papers' conclusions?"
#: The largest ``index.html`` :func:`splice` reads back (a report of every catalog entry,
#: figures embedded, is tens of MB).
MAX_PAGE_BYTES = 256 << 20


def _figure(directory_fd: int | None, name: str, study: str, alt: str) -> dict:
    """One figure of a study, embedded: read from ``robustness/`` as
    :func:`vegaslab.study.robustness.read_figure` allows (a PNG of this study in that directory,
    never a link or anything outside it), or the reason it is not shown."""
    shown = f"robustness/{name.removeprefix('robustness/')}"
    if directory_fd is None:
        return {"rel": shown, "alt": alt, "data": "", "error": "robustness/ cannot be read"}
    try:
        data = read_figure(directory_fd, name, study)
    except safe_io.ForeignFileError as exc:
        return {"rel": name, "alt": alt, "data": "", "error": exc.reason}
    return {"rel": shown, "alt": alt, "data": base64.b64encode(data).decode("ascii")}


def _point(p: Mapping[str, Any]) -> dict:
    lo, hi = p["interval"]
    v = p.get("values") or []
    return {"label": p["label"], "errors": list(p.get("errors", []))[:3], "holds": holds_cell(p),
            "setup": setup_cell(p), "interval": f"{lo:.2f}-{hi:.2f}", "status": p["status"],
            "figure": "–" if not v else f"{fmt(sum(v) / len(v))} ({fmt(min(v))}-{fmt(max(v))})"}


def _study(s: Mapping[str, Any], directory_fd: int | None) -> dict:
    """The cells of one study; of a set-aside file, its name and why."""
    if "set_aside" in s:
        return {"set_aside": True, "file": set_aside_name(s), "reason": s["set_aside"],
                "anchor": "set-aside-" + re.sub(r"[^A-Za-z0-9_-]+", "-", s["file"])}
    name = study_name(s)
    alt = f"{name}: share of seeds where the conclusion holds"
    figures = [_figure(directory_fd, f, name, alt) for f in s.get("figures", [])]
    figures += [{"rel": f["name"], "alt": alt, "data": "", "error": f["reason"]} for f in s.get("refused_figures", [])]
    return {"set_aside": False, "name": name, "entry": s["entry"], "anchor": anchor(s["entry"]),
            "conclusion": s.get("conclusion", ""), "figure_label": s.get("figure_label") or "–",
            "default": default_cell(s), "ns2": ns2_cell(s), "study": study_cell(s),
            "default_status": default_status(s), "verdict": s["verdict"] + (" (quick)" if s.get("quick") else ""),
            "verdict_class": s["verdict"].split()[0],
            "sentence": s.get("sentence", ""), "runs": s.get("runs", 0), "compute": f"{s.get('compute_s', 0):,.0f}",
            "points": [_point(p) for p in s.get("points", [])], "figures": figures}


def _open_figures(base: Path) -> int | None:
    """``base/robustness`` open for reading figures, or None when it is absent or not a real
    directory (then no figure is embedded)."""
    try:
        return safe_io.open_dir(base / "robustness")
    except (FileNotFoundError, safe_io.ForeignFileError):
        return None


def section_model(summaries: Sequence[Mapping[str, Any]], base: str | os.PathLike) -> dict:
    """The section's cells. ``base`` is the report's directory; figures are read from its
    ``robustness/`` (:func:`vegaslab.study.robustness.load_summaries` gives the summaries)."""
    fd = _open_figures(Path(base))
    try:
        studies = [_study(s, fd) for s in summaries]
    finally:
        if fd is not None:
            os.close(fd)
    shown = [s for s in summaries if "set_aside" not in s]
    total = sum(s.get("compute_s", 0) for s in shown)
    return {"start": Markup(START), "end": Markup(END), "anchor_id": ANCHOR, "title": TITLE, "studies": studies,
            "ns2": any(s.get("ns2") for s in shown),
            "totals": f"{len(shown)} studies, {sum(s.get('runs', 0) for s in shown):,} runs, "
                      f"{total:,.0f} s of compute ({total / 3600:.2f} CPU hours; the runs' own wall times)"}


def section_html(summaries: Sequence[Mapping[str, Any]], base: str | os.PathLike) -> str:
    """The whole section, markers included."""
    return render("robustness.html.j2", **section_model(summaries, base)).strip()


def contents_html(shown: bool) -> Markup:
    """The section's line in the table of contents, markers included: a link when the section
    shows studies, nothing otherwise."""
    line = Markup('<li><a href="#{}">{}</a></li>').format(ANCHOR, TITLE) if shown else Markup("")
    return Markup(TOC_START) + line + Markup(TOC_END)


def _replace(text: str, start: str, end: str, new: str) -> str:
    i, j = text.find(start), text.find(end)
    return text if i < 0 or j < i else text[:i] + new + text[j + len(end):]


def splice(page: str | os.PathLike, summaries: Sequence[Mapping[str, Any]]) -> bool:
    """Replace the section in an existing ``index.html``; False (nothing written) when the page
    has no markers (written by an older vegaslab: ``reproduce`` again to get them). The page
    is read back as a file of a directory vegaslab does not own (a link or FIFO in its place
    is :class:`vegaslab.safe_io.ForeignFileError`) and replaced atomically, never through a
    link (:func:`vegaslab.safe_io.write_file`)."""
    page = Path(page)
    raw = safe_io.read_bytes(page, max_bytes=MAX_PAGE_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise safe_io.ForeignFileError(page, f"not UTF-8 (byte offset {exc.start})") from None
    i, j = text.find(START), text.find(END)
    if i < 0 or j < i:
        return False
    new = _replace(text, START, END, section_html(summaries, page.parent))
    new = _replace(new, TOC_START, TOC_END, str(contents_html(bool(summaries))))
    safe_io.write_file(page.parent, page.name, new)
    return True
