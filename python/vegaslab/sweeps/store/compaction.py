"""What a compaction merges, and the merged tables: a long sweep commits every few seconds and
leaves hundreds of small commits, and reading hundreds of small files is what makes a large
result slow to open. The writer (:meth:`vegaslab.sweeps.store.StoreWriter.compact`) writes
what this module builds as one commit and only then retires the commits it replaces.

Commits are merged only with commits of the same parameter columns, so each merged commit's
tables have one schema and every run keeps the parameters it had. The bytes copied are hashed
as they are read, so a file damaged since it was verified is never laundered into a merged
commit with fresh checksums. Each merged table is written one member commit at a time
(:class:`MergedTable`), so a merge holds one member's table, not all of them (merging
``reproduce --all``'s commits at once held 3.8 GB).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ...safe_io import ForeignFileError, open_regular, read_bytes
from .commits import Commit
from .format import TABLES
from .read import keyed_rows

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa


class MemberChanged(Exception):
    """A merged commit's member file no longer has the bytes its commit records."""


class MergedTable:
    """A table of a merged commit, written one member at a time: ``schema`` is the members'
    union, and each source is (file, its recorded size and SHA-256, the run keys to keep or
    None for all). Each part is read from verified bytes when it is written and conformed to
    the union (a column it lacks is null, a type it has narrower is cast), as
    ``pa.concat_tables(promote_options="permissive")`` does."""

    def __init__(self, schema: "pa.Schema", sources: Sequence[tuple[Path, Mapping[str, Any], Sequence[str] | None]]):
        self.schema = schema
        self.sources = sources

    def write(self, path: Path) -> int:
        """Write the table to ``path``; its number of rows. Raises :class:`MemberChanged`."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = 0
        with pq.ParquetWriter(path, self.schema) as writer:
            for file, meta, keep in self.sources:
                t = _read_verified(file, meta)
                if t is None:
                    raise MemberChanged(str(file))
                if keep is not None:
                    t = keyed_rows(t, keep)
                columns = [(t.column(f.name) if t.column(f.name).type == f.type else t.column(f.name).cast(f.type))
                           if f.name in t.column_names else pa.nulls(t.num_rows, f.type) for f in self.schema]
                writer.write_table(pa.Table.from_arrays(columns, schema=self.schema))
                rows += t.num_rows
                del t, columns
        return rows


@dataclass(frozen=True)
class Merged:
    """A merged commit to write: its ``runs`` (each once), parameter types, ``tables`` and the
    ids of the commits it ``replaces``."""

    runs: list[str]
    params: dict[str, str]
    tables: dict[str, MergedTable]
    replaces: list[str]


def groups(commits: Iterable[Commit], *, min_commits: int, target_bytes: int) -> list[list[Commit]]:
    """The commits to merge, each group into one commit: the small commits (under
    ``target_bytes / 2``) of each parameter set, once it has ``min_commits`` of them (at least
    2), in id order, cut into groups of at most ``target_bytes`` (which also bounds the memory
    a merge uses). A group of one is left out."""
    small: dict[tuple, list[Commit]] = {}
    for c in commits:
        if c.bytes < target_bytes // 2:
            small.setdefault(tuple(sorted(c.params.items())), []).append(c)
    out: list[list[Commit]] = []
    for group in small.values():
        if len(group) < max(2, min_commits):
            continue
        bins: list[list[Commit]] = [[]]
        size = 0
        for c in group:
            if bins[-1] and size + c.bytes > target_bytes:
                bins.append([])
                size = 0
            bins[-1].append(c)
            size += c.bytes
        out += [members for members in bins if len(members) >= 2]
    return out


def merged(members: Sequence[Commit]) -> Merged | None:
    """The merged commit of ``members`` (same parameters, id order); None when a file cannot
    be read. A file whose bytes changed since it was verified is found when the table is
    written (:class:`MemberChanged`)."""
    import pyarrow as pa

    runs: list[str] = []
    seen: set[str] = set()
    owned: list[list[str]] = []
    for c in members:
        own = [k for k in c.runs if k not in seen]  # each run once: the first commit's, as readers do
        seen.update(own)
        runs.extend(own)
        owned.append(own)
    tables: dict[str, MergedTable] = {}
    for table in TABLES:
        name = f"{table}.parquet"
        sources = [(c, own) for c, own in zip(members, owned) if own and name in c.files]
        if not sources:
            continue
        try:
            schemas = [_parquet_schema(c.path / name) for c, _ in sources]
        except (OSError, ForeignFileError, pa.ArrowException):
            return None
        # The union pa.concat_tables(promote_options="permissive") would make of the parts.
        tables[table] = MergedTable(pa.unify_schemas(schemas, promote_options="permissive"),
                                    [(c.path / name, c.files[name], own if len(own) != len(c.runs) else None)
                                     for c, own in sources])
    # What the members replaced too: a commit left over from an earlier merge stays
    # superseded whichever merged commit survives.
    replaces = list(dict.fromkeys([c.id for c in members] + [r for c in members for r in c.replaces]))
    return Merged(runs, dict(members[0].params), tables, replaces)


def _parquet_schema(path: Path) -> "pa.Schema":
    """The Arrow schema of a Parquet file, from its footer alone."""
    import pyarrow.parquet as pq

    with open_regular(path) as fh, pq.ParquetFile(fh) as f:
        return f.schema_arrow


def _read_verified(path: Path, meta: Mapping[str, Any]) -> "pa.Table | None":
    """The Parquet table at ``path`` parsed from bytes that have the size and SHA-256
    ``meta`` records (one read, hashed and parsed from memory); None when they differ or the
    file cannot be read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        data = read_bytes(path, max_bytes=int(meta.get("bytes") or 0))
    except (OSError, ForeignFileError):
        return None
    if len(data) != meta.get("bytes") or hashlib.sha256(data).hexdigest() != meta.get("sha256"):
        return None
    return pq.ParquetFile(pa.BufferReader(data)).read()
