"""Reading stored runs back: a table over the verified commits as one Arrow table, and each run's
:class:`vegaslab.Results` rebuilt as :func:`vegaslab.run` returns it.

A read never locks: it takes the verified commits (:func:`.commits.scan`) and, when a
compaction retires one of them between the scan and the read, scans again (its runs are in
the merged commit), so a reader never sees a run twice or loses one. A store of the previous
format is read with the current column names (:func:`upgrade_table`). Content that passed the
checksums yet is not what vegaslab writes (a copied store whose checksums were written to
match) is a :class:`StoreError` naming the commit, never a traceback from pyarrow.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

from ...safe_io import ForeignFileError, open_regular
from .commits import RESCANS, Commit, kept_vanishing, scan
from .errors import StoreError, gist
from .format import RENAMED_AGGREGATES, check_table

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from ...results import Results

#: Where each run's rows are in a commit's table (:func:`run_spans`), by (commit id, table,
#: the file's SHA-256 as verified): a commit's files never change once committed.
_SPANS: dict[tuple[str, str, str], dict[str, list[tuple[int, int]]]] = {}
_SPANS_MAX = 1024

#: What reading a verified commit's tables back may raise when their content is not what
#: vegaslab writes (a copied or downloaded store whose checksums were written to match).
UNREADABLE = (KeyError, TypeError, ValueError, IndexError, AttributeError, NotImplementedError, RecursionError,
              ForeignFileError)


def read_parquet(path: Path) -> "pa.Table":
    """A whole Parquet file (``ParquetFile.read``: a third of ``read_table``'s cost per
    file, which goes through the dataset layer)."""
    import pyarrow.parquet as pq

    with open_regular(path) as fh, pq.ParquetFile(fh) as f:
        return f.read()


def keyed_rows(t: "pa.Table", keys: Iterable[str]) -> "pa.Table":
    """The rows of ``t`` whose ``run_key`` is among ``keys``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return t.filter(pc.is_in(t.column("run_key"), value_set=pa.array(list(keys), pa.string())))


def rows_of(t: "pa.Table", keys: Sequence[str], c: Commit) -> "pa.Table":
    """The rows of ``t``, a table of commit ``c``, that belong to the runs ``keys`` (all of
    them, without a filter, when ``keys`` are all the commit's runs)."""
    return t if len(keys) == len(c.runs) else keyed_rows(t, keys)


def run_spans(c: Commit, table: str) -> dict[str, list[tuple[int, int]]]:
    """Where each run's rows are in a commit's ``table``: run key -> [(start, end)] row
    ranges (a run's rows are contiguous, so one range each as vegaslab writes them). Read
    from the ``run_key`` column alone, dictionary-encoded (4 bytes a row, not the 64-character
    key), and kept for the process (:data:`_SPANS`): reading a store one entry at a time
    would otherwise read the column once per entry."""
    import numpy as np
    import pyarrow.parquet as pq

    cache_key = (c.id, table, str(c.files[f"{table}.parquet"]["sha256"]))
    spans = _SPANS.get(cache_key)
    if spans is not None:
        return spans
    with open_regular(c.path / f"{table}.parquet") as fh, pq.ParquetFile(fh, read_dictionary=["run_key"]) as f:
        column = f.read(columns=["run_key"]).column("run_key")
    spans = {}
    offset = 0
    for chunk in column.chunks:
        chunk = chunk if hasattr(chunk, "indices") else chunk.dictionary_encode()
        codes = chunk.indices.to_numpy(zero_copy_only=False)
        names = chunk.dictionary.to_pylist()
        # A run's rows are contiguous: cut where the key changes.
        starts = np.concatenate(([0], np.flatnonzero(np.diff(codes)) + 1)) if len(codes) else np.array([], int)
        ends = np.append(starts[1:], len(codes))
        for start, end in zip(starts.tolist(), ends.tolist()):
            ranges = spans.setdefault(names[codes[start]], [])
            if ranges and ranges[-1][1] == offset + start:  # continued across a row group
                ranges[-1] = (ranges[-1][0], offset + end)
            else:
                ranges.append((offset + start, offset + end))
        offset += len(codes)
    if len(_SPANS) >= _SPANS_MAX:
        _SPANS.clear()
    _SPANS[cache_key] = spans
    return spans


def run_pieces(c: Commit, table: str, keys: set[str], layouts: Mapping[str, Any],
               front: set[str]) -> Iterator[tuple[str, "pa.Table"]]:
    """The rows of each run among ``keys`` in a commit's ``table``, as (key, Arrow table)
    in the table's order. Only the row groups that hold those runs and the columns they use
    are read (a commit's table is every run's rows with the union of their columns, several
    times what one reader asks for), one group at a time: a piece is given as soon as its
    last group is read, so at most the group being read and the one before it (a run's rows
    may straddle them) are held."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    spans = run_spans(c, table)
    ranges = sorted((r, k) for k in keys for r in spans.get(k, ()))
    if not ranges:
        return
    old = _old_names(c)
    with open_regular(c.path / f"{table}.parquet") as fh, pq.ParquetFile(fh) as f:
        physical = f.schema_arrow.names
        if all(layouts.get(k) for k in keys):
            wanted = {n for k in keys for n in layouts[k]["columns"].get(table, [])}
            columns = [n for n in physical if old.get(n, n) in wanted]
        else:
            columns = [n for n in physical if n not in front]
        lo = 0
        started: list[pa.Table] = []  # the slices read so far of the run at ranges[0]
        for g in range(f.metadata.num_row_groups):
            hi = lo + f.metadata.row_group(g).num_rows
            if ranges and ranges[0][0][0] < hi:
                t = upgrade_table(f.read_row_group(g, columns=columns), c)
                while ranges and ranges[0][0][0] < hi:
                    (start, end), key = ranges[0]
                    first = max(start, lo)
                    started.append(t.slice(first - lo, min(end, hi) - first))
                    if end > hi:
                        break  # continues in the next group
                    yield key, started[0] if len(started) == 1 else pa.concat_tables(started)
                    started = []
                    ranges.pop(0)
            lo = hi


def _old_names(c: Commit) -> dict[str, str]:
    """Old column name -> new for a commit written before format 3 (empty for a current one);
    the commit's parameter columns keep their names (a parameter may be called ``limit``)."""
    if c.format >= 3:
        return {}
    from ...results import RENAMED_COLUMNS

    return {o: n for o, n in {**RENAMED_COLUMNS, **RENAMED_AGGREGATES}.items() if o not in c.params}


def upgrade_table(t: "pa.Table", c: Commit) -> "pa.Table":
    """A table of commit ``c`` with the column names of the current format."""
    old = _old_names(c)
    if not old or not any(n in old for n in t.column_names):
        return t
    return t.rename_columns([old.get(n, n) for n in t.column_names])


def _upgrade_layout(layout: Any, c: Commit) -> Any:
    """A run's ``runs.layout`` with the column names of the current format."""
    old = _old_names(c)
    if old and isinstance(layout, dict) and isinstance(layout.get("columns"), dict):
        layout = {**layout, "columns": {t: [old.get(n, n) for n in cols] for t, cols in layout["columns"].items()}}
    return layout


def _unreadable(c: Commit, exc: BaseException) -> StoreError:
    """The error for a commit whose tables cannot be read back: names it and the way out."""
    return StoreError(f"{c.path}: its tables cannot be read back ({type(exc).__name__}: "
                      f"{gist(exc)}); it was not written by vegaslab, or is damaged: move it "
                      "out of data/ and run again")


def _json_cell(text: str, c: Commit) -> Any:
    """A JSON text stored in a ``runs`` table cell, parsed with the read-back rule's depth
    limit (:func:`vegaslab.safe_io.parse_json`)."""
    from ...safe_io import parse_json

    return parse_json(text, c.path / "runs.parquet")


def read_arrow(root: Path, table: str, keys: Iterable[str] | None) -> "pa.Table":
    """``table`` of the store at ``root`` (:meth:`vegaslab.sweeps.store.Store.read_arrow`)."""
    import pyarrow as pa

    check_table(table)
    wanted = set(keys) if keys is not None else None
    for attempt in range(RESCANS):
        seen: set[str] = set()
        parts = []
        try:
            for c in scan(root).commits:
                own = [k for k in c.runs if k not in seen and (wanted is None or k in wanted)]
                seen.update(own)
                name = f"{table}.parquet"
                if not own or name not in c.files:
                    continue
                try:
                    t = rows_of(upgrade_table(read_parquet(c.path / name), c), own, c)
                except UNREADABLE as exc:
                    raise _unreadable(c, exc) from None
                parts.append(t)
            break
        except FileNotFoundError:
            # A compaction retired a commit between the scan and the read: its runs are
            # in the merged commit, which the next scan sees.
            if attempt == RESCANS - 1:
                raise kept_vanishing(root) from None
    if not parts:
        return pa.table({"run_key": pa.array([], pa.string()), "seed": pa.array([], pa.int64())})
    try:
        t = pa.concat_tables(parts, promote_options="permissive")
    except UNREADABLE as exc:  # commits whose columns cannot be unified
        raise StoreError(f"{root}: the commits' {table} tables do not fit together ({type(exc).__name__}: "
                         f"{gist(exc)}); a commit was not written by vegaslab") from None
    t = t.append_column("__row", pa.array(range(t.num_rows), pa.int64()))
    return t.sort_by([("run_key", "ascending"), ("__row", "ascending")]).drop_columns(["__row"])


def load_results(root: Path, keys: Iterable[str]) -> dict[str, "Results"]:
    """The :class:`vegaslab.Results` of the stored runs among ``keys``
    (:meth:`vegaslab.sweeps.store.Store.load_results`)."""
    wanted = set(keys)
    for attempt in range(RESCANS):
        try:
            return _load_results(root, wanted)
        except FileNotFoundError:
            # A compaction retired a commit meanwhile: its runs are in the merged one.
            if attempt == RESCANS - 1:
                raise kept_vanishing(root) from None
    return {}  # pragma: no cover - the loop returns or raises


def _load_results(root: Path, wanted: set[str]) -> dict[str, "Results"]:
    """One pass of :func:`load_results`: one commit at a time, each run's rows read alone
    (:func:`run_pieces`)."""
    import pandas as pd

    from ...results import TABLES as RESULT_TABLES
    from ...results import Results, make_frame

    out: dict[str, Results] = {}
    for c in scan(root).commits:
        try:
            if not any(k in wanted and k not in out for k in c.runs):
                continue
            # Only the asked runs' rows become Python objects (a reader asking one entry's
            # runs at a time would otherwise convert every row of the commit each time).
            runs = upgrade_table(read_parquet(c.path / "runs.parquet"), c)
            picked = keyed_rows(runs, sorted(k for k in wanted if k not in out))
            rows = {row["run_key"]: row for row in picked.to_pylist()}
            layouts = {k: _upgrade_layout(_json_cell(row["layout"], c), c) if isinstance(row.get("layout"), str) else None
                       for k, row in rows.items()}
            # A run whose parameter is named like a column the core wrote had that column
            # replaced (see the package's docstring): it cannot give back the core's numbers.
            own = {k for k, lay in layouts.items() if not (lay and lay.get("shadowed"))}
            if not own:
                continue
            front = {"run_key", "seed", *c.params}
            parts: dict[str, dict[str, list[pd.DataFrame]]] = {name: {} for name in RESULT_TABLES}
            for name in RESULT_TABLES:
                if f"{name}.parquet" not in c.files:
                    continue
                for key, piece in run_pieces(c, name, own, layouts, front):
                    lay = layouts[key]
                    # Exactly the run's own columns, in the core's order: a commit's table is
                    # the union of its runs' columns (another algorithm's variables are null).
                    keep = (lay["columns"].get(name, []) if lay else
                            [n for n in piece.column_names if n not in front])
                    parts[name].setdefault(key, []).append(piece.select(keep).to_pandas())
            for key in own:
                row = rows[key]
                meta = _json_cell(row["meta"], c) if isinstance(row.get("meta"), str) else {}
                if row.get("sim_wall_s") is not None and not math.isnan(row["sim_wall_s"]):
                    meta["wall_time_s"] = float(row["sim_wall_s"])  # stored apart (see run_row)
                elif meta.get("wall_time_s", 0) is None:
                    del meta["wall_time_s"]
                meta["provenance"] = {
                    "format": int(row["provenance_format"]), "source": row["source"],
                    "overrides": [str(o) for o in row["overrides"]], "seed": int(row["seed"]),
                    "scenario_sha256": row["scenario_sha256"], "vegaslab_version": row["vegaslab_version"],
                    "core_version": row["core_version"], "source_revision": row["source_revision"],
                    "command": row["command"], "scenario": _json_cell(row["scenario"], c),
                }
                tables = {}
                for name, (_, columns) in RESULT_TABLES.items():
                    # Taken out, so that each piece is freed once its run's typed frame
                    # (a copy) is made: the pieces and the frames are never all held at once.
                    got = parts[name].pop(key, None)
                    df = None if not got else (got[0] if len(got) == 1 else pd.concat(got, ignore_index=True))
                    tables[name] = make_frame(df, columns)
                out[key] = Results(meta=meta, **tables)
        except UNREADABLE as exc:
            raise _unreadable(c, exc) from None
    return out
