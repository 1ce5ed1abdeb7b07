"""The comparison suite's numbers: per flow, the kernel's run-to-run range beside the
simulator's value, and a verdict against the suite's criteria.

The per-run numbers are :func:`vegaslab.testbed.compare.summary_table`'s (goodput in Mbit/s of
application bytes, mean RTT in ms, retransmissions), one table per kernel run against the one
simulator run; this module only gathers them over the runs. The criteria, per flow:

- goodput within the kernel's range (min-max over the runs) or within
  :data:`GOODPUT_TOLERANCE` of the kernel's mean;
- mean RTT within :data:`RTT_TOLERANCE` of the kernel's mean;
- retransmissions within :data:`RETX_TOLERANCE` of the kernel's mean.

A flow that meets the first two passes; missing only the third it is ``flag`` (retransmissions
vary by an order of magnitude between identical kernel runs: 3 vs 60 in slow start, so they are
shown, not failed on); missing either of the first two it is ``fail``. A flow the kernel's runs
do not report fails (its numbers are NaN).
"""
from __future__ import annotations

import math

import pandas as pd

from ..results import Results
from .compare import summary_table

GOODPUT_TOLERANCE = 0.05
RTT_TOLERANCE = 0.10
RETX_TOLERANCE = 0.25

#: The verdicts from best to worst; a case takes its worst flow's, and a case the kernel did
#: not run is ``error``.
VERDICTS = ("pass", "flag", "fail", "error")

#: summary_table's kernel columns, gathered over the runs as _min, _max and _mean.
RANGED = ("kernel_mbps", "kernel_rtt_ms", "kernel_retx")
#: summary_table's kernel columns also listed run by run (as _runs).
PER_RUN = ("kernel_mbps", "kernel_rtt_ms")


def _within(value: float, reference: float, tolerance: float) -> bool:
    """|value - reference| <= tolerance x |reference| (so a zero reference needs a zero value);
    False when either is NaN."""
    if math.isnan(value) or math.isnan(reference):
        return False
    return abs(value - reference) <= tolerance * abs(reference)


def flow_ranges(sim: Results, kernel_runs: list[Results]) -> pd.DataFrame:
    """One row per simulated flow: the simulator's goodput, mean RTT and retransmissions, and the
    kernel's min, max and mean of each over ``kernel_runs`` (and its mean ACKs per data
    segment), from :func:`summary_table` of each run; ``kernel_mbps_runs`` and
    ``kernel_rtt_ms_runs`` list each run's value in run order, since a range hides how the runs
    fall in it (two flows sharing a bottleneck often split into two groups of runs by which one
    leaves slow start first; docs/testbed.md, "Simulator and kernel side by side: what was
    measured")."""
    if not kernel_runs:
        raise ValueError("flow_ranges needs at least one kernel run")
    runs = pd.concat([summary_table(sim, k) for k in kernel_runs], ignore_index=True)
    rows = []
    for flow in dict.fromkeys(runs.flow):
        per = runs[runs.flow == flow]
        first = per.iloc[0]
        row = {"flow": flow, "cc": first.cc, "kernel_runs": len(per),
               "sim_mbps": first.sim_mbps, "sim_rtt_ms": first.sim_rtt_ms, "sim_retx": first.sim_retx}
        for column in RANGED:
            values = per[column]
            row[f"{column}_min"], row[f"{column}_max"] = values.min(), values.max()
            row[f"{column}_mean"] = values.mean()
        for column in PER_RUN:
            row[f"{column}_runs"] = [float(v) for v in per[column]]
        row["kernel_acks_per_seg_mean"] = per.kernel_acks_per_seg.mean()
        rows.append(row)
    return pd.DataFrame(rows)


def flow_verdict(row) -> dict:
    """The three criteria and the verdict of one row of :func:`flow_ranges`."""
    g, lo, hi = row["sim_mbps"], row["kernel_mbps_min"], row["kernel_mbps_max"]
    goodput_ok = bool(lo <= g <= hi) or _within(g, row["kernel_mbps_mean"], GOODPUT_TOLERANCE)
    rtt_ok = _within(row["sim_rtt_ms"], row["kernel_rtt_ms_mean"], RTT_TOLERANCE)
    retx_ok = _within(row["sim_retx"], row["kernel_retx_mean"], RETX_TOLERANCE)
    verdict = "fail" if not (goodput_ok and rtt_ok) else ("pass" if retx_ok else "flag")
    return {"goodput_ok": goodput_ok, "rtt_ok": rtt_ok, "retx_ok": retx_ok, "verdict": verdict}


def judge(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (:func:`flow_ranges`) with the criteria and each flow's verdict added."""
    if table.empty:
        return table.assign(goodput_ok=[], rtt_ok=[], retx_ok=[], verdict=[])
    return pd.concat([table, pd.DataFrame([flow_verdict(r) for _, r in table.iterrows()],
                                          index=table.index)], axis=1)


def worst(verdicts) -> str:
    """The worst of ``verdicts`` (:data:`VERDICTS` order); ``error`` when there are none."""
    found = [VERDICTS.index(v) for v in verdicts]
    return VERDICTS[max(found)] if found else "error"


def criteria_text() -> str:
    return (f"goodput within the kernel's min-max or within {GOODPUT_TOLERANCE:.0%} of its mean; "
            f"mean RTT within {RTT_TOLERANCE:.0%} of the kernel's mean; retransmissions within "
            f"{RETX_TOLERANCE:.0%} of the kernel's mean (else flagged, not failed)")
