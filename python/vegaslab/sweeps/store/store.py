"""A results store as a Python object: :class:`Store` opens (or creates) the directory, checks
that it is a store of a format this vegaslab reads, and answers what is stored (its verified
commits, the keys of its runs, the specs still missing) and the tables and
:class:`vegaslab.Results` of stored runs; writing goes through its single writer
(:meth:`Store.writer`). The work is done in the modules beside it (:mod:`.commits`,
:mod:`.read`, :mod:`.writer`); this is the one door the engine, a sweep's results and the
studies go through.
"""

from __future__ import annotations

import json
import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator

from ...safe_io import ForeignFileError, UnsafePathError, make_dir, read_json, write_file
from .commits import Broken, Commit, scan
from .errors import StoreError
from .format import (COMPACT_TARGET_BYTES, KEY_COLUMNS, MAX_STORE_FILE_BYTES, READABLE_STORE_FORMATS, STORE_DIRS,
                     STORE_FILE, STORE_FILE_SCHEMA, STORE_FORMAT, check_table)
from .keys import PreparedRun, RunSpec, prepared_runs
from .read import load_results, read_arrow
from .tables import param_types, param_value
from .writer import StoreWriter

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

    from ...results import Results


class Store:
    """A results store at ``path`` (created on first use unless ``create=False``).

    Reading never locks: :meth:`read` and :meth:`missing` see every commit that has landed,
    also while a sweep is writing. Writing goes through :meth:`writer` (one writer at a
    time)."""

    def __init__(self, path: str | os.PathLike, *, create: bool = True) -> None:
        self.path = Path(path)
        meta = self.path / STORE_FILE
        if not os.path.lexists(meta):
            if not create:
                raise StoreError(f"{self.path}: not a vegaslab store (no {STORE_FILE})")
            self._create()
        try:
            info = read_json(meta, max_bytes=MAX_STORE_FILE_BYTES, schema=STORE_FILE_SCHEMA)
        except ForeignFileError as exc:
            raise StoreError(f"{exc}; not a vegaslab store, or a damaged one: use another directory") from None
        except OSError as exc:
            raise StoreError(f"{meta}: unreadable: {exc.strerror or exc}") from None
        if info["format"] not in READABLE_STORE_FORMATS:
            raise StoreError(f"{meta}: store format {info['format']!r}; "
                             f"this vegaslab reads format {STORE_FORMAT}; its runs would be computed again: use a "
                             "new directory (another --out) or delete this one")
        for name in STORE_DIRS:  # never followed out of the store
            d = self.path / name
            if os.path.lexists(d) and not stat.S_ISDIR(os.lstat(d).st_mode):
                raise StoreError(f"{d}: is not a directory (a symbolic link or a file); a store's {name}/ is a "
                                 "directory vegaslab makes: move it away")
        #: The store's format: an older readable one is read, never written (:meth:`writer`).
        self.format: int = info["format"]

    def _create(self) -> None:
        """Make a new store at :attr:`path`: only in an absent or empty directory (or one
        holding just an empty ``data/``, what a creation cut short leaves), with ``data/``
        and ``store.json`` written under the one rule (:mod:`vegaslab.safe_io`)."""
        if os.path.lexists(self.path) and not self.path.is_dir():
            raise StoreError(f"{self.path}: exists and is not a directory")
        if self.path.is_dir():
            others = sorted(p.name for p in self.path.iterdir()
                            if not (p.name == "data" and not p.is_symlink() and p.is_dir() and not any(p.iterdir())))
            if others:
                raise StoreError(f"{self.path}: holds other files ({', '.join(others[:3])}) and is not a vegaslab "
                                 "store; choose an empty or new directory")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            make_dir(self.path, "data")
            write_file(self.path, STORE_FILE, json.dumps({"format": STORE_FORMAT, "kind": "vegaslab results store",
                                                          "layout": "docs/store-format.md"}, indent=2) + "\n")
        except UnsafePathError as exc:
            raise StoreError(str(exc)) from None
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create the store: {exc.strerror or exc}") from None

    # ------------------------------------------------------------------ commits

    def commits(self) -> list[Commit]:
        """The verified commits, in id order."""
        return scan(self.path).commits

    def broken(self) -> list[Broken]:
        """Commit directories that failed verification (their runs count as missing)."""
        return scan(self.path).broken

    def superseded(self) -> list[Commit | Broken]:
        """Commits that a merged commit replaces, left behind by a compaction that was
        stopped before it retired them (the next writer removes them). Never read."""
        return scan(self.path).superseded

    def keys(self) -> set[str]:
        """The keys of every stored (verified) run."""
        return {k for c in self.commits() for k in c.runs}

    def __len__(self) -> int:
        return len(self.keys())

    def __contains__(self, key: object) -> bool:
        return key in self.keys()

    def missing(self, specs: Iterable[RunSpec | PreparedRun]) -> list[RunSpec]:
        """The specs (in order, duplicates kept) whose runs are not stored: not in a verified
        commit, or rejected by the core (those are never stored)."""
        prepared = prepared_runs(specs)
        stored = self.keys()
        return [p.spec for p in prepared if p.error or p.key not in stored]

    # ------------------------------------------------------------------ reading

    def files(self, table: str) -> list[Path]:
        """The Parquet files of ``table`` in verified commits (for pyarrow, DuckDB, polars)."""
        check_table(table)
        name = f"{table}.parquet"
        return [c.path / name for c in self.commits() if name in c.files]

    def read_arrow(self, table: str = "flows", keys: Iterable[str] | None = None) -> "pa.Table":
        """``table`` over every verified commit (or only the runs ``keys``), as one Arrow
        table: schemas unified by name (a parameter one commit lacks is null there), each run
        once, rows ordered by run key (then as the core wrote them)."""
        return read_arrow(self.path, table, keys)

    def read(self, table: str = "flows", keys: Iterable[str] | None = None) -> "pd.DataFrame":
        """:meth:`read_arrow` as a pandas DataFrame (a fresh RangeIndex)."""
        return self.read_arrow(table, keys).to_pandas()

    def results(self, specs: Iterable[RunSpec | PreparedRun], table: str = "flows") -> "pd.DataFrame":
        """The rows of ``table`` for ``specs`` (stored ones; see :meth:`missing`), one block
        per spec in spec order, with the specs' own parameter columns (see the package's
        docstring: stored parameter columns are those of the spec that computed the run)."""
        import pandas as pd

        prepared = [p for p in prepared_runs(specs) if not p.error]
        types = param_types(prepared)
        stored_params = {n for c in self.commits() for n in c.params}
        rows = self.read(table, keys={p.key for p in prepared})
        rows = rows.drop(columns=[c for c in stored_params if c in rows.columns and c not in KEY_COLUMNS])
        front = pd.DataFrame({"run_key": [p.key for p in prepared], "__spec": range(len(prepared))})
        for name, kind in types.items():
            values = [param_value(p.spec.params.get(name), kind) if name in p.spec.params else None for p in prepared]
            front[name] = pd.array(values, dtype={"int64": "Int64", "double": "Float64", "string": "string",
                                                  "bool": "boolean"}[kind])
        merged = front.merge(rows, on="run_key", how="inner", sort=False)
        merged = merged.sort_values("__spec", kind="stable").drop(columns="__spec").reset_index(drop=True)
        return merged

    def load_results(self, keys: Iterable[str]) -> dict[str, "Results"]:
        """The :class:`vegaslab.Results` of each stored run among ``keys``, as
        :func:`vegaslab.run` returns it: the same tables (the key, parameter and seed
        columns removed), the core's ``meta`` and ``meta["provenance"]`` rebuilt from the
        run's recorded provenance; each table has exactly the columns the core wrote for that
        run, in its order (``runs.layout``), whatever other runs share its commit. Left out:
        runs not stored, and runs stored with a parameter named like a column the core wrote
        (the parameter replaced that column in the store, so the core's numbers are gone).

        Reads one commit at a time and cuts its tables by run in Arrow, so that the peak
        memory is the Results themselves plus one commit (reading each table whole and
        grouping it in pandas took 10 GB and 32 s for ``reproduce --all``'s 765 runs)."""
        return load_results(self.path, keys)

    # ------------------------------------------------------------------ writing

    @contextmanager
    def writer(self, *, batch_runs: int = 256, flush_s: float = 2.0) -> Iterator["StoreWriter"]:
        """The store's single writer: locks the store, removes what killed writers left in
        ``_tmp/``, moves broken commits to ``_quarantine/``, and commits what it is given
        (:meth:`StoreWriter.add`) in batches; the last batch is committed when the block
        ends, also on an exception or Ctrl-C. :class:`StoreLockedError` when another
        process holds the lock."""
        if self.format != STORE_FORMAT:
            raise StoreError(f"{self.path / STORE_FILE}: store format {self.format}, written by vegaslab 0.2 (column "
                             f"names without units); this vegaslab reads it but writes format {STORE_FORMAT}, and its "
                             "runs would be computed again: use a new directory (another --out) or delete this one")
        w = StoreWriter(self, batch_runs=batch_runs, flush_s=flush_s)
        try:
            yield w
        finally:
            w.close()

    def compact(self, *, min_commits: int = 2, target_bytes: int = COMPACT_TARGET_BYTES) -> int:
        """Merge the store's small commits (as the writer, so not while a sweep writes:
        :class:`StoreLockedError`); returns how many commits were merged away. See
        :meth:`StoreWriter.compact`; :func:`vegaslab.sweeps.engine.execute` does this at its end
        once a parameter set has :data:`COMPACT_MIN_COMMITS` small commits."""
        with self.writer() as w:
            return w.compact(min_commits=min_commits, target_bytes=target_bytes)
