"""`Results`: one run's JSON document (docs/results-format.md) as pandas tables (built on
first use: printing and writing a run need no pandas, see :mod:`vegaslab.columns`).

Tables (one row per entity, the entity's name as a column):

- ``flows``  (column ``flow``): per-flow counters and rates
- ``queues`` (column ``queue``, e.g. ``"R1->R2"``): queue counters and time-weighted length
- ``links``  (column ``link``): bytes sent and utilisation per direction
- ``udp``    (column ``source``): UDP sources and their sinks (sent/received/dropped)

Time series (long format, one row per sample):

- ``series_flows``:  time_s, flow, cwnd_pkts, ssthresh_pkts, rtt_s, throughput_bps, active (0/1)
- ``series_queues``: time_s, queue, length_pkts

Column names end in their unit (docs/results-format.md, "Column names"):
``_s``, ``_bps``, ``_pkts``, ``_bytes``; dimensionless ratios end in ``_ratio``; event counts
named by a plural noun (``timeouts``, ``fast_retransmits``) and flags keep their names. The
names of 0.2 and before are in :data:`RENAMED_COLUMNS`, the one place they are listed.

``summary`` is a compact per-flow view in human units for printing (with ``window_limited_s``,
the seconds a flow's cwnd was at or above its receiver window); ``format_table()`` (and
``repr``) renders the run as fixed-width text; ``window_limited_flows()`` and
``window_warning()`` name the flows their receiver window capped.

Column dtypes follow from the column's name (text, ``int64`` counts, ``float64``), empty tables
included: :data:`TEXT_COLUMNS`, :data:`COUNT_COLUMNS`. For notebooks: an HTML view
(``_repr_html_``), ``plot_cwnd`` / ``plot_throughput`` / ``plot_rtt`` / ``plot_queue`` that draw
on a matplotlib ``ax`` and return it, and :func:`concat` (several runs as a :class:`ResultsSet`).

This package only re-exports; one job a module:

- :mod:`~vegaslab.results.run`: :class:`Results` (one run) and :func:`concat`;
- :mod:`~vegaslab.results.sets`: :class:`ResultsSet` (several runs' tables stacked);
- :mod:`~vegaslab.results.frames`: a table as a typed pandas frame (:func:`make_frame`);
- :mod:`~vegaslab.results.directory`: a run's directory on disk, written all or nothing and
  read back only when its files belong together (:class:`InconsistentResultsError`);
- :mod:`~vegaslab.results.text`: a run as fixed-width text (:func:`format_number`,
  :func:`fixed_width`);
- :mod:`~vegaslab.results.notebook`: plots on a matplotlib ``Axes`` and the HTML view;
- :mod:`~vegaslab.results.renamed`: the column renames of 0.3 (:data:`RENAMED_COLUMNS`).
"""

from __future__ import annotations

from ..columns import (COUNT_COLUMNS, FLOW_COLUMNS, INTEGRITY_KEY, LINK_COLUMNS, QUEUE_COLUMNS, SERIES_FLOW_COLUMNS,
                       SERIES_QUEUE_COLUMNS, TABLES, TEXT_COLUMNS, UDP_COLUMNS, Column, column_values, core_columns,
                       expanded, frame_columns, is_missing, meta_json, missing_column, typed_column, typed_columns,
                       write_parquet)
from ..errors import VegaslabError
from ..outdir import output_dir
from .directory import MAX_META_BYTES, META_SCHEMA, InconsistentResultsError
from .frames import make_frame, text_dtype
from .notebook import HTML_MAX_ROWS
from .renamed import RENAMED_COLUMNS, RENAMED_IN, renamed_column_message, upgrade_columns
from .run import Results, concat
from .sets import ResultsSet
from .text import fixed_width, format_number

# The public classes' path is this package's, the one users import: pickles (a Dask worker
# sends a run back), reprs and tracebacks name ``vegaslab.results.Results``.
for _cls in (Results, ResultsSet, InconsistentResultsError):
    _cls.__module__ = __name__
del _cls

__all__ = [
    # one run, several runs, a run directory that does not belong together
    "Results", "ResultsSet", "concat", "InconsistentResultsError",
    # frames, text and the HTML view
    "make_frame", "text_dtype", "format_number", "fixed_width", "HTML_MAX_ROWS",
    # the column renames of 0.3
    "RENAMED_COLUMNS", "RENAMED_IN", "renamed_column_message", "upgrade_columns",
    # what from_dir requires of meta.json
    "META_SCHEMA", "MAX_META_BYTES",
    # the tables' columns (vegaslab.columns), described here
    "TABLES", "FLOW_COLUMNS", "QUEUE_COLUMNS", "LINK_COLUMNS", "UDP_COLUMNS", "SERIES_FLOW_COLUMNS",
    "SERIES_QUEUE_COLUMNS", "TEXT_COLUMNS", "COUNT_COLUMNS", "INTEGRITY_KEY", "Column", "column_values",
    "core_columns", "expanded", "frame_columns", "is_missing", "meta_json", "missing_column", "typed_column",
    "typed_columns", "write_parquet",
    # read from the layers below, and readable here too
    "output_dir", "VegaslabError",
]
