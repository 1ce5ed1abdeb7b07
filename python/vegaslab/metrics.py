"""Metrics the papers report, computed from a run's :class:`~vegaslab.results.Results`.

Each function states the paper's definition it implements:

- :func:`jain_index`, :func:`jain_series`, :func:`jain_over_active_windows`: Jain's fairness
  index over the congestion windows of the *active* users (adavegas.txt section IV, "Fairness").
- :func:`interprotocol_fairness_ratio`: mean bandwidth of one protocol's flows over the mean of
  another's (vegas-a.txt section 4.2, Table 3).
- :func:`line_utilisation`: acknowledged data over link capacity (adavegas.txt section IV,
  "Line Utilization").
- :func:`loss_rate`: drops over arrivals at a queue (adavegas.txt section IV, "Loss rate";
  Table IV).
- :func:`goodput_share`: each flow's part of the goodput (vegas-a.txt Table 13's "share").
- :func:`slow_starts`: slow-start entries per flow (vegas-a.txt Table 11).

The per-sample metrics need the flow time series: run with ``monitor.cwnd = true`` (the
``active`` column is recorded with every flow sample; see docs/results-format.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Union

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from .results import Results

__all__ = [
    "jain_index",
    "jain_series",
    "jain_over_active_windows",
    "interprotocol_fairness_ratio",
    "line_utilisation",
    "loss_rate",
    "goodput_share",
    "slow_starts",
]

#: A group of flows: a congestion-control name (matched against the ``cc`` column, e.g.
#: ``"newreno"``), a flow name, or an iterable of flow names.
FlowGroup = Union[str, Iterable[str]]


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index ``(sum x)^2 / (n * sum x^2)`` of ``values``.

    adavegas.txt section IV ("Fairness", after Chiu and Jain [2]): the index lies between 1/n
    (one user has everything) and 1 (all equal). NaN values are ignored; an empty input, or one
    whose values are all zero, gives NaN (the index is undefined there).

    >>> jain_index([1, 1, 1, 1])
    1.0
    >>> jain_index([1, 0, 0, 0])
    0.25
    """
    x = np.asarray([v for v in values], dtype="float64")
    x = x[~np.isnan(x)]
    if x.size == 0:
        return math.nan
    sq = float(np.sum(x * x))
    if sq == 0.0:
        return math.nan
    s = float(np.sum(x))
    return s * s / (x.size * sq)


def _flow_series(results: "Results", column: str) -> pd.DataFrame:
    sf = results.series_flows
    if sf.empty or column not in sf.columns or sf[column].isna().all():
        raise ValueError(
            f"the run has no sampled {column!r} per flow: run it with monitor.cwnd = true "
            "(and a sample_interval of at most 1 s for adavegas.txt's fairness)"
        )
    return sf


def jain_series(results: "Results", *, window: str = "cwnd") -> pd.Series:
    """Jain's index of the active users' windows at each sample time (a Series indexed by
    time; times with no active user are left out).

    adavegas.txt section IV: "W_i is the window size of the i-th active user out of n active
    users" and the index is "sampled at least once a second throughout the simulations". A user
    is active where the sampled ``active`` flag is 1 (an ON/OFF user in an ON period, a flow with
    unacknowledged application data, an FTP flow between its start and stop). Results without an
    ``active`` column (older runs) count every sampled flow as active.
    """
    sf = _flow_series(results, window)
    rows = sf[sf[window].notna()]
    if "active" in rows.columns and rows["active"].notna().any():
        rows = rows[rows["active"].fillna(0) > 0]
    return rows.groupby("time", sort=True)[window].apply(jain_index).dropna()


def jain_over_active_windows(results: "Results", *, window: str = "cwnd", with_std: bool = False):
    """Jain's fairness index over the windows of the active users, averaged over the sample
    times (adavegas.txt section IV, Tables V and VIII, which print the mean and the standard
    deviation).

    Returns the mean, or ``(mean, std)`` with ``with_std=True`` (population standard deviation
    over the sample times). NaN when no sample has an active user.
    """
    s = jain_series(results, window=window)
    mean = float(s.mean()) if len(s) else math.nan
    if not with_std:
        return mean
    std = float(s.std(ddof=0)) if len(s) else math.nan
    return mean, std


def _select(results: "Results", group: FlowGroup) -> pd.DataFrame:
    flows = results.flows
    if isinstance(group, str):
        by_cc = flows[flows["cc"] == group]
        if len(by_cc):
            return by_cc
        by_name = flows[flows["flow"] == group]
        if len(by_name):
            return by_name
        raise KeyError(f"no flow has cc or name {group!r} (cc: {sorted(set(flows['cc']))}, flows: {list(flows['flow'])})")
    names = list(group)
    missing = [n for n in names if n not in set(flows["flow"])]
    if missing:
        raise KeyError(f"no flow named {', '.join(map(repr, missing))} (flows: {list(flows['flow'])})")
    return flows[flows["flow"].isin(names)]


def interprotocol_fairness_ratio(
    results: "Results", group_a: FlowGroup, group_b: FlowGroup, *, column: str = "throughput_bps"
) -> float:
    """Mean ``column`` of the flows in ``group_a`` over the mean of those in ``group_b``.

    vegas-a.txt section 4.2: "the ratio of the average TCP Vegas/Vegas-A bandwidth calculated
    across all the Vegas/Vegas-A flows to the average TCP NewReno bandwidth calculated across
    all the NewReno flows" (Table 3 gives 0.497 for Vegas and 2.028 for Vegas-A). A group is a
    ``cc`` name (``"vegas"``), a flow name, or a list of flow names.
    """
    a = float(_select(results, group_a)[column].mean())
    b = float(_select(results, group_b)[column].mean())
    return a / b if b else math.nan


def line_utilisation(
    results: "Results", link: str, *, flows: FlowGroup | None = None, duration_s: float | None = None
) -> float:
    """Acknowledged data over what ``link`` could carry in the run.

    adavegas.txt section IV: Utilization = (number of acked packets) x (packet size) /
    ((link bandwidth) x (time)), the "successfully transmitted data (goodput)". Acked packets x
    packet size is the flows' ``delivered_bytes`` (unique payload acknowledged in order); the
    bandwidth is the link direction's (``"R1->R2"``); the time is the run's duration unless
    ``duration_s`` is given. The flows are all TCP flows (the paper's users all cross the
    bottleneck) unless ``flows`` selects some (a ``cc`` name, a flow name or a list of names).
    UDP traffic is not counted.
    """
    links = results.links
    row = links[links["link"] == link]
    if not len(row):
        raise KeyError(f"no link direction {link!r} (links: {list(links['link'])})")
    bandwidth = float(row.iloc[0]["bandwidth_bps"])
    chosen = results.flows if flows is None else _select(results, flows)
    time = float(duration_s if duration_s is not None else results.meta["duration_s"])
    acked_bits = float(chosen["delivered_bytes"].sum()) * 8.0
    return acked_bits / (bandwidth * time)


def loss_rate(results: "Results", queue: str) -> float:
    """Packets dropped over packets that arrived at ``queue`` (``"R1->R2"``).

    adavegas.txt section IV: "the ratio between the number of segments dropped and the number
    of segments that arrived at the queue (namely segments either transmitted or dropped)";
    Table IV. Drops include RED's early drops; packets lost to a link error model after
    transmission are not drops. 0 for a queue nothing reached.
    """
    q = results.queues
    row = q[q["queue"] == queue]
    if not len(row):
        raise KeyError(f"no queue {queue!r} (queues: {list(q['queue'])})")
    arrivals = int(row.iloc[0]["arrivals"])
    return int(row.iloc[0]["drops"]) / arrivals if arrivals else 0.0


def goodput_share(results: "Results", *, flows: FlowGroup | None = None, column: str = "goodput_bps") -> pd.Series:
    """Each flow's fraction of the total ``column`` (goodput by default), indexed by flow name;
    the fractions sum to 1.

    vegas-a.txt Table 13 reports each competing flow's "share" of the bandwidth; this is the
    share of the flows' combined goodput (``flows`` selects which flows compete).
    """
    chosen = results.flows if flows is None else _select(results, flows)
    values = chosen.set_index("flow")[column].astype("float64")
    total = float(values.sum())
    return values / total if total else values * math.nan


def slow_starts(results: "Results") -> pd.Series:
    """Times each flow entered slow start (cwnd < ssthresh), the initial one included, indexed
    by flow name (vegas-a.txt Table 11 counts them: Vegas 4 vs NewReno 31 at PER 0.05)."""
    return results.flows.set_index("flow")["slow_start_entries"].astype("int64")
