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
  as the reference the distributed results are compared with). ``scheduler="auto"`` (what a
  sweep uses) starts in this process and moves to the embedded cluster once the estimated
  work says it pays (:mod:`.choice`). A ``distributed.Client`` may be passed too.
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
  first instruction: :func:`.sigint.sigint_blocked_in_new_threads`) and ignore it once Dask runs
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

One job per module: :mod:`.execution` (:func:`execute`), :mod:`.worker` (what a worker runs,
:func:`run_payload`, and sends back) and :mod:`.files` (the referenced files it writes),
:mod:`.scheduler` (which scheduler, checked and probed), :mod:`.choice` (in this process or
on the cluster, by the estimated work), :mod:`.cluster` (the connected client,
the embedded cluster), :mod:`.sigint` (Ctrl-C kept from its workers), :mod:`.dask_runs` (runs
submitted and collected), :mod:`.deaths` (how workers died, and the failure message) and
:mod:`.noise` (Dask's log records dropped), :mod:`.outcomes` and :mod:`.errors`.
"""

from .cluster import CONNECT_TIMEOUT_S, default_workers
from .errors import EngineError
from .execution import execute
from .outcomes import Execution, RunOutcome
from .scheduler import AUTO, LOCAL, PROBE_TIMEOUT_S, SCHEDULER_SCHEMES, SYNCHRONOUS, check_scheduler
from .worker import WorkerClosing, WorkerResult, run_payload

__all__ = ["execute", "run_payload", "Execution", "RunOutcome", "EngineError", "SYNCHRONOUS", "LOCAL", "AUTO"]
