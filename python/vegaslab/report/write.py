"""The reproduction report: ``index.html`` (self-contained), ``summary.md`` and ``results/``.

:func:`build` gathers, for each catalog entry, the stored runs of its variants and seeds, the
published-vs-ours table (mean and sample std over seeds) and the claim verdicts
(:mod:`vegaslab.study.claims`); :func:`write_report` draws the figures (matplotlib, embedded as
base64 PNG data URIs) and writes

- ``index.html``: one page, CSS inline, no external request, led by the papers
  (:mod:`vegaslab.report.front`): what reproduces per paper with the paper's key numbers beside
  ours, a table of contents, the counts (claims held, numbers within 10% and 25% of the
  paper's), the largest disagreements (a log ratio with a floor, so no tiny or zero published
  value dominates), then per experiment
  its set-up, assumptions, notes, the published / ours / ratio table (|ratio - 1| > 25% marked),
  figures in the paper's style and a verdict per claim. An experiment with a disagreement
  (a number off by more than 25%, a claim that fails) says so at the top of its section and
  shows the entry's notes there.
- ``summary.md``: the same tables in Markdown; ``summary.csv``: the comparison table.
- ``results/comparison.parquet``, ``results/claims.parquet``, ``results/runs.parquet`` and the
  runs' own tables in ``results/<entry>/<variant>/seed<k>/`` (written by the runner).
- Each experiment cites its paper by full reference (the one map of ``meta.paper`` keys to
  citations is ``catalog_data/papers/papers.toml``), its figures carry the papers' reference
  lines (:mod:`vegaslab.report.figures`), and the page ends with the references.
- Provenance: every run directory's meta.json holds the run's ``provenance`` (normalised
  scenario, overrides, seed, versions, source revision, a ``vegaslab run`` command);
  ``results/provenance.json`` lists them all (without the scenarios, which stay in the run
  directories) with the build they ran on, ``runs.parquet`` has each run's scenario hash and
  revision, and summary.md and index.html say which build produced the numbers.

Layout: :mod:`vegaslab.report.model` says what the report says, as strings;
:mod:`vegaslab.report.figures` draws; the Jinja2 templates in ``vegaslab/report/templates/`` are the
markup, rendered with autoescape by :mod:`vegaslab.report.render`; this module writes the
files. None of them imports :mod:`vegaslab.study.catalog`; :mod:`vegaslab.reproduction`, above
both, runs the entries and calls this module.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import pandas as pd

from ..core import core_version, package_version
from .figures import MAX_PANELS, default_figures, render_figures  # noqa: F401 - the report's API
from .model import (CLOSE, FAR, WORST, Built, EntryPart, assemble, build, build_entry, builds, variant_rows, citation_map,  # noqa: F401
                    disagreement, entry_disagreements, load_papers, provenance_doc, provenance_line,
                    ratio_stats, setup_facts, summary_counts, worst, zero_mismatches, zero_text, claim_kind)
from .front import compared_with_papers, page_model, papers_summary
from .render import Markup, render
from .robustness import section_html as robustness_section
from .tables import anchor, factor_txt, like, md, md_cell, num_cell, printed, ratio_txt, summary_markdown  # noqa: F401
from ..study.robustness import load_summaries
from ..study.robustness import problems as robustness_problems
from ..safe_io import make_dir, write_file

if TYPE_CHECKING:  # pragma: no cover - type names only
    from ..study.catalog import Entry
    from ..study.runner import Execution, Job


def render_html(b: Built, figures: Mapping[str, list[dict]], render_s: Mapping[str, float], total_wall: float,
                robustness_html: str = "", *, robustness: bool = False) -> str:
    """The page; ``robustness_html`` is the robustness section (:mod:`vegaslab.report.robustness`),
    placed after the experiments; ``robustness`` says whether it shows studies (the table of
    contents then lists it)."""
    page = page_model(b, figures, render_s, total_wall, when=_dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
                      version=str(package_version()), core=str(core_version() or "not built"),
                      robustness=robustness)
    return render("report.html.j2", page=page, robustness=Markup(robustness_html))


def entry_part(entry: "Entry", jobs: "list[Job]", execution: "Execution", results: Mapping[str, Any], *,
               quick: bool = False) -> EntryPart:
    """One entry's part of the report (:func:`vegaslab.report.model.build_entry`) with its
    figures drawn, holding no Results: the caller may drop ``results`` before the next entry
    (:func:`vegaslab.report.model.assemble` joins the parts)."""
    part = build_entry(entry, jobs, execution, results, quick=quick)
    t = time.perf_counter()
    part.figures = render_figures(entry, part.runset)
    part.render_s = time.perf_counter() - t
    part.runset = None
    return part


# ---------------------------------------------------------------------- writing


def _markdown(b: Built, total_wall: float, render_s: Mapping[str, float]) -> str:
    c = summary_counts(b)
    within = (f"- Numbers within 10%: {c['within10']}/{c['total']}; within 25%: {c['within25']}/{c['total']}"
              if c["total"] else "- No published numbers to compare with")
    header = [f"Mode: {'quick' if b.quick else 'full'}. Wall time {total_wall:.1f} s. "
              f"runs: {c['ran']} computed, {c['cached']} from the store, {c['failed_runs']} failed (of {c['runs']}).", "",
              f"- Claims held: {c['holds']}/{c['claims']} ({c['fails']} fail, {c['error']} error, {c['skipped']} skipped"
              + (f"; {c['by_tie']} only by an exact tie" if c["by_tie"] else "") + ")",
              *([f"- Supplementary claims (not counted): {c['supplementary_holds']}/{c['supplementary']} hold"]
                if c["supplementary"] else []),
              *([f"- Notes the verdicts contradict: {c['stale_notes']} (see the entries)"] if c["stale_notes"] else []),
              within, "", md(provenance_line(b)), ""]
    papers = load_papers()
    lead = ["What reproduces, per paper:", "", "| paper | verdict | claims hold | within 25% | key number | published | ours |",
            "|---|---|---:|---:|---|---:|---:|"]
    for p in papers_summary(b, papers):
        heads = p["headlines"] or [{"label": p["no_headline"], "published": "-", "ours": "-"}]
        for i, h in enumerate(heads):
            first = (p["short"] or p["name"], p["verdict"], p["claims"], p["within25"]) if i == 0 else ("", "", "", "")
            lead.append("| " + " | ".join(md_cell(c) for c in (*first, h["label"], h["published"], h["ours"])) + " |")
    header = lead + [""] + header
    w = worst(b.table)
    if len(w):
        header += ["Largest disagreements (|log ratio| with a floor at a tenth of the quantity's largest published "
                   "value, shown as a factor):", "", "| entry | run | metric | published | ours | ratio | factor |",
                   "|---|---|---|---:|---:|---:|---:|"]
        header += ["| " + " | ".join(md_cell(c) for c in (r.entry, r.run, r.metric, printed(r.published),
                                                          like(r.ours, r.published), ratio_txt(r.ratio),
                                                          factor_txt(r.gap))) + " |"
                   for r in w.itertuples(index=False)]
        header.append("")
    z = zero_mismatches(b.table)
    if len(z):
        header += [f"Where the paper reports 0 and we do not ({len(z)}): {md(zero_text(z))}.", ""]
    extra = {}
    for e in b.entries:
        st = b.entry_stats.get(e.id, {})
        lines = [f"Runs: {st.get('runs', 0)} (seeds {st.get('seeds', [])}); {st.get('ran', 0)} computed, "
                 f"{st.get('cached', 0)} from the store, {st.get('failed', 0)} failed; simulation {st.get('sim_wall_s', 0):.1f} s, "
                 f"figures {render_s.get(e.id, 0):.1f} s.", ""]
        if b.quick and e.quick_description():
            lines += [f"Quick mode: {md(e.quick_description())}.", ""]
        dis = entry_disagreements(b.table[b.table["entry"] == e.id], b.verdicts.get(e.id, []))
        if dis:
            lines += ["**Disagreements** (see the notes for likely causes):", ""] + [f"- {md(d)}" for d in dis] + [""]
        extra[e.id] = lines
    return summary_markdown(b.table, b.entries, b.verdicts, header=header, extra=extra,
                            citations=citation_map(papers), ns2=compared_with_papers(b, papers))


def write_report(b: Built, out: str | os.PathLike) -> list[Path]:
    """Draw the figures not drawn yet and write index.html, summary.md, summary.csv and the
    result tables.

    Every file goes into ``out`` (or ``out/results/``) under its own name, written new and
    renamed into place (:func:`vegaslab.safe_io.write_file`): a symbolic link planted at one
    of these names in a shared or reused directory is replaced, never written through. Each
    robustness summary or figure in ``out/robustness/`` that is set aside
    (:func:`vegaslab.study.robustness.problems`) is a ``UserWarning`` naming it."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    figures, render_s = dict(b.figures), dict(b.render_s)
    drawn = 0.0  # the figures drawn here (those of the parts were drawn before reproduce_wall_s)
    for e in b.entries:
        if e.id in figures:
            continue
        t = time.perf_counter()
        figures[e.id] = render_figures(e, b.runsets[e.id])
        render_s[e.id] = time.perf_counter() - t
        drawn += render_s[e.id]
    # The whole reproduce (simulations, comparison, claims, figures); when called on its
    # own, the time since the build started.
    total = b.reproduce_wall_s + drawn if b.reproduce_wall_s else time.perf_counter() - b.t_start
    res_dir = make_dir(out, "results")
    write_file(res_dir, "comparison.parquet", b.table.to_parquet(None, index=False))
    claims = pd.DataFrame([{"entry": eid, "id": v.claim.id, "kind": claim_kind(v), "text": v.text,
                            "source": v.claim.source, "expr": v.expr, "status": v.status, "detail": v.detail,
                            "by_tie": v.by_tie} for eid, lst in b.verdicts.items() for v in lst],
                          columns=["entry", "id", "kind", "text", "source", "expr", "status", "detail", "by_tie"])
    write_file(res_dir, "claims.parquet", claims.to_parquet(None, index=False))
    prov = b.provenance
    runs = pd.DataFrame([{"entry": o.job.entry_id, "variant": o.job.variant, "seed": o.job.seed, "status": o.status,
                          "wall_s": o.wall_s, "error": o.error, "key": o.job.key, "overrides": " ".join(o.job.overrides),
                          "scenario_sha256": prov.get(o.job.key, {}).get("scenario_sha256"),
                          "source_revision": prov.get(o.job.key, {}).get("source_revision")}
                         for o in b.execution.per_job],
                        columns=["entry", "variant", "seed", "status", "wall_s", "error", "key", "overrides",
                                 "scenario_sha256", "source_revision"])
    write_file(res_dir, "runs.parquet", runs.to_parquet(None, index=False))
    write_file(res_dir, "provenance.json", json.dumps(provenance_doc(b), indent=2, sort_keys=True) + "\n")
    write_file(out, "summary.csv", b.table.to_csv(index=False))
    md = write_file(out, "summary.md", _markdown(b, total, render_s))
    summaries = load_summaries(out / "robustness")
    for message in robustness_problems(summaries, out / "robustness"):
        warnings.warn(message, stacklevel=2)
    section = robustness_section(summaries, out)
    page = write_file(out, "index.html", render_html(b, figures, render_s, total, section,
                                                     robustness=bool(summaries)))
    return [page, md, res_dir]
