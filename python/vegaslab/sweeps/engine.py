"""The execution engine: runs what a results store lacks on Dask (``dask.distributed``)::

    from vegaslab.sweeps.engine import execute
    from vegaslab.sweeps.store import RunSpec
    specs = [RunSpec.from_scenario("va-reroute", seed=s) for s in range(1, 41)]
    ex = execute(specs, "out/study")                          # a local cluster, one worker per core
    ex = execute(specs, "out/study", scheduler="tcp://127.0.0.1:8786")   # an existing cluster
    ex.ran, ex.stored, ex.failed

How it works, and why (docs/decisions.md, "Sweeps, engine and store"):

- **Dask, not a runner of our own.** The default is an embedded ``distributed.LocalCluster``
  with one single-threaded worker *process* per core (the core releases the GIL, but a
  process per worker keeps a crash or a memory blow-up to one worker, which its nanny
  restarts). ``scheduler="tcp://host:8786"`` (or ``DASK_SCHEDULER_ADDRESS``) uses an
  existing cluster whose workers only need ``pip install vegaslab``; ``scheduler=
  "synchronous"`` runs everything in this process, one run after another (for debugging and
  as the reference the distributed results are compared with). A ``distributed.Client`` may
  be passed too.
- **Workers get text, never paths.** The client resolves each spec with its own core
  (:func:`vegaslab.sweeps.store.prepare`): the run key, the normalised scenario and the content of
  every file the scenario references. A worker receives the TOML text, the overrides, the
  seed and those files (written into a private temporary directory beside a copy of the
  scenario's file name, so relative references resolve and the scenario id, the file stem,
  is unchanged), normalises the scenario with its own core and refuses to run when the result
  differs from the client's (another core version or build, or a changed file): a result is
  never stored under a key it does not match.
- **One writer.** Workers return Arrow tables; only the client writes the store
  (:meth:`vegaslab.sweeps.store.Store.writer`), in commits of ``batch_runs`` runs or every
  ``flush_s`` seconds, so partial results are readable while a sweep runs and a killed
  client loses at most the runs of its unflushed batch. At the end it merges the small
  commits (:meth:`vegaslab.sweeps.store.StoreWriter.compact`; a 10,000-run sweep leaves about 300,
  and reading them took 1.4 of the 2.1 s its result took to open), while the embedded
  cluster's workers exit in a background thread (they take 0.2-0.3 s).
- **Resumable.** Only runs whose key is not in the store are submitted; a spec list with
  repeated runs submits each once. Dask task keys are ``vegaslab-run-<run key>``.
- **Worker death.** Dask reschedules the tasks of a worker that dies. A run that kills its
  worker ``allowed_failures + 1`` times ends as a failed run (``KilledWorker``); the others
  complete. ``allowed_failures`` sets ``distributed.scheduler.allowed-failures`` for the
  embedded cluster only: an existing cluster uses its scheduler's own setting. The embedded
  cluster also sets ``distributed.scheduler.worker-saturation`` to 1.0, so that a worker
  holds only the run it is computing and a death is counted against that run alone (Dask
  counts it against every task assigned to the worker); give an existing cluster's scheduler
  the same setting (``DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION=1.0``). A run that
  fails (a scenario error, a simulation error, a killed worker) is not stored, so the next
  execute tries it again.
- **One run per task, no batching.** Measured per run (a two-flow run, no monitors): 2 ms in
  the worker beyond the simulation (normalising again 0.15 ms, decoding the JSON 0.15 ms,
  Arrow tables 1.4 ms, the runs row 0.3 ms) and a 5-10 ms scheduler round trip between two
  runs on a worker (worker-saturation 1.0 keeps no run queued on a worker). What dominates a
  short sweep is fixed: starting the cluster's worker processes (0.45-0.9 s on 2 cores) and
  each worker's first run importing pyarrow and pandas (0.2-0.3 s; pyarrow imports pandas as
  soon as it builds an array, so a worker cannot avoid it). Batching several runs per task
  would save only the round trip, and would make a worker death count against every run of
  the batch; it was not worth that.
- **Ctrl-C.** A terminal sends SIGINT to the whole process group, the embedded cluster's
  worker processes included; they never get it (started with SIGINT blocked, from their
  first instruction: :func:`_sigint_blocked_in_new_threads`) and ignore it once Dask runs
  (the preload :mod:`vegaslab.sweeps.dask_worker`, which each nanny also gives the workers it
  restarts), and the nanny's errors about interrupted
  workers are dropped, so the user sees only the client's "interrupted". In this process
  SIGINT is deferred (:mod:`vegaslab.interrupts`) from the store's lock to the cluster's end:
  it is recorded, and the loop that collects results stops at its next turn (every 5 ms), so
  no ``KeyboardInterrupt`` is raised inside a Dask call, a commit or the embedded scheduler's
  gc callback (where Python would drop it, and the command would run on to its end). A worker busy in a
  run then ends when the cluster closes: the nanny asks it to stop and kills it after 4 s.
- **Errors before work.** A scheduler address that cannot be one (``scheme://host:port``,
  checked with Dask's parser) is an :class:`EngineError` naming ``scheduler`` or
  ``DASK_SCHEDULER_ADDRESS`` before anything starts; an address where nothing accepts a TCP
  connection fails after a probe of at most :data:`PROBE_TIMEOUT_S`, not after Dask's 60 s
  of retries. When every run is stored, nothing is written and the writer lock is not
  taken, so a reproduce of finished runs works while a sweep writes to the same store.
- **Bit-identical.** A run's tables depend only on its normalised scenario, seed and core
  version: the same whatever executor or number of workers computed it. Only the columns in
  :data:`vegaslab.sweeps.store.NONDETERMINISTIC_COLUMNS` (wall times, the worker's address) differ.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import socket
import tempfile
import threading
import time
import traceback
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..errors import VegaslabError
from .. import interrupts
from .store import PreparedRun, RunSpec, Store, StoredRun, keyed_tables, prepared_runs, param_types, run_row, stored_tables

__all__ = ["execute", "run_payload", "Execution", "RunOutcome", "EngineError", "SYNCHRONOUS"]

#: ``scheduler=SYNCHRONOUS`` runs every run in the calling process, one after another.
SYNCHRONOUS = "synchronous"

#: How long to wait for a scheduler to answer and for at least one worker to join.
CONNECT_TIMEOUT_S = 60.0

#: How long the TCP probe before connecting waits (see :func:`_probe`): a refused or
#: unreachable address fails after at most this, not after :data:`CONNECT_TIMEOUT_S`.
PROBE_TIMEOUT_S = 3.0

#: Address schemes a scheduler may have (Dask's network transports; ``inproc`` is in-process
#: only and cannot be another process's scheduler).
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")


class EngineError(VegaslabError):
    """The engine cannot run: no scheduler at the address, no worker joined, bad settings."""


@dataclass
class RunOutcome:
    """What happened to one spec: ``stored`` (already in the store), ``ran`` (computed and
    committed now) or ``failed`` (``error`` says why; nothing was stored)."""

    spec: RunSpec
    key: str
    status: str
    error: str = ""
    wall_s: float = 0.0
    worker: str = ""


@dataclass
class Execution:
    """Every spec's outcome (in spec order) and what the run of :func:`execute` cost."""

    outcomes: list[RunOutcome] = field(default_factory=list)
    wall_s: float = 0.0
    submitted: int = 0
    commits: int = 0
    #: Commits merged away by the compaction at the end (see ``compact`` of :func:`execute`).
    merged: int = 0
    interrupted: bool = False
    executor: str = ""

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def ran(self) -> int:
        return self.count("ran")

    @property
    def stored(self) -> int:
        return self.count("stored")

    @property
    def failed(self) -> int:
        return self.count("failed")


# ---------------------------------------------------------------------- the worker side


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


class WorkerClosing(Exception):
    """Raised (through the core's progress callback) to end a run whose worker is closing."""


def _end_when_worker_closes() -> Callable[[float, float], None] | None:
    """A progress callback for the core (called every 0.2 s of a run) that ends the run once
    this process's Dask worker is closing, or None outside a worker.

    A worker closes when the client was interrupted or closes the cluster, and its run's result
    is no longer wanted; Dask's close would wait for the running task until the nanny kills the
    worker after 4 s (docs/decisions.md, "A run ends when its worker closes")."""
    try:
        from distributed import get_worker
        from distributed.core import Status

        worker = get_worker()
    except (ImportError, ValueError):
        return None
    closing = (Status.closing, Status.closed, Status.failed)

    def check(sim_s: float, duration_s: float) -> None:
        if worker.status in closing:
            raise WorkerClosing(f"the worker closed at {sim_s:g} s of {duration_s:g} s simulated")

    return check


def _safe_relative(name: str) -> PurePosixPath | None:
    """``name`` as a relative path (``..`` allowed), or None when it is absolute."""
    if PurePosixPath(name).is_absolute() or PureWindowsPath(name).is_absolute():
        return None
    return PurePosixPath(name.replace("\\", "/"))


@contextmanager
def _materialised(prepared: PreparedRun) -> Iterator[tuple[str, str]]:
    """The source name to run under, and the temporary directory to hide in messages.

    Without referenced files it is the original source name (the core reads nothing from
    it). With them, the files are written into a fresh temporary directory and the scenario
    text is written as a file ``depth`` directories deep (``depth`` = the most ``..`` any
    name climbs), so each name resolves, relative to it, to its own copy. An absolute name is not copied: the
    worker reads that path itself, and the normalised-scenario check catches a difference."""
    if not prepared.files:
        yield prepared.spec.source, ""
        return
    rels = {name: _safe_relative(name) for name in prepared.files}
    depth = max((sum(1 for p in r.parts if p == "..") for r in rels.values() if r is not None), default=0)
    with tempfile.TemporaryDirectory(prefix="vegaslab-run-") as tmp:
        home = Path(tmp).joinpath(*[f"d{i}" for i in range(depth)])
        home.mkdir(parents=True, exist_ok=True)
        for name, rel in rels.items():
            if rel is None:
                continue
            target = Path(os.path.normpath(home / Path(*rel.parts)))
            if not str(target).startswith(str(Path(tmp))):  # pragma: no cover - depth covers every ".."
                raise EngineError(f"{prepared.spec.source}: cannot place referenced file {name!r}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(prepared.files[name])
        # The core resolves names against the scenario's directory only when the scenario
        # file exists (else against the working directory), so the text is written too.
        scenario = home / (Path(prepared.spec.source).name or "scenario.toml")
        scenario.write_text(prepared.spec.text, encoding="utf-8")
        yield str(scenario), str(home)


def _echo(text: str) -> str:
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

    from ..core import call_core, load_core, package_version, run_core

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
        with _materialised(prepared) as (source, hide):
            normalized = call_core(core.normalize_scenario, spec.text, source, spec.seed, list(spec.overrides))
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


# ---------------------------------------------------------------------- the client side


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _scheduler_address(scheduler: Any) -> Any:
    if scheduler is not None:
        return scheduler
    env = os.environ.get("DASK_SCHEDULER_ADDRESS", "").strip()
    return env or None


def check_scheduler(scheduler: Any = None, name: str = "scheduler") -> None:
    """Raise :class:`EngineError` when ``scheduler`` (a string; None: ``DASK_SCHEDULER_ADDRESS``
    if set) is not ``"synchronous"`` nor an address ``scheme://host:port`` (``host:port``
    means ``tcp://``) with a network scheme and a port from 1 to 65535. The message starts
    with ``name`` (``--scheduler`` on the command line), or ``DASK_SCHEDULER_ADDRESS`` when
    the address came from there.

    Checked before anything starts, with Dask's own parser (``distributed.comm.parse_address``
    / ``parse_host_port``): ``Client("bogus")`` raises a ValueError only once connecting, and
    leaves a half-made client whose ``__del__`` waits 120 s at exit."""
    if scheduler is None:
        scheduler, name = os.environ.get("DASK_SCHEDULER_ADDRESS", "").strip(), "DASK_SCHEDULER_ADDRESS"
        if not scheduler:
            return
    if not isinstance(scheduler, str) or scheduler == SYNCHRONOUS:
        return
    from distributed.comm import parse_address, parse_host_port

    usage = (f"{name}: must be {SYNCHRONOUS!r} or a Dask scheduler address scheme://host:port "
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


def _probe(scheduler: str) -> None:
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


@contextmanager
def _sigint_blocked_in_new_threads() -> Iterator[None]:
    """Block SIGINT in the calling thread meanwhile, so that the threads it starts (the
    embedded cluster's event loop, and from it every thread that starts a worker process,
    restarts included) block it for good, and so do the worker processes they start (a
    process inherits its creator's signal mask, through exec too).

    The preload (:mod:`vegaslab.sweeps.dask_worker`) makes a worker ignore SIGINT only once its Dask
    code runs; blocked from the start, the signal never reaches a worker, even in the second or
    so while it still imports Dask. The client's main thread gets it as before
    (:func:`execute` defers it, so a Ctrl-C during the cluster's start is acted on once the
    cluster has started, and the cluster is then closed).
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


@contextmanager
def _client(scheduler: Any, workers: int | None, allowed_failures: int | None,
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
        _quiet_nanny(+1)
        cluster = None

        def close() -> None:
            try:
                if cluster is not None:
                    cluster.close()
            finally:
                _quiet_nanny(-1)

        try:
            with dask.config.set(settings), _sigint_blocked_in_new_threads():
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
    _probe(scheduler)
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


class _WorkerDeaths(logging.Filter):
    """Remembers how each worker process of the embedded cluster ended, by pid.

    The nannies of a ``LocalCluster`` run in this process and log each worker's end at INFO
    (``Worker process 123 was killed by signal 6``); this filter, on the nanny's logger,
    records those lines and lets only warnings and errors through (the cluster's logs stay
    as quiet as before). An existing cluster's nannies log elsewhere: then nothing is known."""

    _LINE = re.compile(r"Worker process (\d+) (was killed by signal (\d+)|exited with status (-?\d+)|"
                       r"was killed by unknown signal)")

    #: How long a failure waits for its worker's end to be logged: the scheduler may learn
    #: of the death (the worker's connection drops) before the nanny sees the process exit.
    WAIT_S = 2.0

    def __init__(self) -> None:
        super().__init__()
        self.by_pid: dict[int, str] = {}
        self._changed = threading.Condition()
        #: Set while an embedded cluster runs: only then can a death be logged here.
        self.local = False

    def how_ended(self, pid: int | None) -> str | None:
        """How worker process ``pid`` ended, waiting up to :data:`WAIT_S` for the nanny's
        line when the cluster is embedded; None when unknown."""
        if not pid:
            return None
        deadline = time.monotonic() + (self.WAIT_S if self.local else 0.0)
        with self._changed:
            while pid not in self.by_pid:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._changed.wait(left)
            return self.by_pid[pid]

    def filter(self, record: logging.LogRecord) -> bool:
        m = self._LINE.search(record.getMessage())
        if m:
            pid, sig, status = int(m.group(1)), m.group(3), m.group(4)
            if sig is not None:
                try:
                    name = signal.Signals(int(sig)).name
                except ValueError:
                    name = f"signal {sig}"
                how = f"killed by {name}"
            elif status is not None:
                how = f"exited with status {status}"
            else:
                how = "killed by an unknown signal"
            with self._changed:
                self.by_pid[pid] = f"worker process {pid} {how}"
                self._changed.notify_all()
        return record.levelno >= logging.WARNING

    @contextmanager
    def watching(self) -> Iterator["_WorkerDeaths"]:
        """Record deaths meanwhile, and drop the scheduler's errors about them: the engine
        reports each failed run itself, and Dask recovers from the lost results it logs."""
        log = logging.getLogger("distributed.nanny")
        scheduler_log = logging.getLogger("distributed.scheduler")
        level = log.level
        log.setLevel(logging.INFO)
        log.addFilter(self)
        scheduler_log.addFilter(_drop_death_noise)
        try:
            yield self
        finally:
            scheduler_log.removeFilter(_drop_death_noise)
            log.removeFilter(self)
            log.setLevel(level)


def _drop_interrupt_noise(record: logging.LogRecord) -> bool:
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


def _quiet_nanny(delta: int) -> None:
    """Count the embedded clusters alive (started, not yet closed: closing may outlive the
    client, in a thread) and keep :func:`_drop_interrupt_noise` on the nanny's logger
    meanwhile."""
    global _quiet_count
    with _quiet_lock:
        _quiet_count += delta
        log = logging.getLogger("distributed.nanny")
        if _quiet_count > 0:
            log.addFilter(_drop_interrupt_noise)  # once: a logger keeps no duplicates
        else:
            log.removeFilter(_drop_interrupt_noise)


def _drop_death_noise(record: logging.LogRecord) -> bool:
    msg = record.getMessage()
    return not (msg.startswith("Couldn't gather keys") or "workers died while trying to run it" in msg)


def _failure_message(prepared: PreparedRun, exc: BaseException, deaths: _WorkerDeaths | None = None) -> str:
    from distributed import KilledWorker

    if isinstance(exc, KilledWorker):
        how = deaths.how_ended(getattr(exc.last_worker, "pid", None)) if deaths is not None else None
        tries = exc.allowed_failures + 1
        return (f"{prepared.spec.label}: the run's worker process died each time it was tried "
                f"({tries} time{'s' if tries > 1 else ''}; last: {how or 'worker ' + str(exc.last_worker.address)}): "
                "the run crashed the process or ran out of memory (the other runs are not affected)")
    return f"{prepared.spec.label}: {type(exc).__name__}: {exc}"


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
               ``workers`` worker processes, default one per core), ``"tcp://host:port"``
               (an existing cluster; ``workers``: how many to wait for, default 1),
               ``"synchronous"`` (in this process) or a ``distributed.Client``.
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
    runs not finished (marked failed, "interrupted"), commits the finished ones, closes the
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
    deaths = _WorkerDeaths()
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
                    outcome = RunOutcome(p.spec, p.key, "failed", _failure_message(p, exc, deaths))
                decide(p, outcome)
                if bar is not None:
                    bar.update(1)
                    if outcome.status == "failed":
                        bar.write(f"FAILED {outcome.error.splitlines()[0] if outcome.error else p.spec.label}")

            try:
                ctrl_c.check()
                if not todo:
                    ex.executor = "nothing to run"
                elif scheduler == SYNCHRONOUS:
                    ex.executor = "synchronous, in this process"
                    for p in todo:  # the same calls a worker makes
                        with ctrl_c.raising():  # a run in this process may stop anywhere
                            result = run_fn(p.light(), p.spec.text, dict(types))
                        finished(p, result, None)
                else:
                    deaths.local = _scheduler_address(scheduler) is None
                    with deaths.watching(), _client(_scheduler_address(scheduler), workers, allowed_failures,
                                                    closing, ctrl_c) as (client, what):
                        ex.executor = what
                        ctrl_c.check()  # pressed while the cluster started
                        _run_on_dask(client, todo, types, run_fn, writer, finished, ctrl_c.check)
            except KeyboardInterrupt:
                ex.interrupted = True
            finally:
                if bar is not None:
                    bar.close()
            for key, o in by_key.items():
                if o.status == "pending":
                    by_key[key] = RunOutcome(o.spec, key, "failed", "interrupted" if ex.interrupted else "not run")
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


def _run_on_dask(client: Any, todo: Sequence[PreparedRun], types: Mapping[str, str], run_fn: Callable,
                 writer: Any, finished: Callable, check_interrupt: Callable[[], None]) -> None:
    """Submit ``todo`` and hand each result to ``finished`` as it arrives, committing on the
    writer's schedule meanwhile; ``check_interrupt`` raises ``KeyboardInterrupt`` after a
    Ctrl-C, and is called between results. On any exit, unfinished tasks are cancelled."""
    from distributed import as_completed

    import hashlib

    # Each distinct scenario text travels once, as the result of a task the runs depend on
    # (a sweep's runs share one text); the runs carry only their overrides, seed, parameters
    # and referenced files. One map call: the tasks reach the scheduler in one message.
    texts: dict[str, Any] = {}
    for p in todo:
        if p.spec.text not in texts:
            digest = hashlib.sha256(p.spec.text.encode("utf-8")).hexdigest()
            texts[p.spec.text] = client.submit(_echo, p.spec.text, key=f"vegaslab-text-{digest}", pure=False)
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
