"""Keeping a terminal's Ctrl-C away from the embedded cluster's worker processes.

A terminal sends SIGINT to the whole process group, the embedded cluster's workers included;
only the client decides what an interrupt means. The workers' preload
(:mod:`vegaslab.sweeps.dask_worker`) ignores it once Dask runs in them
(docs/decisions.md, "Embedded workers ignore SIGINT through a preload");
:func:`sigint_blocked_in_new_threads` keeps it from them before that."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def sigint_blocked_in_new_threads() -> Iterator[None]:
    """Block SIGINT in the calling thread meanwhile, so that the threads it starts (the
    embedded cluster's event loop, and from it every thread that starts a worker process,
    restarts included) block it for good, and so do the worker processes they start (a
    process inherits its creator's signal mask, through exec too).

    The preload (:mod:`vegaslab.sweeps.dask_worker`) makes a worker ignore SIGINT only once its Dask
    code runs; blocked from the start, the signal never reaches a worker, even in the second or
    so while it still imports Dask. The client's main thread gets it as before
    (:func:`vegaslab.sweeps.engine.execute` defers it, so a Ctrl-C during the cluster's start
    is acted on once the cluster has started, and the cluster is then closed).
    Nothing in Dask stops a worker with SIGINT (a nanny ends its worker with a message or
    SIGTERM). Outside the main thread, or without ``pthread_sigmask``, nothing changes.

    multiprocessing's resource tracker is started first, here: started by the cluster's loop
    thread along with the first worker, it would unblock SIGINT in that thread once it had
    forked (``resource_tracker.ensure_running`` ends with ``SIG_UNBLOCK``), and the workers
    started from there would not inherit the block."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
