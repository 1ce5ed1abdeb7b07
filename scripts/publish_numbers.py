#!/usr/bin/env python3
"""The numbers the README and docs state about runs, written by a program, never by hand.

Three steps, each a subcommand:

``measure OUT.json -- COMMAND ...``
    Run COMMAND and record what a reader of the numbers needs to judge them: its wall time,
    its CPU time and peak memory (``getrusage(RUSAGE_CHILDREN)``: CPU summed over every process
    it started and waited for, memory of the largest one), the machine (``nproc``, the CPU
    model, memory), its 1-minute load average when the command started and ended, the
    commit and whether the sources had uncommitted changes. Exits with COMMAND's status.
    ``make reproduce-all`` and ``make bench`` run their commands through it.

``publish --report DIR [--bench DIR]``
    Read a ``vegaslab reproduce --all --out DIR`` directory (``results/claims.parquet``,
    ``comparison.parquet``, ``runs.parquet``, ``provenance.json`` and the ``measured.json``
    written by ``measure``) and a ``vegaslab bench --out DIR`` directory (``bench.json`` and
    its ``measured.json``; without ``--bench`` the benchmark's facts already in
    ``docs/numbers.json`` are kept), write the facts to ``docs/numbers.json``, then render. The
    counts are the report's own (:func:`vegaslab.report_model.summary_counts`, which counts the
    paper's claims held, supplementary claims apart, and numbers within 10% and 25% with
    :func:`~vegaslab.report_model.ratio_stats`), checked against the report's ``summary.md``.

``publish-robustness --report DIR``
    Read the robustness studies' summaries that ``vegaslab robustness --out DIR`` saved
    (``DIR/robustness/*.json``, read back as :func:`vegaslab.study.robustness.load_summaries`
    reads them: a set-aside summary is an error here) and write their verdicts, the evidence
    behind each (points with the paper's stated set-up and their statuses, points resting on one
    run, departures that hold) and their runs and compute into docs/numbers.json's
    ``robustness``, then render.

``render`` / ``check``
    Rewrite (or, ``check``, compare) every block ``<!-- numbers:NAME -->`` ...
    ``<!-- /numbers:NAME -->`` in README.md and docs/*.md from docs/numbers.json. ``check``
    also names every line outside such a block that states a run-derived number
    (:data:`RULES`); a past measurement kept as history sits between ``<!-- history -->`` and
    ``<!-- /history -->`` with its date, and is not checked. tests/test_numbers.py runs the
    check.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
NUMBERS = ROOT / "docs" / "numbers.json"
MEASURED = "measured.json"
#: Paths whose uncommitted changes could change a result or a time (docs do not).
SOURCES = ("crates", "python", "kernel", "Cargo.toml", "Cargo.lock", "pyproject.toml")


class PublishError(Exception):
    """A run's outputs cannot be published (missing, failed or incomplete); the message names
    the file."""


# ---------------------------------------------------------------------- measure


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine() -> dict[str, Any]:
    """What the numbers ran on: CPUs this process may use (as ``nproc`` counts them), the CPU
    model, memory and kernel."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        mem = None
    return {"nproc": len(os.sched_getaffinity(0)), "cpu_model": model or platform.processor() or "unknown",
            "memory_bytes": mem, "kernel": platform.release()}


def source_state() -> dict[str, Any]:
    """The commit checked out and whether the sources differ from it."""
    changed = _git("status", "--porcelain", "--", *SOURCES)
    return {"commit": _git("rev-parse", "HEAD"), "uncommitted_source_changes": bool(changed)}


def measure(out: Path, command: list[str]) -> int:
    """Run ``command``; write what :func:`publish` needs to ``out``; return its exit status."""
    if not command:
        raise PublishError("measure: no command given (usage: measure OUT.json -- COMMAND ...)")
    start = dt.datetime.now(dt.timezone.utc)
    load_start = os.getloadavg()
    t0 = time.monotonic()
    proc = subprocess.Popen(command)
    # Ctrl-C at a terminal reaches the command through its process group; this process only
    # waits for it, so that the command's own interrupt handling decides the exit status.
    # The handler is put back afterwards: a caller that measures in-process keeps its Ctrl-C.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        status = proc.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    wall = time.monotonic() - t0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    record = {
        "command": command, "exit_status": status,
        "started_utc": start.isoformat(timespec="seconds"), "wall_s": round(wall, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        # ru_maxrss of RUSAGE_CHILDREN: the largest single process among those waited for, in KiB.
        "peak_rss_bytes": usage.ru_maxrss * 1024,
        "load_1min_at_start": load_start[0], "load_1min_at_end": os.getloadavg()[0],
        "machine": machine(), **source_state(),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    return status


# ---------------------------------------------------------------------- publish


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PublishError(f"{path}: missing") from None
    except (OSError, ValueError) as exc:
        raise PublishError(f"{path}: not readable JSON: {exc}") from None


def _read_parquet(path: Path):
    import pandas as pd

    if not path.is_file():
        raise PublishError(f"{path}: missing (is this a `vegaslab reproduce --out` directory?)")
    return pd.read_parquet(path)


def _measured(directory: Path, what: str) -> dict[str, Any]:
    m = _read_json(directory / MEASURED)
    if m.get("exit_status") != 0:
        raise PublishError(f"{directory / MEASURED}: exit_status {m.get('exit_status')}: the {what} run failed")
    return m


def _counts(claims, comparison, runs) -> dict[str, Any]:
    """The report's summary counts (claims by verdict, published numbers within 10% and 25%,
    runs) of the given rows, by the report's own function."""
    from vegaslab.report.model import summary_counts

    status = runs["status"].tolist()
    built = SimpleNamespace(
        verdicts={"all": [SimpleNamespace(status=s, claim=SimpleNamespace(kind=k), by_tie=bool(t))
                          for s, k, t in zip(claims["status"],
                                             claims["kind"] if "kind" in claims else ["paper"] * len(claims),
                                             claims["by_tie"] if "by_tie" in claims else [False] * len(claims))]},
        table=comparison,
        execution=SimpleNamespace(outcomes=status, ran=status.count("ran"), cached=status.count("cached"),
                                  failed=status.count("failed")))
    c = summary_counts(built)
    return {"claims": c["claims"], "holds": c["holds"], "fails": c["fails"], "error": c["error"],
            "skipped": c["skipped"], "by_tie": c["by_tie"], "supplementary": c["supplementary"],
            "supplementary_holds": c["supplementary_holds"], "numbers": c["total"], "within10": c["within10"], "within25": c["within25"],
            "runs": c["runs"], "computed": c["ran"], "cached": c["cached"], "failed_runs": c["failed_runs"]}


_SUMMARY_CLAIMS = re.compile(r"^- Claims held: (\d+)/(\d+)", re.M)
_SUMMARY_WITHIN = re.compile(r"^- Numbers within 10%: (\d+)/(\d+); within 25%: (\d+)/(\d+)", re.M)


def _check_against_summary(report: Path, c: dict[str, Any]) -> None:
    """The counts must be those the report's summary.md printed: the same runs, read alike."""
    path = report / "summary.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PublishError(f"{path}: not readable: {exc}") from None
    m, w = _SUMMARY_CLAIMS.search(text), _SUMMARY_WITHIN.search(text)
    if not m or not w:
        raise PublishError(f"{path}: no 'Claims held' or 'Numbers within' line")
    printed = (int(m[1]), int(m[2]), int(w[1]), int(w[2]), int(w[3]))
    counted = (c["holds"], c["claims"], c["within10"], c["numbers"], c["within25"])
    if printed != counted:
        raise PublishError(f"{path}: says claims {printed[0]}/{printed[1]}, within 10% {printed[2]}/{printed[3]}, "
                           f"within 25% {printed[4]}/{printed[3]}; results/ gives {counted[0]}/{counted[1]}, "
                           f"{counted[2]}/{counted[3]}, {counted[4]}/{counted[3]}: the directory mixes two runs")


def reproduce_facts(report: Path) -> dict[str, Any]:
    """Per paper and in all: claims held, numbers within 10%/25%, runs; with the run's time,
    memory, machine and load. A reproduce that reused stored runs did not time them, so its
    wall time is not that of ``reproduce --all``: refused."""
    from vegaslab.study.catalog import list_entries
    from vegaslab.report.model import load_papers, worst

    res = report / "results"
    claims, comparison, runs = (_read_parquet(res / f"{n}.parquet") for n in ("claims", "comparison", "runs"))
    provenance = _read_json(res / "provenance.json")
    measured = _measured(report, "reproduce")
    if provenance.get("quick"):
        raise PublishError(f"{res / 'provenance.json'}: a --quick run; publish a full `reproduce --all`")
    every = _counts(claims, comparison, runs)
    if every["cached"]:
        raise PublishError(f"{res / 'runs.parquet'}: {every['cached']} of {every['runs']} runs came from the store, "
                           "so the wall time is not reproduce --all's; run it into a new directory")
    if every["failed_runs"]:
        raise PublishError(f"{res / 'runs.parquet'}: {every['failed_runs']} runs failed")
    _check_against_summary(report, every)
    paper_of = {e.id: e.paper for e in list_entries()}
    unknown = sorted(set(runs["entry"]) - set(paper_of))
    if unknown:
        raise PublishError(f"{res / 'runs.parquet'}: entries not in the catalog: {', '.join(unknown)}")
    experiments = sorted(set(runs["entry"]))
    papers = []
    for key, rec in load_papers().items():
        ids = [e for e in experiments if paper_of[e] == key]
        if not ids:
            continue
        c = _counts(claims[claims["entry"].isin(ids)], comparison[comparison["entry"].isin(ids)],
                    runs[runs["entry"].isin(ids)])
        name = str(rec.get("short", key)).removeprefix("the ").removesuffix(" paper")
        papers.append({"paper": key, "name": name, "experiments": ids, **c})
    if sum(len(p["experiments"]) for p in papers) != len(experiments):
        raise PublishError(f"{res / 'runs.parquet'}: some entries name no paper of papers.toml")
    if "id" not in claims:
        raise PublishError(f"{res / 'claims.parquet'}: written before claims had ids; run reproduce --all again")
    verdicts: dict[str, dict[str, str]] = {}
    for row in claims.itertuples(index=False):
        verdicts.setdefault(row.entry, {})[row.id] = row.status
    return {"directory": str(report), "experiments": len(experiments), **every, "papers": papers,
            "verdicts": verdicts,
            "highlights": _rows(comparison[comparison["entry"].isin(HIGHLIGHTS) & comparison["published"].notna()]),
            "worst": _rows(worst(comparison)),
            "builds": provenance.get("builds", []), "measured": measured}


#: Experiments whose every published-vs-ours row docs/reproductions.md shows: the reroute that
#: Vegas-A was designed for.
HIGHLIGHTS = ("va-reroute",)


def _rows(table) -> list[dict[str, Any]]:
    """Comparison rows as plain JSON (a NaN becomes null)."""
    out = []
    for r in table.itertuples(index=False):
        row = {"entry": r.entry, "run": r.run, "metric": r.metric}
        for k in ("published", "ours", "std", "ratio"):
            v = getattr(r, k)
            row[k] = None if v is None or v != v else float(v)
        row["seeds"] = int(r.n)
        out.append(row)
    return out


def bench_facts(bench: Path) -> dict[str, Any]:
    """The benchmark's medians and ratios from ``bench.json``, with its machine and load."""
    b = _read_json(bench / "bench.json")
    measured = _measured(bench, "bench")
    if not b.get("ns2"):
        raise PublishError(f"{bench / 'bench.json'}: no ns-2 numbers ({b.get('ns2_skipped', 'skipped')}): "
                           "install ns-2 (`make ns2`) and run the benchmark again")
    try:
        core, ns2, e2e = b["vegaslab"], b["ns2"], b["end_to_end"]
        return {
            "directory": str(bench), "scenario": Path(b["scenario"]).name, "overrides": b["overrides"],
            "flows": b["flows"], "rounds": b["repeat"],
            "core": {k: core[k] for k in ("wall_s", "cpu_s", "peak_rss_bytes", "packet_hops", "ns_per_packet_hop")},
            "ns2": {k: ns2[k] for k in ("wall_s", "cpu_s", "peak_rss_bytes", "ns_per_packet_hop")},
            "ns2_over_core_cpu": b["ns2_over_vegaslab_cpu"], "ns2_over_core_wall": b["ns2_over_vegaslab_wall"],
            "ns2_over_core_cpu_by_round": b["ns2_over_vegaslab_cpu_by_round"],
            "end_to_end": {k: {"command": t["command"], "wall_s": t["wall_s"], "cpu_s": t["cpu_s"],
                               "ns2_over_wall": b["ns2_over_end_to_end_wall"][k],
                               "ns2_over_cpu": b["ns2_over_end_to_end_cpu"][k]} for k, t in e2e.items()},
            "results_to_pandas": {k: b["results_to_pandas"][k] for k in ("wall_s", "series_rows")},
            "measured": measured,
        }
    except (KeyError, TypeError) as exc:
        raise PublishError(f"{bench / 'bench.json'}: no {exc} (written by `vegaslab bench --out` with its "
                           "end-to-end commands and ns-2?)") from None


def publish(report: Path, bench: Path | None, out: Path = NUMBERS) -> dict[str, Any]:
    """docs/numbers.json from a reproduction and a benchmark; without ``bench``, the benchmark's
    facts already there are kept (a reproduction republished alone). The studies' verdicts are
    published by their own command (:func:`publish_robustness`) and kept."""
    before = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    if bench is None and "bench" not in before:
        raise PublishError(f"{out}: no benchmark facts to keep; give --bench")
    facts = {"written_by": "scripts/publish_numbers.py publish (make publish-numbers)",
             "reproduce": reproduce_facts(report), "bench": bench_facts(bench) if bench else before["bench"]}
    if before.get("robustness"):
        facts["robustness"] = before["robustness"]
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    return facts


def robustness_facts(report: Path) -> dict[str, Any]:
    """The verdicts of the studies saved in ``report/robustness/``, with their evidence."""
    sys.path.insert(0, str(ROOT / "python"))
    from vegaslab.study.robustness import load_summaries, study_name

    directory = report / "robustness"
    if not directory.is_dir():
        raise PublishError(f"{directory}: no robustness summaries (run `vegaslab robustness --out {report}`)")
    summaries = load_summaries(directory)
    bad = [s for s in summaries if "set_aside" in s]
    if bad:
        raise PublishError("; ".join(f"{directory / s['file']}: {s['set_aside']}" for s in bad))
    if not summaries:
        raise PublishError(f"{directory}: no robustness summaries")
    studies = []
    quick = [study_name(s) for s in summaries if s.get("quick")]
    if quick:
        raise PublishError(f"{directory}: quick-mode studies ({', '.join(quick)}) are checks, not verdicts: run "
                           "`make robustness` without --quick")
    for s in summaries:
        where = directory / (study_name(s) + ".json")
        if "rule" not in s:
            raise PublishError(f"{where}: written before studies recorded their rule (run `vegaslab robustness` again)")
        if s["verdict"] == "error" or not s["points"]:
            raise PublishError(f"{where}: the study's verdict is an error (a run failed or a claim could not be "
                               "judged): publish a study that ran")
        broken = [r for r in s.get("readings", []) if r["errors"]]
        if broken:
            raise PublishError(f"{where}: the reading {broken[0]['factor']} = {broken[0]['level']} could not be judged "
                               f"in every entry ({broken[0]['errors'][0]}): publish a study whose runs all ran")
        default = s["points"][0]
        findings = [p for p in s["points"] if p.get("departures") and p["status"] in ("holds", "fails")]
        studies.append({
            "id": study_name(s), "entry": s["entry"], "claim": s["claim"], "conclusion": s["conclusion"], "verdict": s["verdict"], **s["rule"],
            "seeds": default["seeds"], "default_status": default["status"], "default_holds": default["holds"],
            "default_single_run": default.get("single_run", False), "default_margin": default.get("margin"),
            "departures_holding": [p["label"] for p in findings if p["status"] == "holds"],
            "readings": [{k: r[k] for k in ("factor", "cc", "level", "default", "entries", "claims", "changed")}
                         for r in s.get("readings", [])],
            "runs": s["runs"], "compute_s": s["compute_s"]})
    return {"directory": str(report), "studies": studies, "runs": sum(x["runs"] for x in studies),
            "compute_s": sum(x["compute_s"] for x in studies)}


def publish_robustness(report: Path, out: Path = NUMBERS) -> dict[str, Any]:
    if not out.is_file():
        raise PublishError(f"{out}: missing; publish a reproduction first (make publish-numbers)")
    facts = json.loads(out.read_text(encoding="utf-8"))
    facts["robustness"] = robustness_facts(report)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    return facts


# ---------------------------------------------------------------------- rendering


def _mb(n: float) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def _frac(a: int, n: int) -> str:
    return f"{a}/{n}" if n else "(claims only)"


def _when(m: dict[str, Any]) -> str:
    return m["started_utc"].replace("T", " ").removesuffix("+00:00") + " UTC"


def _machine(m: dict[str, Any]) -> str:
    mc = m["machine"]
    return f"{mc['nproc']} CPUs ({mc['cpu_model']})"


def _cpu_share(m: dict[str, Any]) -> str:
    """The share of the machine's CPU time the command got: well under 100% on a machine
    busy with other work (a 2-CPU run that keeps both busy gets close to 100%)."""
    return f"{100 * m['cpu_s'] / (m['wall_s'] * m['machine']['nproc']):.0f}%"


def _circumstances(n: dict[str, Any]) -> str:
    """Where and when the numbers were measured, with the machine's load: a loaded machine
    gives slower times, and the reader must see that."""
    r, b = n["reproduce"]["measured"], n["bench"]["measured"]
    dirty = " (with uncommitted source changes)" if r["uncommitted_source_changes"] else ""
    return (f"Measured at commit `{r['commit'][:10]}`{dirty} on {_machine(r)}: `reproduce --all` from "
            f"{_when(r)}, 1-minute load average {r['load_1min_at_start']:.2f} at its start and "
            f"{r['load_1min_at_end']:.2f} at its end, its processes getting {_cpu_share(r)} of the CPUs' "
            f"time; the benchmark from {_when(b)}, load {b['load_1min_at_start']:.2f} at its start and "
            f"{b['load_1min_at_end']:.2f} at its end. Written by `make publish-numbers` from "
            "[docs/numbers.json](docs/numbers.json).")


def render_headline(n: dict[str, Any]) -> str:
    r, b = n["reproduce"], n["bench"]
    rows = ["| | the paper's claims held | published numbers within 10% | within 25% |", "|---|---|---|---|"]
    for p in r["papers"]:
        k = len(p["experiments"])
        rows.append(f"| {p['name']} (`{p['paper']}`, {k} experiment{'s' if k != 1 else ''}) | {p['holds']}/{p['claims']} "
                    f"| {_frac(p['within10'], p['numbers'])} | {_frac(p['within25'], p['numbers'])} |")
    rows.append(f"| **all five papers** ({r['experiments']} experiments, {r['runs']} runs) "
                f"| **{r['holds']}/{r['claims']}** | **{_frac(r['within10'], r['numbers'])}** "
                f"| **{_frac(r['within25'], r['numbers'])}** |")
    by_round = b["ns2_over_core_cpu_by_round"]
    tables = b["end_to_end"]["run_tables"]
    rm = r["measured"]
    rows.append(f"| **speed** | the core: ns-2.35's CPU time over ours **{b['ns2_over_core_cpu']:.1f}x** "
                f"(benchmark, median of {b['rounds']} rounds; rounds {min(by_round):.1f}x-{max(by_round):.1f}x) "
                f"| `{tables['command']}`, whole command: ns-2's wall time over ours {tables['ns2_over_wall']:.1f}x "
                f"| `reproduce --all`: **{rm['wall_s'] / 60:.1f} min** wall, peak memory {_mb(rm['peak_rss_bytes'])} |")
    return "\n".join(rows) + "\n\n" + _claims_note(r) + _circumstances(n)


def _claims_note(r: dict[str, Any]) -> str:
    """What the claims counts leave out: supplementary claims and claims held by a tie."""
    parts = []
    if r.get("supplementary"):
        parts.append(f"{r['supplementary']} supplementary claims (other readings beside the paper's, such as a "
                     f"metric that is not its definition) are not counted; {r['supplementary_holds']} of them hold.")
    if r.get("by_tie"):
        verb = "holds" if r["by_tie"] == 1 else "hold"
        parts.append(f"{r['by_tie']} of the claims held {verb} only by an exact tie of two measured values.")
    return " ".join(parts) + (" " if parts else "")


def render_reproduce_time(n: dict[str, Any]) -> str:
    r = n["reproduce"]
    m = r["measured"]
    return (f"`make reproduce-all` runs the five papers' {r['experiments']} experiments ({r['runs']} runs): "
            f"{m['wall_s'] / 60:.1f} minutes on {m['machine']['nproc']} CPUs, with a 1-minute load average of "
            f"{m['load_1min_at_start']:.2f} at the start and {m['load_1min_at_end']:.2f} at the end, its "
            f"processes getting {_cpu_share(m)} of the CPUs' time ({_when(m)}).")


def render_reproductions(n: dict[str, Any]) -> str:
    r = n["reproduce"]
    m = r["measured"]
    rows = ["| paper | experiments | runs | the paper's claims held (fail, error) | published numbers within 10% | within 25% |",
            "|---|---|---|---|---|---|"]
    for p in r["papers"]:
        rows.append(f"| {p['name']} (`{p['paper']}`) | {', '.join(p['experiments'])} | {p['runs']} "
                    f"| {p['holds']}/{p['claims']} ({p['fails']}, {p['error']}) | {_frac(p['within10'], p['numbers'])} "
                    f"| {_frac(p['within25'], p['numbers'])} |")
    rows.append(f"| **all** | {r['experiments']} | {r['runs']} | **{r['holds']}/{r['claims']}** ({r['fails']}, {r['error']}) "
                f"| **{_frac(r['within10'], r['numbers'])}** | **{_frac(r['within25'], r['numbers'])}** |")
    builds = "; ".join(f"vegaslab {x['vegaslab_version']}, core {x['core_version']}, source revision "
                       f"`{str(x['source_revision'])[:10]}`" for x in r["builds"])
    return ("\n".join(rows) + f"\n\n{_claims_note(r)}The whole `reproduce --all` took {m['wall_s']:.0f} s of wall time and "
            f"{m['cpu_s']:.0f} s of CPU time ({_cpu_share(m)} of the CPUs' time), its "
            f"largest process peaking at {_mb(m['peak_rss_bytes'])}, on {_machine(m)} with a 1-minute load "
            f"average of {m['load_1min_at_start']:.2f} at the start and {m['load_1min_at_end']:.2f} at the end "
            f"({_when(m)}; {builds}).")


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _comparison_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| experiment | variant | metric | published | ours (mean over seeds) | ours / published |",
             "|---|---|---|---:|---:|---:|"]
    for r in rows:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        seeds = f" ({r['seeds']} seeds)" if r["seeds"] > 1 else ""
        lines.append(f"| {r['entry']} | {r['run']} | `{r['metric']}` | {_num(r['published'])} "
                     f"| {_num(r['ours'])}{seeds} | {ratio} |")
    return "\n".join(lines)


def render_highlights(n: dict[str, Any]) -> str:
    return _comparison_table(n["reproduce"]["highlights"])


def render_worst(n: dict[str, Any]) -> str:
    w = n["reproduce"]["worst"]
    if not w:
        return "Every published number is within 10%."
    return _comparison_table(w)


def render_bench(n: dict[str, Any]) -> str:
    b = n["bench"]
    m = b["measured"]
    core, ns2 = b["core"], b["ns2"]
    by_round = b["ns2_over_core_cpu_by_round"]
    rows = ["| ns-2.35 over vegaslab | CPU time | wall time |", "|---|---|---|",
            f"| the core (one thread) | **{b['ns2_over_core_cpu']:.1f}x** | {b['ns2_over_core_wall']:.1f}x |"]
    for t in b["end_to_end"].values():
        rows.append(f"| `{t['command']}`, the whole command | {t['ns2_over_cpu']:.1f}x | {t['ns2_over_wall']:.1f}x |")
    listed = ", ".join(f"{x:.1f}x" for x in by_round)
    return ("\n".join(rows) + "\n\n"
            f"Medians of {b['rounds']} interleaved rounds ({b['scenario']}, {b['flows']} flows): the core "
            f"{core['cpu_s']:.3f} s of CPU, ns-2 {ns2['cpu_s']:.2f} s; {core['packet_hops'] / 1e6:.1f} M packet-hops, "
            f"{core['ns_per_packet_hop']:.0f} ns per packet-hop against ns-2's {ns2['ns_per_packet_hop']:.0f}; "
            f"peak memory {_mb(core['peak_rss_bytes'])} against ns-2's {_mb(ns2['peak_rss_bytes'])}. Each round's own "
            f"ratio of CPU times: {listed}. The results of the first 10 s ({b['results_to_pandas']['series_rows']:,} "
            f"time-series rows) reach pandas in {b['results_to_pandas']['wall_s']:.2f} s. Run on {_machine(m)} "
            f"from {_when(m)} at commit `{m['commit'][:10]}`, 1-minute load average {m['load_1min_at_start']:.2f} "
            f"at the start.")


def render_robustness(n: dict[str, Any]) -> str:
    r = n.get("robustness")
    if not r:
        return "No robustness studies published yet (`make robustness`, then `make publish-robustness`)."
    rows = ["| study | conclusion | verdict | points with the paper's set-up: hold / fail / undecided | "
            "of them resting on one run | at our default | departures that hold |",
            "|---|---|---|---|---|---|---|"]
    for s in r["studies"]:
        one = ", one run" if s["default_single_run"] else ""
        margin = f", margin {s['default_margin']:+.1%}" if s["default_margin"] is not None else ""
        conclusion = s["conclusion"].replace("|", "\\|")
        rows.append(f"| {s.get('id', s['entry'])} | {conclusion} | {s['verdict']} | {s['stated_holds']} / {s['stated_fails']} / "
                    f"{s['stated_mixed']} of {s['stated_points']} | {s['single_runs']} | {s['default_status']} "
                    f"({s['default_holds']} of {s['seeds']} seeds{one}{margin}) | "
                    f"{'; '.join(s['departures_holding']) or 'none'} |")
    # A reading several studies vary is run once per study but said once, with the studies.
    by_reading: dict[str, tuple[dict, list[str]]] = {}
    for s in r["studies"]:
        for c in s.get("readings", []):
            key = json.dumps(c, sort_keys=True)
            by_reading.setdefault(key, (c, []))[1].append(s.get("id", s["entry"]))
    costs = []
    for c, studies in by_reading.values():
        turns = "; ".join(f"`{x['claim']}` {x['at_default']} -> {x['at_level']}" for x in c["changed"]) or "none"
        costs.append(f"- the {c['cc']} reading {c['factor']} = {c['level']} (instead of {c['default']}), varied by "
                     f"{', '.join(studies)}: on every {c['cc']} flow of {len(c['entries'])} entries it changes "
                     f"{len(c['changed'])} of their {c['claims']} claims: {turns}.")
    if costs:
        rows += ["", "What each algorithm reading a study varies does to every entry that runs the algorithm:", ""]
        rows += costs
    return ("\n".join(rows) + f"\n\n{len(r['studies'])} studies, {r['runs']:,} runs, {r['compute_s']:,.0f} s of "
            f"compute (the runs' own wall times), from [docs/numbers.json](docs/numbers.json).")


#: Every block a page may hold: its name and how it is rendered from docs/numbers.json.
BLOCKS: dict[str, Callable[[dict[str, Any]], str]] = {
    "headline": render_headline,
    "reproduce-time": render_reproduce_time,
    "reproductions": render_reproductions,
    "bench": render_bench,
    "highlights": render_highlights,
    "worst": render_worst,
    "robustness": render_robustness,
}

BLOCK = re.compile(r"<!-- numbers:(?P<name>[a-z0-9-]+) -->\n(?P<body>.*?)\n?<!-- /numbers:(?P<end>[a-z0-9-]+) -->",
                   re.S)
OPEN = re.compile(r"<!-- (/?)numbers:([a-z0-9-]+) -->")


def pages(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _rendered(name: str, numbers: dict[str, Any], page: Path, root: Path) -> str:
    text = BLOCKS[name](numbers)
    # A page under docs/ links to docs/numbers.json as numbers.json.
    if page.parent != root:
        text = text.replace("](docs/", "](")
    return text


def render_text(text: str, numbers: dict[str, Any], page: Path, root: Path = ROOT) -> tuple[str, list[str]]:
    """``text`` with every numbers block rendered, and the problems found (an unknown block
    name, a block not closed or closed by another name)."""
    rel = page.relative_to(root) if page.is_relative_to(root) else page
    problems = []
    opened = [m for m in OPEN.finditer(text)]
    blocks = list(BLOCK.finditer(text))
    if len(opened) != 2 * len(blocks):
        problems.append(f"{rel}: a numbers block is not closed, or a marker stands alone "
                        "(each `<!-- numbers:NAME -->` needs its `<!-- /numbers:NAME -->`)")

    def sub(m: re.Match) -> str:
        name = m["name"]
        if m["end"] != name:
            problems.append(f"{rel}: block {name!r} is closed by /numbers:{m['end']}")
            return m[0]
        if name not in BLOCKS:
            problems.append(f"{rel}: unknown numbers block {name!r} (known: {', '.join(BLOCKS)})")
            return m[0]
        return f"<!-- numbers:{name} -->\n{_rendered(name, numbers, page, root)}\n<!-- /numbers:{name} -->"

    return BLOCK.sub(sub, text), problems


# ---------------------------------------------------------------------- numbers outside blocks

#: Run-derived numbers that may stand only inside a numbers block (or a dated history block):
#: (name, pattern, what it catches). A line matching one, outside both, is a number that will
#: go stale.
RULES = [
    ("claims count", re.compile(r"(?i)(?=.*\bclaims?\b).*\b\d+/\d+\b"),
     "a fraction N/M on a line about claims (claims held)"),
    ("numbers within", re.compile(r"(?i)\b\d+/\d+\b(?=.*\bwithin (?:10|25) ?%)|within (?:10|25) ?%.*\b\d+/\d+\b"),
     "a fraction N/M on a line about numbers within 10% or 25%"),
    ("ratio to ns-2", re.compile(r"(?i)(?=.*\bns-2).*(?<![\w.])\d+(?:\.\d+)?x\b"),
     "a speed ratio (N.Nx) on a line naming ns-2"),
    ("reproduce --all time", re.compile(r"(?i)(?=.*reproduce(?: --all|-all)).*\b\d+(?:\.\d+)?\s?(?:s|min|minutes)\b"),
     "a time in seconds or minutes on a line naming reproduce --all"),
]
HISTORY = re.compile(r"<!-- history -->.*?<!-- /history -->", re.S)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _blank(m: re.Match) -> str:
    """The match with everything but its newlines blanked, so line numbers stay."""
    return re.sub(r"[^\n]", " ", m[0])


def stray_numbers(text: str, rel: str) -> list[str]:
    """Lines outside numbers blocks, history blocks and code blocks that match a rule."""
    text = HISTORY.sub(_blank, BLOCK.sub(_blank, text))
    text = FENCE.sub(_blank, text)
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for name, pattern, what in RULES:
            if pattern.search(line):
                out.append(f"{rel}:{n}: {name} outside a numbers block ({what}): {line.strip()[:160]}")
                break
    return out


def check(root: Path = ROOT, numbers_path: Path | None = None) -> list[str]:
    """Every problem: a block that differs from its rendering of docs/numbers.json (named by
    file and block), a malformed block, a run-derived number outside a block."""
    numbers_path = numbers_path or root / "docs" / "numbers.json"
    numbers = json.loads(numbers_path.read_text(encoding="utf-8"))
    problems = []
    for page in pages(root):
        rel = str(page.relative_to(root))
        text = page.read_text(encoding="utf-8")
        want, bad = render_text(text, numbers, page, root)
        problems += bad
        if want != text:
            have = {m["name"]: m[0] for m in BLOCK.finditer(text)}
            for m in BLOCK.finditer(want):
                if have.get(m["name"]) != m[0]:
                    problems.append(f"{rel}: block {m['name']!r} differs from its rendering of docs/numbers.json "
                                    "(edited by hand, or not rendered: run `python scripts/publish_numbers.py render`)")
        problems += stray_numbers(text, rel)
    return problems


def render(root: Path = ROOT, numbers_path: Path | None = None) -> list[Path]:
    numbers_path = numbers_path or root / "docs" / "numbers.json"
    numbers = json.loads(numbers_path.read_text(encoding="utf-8"))
    changed, problems = [], []
    for page in pages(root):
        text = page.read_text(encoding="utf-8")
        new, bad = render_text(text, numbers, page, root)
        problems += bad
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page)
    if problems:
        raise PublishError("\n".join(problems))
    return changed


# ---------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["measure"]:
        if "--" not in argv or argv.index("--") != 2:
            print("usage: publish_numbers.py measure OUT.json -- COMMAND ...", file=sys.stderr)
            return 2
        try:
            return measure(Path(argv[1]), argv[3:])
        except PublishError as exc:
            print(f"publish_numbers: {exc}", file=sys.stderr)
            return 2
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("measure", help="measure OUT.json -- COMMAND ...: run COMMAND and record its time, memory, "
                                   "machine and load")
    pub = sub.add_parser("publish", help="write docs/numbers.json from a reproduce --all and a bench directory, then render")
    pub.add_argument("--report", type=Path, required=True, help="a `vegaslab reproduce --all --out` directory")
    pub.add_argument("--bench", type=Path, help="a `vegaslab bench --out` directory (default: keep the benchmark's "
                                                "facts docs/numbers.json has)")
    rob = sub.add_parser("publish-robustness", help="write the robustness studies' verdicts into docs/numbers.json, "
                                                    "then render")
    rob.add_argument("--report", type=Path, required=True, help="a `vegaslab robustness --out` directory")
    sub.add_parser("render", help="rewrite every numbers block of README.md and docs/*.md from docs/numbers.json")
    sub.add_parser("check", help="name every numbers block that differs, and run-derived numbers outside blocks")
    args = p.parse_args(argv)
    try:
        if args.cmd == "publish":
            facts = publish(args.report, args.bench)
            print(json.dumps({"reproduce": {k: v for k, v in facts["reproduce"].items() if k != "papers"},
                              "papers": facts["reproduce"]["papers"], "bench": facts["bench"]}, indent=2))
            print(f"wrote {NUMBERS.relative_to(ROOT)}")
        if args.cmd == "publish-robustness":
            facts = publish_robustness(args.report)
            print(json.dumps(facts["robustness"], indent=2))
            print(f"wrote {NUMBERS.relative_to(ROOT)}")
        if args.cmd in ("publish", "publish-robustness", "render"):
            for page in render():
                print(f"rendered {page.relative_to(ROOT)}")
        if args.cmd == "check":
            problems = check()
            for line in problems:
                print(line, file=sys.stderr)
            return 1 if problems else 0
    except PublishError as exc:
        print(f"publish_numbers: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
