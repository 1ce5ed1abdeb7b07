"""A run's tables as typed numpy columns, and those columns as Arrow tables and Parquet files,
all without pandas.

Importing pandas costs about 0.3 s of CPU, more than a third of the benchmark's simulation, so
``vegaslab run`` does without it (docs/decisions.md, "Results without pandas until a table is
read"): :class:`vegaslab.results.Results` keeps the core's Arrow columns as numpy arrays
(:func:`core_columns`) and builds its pandas tables on first use; it writes Parquet from the
same columns through this module.

pyarrow imports pandas as soon as ``pyarrow.array`` converts anything (it looks for pandas
objects), so the Arrow arrays here are assembled from their buffers
(``pyarrow.Array.from_buffers``), which does not. A column type this module does not know
falls back to ``pyarrow.array`` (and so to importing pandas): only a column a user added to a
table can be one.

Each table is written with one schema however it was held: a table read from the core's
columns and the same table after it became a pandas frame give byte-identical Parquet files
(tests/test_results_parquet.py). Null is written where a value is missing (NaN in a float
column, as ``pandas.DataFrame.to_parquet`` wrote it before).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence, Union

import numpy as np

from .outdir import TABLE_NAMES

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

FLOW_COLUMNS = [
    "flow", "cc", "from", "to", "start_s", "end_s",
    "sent_pkts", "sent_bytes", "retransmitted_pkts", "fast_retransmits", "timeouts",
    "slow_start_entries", "received_pkts", "received_bytes", "delivered_pkts", "delivered_bytes",
    "acked_pkts",
    "throughput_bps", "goodput_bps", "active_throughput_bps", "completion_time_s",
    "final_cwnd_pkts", "in_flight_pkts", "dropped_pkts",
]
QUEUE_COLUMNS = [
    "queue", "kind", "limit_pkts", "arrived_pkts", "dropped_pkts", "departed_pkts", "backlog_pkts",
    "loss_ratio", "mean_len_pkts", "std_len_pkts", "max_len_pkts",
]
LINK_COLUMNS = ["link", "bandwidth_bps", "sent_bytes", "utilisation_ratio"]
UDP_COLUMNS = [
    "source", "model", "from", "to", "start_s", "end_s", "sent_pkts", "sent_bytes",
    "received_pkts", "received_bytes", "dropped_pkts", "dropped_bytes", "in_flight_pkts",
    "throughput_bps", "active_throughput_bps", "offered_bps", "nominal_rate_bps",
]
SERIES_FLOW_COLUMNS = ["time_s", "flow", "cwnd_pkts", "ssthresh_pkts", "rtt_s", "throughput_bps", "active"]
SERIES_QUEUE_COLUMNS = ["time_s", "queue", "length_pkts"]

#: Table name -> (key column, documented columns); the order `Results.to_dir` writes them in.
TABLES = dict(zip(TABLE_NAMES, [
    ("flow", FLOW_COLUMNS),
    ("queue", QUEUE_COLUMNS),
    ("link", LINK_COLUMNS),
    ("source", UDP_COLUMNS),
    ("flow", SERIES_FLOW_COLUMNS),
    ("queue", SERIES_QUEUE_COLUMNS),
], strict=True))

#: The meta.json key holding ``{file name: SHA-256}`` of the table files written with it.
INTEGRITY_KEY = "tables_sha256"

#: Column types (docs/results-format.md, "Column types"): a column's type
#: follows from its name, never from whether the table happens to be empty. Text columns (names
#: and kinds) have pandas' text dtype (``str`` in pandas 3, ``object`` before) even with no
#: rows; counts are ``int64``; every other documented column is ``float64``.
TEXT_COLUMNS = frozenset({"flow", "queue", "link", "source", "cc", "from", "to", "kind", "model"})
#: Counts of packets, bytes, events or connections (and the 0/1 ``active`` flag). A count with
#: a missing value (a core's optional column on a row it does not apply to, a counter the
#: testbed or ns-2 does not report, a document from before the column existed) is ``float64``
#: with NaN, as pandas makes it, rather than pandas' nullable ``Int64``: NaN is the one
#: missing-value marker of every table (``completion_time_s``, the series' ``rtt_s``), works with
#: numpy, ``math.isnan`` and the claims' missing-data checks, and is what the results store's
#: Arrow tables give back; ``df[col].astype("Int64")`` gives the nullable form on request.
COUNT_COLUMNS = frozenset({
    # flows (the last six only on the rows they apply to)
    "sent_pkts", "sent_bytes", "retransmitted_pkts", "fast_retransmits", "timeouts",
    "slow_start_entries", "received_pkts", "received_bytes", "delivered_pkts", "delivered_bytes",
    "acked_pkts", "in_flight_pkts", "dropped_pkts", "final_ssthresh_pkts",
    "connections", "open_connections", "late_acks",
    "vegas_decisions", "vegas_threshold_ties", "vegas_decisive_ties",
    # queues (error_pkts, early_dropped_pkts, forced_dropped_pkts only on some rows)
    "limit_pkts", "arrived_pkts", "departed_pkts", "backlog_pkts", "max_len_pkts",
    "error_pkts", "early_dropped_pkts", "forced_dropped_pkts",
    # links, udp
    "dropped_bytes",
    # series
    "active", "length_pkts",
})


class NameColumn:
    """A text column as the core sends the series' flow and queue names: ``codes`` (u32 indices)
    into ``names``. Kept in that form until pandas needs the strings, because expanding
    480,000 rows into Python strings (and encoding them again for Arrow) costs about 0.1 s."""

    __slots__ = ("codes", "names")

    def __init__(self, codes: np.ndarray, names: Sequence[str]) -> None:
        self.codes = codes
        self.names = list(names)

    def __len__(self) -> int:
        return len(self.codes)

    def to_numpy(self) -> np.ndarray:
        """The names row by row, as an object array."""
        return np.asarray(self.names, dtype=object)[self.codes]

    def __getitem__(self, rows: Any) -> "NameColumn":
        """The rows ``rows`` (a mask, indices or a slice), still interned."""
        return NameColumn(self.codes[rows], self.names)


Column = Union[np.ndarray, NameColumn]


def expanded(columns: Mapping[str, Column]) -> dict[str, np.ndarray]:
    """``columns`` with every :class:`NameColumn` as its object array of names."""
    return {k: v.to_numpy() if isinstance(v, NameColumn) else v for k, v in columns.items()}


# ---------------------------------------------------------------------- from the core


def _present(arr: "pa.Array") -> np.ndarray | None:
    """Which rows of ``arr`` have a value (its validity bitmap as booleans), None when all do."""
    if arr.null_count == 0:
        return None
    bits = np.frombuffer(arr.buffers()[0], dtype=np.uint8)
    return np.unpackbits(bits, count=arr.offset + len(arr), bitorder="little")[arr.offset:].astype(bool)


def _values(arr: "pa.Array", dtype: str) -> np.ndarray:
    """The values buffer of a fixed-width ``arr`` as numpy (a view; a missing row holds whatever
    the core put there)."""
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=arr.offset + len(arr))[arr.offset:]


#: numpy's type of each fixed-width Arrow type the core writes.
_NUMPY_TYPES = {"double": "<f8", "int64": "<i8", "uint64": "<u8", "uint8": "u1", "uint32": "<u4"}


def core_column(arr: "pa.Array") -> Column:
    """One column of a core table (:func:`vegaslab.core.run_core`) as :class:`Results` holds it,
    what the same table's JSON rows give pandas: floats float64 (NaN where a row has no value);
    integers int64, or float64 with NaN when a row has no value (as pandas makes a count with
    a gap); booleans bool, or an object array with NaN for a missing row; text an object array
    (NaN for a missing row); a column no row has a value in an object array of None; interned
    names (a dictionary) a :class:`NameColumn`. Each array is the column's own copy."""
    import pyarrow as pa

    kind = arr.type
    if pa.types.is_dictionary(kind):
        return NameColumn(_values(arr.indices, "<u4").copy(), arr.dictionary.to_pylist())
    if pa.types.is_null(kind):
        return np.full(len(arr), None, dtype=object)
    have = _present(arr)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        # Through Python strings: `Array.to_numpy` of text goes through pyarrow's pandas
        # conversion and imports pandas (and pyarrow.compute), 50 MB and 0.3 s of CPU.
        col: Any = np.asarray(arr.to_pylist(), dtype=object)
        if have is not None:
            col[~have] = np.nan
        return col
    if pa.types.is_boolean(kind):
        bits = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
        col = np.unpackbits(bits, count=arr.offset + len(arr), bitorder="little")[arr.offset:].astype(bool)
        if have is not None:
            col = col.astype(object)
            col[~have] = np.nan
        return col
    values = _values(arr, _NUMPY_TYPES[str(kind)])
    whole = values.dtype.kind in "iu" and have is None
    col = values.astype(np.int64 if whole else np.float64)
    if have is not None:
        col[~have] = np.nan
    return col


def core_columns(tables: Mapping[str, "pa.RecordBatch"], *, series: Sequence[str] = ("series_flows", "series_queues")
                 ) -> dict[str, dict[str, Column] | None]:
    """A run's tables from the core as ``{table: {column: column}}`` in the core's column order
    (:func:`core_column`); a time series with no rows is None, as the JSON form's empty series
    gives no frame rows."""
    out: dict[str, dict[str, Column] | None] = {}
    for name, batch in tables.items():
        if name in series and batch.num_rows == 0:
            out[name] = None
            continue
        out[name] = {field.name: core_column(batch.column(i)) for i, field in enumerate(batch.schema)}
    return out


def meta_json(record: Mapping[str, Any]) -> str:
    """meta.json's text: indented, keys sorted, with the provenance's normalised scenario on one
    line: indented, the scenario would go through the json module's pure-Python encoder (15 s of
    a 20,000-flow ``vegaslab run``, 42 MB), where the C encoder writes it unindented in a
    fraction of a second. The file parses to the same record."""
    prov = record.get("provenance")
    if not isinstance(prov, Mapping) or "scenario" not in prov:
        return json.dumps(record, indent=2, sort_keys=True) + "\n"
    import uuid

    mark = f"vegaslab-scenario-{uuid.uuid4().hex}"  # stands for the scenario; in no value of the record
    text = json.dumps({**record, "provenance": {**prov, "scenario": mark}}, indent=2, sort_keys=True)
    scenario = json.dumps(prov["scenario"], sort_keys=True, separators=(",", ":"))
    return text.replace(json.dumps(mark), scenario, 1) + "\n"


# ---------------------------------------------------------------------- typing, without pandas


def is_missing(v: Any) -> bool:
    """None or NaN: a missing value in a column without pandas."""
    return v is None or (isinstance(v, float) and math.isnan(v))


def _as_float(col: np.ndarray) -> np.ndarray:
    """``col`` as float64, a value that is not a number NaN (``pandas.to_numeric(errors="coerce")``)."""
    if col.dtype.kind in "iufb":
        return col.astype(np.float64)

    def number(v: Any) -> float:
        if isinstance(v, (bool, int, float, np.number, np.bool_)):
            return float(v)
        if isinstance(v, str):
            try:
                return float(v)
            except ValueError:
                return math.nan
        return math.nan

    return np.fromiter((number(v) for v in col), dtype=np.float64, count=len(col))


def typed_column(name: str, col: Column, documented: bool) -> Column:
    """``col`` as the type its name calls for (:data:`TEXT_COLUMNS`, :data:`COUNT_COLUMNS`):
    a count as int64 when every value is present and whole, else float64; a documented number
    as float64 (a value that is not a number NaN); an undocumented column as it is, unless it
    holds nothing but missing values (then float64 NaN). The one statement of these rules:
    :mod:`vegaslab.results.frames` applies them to pandas frames too."""
    if isinstance(col, NameColumn) or name in TEXT_COLUMNS:
        return col
    if name in COUNT_COLUMNS:
        if col.dtype == np.int64:
            return col
        if col.dtype.kind in "iub":
            return col.astype(np.int64)
        values = _as_float(col)
        if np.isfinite(values).all() and (values == np.round(values)).all():
            return values.astype(np.int64)  # every value present and whole (also: no rows)
        return values
    if documented:
        return col if col.dtype == np.float64 else _as_float(col)
    if col.dtype == object and all(is_missing(v) for v in col):
        return np.full(len(col), np.nan)
    return col


def missing_column(name: str, rows: int) -> np.ndarray:
    """A documented column a table does not have: missing in its type (a count with rows to
    fill is NaN, so float64)."""
    if name in TEXT_COLUMNS:
        return np.full(rows, None, dtype=object)
    if name in COUNT_COLUMNS and rows == 0:
        return np.zeros(0, dtype=np.int64)
    return np.full(rows, np.nan)


def typed_columns(columns: Mapping[str, Column] | None, documented: Sequence[str]) -> dict[str, Column]:
    """A table's columns as :func:`vegaslab.results.make_frame` lays them out: the documented ones
    first (a missing one added, missing in its type), then any others the core added, each
    typed by :func:`typed_column`. Column names are taken as they are: the core writes no name
    of before 0.3 (:data:`vegaslab.results.RENAMED_COLUMNS`)."""
    columns = dict(columns or {})
    rows = len(next(iter(columns.values()))) if columns else 0
    out: dict[str, Column] = {}
    for name in documented:
        out[name] = typed_column(name, columns[name], True) if name in columns else missing_column(name, rows)
    for name, col in columns.items():
        if name not in out:
            out[name] = typed_column(name, col, False)
    return out


# ---------------------------------------------------------------------- Arrow and Parquet


def _validity(missing: np.ndarray) -> "pa.Buffer | None":
    """Arrow's validity bitmap (bit set = present) for the rows ``missing`` marks; None when none is."""
    import pyarrow as pa

    if not missing.any():
        return None
    return pa.py_buffer(np.packbits(~missing, bitorder="little"))


def _offsets(lengths: np.ndarray) -> np.ndarray:
    """Arrow's offsets for items of these byte lengths: 0, then the running total (int64)."""
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def _strings_from_buffers(offsets: np.ndarray, data: Any, missing: np.ndarray | None = None) -> "pa.Array":
    """An Arrow ``string`` array (``large_string`` past 2 GiB of text) from int64 ``offsets``,
    the UTF-8 ``data`` and the rows ``missing`` marks as null."""
    import pyarrow as pa

    if offsets[-1] < 2**31:
        kind, offsets = pa.string(), offsets.astype(np.int32)
    else:
        kind = pa.large_string()
    validity = None if missing is None else _validity(missing)
    return pa.Array.from_buffers(kind, len(offsets) - 1, [validity, pa.py_buffer(offsets), pa.py_buffer(data)])


def _string_array(values: Sequence[Any]) -> "pa.Array":
    """Strings (None or NaN: null) as an Arrow ``string`` array, from its buffers."""
    missing = np.fromiter((not isinstance(v, str) for v in values), dtype=bool, count=len(values))
    encoded = [v.encode() if isinstance(v, str) else b"" for v in values]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    return _strings_from_buffers(_offsets(lengths), b"".join(encoded), missing)


def _interned_string_array(col: NameColumn) -> "pa.Array":
    """A :class:`NameColumn` as an Arrow ``string`` array: each row's name bytes gathered with
    numpy. (``Array.take`` would do it, but it imports ``pyarrow.compute``, 0.05-0.1 s.)"""
    encoded = [name.encode() for name in col.names]
    name_lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    name_starts = _offsets(name_lengths)[:-1]
    codes = np.asarray(col.codes, dtype=np.intp)
    row_lengths = name_lengths[codes]
    offsets = _offsets(row_lengths)
    # Byte k of the data belongs to the row r it falls in: its name's start + (k - offsets[r]).
    shift = np.repeat(name_starts[codes] - offsets[:-1], row_lengths)
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)[np.arange(offsets[-1]) + shift]
    return _strings_from_buffers(offsets, data)


def arrow_column(col: Column) -> "pa.Array":
    """One typed column as an Arrow array: floats (NaN as null), integers, booleans and text
    (None or NaN as null) from their buffers; any other column through ``pyarrow.array``."""
    import pyarrow as pa

    if isinstance(col, NameColumn):
        return _interned_string_array(col)
    n = len(col)
    kind = col.dtype.kind
    if kind == "f" and col.dtype == np.float64:
        return pa.Array.from_buffers(pa.float64(), n, [_validity(np.isnan(col)), pa.py_buffer(np.ascontiguousarray(col))])
    if kind in "iu" and col.dtype.byteorder in "=<|":
        data = np.ascontiguousarray(col)
        return pa.Array.from_buffers(pa.from_numpy_dtype(data.dtype), n, [None, pa.py_buffer(data)])
    if kind == "b":
        return pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(np.packbits(col, bitorder="little"))])
    if kind == "O":
        if all(isinstance(v, str) or is_missing(v) for v in col):
            return _string_array(col)
        if all(isinstance(v, (bool, np.bool_)) or is_missing(v) for v in col):
            missing = np.fromiter((is_missing(v) for v in col), dtype=bool, count=n)
            values = np.fromiter((bool(v) if not m else False for v, m in zip(col, missing)), dtype=bool, count=n)
            return pa.Array.from_buffers(pa.bool_(), n, [_validity(missing),
                                                        pa.py_buffer(np.packbits(values, bitorder="little"))])
    return pa.array(col, from_pandas=True)  # a column a user added: pyarrow infers it (and imports pandas)


def arrow_table(columns: Mapping[str, Column]) -> "pa.Table":
    """Typed columns (:func:`typed_columns`) as an Arrow table, text columns ``string`` even with
    no rows or no value (so every table of a kind has one schema)."""
    import pyarrow as pa

    arrays, names = [], []
    for name, col in columns.items():
        arr = arrow_column(col)
        if name in TEXT_COLUMNS and not pa.types.is_string(arr.type):
            if pa.types.is_null(arr.type) or len(arr) == arr.null_count:
                arr = pa.nulls(len(arr), pa.string())
        arrays.append(arr)
        names.append(name)
    return pa.Table.from_arrays(arrays, names=names)


def write_parquet(columns: Mapping[str, Column], path: Path) -> None:
    """Write typed columns as one Parquet file (pyarrow's defaults: snappy, dictionary pages)."""
    import pyarrow.parquet as pq

    pq.write_table(arrow_table(columns), path)


def column_values(col: "pd.Series") -> np.ndarray:
    """A frame column's values as numpy: a column of a numpy type as it is; any other (object,
    pandas' text and nullable types) with every missing marker (NA, NaN, NaT) as None, the one
    :func:`is_missing` knows, and as object values unless none is missing (a
    nullable integer column without gaps is int64)."""
    if isinstance(col.dtype, np.dtype) and col.dtype != object:
        return col.to_numpy()
    return col.to_numpy(na_value=None)


def frame_columns(frame: "pd.DataFrame") -> dict[str, np.ndarray]:
    """A frame's columns as numpy arrays (:func:`column_values`): what
    :func:`typed_columns`, :meth:`Results.table_records` and the figures of
    :mod:`vegaslab.plots` read a table that is a frame as."""
    return {str(c): column_values(frame[c]) for c in frame.columns}
