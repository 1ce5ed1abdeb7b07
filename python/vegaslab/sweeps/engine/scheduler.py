"""Which scheduler a sweep runs on: the address given or ``DASK_SCHEDULER_ADDRESS``, checked
before anything starts, and probed before Dask connects.

A malformed address is an :class:`EngineError` naming where it came from, and an address where
nothing accepts a TCP connection fails within :data:`PROBE_TIMEOUT_S`: Dask would raise the one
only once connecting and retry the other for a minute."""

from __future__ import annotations

import os
import socket
from typing import Any

from .errors import EngineError

#: ``scheduler=SYNCHRONOUS`` runs every run in the calling process, one after another.
SYNCHRONOUS = "synchronous"
#: ``scheduler=LOCAL`` starts the embedded local cluster whatever ``DASK_SCHEDULER_ADDRESS`` says.
LOCAL = "local"
#: ``scheduler=AUTO`` chooses by the work to do (:mod:`.choice`): the runs in this process while
#: their estimated work is small, else the embedded local cluster (``DASK_SCHEDULER_ADDRESS``
#: when set).
AUTO = "auto"
#: The scheduler values that are not addresses.
KEYWORDS = (SYNCHRONOUS, LOCAL, AUTO)

#: How long the TCP probe before connecting waits (see :func:`probe`): a refused or
#: unreachable address fails after at most this, not after
#: :data:`vegaslab.sweeps.engine.cluster.CONNECT_TIMEOUT_S`.
PROBE_TIMEOUT_S = 3.0

#: Address schemes a scheduler may have (Dask's network transports; ``inproc`` is in-process
#: only and cannot be another process's scheduler).
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")


def scheduler_address(scheduler: Any) -> Any:
    """``scheduler`` when given, else ``DASK_SCHEDULER_ADDRESS`` when set, else None (an
    embedded cluster). :data:`LOCAL` is None (the embedded cluster); :data:`AUTO` is
    ``DASK_SCHEDULER_ADDRESS`` or None."""
    if scheduler == LOCAL:
        return None
    if scheduler is not None and scheduler != AUTO:
        return scheduler
    env = os.environ.get("DASK_SCHEDULER_ADDRESS", "").strip()
    return env or None


def check_scheduler(scheduler: Any = None, name: str = "scheduler") -> None:
    """Raise :class:`EngineError` when ``scheduler`` (a string; None and ``"auto"``:
    ``DASK_SCHEDULER_ADDRESS`` if set) is not ``"synchronous"`` or ``"local"`` nor an address
    ``scheme://host:port`` (``host:port`` means ``tcp://``) with a network scheme and a port from 1 to 65535. The message starts
    with ``name`` (``--scheduler`` on the command line), or ``DASK_SCHEDULER_ADDRESS`` when
    the address came from there.

    Checked before anything starts, with Dask's own parser (``distributed.comm.parse_address``
    / ``parse_host_port``): ``Client("bogus")`` raises a ValueError only once connecting, and
    leaves a half-made client whose ``__del__`` waits 120 s at exit."""
    if scheduler is None or scheduler == AUTO:  # both take DASK_SCHEDULER_ADDRESS when set
        scheduler, name = os.environ.get("DASK_SCHEDULER_ADDRESS", "").strip(), "DASK_SCHEDULER_ADDRESS"
        if not scheduler:
            return
    if not isinstance(scheduler, str) or scheduler in KEYWORDS:
        return
    from distributed.comm import parse_address, parse_host_port

    usage = (f"{name}: must be {', '.join(map(repr, KEYWORDS))} or a Dask scheduler address scheme://host:port "
             f"(scheme {', '.join(SCHEDULER_SCHEMES)}), e.g. tcp://10.0.0.1:8786")
    try:
        scheme, location = parse_address(scheduler)
        host, port = parse_host_port(location)
    except ValueError as exc:
        raise EngineError(f"{usage}; got {scheduler!r} ({exc})") from None
    if scheme not in SCHEDULER_SCHEMES:
        raise EngineError(f"{usage}; got {scheduler!r} (unknown scheme {scheme!r})")
    if not host:
        raise EngineError(f"{usage}; got {scheduler!r} (no host)")
    if not 1 <= int(port) <= 65535:
        raise EngineError(f"{usage}; got {scheduler!r} (port {port} is not from 1 to 65535)")


def probe(scheduler: str) -> None:
    """Fail within :data:`PROBE_TIMEOUT_S` when nothing accepts TCP connections at
    ``scheduler``: ``distributed.Client`` retries a refused connection until its timeout (60
    s). An address that accepts the connection keeps that long timeout (a busy scheduler
    may be slow to answer). UCX addresses are not probed."""
    from distributed.comm import parse_address, parse_host_port

    scheme, location = parse_address(scheduler)
    if scheme == "ucx":
        return
    host, port = parse_host_port(location)
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as exc:  # refused, no route, unknown host, timed out
        why = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise EngineError(f"cannot reach the Dask scheduler at {scheduler}: {why}; is `dask scheduler` "
                          "running there?") from None
