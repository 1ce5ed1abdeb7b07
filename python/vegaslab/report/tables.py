"""The comparison table of ``vegaslab reproduce`` and its text forms: cells, the terminal table
and ``summary.md``. Its columns and ratio are data of the study layer
(:mod:`vegaslab.study.comparison`), re-exported here for the report's modules.

This module is the bottom of the report's import graph (docs/decisions.md, "The report's modules
have no import cycle"): at load time it imports only :mod:`vegaslab.study.comparison`, which
imports nothing, so :mod:`vegaslab.report.model` and the renderer import it without a cycle. The
one helper that formats numbers (``vegaslab.results.format_number``, in a module that loads
numpy) is imported where it is called, so importing this module loads neither numpy nor pandas.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..study.comparison import REPRODUCE_COLUMNS, ratio  # noqa: F401 - re-exported

if TYPE_CHECKING:  # pragma: no cover - type names only, never imported at run time
    import pandas as pd

#: |ratio - 1| above these is "off by more than 10% / 25%".
CLOSE, FAR = 0.10, 0.25
#: The comparison rows that carry no number: a failed run, and a run with nothing published.
RUN_FAILED, NONE_PUBLISHED = "(run failed)", "(no published numbers)"


def is_missing(v: Any) -> bool:
    """None, NaN or a value that is not a number (pandas' NA included)."""
    if v is None:
        return True
    try:
        return math.isnan(float(v))
    except (TypeError, ValueError):
        return True


#: The floor of :func:`disagreement`, as a fraction of the quantity's scale: the report's
#: "within 10%" band, so a difference smaller than a tenth of the quantity's largest published
#: value never reads as a large factor, however small the published value it is set against.
FLOOR = CLOSE


def disagreement(ours: Any, published: Any, scale: Any) -> float:
    """How far ``ours`` is from ``published``, symmetric in over- and under-shoot and never
    dominated by a tiny or zero published value: ``|log(max(|ours|, f) / max(|published|, f))|``
    with the floor ``f = FLOOR x scale`` (``scale``: the quantity's size, the largest published
    value of the same quantity; docs/decisions.md, "Disagreements are ranked by a log ratio
    with a floor"). Above the floor it is |log(ours / published)|; below it, numbers count as
    the floor: a published 1 against our 20 on a quantity whose scale is 150 counts as
    log(20 / 15), a published 0 against our 5 as no difference. NaN when either number is
    missing; inf only when there is no scale at all and exactly one of the two is 0."""
    if is_missing(ours) or is_missing(published):
        return math.nan
    f = FLOOR * (0.0 if is_missing(scale) else abs(float(scale)))
    o, p = max(abs(float(ours)), f), max(abs(float(published)), f)
    if o == 0 or p == 0:
        return 0.0 if o == p else math.inf
    return abs(math.log(o / p))


def factor_txt(d: Any) -> str:
    """A :func:`disagreement` as the factor it stands for: ``x2.50``."""
    return "-" if is_missing(d) else ("inf" if math.isinf(float(d)) else f"x{math.exp(float(d)):.2f}")


def printed(v: Any) -> str:
    """A published number as a paper prints it: its digits as the catalog holds them (the
    shortest text that reads back as the same number, so 0.93 stays 0.93 and 78.67 stays
    78.67), with thousands separators (217,320); "-" for none."""
    if is_missing(v):
        return "-"
    f = float(v)
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if f.is_integer() and abs(f) < 1e15:
        return f"{int(f):,}"
    return f"{f:,}"


def decimals(v: Any) -> int:
    """The decimal places :func:`printed` shows of ``v`` (0 for an integer; for a number
    printed with an exponent, those of its significant digits: ``1e-05`` has 5)."""
    mantissa, _, exp = printed(v).partition("e")
    places = len(mantissa.partition(".")[2])
    return max(0, places - int(exp)) if exp else places


def like(v: Any, published: Any, least: int = 2) -> str:
    """``v`` (one of our numbers) to the precision the paper prints ``published`` with: the
    same decimal places, more only where ``v`` would otherwise show fewer than ``least``
    significant digits, with thousands separators. Beside a published ``0.93``, ``0.8998032``
    is ``0.90``; beside ``940,240``, ``925,200.3`` is ``925,200``; beside a count of ``2``,
    ``36.0`` is ``36``."""
    if is_missing(v):
        return "-"
    f = float(v)
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    places = decimals(published) if not is_missing(published) else 0
    if f != 0:
        places = max(places, least - 1 - math.floor(math.log10(abs(f))))
    return f"{f:,.{places}f}"


def num_cell(v: Any) -> str:
    """A number as the report prints it (7 significant digits, integers whole, "-" for none)."""
    from ..results import format_number  # results loads numpy: see the module docstring

    return format_number(v, 7)


def ratio_txt(r: Any) -> str:
    try:
        r = float(r)
    except (TypeError, ValueError):
        return "-"
    if math.isnan(r):
        return "-"
    return "inf" if math.isinf(r) else f"{r:.3f}"


def ours_cell(ours: Any, std: Any, n: Any, published: Any = None) -> str:
    """``mean ± std`` (std to 3 significant digits) when more than one seed gave a value;
    beside a published number, the mean to the paper's precision (:func:`like`)."""
    txt = num_cell(ours) if is_missing(published) else like(ours, published)
    try:
        if not is_missing(n) and int(n) > 1 and not is_missing(std):
            spread = float(f"{float(std):.3g}")
            txt += f" ± {num_cell(spread) if is_missing(published) else printed(spread)}"
    except (TypeError, ValueError):
        pass
    return txt


def text(v: Any) -> str:
    """Any value as a table cell: booleans as yes/no (never Python's True/False), tables as
    ``key value, ...``, lists joined with ``; ``."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, Mapping):
        return ", ".join(f"{k} {text(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return "; ".join(text(x) for x in v)
    return str(v)


def md(value: Any) -> str:
    """``value`` as inert Markdown text (``summary.md`` quotes catalog entries, claims and error
    messages, and Markdown passes raw HTML through): ``<`` as ``&lt;``, so no tag (a
    ``<script>`` in a catalog note, an autolink) is markup in any renderer, and ``[`` and ``]``
    backslash-escaped, so no link (no ``javascript:`` URL). A ``>`` or ``&`` alone opens
    nothing and is left as written."""
    return str(value).replace("<", "&lt;").replace("[", "\\[").replace("]", "\\]")


def md_cell(value: Any) -> str:
    """:func:`md` for a table cell: on one line, ``|`` escaped."""
    return " ".join(md(value).split()).replace("|", "\\|")


def md_code(value: Any) -> str:
    """``value`` as a Markdown code span on one line: a run of backticks longer than any in
    the text fences it (CommonMark), so the text cannot close the span early; inside a span
    nothing is markup."""
    text = " ".join(str(value).split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def anchor(entry_id: str) -> str:
    """The id of an experiment's section in index.html."""
    return "exp-" + re.sub(r"[^A-Za-z0-9_-]+", "-", entry_id)


def cells(r: Any) -> list[str]:
    """One comparison row as run, metric, published, ours, ratio."""
    return [str(r.run), str(r.metric), printed(r.published),
            ours_cell(r.ours, getattr(r, "std", None), getattr(r, "n", None), r.published), ratio_txt(r.ratio)]


def format_comparison(table: "pd.DataFrame") -> str:
    """Fixed-width run / metric / published / ours / ratio text for the terminal."""
    from ..results import fixed_width  # see the module docstring

    lines = fixed_width(["run", "metric", "published", "ours", "ratio"],
                         [cells(r) for r in table.itertuples(index=False)], left=2)
    notes = [f"   {r.run}: {r.note}" for r in table.itertuples(index=False) if r.note]
    return "\n".join(["   " + line for line in lines] + notes)


def has_published(table: "pd.DataFrame") -> bool:
    """Whether any row of the comparison compares with a published number."""
    return bool(len(table)) and bool(table["published"].notna().any())


#: The sentence under the report's title when it compares with the papers' numbers.
PUBLISHED_ARE_NS2 = "Published numbers are ns-2 runs with each paper's own patches."


def summary_markdown(table: "pd.DataFrame", entries: Iterable[Any], verdicts: Mapping[str, list] | None = None,
                     *, header: Iterable[str] = (), extra: Mapping[str, Iterable[str]] | None = None,
                     citations: Mapping[str, str] | None = None, ns2: bool | None = None) -> str:
    """The reproduction summary as Markdown: per entry its set-up notes, assumptions, a
    published / ours / ratio table (ours = mean ± std over seeds) and the claim verdicts.
    ``header`` lines go after the title; ``extra[entry_id]`` lines after the entry's title;
    ``citations[paper key]`` replaces the bare paper key by the paper's reference. ``ns2``
    says whether the published numbers are the papers' ns-2 runs (default: whenever any is
    published); without it the ratio line does not mention ns-2."""
    ns2 = has_published(table) if ns2 is None else ns2
    out = ["# vegaslab reproduction summary", "", *header,
           "ratio = ours / published." + (" " + PUBLISHED_ARE_NS2 if ns2 else ""), ""]
    for e in entries:
        out += [md(f"## {e.id}: {e.title}".rstrip(": ")), ""]
        paper = e.meta.get("paper")
        cite = ", ".join(f"{k}: {e.meta[k]}" for k in ("paper", "figure") if e.meta.get(k))
        if cite:
            out += [md(cite), ""]
        if paper and (citations or {}).get(str(paper)):
            out += [f"Reference: {md(citations[str(paper)])}", ""]
        out += list((extra or {}).get(e.id, []))
        if e.meta.get("notes"):
            out += [md(str(e.meta["notes"]).strip()), ""]
        assumptions = e.meta.get("assumptions") or []
        if assumptions:
            out.append("Assumptions (not given by the paper):")
            for a in assumptions:
                out.append(f"- {md_code(text(a.get('field', '?')))} = {md_code(text(a.get('value', '?')))}: "
                           f"{md(text(a.get('reason', '')))}")
            out.append("")
        out += ["| run | metric | published | ours | ratio |", "|---|---|---:|---:|---:|"]
        part = table[table["entry"] == e.id]
        for r in part.itertuples(index=False):
            out.append("| " + " | ".join(md_cell(c) for c in cells(r)) + " |")
        for r in part.itertuples(index=False):
            if r.note:
                label = "failed" if r.metric == RUN_FAILED else str(r.metric)
                out.append(f"\n**{md(r.run)} {md(label)}:** {md(r.note)}")
        vs = (verdicts or {}).get(e.id, [])
        if vs:
            out += ["", "Claims:", ""]
            for v in vs:
                src = f" ({md(v.claim.source)})" if v.claim.source else ""
                marks = (" (by an exact tie)" if v.by_tie else "") + \
                    (" (supplementary, not counted)" if v.claim.kind == "supplementary" else "")
                name = f" #{md(v.claim.id)}" if v.claim.id else ""
                out.append(f"- **{md(v.status)}**{marks}{name}: {md(v.text)}{src}. {md_code(v.expr)} → {md(v.detail)}")
        out.append("")
    return "\n".join(out)
