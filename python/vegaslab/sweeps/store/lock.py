"""The store's single-writer lock: an exclusive ``flock`` on ``<store>/.lock``, taken without
waiting, with the holder (process id and host) written into the file so that the next writer's
error names it. The kernel releases a ``flock`` when its holder dies, so a killed writer never
leaves the store locked. On a platform without ``fcntl`` the file is opened but not locked."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

from ...safe_io import UnsafePathError, open_lock
from .errors import StoreError, StoreLockedError


def lock(root: Path) -> int | None:
    """Lock the store at ``root`` for writing; the lock file's descriptor, which holds the lock
    until :func:`unlock`. :class:`StoreLockedError` naming the holder when another process has it."""
    path = root / ".lock"
    try:
        fd = open_lock(root, ".lock")
    except UnsafePathError as exc:
        raise StoreError(str(exc)) from None
    except OSError as exc:
        raise StoreError(f"{path}: cannot open the store's lock file: {exc.strerror or exc}") from None
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, documented
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = ""
        try:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
        except OSError:
            pass
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            raise StoreLockedError(f"{root}: another process is writing to this store"
                                   f"{f' ({holder})' if holder else ''}; wait for it or use another store") from None
        raise StoreError(f"{path}: cannot lock: {exc.strerror or exc}") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
    return fd


def unlock(fd: int | None) -> None:
    """Release the lock :func:`lock` took (closing its descriptor releases the ``flock``)."""
    if fd is not None:
        os.close(fd)
