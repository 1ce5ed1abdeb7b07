"""The engine's entry point, :func:`execute`: compute every spec whose run a results store
lacks, on the scheduler asked for, and commit each result through the store's one writer.

It resolves the specs, decides which runs are stored already, takes the store's writer only
when something is missing, runs the rest (in this process, or on Dask through
:mod:`.cluster` and :mod:`.dask_runs`), turns each result into a :class:`RunOutcome`, and
compacts the store's small commits at the end. Ctrl-C is deferred from the store's lock to the
cluster's end (:mod:`vegaslab.interrupts`) and acted on at the safe points marked below."""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ... import interrupts
from ..store import PreparedRun, RunSpec, Store, param_types, prepared_runs
from .choice import WorkBudget, cluster_threshold_s
from .cluster import connect, default_workers
from .dask_runs import run_on_dask
from .deaths import WorkerDeaths, failure_message
from .outcomes import Execution, RunOutcome
from .scheduler import AUTO, SYNCHRONOUS, check_scheduler, scheduler_address
from .worker import WorkerResult, run_payload, watched


def execute(
    specs: Iterable[RunSpec | PreparedRun],
    store: Store | str | os.PathLike,
    scheduler: Any = None,
    workers: int | None = None,
    *,
    batch_runs: int = 256,
    flush_s: float = 2.0,
    allowed_failures: int | None = None,
    progress: bool = False,
    on_outcome: Callable[[RunOutcome], None] | None = None,
    run_fn: Callable[[PreparedRun, str, Mapping[str, str]], WorkerResult] = run_payload,
    compact: bool = True,
) -> Execution:
    """Compute every spec whose run is not in ``store`` and commit it there.

    scheduler: None (``DASK_SCHEDULER_ADDRESS`` if set, else an embedded local cluster of
               ``workers`` worker processes, default one per core), ``"local"`` (that
               embedded cluster, whatever the environment says), ``"tcp://host:port"``
               (an existing cluster; ``workers``: how many to wait for, default 1),
               ``"synchronous"`` (in this process), ``"auto"`` (``DASK_SCHEDULER_ADDRESS`` if
               set, else in this process while the estimated work is small and on the
               embedded cluster beyond: :mod:`.choice`) or a ``distributed.Client``.
    batch_runs, flush_s: commit after that many runs, or when the oldest uncommitted run
               waited that long (see :meth:`vegaslab.sweeps.store.Store.writer`).
    allowed_failures: worker deaths a run may cause before it fails (embedded cluster only;
               Dask's default is 3).
    on_outcome: called in this thread with each spec's :class:`RunOutcome` as it is known.
    run_fn:    what a worker calls per run (a picklable top-level function); tests replace it.
    compact:   at the end, merge the store's small commits once a parameter set has
               :data:`vegaslab.sweeps.store.COMPACT_MIN_COMMITS` of them (a sweep commits every
               ``flush_s`` seconds, and reading many small files is slow); not after Ctrl-C.

    The embedded cluster starts worker processes with Python's *spawn* method, which imports
    the main module again: a script must call this under ``if __name__ == "__main__":``.

    Raises :class:`vegaslab.sweeps.store.StoreError` for an unusable store or bad parameters (and
    :class:`vegaslab.sweeps.store.StoreLockedError` when a run is missing and another process
    writes to the store) and :class:`EngineError` for a malformed scheduler address or when
    no cluster can be reached, before anything runs.

    Ctrl-C (SIGINT; in the main thread) from the store's lock to the cluster's end cancels the
    runs not finished (status ``interrupted``), commits the finished ones, closes the
    cluster and returns with ``interrupted`` set, within seconds whenever it comes: while the
    cluster starts, while runs are in flight, during a commit (which completes) or while the
    cluster closes (:mod:`vegaslab.interrupts`). Before that (resolving the specs) it raises
    ``KeyboardInterrupt`` as usual.
    """
    t0 = time.perf_counter()
    check_scheduler(scheduler)
    store = store if isinstance(store, Store) else Store(store)
    prepared = prepared_runs(specs)
    types = param_types(prepared)
    ex = Execution()
    by_key: dict[str, RunOutcome] = {}  # the outcome of each distinct run
    order: list[PreparedRun] = prepared

    def decide(p: PreparedRun, outcome: RunOutcome) -> None:
        by_key[p.key] = outcome
        if on_outcome is not None:
            on_outcome(outcome)

    bar = None
    deaths = WorkerDeaths()
    closing: list[threading.Thread] = []  # the embedded cluster, closing while the store is finished
    # Only a missing run needs the store's (single) writer: when every run is stored this
    # only reads, so a reproduce of stored runs works while a sweep writes to the store.
    # The writer lists the stored runs again once it holds the lock.
    stored_now = store.keys()
    reading = all(p.error or p.key in stored_now for p in prepared)
    # From here to the cluster's end a Ctrl-C only records a request, acted on at the safe
    # points below (vegaslab.interrupts): a KeyboardInterrupt raised wherever the main thread
    # happens to be could be dropped (in the embedded scheduler's gc callback) or cut a store
    # commit or a Dask call in two.
    with interrupts.deferred() as ctrl_c:
        opened = _Reader(stored_now) if reading else store.writer(batch_runs=batch_runs, flush_s=flush_s)
        with _joined(closing), opened as writer:
            todo = _to_run(prepared, writer, by_key, decide, on_outcome)
            ex.submitted = len(todo)
            if progress and todo:
                import sys

                from tqdm.auto import tqdm

                # disable=None: no bar frames when stderr is not a terminal (a redirected log).
                bar = tqdm(total=len(todo), unit="run", file=sys.stderr, dynamic_ncols=True, disable=None,
                           desc=f"running ({len(prepared) - len(todo)} stored)")

            def finished(p: PreparedRun, res: WorkerResult | None, exc: BaseException | None) -> None:
                if res is not None and res.run is not None:
                    writer.add(res.run)
                    outcome = RunOutcome(p.spec, p.key, "ran", wall_s=res.wall_s, worker=res.worker)
                elif res is not None:
                    outcome = RunOutcome(p.spec, p.key, "failed", res.error, res.wall_s, res.worker)
                else:
                    outcome = RunOutcome(p.spec, p.key, "failed", failure_message(p, exc, deaths))
                decide(p, outcome)
                if bar is not None:
                    bar.update(1)
                    if outcome.status == "failed":
                        bar.write(f"FAILED {outcome.error.splitlines()[0] if outcome.error else p.spec.label}")

            try:
                ctrl_c.check()
                left = todo
                if not todo:
                    ex.executor = "nothing to run"
                elif scheduler == SYNCHRONOUS:
                    ex.executor = "synchronous, in this process"
                    left = _run_here(todo, types, run_fn, finished, ctrl_c, None)
                elif scheduler == AUTO and scheduler_address(AUTO) is None:
                    n = int(workers) if workers else default_workers()
                    budget = WorkBudget(len(todo), cluster_threshold_s(n), n)
                    left = _run_here(todo, types, run_fn, finished, ctrl_c, budget)
                    ex.estimate_s = budget.estimate_s
                    ex.executor = (f"in this process: estimated work {budget.estimate_s:.1f} s, "
                                   + ("one worker process would not be faster" if n < 2 else
                                      f"under the {budget.limit_s:.1f} s from which {n} worker processes pay"))
                if left:
                    deaths.local = scheduler_address(scheduler) is None
                    with deaths.watching(), connect(scheduler_address(scheduler), workers, allowed_failures,
                                                   closing, ctrl_c) as (client, what):
                        ex.executor = what if left is todo else (
                            f"{what}: estimated work {ex.estimate_s:.1f} s, after {_runs(len(todo) - len(left))} "
                            "in this process")
                        ctrl_c.check()  # pressed while the cluster started
                        run_on_dask(client, left, types, run_fn, writer, finished, ctrl_c.check)
            except KeyboardInterrupt:
                ex.interrupted = True
            finally:
                if bar is not None:
                    bar.close()
            for key, o in by_key.items():
                if o.status == "pending":
                    by_key[key] = (RunOutcome(o.spec, key, "interrupted", "interrupted") if ex.interrupted else
                                   RunOutcome(o.spec, key, "failed", "not run"))
            if compact and not ex.interrupted and not reading:
                # Every run is committed by now; a compaction stopped anywhere (Ctrl-C, a full
                # disk) leaves a complete store that the next writer tidies.
                writer.flush()
                try:
                    with ctrl_c.raising():
                        ex.merged = writer.compact()
                except KeyboardInterrupt:
                    ex.interrupted = True
                except OSError:
                    pass
    # A Ctrl-C while the last results were committed or the cluster closed still counts.
    ex.interrupted = ex.interrupted or ctrl_c.is_set()
    ex.commits = writer.commits_written
    ex.outcomes = [RunOutcome(p.spec, "", "failed", p.error) if p.error else
                   _for_spec(by_key[p.key], p.spec) for p in order]
    ex.wall_s = time.perf_counter() - t0
    return ex


def _run_here(todo: Sequence[PreparedRun], types: Mapping[str, str], run_fn: Callable, finished: Callable,
              ctrl_c: interrupts.Request, budget: WorkBudget | None) -> Sequence[PreparedRun]:
    """Run ``todo`` in this process, one after another, with the calls a worker makes. With a
    ``budget``, stop as soon as the sweep's estimated work passes it (:mod:`.choice`) and
    return the runs left for the cluster, an abandoned one included; else return none."""
    if budget is not None:
        # Storing a run needs them (pyarrow imports pandas): imported before the first run's
        # wall time is measured, which would otherwise count them as that run's work.
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
    for i, p in enumerate(todo):
        with ctrl_c.raising(), watched(budget.watch() if budget is not None else None):
            result = run_fn(p.light(), p.spec.text, dict(types))
        if budget is not None and budget.exceeded and result.run is None:  # abandoned, to run again there
            return todo[i:]
        finished(p, result, None)
        if budget is not None and budget.finished(_work_s(result, first=i == 0)) and i + 1 < len(todo):
            return todo[i + 1:]
    return []


def _runs(n: int) -> str:
    return f"{n} run{'' if n == 1 else 's'}"


def _work_s(result: WorkerResult, *, first: bool) -> float:
    """A run's work for the estimate: its wall time, but for the first run in this process
    its simulation's (the core's ``wall_time_s``), because the first also pays one-off costs
    (lazy imports and first calls in building its tables) that the runs after it do not."""
    sim = result.run.row.get("sim_wall_s") if first and result.run is not None else None
    return float(sim) if isinstance(sim, (int, float)) and sim >= 0 else result.wall_s


def _to_run(prepared: Sequence[PreparedRun], writer: Any, by_key: dict[str, RunOutcome],
            decide: Callable[[PreparedRun, RunOutcome], None],
            on_outcome: Callable[[RunOutcome], None] | None) -> list[PreparedRun]:
    """The distinct runs the store lacks (each marked pending in ``by_key``); the others get
    their outcome now (invalid specs: failed; stored runs: stored)."""
    todo: list[PreparedRun] = []
    for p in prepared:
        if p.error:
            outcome = RunOutcome(p.spec, "", "failed", p.error)
            if on_outcome is not None:
                on_outcome(outcome)
            continue
        if p.key in by_key:  # the same run twice in the list: one outcome for both
            continue
        if p.key in writer.stored:
            decide(p, RunOutcome(p.spec, p.key, "stored"))
        else:
            todo.append(p)
            by_key[p.key] = RunOutcome(p.spec, p.key, "pending")
    return todo


class _Reader:
    """Stands for the store's writer when :func:`execute` has nothing to write."""

    commits_written = 0

    def __init__(self, stored: set[str]) -> None:
        self.stored = stored

    def __enter__(self) -> "_Reader":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


@contextmanager
def _joined(threads: list[threading.Thread]) -> Iterator[None]:
    """Join ``threads`` (appended to meanwhile) on the way out, whatever happened."""
    try:
        yield
    finally:
        for t in threads:
            t.join()


def _for_spec(o: RunOutcome, spec: RunSpec) -> RunOutcome:
    return o if o.spec is spec else RunOutcome(spec, o.key, o.status, o.error, o.wall_s, o.worker)
