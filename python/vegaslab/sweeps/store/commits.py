"""Which commits of a store count: each directory under ``data/`` is verified before any of its
runs is trusted, and the listing is taken so that a reader racing a compaction sees every run
once.

A commit counts only when every file its ``_commit.json`` lists has the recorded size and
SHA-256, is a Parquet table that starts with ``run_key`` and ``seed``, and the directory holds
no other file; otherwise it is *broken* and its runs are missing. The whole commit goes,
because each of its files holds rows of all its runs. A commit that a verified merged commit
replaces (and whose runs that one holds) is *superseded*: left out, since its runs are read
from the merged commit.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...safe_io import ForeignFileError, open_regular, read_json, sha256_file
from .errors import StoreError, gist
from .format import COMMIT_FILE, COMMIT_SCHEMA, MAX_COMMIT_FILE_BYTES, PLAIN_FILE, READABLE_STORE_FORMATS, STORE_FORMAT


@dataclass(frozen=True)
class Commit:
    """A committed batch: its ``id``, directory, run keys, parameter types and files, and the
    ids of the commits it ``replaces`` (a merged commit of
    :meth:`vegaslab.sweeps.store.StoreWriter.compact`)."""

    id: str
    path: Path
    runs: tuple[str, ...]
    params: Mapping[str, str]
    files: Mapping[str, Mapping[str, Any]]
    replaces: tuple[str, ...] = ()
    #: Its ``_commit.json`` format (:data:`READABLE_STORE_FORMATS`).
    format: int = STORE_FORMAT

    @property
    def bytes(self) -> int:
        """The size of its table files."""
        return sum(int(m.get("bytes") or 0) for m in self.files.values())


@dataclass(frozen=True)
class Broken:
    """A commit directory that failed verification, and why (its runs count as missing)."""

    id: str
    path: Path
    reason: str


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found under ``data/``: the live ``commits`` in id order, the ``broken``
    ones, and the ``superseded`` ones (left out of both)."""

    commits: list[Commit]
    broken: list[Broken]
    superseded: list[Commit | Broken]


#: Commits this process verified: (device, inode, name of the directory) -> (the commit, the
#: directory's stamp when it was verified; see :func:`_stamp`). A commit is hashed once per
#: process, not once per :class:`vegaslab.sweeps.store.Store` object (a sweep's result is read
#: through several), and again whenever any of its files' size, modification time, change time
#: or inode moved. Writing a file or replacing it moves those, and the change time cannot be set
#: back, so what this skips is only a re-read of bytes the process already checked: it
#: would catch decay of the disk under unchanged metadata, nothing else. The writer does not
#: use it (:meth:`vegaslab.sweeps.store.Store.writer` hashes every commit when it opens: the
#: check that decides what is recomputed and quarantined), and a merge hashes the bytes it copies.
_VERIFIED: dict[tuple, tuple[Commit, tuple]] = {}
_VERIFIED_MAX = 65536
#: How many times a scan lists ``data/`` again when a directory vanished under it (each time
#: means a compaction retired a commit meanwhile); readers retry as often.
RESCANS = 8


def kept_vanishing(root: Path) -> StoreError:
    """The error when commits vanished under every one of :data:`RESCANS` reads of the store."""
    return StoreError(f"{root}: commits kept vanishing while the store was read ({RESCANS} times: "
                      "compactions in quick succession); read again")


def scan(root: Path, *, fresh: bool = False) -> Scan:
    """Every commit directory under ``root/data/``, verified: the live commits in id order, the
    broken ones, and those a verified merged commit replaces and whose runs it holds.

    A directory that vanishes while it is checked was retired by a compaction, which
    renames the merged commit into ``data/`` before it retires anything: the listing is
    taken again (so the merged commit is seen), and a reader racing a compaction never
    loses a run. A commit is hashed again only when the ``stat`` of one of its files
    (size, modification and change time, inode) differs from when this process last
    verified it, unless ``fresh``: see :data:`_VERIFIED`."""
    data = root / "data"
    for _attempt in range(RESCANS):
        good: list[Commit] = []
        broken: list[Broken] = []
        vanished = False
        try:
            names = sorted(os.listdir(data))
        except FileNotFoundError:
            return Scan(good, broken, [])
        for name in names:
            d = data / name
            try:
                mode = os.lstat(d).st_mode
            except FileNotFoundError:
                vanished = True
                continue
            if stat.S_ISLNK(mode):  # never followed: set aside like a broken commit
                broken.append(Broken(name, d, f"{d}: a symbolic link, not a commit directory; not followed"))
                continue
            if not stat.S_ISDIR(mode):
                continue  # a stray file: not a commit
            commit, reason = _checked(d, fresh)
            if commit is not None:
                good.append(commit)
            elif not d.exists():
                vanished = True
            else:
                broken.append(Broken(d.name, d, reason))
        if not vanished:
            break
    else:
        raise kept_vanishing(root)
    dead = _superseded_ids(good, broken)
    return Scan([c for c in good if c.id not in dead], [b for b in broken if b.id not in dead],
                [c for c in good if c.id in dead] + [b for b in broken if b.id in dead])


def _superseded_ids(good: Sequence[Commit], broken: Sequence[Broken]) -> set[str]:
    """The ids of commits that a verified commit replaces and whose runs it all holds
    (so leaving them out loses nothing)."""
    by_id = {c.id: c for c in good}
    dead: set[str] = set()
    for c in good:
        if not c.replaces:
            continue
        holds = set(c.runs)
        for old in c.replaces:
            if old == c.id:
                continue
            if old in by_id and not set(by_id[old].runs) <= holds:
                continue  # not what this commit merged: keep it
            dead.add(old)
    # A replaced commit that is broken now holds nothing the merged one lacks (the merge
    # checked every byte it copied); a broken commit nobody replaces stays broken.
    return {d for d in dead if d in by_id or any(b.id == d for b in broken)}


def _checked(d: Path, fresh: bool) -> tuple[Commit | None, str]:
    stamp = _stamp(d)
    if not stamp:
        return None, f"{d}: unreadable or vanished"
    cache_key = stamp[0]
    cached = None if fresh else _VERIFIED.get(cache_key)
    if cached is not None and cached[1] == stamp:
        commit = cached[0]
        return (commit if commit.path == d else dataclasses.replace(commit, path=d)), ""
    commit, reason = _verify(d)
    if commit is None:
        _VERIFIED.pop(cache_key, None)
    else:
        if len(_VERIFIED) >= _VERIFIED_MAX:
            _VERIFIED.clear()
        _VERIFIED[cache_key] = (commit, stamp)
    return commit, reason


def _stamp(d: Path) -> tuple:
    """What identifies a commit directory's state: its device, inode and name, then each
    entry's name, size, modification and change times and inode. Empty when unreadable."""
    try:
        st = d.lstat()
        files = tuple(sorted((p.name, fs.st_size, fs.st_mtime_ns, fs.st_ctime_ns, fs.st_ino)
                             for p in d.iterdir() for fs in [p.lstat()]))
    except OSError:
        return ()
    return ((st.st_dev, st.st_ino, d.name), files)


def _verify(d: Path) -> tuple[Commit | None, str]:
    record = d / COMMIT_FILE
    try:
        # A regular file of bounded size, nested at most MAX_JSON_DEPTH deep, of the
        # shape vegaslab writes (COMMIT_SCHEMA), or the commit is set aside.
        info = read_json(record, max_bytes=MAX_COMMIT_FILE_BYTES, schema=COMMIT_SCHEMA)
    except FileNotFoundError:
        return None, f"{record}: missing"
    except ForeignFileError as exc:
        return None, str(exc)
    runs = tuple(info["runs"])
    files = info["files"]
    params = dict(info.get("params") or {})
    replaces = tuple(info.get("replaces") or ())
    fmt = info["format"]
    if fmt not in READABLE_STORE_FORMATS or info["commit"] != d.name:
        return None, f"{record}: format or id does not match"
    for name, meta in files.items():
        # Only a plain file name of this directory (never a path a store file could aim
        # anywhere, e.g. at /dev/zero), and only a regular file, is checked and trusted.
        if not PLAIN_FILE.fullmatch(name):
            return None, f"{record}: lists {name!r}, which is not a plain file name of the batch"
        f = d / name
        try:
            st = os.lstat(f)
        except OSError:
            return None, f"{f}: listed in {COMMIT_FILE} but missing"
        if not stat.S_ISREG(st.st_mode):
            return None, f"{f}: listed in {COMMIT_FILE} but not a regular file"
        if st.st_size != meta["bytes"]:
            return None, f"{f}: {st.st_size} bytes, {COMMIT_FILE} records {meta['bytes']} (truncated or replaced)"
        try:
            digest = sha256_file(f)
        except (OSError, ForeignFileError) as exc:
            return None, f"{f}: {getattr(exc, 'reason', None) or exc}"
        if digest != meta["sha256"]:
            return None, f"{f}: SHA-256 differs from the one in {COMMIT_FILE} (corrupted or replaced)"
        why = _table_problem(f)
        if why:
            return None, f"{f}: {why}"
    extra = sorted(p.name for p in d.iterdir() if p.name != COMMIT_FILE and p.name not in files)
    if extra:
        return None, f"{d}: holds files its {COMMIT_FILE} does not list ({', '.join(extra[:3])})"
    return Commit(d.name, d, runs, params, files, replaces, fmt), ""


def _table_problem(path: Path) -> str:
    """Why ``path`` is not a table of a store (its Parquet footer only: the checksums say the
    bytes are the ones the commit lists, this says they are a table vegaslab could have
    written: every table starts with ``run_key`` and ``seed``), or ""."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with open_regular(path) as fh:
            schema = pq.read_schema(fh)
    except (OSError, ForeignFileError, pa.ArrowException) as exc:
        return f"not a Parquet table ({gist(exc)})"
    for name, kind in (("run_key", pa.string()), ("seed", pa.int64())):
        i = schema.get_field_index(name)
        if i < 0 or not schema.field(i).type.equals(kind):
            return f"not a table of a vegaslab store (no {kind} column {name!r})"
    return ""
