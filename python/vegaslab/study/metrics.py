"""Metrics the papers report, computed from a run's :class:`~vegaslab.results.Results`.

Each function states the paper's definition it implements:

- :func:`jain_index`, :func:`jain_series`, :func:`jain_over_active_windows`: Jain's fairness
  index over the congestion windows of the *active* users (the AdaVegas paper: Maor and Mansour,
  "AdaVegas: Adaptive Control for TCP Vegas", section IV, "Fairness").
  This is the paper's definition and the one the AdaVegas entries' primary claims use.
  :func:`jain_over_all_windows` is the same index over *all* users (OFF users included); it is
  not the paper's definition, but it is the reading that fits the paper's Tables V and VIII, so
  the catalog shows it beside the primary claims, labelled as such. :func:`jain_index` itself
  is :func:`vegaslab.fairness.jain_index` (the results store computes it for every run too).
- :func:`interprotocol_fairness_ratio`: mean bandwidth of one protocol's flows over the mean of
  another's (the Vegas-A paper: Srijith et al., "TCP Vegas-A: Improving the Performance of TCP
  Vegas", section 4.2, Table 3).
- :func:`line_utilisation`: acknowledged data over link capacity (the AdaVegas paper, section IV,
  "Line Utilization").
- :func:`loss_rate`: drops over arrivals at a queue (the AdaVegas paper, section IV, "Loss rate";
  Table IV).
- :func:`goodput_share`: each flow's part of the goodput (the Vegas-A paper, Table 13's "share").
- :func:`slow_starts`: slow-start entries per flow (the Vegas-A paper, Table 11).

The per-sample metrics need the flow time series: run with ``monitor.cwnd = true`` (the
``active`` column is recorded with every flow sample; see docs/results-format.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Union

import pandas as pd

from ..fairness import jain_index

if TYPE_CHECKING:  # pragma: no cover
    from ..results import Results

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


def _not_renamed(column: str) -> None:
    """KeyError naming the new name when ``column`` is a column name of 0.2."""
    from ..results import renamed_column_message

    if renamed := renamed_column_message(column):
        raise KeyError(renamed)


def _flow_series(results: "Results", column: str) -> pd.DataFrame:
    _not_renamed(column)
    sf = results.series_flows
    if sf.empty or column not in sf.columns or sf[column].isna().all():
        raise ValueError(
            f"the run has no sampled {column!r} per flow: run it with monitor.cwnd = true "
            "(and a sample_interval of at most 1 s for the AdaVegas paper's fairness)"
        )
    return sf


def jain_series(results: "Results", *, window: str = "cwnd_pkts") -> pd.Series:
    """Jain's index of the active users' windows at each sample time (a Series indexed by
    time; times with no active user are left out).

    The AdaVegas paper, section IV: "W_i is the window size of the i-th active user out of n active
    users" and the index is "sampled at least once a second throughout the simulations". A user
    is active where the sampled ``active`` flag is 1 (an ON/OFF user in an ON period, a flow with
    unacknowledged application data, an FTP flow between its start and stop).

    Results without the ``active`` flag (runs saved before it was recorded) raise ValueError
    rather than counting every user as active: that would silently turn the paper's index into
    :func:`jain_over_all_windows`, a different number.
    """
    sf = _flow_series(results, window)
    if "active" not in sf.columns or sf["active"].isna().all():
        raise ValueError(
            "the run has no sampled 'active' flag per flow, so the active users are unknown: "
            "rerun it with this version of vegaslab (jain_over_all_windows counts every user)"
        )
    rows = sf[sf[window].notna() & (sf["active"].fillna(0) > 0)]
    return rows.groupby("time_s", sort=True)[window].apply(jain_index).dropna()


def jain_over_active_windows(results: "Results", *, window: str = "cwnd_pkts", with_std: bool = False):
    """Jain's fairness index over the windows of the active users, averaged over the sample
    times (the AdaVegas paper, section IV, Tables V and VIII, which print the mean and the standard
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

    The Vegas-A paper, section 4.2: "the ratio of the average TCP Vegas/Vegas-A bandwidth calculated
    across all the Vegas/Vegas-A flows to the average TCP NewReno bandwidth calculated across
    all the NewReno flows" (Table 3 gives 0.497 for Vegas and 2.028 for Vegas-A). A group is a
    ``cc`` name (``"vegas"``), a flow name, or a list of flow names.
    """
    # skipna=False: a missing value makes the ratio NaN (missing data), never a mean of the rest.
    _not_renamed(column)
    a = float(_select(results, group_a)[column].astype("float64").mean(skipna=False))
    b = float(_select(results, group_b)[column].astype("float64").mean(skipna=False))
    return a / b if b else math.nan


def line_utilisation(
    results: "Results", link: str, *, flows: FlowGroup | None = None, duration_s: float | None = None
) -> float:
    """Acknowledged data over what ``link`` could carry in the run.

    The AdaVegas paper, section IV: Utilization = (number of acked packets) x (packet size) /
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
    acked_bits = float(chosen["delivered_bytes"].astype("float64").sum(skipna=False)) * 8.0
    return acked_bits / (bandwidth * time)


def loss_rate(results: "Results", queue: str) -> float:
    """Packets dropped over packets that arrived at ``queue`` (``"R1->R2"``).

    The AdaVegas paper, section IV: "the ratio between the number of segments dropped and the number
    of segments that arrived at the queue (namely segments either transmitted or dropped)";
    Table IV. Drops include RED's early drops; packets lost to a link error model after
    transmission are not drops. 0 for a queue nothing reached.
    """
    q = results.queues
    row = q[q["queue"] == queue]
    if not len(row):
        raise KeyError(f"no queue {queue!r} (queues: {list(q['queue'])})")
    arrived = int(row.iloc[0]["arrived_pkts"])
    return int(row.iloc[0]["dropped_pkts"]) / arrived if arrived else 0.0


def goodput_share(results: "Results", *, flows: FlowGroup | None = None, column: str = "goodput_bps") -> pd.Series:
    """Each flow's fraction of the total ``column`` (goodput by default), indexed by flow name;
    the fractions sum to 1.

    The Vegas-A paper's Table 13 reports each competing flow's "share" of the bandwidth; this is the
    share of the flows' combined goodput (``flows`` selects which flows compete).
    """
    _not_renamed(column)
    chosen = results.flows if flows is None else _select(results, flows)
    values = chosen.set_index("flow")[column].astype("float64")
    total = float(values.sum(skipna=False))
    return values / total if total else values * math.nan


def slow_starts(results: "Results") -> pd.Series:
    """Times each flow entered slow start (cwnd < ssthresh), the initial one included, indexed
    by flow name (the Vegas-A paper's Table 11 counts them: Vegas 4 vs NewReno 31 at PER 0.05)."""
    return results.flows.set_index("flow")["slow_start_entries"].astype("int64")


# ---------------------------------------------------------------------------------------------
# The AdaVegas paper's convergence and traffic-share metrics, used by catalog_data/av-*.toml.
# Appended as a block; each function states the quantity it measures, since the paper shows
# Fig. 1 as a plot only and these are this project's checkable readings of it.

__all__ += [
    "time_to_reach",
    "settling_time",
    "pipe_packets",
    "time_to_fair_share",
    "window_overshoot",
    "line_utilisation_of",
    "mean_goodput_per_user",
    "jain_over_all_windows",
]


def _one_flow_series(results: "Results", flow: str, column: str) -> pd.DataFrame:
    sf = _flow_series(results, column)
    s = sf[(sf["flow"] == flow) & sf[column].notna()]
    if s.empty:
        raise KeyError(f"no sampled {column!r} for flow {flow!r} (flows: {sorted(set(sf['flow']))})")
    return s.sort_values("time_s")


def time_to_reach(results: "Results", flow: str, level: float, after_s: float = 0.0, *,
                  column: str = "cwnd_pkts") -> float:
    """Seconds from ``after_s`` until ``flow``'s sampled ``column`` (cwnd by default) first is
    at least ``level``, at the resolution of ``run.sample_interval``; 0 if it already is at the
    first sample after ``after_s``; ``inf`` if it never gets there before the run ends.

    The AdaVegas paper, Fig. 1: how fast the remaining user's window grows to the doubled fair share
    once the other user leaves ("Vegas_1 converges very slowly ... Vegas_8 converges much
    faster").
    """
    s = _one_flow_series(results, flow, column)
    s = s[s["time_s"] > after_s]
    hit = s[s[column] >= level]
    if hit.empty:
        return math.inf
    return max(float(hit["time_s"].iloc[0]) - float(after_s), 0.0)


def settling_time(results: "Results", flow: str, after_s: float = 0.0, *, tol: float = 0.1,
                  column: str = "cwnd_pkts") -> float:
    """Seconds from ``after_s`` until ``flow``'s ``column`` enters, and stays until the run
    ends, the band ``final x (1 +- tol)``, where ``final`` is the last sampled value (the
    window the flow converged to). 0 if it never leaves the band after ``after_s``.

    The AdaVegas paper, Fig. 1: Vegas_8 at 0.1 / 0.25 Mbit/s "significantly overshoots the window
    size, and take[s] longer to converge".
    """
    s = _one_flow_series(results, flow, column)
    s = s[s["time_s"] > after_s]
    if s.empty:
        return math.nan
    final = float(s[column].iloc[-1])
    outside = s[(s[column] - final).abs() > tol * abs(final)]
    if outside.empty:
        return 0.0
    last_out = float(outside["time_s"].iloc[-1])
    later = s[s["time_s"] > last_out]
    return (float(later["time_s"].iloc[0]) if len(later) else last_out) - float(after_s)


def pipe_packets(results: "Results", flow: str, link: str) -> float:
    """The window, in packets, that fills ``link`` with an empty queue along ``flow``'s path:
    link bandwidth x the flow's baseRTT (the smallest sampled ``base_rtt_s``) / (8 x the flow's
    data packet size). With the other user gone, this is the remaining user's "doubled fair
    share" (the AdaVegas paper, section II); a Vegas sender settles alpha..beta packets above it.

    The packet size is the flow's data bytes over data packets sent (its wire size).
    """
    links = results.links
    row = links[links["link"] == link]
    if not len(row):
        raise KeyError(f"no link direction {link!r} (links: {list(links['link'])})")
    bandwidth = float(row.iloc[0]["bandwidth_bps"])
    base = float(_one_flow_series(results, flow, "base_rtt_s")["base_rtt_s"].min())
    f = results.flows[results.flows["flow"] == flow].iloc[0]
    size = float(f["sent_bytes"]) / float(f["sent_pkts"])
    return bandwidth * base / (8.0 * size)


def time_to_fair_share(results: "Results", flow: str, link: str, after_s: float, *,
                       fraction: float = 0.9) -> float:
    """:func:`time_to_reach` of ``fraction`` x :func:`pipe_packets`: seconds after ``after_s``
    (when the other user left) until ``flow``'s cwnd first reaches 90% (by default) of the
    window that fills ``link`` alone; ``inf`` if never."""
    return time_to_reach(results, flow, fraction * pipe_packets(results, flow, link), after_s)


def window_overshoot(results: "Results", flow: str, link: str, after_s: float = 0.0) -> float:
    """The largest sampled cwnd of ``flow`` after ``after_s``, minus :func:`pipe_packets`: the
    packets the flow keeps queued at its peak (Vegas aims for alpha..beta of them: 1-3 for
    Vegas_1, 4-8 for Vegas_8): the "overshoot" of the window at low bandwidth in the AdaVegas
    paper's Fig. 1."""
    s = _one_flow_series(results, flow, "cwnd_pkts")
    s = s[s["time_s"] > after_s]
    return float(s["cwnd_pkts"].max()) - pipe_packets(results, flow, link)


def line_utilisation_of(results: "Results", link: str, prefix: str, *,
                        duration_s: float | None = None) -> float:
    """:func:`line_utilisation` of the flows whose name starts with ``prefix``: their share of
    ``link``'s capacity (the AdaVegas paper, Fig. 7: "the relative share of the low RTT sessions,
    high RTT sessions and the unused bandwidth")."""
    names = [n for n in results.flows["flow"] if str(n).startswith(prefix)]
    if not names:
        raise KeyError(f"no flow name starts with {prefix!r}")
    return line_utilisation(results, link, flows=names, duration_s=duration_s)


def mean_goodput_per_user(results: "Results", group: FlowGroup, *, column: str = "delivered_bytes") -> float:
    """Mean ``column`` (acknowledged payload bytes by default) over the flows of ``group`` (a
    ``cc`` name such as ``"adavegas"``, a flow name or a list of names): the AdaVegas paper, Fig. 8:
    "throughput of the average AdaVegas user ... average TCP Vegas user", "measured in bytes"."""
    _not_renamed(column)
    return float(_select(results, group)[column].astype("float64").mean(skipna=False))


def jain_over_all_windows(results: "Results", *, window: str = "cwnd_pkts") -> float:
    """Jain's index over the windows of *all* sampled users at each sample time, OFF users
    included (with the window their sender holds while idle: 2 packets once ns-2's idle
    timeout has fired), averaged over the sample times.

    Not the paper's definition: the AdaVegas paper, section IV, defines the index over the *active*
    users (:func:`jain_over_active_windows`), and the AdaVegas entries' primary fairness claims
    use that. The paper's Tables V and VIII are, however, reproduced by this reading and not by
    that one (catalog_data/av-onoff-150.toml, notes): an ns-2 script that sampled every agent's
    ``cwnd_`` would give it. The catalog therefore shows it only beside the primary claims,
    labelled "all-users index (fits the published table)". NaN when no sample has a window.
    """
    sf = _flow_series(results, window)
    rows = sf[sf[window].notna()]
    s = rows.groupby("time_s", sort=True)[window].apply(jain_index).dropna()
    return float(s.mean()) if len(s) else math.nan
