"""The store's single writer: it buffers finished runs and commits them in batches, each batch
atomically, and merges small commits into larger ones (compaction).

A commit is written into ``_tmp/<id>/`` (its tables and ``_commit.json``, listing the batch's
run keys and every file's SHA-256, size and row count), each file synced, and renamed to
``data/<id>/``: one rename, so a reader sees all of a batch or none of it, and a killed writer
leaves only a ``_tmp`` directory. When it opens, the writer takes the store's lock
(:mod:`.lock`), removes what killed writers left in ``_tmp/`` and the commits a merged commit
replaces, and moves broken commits to ``_quarantine/`` so that readers of the raw files stop
seeing them; it hashes every commit to decide that, whatever this process verified before.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ...safe_io import make_dir, make_dirs, sha256_file, write_file
from .commits import Broken, Commit, scan
from .compaction import MemberChanged, MergedTable, groups, merged
from .errors import StoreWriteError
from .format import COMMIT_FILE, COMPACT_MIN_COMMITS, COMPACT_TARGET_BYTES, STORE_FORMAT, TABLES
from .lock import lock, unlock
from .tables import StoredRun, run_layout, runs_table

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from .store import Store


class StoreWriter:
    """Commits finished runs to a :class:`Store` (see :meth:`Store.writer`)."""

    def __init__(self, store: "Store", *, batch_runs: int, flush_s: float) -> None:
        import time

        self.store = store
        self.batch_runs = max(1, int(batch_runs))
        self.flush_s = float(flush_s)
        self._clock = time.monotonic
        self._buffer: list[StoredRun] = []
        self._buffered: set[str] = set()
        self._first_at = 0.0
        self._lock_fd = lock(store.path)
        self.quarantined: list[Broken] = []
        try:
            self._clean()
            self._stored = store.keys()
        except BaseException:
            self._unlock()
            raise
        self.commits_written = 0
        #: Merged commits written by :meth:`compact`.
        self.merges_written = 0

    def _unlock(self) -> None:
        unlock(self._lock_fd)
        self._lock_fd = None

    def _clean(self) -> None:
        """Remove what killed writers left: ``_tmp/`` (unfinished commits and retired ones
        not yet deleted) and commits a merged commit replaces; quarantine broken commits.
        Every commit is hashed here, whatever this process verified before (``fresh``)."""
        root = self.store.path
        shutil.rmtree(root / "_tmp", ignore_errors=True)  # a real directory (Store checks), or absent
        make_dir(root, "data")  # the commits' directory, made again if it went missing
        found = scan(root, fresh=True)
        self._retire([old.path for old in found.superseded])
        for b in found.broken:
            # A directory of our own per broken commit: the commit (or a planted link, moved
            # as the link itself) inside it, and why beside it.
            dest = make_dirs(root, "_quarantine", f"{_quarantine_name(b.id)}-{uuid.uuid4().hex[:6]}")
            os.rename(b.path, dest / "commit")
            write_file(dest, "REASON.txt", f"data/{b.id}: {b.reason}\n")
            self.quarantined.append(b)

    def _retire(self, paths: Iterable[Path]) -> None:
        """Remove commit directories: each first renamed out of ``data/`` (one atomic step,
        so a reader never sees a commit with some of its files gone), then deleted. Not
        synced: after a crash a retired commit may be back, and is superseded again."""
        gone = make_dirs(self.store.path, "_tmp", f"retired-{uuid.uuid4().hex}")
        for path in paths:
            try:
                os.rename(path, gone / path.name)
            except FileNotFoundError:
                continue
        shutil.rmtree(gone, ignore_errors=True)

    # -- adding and committing

    @property
    def stored(self) -> set[str]:
        """Keys stored (before this writer opened, and committed by it since)."""
        return self._stored

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def add(self, run: StoredRun) -> bool:
        """Buffer a finished run; commit the buffer when it holds ``batch_runs`` runs or its
        oldest run waited ``flush_s`` seconds. Returns whether a commit happened. A run that
        is already stored or buffered is ignored (a store never holds a run twice)."""
        if run.key in self._stored or run.key in self._buffered:
            return False
        if not self._buffer:
            self._first_at = self._clock()
        self._buffer.append(run)
        self._buffered.add(run.key)
        return self.maybe_flush()

    def maybe_flush(self) -> bool:
        """Commit the buffer if it is full or old enough (call it while waiting for runs)."""
        if self._buffer and (len(self._buffer) >= self.batch_runs or self._clock() - self._first_at >= self.flush_s):
            self.flush()
            return True
        return False

    def flush(self) -> None:
        """Commit every buffered run now (one commit)."""
        if not self._buffer:
            return
        batch, self._buffer = self._buffer, []
        self._buffered = set()
        self._commit(batch)
        self._stored.update(r.key for r in batch)

    def _commit(self, batch: list[StoredRun]) -> None:
        import pyarrow as pa

        params: dict[str, str] = {}
        for r in batch:
            for name, kind in r.params.items():
                seen = params.setdefault(name, kind)
                if seen != kind:  # only int64 and double can meet in one batch (param_types)
                    params[name] = "double"
        tables: dict[str, pa.Table] = {}
        for table in TABLES:
            if table == "runs":
                tables[table] = runs_table([{**r.row, "layout": run_layout(r)} for r in batch], params)
            else:
                # The per-run layouts are in runs.layout, not in the batch's schema.
                parts = [r.tables[table].replace_schema_metadata(None) for r in batch if table in r.tables]
                if parts:
                    tables[table] = pa.concat_tables(parts, promote_options="permissive")
        self._write_commit([r.key for r in batch], params, tables, labels=[_run_label(r.row, params) for r in batch])

    def _write_commit(self, runs: Sequence[str], params: Mapping[str, str],
                      tables: Mapping[str, "pa.Table | MergedTable"], replaces: Sequence[str] = (),
                      labels: Sequence[str] = ()) -> Commit:
        """Write a commit: its tables and ``_commit.json`` into ``_tmp/<id>/``, each synced,
        then one rename to ``data/<id>/`` (the commit point). A :class:`MergedTable` is written
        part by part; when a part's file no longer has its recorded bytes
        (:class:`MemberChanged`), nothing is left in ``_tmp/``."""
        import pyarrow.parquet as pq

        root = self.store.path
        cid = uuid.uuid4().hex
        tmp = None
        doing = "_tmp/"
        try:
            tmp = make_dirs(root, "_tmp", cid)
            files: dict[str, dict[str, Any]] = {}
            for table in TABLES:
                data = tables.get(table)
                if data is None:
                    continue
                f = tmp / f"{table}.parquet"
                doing = str(f)
                if isinstance(data, MergedTable):
                    rows = data.write(f)
                else:
                    pq.write_table(data, f)
                    rows = data.num_rows
                with f.open("rb") as fh:
                    os.fsync(fh.fileno())
                files[f.name] = {"sha256": sha256_file(f), "bytes": f.stat().st_size, "rows": rows}
            record: dict[str, Any] = {"format": STORE_FORMAT, "commit": cid, "runs": list(runs),
                                      "params": dict(params), "files": files}
            if replaces:
                record["replaces"] = list(replaces)
            doing = str(tmp / COMMIT_FILE)
            write_file(tmp, COMMIT_FILE, json.dumps(record, indent=1) + "\n", fsync=True)
            _fsync_dir(tmp)
            doing = str(root / "data" / cid)
            os.rename(tmp, root / "data" / cid)  # the commit point
            _fsync_dir(root / "data")
        except MemberChanged:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            raise
        except OSError as exc:
            # Disk full, quota, I/O error: nothing half-written stays, and the message says
            # which store, which runs and which file (the runs are computed again next time).
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            what = "merge of" if replaces else "commit of"
            named = list(labels) or [f"run {k[:12]}" for k in runs]
            shown = "; ".join(named[:3]) + (f"; and {len(named) - 3} more" if len(named) > 3 else "")
            raise StoreWriteError(f"{root}: {what} {len(runs)} run{'s' if len(runs) != 1 else ''} ({shown}) failed writing "
                                  f"{exc.filename or doing}: {exc.strerror or exc}; the store keeps every run committed "
                                  "before, and these runs count as missing") from None
        if replaces:
            self.merges_written += 1
        else:
            self.commits_written += 1
        return Commit(cid, root / "data" / cid, tuple(runs), dict(params), files, tuple(replaces))


    # -- compaction

    def compact(self, *, min_commits: int = COMPACT_MIN_COMMITS, target_bytes: int = COMPACT_TARGET_BYTES) -> int:
        """Merge small commits into larger ones; returns how many commits were merged away.

        Commits are merged only with commits of the same parameter columns (so each merged
        commit's tables have one schema and :meth:`Store.load_results` sees the same
        parameters per run as before). A commit of at least ``target_bytes / 2`` is left
        alone; the small ones of a parameter set are merged, in id order, into commits of
        at most ``target_bytes`` (which also bounds the memory a merge uses), once there are
        ``min_commits`` of them.

        Each merged commit is written like any other (``_tmp/`` then one rename) with
        ``replaces``, the ids it merged; only then are those retired, one rename out of
        ``data/`` each. Stopped in between (killed, power cut), the store holds both: a
        reader leaves out the replaced commits (and would read every run once anyway, since
        their rows are the same), and the next writer removes them. The bytes copied are
        hashed as they are read, so a file damaged since it was verified is never laundered
        into a merged commit: that group is left as it is, and the next writer quarantines
        the damaged commit."""
        self.flush()
        done = 0
        for members in groups(scan(self.store.path).commits, min_commits=min_commits, target_bytes=target_bytes):
            if self._merge(members):
                done += len(members)
        return done

    def _merge(self, members: Sequence[Commit]) -> bool:
        """One merged commit of ``members`` (same parameters, id order), then retire them.
        False (nothing changed) when a file no longer has its recorded bytes."""
        m = merged(members)
        if m is None:
            return False
        try:
            self._write_commit(m.runs, m.params, m.tables, replaces=m.replaces)
        except MemberChanged:
            return False
        self._retire([c.path for c in members])
        return True

    def close(self) -> None:
        """Commit what is buffered and release the lock."""
        try:
            self.flush()
            try:
                (self.store.path / "_tmp").rmdir()  # only when empty
            except OSError:
                pass
        finally:
            self._unlock()


def _fsync_dir(path: Path) -> None:
    """Sync a directory, so that the entries renamed into it survive a crash (where the
    platform has directory handles)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _quarantine_name(entry: str) -> str:
    """A plain name for the quarantine directory of ``data/<entry>``: its letters, digits,
    ``_`` and ``-`` (any name may stand in ``data/``: ``.ipynb_checkpoints``, 250 characters)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", entry).strip("_")[:64] or "entry"


def _run_label(row: Mapping[str, Any], params: Mapping[str, str]) -> str:
    """A run as a person finds it: its scenario, parameters and seed, then its key's start."""
    values = ", ".join(f"{name}={row.get(name)}" for name in params)
    return (f"{Path(str(row.get('source') or '?')).name}{f' [{values}]' if values else ''} seed {row.get('seed')} "
            f"(run {str(row.get('run_key'))[:12]})")
