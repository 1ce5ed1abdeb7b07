"""The report's page as a whole, led by the papers: the first screen says what reproduces, per
paper, with the paper's own key numbers beside ours (:func:`papers_summary`); a table of
contents follows (:func:`contents`); then the counts, the disagreements ranked by a measure no
tiny or zero published value can dominate (:func:`vegaslab.report.model.worst`), the claims that
fail, every experiment's section, the robustness studies when there are any, and the references.

Like :mod:`vegaslab.report.model`, it says what the page says as strings; the templates only
mark it up. Numbers the papers print are shown as they print them
(:func:`~vegaslab.report.tables.printed`) and ours beside them to the same precision
(:func:`~vegaslab.report.tables.like`).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .model import (Built, claim_kind, load_papers, provenance_line, ranked, ratio_stats, section_model,
                    summary_counts, worst, zero_mismatches, zero_text)
from .robustness import contents_html
from .tables import (CLOSE, FAR, PUBLISHED_ARE_NS2, anchor, factor_txt, has_published, is_missing, like, printed,
                     ratio, ratio_txt)

__all__ = ["page_model", "papers_summary", "contents", "summary_model", "compared_with_papers", "REPRODUCES"]

#: A paper's verdict on the first screen, by what holds of its claims and numbers: every paper
#: claim holds and every number is within 25%; some do; none do; nothing to judge.
REPRODUCES = {"all": "reproduces", "some": "partly reproduces", "none": "does not reproduce",
              "nothing": "nothing to compare"}
#: The group of entries that name no paper the papers file knows.
OTHER = "other"


def _pct(a: int, n: int) -> str:
    return f"{100 * a / n:.0f}%" if n else "-"


def _verdict(held: int, claims: int, within: int, total: int) -> str:
    if not claims and not total:
        return "nothing"
    if held == claims and within == total:
        return "all"
    return "none" if not held and not within else "some"


def _headline_cells(h: Mapping[str, Any]) -> dict:
    """One key number: the paper's as it prints it, ours to the same precision, their ratio."""
    pct = bool(h.get("percent"))
    pub = h.get("published")
    if h.get("printed"):
        shown_pub = str(h["printed"])
    elif pct and pub is not None:  # a fraction the paper prints as a percentage
        shown_pub = f"{printed(100 * float(pub))}%"
    else:
        shown_pub = printed(pub)
    ours = h.get("ours")
    if is_missing(ours):
        shown_ours = "-"
    elif pct:
        shown_ours = f"{like(100 * float(ours), None if pub is None else 100 * float(pub), least=3)}%"
    else:
        shown_ours = like(ours, pub)
    return {"label": str(h["label"]), "entry": str(h["entry"]), "anchor": anchor(str(h["entry"])),
            "published": shown_pub, "ours": shown_ours, "error": str(h.get("error") or ""),
            "ratio": ratio_txt(ratio(ours, pub)) if pub is not None and not is_missing(ours) else "-"}


def papers_summary(b: Built, papers: Mapping[str, Mapping[str, Any]]) -> list[dict]:
    """One row per paper the report reproduces (the papers file's order; entries naming no
    known paper last, as "other"): its name and reference, its experiments, the paper claims
    that hold, the published numbers within 25%, a verdict (:data:`REPRODUCES`) and the
    paper's key numbers beside ours (``headline`` in the papers file)."""
    groups: dict[str, list] = {}
    for e in b.entries:
        key = str(e.meta.get("paper") or "")
        groups.setdefault(key if key in papers else OTHER, []).append(e)
    order = [k for k in papers if k in groups] + ([OTHER] if OTHER in groups else [])
    rows = []
    for key in order:
        entries = groups[key]
        ids = [e.id for e in entries]
        vs = [v for i in ids for v in b.verdicts.get(i, []) if claim_kind(v) == "paper"]
        held = sum(1 for v in vs if v.status == "holds")
        rs = ratio_stats(b.table[b.table["entry"].isin(ids)])
        verdict = _verdict(held, len(vs), rs["within25"], rs["total"])
        rec = papers.get(key, {})
        elsewhere = sorted({str(h["entry"]) for h in rec.get("headline", []) if h["entry"] not in ids})
        rows.append({
            "key": key, "name": str(rec.get("title") or "Experiments that name no paper"),
            "short": str(rec.get("short") or ""), "ref": f"ref-{anchor(key)[4:]}" if key in papers else "",
            "entries": [{"id": i, "anchor": anchor(i)} for i in ids],
            "claims": f"{held}/{len(vs)}" if vs else "-",
            "within25": f"{rs['within25']}/{rs['total']}" if rs["total"] else "-",
            "verdict": REPRODUCES[verdict], "verdict_class": verdict,
            "headlines": [_headline_cells(h) for i in ids for h in b.headlines.get(i, [])],
            "no_headline": (f"the paper's key numbers come from {', '.join(elsewhere)}, not in this report"
                            if elsewhere else "no key number recorded for this paper"),
        })
    return rows


def summary_model(b: Built, total_wall: float) -> dict:
    """The counts, the disagreements ranked, zero mismatches and the failing claims."""
    c = summary_counts(b)
    none = "no published numbers"
    cards = [
        (f"{c['holds']}/{c['claims']}", "claims hold",
         f"{c['fails']} fail, {c['error']} error, {c['skipped']} skipped"
         + (f"; {c['by_tie']} only by an exact tie" if c["by_tie"] else "")
         + (f"; supplementary (not counted): {c['supplementary_holds']}/{c['supplementary']} hold"
            if c["supplementary"] else "")
         + (f"; {c['stale_notes']} notes contradicted" if c["stale_notes"] else "")),
        (f"{c['within10']}/{c['total']}", "numbers within 10%", _pct(c["within10"], c["total"]) if c["total"] else none),
        (f"{c['within25']}/{c['total']}", "numbers within 25%", _pct(c["within25"], c["total"]) if c["total"] else none),
        (f"{c['runs']}", "runs", f"{c['ran']} computed, {c['cached']} from the store, {c['failed_runs']} failed"),
        (f"{total_wall:.1f} s", "wall time", f"simulation and report, {b.execution.wall_s:.1f} s running"),
    ]
    w = worst(b.table)
    worst_rows = [{"anchor": anchor(r.entry), "entry": r.entry, "run": r.run, "metric": r.metric,
                   "published": printed(r.published), "ours": like(r.ours, r.published), "ratio": ratio_txt(r.ratio),
                   "factor": factor_txt(r.gap)}
                  for r in w.itertuples(index=False)]
    if worst_rows:
        worst_none = ""
    elif c["total"]:
        worst_none = "Every published number is within 10% (by the measure below)."
    else:
        worst_none = "No published numbers: nothing to compare with."
    unranked = c["total"] - len(ranked(b.table))
    z = zero_mismatches(b.table)
    fails = [{"anchor": anchor(eid), "entry": eid, "status": v.status, "text": v.text}
             for eid, lst in b.verdicts.items() for v in lst
             if v.status in ("fails", "error") and claim_kind(v) == "paper"]
    return {"cards": cards, "worst": worst_rows, "worst_none": worst_none,
            "unranked": (f"{unranked} published number{'s are' if unranked != 1 else ' is'} not ranked: "
                         "some seeds failed or gave no value (see the experiments' tables)." if unranked else ""),
            "zero": f"Where the paper reports 0 and we do not ({len(z)}): {zero_text(z)}." if len(z) else "",
            "fails": fails}


def experiments_toc(b: Built) -> list[dict]:
    """The experiments' rows of the table of contents: claims held, numbers within 25%."""
    rows = []
    for e in b.entries:
        rs = ratio_stats(b.table[b.table["entry"] == e.id])
        vs = [v for v in b.verdicts.get(e.id, []) if claim_kind(v) == "paper"]
        rows.append({"anchor": anchor(e.id), "id": e.id, "title": e.title,
                     "paper": f"{e.meta.get('paper', '')} {e.meta.get('figure', '')}".strip(),
                     "held": f"{sum(1 for v in vs if v.status == 'holds')}/{len(vs)}",
                     "within25": f"{rs['within25']}/{rs['total']}",
                     "sim": f"{b.entry_stats.get(e.id, {}).get('sim_wall_s', 0):.1f} s"})
    return rows


def contents(summary: Mapping[str, Any], sections: Sequence[Mapping[str, Any]], *, robustness: bool,
             references: bool) -> list[dict]:
    """The table of contents: the page's parts in order, each with its anchor; the
    experiments nested under their part."""
    toc = [{"anchor": "papers", "text": "What reproduces, per paper"},
           {"anchor": "summary", "text": "Counts"},
           {"anchor": "disagreements", "text": "Largest disagreements with the papers' numbers"}]
    if summary["fails"]:
        toc.append({"anchor": "failing-claims", "text": f"Claims that fail or could not be checked ({len(summary['fails'])})"})
    toc.append({"anchor": "experiments", "text": f"Experiments ({len(sections)})",
                "children": [{"anchor": s["anchor"], "text": f"{s['id']}: {s['title']}"} for s in sections]})
    # The robustness section's line: between markers, so that `vegaslab robustness` can add it
    # when it splices the section in (vegaslab.report.robustness.splice).
    toc.append({"anchor": "robustness", "text": "", "robustness": contents_html(robustness)})
    if references:
        toc.append({"anchor": "references", "text": "References"})
    return [{"children": [], "robustness": "", **c} for c in toc]


def compared_with_papers(b: Built, papers: Mapping[str, Any]) -> bool:
    """Whether the page compares with a cited paper's numbers (all five papers' numbers are
    ns-2 runs): only then does the header say so."""
    cited = {e.id for e in b.entries if str(e.meta.get("paper") or "") in papers}
    rows = b.table[b.table["entry"].isin(cited)]
    return has_published(rows)


def page_model(b: Built, figures: Mapping[str, list[dict]], render_s: Mapping[str, float], total_wall: float,
               *, when: str, version: str, core: str, robustness: bool = False) -> dict:
    """Everything ``index.html`` shows but the robustness section's own cells; ``robustness``
    says whether that section has studies to show (then the contents list it)."""
    papers = load_papers()
    mode = "quick (shortened: see each experiment)" if b.quick else "full"
    seed = f" · every run with seed {b.seed}" if b.seed is not None else ""
    sections = [section_model(b, e, figures.get(e.id, []), render_s.get(e.id, 0.0), papers) for e in b.entries]
    refs: dict[str, dict] = {}
    for s in sections:
        if s["paper"] and s["paper"]["key"] not in refs:
            refs[s["paper"]["key"]] = {**s["paper"], "entries": []}
        if s["paper"]:
            refs[s["paper"]["key"]]["entries"].append({"id": s["id"], "anchor": s["anchor"]})
    ns2 = compared_with_papers(b, papers)
    summary = summary_model(b, total_wall)
    return {"title": "vegaslab reproduction report",
            "meta": (f"{len(b.entries)} experiment{'s' if len(b.entries) != 1 else ''} · mode {mode}{seed} · generated {when} · vegaslab {version} "
                     f"(core {core}) · wall time {total_wall:.1f} s"),
            "legend": ("ratio = ours / published." + (" " + PUBLISHED_ARE_NS2 if ns2 else "")
                       + f" Rows off by more than {FAR:.0%} are red, by more than {CLOSE:.0%} amber."),
            "papers": papers_summary(b, papers), "summary": summary, "experiments": experiments_toc(b),
            "contents": contents(summary, sections, robustness=robustness, references=bool(refs)),
            "sections": sections, "references": list(refs.values()), "provenance": provenance_line(b)}
