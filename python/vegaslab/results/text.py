"""A run as fixed-width text: the header line, the per-flow summary, the busiest queues and the
UDP sources (:func:`format_run`: what ``vegaslab run`` prints and ``repr(results)`` shows), and
the number formatting and column layout it uses, which the report's tables share
(:func:`format_number`, :func:`fixed_width`); and a table's rows as Python values
(:func:`records`: what ``vegaslab run --json`` prints).

It reads typed numpy columns (:mod:`vegaslab.columns`), never pandas frames, so printing a run
imports no pandas.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..columns import TEXT_COLUMNS, Column, is_missing


def format_run(meta: Mapping[str, Any], table: Callable[[str], Mapping[str, Column]], *, max_queues: int,
               max_flows: int) -> str:
    """Fixed-width text of the run described by ``meta`` whose tables ``table(name)`` returns
    as typed columns: a header line, the per-flow summary (the first ``max_flows`` flows, and
    a line saying how many more) and the ``max_queues`` busiest queues: a run of 20,000 flows
    would print 20,000 lines; every flow stays in ``flows`` and flows.parquet."""
    m = meta
    head = f"{m.get('scenario', '?')}  seed {m.get('seed', '?')}"
    if m.get("duration_s") is not None:
        head += f"  {format_number(m['duration_s'])} s simulated"
    if m.get("wall_time_s") is not None:
        head += f" in {m['wall_time_s']:.3g} s"
    if m.get("events") is not None:
        head += f" ({int(m['events']):,} events)"
    lines = [head, ""]
    f = table("flows")
    flow_cells = _rows(f, ("flow", "cc", "start_s", "end_s", "goodput_bps", "throughput_bps", "retransmitted_pkts",
                           "timeouts", "dropped_pkts", "completion_time_s", "final_cwnd_pkts"), slice(0, max_flows))
    lines += fixed_width(
        ["flow", "cc", "start s", "end s", "goodput Mbit/s", "thrput Mbit/s", "retx",
         "timeouts", "drops", "done s", "cwnd"],
        [[flow, cc, format_number(start), format_number(end), format_number(goodput / 1e6, 4), format_number(thrput / 1e6, 4), _int(retx),
          _int(timeouts), _int(drops), format_number(done, 6), format_number(cwnd, 4)]
         for flow, cc, start, end, goodput, thrput, retx, timeouts, drops, done, cwnd in flow_cells],
        left=2,
    )
    if len(f["flow"]) > max_flows:
        lines.append(f"({len(f['flow']) - max_flows} more flows: every flow is in Results.flows and flows.parquet)")
    q = table("queues")
    if len(q["queue"]):
        arrived = np.asarray(q["arrived_pkts"], dtype=np.float64)
        # The busiest first; queues with equal arrivals in their order (a stable sort).
        busy = sorted((i for i in range(len(arrived)) if arrived[i] > 0), key=lambda i: -arrived[i])
        shown = busy[:max_queues]
        lines.append("")
        cells = _rows(q, ("queue", "kind", "limit_pkts", "arrived_pkts", "dropped_pkts", "loss_ratio",
                          "mean_len_pkts", "max_len_pkts"), shown)
        lines += fixed_width(
            ["queue", "kind", "limit", "arrivals", "drops", "loss %", "mean pkts", "max pkts"],
            [[name, kind, _int(limit), _int(arrivals), _int(drops), format_number(100 * loss if _ok(loss) else loss, 3),
              format_number(mean, 4), _int(most)]
             for name, kind, limit, arrivals, drops, loss, mean, most in cells],
            left=2,
        )
        hidden = len(arrived) - len(shown)
        if hidden:
            lines.append(f"({hidden} more queue{'s' if hidden > 1 else ''}, idle or less busy)")
    u = table("udp")
    if len(u["source"]):
        lines.append("")
        cells = _rows(u, ("source", "model", "sent_pkts", "received_pkts", "dropped_pkts", "offered_bps",
                          "active_throughput_bps"))
        lines += fixed_width(
            ["udp source", "model", "sent", "received", "dropped", "offered Mbit/s", "thrput Mbit/s"],
            [[source, model, _int(sent), _int(received), _int(dropped),
              format_number(offered / 1e6 if _ok(offered) else offered, 4), format_number(thrput / 1e6 if _ok(thrput) else thrput, 4)]
             for source, model, sent, received, dropped, offered, thrput in cells],
            left=2,
        )
    return "\n".join(lines)


def _rows(columns: Mapping[str, Any], names: Sequence[str], at: Any = slice(None)) -> Iterable[tuple]:
    """The values of the columns ``names`` as Python scalars, row by row, of the rows ``at``
    (a slice or a list of row numbers)."""
    return zip(*(columns[name][at].tolist() for name in names))


def records(columns: Mapping[str, np.ndarray], missing: Callable[[Any], bool]) -> list[dict[str, Any]]:
    """:meth:`Results.table_records` of ``columns``: Python scalars row by row (:func:`_rows`); a
    cell that ``missing`` calls missing is ``None`` in a text column (:data:`TEXT_COLUMNS`) and
    NaN in any other."""
    names = list(columns)
    gaps = [None if name in TEXT_COLUMNS else math.nan for name in names]
    return [{name: gap if missing(v) else (v.item() if isinstance(v, np.generic) else v)
             for name, gap, v in zip(names, gaps, row)} for row in _rows(columns, names)]


def _ok(v: Any) -> bool:
    return not is_missing(v)


def format_number(v: Any, sig: int = 6) -> str:
    if not _ok(v):
        return "-"
    v = float(v)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.{sig}g}"


def _int(v: Any) -> str:
    return f"{int(v)}" if _ok(v) else "-"


def fixed_width(headers: Sequence[str], rows: Iterable[Sequence[Any]], left: int = 1) -> list[str]:
    """Columns padded to their widest cell; the first ``left`` columns left-aligned, the
    rest (numbers) right-aligned."""
    rows = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i < left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(headers)] + [line(r) for r in rows]
