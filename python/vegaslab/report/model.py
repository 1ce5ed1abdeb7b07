"""What the reproduction report says, before any HTML or figure: the comparison with the
published numbers, the claim verdicts, the counts, the set-up facts, the papers' citations and,
per experiment, every sentence and table cell its section shows (:func:`section_model`); the page
as a whole, led by the papers, is :mod:`vegaslab.report.front`'s.

The split: this module decides *what* the report says; :mod:`vegaslab.report.figures`
draws the figures; the Jinja2 templates in ``vegaslab/report/templates/`` decide only the markup, and
:mod:`vegaslab.report` renders them (autoescaped) and writes the files. Cells are strings here
(numbers formatted, booleans as yes/no), so the templates never format a value and the model
can be tested without a page.

It never imports :mod:`vegaslab.study.catalog` at run time (catalog imports the report, not the
other way round): entries are used through their own methods (``entry.runs()``,
``entry.published_of()``).
"""

from __future__ import annotations

import importlib.resources
import math
import time
import tomllib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..study.claims import ClaimError, RunSet, Verdict, evaluate_all
from ..study.claims.errors import ClaimSkipped
from ..study.claims.verdicts import measure
from .tables import (CLOSE, FAR, NONE_PUBLISHED, REPRODUCE_COLUMNS, RUN_FAILED, anchor, disagreement, like,
                     num_cell, ours_cell, printed, ratio, ratio_txt, text)
from ..study.runner import safe_name

if TYPE_CHECKING:  # pragma: no cover - type names only
    from ..study.catalog import Entry
    from ..study.runner import Execution, Job

WORST = 5

__all__ = ["Built", "EntryPart", "build", "build_entry", "assemble", "builds", "provenance_line", "ratio_stats",
           "worst", "zero_mismatches", "disagreement", "summary_counts", "setup_facts", "load_papers", "citation",
           "papers_markdown", "CLOSE", "FAR"]


# ---------------------------------------------------------------------- the comparison


@dataclass
class Built:
    """Everything the report shows, before the figures are drawn."""

    entries: list["Entry"]
    table: pd.DataFrame
    verdicts: dict[str, list[Verdict]]
    #: The runs of each entry whose figures are still to be drawn.
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
    #: Per entry, each variant's status (:attr:`EntryPart.variant_status`).
    variant_status: dict[str, dict[str, str]] = field(default_factory=dict)
    #: The figures already drawn (:func:`vegaslab.report.figures.render_figures`), by entry,
    #: and the seconds each entry's took.
    figures: dict[str, list[dict]] = field(default_factory=dict)
    render_s: dict[str, float] = field(default_factory=dict)
    #: The papers' key numbers with ours, by entry (:func:`measure_headlines`).
    headlines: dict[str, list[dict]] = field(default_factory=dict)


def ratio_stats(table: pd.DataFrame) -> dict[str, int]:
    """Counts over the rows with a published number: ``total``, ``within10``, ``within25``
    (|ours / published - 1| <= 10% / 25%; a failed or missing value counts as outside)."""
    rows = table[table["published"].notna()]
    dev = (rows["ratio"].astype(float) - 1).abs()
    return {"total": int(len(rows)), "within10": int((dev <= CLOSE + 1e-12).sum()),
            "within25": int((dev <= FAR + 1e-12).sum())}


def quantity(metric: str) -> str:
    """The quantity a comparison row's metric measures: its column after the entity
    (``f1.retransmitted_pkts`` -> ``retransmitted_pkts``)."""
    return str(metric).rpartition(".")[2]


def scales(table: pd.DataFrame) -> pd.Series:
    """Each row's quantity scale for :func:`~vegaslab.report.tables.disagreement`: the
    largest |published| of the same quantity in the same entry (one paper table), else in
    the whole report, else (the paper prints only zeros for it) the largest |ours| of it."""
    q = table["metric"].map(quantity)
    pub, ours = table["published"].astype(float).abs(), table["ours"].astype(float).abs()
    in_entry = pub.groupby([table["entry"], q]).transform("max")
    in_report = pub.groupby(q).transform("max")
    ours_max = ours.groupby(q).transform("max")
    return in_entry.where(in_entry > 0, in_report.where(in_report > 0, ours_max))


def ranked(table: pd.DataFrame) -> pd.DataFrame:
    """The rows with a published number and a complete mean of ours, with ``gap`` (their
    :func:`~vegaslab.report.tables.disagreement`), largest first."""
    rows = table[table["published"].notna() & table["ours"].notna() & table["ratio"].notna()].copy()
    if rows.empty:
        return rows.assign(gap=pd.Series(dtype=float))
    rows["gap"] = [disagreement(o, p, s) for o, p, s in zip(rows["ours"], rows["published"], scales(table)[rows.index])]
    return rows.sort_values("gap", ascending=False, kind="stable")


def worst(table: pd.DataFrame, n: int = WORST) -> pd.DataFrame:
    """The ``n`` rows farthest from the paper by :func:`~vegaslab.report.tables.disagreement`
    (a log ratio with a floor at a tenth of the quantity's scale), worst first; only rows that
    the counts do not call within 10% (ratio outside 1 +- 10%, :func:`ratio_stats`'s rule) and
    that are off by more than 10% by that measure too (a small number below the floor is not).
    Rows whose mean is incomplete (a failed seed, a missing value) are not ranked: their notes
    say why."""
    rows = ranked(table)
    outside = (rows["ratio"].astype(float) - 1).abs() > CLOSE + 1e-12
    return rows[outside & (rows["gap"] > math.log1p(CLOSE))].head(n)


def zero_mismatches(table: pd.DataFrame) -> pd.DataFrame:
    """Rows where the paper prints 0 and our mean is not 0 (e.g. retransmissions)."""
    rows = table[(table["published"] == 0) & table["ours"].notna() & (table["ours"] != 0)]
    return rows.sort_values("ours", ascending=False, kind="stable")


def zero_text(z: pd.DataFrame) -> str:
    return "; ".join(f"{r.entry}/{r.run} {r.metric} = {num_cell(r.ours)}" for r in z.itertuples(index=False))


def variant_rows(entry_id: str, variant: str, published: Mapping[str, float], results: Sequence[Any],
                 error: str) -> list[dict]:
    if not results:
        return [{"entry": entry_id, "run": variant, "metric": RUN_FAILED, "published": math.nan,
                 "ours": math.nan, "std": math.nan, "n": 0, "ratio": math.nan, "note": error or "no results"}]
    rows = []
    if not published:
        rows.append({"entry": entry_id, "run": variant, "metric": NONE_PUBLISHED, "published": math.nan,
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


@dataclass
class EntryPart:
    """One entry's share of the report, computed from its finished runs alone: its comparison
    rows, claim verdicts, counts, each finished run's provenance and each variant's status.
    ``runset`` holds the runs' Results until the figures are drawn (:attr:`figures`); a part
    whose figures are drawn holds no Results, so that the report's memory is one entry's
    runs at a time, not every run's."""

    entry_id: str
    rows: list[dict]
    verdicts: list[Verdict]
    stats: dict[str, Any]
    provenance: dict[str, dict]
    #: Variant -> ``ok``, ``partly failed`` (some seeds failed) or ``failed`` (every seed).
    variant_status: dict[str, str]
    runset: RunSet | None
    figures: list[dict] | None = None
    #: Seconds spent drawing :attr:`figures`.
    render_s: float = 0.0
    #: The paper's key numbers this entry reproduces, with ours (:func:`measure_headlines`).
    headlines: list[dict] = field(default_factory=list)


def build_entry(entry: "Entry", jobs: Sequence["Job"], execution: "Execution", results: Mapping[str, Any], *,
                quick: bool = False) -> EntryPart:
    """Compare one entry's finished runs (``results``: :class:`vegaslab.Results` by job key,
    from :func:`vegaslab.study.runner.load`; other entries' keys may be there too) with the
    published numbers and check its claims. ``jobs`` may hold other entries' jobs: only this
    entry's are used."""
    rows: list[dict] = []
    prov: dict[str, dict] = {}
    by_variant: dict[str, list["Job"]] = {}
    for job in jobs:
        if job.entry_id == entry.id:
            by_variant.setdefault(job.variant, []).append(job)
    runs: dict[str, list] = {}
    failed: dict[str, str] = {}
    order = []
    st = {"runs": 0, "ran": 0, "cached": 0, "failed": 0, "sim_wall_s": 0.0, "seeds": set()}
    for spec in entry.runs(quick=quick):
        order.append(spec.name)
        got, errors = [], []
        for job in by_variant.get(spec.name, []):
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
        rows += variant_rows(entry.id, spec.name, spec.published, got, failed.get(spec.name, ""))
    st["seeds"] = sorted(st["seeds"])
    rs = RunSet(runs=runs, failed=failed, order=order)
    status = {n: "failed" if n in failed and n not in runs else ("partly failed" if n in failed else "ok")
              for n in order}
    return EntryPart(entry.id, rows, evaluate_all(entry.claims, rs), st, prov, status, rs,
                     headlines=measure_headlines(entry, rs))


def assemble(entries: Sequence["Entry"], jobs: Sequence["Job"], execution: "Execution",
             parts: Sequence[EntryPart], *, quick: bool = False, seed: int | None = None) -> Built:
    """The report of these entries from their parts (:func:`build_entry`, one per entry, in
    any order). A part whose figures are drawn gives them to :attr:`Built.figures`; the
    others keep their runs in :attr:`Built.runsets` for :func:`vegaslab.report.write.write_report`
    to draw."""
    by_id = {p.entry_id: p for p in parts}
    ordered = [by_id[e.id] for e in entries]
    table = pd.DataFrame([r for p in ordered for r in p.rows], columns=REPRODUCE_COLUMNS)
    return Built(entries=list(entries), table=table, verdicts={p.entry_id: p.verdicts for p in ordered},
                 runsets={p.entry_id: p.runset for p in ordered if p.figures is None and p.runset is not None},
                 jobs=list(jobs), execution=execution, quick=quick, seed=seed,
                 entry_stats={p.entry_id: p.stats for p in ordered},
                 provenance={k: v for p in ordered for k, v in p.provenance.items()},
                 variant_status={p.entry_id: p.variant_status for p in ordered},
                 figures={p.entry_id: p.figures for p in ordered if p.figures is not None},
                 render_s={p.entry_id: p.render_s for p in ordered if p.figures is not None},
                 headlines={p.entry_id: p.headlines for p in ordered})


def build(entries: Sequence["Entry"], jobs: Sequence["Job"], execution: "Execution",
          results: Mapping[str, Any], *, quick: bool = False, seed: int | None = None) -> Built:
    """Compare the finished runs (``results``: :class:`vegaslab.Results` by job key, from
    :func:`vegaslab.study.runner.load`) with the published numbers and check the claims; the
    figures are drawn by :func:`vegaslab.report.write.write_report`."""
    parts = [build_entry(entry, jobs, execution, results, quick=quick) for entry in entries]
    return assemble(entries, jobs, execution, parts, quick=quick, seed=seed)


def builds(b: Built) -> list[dict]:
    """The distinct builds (vegaslab version, core version, source revision) the report's runs
    ran on; more than one when stored runs from another build are reused (run keys hold the
    core's semantic version, not its revision: see vegaslab.study.runner)."""
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


def provenance_doc(b: Built) -> dict:
    """``results/provenance.json``: the builds and every run's provenance (without the
    scenario, which stays in the run's own meta.json)."""
    runs = []
    for o in b.execution.per_job:
        p = b.provenance.get(o.job.key)
        if p is None:
            continue
        runs.append({"entry": o.job.entry_id, "variant": o.job.variant, "seed": o.job.seed, "status": o.status,
                     "dir": f"{safe_name(o.job.entry_id)}/{safe_name(o.job.variant)}/seed{o.job.seed}",
                     **{k: v for k, v in p.items() if k != "scenario"}})
    return {"builds": builds(b), "quick": b.quick, "seed": b.seed, "runs": runs}


def summary_counts(b: Built) -> dict[str, Any]:
    """The report's counts. Claims are the paper's (``kind = "paper"``); supplementary claims
    (another reading beside the paper's, docs/catalog-format.md) are counted apart and never in
    the held totals; ``by_tie`` counts the paper's claims that hold only by an exact tie."""
    every = [v for lst in b.verdicts.values() for v in lst]
    vs = [v for v in every if claim_kind(v) == "paper"]
    extra = [v for v in every if claim_kind(v) != "paper"]
    counts = {s: sum(1 for v in vs if v.status == s) for s in ("holds", "fails", "error", "skipped")}
    stale = sum(len(note_contradictions(e, b.verdicts.get(e.id, []))) for e in getattr(b, "entries", [])) \
        if notes_comparable(b) else 0
    return {"claims": len(vs), **counts, "by_tie": sum(1 for v in vs if getattr(v, "by_tie", False)),
            "stale_notes": stale,
            "supplementary": len(extra), "supplementary_holds": sum(1 for v in extra if v.status == "holds"),
            **ratio_stats(b.table),
            "runs": len(b.execution.outcomes), "ran": b.execution.ran, "cached": b.execution.cached,
            "failed_runs": b.execution.failed}


def notes_comparable(b: Any) -> bool:
    """Whether a build's verdicts can be held against the notes: the notes describe the full
    run with each entry's own seeds, so a ``--quick`` or ``--seed`` reproduction is not
    checked against them."""
    return not getattr(b, "quick", False) and getattr(b, "seed", None) is None


def note_contradictions(entry: "Entry", vs: Sequence[Verdict]) -> list[str]:
    """Each expectation of the entry's notes (``#id (holds)``, ``#id (fails)``) that its claim's
    verdict contradicts, in words; a claim that was not judged (error, skipped) contradicts
    too. Only for a full reproduction (:func:`notes_comparable`)."""
    by_id = {v.claim.id: v for v in vs}
    out = []
    for cid, expected in entry.note_expectations:
        v = by_id.get(cid)
        status = v.status if v is not None else "was not evaluated"
        if status != expected:
            out.append(f"the notes expect #{cid} to {'hold' if expected == 'holds' else 'fail'}; it {status}")
    return out


def entry_disagreements(part: pd.DataFrame, vs: Sequence[Verdict]) -> list[str]:
    """What an experiment's "Disagreements with the paper" box lists."""
    out = []
    for r in part.itertuples(index=False):
        if r.metric == RUN_FAILED:
            out.append(f"{r.run}: the run failed ({r.note.splitlines()[0] if r.note else ''})")
        elif not pd.isna(r.published) and (pd.isna(r.ratio) or abs(float(r.ratio) - 1) > FAR):
            out.append(f"{r.run} {r.metric}: ours {like(r.ours, r.published)} vs published {printed(r.published)} "
                       f"(ratio {ratio_txt(r.ratio)})")
    for v in vs:
        if v.status == "fails" and claim_kind(v) == "paper":
            out.append(f"claim fails: {v.text}")
    return out


# ---------------------------------------------------------------------- set-up facts


def _flow_fact(f: Mapping[str, Any]) -> tuple[str, str]:
    """A flow table as (label, text). A ``pairs`` group (the dumbbell shorthand S_k -> D_k,
    named <name or cc><k>) and a ``range`` group are described as groups; a field the table
    does not give is left out, never shown as "?"."""
    cc = str(f.get("cc", ""))
    base = str(f.get("name") or cc or "flow")
    if f.get("pairs") is not None:
        label = f"flows {base}<k>, k = {text(f['pairs'])}"
        ends = "S<k> → D<k>"
    else:
        label = f"flow {base}" if f.get("name") else f"flow ({base})"
        ends = " → ".join(str(f[k]) for k in ("from", "to") if f.get(k) not in (None, ""))
    parts = [p for p in (ends, cc) if p]
    for k in ("range", "app", "file_size", "start", "stop", "params", "tcp"):
        if f.get(k) not in (None, {}, ""):
            parts.append(f"{k} {text(f[k])}")
    return label, ", ".join(parts)


def setup_facts(entry: "Entry") -> list[tuple[str, str]]:
    """(label, text) lines describing the scenario: duration, topology, flows, monitors."""
    sc = entry.scenario
    facts: list[tuple[str, str]] = []
    run = sc.get("run", {}) or {}
    if run:
        facts.append(("run", text(run)))
    for i, link in enumerate(sc.get("links", []) or []):
        ends = link.get("endpoints", ["?", "?"])
        parts = [f"{link.get('bandwidth', '?')}", f"delay {link.get('delay', '?')} one way"]
        if link.get("queue"):
            parts.append(f"queue {text(link['queue'])}")
        if link.get("delay_schedule"):
            parts.append("delay schedule " + "; ".join(f"at {d.get('at')}: {d.get('delay')}" for d in link["delay_schedule"]))
        extra = {k: v for k, v in link.items() if k not in ("endpoints", "bandwidth", "delay", "queue", "delay_schedule")}
        if extra:
            parts.append(text(extra))
        facts.append((f"links[{i}] {ends[0]}–{ends[-1]}", ", ".join(parts)))
    for key in ("dumbbell", "parking_lot", "lte", "aqt"):
        if sc.get(key):
            facts.append((key, text(sc[key])))
    for f in sc.get("flows", []) or []:
        facts.append(_flow_fact(f))
    others = {k: v for k, v in sc.items() if k not in ("run", "links", "flows", "dumbbell", "parking_lot", "lte", "aqt")}
    for k, v in others.items():
        facts.append((k, text(v)))
    return facts


# ---------------------------------------------------------------------- papers

#: Where the papers' citations live: the one map from ``meta.paper`` keys to references.
PAPERS_FILE = ("catalog_data", "papers", "papers.toml")
#: The fields a paper's record may have (catalog_data/papers/papers.toml).
PAPER_FIELDS = ("short", "authors", "title", "venue", "volume", "pages", "year", "doi", "note", "headline")
#: The fields of a paper's ``headline`` number (catalog_data/papers/papers.toml explains them).
HEADLINE_FIELDS = ("entry", "label", "published", "printed", "ours", "percent")


def load_papers() -> dict[str, dict]:
    """The citations of the papers the built-in catalog reproduces, by ``meta.paper`` key.

    A user's catalog (``VEGASLAB_CATALOG``) that names one of these keys gets its citation; any
    other key is shown as it is, without a reference."""
    res = importlib.resources.files("vegaslab").joinpath(*PAPERS_FILE)
    doc = tomllib.loads(res.read_text(encoding="utf-8"))
    where = "/".join(PAPERS_FILE)
    for key, rec in doc.items():
        unknown = [k for k in rec if k not in PAPER_FIELDS]
        if unknown or not rec.get("title") or not rec.get("authors"):
            raise ValueError(f"{where}: [{key}]: needs authors and title; takes "
                             f"{', '.join(PAPER_FIELDS)}{f' (not {unknown[0]})' if unknown else ''}")
        for i, h in enumerate(rec.get("headline", [])):
            unknown = [k for k in h if k not in HEADLINE_FIELDS]
            published = h.get("published")
            if (unknown or not all(isinstance(h.get(k), str) and h[k] for k in ("entry", "label", "ours"))
                    or (published is None and not h.get("printed"))
                    or (published is not None and (isinstance(published, bool) or not isinstance(published, (int, float))))):
                raise ValueError(f"{where}: [[{key}.headline]] {i + 1}: needs entry, label and ours (strings) and "
                                 f"published (a number) or printed (text); takes {', '.join(HEADLINE_FIELDS)}"
                                 f"{f' (not {unknown[0]})' if unknown else ''}")
    return doc


def headline_specs(entry: "Entry", papers: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict]:
    """The key numbers of the entry's paper that this entry reproduces (``headline`` in
    catalog_data/papers/papers.toml)."""
    papers = load_papers() if papers is None else papers
    rec = papers.get(str(entry.meta.get("paper") or ""), {})
    return [dict(h) for h in rec.get("headline", []) if h["entry"] == entry.id]


def measure_headlines(entry: "Entry", rs: RunSet, papers: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict]:
    """Each of the entry's paper's key numbers (:func:`headline_specs`) with ours measured on
    the entry's runs: ``ours`` a number, or ``error`` saying why there is none."""
    out = []
    for h in headline_specs(entry, papers):
        try:
            out.append({**h, "ours": measure(h["ours"], rs), "error": ""})
        except (ClaimError, ClaimSkipped) as exc:
            out.append({**h, "ours": math.nan, "error": str(exc)})
    return out


def _authors(names: Sequence[str]) -> str:
    names = [str(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def citation(rec: Mapping[str, Any]) -> str:
    """A full reference in one line: authors. title. venue volume, pp. pages, year. note.
    doi. Only the fields the record has."""
    where = " ".join(str(rec[k]) for k in ("venue", "volume") if rec.get(k))
    if rec.get("pages"):
        where += (", " if where else "") + f"pp. {rec['pages']}"
    if rec.get("year"):
        where += (", " if where else "") + str(rec["year"])
    parts = [_authors(rec["authors"]), str(rec["title"])]
    parts += [p for p in (where, str(rec.get("note") or "")) if p]
    if rec.get("doi"):
        parts.append(f"doi:{rec['doi']}")
    return ". ".join(p.rstrip(".") for p in parts) + "."


def citation_map(papers: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """``meta.paper`` key -> full reference."""
    return {k: citation(rec) for k, rec in papers.items()}


def papers_markdown(papers: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """docs/papers.md: every paper's full reference, the catalog key that names it and, for the
    papers with a ``short`` name, how comments and docs cite it."""
    papers = load_papers() if papers is None else papers
    lines = ["# The papers", "",
             "vegaslab's catalog reproduces the published experiments of these five papers. A catalog",
             "entry names its paper with `meta.paper = \"<key>\"`; the citations below come from one file,",
             "[`python/vegaslab/catalog_data/papers/papers.toml`](../python/vegaslab/catalog_data/papers/papers.toml),",
             "which the report's references use too. Each field is taken from the paper's own text; a",
             "field the text does not give (a venue, a year) is left out, not guessed.", "",
             "<!-- generated from catalog_data/papers/papers.toml by vegaslab.report.model.papers_markdown;"
             " tests/test_report_templates.py checks it -->", ""]
    for key, rec in papers.items():
        lines += [f"- **`{key}`**: {citation(rec)}"]
    lines += ["", "`vegaslab reproduce --list` groups the catalog's entries by these keys;",
              "`vegaslab reproduce <key>` runs every entry of one paper.", ""]
    cited = [(key, rec) for key, rec in papers.items() if rec.get("short")]
    if cited:
        lines += ["## How the code and docs cite them", "",
                  "Comments, docstrings and docs name a paper and the section, table or figure meant, with the",
                  "paper's numbering. The first citation in a file gives the authors and the title; later ones",
                  "in the same file use the short name alone, e.g. \"the Vegas-A paper, section 4.2\".", "",
                  "| key | short name | first citation in a file |", "|---|---|---|"]
        lines += [f"| `{key}` | {rec['short']} | {first_citation(rec)}, section ... |" for key, rec in cited]
        lines += [""]
    return "\n".join(lines)


def first_citation(rec: Mapping[str, Any]) -> str:
    """How a file first cites a paper: its short name, then the first author's surname (with
    "et al." for three or more authors, both surnames for two) and the title in quotes."""
    surnames = [str(a).split()[-1] for a in rec["authors"]]
    who = surnames[0] if len(surnames) == 1 else (" and ".join(surnames) if len(surnames) == 2
                                                  else f"{surnames[0]} et al.")
    return f"{rec['short']} ({who}, \"{rec['title']}\")"


# ---------------------------------------------------------------------- the page


def _row_class(r) -> str:
    if r.metric == RUN_FAILED:
        return "failed"
    if pd.isna(r.published):
        return ""
    d = abs(float(r.ratio) - 1) if not pd.isna(r.ratio) else math.inf
    return "far" if d > FAR else ("near" if d > CLOSE else "")


def comparison_rows(part: pd.DataFrame) -> list[dict]:
    """The published / ours / ratio table's rows, as cells."""
    rows = []
    for r in part.itertuples(index=False):
        row = {"cls": _row_class(r), "run": str(r.run), "metric": str(r.metric), "note": str(r.note or ""),
               "span": r.metric in (RUN_FAILED, NONE_PUBLISHED)}
        if not row["span"]:
            row.update(published=printed(r.published), ours=ours_cell(r.ours, r.std, r.n, r.published),
                       n="" if pd.isna(r.n) else str(int(r.n)), ratio=ratio_txt(r.ratio))
        rows.append(row)
    return rows


def claim_kind(v: Any) -> str:
    """A verdict's claim kind, ``paper`` unless the claim says otherwise."""
    claim = getattr(v, "claim", None)
    return getattr(claim, "kind", "paper") or "paper"


def verdict_items(vs: Sequence[Verdict], entry_id: str = "") -> list[dict]:
    return [{"status": v.status, "text": v.text, "source": v.claim.source or "", "expr": v.expr,
             "detail": v.detail, "id": v.claim.id, "anchor": f"{entry_id}-{v.claim.id}", "kind": claim_kind(v),
             "ties": list(v.ties) if v.by_tie else []}
            for v in vs]


def _paper_ref(entry: "Entry", papers: Mapping[str, Mapping[str, Any]]) -> dict | None:
    key = str(entry.meta.get("paper") or "")
    if key in papers:
        return {"key": key, "id": f"ref-{anchor(key)[4:]}", "text": citation(papers[key])}
    return None


def section_model(b: Built, entry: "Entry", figures: list[dict], render_s: float,
                  papers: Mapping[str, Mapping[str, Any]]) -> dict:
    """One experiment's section."""
    part = b.table[b.table["entry"] == entry.id]
    vs = b.verdicts.get(entry.id, [])
    st = b.entry_stats.get(entry.id, {})
    cite = " · ".join(str(x) for x in (entry.meta.get("paper"), entry.meta.get("figure")) if x)
    seeds = st.get("seeds", [])
    sub = (f"{cite + ' · ' if cite else ''}{st.get('runs', 0)} runs ({len(entry.variants) or 1} variants × {len(seeds)} seed"
           f"{'s' if len(seeds) != 1 else ''}: {', '.join(map(str, seeds))}) · {st.get('ran', 0)} computed, "
           f"{st.get('cached', 0)} from the store, {st.get('failed', 0)} failed · simulation {st.get('sim_wall_s', 0):.1f} s "
           f"(sum over runs), figures {render_s:.1f} s")
    quick = None
    if b.quick and entry.quick_description():
        shortened = bool(entry.quick.get("set")) or entry.seeds(quick=True) != entry.seeds()
        tail = " Numbers are not the full experiment's." if shortened else " Same runs as the full experiment."
        quick = f"{entry.quick_description()}.{tail}"
    status = b.variant_status.get(entry.id, {})
    variants = [[s.name, " ".join(s.overrides) or "(the file as is)", status.get(s.name, "ok")]
                for s in entry.runs(quick=b.quick)]
    assumptions = [[text(a.get("field", "?")), text(a.get("value", "?")), text(a.get("reason", ""))]
                   for a in (entry.meta.get("assumptions") or [])]
    return {"id": entry.id, "anchor": anchor(entry.id), "title": entry.title, "sub": sub,
            "paper": _paper_ref(entry, papers), "figure": str(entry.meta.get("figure") or ""),
            "quick": quick, "notes": str(entry.meta.get("notes", "")).strip(),
            "disagreements": entry_disagreements(part, vs),
            "stale_notes": note_contradictions(entry, vs) if notes_comparable(b) else [],
            "setup": [list(f) for f in setup_facts(entry)], "variants": variants, "assumptions": assumptions,
            "comparison": comparison_rows(part), "figures": figures, "verdicts": verdict_items(vs, entry.id)}
