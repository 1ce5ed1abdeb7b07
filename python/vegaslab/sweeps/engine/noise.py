"""Log filters that drop what the user need not see: the scheduler's errors about a dead
worker's lost results (the engine reports each failed run itself, and Dask recovers from them),
and a nanny's errors about workers interrupted while an embedded cluster closes after Ctrl-C
(the client says "interrupted" itself)."""

from __future__ import annotations

import asyncio
import logging
import threading


def drop_interrupt_noise(record: logging.LogRecord) -> bool:
    """False for the nanny's records about a worker's ``CancelledError`` or
    ``KeyboardInterrupt``: what a nanny logs while a cluster closes after Ctrl-C (a worker
    killed before its preload made it ignore SIGINT); the client says "interrupted" itself."""
    exc = record.exc_info[0] if record.exc_info else None
    if exc is not None and issubclass(exc, (KeyboardInterrupt, asyncio.CancelledError)):
        return False
    msg = record.getMessage()
    return not ("CancelledError" in msg or "KeyboardInterrupt" in msg)


_quiet_lock = threading.Lock()
_quiet_count = 0


def quiet_nanny(delta: int) -> None:
    """Count the embedded clusters alive (started, not yet closed: closing may outlive the
    client, in a thread) and keep :func:`drop_interrupt_noise` on the nanny's logger
    meanwhile."""
    global _quiet_count
    with _quiet_lock:
        _quiet_count += delta
        log = logging.getLogger("distributed.nanny")
        if _quiet_count > 0:
            log.addFilter(drop_interrupt_noise)  # once: a logger keeps no duplicates
        else:
            log.removeFilter(drop_interrupt_noise)


def drop_death_noise(record: logging.LogRecord) -> bool:
    """False for the scheduler's records about a dead worker: the results it could not gather
    and the tasks that "workers died while trying to run"."""
    msg = record.getMessage()
    return not (msg.startswith("Couldn't gather keys") or "workers died while trying to run it" in msg)
