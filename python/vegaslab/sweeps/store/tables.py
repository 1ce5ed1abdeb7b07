"""A finished run's tables as the store keeps them, built where the run was computed (on the
worker): the core's columns typed for Parquet, ``run_key``, one typed column per swept parameter
and ``seed`` in front of every table, and the ``runs`` row of aggregates and provenance.

Column types are fixed here (integers ``int64``, names ``string``, a column missing in every row
a ``double`` null, a parameter's type from all the specs of a sweep: :func:`param_types`), so
that every commit's files fit together and a run stored by one machine is byte-for-byte what
another would store.
"""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from .errors import StoreError
from .format import KEY_COLUMNS
from .keys import PreparedRun, RunSpec

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa


def param_types(specs: Iterable[RunSpec | PreparedRun]) -> dict[str, str]:
    """The column type of each parameter over ``specs`` (see the package's docstring, :mod:`vegaslab.sweeps.store`). Raises
    :class:`StoreError` naming the parameter when its values mix types that do not convert
    (a string and a number), or when it is named like a fixed column."""
    kinds: dict[str, set[str]] = {}
    for s in specs:
        spec = s.spec if isinstance(s, PreparedRun) else s
        for name, value in spec.params.items():
            if isinstance(value, bool):
                kind = "bool"
            elif isinstance(value, int):
                kind = "int64"
            elif isinstance(value, float):
                kind = "double"
            elif isinstance(value, str):
                kind = "string"
            else:
                raise StoreError(f"parameter {name!r}: values must be integers, floats, strings or booleans, "
                                 f"got {type(value).__name__} {value!r}")
            kinds.setdefault(str(name), set()).add(kind)
    out: dict[str, str] = {}
    for name, ks in kinds.items():
        if name in KEY_COLUMNS or not name:
            raise StoreError(f"parameter {name!r}: the name is taken by a column every table has "
                             f"({', '.join(KEY_COLUMNS)}); rename the parameter")
        if name in _identity_columns():
            raise StoreError(f"parameter {name!r}: the name is the column that tells a table's rows apart "
                             f"({', '.join(sorted(_identity_columns()))}); give the axis another name (name = ...)")
        if len(ks) == 1:
            out[name] = ks.pop()
        elif ks == {"int64", "double"}:
            out[name] = "double"
        else:
            raise StoreError(f"parameter {name!r}: values mix {' and '.join(sorted(ks))}; "
                             "one type per parameter (integers and floats may mix)")
    return out


def _identity_columns() -> frozenset[str]:
    """The columns that tell a results table's rows apart (``flow``, ``queue``, ``link``,
    ``source``, and ``time_s`` of the series): a parameter may not take their names, or the rows
    of several flows would merge. A parameter named like another results column replaces it in
    the tidy tables (docs/store-format.md)."""
    from ...results import TABLES

    return frozenset([key for key, _columns in TABLES.values()] + ["time_s"])


def _nan_if_none(x: Any) -> float:
    return math.nan if x is None else float(x)


def param_value(value: Any, kind: str) -> Any:
    """A parameter's value as a column of type ``kind`` holds it (an integer of a ``double``
    parameter as a float)."""
    return float(value) if kind == "double" else value


def _arrow_type(kind: str) -> "pa.DataType":
    import pyarrow as pa

    return {"int64": pa.int64(), "double": pa.float64(), "string": pa.string(), "bool": pa.bool_()}[kind]


def _stored_column(arr: "pa.Array", json_floats: bool) -> "pa.Array":
    """One core column (:func:`vegaslab.core.run_core`) as the store keeps it: integers ``int64``,
    names (a dictionary) ``string``, a float that is not a number null; the rest as it is.
    ``json_floats``: infinities are null too. The results tables were stored from the core's
    JSON form, which has neither NaN nor infinity (both are written as null), and the time
    series from typed columns where only NaN was null; each keeps its rule, so a store written
    before and one written now hold the same bytes."""
    import numpy as np
    import pyarrow as pa

    kind = arr.type
    if pa.types.is_dictionary(kind):
        return arr.dictionary_decode()
    if pa.types.is_integer(kind):
        return arr.cast(pa.int64())
    if pa.types.is_floating(kind):
        values = arr.to_numpy(zero_copy_only=False)  # a null as NaN
        missing = ~np.isfinite(values) if json_floats else np.isnan(values)
        return pa.array(values, type=pa.float64(), mask=missing)
    return arr


def _stored_table(batch: "pa.RecordBatch", columns: Sequence[str], json_floats: bool) -> "pa.Table | None":
    """One results table or time series from the core as Arrow (:func:`_stored_column`),
    documented columns first in :mod:`vegaslab.results` order, then any others the core
    added; entirely-null columns are ``double`` (the name column excepted). None when empty."""
    import pyarrow as pa

    if batch.num_rows == 0:
        return None
    table = pa.table({f.name: _stored_column(batch.column(i), json_floats) for i, f in enumerate(batch.schema)})
    order = [c for c in columns if c in table.column_names] + [c for c in table.column_names if c not in columns]
    table = table.select(order)
    for i, name in enumerate(table.column_names):
        if pa.types.is_null(table.schema.field(i).type):
            target = pa.string() if name == columns[0] else pa.float64()
            table = table.set_column(i, name, table.column(i).cast(target))
    return table


def _with_keys(table: "pa.Table", key: str, seed: int, params: Mapping[str, Any], types: Mapping[str, str]) -> "pa.Table":
    import pyarrow as pa

    n = table.num_rows
    core_columns = list(table.column_names)
    shadowed = [name for name in ("run_key", "seed", *types) if name in core_columns]
    front = [("run_key", pa.repeat(pa.scalar(key, pa.string()), n))]
    front += [(name, pa.repeat(pa.scalar(param_value(params[name], kind) if name in params else None, _arrow_type(kind)), n))
              for name, kind in types.items()]
    front.append(("seed", pa.repeat(pa.scalar(seed, pa.int64()), n)))
    for i, (name, arr) in enumerate(front):
        if name in table.column_names:  # a core column named like a parameter: the parameter wins
            table = table.drop_columns([name])
        table = table.add_column(i, name, arr)
    # The run's own layout travels with its table (a commit's tables are the union of its
    # runs' columns): see run_layout and Store.load_results.
    return table.replace_schema_metadata({_LAYOUT_KEY: json.dumps({"columns": core_columns, "shadowed": shadowed})})


#: Schema metadata key of a run's table: the core's columns in order, and those a parameter replaced.
_LAYOUT_KEY = b"vegaslab.layout"


def run_layout(run: "StoredRun") -> str:
    """The ``runs.layout`` value of a run: per table, the columns the core wrote (in order),
    and the columns a parameter named like them replaced (then the run cannot be rebuilt)."""
    columns: dict[str, list[str]] = {}
    shadowed: set[str] = set()
    for name, table in run.tables.items():
        meta = (table.schema.metadata or {}).get(_LAYOUT_KEY)
        if meta is None:
            continue
        info = json.loads(meta)
        columns[name] = list(info["columns"])
        shadowed.update(info["shadowed"])
    return json.dumps({"columns": columns, "shadowed": sorted(shadowed)}, sort_keys=True)


def _aggregates(flows: "pa.Table | None", queues: "pa.Table | None") -> dict[str, Any]:
    """Per-run numbers over the flows and queues (the ``runs`` table's aggregate columns), from
    the tables as stored (:func:`stored_tables`: a missing or non-finite value is None)."""
    from ...fairness import jain_index

    def values(table: "pa.Table | None", col: str, default: Any = None) -> list:
        if table is None:
            return []
        if col not in table.column_names:
            return [default] * table.num_rows
        return table.column(col).to_pylist()

    def total(table: "pa.Table | None", col: str) -> float | int | None:
        vals = values(table, col)
        if not vals or any(v is None for v in vals):
            return None
        return sum(vals)

    done = [v for v in values(flows, "completion_time_s") if v is not None]
    return {
        "flows": 0 if flows is None else flows.num_rows,
        # A missing value makes a total NaN (missing data), never 0.
        "throughput_bps_total": _nan_if_none(total(flows, "throughput_bps")),
        "goodput_bps_total": _nan_if_none(total(flows, "goodput_bps")),
        "jain_throughput": jain_index(values(flows, "throughput_bps", math.nan)),
        "retransmitted_pkts_total": total(flows, "retransmitted_pkts"),
        "timeouts_total": total(flows, "timeouts"),
        "dropped_pkts_total": total(flows, "dropped_pkts"),
        "queue_dropped_pkts_total": total(queues, "dropped_pkts"),
        "flows_completed": len(done),
        "completion_time_s_max": max(done) if done else math.nan,
    }


def stored_tables(tables: Mapping[str, "pa.RecordBatch"]) -> dict[str, "pa.Table | None"]:
    """A run's tables from the core (:func:`vegaslab.core.run_core`) as the store keeps them
    (:func:`_stored_table`), before the keys go in front; None for an empty one."""
    from ...results import TABLES as RESULT_TABLES

    return {name: _stored_table(tables[name], RESULT_TABLES[name][1], json_floats=not name.startswith("series_"))
            for name in RESULT_TABLES}


def keyed_tables(tables: Mapping[str, "pa.Table | None"], key: str, seed: int, params: Mapping[str, Any],
                 types: Mapping[str, str]) -> dict[str, "pa.Table"]:
    """The non-``runs`` tables of one run (:func:`stored_tables`), each with ``run_key``, the
    parameters and ``seed`` in front. Empty tables are left out."""
    return {name: _with_keys(table, key, seed, params, types) for name, table in tables.items() if table is not None}


def run_row(prepared: PreparedRun, meta: Mapping[str, Any], tables: Mapping[str, "pa.Table | None"], *,
            wall_s: float, worker: str, versions: Mapping[str, str], types: Mapping[str, str]) -> dict[str, Any]:
    """The ``runs`` row of one run: key, parameters, seed, aggregates (over ``tables``, as
    :func:`stored_tables` gives them), wall times and the provenance that re-runs it exactly;
    ``meta`` is the results' ``meta`` as the core wrote it."""
    from ...simulation import PROVENANCE_FORMAT, scenario_hash

    spec = prepared.spec
    command = None
    if not spec.source.startswith("<"):
        parts = ["vegaslab", "run", spec.source, "--no-plots", "--seed", str(prepared.seed)]
        for o in spec.overrides:
            parts += ["--set", o]
        command = shlex.join(parts)
    row: dict[str, Any] = {"run_key": prepared.key}
    row.update({name: param_value(spec.params.get(name), kind) for name, kind in types.items()})
    row["seed"] = prepared.seed
    row["scenario_id"] = meta.get("scenario")
    row.update(_aggregates(tables.get("flows"), tables.get("queues")))
    row.update({
        "events": meta.get("events"),
        "duration_s": meta.get("duration_s"),
        "sim_wall_s": meta.get("wall_time_s"),
        "wall_s": float(wall_s),
        "worker": worker,
        "source": spec.source,
        "overrides": list(spec.overrides),
        "core_version": versions.get("core_version"),
        "vegaslab_version": versions.get("vegaslab_version"),
        "source_revision": versions.get("source_revision"),
        "provenance_format": PROVENANCE_FORMAT,
        "scenario_sha256": scenario_hash(json.loads(prepared.normalized)),
        "command": command,
        "scenario": prepared.normalized,
        # The client's source name, never the worker's temporary copy of the scenario file.
        # In the core's key order; wall_time_s (machine-dependent) is kept apart in sim_wall_s
        # and its place held by null, so the stored meta is the same on every machine.
        "meta": json.dumps({**{k: (None if k == "wall_time_s" else v) for k, v in meta.items()},
                            "source": spec.source}, allow_nan=True),
    })
    return row


def runs_table(rows: Sequence[Mapping[str, Any]], types: Mapping[str, str]) -> "pa.Table":
    """The ``runs`` table of a batch of run rows, with fixed column types (so that every
    commit's ``runs`` file has the same schema, parameters aside)."""
    import pyarrow as pa

    fields = [pa.field("run_key", pa.string())]
    fields += [pa.field(name, _arrow_type(kind)) for name, kind in types.items()]
    fields += [
        pa.field("seed", pa.int64()), pa.field("scenario_id", pa.string()),
        pa.field("flows", pa.int64()), pa.field("throughput_bps_total", pa.float64()),
        pa.field("goodput_bps_total", pa.float64()), pa.field("jain_throughput", pa.float64()),
        pa.field("retransmitted_pkts_total", pa.int64()), pa.field("timeouts_total", pa.int64()),
        pa.field("dropped_pkts_total", pa.int64()), pa.field("queue_dropped_pkts_total", pa.int64()),
        pa.field("flows_completed", pa.int64()), pa.field("completion_time_s_max", pa.float64()),
        pa.field("events", pa.int64()), pa.field("duration_s", pa.float64()),
        pa.field("sim_wall_s", pa.float64()), pa.field("wall_s", pa.float64()), pa.field("worker", pa.string()),
        pa.field("source", pa.string()), pa.field("overrides", pa.list_(pa.string())),
        pa.field("core_version", pa.string()), pa.field("vegaslab_version", pa.string()),
        pa.field("source_revision", pa.string()), pa.field("provenance_format", pa.int64()),
        pa.field("scenario_sha256", pa.string()), pa.field("command", pa.string()),
        pa.field("scenario", pa.string()), pa.field("meta", pa.string()), pa.field("layout", pa.string()),
    ]
    return pa.Table.from_pylist(list(rows), schema=pa.schema(fields))


@dataclass
class StoredRun:
    """One finished run as the writer receives it: its ``runs`` row and its other tables."""

    key: str
    row: dict[str, Any]
    tables: dict[str, "pa.Table"]
    params: Mapping[str, str]

