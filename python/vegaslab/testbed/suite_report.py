"""The comparison suite's report: ``index.html`` (a summary across cases, then each case's
flows: the kernel's min-max and mean over its runs and each run's goodput beside the
simulator's value, and the verdicts), ``summary.json`` (everything, machine-readable) and ``summary.csv`` (one row per flow,
and one per case that did not run)."""
from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ..safe_io import write_file
from .suite_verdict import VERDICTS, criteria_text

if TYPE_CHECKING:
    from .suite import CaseOutcome, SuiteResult

#: The per-flow columns of summary.csv, after the case's name, status and verdict.
FLOW_COLUMNS = ["flow", "cc", "kernel_runs", "sim_mbps", "kernel_mbps_min", "kernel_mbps_max", "kernel_mbps_mean",
                "sim_rtt_ms", "kernel_rtt_ms_min", "kernel_rtt_ms_max", "kernel_rtt_ms_mean",
                "sim_retx", "kernel_retx_min", "kernel_retx_max", "kernel_retx_mean", "kernel_acks_per_seg_mean",
                "goodput_ok", "rtt_ok", "retx_ok", "verdict", "kernel_mbps_runs", "kernel_rtt_ms_runs"]
#: The per-run columns (lists): summary.csv writes each as its values separated by spaces.
RUN_LISTS = ("kernel_mbps_runs", "kernel_rtt_ms_runs")


def status_text(c: "CaseOutcome") -> str:
    """``ran``, or ``not run: <reason>`` / ``error: <reason>``."""
    return c.status if c.status == "ran" else f"{c.status}: {c.reason}"


def flows_frame(result: "SuiteResult") -> pd.DataFrame:
    """Every case's flows in one frame (summary.csv): a case that did not run is one row with
    its status, no flow and verdict ``error``."""
    parts = []
    for c in result.cases:
        head = {"case": c.case.name, "status": status_text(c)}
        if c.status == "ran":
            lists = {k: c.table[k].map(lambda vs: " ".join(f"{v:.4g}" for v in vs)) for k in RUN_LISTS}
            parts.append(c.table[FLOW_COLUMNS].assign(**head, **lists))
        else:
            parts.append(pd.DataFrame([{**head, "verdict": "error"}]))
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return frame.reindex(columns=["case", "status", *FLOW_COLUMNS])


def counts(result: "SuiteResult") -> dict[str, int]:
    """How many cases got each verdict."""
    found = [c.verdict for c in result.cases]
    return {v: found.count(v) for v in VERDICTS}


def _number(x):
    if isinstance(x, list):
        return [_number(v) for v in x]
    if isinstance(x, float) and math.isnan(x):
        return None
    return x.item() if hasattr(x, "item") else x


def summary_doc(result: "SuiteResult") -> dict:
    """summary.json's document."""
    cases = []
    for c in result.cases:
        flows = [{k: _number(v) for k, v in row.items()} for row in c.table[FLOW_COLUMNS].to_dict("records")] \
            if c.status == "ran" else []
        cases.append({"case": c.case.name, "title": c.case.title, "scenario": str(c.case.scenario),
                      "overrides": list(c.case.overrides), "status": c.status, "reason": c.reason,
                      "verdict": c.verdict, "kernel_runs": c.kernel_runs, "kernel_dir": c.kernel_dir,
                      "kernel_wall_s": round(c.kernel_wall_s, 1), "sim_wall_s": round(c.sim_wall_s, 2),
                      "flows": flows})
    return {"wall_time_s": round(result.wall_s, 1), "runs": result.runs, "overrides": result.overrides,
            "sim_overrides": result.sim_overrides, "stack": result.stack.changes(),
            "reuse_kernel": result.reuse_kernel, "criteria": criteria_text(), "counts": counts(result),
            "cases": cases}


def _range(row, column: str, fmt: str) -> str:
    lo, hi, mean = (row[f"{column}_{s}"] for s in ("min", "max", "mean"))
    if any(pd.isna(x) for x in (lo, hi, mean)):
        return "—"
    return f"{fmt.format(lo)}–{fmt.format(hi)} (mean {fmt.format(mean)})"


def _runs(row, column: str, fmt: str) -> str:
    """Each kernel run's value, smallest first: where in the range the runs fall."""
    values = row.get(f"{column}_runs")
    return " ".join(fmt.format(v) for v in sorted(values)) if isinstance(values, list) else "—"


def _cell(ok: bool, text: str) -> str:
    return f'<td class="{"ok" if ok else "no"}">{html.escape(text)}</td>'


def _case_table(c: "CaseOutcome") -> str:
    if c.status != "ran":
        return f'<p class="error">{html.escape(status_text(c))}</p>'
    rows = []
    for _, r in c.table.iterrows():
        rows.append(
            f"<tr><td>{html.escape(str(r.flow))}</td><td>{html.escape(str(r.cc))}</td>"
            + _cell(r.goodput_ok, f"{r.sim_mbps:.2f}") + f"<td>{_range(r, 'kernel_mbps', '{:.2f}')}</td>"
            + f"<td>{html.escape(_runs(r, 'kernel_mbps', '{:.2f}'))}</td>"
            + _cell(r.rtt_ok, f"{r.sim_rtt_ms:.1f}") + f"<td>{_range(r, 'kernel_rtt_ms', '{:.1f}')}</td>"
            + _cell(r.retx_ok, f"{r.sim_retx:.0f}") + f"<td>{_range(r, 'kernel_retx', '{:.0f}')}</td>"
            + f'<td class="{r.verdict}">{r.verdict}</td></tr>')
    return ("<table><tr><th>flow</th><th>cc</th><th>sim Mbit/s</th><th>kernel Mbit/s</th>"
            "<th>kernel runs Mbit/s</th><th>sim RTT ms</th>"
            "<th>kernel RTT ms</th><th>sim retx</th><th>kernel retx</th><th>verdict</th></tr>"
            + "".join(rows) + "</table>")


def _overlays(out: Path, c: "CaseOutcome") -> str:
    """A link to the case's own report (cwnd, RTT and throughput of kernel run 1), if written."""
    page = out / c.case.name / "index.html"
    return f'; <a href="{html.escape(c.case.name)}/index.html">time series</a>' if page.exists() else ""


def write(result: "SuiteResult") -> Path:
    """Write summary.json, summary.csv and index.html into the suite's output directory."""
    out = result.out
    out.mkdir(parents=True, exist_ok=True)
    write_file(out, "summary.json", json.dumps(summary_doc(result), indent=2) + "\n")
    write_file(out, "summary.csv", flows_frame(result).to_csv(index=False))
    summary = "".join(
        f'<tr><td><a href="#{html.escape(c.case.name)}">{html.escape(c.case.name)}</a></td>'
        f"<td>{html.escape(c.case.title)}</td><td>{c.kernel_runs}</td>"
        f"<td>{' '.join(f'{v}: {n}' for v, n in c.table.verdict.value_counts().items()) if c.status == 'ran' else ''}</td>"
        f'<td class="{c.verdict}">{html.escape(c.verdict if c.status == "ran" else status_text(c))}</td></tr>'
        for c in result.cases)
    sections = "".join(f'<h2 id="{html.escape(c.case.name)}">{html.escape(c.case.name)}: {html.escape(c.case.title)}</h2>'
                       f"<p>{html.escape(str(c.case.scenario))} {html.escape(' '.join(c.case.overrides))}; "
                       f"kernel runs from {html.escape(c.kernel_dir)}{_overlays(out, c)}</p>{_case_table(c)}"
                       for c in result.cases)
    n = counts(result)
    setup = [f"{result.runs} kernel runs per case" if result.reuse_kernel is None
             else f"kernel runs reused from {result.reuse_kernel}"]
    if result.overrides:
        setup.append("both sides: " + " ".join(result.overrides))
    if result.sim_overrides:
        setup.append("simulator only: " + " ".join(result.sim_overrides))
    setup.append("kernel TCP: " + (", ".join(result.stack.changes()) or "Linux's defaults (SACK, delayed ACKs)"))
    page = (
        "<!doctype html><meta charset=utf-8><title>Simulator against kernel: comparison suite</title>"
        "<style>body{font-family:sans-serif;max-width:72em;margin:2em auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}.pass,.ok{background:#dfd}"
        ".flag{background:#ffd}.fail,.no,.error{background:#fdd}</style>"
        "<h1>Simulator (Linux flavour) against the kernel: comparison suite</h1>"
        f"<p>{html.escape('; '.join(setup))}. Wall time {result.wall_s:.0f} s. "
        f"Cases: {', '.join(f'{v} {k}' for k, v in n.items())}.</p>"
        f"<p>Criteria per flow: {html.escape(criteria_text())}. Goodput is application bytes; the kernel "
        "columns give min–max (mean) over its runs, then each run's goodput, smallest first. A case takes its worst flow's verdict; a case the "
        "kernel did not run is an error.</p>"
        "<table><tr><th>case</th><th>what</th><th>kernel runs</th><th>flows</th><th>verdict</th></tr>"
        f"{summary}</table>{sections}")
    return write_file(out, "index.html", page)
