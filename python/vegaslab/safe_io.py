"""The one rule for every file vegaslab writes, and the one rule for every file it reads back
from a directory it does not own (a results store, a report directory, a study's output).

A scenario, a study file or a results directory may come from someone else (shared, copied,
downloaded), and vegaslab may run as root on the testbed machine. So:

**Writing.** A file is written only *inside a directory the user named* (``--out``, a store,
``Results.to_dir``), under a *plain name* (:func:`plain_name`: no ``/``, no ``..``, not hidden,
no NUL), and never through a link: a new file is created with ``O_CREAT | O_EXCL |
O_NOFOLLOW`` under a fresh hidden name and renamed into place (:func:`write_file`), and a
rename replaces a symbolic link planted at the destination instead of writing through it.
Directories vegaslab makes inside the named one are made with :func:`make_dir`, which refuses a
symbolic link or a file in their place. The directory the user named may itself be a symbolic
link (that is the user's choice); nothing *inside* it is followed.

**Reading back.** A file read back is opened with ``O_NOFOLLOW | O_NONBLOCK`` (a planted link
or FIFO can neither redirect the read nor block it), must be a regular file of at most a stated
size (:func:`read_bytes`), and JSON is parsed with a nesting limit and checked against a JSON
Schema before any field is used (:func:`read_json`). Every failure is a :class:`ForeignFileError`
naming the file and what is wrong with it, which the caller turns into "set aside, say so,
carry on" (or a clean stop); never an internal error, and never a read of another file
because a file says so.

This module imports only the standard library at import time (``jsonschema`` when a schema
is checked), so the command line can use it before numpy or pandas are loaded.
"""
from __future__ import annotations

import errno
import json
import math
import os
import stat
import uuid
from pathlib import Path
from typing import Any, BinaryIO, Mapping

from .errors import VegaslabError

__all__ = [
    "UnsafePathError",
    "ForeignFileError",
    "plain_name",
    "make_dir",
    "write_file",
    "create_new",
    "remove_file",
    "open_lock",
    "open_dir",
    "read_bytes",
    "read_json",
    "json_depth",
    "sha256_file",
    "open_regular",
    "MAX_JSON_DEPTH",
]

#: The deepest nesting of arrays and objects a JSON file read back may have. vegaslab's own
#: files nest at most 6 deep; Python's parser would stop near 1,000 with a ``RecursionError``.
MAX_JSON_DEPTH = 64

#: The most digits of a whole number in JSON read back: 64-bit integers have 19 or 20, and a
#: longer one (10^400) would be a Python int that no float, format or array can hold.
MAX_INT_DIGITS = 20

#: The longest plain name, in bytes of UTF-8 (Linux's ``NAME_MAX``).
MAX_NAME_BYTES = 255

_OPEN_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class UnsafePathError(VegaslabError, ValueError):
    """A path vegaslab was asked to write breaks the rule: not a plain name, or a symbolic
    link, FIFO or other non-regular file planted where a file or directory would go. The
    message names the path and the rule. (The command line exits 2: bad input.)"""


class ForeignFileError(VegaslabError):
    """A file read back from a directory vegaslab does not own cannot be trusted: not a
    regular file, too large, not UTF-8, not JSON, nested too deep or of the wrong shape. The
    message names the file and the reason; ``path`` is the file."""

    def __init__(self, path: str | os.PathLike, reason: str) -> None:
        super().__init__(f"{os.fspath(path)}: {reason}")
        self.path = Path(path)
        self.reason = reason


def plain_name(name: object, what: str = "file name") -> str:
    """``name`` if it is a plain file name, else :class:`UnsafePathError`: a non-empty string
    of at most 255 bytes with no ``/``, ``\\`` or NUL, not ``.`` or ``..`` and not starting with
    ``.`` (vegaslab's own temporary files are hidden names, so a plain name never collides
    with one). ``what`` says what the name is for the message."""
    if not isinstance(name, str):
        raise UnsafePathError(f"{what}: must be a plain file name, got {type(name).__name__} {name!r}"[:300])
    shown = repr(name[:80]) + ("..." if len(name) > 80 else "")
    if not name or name in (".", "..") or name.startswith(".") or any(c in name for c in "/\\\0"):
        raise UnsafePathError(f"{what}: must be a plain file name (no directory, no '/', '..' or leading '.'), "
                              f"got {shown}")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise UnsafePathError(f"{what}: must be at most {MAX_NAME_BYTES} bytes, got {shown}")
    return name


def _component(name: str) -> str:
    """``name`` if it names an entry of a directory (a plain name or one of vegaslab's hidden
    temporaries): no ``/`` or NUL, not ``.`` or ``..``."""
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise UnsafePathError(f"{name!r}: not a name of a directory entry")
    return name


def _describe(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def make_dir(parent: str | os.PathLike, name: str) -> Path:
    """``parent/name`` as a real directory: made (mode 0777 less the umask) when absent, kept
    when it is a directory, :class:`UnsafePathError` when a symbolic link or anything else
    stands there. ``parent`` must exist. ``name`` must be a plain name."""
    path = Path(parent) / plain_name(name, f"{parent}: directory name")
    try:
        os.mkdir(path)
        return path
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePathError(f"{path}: is {_describe(st.st_mode)}, not a directory vegaslab made; "
                              "move it away or choose another output directory")
    return path


def make_dirs(root: str | os.PathLike, *names: str) -> Path:
    """:func:`make_dir` for each of ``names`` in turn below ``root`` (``root/a/b``)."""
    path = Path(root)
    for name in names:
        path = make_dir(path, name)
    return path


def create_new(directory: str | os.PathLike, name: str, mode: int = 0o666) -> tuple[int, Path]:
    """Create ``directory/name`` as a new, empty regular file and return its descriptor (open
    for writing) and path: ``O_CREAT | O_EXCL | O_NOFOLLOW``, so an existing file, a planted
    symbolic link (even a dangling one) or a FIFO there is an error (``FileExistsError``),
    never opened. ``mode`` is narrowed by the umask, as for any new file."""
    path = Path(directory) / _component(name)
    return os.open(path, _OPEN_NEW, mode), path


def write_file(directory: str | os.PathLike, name: str, data: bytes | str, *, fsync: bool = False) -> Path:
    """Write ``data`` to ``directory/name`` atomically and without following links: into a new
    hidden file beside it (:func:`create_new`), then renamed over ``name``. A reader sees the
    old file or the whole new one; a symbolic link planted at ``name`` is replaced, its target
    untouched. ``fsync`` syncs the file before the rename. Returns the path."""
    directory = Path(directory)
    target = directory / plain_name(name, f"{directory}: file name")
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISDIR(st.st_mode):
            raise UnsafePathError(f"{target}: is a directory, not a file vegaslab wrote; move it away")
    fd, tmp = create_new(directory, f".vegaslab-{uuid.uuid4().hex[:12]}.tmp")  # short: any plain name fits
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return target


def remove_file(directory: str | os.PathLike, name: str) -> None:
    """Remove ``directory/name`` if it is a file or a link (the link itself, never its
    target); absent is fine; a directory or anything else there is an :class:`UnsafePathError`."""
    path = Path(directory) / plain_name(name, f"{directory}: file name")
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        raise UnsafePathError(f"{path}: is {_describe(mode)}, not a file vegaslab wrote; move it away")
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def open_lock(directory: str | os.PathLike, name: str = ".lock") -> int:
    """Open (creating when absent) the lock file ``directory/name`` for ``flock``, without
    following a link and without blocking on a FIFO; :class:`UnsafePathError` when anything
    but a regular file stands there. Returns the descriptor."""
    path = Path(directory) / name
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(f"{path}: is a symbolic link, not the lock file vegaslab makes; remove it") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnsafePathError(f"{path}: is {_describe(st.st_mode)}, not the lock file vegaslab makes; remove it")
    if st.st_nlink != 1:  # a hard link to a file elsewhere: writing the holder would change it
        os.close(fd)
        raise UnsafePathError(f"{path}: has {st.st_nlink} hard links, so it is not the lock file vegaslab makes; "
                              "remove it")
    return fd


def read_bytes(path: str | os.PathLike, *, max_bytes: int, dir_fd: int | None = None) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``max_bytes``: opened with
    ``O_NOFOLLOW | O_NONBLOCK`` (a symbolic link is refused, a FIFO neither blocks nor is
    read), checked with ``fstat`` and read to at most ``max_bytes + 1`` bytes (a file that
    grows while read is refused too). :class:`ForeignFileError` otherwise;
    ``FileNotFoundError`` when it is absent. With ``dir_fd`` (a directory opened by the
    caller, e.g. :func:`open_dir`), ``path`` is a plain name looked up in that directory, so
    the directory cannot be swapped for a link between a check and the read."""
    path = Path(path)
    fd = _open_regular(path, dir_fd)
    try:
        st = os.fstat(fd)
        if st.st_size > max_bytes:
            raise ForeignFileError(path, f"has {st.st_size:,} bytes; at most {max_bytes:,} are read")
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise ForeignFileError(path, f"grew past {max_bytes:,} bytes while read")
        return b"".join(chunks)
    except OSError as exc:
        raise ForeignFileError(path, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _open_regular(path: Path, dir_fd: int | None = None) -> int:
    """A descriptor of ``path`` opened for reading under the rule (no link followed, no FIFO
    waited on), checked to be a regular file; :class:`ForeignFileError` otherwise. With
    ``dir_fd``, ``path`` is a plain name in that directory."""
    if dir_fd is not None:
        plain_name(os.fspath(path), "file name")
    try:
        fd = os.open(path, _OPEN_READ, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ForeignFileError(path, "is a symbolic link; vegaslab reads only regular files here") from None
        raise ForeignFileError(path, f"cannot open: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ForeignFileError(path, f"is {_describe(mode)}; vegaslab reads only regular files here")
    return fd


def open_regular(path: str | os.PathLike) -> BinaryIO:
    """``path`` opened for binary reading under the rule: not through a symbolic link, not a
    FIFO (never waited on), device or directory: :class:`ForeignFileError` naming it
    otherwise; ``FileNotFoundError`` when absent."""
    fd = _open_regular(Path(path))
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def sha256_file(path: str | os.PathLike) -> str:
    """SHA-256 (hex) of a regular file's bytes, read in chunks (the results directory's and
    the store's checksums); a link, FIFO or device is a :class:`ForeignFileError`, never read."""
    import hashlib

    with open_regular(path) as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()

def open_dir(path: str | os.PathLike) -> int:
    """A descriptor of the directory ``path`` to read files from with ``dir_fd`` (close it
    when done): opened with ``O_DIRECTORY | O_NOFOLLOW``, so a symbolic link planted in its
    place is refused (:class:`ForeignFileError`), never followed; ``FileNotFoundError`` when
    it is absent."""
    path = Path(path)
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        try:
            mode = os.lstat(path).st_mode
            what = "a file" if stat.S_ISREG(mode) else _describe(mode)
        except OSError:
            what = "not a directory"
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ForeignFileError(path, f"is {what}, not a directory; nothing in it is read") from None
        raise ForeignFileError(path, f"cannot open: {exc.strerror or exc}") from None


def json_depth(value: Any) -> int:
    """The nesting depth of a parsed JSON value (a scalar is 0, ``[]`` is 1), iteratively."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = v.values()
        elif not isinstance(v, list):
            continue
        deepest = max(deepest, d + 1)
        stack.extend((x, d + 1) for x in v)
    return deepest


def parse_json(text: str | bytes, path: str | os.PathLike, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``text`` parsed as JSON, nested at most ``max_depth`` deep, every number one a double
    or a 64-bit integer holds: NaN, infinity, ``1e999`` and a whole number of more than
    :data:`MAX_INT_DIGITS` digits are refused (vegaslab never writes them, and they break
    arithmetic and formatting downstream). :class:`ForeignFileError` naming ``path`` otherwise."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ForeignFileError(path, f"not UTF-8 (byte offset {exc.start})") from None

    def no_constants(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    def bounded_int(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_INT_DIGITS:
            raise ValueError(f"a whole number of {len(digits.lstrip('-'))} digits (at most {MAX_INT_DIGITS} are read)")
        return int(digits)

    def finite_float(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise ValueError(f"{text[:40]} is beyond a double")
        return value

    try:
        value = json.loads(text, parse_constant=no_constants, parse_int=bounded_int, parse_float=finite_float)
    except RecursionError:
        raise ForeignFileError(path, f"nested deeper than {max_depth} levels") from None
    except ValueError as exc:
        raise ForeignFileError(path, f"not JSON: {exc}") from None
    if json_depth(value) > max_depth:
        raise ForeignFileError(path, f"nested deeper than {max_depth} levels")
    return value


def check_schema(value: Any, schema: Mapping[str, Any], path: str | os.PathLike) -> Any:
    """``value`` if it matches the JSON Schema ``schema`` (the ``jsonschema`` library),
    else :class:`ForeignFileError` naming the first mismatch and where it is."""
    import jsonschema

    # The first error only: a planted file of millions of bad items must not make an error
    # object each (the iteration is lazy and in the schema's order, so deterministic).
    e = next(iter(jsonschema.Draft202012Validator(schema).iter_errors(value)), None)
    if e is not None:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path).lstrip(".") or "the document"
        message = e.message if len(e.message) <= 200 else e.message[:200] + "..."
        raise ForeignFileError(path, f"not a file vegaslab wrote: {where}: {message}")
    return value


def read_json(path: str | os.PathLike, *, max_bytes: int, schema: Mapping[str, Any] | None = None,
              max_depth: int = MAX_JSON_DEPTH, dir_fd: int | None = None) -> Any:
    """A JSON file read back under the rule: :func:`read_bytes`, :func:`parse_json`, then
    :func:`check_schema` when a ``schema`` is given."""
    value = parse_json(read_bytes(path, max_bytes=max_bytes, dir_fd=dir_fd), path, max_depth=max_depth)
    return check_schema(value, schema, path) if schema is not None else value
