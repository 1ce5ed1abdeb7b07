"""The simulator and the kernel side by side on one scenario (`vegaslab compare SCENARIO
--kernel`).

The simulator runs the scenario as written (its Vegas-family flows should use
``flavour = "linux"``, the kernel versions' twin); the namespace testbed runs it with the
kernel's TCP. A flow with ``cc = { bpf = "algo.bpf.o" }`` runs the same object on both sides:
in the simulator's eBPF machine and registered in the kernel (:mod:`.bpfobject`). The report (``index.html`` in the output directory) overlays cwnd, RTT and
throughput per flow and tabulates throughput, mean RTT and retransmissions with their ratios
(kernel / simulator). Both runs' full tables are kept (``sim/`` and ``kernel/``).
"""
from __future__ import annotations

import html
import io
import math
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..simulation import run as simulate
from ..results import Results
from ..safe_io import write_file
from .stack import Stack


@dataclass
class Comparison:
    sim: Results
    kernel: Results
    table: pd.DataFrame
    report: Path


def _mean_rtt(r: Results, flow: str) -> float:
    s = r.series_flows
    rtt = s[(s.flow == flow)].rtt_s.dropna()
    return float(rtt.mean()) if len(rtt) else math.nan


def _acks_per_segment(kern: Results, flow: str) -> float:
    value = kern.meta.get("testbed", {}).get("acks_per_data_segment", {}).get(flow)
    return math.nan if value is None else float(value)


def summary_table(sim: Results, kern: Results) -> pd.DataFrame:
    """One row per flow: goodput (application bytes, Mbit/s), mean RTT (ms) and retransmissions
    on each side, with kernel / simulator ratios, and the ACKs the kernel's receiver sent per
    data segment (the simulator's sink: 1). Goodput on both sides: the simulator's
    ``throughput_bps`` counts wire bytes (headers included), the kernel's sink sees payload."""
    rows = []
    for _, f in sim.flows.iterrows():
        k = kern.flows[kern.flows.flow == f.flow]
        kt = float(k.goodput_bps.iloc[0]) if len(k) else math.nan
        kr = float(k.retransmitted_pkts.iloc[0]) if len(k) else math.nan
        st, sr = float(f.goodput_bps), _mean_rtt(sim, f.flow)
        krtt = _mean_rtt(kern, f.flow)
        rows.append({
            "flow": f.flow, "cc": f.cc,
            "sim_mbps": st / 1e6, "kernel_mbps": kt / 1e6, "throughput_ratio": kt / st if st else math.nan,
            "sim_rtt_ms": sr * 1e3, "kernel_rtt_ms": krtt * 1e3, "rtt_ratio": krtt / sr if sr else math.nan,
            "sim_retx": float(f.retransmitted_pkts), "kernel_retx": kr,
            "kernel_acks_per_seg": _acks_per_segment(kern, f.flow),
        })
    return pd.DataFrame(rows)


def _overlay(sim: Results, kern: Results, column: str, ylabel: str, path: Path, scale: float = 1.0) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.2))
    for flow in sim.flows.flow:
        for r, style, side in ((sim, "-", "sim"), (kern, "--", "kernel")):
            s = r.series_flows[r.series_flows.flow == flow].dropna(subset=[column])
            if len(s):
                ax.plot(s.time_s, s[column] * scale, style, lw=1, label=f"{flow} {side}")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110)
    plt.close(fig)
    return write_file(path.parent, path.name, png.getvalue())


def write_report(out: Path, title: str, table: pd.DataFrame, sim: Results, kern: Results,
                 stack: Stack = Stack()) -> Path:
    figures = [
        _overlay(sim, kern, "cwnd_pkts", "cwnd (packets)", out / "cwnd.png"),
        _overlay(sim, kern, "rtt_s", "RTT (ms)", out / "rtt.png", 1e3),
        _overlay(sim, kern, "throughput_bps", "throughput (Mbit/s)", out / "throughput.png", 1e-6),
    ]
    fmt = {c: "{:.3f}" for c in ("throughput_ratio", "rtt_ratio")}
    fmt.update({c: "{:.2f}" for c in ("sim_mbps", "kernel_mbps", "sim_rtt_ms", "kernel_rtt_ms")})
    fmt.update({c: "{:.0f}" for c in ("sim_retx", "kernel_retx")})
    fmt["kernel_acks_per_seg"] = "{:.2f}"
    shown = table.copy()
    for c, f in fmt.items():
        shown[c] = shown[c].map(lambda x, f=f: "" if pd.isna(x) else f.format(x))
    page = (
        "<!doctype html><meta charset=utf-8><title>{t}</title>"
        "<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}"
        "table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2em .5em;text-align:right}}</style>"
        "<h1>{t}</h1><p>Simulator (Linux flavour) against the kernel on the namespace testbed. "
        "Ratios are kernel / simulator; the table compares goodput (application bytes). Solid lines: "
        "simulator; dashed: kernel. The throughput plot shows the simulator's delivered wire bytes "
        "(headers included) and the kernel's acknowledged payload. Kernel TCP: {stack}.</p>{table}{imgs}"
    ).format(t=html.escape(title), table=shown.to_html(index=False, escape=True),
             stack=html.escape(", ".join(stack.changes()) or "Linux's defaults (SACK, delayed ACKs)"),
             imgs="".join(f'<p><img src="{p.name}" alt="{p.stem}"></p>' for p in figures))
    return write_file(out, "index.html", page)


def compare(scenario: str | os.PathLike, *, overrides=(), out: str | os.PathLike, stack: Stack = Stack()) -> Comparison:
    """Run ``scenario`` in the simulator and on the testbed (with the kernel TCP behaviours
    ``stack`` switches); write the report into ``out``."""
    from .run import checked_plan, run as on_testbed

    # What the testbed would refuse (a BPF object it cannot register, ...) is refused before
    # the simulator spends its time.
    checked_plan(scenario, overrides=list(overrides))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    monitors = ["monitor.cwnd=true", "monitor.throughput=true", "run.sample_interval=10ms"]
    sim = simulate(scenario, overrides=[*monitors, *overrides])
    kern = on_testbed(scenario, overrides=list(overrides), stack=stack)
    table = summary_table(sim, kern)
    for name, r in (("sim", sim), ("kernel", kern)):
        r.to_dir(out / name)
    report = write_report(out, f"{Path(scenario).stem}: simulator and kernel", table, sim, kern, stack)
    return Comparison(sim, kern, table, report)
