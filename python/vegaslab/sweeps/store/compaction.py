"""What a compaction merges, and the merged tables: a long sweep commits every few seconds and
leaves hundreds of small commits, and reading hundreds of small files is what makes a large
result slow to open. The writer (:meth:`vegaslab.sweeps.store.StoreWriter.compact`) writes
what this module builds as one commit and only then retires the commits it replaces.

Commits are merged only with commits of the same parameter columns, so each merged commit's
tables have one schema and every run keeps the parameters it had. The bytes copied are hashed
as they are read, so a file damaged since it was verified is never laundered into a merged
commit with fresh checksums.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ...safe_io import ForeignFileError, read_bytes
from .commits import Commit
from .format import TABLES
from .read import rows_of

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa


@dataclass(frozen=True)
class Merged:
    """A merged commit to write: its ``runs`` (each once), parameter types, ``tables`` and the
    ids of the commits it ``replaces``."""

    runs: list[str]
    params: dict[str, str]
    tables: dict[str, "pa.Table"]
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
    """The merged commit of ``members`` (same parameters, id order); None when a file no
    longer has the bytes its commit records."""
    import pyarrow as pa

    runs: list[str] = []
    seen: set[str] = set()
    owned: list[list[str]] = []
    for c in members:
        own = [k for k in c.runs if k not in seen]  # each run once: the first commit's, as readers do
        seen.update(own)
        runs.extend(own)
        owned.append(own)
    tables: dict[str, pa.Table] = {}
    for table in TABLES:
        parts = []
        for c, own in zip(members, owned):
            name = f"{table}.parquet"
            if not own or name not in c.files:
                continue
            t = _read_verified(c.path / name, c.files[name])
            if t is None:
                return None
            parts.append(rows_of(t, own, c))
        if parts:
            tables[table] = pa.concat_tables(parts, promote_options="permissive")
    # What the members replaced too: a commit left over from an earlier merge stays
    # superseded whichever merged commit survives.
    replaces = list(dict.fromkeys([c.id for c in members] + [r for c in members for r in c.replaces]))
    return Merged(runs, dict(members[0].params), tables, replaces)


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
