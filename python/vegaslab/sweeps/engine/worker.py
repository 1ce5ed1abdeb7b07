"""The worker side: what a Dask worker runs for one run, and what it sends back.

Everything here is shipped to the workers by reference (Dask pickles a function as its module
and name), so a worker imports this module: it must stay importable under this path.
:func:`run_payload` re-normalises the scenario with the worker's own core and refuses to run
when the result differs from the client's, so that a result is never stored under a key it does
not match; it ends its run early when the worker closes (:class:`WorkerClosing`)."""

from __future__ import annotations

import os
import socket
import time
import traceback
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping

from ...errors import VegaslabError
from ..store import PreparedRun, StoredRun, keyed_tables, run_row, stored_tables
from .errors import EngineError
from .files import materialised


@dataclass
class WorkerResult:
    """What a worker sends back: a :class:`StoredRun`, or the error that prevented it."""

    key: str
    run: StoredRun | None
    error: str
    wall_s: float
    worker: str


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return f"{socket.gethostname()}:pid{os.getpid()}"


#: The progress callback of the runs made in this process (:func:`watched`), or None; a context
#: variable, so two sweeps in two threads each watch their own runs.
_in_process_watch: ContextVar[Callable[[float, float], None] | None] = ContextVar("_in_process_watch", default=None)


@contextmanager
def watched(check: Callable[[float, float], None] | None) -> Iterator[None]:
    """Meanwhile, runs made in this process (not in a Dask worker) call ``check(simulated s,
    duration s)`` every 0.2 s of wall time; an exception it raises ends the run, which
    :func:`run_payload` then reports as failed with that message (the caller that raised it
    knows better: :class:`vegaslab.sweeps.engine.choice.MovingToCluster`)."""
    token = _in_process_watch.set(check)
    try:
        yield
    finally:
        _in_process_watch.reset(token)


class WorkerClosing(Exception):
    """Raised (through the core's progress callback) to end a run whose worker is closing."""


def _end_when_worker_closes() -> Callable[[float, float], None] | None:
    """A progress callback for the core (called every 0.2 s of a run) that ends the run once
    this process's Dask worker is closing; outside a worker, the callback of :func:`watched`
    (None when none is set).

    A worker closes when the client was interrupted or closes the cluster, and its run's result
    is no longer wanted; Dask's close would wait for the running task until the nanny kills the
    worker after 4 s (docs/decisions.md, "A run ends when its worker closes")."""
    try:
        from distributed import get_worker
        from distributed.core import Status

        worker = get_worker()
    except (ImportError, ValueError):
        return _in_process_watch.get()
    closing = (Status.closing, Status.closed, Status.failed)

    def check(sim_s: float, duration_s: float) -> None:
        if worker.status in closing:
            raise WorkerClosing(f"the worker closed at {sim_s:g} s of {duration_s:g} s simulated")

    return check


def echo(text: str) -> str:
    """A task whose result is a scenario text: sent once per distinct text, fetched by the
    workers that need it, and recomputed by Dask (from the graph) if its holder dies."""
    return text


def run_payload(prepared: PreparedRun, text: str, types: Mapping[str, str]) -> WorkerResult:
    """Run one prepared spec (in a worker) and build its tables. ``prepared`` may be
    :meth:`~vegaslab.sweeps.store.PreparedRun.light` (no text, no normalised scenario): ``text`` is
    the scenario text, and the worker's own normalisation must have the SHA-256 the client
    recorded. Never raises for a bad scenario or a failed simulation: the error is in the
    result."""
    import dataclasses
    import hashlib

    from ...controller import load as load_controller
    from ...core import call_core, load_core, package_version, run_core

    t0 = time.perf_counter()
    worker = _worker_name()
    spec = dataclasses.replace(prepared.spec, text=text)
    prepared = dataclasses.replace(prepared, spec=spec)
    hide = ""
    try:
        core = load_core()
        version = str(core.version())
        if version != prepared.core_version:
            raise EngineError(f"worker {worker} has vegaslab core {version}, the client {prepared.core_version}; "
                              "install the same vegaslab version on the client and every worker")
        with materialised(prepared) as (source, hide):
            normalized = call_core(core.normalize_scenario, spec.text, source, spec.seed, list(spec.overrides),
                                   load_controller)
            if hashlib.sha256(normalized.encode("utf-8")).hexdigest() != prepared.normalized_sha256:
                raise EngineError(f"{spec.source}: worker {worker} resolves the scenario differently from the client "
                                  "(another core build, or a referenced file changed); not run, so that no result is "
                                  "stored under a key it does not match")
            prepared = dataclasses.replace(prepared, normalized=normalized)
            core_run = run_core(spec.text, source, spec.seed, spec.overrides, _end_when_worker_closes())
        stored = stored_tables(core_run.tables)
        tables = keyed_tables(stored, prepared.key, prepared.seed, spec.params, types)
        versions = {"core_version": version, "vegaslab_version": package_version(),
                    "source_revision": str(core.source_revision())}
        wall = time.perf_counter() - t0
        row = run_row(prepared, core_run.meta, stored, wall_s=wall, worker=worker, versions=versions, types=types)
        own_types = {k: v for k, v in types.items() if k in spec.params}
        return WorkerResult(prepared.key, StoredRun(prepared.key, row, tables, own_types), "", wall, worker)
    except (KeyboardInterrupt, SystemExit):
        raise
    except VegaslabError as exc:
        msg = str(exc)
    except Exception as exc:  # noqa: BLE001 - reported as this run's failure, the others go on
        msg = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"
    if hide:
        msg = msg.replace(str(Path(hide) / Path(spec.source).name), spec.source).replace(hide, "<scenario dir>")
    return WorkerResult(prepared.key, None, msg.strip(), time.perf_counter() - t0, worker)
