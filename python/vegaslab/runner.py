"""Running catalog experiments in parallel, with a cache of finished runs.

A :class:`Job` is one simulation: an entry's variant with one seed (and, under ``--quick``, the
entry's quick overrides). :func:`plan` lists the jobs of some entries; :func:`execute` runs the
ones that are not cached yet in worker processes, with a tqdm bar, and stores each finished run
in ``<cache>/<key>/`` (Results.write_files: Parquet + CSV + meta.json with the run's
provenance, plus ``job.json``).

Decisions (issue 7):

- The cache key is a SHA-256 over the core's *normalised* scenario
  (``vegaslab.normalize``: every default filled in, overrides and seed applied, the SHA-256 of
  every referenced file such as a delay trace), the core version, the core's source revision
  and the vegaslab version. Editing a claim or a note reruns nothing; editing a delay-trace
  file reruns the runs that read it. When the core was built from a dirty or unknown revision,
  the SHA-256 of the compiled core file is added, so a rebuild never serves stale results.
- Each worker is a process of its own, fed one job at a time over a pipe. When one dies (a
  run that aborts the process), only the job it held fails, with the signal or exit status
  in the message; a new worker takes over the remaining jobs. ``--jobs 1`` uses one worker
  process too, so no run can take the command down with it.
- A worker exits when the command dies, even by SIGKILL: it holds the read end of a pipe
  whose only writer is the parent and a thread kills the worker at end-of-file (portable);
  on Linux, prctl(PR_SET_PDEATHSIG) adds the kernel's guarantee.
- A run is stored by renaming a finished temporary directory into place, so an interrupted
  reproduce keeps every run that finished and never leaves half a run in the cache. A run
  that fails is reported in its :class:`Outcome` and is not cached (the next reproduce
  retries it); it does not stop the others.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import sys
import threading
import time
import traceback
from collections import deque
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from .catalog import Entry
    from .results import Results

#: Bump to invalidate every cache (the layout or the meaning of a stored run changed).
CACHE_FORMAT = 2  # 2: keyed by the normalised scenario; tables checksummed


@dataclass(frozen=True)
class Job:
    """One simulation: ``entry_id``'s ``variant`` with ``seed``."""

    entry_id: str
    variant: str
    seed: int
    scenario_path: str
    overrides: tuple[str, ...]
    key: str
    #: Set when the scenario is invalid at planning time: the job fails with this message
    #: without being run (and is never cached).
    error: str = ""

    @property
    def label(self) -> str:
        return f"{self.entry_id}/{self.variant}/seed{self.seed}"


@dataclass
class Outcome:
    """What happened to a job: ``cached`` (found in the cache), ``ran`` or ``failed``."""

    job: Job
    status: str
    error: str = ""
    wall_s: float = 0.0  # simulation wall time (for a cached run: when it was computed)


@dataclass
class Execution:
    """Every job's outcome, and counts for the report."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)  # by job key
    wall_s: float = 0.0
    interrupted: bool = False

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes.values() if o.status == status)

    @property
    def ran(self) -> int:
        return self.count("ran")

    @property
    def cached(self) -> int:
        return self.count("cached")

    @property
    def failed(self) -> int:
        return self.count("failed")


# ---------------------------------------------------------------------- keys and plans


@lru_cache(maxsize=1)
def build_identity() -> dict:
    """The compiled core's identity for cache keys: version and source revision, plus the
    SHA-256 of the core file when the revision is dirty or unknown (then the revision alone
    does not say which code ran)."""
    from . import __version__, _load_core

    core = _load_core()
    ident = {"vegaslab": __version__, "core": str(core.version()), "revision": str(core.source_revision())}
    if ident["revision"] == "unknown" or ident["revision"].endswith("+dirty"):
        h = hashlib.sha256()
        with open(core.__file__, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        ident["core_sha256"] = h.hexdigest()
    return ident


def job_key(normalized: dict, identity: dict | None = None) -> str:
    """The cache key of one run: its normalised scenario (``vegaslab.normalize`` with the
    run's overrides and seed) and the build identity (see the module docstring)."""
    doc = {"format": CACHE_FORMAT, "scenario": normalized,
           "build": identity if identity is not None else build_identity()}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _invalid_key(path: str, variant: str, overrides: Sequence[str], seed: int) -> str:
    text = json.dumps(["invalid", path, variant, list(overrides), seed])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plan(entries: Iterable["Entry"], *, quick: bool = False, seed: int | None = None) -> list[Job]:
    """The jobs of these entries: every variant x every seed (``seed`` replaces the entry's
    seeds with that one seed). Each file is read once and normalised by the core per job; a
    job whose scenario the core rejects carries the error (it fails without running)."""
    from . import ScenarioError, VegaslabError, _normalize_text, read_text_file
    from .catalog import expand

    identity = build_identity()
    texts: dict[str, str] = {}
    jobs: list[Job] = []
    for entry in entries:
        seeds = [seed] if seed is not None else entry.seeds(quick=quick)
        for spec in expand(entry, quick=quick):
            path = os.fspath(spec.scenario_path)
            if path not in texts:
                texts[path] = read_text_file(path)
            for s in seeds:
                s = int(s)
                try:
                    key, error = job_key(_normalize_text(texts[path], path, s, list(spec.overrides)), identity), ""
                except (ScenarioError, VegaslabError, FileNotFoundError) as exc:
                    key, error = _invalid_key(path, spec.name, spec.overrides, s), str(exc)
                jobs.append(Job(entry_id=entry.id, variant=spec.name, seed=s, scenario_path=path,
                                overrides=tuple(spec.overrides), key=key, error=error))
    return jobs


# ---------------------------------------------------------------------- the cache


def cache_path(cache_dir: str | os.PathLike, key: str) -> Path:
    return Path(cache_dir) / key[:2] / key


def is_cached(cache_dir: str | os.PathLike, key: str) -> bool:
    return (cache_path(cache_dir, key) / "job.json").is_file()


def load(cache_dir: str | os.PathLike, job: Job) -> "Results":
    """The stored Results of a finished job."""
    from .results import Results

    return Results.from_dir(cache_path(cache_dir, job.key))


def _store(cache_dir: Path, job: Job, results: "Results", wall_s: float) -> None:
    final = cache_path(cache_dir, job.key)
    tmp = final.parent / f".tmp-{job.key}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    results.write_files(tmp)
    info = {**asdict(job), "wall_s": wall_s, "finished": time.time()}
    (tmp / "job.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    try:
        os.replace(tmp, final)
    except OSError:  # another process stored the same run first
        shutil.rmtree(tmp, ignore_errors=True)


def _cached_wall(cache_dir: Path, job: Job) -> float:
    try:
        return float(json.loads((cache_path(cache_dir, job.key) / "job.json").read_text())["wall_s"])
    except (OSError, ValueError, KeyError):
        return 0.0


# ---------------------------------------------------------------------- running


def run_job(job: Job, cache_dir: str) -> Outcome:
    """Run one job and store it in the cache (in a worker process). Never raises for a
    failed simulation: the error is in the Outcome."""
    from . import run

    t0 = time.perf_counter()
    if job.error:
        return Outcome(job, "failed", error=job.error)
    try:
        results = run(job.scenario_path, seed=job.seed, overrides=list(job.overrides))
        wall = time.perf_counter() - t0
        ran_key = job_key(results.meta["provenance"]["scenario"])
        if ran_key != job.key:  # never store a result under a key it does not match
            return Outcome(job, "failed", wall_s=wall, error=(
                f"{job.scenario_path}: the scenario or a file it references changed after the runs were "
                "planned; run reproduce again"))
        _store(Path(cache_dir), job, results, wall)
    except Exception as exc:  # noqa: BLE001 - reported, the others go on
        msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        if not msg or not isinstance(exc, (ValueError, RuntimeError, OSError, KeyError)):
            msg = f"{type(exc).__name__}: {msg}\n{traceback.format_exc(limit=3)}"
        return Outcome(job, "failed", error=msg.strip(), wall_s=time.perf_counter() - t0)
    return Outcome(job, "ran", wall_s=wall)


def _context():
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        # Workers fork from a server that has pandas and vegaslab imported already (takes
        # effect when the server starts, i.e. on the first reproduce of this process).
        ctx.set_forkserver_preload(["vegaslab.runner", "vegaslab.results"])
        return ctx
    return multiprocessing.get_context("spawn")


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


#: Linux prctl option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def _die_with_parent(alive: multiprocessing.connection.Connection) -> None:
    """In a worker: make sure it does not outlive the command that started it.

    Portable: ``alive`` is the read end of a pipe whose only writer is the parent, so a read
    ends (EOF) exactly when the parent exits or is killed; a daemon thread then SIGKILLs the
    worker. It runs while a simulation runs because the core releases the GIL.
    Linux: PR_SET_PDEATHSIG as well (the kernel signals the worker when its parent, here the
    forkserver, which exits with the command, dies)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            pass

    def watch() -> None:
        try:
            while True:
                alive.recv_bytes()
        except (EOFError, OSError):
            pass
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="vegaslab-parent-watch", daemon=True).start()


def _worker_main(conn, alive, cache_dir: str, run_fn: Callable[[Job, str], "Outcome"]) -> None:
    """A worker: run the jobs the parent sends (one at a time) until it sends None or goes."""
    _die_with_parent(alive)
    # Ctrl-C goes to the whole process group; the parent handles it and stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        conn.send(run_fn(job, cache_dir))


def _death_message(exitcode: int | None, job: Job) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        how = f"killed by {name} (signal {-exitcode})"
    else:
        how = f"exited with status {exitcode}"
    return (f"worker process died while running {job.label}: {how}; the simulator crashed or ran "
            f"out of memory (the other runs are not affected)")


class _Worker:
    """One worker process, its job pipe and the pipe whose closing tells it the parent died."""

    def __init__(self, ctx, cache_dir: str, run_fn: Callable) -> None:
        self.conn, child_conn = ctx.Pipe()
        alive_r, self.alive_w = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_worker_main, args=(child_conn, alive_r, cache_dir, run_fn),
                                name="vegaslab-worker", daemon=True)
        self.proc.start()
        child_conn.close()
        alive_r.close()
        self.job: Job | None = None

    def give(self, job: Job) -> bool:
        self.job = job
        try:
            self.conn.send(job)
            return True
        except OSError:  # already dead: reported by the caller's wait
            return False

    def stop(self, *, kill: bool = False) -> None:
        if kill and self.proc.is_alive():
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except OSError:
                pass
        for c in (self.conn, self.alive_w):
            c.close()
        self.proc.join(timeout=5)
        if self.proc.is_alive():  # pragma: no cover - a worker that ignores the stop request
            self.proc.kill()
            self.proc.join()


def _execute_workers(todo: list[Job], cache_dir: Path, workers: int, done: Callable[[Outcome], None],
                     run_fn: Callable[[Job, str], Outcome]) -> None:
    """Run ``todo`` over ``workers`` worker processes, replacing any that dies."""
    ctx = _context()
    queue = deque(todo)
    pool: list[_Worker] = []
    clean = False
    try:
        while queue or any(w.job is not None for w in pool):
            while queue and len(pool) < workers:
                pool.append(_Worker(ctx, os.fspath(cache_dir), run_fn))
            for w in pool:
                if w.job is None and queue:
                    w.give(queue.popleft())
            busy = [w for w in pool if w.job is not None]
            ready = set(multiprocessing.connection.wait([w.conn for w in busy] + [w.proc.sentinel for w in busy]))
            for w in busy:
                if w.conn not in ready and w.proc.sentinel not in ready:
                    continue
                job = w.job
                try:
                    if w.conn.poll():
                        outcome = w.conn.recv()
                        w.job = None
                        done(outcome)
                        continue
                except (EOFError, OSError):
                    pass
                w.proc.join(timeout=5)
                w.job = None
                pool.remove(w)
                w.stop(kill=True)
                done(Outcome(job, "failed", error=_death_message(w.proc.exitcode, job)))
        clean = True
    finally:
        for w in pool:
            w.stop(kill=not clean)


def execute(
    jobs: Sequence[Job],
    cache_dir: str | os.PathLike,
    *,
    n_jobs: int | None = None,
    progress: bool = True,
    on_outcome: Callable[[Outcome], None] | None = None,
    run_fn: Callable[[Job, str], Outcome] = run_job,
) -> Execution:
    """Run every job that is not in the cache, ``n_jobs`` at a time (default: the cores), and
    return every job's outcome. Every run happens in a worker process (also for ``n_jobs=1``),
    so a run that crashes its process fails alone. Ctrl-C stops the workers: finished runs
    stay cached, the unfinished ones are marked failed ("interrupted") and ``interrupted`` is
    set. ``run_fn`` (a picklable top-level function, :func:`run_job` by default) is what a
    worker calls per job; tests replace it to simulate crashing runs."""
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    ex = Execution()
    t0 = time.perf_counter()
    todo: list[Job] = []
    seen: set[str] = set()
    for job in jobs:
        if job.key in seen:
            continue
        seen.add(job.key)
        if job.error:
            ex.outcomes[job.key] = Outcome(job, "failed", error=job.error)
        elif is_cached(cache_dir, job.key):
            ex.outcomes[job.key] = Outcome(job, "cached", wall_s=_cached_wall(cache_dir, job))
        else:
            todo.append(job)
    n_jobs = max(1, int(n_jobs or default_jobs()))
    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), unit="run", file=sys.stderr, dynamic_ncols=True,
                   desc=f"running ({ex.cached} cached)")

    def done(o: Outcome) -> None:
        ex.outcomes[o.job.key] = o
        if bar is not None:
            bar.update(1)
            if o.status == "failed":
                bar.write(f"FAILED {o.job.label}: {o.error.splitlines()[0] if o.error else ''}")
            else:
                bar.set_postfix_str(o.job.label[-40:], refresh=False)
        if on_outcome:
            on_outcome(o)

    if on_outcome:  # planning errors are reported like any failed run
        for o in [o for o in ex.outcomes.values() if o.status == "failed"]:
            on_outcome(o)
    try:
        if todo:
            _execute_workers(todo, cache_dir, min(n_jobs, len(todo)), done, run_fn)
    except KeyboardInterrupt:
        ex.interrupted = True
        for job in todo:
            if job.key not in ex.outcomes:
                ex.outcomes[job.key] = Outcome(job, "failed", error="interrupted")
    finally:
        if bar is not None:
            bar.close()
    ex.wall_s = time.perf_counter() - t0
    return ex


def export(cache_dir: str | os.PathLike, outcomes: Iterable[Outcome], results_dir: str | os.PathLike) -> None:
    """Copy each finished run's tables (Parquet and CSV), meta.json (with the run's
    provenance) and job.json to ``<results_dir>/<entry>/<variant>/seed<k>/``."""
    from .catalog import safe_name
    from .results import output_dir

    for o in outcomes:
        if o.status == "failed":
            continue
        src = cache_path(cache_dir, o.job.key)
        dst = Path(results_dir) / safe_name(o.job.entry_id) / safe_name(o.job.variant) / f"seed{o.job.seed}"
        # Replaced whole (never file by file), so its tables always match its meta.json.
        with output_dir(dst) as tmp:
            for f in src.iterdir():
                if f.suffix in (".parquet", ".csv") or f.name in ("meta.json", "job.json"):
                    try:
                        os.link(f, tmp / f.name)
                    except OSError:
                        shutil.copy2(f, tmp / f.name)
