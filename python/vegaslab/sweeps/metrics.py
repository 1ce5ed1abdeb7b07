"""The metrics a sweep can summarise and plot, known before any run: every numeric column of
the ``flows`` table (docs/results-format.md, one value per flow) and of the store's ``runs``
table (docs/store-format.md, one value per run), each with its unit and physical range, so a
``--plot`` typo is an error before the sweep runs and a figure's band never leaves the range a
metric can take.

The columns are read from where they are defined (:data:`vegaslab.columns.FLOW_COLUMNS` and
the ``runs`` table's schema, :func:`vegaslab.sweeps.store.runs_table`); units and ranges follow
from a column's unit suffix (docs/results-format.md, "Column names": ``_bps`` bit/s, ``_pkts``
packets, ``_bytes`` bytes, ``_s`` seconds, ``_ratio`` a fraction) and, for the few names
without one, from :data:`_NAMED`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from .. import spelling
from ..errors import VegaslabError

#: Columns of ``runs`` that describe how a run was computed, not what it measured.
_NOT_METRICS = frozenset({"seed", "provenance_format"})

#: Metrics whose name carries no unit suffix: (label, unit, lower, upper).
_NAMED: dict[str, tuple[str, str, float | None, float | None]] = {
    "jain_throughput": ("Jain's fairness index of throughput", "", 0.0, 1.0),
    "flows": ("flows", "", 0.0, None),
    "flows_completed": ("flows completed", "", 0.0, None),
    "events": ("simulated events", "", 0.0, None),
    "timeouts": ("timeouts", "", 0.0, None),
    "timeouts_total": ("timeouts, all flows", "", 0.0, None),
    "fast_retransmits": ("fast retransmits", "", 0.0, None),
    "queue_dropped_pkts_total": ("dropped by queues, all queues", "packets", 0.0, None),
    "sim_wall_s": ("wall time of the simulation", "s", 0.0, None),
    "wall_s": ("wall time of the run", "s", 0.0, None),
    "slow_start_entries": ("slow-start entries", "", 0.0, None),
}

#: Unit suffixes (docs/results-format.md) -> (unit, lower bound, upper bound).
_SUFFIXES: dict[str, tuple[str, float | None, float | None]] = {
    "bps": ("bit/s", 0.0, None),
    "pkts": ("packets", 0.0, None),
    "bytes": ("bytes", 0.0, None),
    "s": ("s", 0.0, None),
    "ratio": ("", 0.0, 1.0),
}


@dataclass(frozen=True)
class Metric:
    """A plottable column: its ``name``, the ``table`` it is in (``flows``: one value per flow;
    ``runs``: per run), a ``label`` for an axis, its ``unit`` (``bit/s``, ``packets``, ``s``, or
    empty for a pure number) and the physical range ``lower``..``upper`` (None: unbounded)."""

    name: str
    table: str
    label: str
    unit: str
    lower: float | None
    upper: float | None

    @property
    def per_flow(self) -> bool:
        return self.table == "flows"


def _describe(name: str, table: str) -> Metric:
    if name in _NAMED:
        label, unit, lower, upper = _NAMED[name]
        return Metric(name, table, label, unit, lower, upper)
    words = name.split("_")
    # The unit is the last word, or the one before an aggregate's _total / _max.
    at = len(words) - 2 if len(words) > 2 and words[-1] in ("total", "max") else len(words) - 1
    unit, lower, upper = _SUFFIXES.get(words[at], ("", None, None))
    kept = words[:at] + words[at + 1:] if words[at] in _SUFFIXES else words
    label = " ".join(kept).replace(" total", ", all flows").replace(" max", ", largest")
    return Metric(name, table, label, unit, lower, upper)


@lru_cache(maxsize=1)
def metrics() -> dict[str, Metric]:
    """Every plottable metric by name: the ``flows`` table's numeric columns, then the
    ``runs`` table's (a name in both is the per-flow one)."""
    import pyarrow as pa

    from ..columns import FLOW_COLUMNS, TEXT_COLUMNS
    from .store import runs_table

    out = {c: _describe(c, "flows") for c in FLOW_COLUMNS if c not in TEXT_COLUMNS}
    for f in runs_table([], {}).schema:
        numeric = pa.types.is_integer(f.type) or pa.types.is_floating(f.type)
        if numeric and f.name not in out and f.name not in _NOT_METRICS:
            out[f.name] = _describe(f.name, "runs")
    return out


#: Least similarity of a suggested metric name: looser than the catalog ids' (a metric is
#: often given without its unit suffix: ``goodput`` is 0.78 from ``goodput_bps``).
METRIC_SIMILARITY = 0.6


def did_you_mean(name: str, known: list[str] | tuple[str, ...]) -> str:
    """`` (did you mean 'x'?)`` for the known name closest to ``name``, or nothing."""
    return spelling.did_you_mean(name, known, METRIC_SIMILARITY)


def metric(name: str) -> Metric:
    """The metric called ``name``; :class:`VegaslabError` naming the closest ones otherwise
    (or the new name of a renamed column)."""
    known = metrics()
    if name in known:
        return known[name]
    from ..results import renamed_column_message
    from .store import RENAMED_AGGREGATES

    if renamed := renamed_column_message(name) or (
            name in RENAMED_AGGREGATES and f"{name!r} was renamed {RENAMED_AGGREGATES[name]!r} in 0.3"):
        raise VegaslabError(f"metric {name!r}: {renamed}")
    raise VegaslabError(f"metric {name!r}: not a column of the flows or runs table{did_you_mean(name, list(known))}; "
                        f"the metrics are {', '.join(known)}")


def physical_clip(lo: float, hi: float, m: Metric) -> tuple[float, float]:
    """``(lo, hi)`` within the metric's physical range (NaN stays NaN)."""
    if m.lower is not None and not math.isnan(lo):
        lo = max(lo, m.lower)
    if m.upper is not None and not math.isnan(hi):
        hi = min(hi, m.upper)
    return lo, hi
