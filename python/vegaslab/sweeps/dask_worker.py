"""A Dask worker preload for the engine's embedded cluster
(:func:`vegaslab.sweeps.engine.cluster.connect`).

A terminal's Ctrl-C sends SIGINT to the whole foreground process group, which includes the
embedded cluster's worker processes. Left alone, each one dies with a ``KeyboardInterrupt``
traceback (``Process Dask Worker process (from Nanny): ...``) on the user's terminal while the
client is still shutting the cluster down in order. The client alone decides what an interrupt
means (commit what finished, cancel the rest, close the cluster, whose nannies end the
workers), so a worker ignores SIGINT.

A preload (``preload=`` of each nanny, which passes it to every worker process it starts,
restarts included), because a nanny restarts a dead worker after the cluster's start, when
nothing around that start is in force any more (docs/decisions.md, "Embedded workers ignore
SIGINT through a preload"). The preload runs in the worker's
event loop, which is its main thread (the only one where a handler may be set); a worker
that does not run it there (an unknown Dask layout) keeps the default rather than failing.
The engine also starts every worker process with SIGINT blocked
(:func:`vegaslab.sweeps.engine.sigint.sigint_blocked_in_new_threads`), which covers the second
or so before this preload runs, while the worker still imports Dask.

A worker's "Failed to communicate with scheduler during heartbeat" error (with the
``CommClosedError`` traceback of a heartbeat cut off as the cluster closes) is dropped too: it
is a race in Dask's shutdown (the worker's heartbeat in flight while its connections close),
seen in about 1 of 50 Ctrl-Cs. An embedded cluster's scheduler lives in the client's process
and closes only when the client closes the cluster (or ends, and the worker with it), so in
these workers the message never means anything else.
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

#: The name the engine passes as the workers' preload.
MODULE = __name__


#: How a worker's heartbeat error starts (distributed/worker.py, ``Worker.heartbeat``).
HEARTBEAT_FAILED = "Failed to communicate with scheduler during heartbeat"


def dask_setup(worker: Any) -> None:
    """Called by Dask in each worker process as it starts: ignore SIGINT from now on, and
    drop the heartbeat errors of a closing cluster."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.getLogger("distributed.worker").addFilter(_not_a_heartbeat_failure)


def _not_a_heartbeat_failure(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith(HEARTBEAT_FAILED)
