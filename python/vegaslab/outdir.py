"""Output directories, written all or nothing: the checks made before anything is simulated
and the swap into place once every file is written.

Kept apart from :mod:`vegaslab.results` so that it imports neither numpy nor pandas: the
command line checks its output directory before it runs anything, and ``vegaslab run`` loads
those on a background thread while the core simulates."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import VegaslabError

#: The results tables, in the order ``Results.to_dir`` writes them (``results.TABLES`` gives
#: their columns).
TABLE_NAMES = ("flows", "queues", "links", "udp", "series_flows", "series_queues")

#: Files vegaslab writes into a run directory (tables, meta.json, job.json, plots); a directory
#: holding only these, and the packet trace its meta.json names, may be replaced.
_OWN_FILE = re.compile(r"^(?:(?:" + "|".join(TABLE_NAMES) + r")\.(?:parquet|csv)|meta\.json|job\.json|[\w.-]+\.png)$")


def _own_trace(directory: Path) -> str | None:
    """The packet trace's file name that ``directory``'s meta.json records (read under the
    read-back rule), or None: a run directory's trace is vegaslab's, any other ``.tr`` or
    ``.pcap`` file there is the user's."""
    from .safe_io import ForeignFileError, read_json

    try:
        meta = read_json(directory / "meta.json", max_bytes=256 << 20)
    except (OSError, ForeignFileError):
        return None
    trace = meta.get("trace") if isinstance(meta, dict) else None
    name = trace.get("file") if isinstance(trace, dict) else None
    return name if isinstance(name, str) and re.fullmatch(r"[\w-][\w.-]*\.(?:tr|pcap)", name) else None


class OutputDirError(VegaslabError):
    """An output directory cannot be used (it is a file, not writable, or holds files vegaslab
    did not write). Raised before anything is simulated; the message names the path."""


def _nearest_existing(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_output_dir(path: str | os.PathLike, *, replace: bool = True) -> None:
    """Raise :class:`OutputDirError` unless ``path`` can receive output: it is an existing
    directory or can be created, and its parent directory is writable (checked by creating
    and removing a probe directory, which also works for root and read-only mounts). With
    ``replace`` (a run directory that :meth:`Results.to_dir` swaps in whole), an existing
    ``path`` must hold only files vegaslab writes; without it (``reproduce --out``, which
    keeps adding to its directory), ``path`` itself must be writable."""
    target = Path(path)
    if target.exists() or target.is_symlink():
        if not target.is_dir():
            raise OutputDirError(f"{target}: exists and is not a directory; choose another output directory")
        if replace:
            trace = _own_trace(target)
            foreign = sorted(f.name for f in target.iterdir()
                             if not (f.is_file() and (_OWN_FILE.match(f.name) or f.name == trace)))
            if foreign:
                more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
                raise OutputDirError(
                    f"{target}: holds files vegaslab did not write ({', '.join(foreign[:3])}{more}); "
                    f"it would be replaced, so choose another output directory or empty it")
    where = target if (target.is_dir() and not replace) else _nearest_existing(target.parent if replace else target)
    if not where.is_dir():
        raise OutputDirError(f"{target}: cannot create it: {where} is not a directory")
    try:
        probe = tempfile.mkdtemp(prefix=".vegaslab-probe-", dir=where)
        os.rmdir(probe)
    except OSError as exc:
        raise OutputDirError(f"{target}: cannot write in {where}: {exc.strerror or exc}") from None


@contextmanager
def output_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary directory beside ``path``; when the block ends without an
    exception, rename it to ``path`` (replacing an old run directory only now, when the new
    one is complete). On any exception, Ctrl-C included, the temporary directory is removed
    and ``path`` is left as it was. A ``path`` that is a symbolic link (the user's own, to a
    directory elsewhere) is resolved first, so the run directory is replaced where it points
    and the link stays."""
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    check_output_dir(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    except OSError as exc:
        raise OutputDirError(f"{target}: cannot create it: {exc.strerror or exc}") from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it 0700; a normal directory instead
        yield tmp
        _swap_into_place(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap_into_place(tmp: Path, target: Path) -> None:
    if not (target.exists() or target.is_symlink()):
        os.rename(tmp, target)
        return
    check_output_dir(target)  # still only our own files (checked again: time has passed)
    old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
    os.rename(target, old)
    try:
        os.rename(tmp, target)
    except BaseException:
        os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
