"""Runs on a Dask cluster: submit the runs a store lacks and hand each result to the caller as
it arrives, committing on the store writer's schedule meanwhile.

Each distinct scenario text travels once, as the result of a task (:func:`~.worker.echo`) the
runs depend on; Dask task keys are ``vegaslab-run-<run key>``. One run per task: a worker death
then counts against that run alone."""

from __future__ import annotations

import hashlib
import time
from typing import Any, Callable, Mapping, Sequence

from ..store import PreparedRun
from .worker import WorkerResult, echo


def run_on_dask(client: Any, todo: Sequence[PreparedRun], types: Mapping[str, str], run_fn: Callable,
                 writer: Any, finished: Callable, check_interrupt: Callable[[], None]) -> None:
    """Submit ``todo`` and hand each result to ``finished`` as it arrives, committing on the
    writer's schedule meanwhile; ``check_interrupt`` raises ``KeyboardInterrupt`` after a
    Ctrl-C, and is called between results. On any exit, unfinished tasks are cancelled."""
    from distributed import as_completed

    # Each distinct scenario text travels once, as the result of a task the runs depend on
    # (a sweep's runs share one text); the runs carry only their overrides, seed, parameters
    # and referenced files. One map call: the tasks reach the scheduler in one message.
    texts: dict[str, Any] = {}
    for p in todo:
        if p.spec.text not in texts:
            digest = hashlib.sha256(p.spec.text.encode("utf-8")).hexdigest()
            texts[p.spec.text] = client.submit(echo, p.spec.text, key=f"vegaslab-text-{digest}", pure=False)
    submitted = client.map(run_fn, [p.light() for p in todo], [texts[p.spec.text] for p in todo],
                           [dict(types)] * len(todo), key=[f"vegaslab-run-{p.key}" for p in todo],
                           retries=0, pure=False)
    futures = {fut.key: (fut, p) for fut, p in zip(submitted, todo)}
    # with_results: each result is fetched by the client's event loop as soon as its task
    # ends (concurrently), not one round trip at a time from this loop.
    ac = as_completed([f for f, _ in futures.values()], loop=client.loop, with_results=True, raise_errors=False)
    try:
        while futures:
            check_interrupt()
            ready = ac.next_batch(block=False)
            if not ready:
                writer.maybe_flush()
                time.sleep(0.005)
                continue
            for fut, result in ready:
                _, p = futures.pop(fut.key)
                if isinstance(result, WorkerResult):
                    # Whatever the status says now: a result fetched from a worker that died
                    # just after shows as "lost", yet it is complete and correct.
                    finished(p, result, None)
                elif isinstance(result, tuple) and len(result) == 3 and isinstance(result[1], BaseException):
                    finished(p, None, result[1])  # the task raised: (type, exception, traceback)
                elif isinstance(result, BaseException):
                    finished(p, None, result)
                else:
                    finished(p, None, RuntimeError(f"the task ended as {fut.status!r} with {type(result).__name__}"))
                fut.release()
    finally:
        if futures:
            client.cancel([f for f, _ in futures.values()])
        for f in texts.values():
            f.release()
