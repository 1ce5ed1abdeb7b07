"""The column renames of 0.3: the one list of old column names and their new ones, how an old
name asked for is refused (:func:`renamed_column_message`) and how a table written with old
names is read (:func:`upgrade_columns`).

One list, read wherever a column name is met: the tables here, the results store, a claim's
metric, a figure's column (docs/results-format.md, "Column names").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

#: The release that renamed the columns of :data:`RENAMED_COLUMNS`.
RENAMED_IN = "0.3"
#: Old column name -> new, for every table, the series and :attr:`Results.summary`: the one list
#: of the renames of 0.3, read by everything that meets an old name. No old name maps to two new
#: ones, so one flat map serves every table. For one version, results written before
#: (``Results.from_dir``, ``Results.from_dict``, the results store's tables) are read with their
#: columns renamed, while an old name *asked for* (a ``Results.value`` key, a claim's metric, a
#: figure's column) is an error naming the new one (:func:`renamed_column_message`), so a stale
#: notebook or catalog fails loudly instead of reading NaN. The series' algorithm variables alpha,
#: beta, inc and trend keep their names: they are the papers' parameters (in packets) under the
#: papers' names; ``base_rtt`` is a time and becomes ``base_rtt_s``.
RENAMED_COLUMNS: dict[str, str] = {
    # flows
    "data_pkts_sent": "sent_pkts", "data_bytes_sent": "sent_bytes", "final_cwnd": "final_cwnd_pkts",
    "mean_cwnd": "mean_cwnd_pkts", "final_ssthresh": "final_ssthresh_pkts",
    # queues
    "limit": "limit_pkts", "arrivals": "arrived_pkts", "drops": "dropped_pkts",
    "departures": "departed_pkts", "backlog": "backlog_pkts", "loss_rate": "loss_ratio",
    "mean_len": "mean_len_pkts", "std_len": "std_len_pkts", "max_len": "max_len_pkts",
    "errors": "error_pkts", "early_drops": "early_dropped_pkts", "forced_drops": "forced_dropped_pkts",
    # links
    "bytes_sent": "sent_bytes", "utilisation": "utilisation_ratio",
    # series_flows (and algorithm variables), series_queues
    "time": "time_s", "cwnd": "cwnd_pkts", "ssthresh": "ssthresh_pkts", "rtt": "rtt_s",
    "base_rtt": "base_rtt_s", "length": "length_pkts", "avg": "avg_pkts",
    # summary
    "retransmitted": "retransmitted_pkts", "dropped": "dropped_pkts", "completion_s": "completion_time_s",
}


def renamed_column_message(name: str) -> str | None:
    """``"'final_cwnd' was renamed 'final_cwnd_pkts' in 0.3"`` for an old column name, else None."""
    new = RENAMED_COLUMNS.get(name)
    return None if new is None else f"{name!r} was renamed {new!r} in {RENAMED_IN}"


def upgrade_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the old column names of :data:`RENAMED_COLUMNS` renamed (results written by
    0.2 and before); a frame that already has the new names is returned unchanged. An old
    column whose new name is also present is dropped (the new one wins)."""
    old = [c for c in df.columns if isinstance(c, str) and c in RENAMED_COLUMNS]
    if not old:
        return df
    clash = [c for c in old if RENAMED_COLUMNS[c] in df.columns]
    return df.drop(columns=clash).rename(columns={c: RENAMED_COLUMNS[c] for c in old if c not in clash})
