"""A connected Dask client: an embedded local cluster started for the sweep (and closed after
it), or an existing cluster's scheduler, waited for until at least the workers asked for have
joined.

The embedded cluster has one single-threaded worker process per core (:func:`default_workers`),
sets ``worker-saturation`` to 1.0 so that a worker death is counted against the one run it was
computing, starts its workers with SIGINT blocked and gives them the preload that makes them
ignore it (:mod:`vegaslab.sweeps.dask_worker`)."""

from __future__ import annotations

import logging
import os
import threading
from contextlib import contextmanager, nullcontext
from typing import Any, Iterator

from ... import interrupts
from .errors import EngineError
from .noise import quiet_nanny
from .scheduler import probe
from .sigint import sigint_blocked_in_new_threads

#: How long to wait for a scheduler to answer and for at least one worker to join.
CONNECT_TIMEOUT_S = 60.0


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@contextmanager
def connect(scheduler: Any, workers: int | None, allowed_failures: int | None,
            closing: list[threading.Thread] | None = None,
            ctrl_c: interrupts.Request | None = None) -> Iterator[tuple[Any, str]]:
    """A connected ``distributed.Client`` and a description of the executor. With
    ``closing``, an embedded cluster is closed by a thread appended to it (the caller joins
    it): its workers take a few hundred milliseconds to exit, time the caller can use to
    commit and compact. With ``ctrl_c`` (the caller defers Ctrl-C), the waits for an
    existing cluster (up to :data:`CONNECT_TIMEOUT_S` each) stop at a Ctrl-C."""

    import dask
    from distributed import Client, LocalCluster

    if scheduler is not None and not isinstance(scheduler, str):  # a Client given by the caller
        yield scheduler, f"dask client {getattr(scheduler, 'scheduler', None) and scheduler.scheduler.address}"
        return
    if scheduler is None:
        n = int(workers) if workers else default_workers()
        if n < 1:
            raise EngineError(f"workers: must be at least 1, got {workers}")
        # worker-saturation 1.0: a worker holds only the task it runs (the others wait on the
        # scheduler), so when a run kills its worker no innocent queued run is blamed for it
        # (Dask counts a death against every task assigned to the dead worker).
        settings: dict[str, Any] = {"distributed.scheduler.worker-saturation": 1.0}
        if allowed_failures is not None:
            settings["distributed.scheduler.allowed-failures"] = int(allowed_failures)
        # Each worker process ignores SIGINT (vegaslab.sweeps.dask_worker): a terminal's Ctrl-C
        # reaches the whole process group, and only the client decides what it means. Each
        # nanny keeps its preload list and passes it to every worker it starts, restarts too.
        preload = [*dask.config.get("distributed.worker.preload", []), "vegaslab.sweeps.dask_worker"]
        quiet_nanny(+1)
        cluster = None

        def close() -> None:
            try:
                if cluster is not None:
                    cluster.close()
            finally:
                quiet_nanny(-1)

        try:
            with dask.config.set(settings), sigint_blocked_in_new_threads():
                cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=logging.ERROR, preload=preload,
                                       # the scheduler's HTTP server (health, metrics) on a free
                                       # port: 8787 may be taken by another cluster
                                       scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
        except BaseException:
            # Also a KeyboardInterrupt raised as SIGINT is unblocked, the cluster just started
            # (when Ctrl-C is not deferred): it is closed, not left running.
            close()
            raise

        try:
            client = Client(cluster, set_as_default=False)
            try:
                yield client, f"local Dask cluster, {n} worker process{'es' if n > 1 else ''}"
            finally:
                client.close()
        finally:
            if closing is None:
                close()
            else:
                closer = threading.Thread(target=close, name="vegaslab-cluster-close")
                closer.start()
                closing.append(closer)
        return
    probe(scheduler)
    try:
        with ctrl_c.raising() if ctrl_c is not None else nullcontext():
            client = Client(scheduler, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise EngineError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    except ValueError as exc:  # an address Dask cannot use (check_scheduler lets few through)
        raise EngineError(f"scheduler {scheduler!r}: {exc}") from None
    try:
        try:
            with ctrl_c.raising() if ctrl_c is not None else nullcontext():
                client.wait_for_workers(int(workers) if workers else 1, timeout=CONNECT_TIMEOUT_S)
        except TimeoutError:
            raise EngineError(f"no Dask worker joined the scheduler at {scheduler} within {CONNECT_TIMEOUT_S:.0f} s; "
                              "start workers with `dask worker " + str(scheduler) + "`") from None
        yield client, f"Dask scheduler {scheduler}"
    finally:
        client.close()
