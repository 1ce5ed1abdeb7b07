"""Ctrl-C while vegaslab computes: every SIGINT is recorded, and acted on where stopping is safe.

Python's own SIGINT handler raises ``KeyboardInterrupt`` in the main thread at its next
bytecode, wherever that is. Two kinds of place go wrong:

- a place that cannot pass an exception on: a garbage-collection callback (the embedded Dask
  scheduler installs one in this process, ``distributed.gc.GCDiagnosis._gc_callback``), a
  ``__del__`` method, a weakref callback. Python hands the ``KeyboardInterrupt`` to
  ``sys.unraisablehook`` ("an exception has occurred but there is no way for Python to handle
  it"), whose default prints "Exception ignored in ..." and drops it: the command would go on
  as if there had been no Ctrl-C;
- a place where stopping half-way leaves a mess: inside a Dask client call that the client's
  event-loop thread carries on with, or between the steps of a store commit.

So while :func:`vegaslab.sweeps.engine.execute` runs, SIGINT only records the request
(:func:`deferred`); the engine looks at it between results, every few milliseconds, and stops
in order: it cancels what is queued, commits what finished and closes its cluster. A wait that
may be cut short anywhere (a run computed in this process, a compaction) is marked with
:meth:`Request.raising`: there SIGINT raises ``KeyboardInterrupt`` at once, as Python's handler
does, and the request is still recorded in case the raise is dropped.

The command line records every SIGINT of a command as well (:func:`command`): a command that
saw one exits 130 even when its ``KeyboardInterrupt`` was dropped on the way. While a block is
open, a dropped ``KeyboardInterrupt`` is not printed (``sys.unraisablehook``): in a
:func:`deferred` block the request is recorded and acted on; in a :func:`command` block the
interrupt is delivered again a few milliseconds later (``_thread.interrupt_main``), when the
main thread is almost surely back in ordinary code. The ``vegaslab``
program (never the library, which may run in a notebook's kernel) also arms a last resort,
:func:`enable_watchdog`: a process still running :data:`WATCHDOG_S` seconds after the first
Ctrl-C writes one line and ends at once with 130 (``os._exit``). What it cuts short is safe to
cut: committed runs are on disk (a commit is synced before the rename that makes it one), a
commit in progress is a ``_tmp/`` directory no reader trusts, and the embedded cluster's worker
processes end with this process (each watches a pipe from it).

Signal handlers can only be set in the main thread: elsewhere :func:`deferred` and
:func:`command` change nothing and their request stays unset. A process that ignores SIGINT
(a shell's background job) keeps ignoring it.
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
import time
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Iterator

__all__ = ["Request", "deferred", "command", "enable_watchdog", "WATCHDOG_S", "EXIT_INTERRUPTED"]

#: The exit status of an interrupted command (128 + SIGINT, what a shell reports).
EXIT_INTERRUPTED = 130

#: Seconds from the first Ctrl-C to the command line's hard exit, if the orderly stop has not
#: ended the process by then: about three times the slowest orderly stop measured (a Ctrl-C
#: just as the local cluster starts, which it lets finish starting before closing it; the
#: measurements are in docs/decisions.md).
WATCHDOG_S = 15.0


class Request:
    """Whether Ctrl-C was pressed while a :func:`deferred` or :func:`command` block ran."""

    def __init__(self, defers: bool) -> None:
        #: True: SIGINT is only recorded (outside :meth:`raising`); False: it also raises.
        self.defers = defers
        self._event = threading.Event()
        self._raising = 0
        #: ``time.monotonic()`` of the first Ctrl-C, or None.
        self.first_at: float | None = None

    def is_set(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` if Ctrl-C was pressed."""
        if self._event.is_set():
            raise KeyboardInterrupt

    @contextmanager
    def raising(self) -> Iterator[None]:
        """Meanwhile SIGINT raises ``KeyboardInterrupt`` at once: for work that may be cut
        short anywhere. Raises on the way in and out too when Ctrl-C was pressed (before, or
        meanwhile with its raise dropped)."""
        self.check()
        self._raising += 1
        try:
            yield
        finally:
            self._raising -= 1
        self.check()

    def _record(self) -> None:
        if self.first_at is None:
            self.first_at = time.monotonic()
        self._event.set()

    def _raises(self) -> bool:
        return not self.defers or self._raising > 0


#: The requests of the blocks open in the main thread, outermost first.
_active: list[Request] = []
#: The SIGINT handler and the unraisable-exception hook in place before the outermost block.
_previous: Any = None
_previous_unraisable: Any = None
#: Seconds after a dropped KeyboardInterrupt at which a command's interrupt is delivered again.
REDELIVER_AFTER_S = 0.01
#: The command line's last resort, once :func:`enable_watchdog` was called.
_watchdog: "_Watchdog | None" = None


def _on_sigint(signum: int, frame: Any) -> None:
    """The SIGINT handler while a block is open: record the request in every open block (so
    the command knows of a Ctrl-C the engine handled), start the watchdog, and raise
    ``KeyboardInterrupt`` unless the innermost block defers it."""
    for request in list(_active):
        request._record()
    if _watchdog is not None:
        _watchdog.start()
    if not _active or _active[-1]._raises():
        raise KeyboardInterrupt


def _on_unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook`` while a block is open: a ``KeyboardInterrupt`` that Python had
    to drop (raised by :func:`_on_sigint` inside a gc callback, a ``__del__``, a weakref
    callback) is not printed; a command's is delivered again. Anything else goes to the
    previous hook."""
    if not (_active and isinstance(unraisable.exc_value, KeyboardInterrupt)):
        (_previous_unraisable or sys.__unraisablehook__)(unraisable)
        return
    if not _active[-1].defers:  # a deferred block has recorded it and acts on it itself
        threading.Thread(target=_interrupt_main_soon, name="vegaslab-interrupt-again", daemon=True).start()


def _interrupt_main_soon() -> None:
    time.sleep(REDELIVER_AFTER_S)
    _thread.interrupt_main(signal.SIGINT)


@contextmanager
def _guard(request: Request) -> Iterator[Request]:
    global _previous, _previous_unraisable
    if threading.current_thread() is not threading.main_thread():
        yield request
        return
    if not _active:
        current = signal.getsignal(signal.SIGINT)
        if current in (signal.SIG_IGN, None):  # ignored by whoever started us, or not set from Python
            yield request
            return
        _previous = signal.signal(signal.SIGINT, _on_sigint)
        _previous_unraisable, sys.unraisablehook = sys.unraisablehook, _on_unraisable
    _active.append(request)
    try:
        yield request
    finally:
        _active.remove(request)
        if not _active:
            if signal.getsignal(signal.SIGINT) is _on_sigint:  # nobody replaced it meanwhile
                signal.signal(signal.SIGINT, _previous)
            if sys.unraisablehook is _on_unraisable:
                sys.unraisablehook = _previous_unraisable
            _previous = _previous_unraisable = None


def deferred() -> AbstractContextManager[Request]:
    """A block in which SIGINT is recorded in the returned :class:`Request` and raises
    nothing (except inside :meth:`Request.raising`); the block decides when to stop."""
    return _guard(Request(defers=True))


def command() -> AbstractContextManager[Request]:
    """A command line command's block: SIGINT raises ``KeyboardInterrupt`` as usual and is
    recorded in the returned :class:`Request`, also when a :func:`deferred` block inside
    handles it."""
    return _guard(Request(defers=False))


class _Watchdog:
    """Ends the process with 130, ``grace_s`` seconds after the first Ctrl-C."""

    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._timer is None:
                self._timer = threading.Timer(self.grace_s, self._fire)
                self._timer.daemon = True
                self._timer.name = "vegaslab-interrupt-watchdog"
                self._timer.start()

    def _fire(self) -> None:
        line = (f"vegaslab: interrupted; the orderly stop took longer than {self.grace_s:g} s, so the command "
                "ended at once (committed runs are kept; run the same command to go on)\n")
        try:
            os.write(2, line.encode())
        except OSError:
            pass
        os._exit(EXIT_INTERRUPTED)


def enable_watchdog(grace_s: float = WATCHDOG_S) -> None:
    """From now on, the first Ctrl-C that a :func:`command` or :func:`deferred` block sees
    ends the process ``grace_s`` seconds later if nothing else has (for the ``vegaslab``
    program only: it ends the interpreter without any cleanup)."""
    global _watchdog
    _watchdog = _Watchdog(grace_s)
