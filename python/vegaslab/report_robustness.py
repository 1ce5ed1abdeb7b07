"""The report's section "How robust are the papers' conclusions?" (issue 13, item 3).

It renders the study summaries that ``vegaslab robustness --out DIR`` saves in
``DIR/robustness/<entry>.json`` (:func:`vegaslab.robustness.summary`): the verdict table, with
our figure at the default set-up, ns-2.35's at the same set-up and the figure's range across
the study, then per study its sentence, its points and its figures (embedded, so the page
stands alone).

Decided: the section sits between two markers in ``index.html``. ``reproduce`` writes it from
whatever studies the directory holds (none: a line saying how to run them), and ``robustness``
replaces what is between the markers, so running the studies after the reproduction updates
the report without re-running or re-drawing anything else.
"""
from __future__ import annotations

import base64
import html
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

START = "<!-- vegaslab:robustness -->"
END = "<!-- /vegaslab:robustness -->"
ANCHOR = "robustness"
TITLE = "How robust are the papers' conclusions?"


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _img(base: Path, rel: str, alt: str) -> str:
    path = base / rel
    try:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
    except OSError as exc:
        return f'<p class="figerr">Figure {_e(rel)} could not be read: {_e(exc)}</p>'
    return f'<figure><img alt="{_e(alt)}" src="data:image/png;base64,{data}"></figure>'


def section_html(summaries: Sequence[Mapping[str, Any]], base: str | os.PathLike) -> str:
    """The whole section, markers included; ``base`` is the directory the summaries' figure
    paths are relative to (the report's)."""
    from .report import anchor
    from .robustness import default_cell, default_status, fmt, ns2_cell, study_cell

    base = Path(base)
    out = [START, f'<section class="panel" id="{ANCHOR}"><h2>{_e(TITLE)}</h2>']
    if not summaries:
        out.append('<p class="sub">No robustness study has been run into this directory: '
                   '<code>vegaslab robustness --out DIR</code> (DIR = this report\'s directory) runs them '
                   'and adds their verdicts here.</p>')
        return "\n".join(out + ["</section>", END])
    out.append('<p class="sub">Each study varies, one at a time and in the pairs that matter, the assumptions a '
               'paper leaves open, and judges the conclusion per seed: a point holds when the 95% Wilson interval '
               'of the share of seeds where it holds lies above one half. The figure is the quantity the '
               'conclusion is about; ns-2.35 runs our default set-up at the first seed.</p>')
    head = ["entry", "conclusion", "figure", "ours at default", "ns-2.35 at default", "across the study",
            "at our default", "verdict"]
    rows = []
    for s in summaries:
        cells = [f'<a href="#{anchor(s["entry"])}">{_e(s["entry"])}</a>', _e(s.get("conclusion", "")),
                 _e(s.get("figure_label") or "–"), _e(default_cell(s)), _e(ns2_cell(s)), _e(study_cell(s)),
                 _e(default_status(s)), f'<b class="verdict-{_e(s["verdict"].split()[0])}">{_e(s["verdict"])}</b>']
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append('<table class="robustness"><thead><tr>' + "".join(f"<th>{_e(h)}</th>" for h in head)
               + f'</tr></thead><tbody>{"".join(rows)}</tbody></table>')
    for s in summaries:
        out.append(f'<h3 id="{ANCHOR}-{_e(s["entry"])}">{_e(s["entry"])}: {_e(s.get("conclusion", ""))}</h3>')
        out.append(f'<p>{_e(s.get("sentence", ""))}</p>')
        out.append(f'<p class="sub">{_e(s.get("runs", 0))} runs. ns-2.35 at the default point: {_e(ns2_cell(s))}.</p>')
        prow = []
        for p in s.get("points", []):
            lo, hi = p["interval"]
            v = p.get("values") or []
            fig = "–" if not v else f"{fmt(sum(v) / len(v))} ({fmt(min(v))}-{fmt(max(v))})"
            err = "".join(f'<br><span class="figerr">{_e(e)}</span>' for e in p.get("errors", [])[:3])
            prow.append(f"<tr><td>{_e(p['label'])}{err}</td><td class=\"num\">{p['holds']}/{p['seeds']}</td>"
                        f"<td class=\"num\">{lo:.2f}-{hi:.2f}</td><td>{_e(p['status'])}</td><td class=\"num\">{_e(fig)}</td></tr>")
        out.append('<table class="points"><thead><tr><th>point</th><th class="num">holds in</th>'
                   '<th class="num">95% interval</th><th>status</th><th class="num">figure (mean, seeds\' range)</th>'
                   f'</tr></thead><tbody>{"".join(prow)}</tbody></table>')
        out += [_img(base, f, f"{s['entry']}: share of seeds where the conclusion holds") for f in s.get("figures", [])]
    return "\n".join(out + ["</section>", END])


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
