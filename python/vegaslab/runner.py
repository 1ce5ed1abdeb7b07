"""Running catalog experiments in parallel, with a cache of finished runs.

A :class:`Job` is one simulation: an entry's variant with one seed (and, under ``--quick``, the
entry's quick overrides). :func:`plan` lists the jobs of some entries; :func:`execute` runs the
ones that are not cached yet over a :class:`concurrent.futures.ProcessPoolExecutor`, with a tqdm
bar, and stores each finished run in ``<cache>/<key>/`` (Results.to_dir: Parquet + CSV +
meta.json, plus ``job.json``). The key is a SHA-256 over the scenario part of the catalog file
(everything but ``[meta]`` and ``[[variant]]``, so editing a claim or a note reruns nothing), the
overrides, the seed, the vegaslab version and the identity of the compiled core (its version,
size and modification time, so that a rebuilt core never serves stale results).

A run is stored by renaming a finished temporary directory into place, so an interrupted
reproduce keeps every run that finished and never leaves half a run in the cache. A run that
fails is reported in its :class:`Outcome` and is not cached (the next reproduce retries it); it
does not stop the others.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import sys
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from .catalog import Entry
    from .results import Results

#: Bump to invalidate every cache (the layout or the meaning of a stored run changed).
CACHE_FORMAT = 1


@dataclass(frozen=True)
class Job:
    """One simulation: ``entry_id``'s ``variant`` with ``seed``."""

    entry_id: str
    variant: str
    seed: int
    scenario_path: str
    overrides: tuple[str, ...]
    key: str

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


def _core_identity() -> dict:
    from . import core_version

    ident: dict = {"core": core_version()}
    here = Path(__file__).resolve().parent
    for so in sorted(here.glob("_core*")):
        st = so.stat()
        ident[so.name] = [st.st_size, int(st.st_mtime)]
    return ident


def job_key(entry: "Entry", overrides: Sequence[str], seed: int, identity: dict | None = None) -> str:
    """The cache key of one run (see the module docstring)."""
    from . import __version__

    doc = {
        "format": CACHE_FORMAT,
        "scenario": entry.scenario,
        "overrides": list(overrides),
        "seed": seed,
        "version": __version__,
        "build": identity if identity is not None else _core_identity(),
    }
    text = json.dumps(doc, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plan(entries: Iterable["Entry"], *, quick: bool = False, seed: int | None = None) -> list[Job]:
    """The jobs of these entries: every variant x every seed (``seed`` replaces the entry's
    seeds with that one seed)."""
    from .catalog import expand

    identity = _core_identity()
    jobs: list[Job] = []
    for entry in entries:
        seeds = [seed] if seed is not None else entry.seeds(quick=quick)
        for spec in expand(entry, quick=quick):
            for s in seeds:
                jobs.append(Job(entry_id=entry.id, variant=spec.name, seed=int(s),
                                scenario_path=os.fspath(spec.scenario_path), overrides=tuple(spec.overrides),
                                key=job_key(entry, spec.overrides, int(s), identity)))
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
    results.to_dir(tmp)
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
    try:
        results = run(job.scenario_path, seed=job.seed, overrides=list(job.overrides))
        wall = time.perf_counter() - t0
        _store(Path(cache_dir), job, results, wall)
    except Exception as exc:  # noqa: BLE001 - reported, the others go on
        msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        if not msg or not isinstance(exc, (ValueError, RuntimeError, OSError, KeyError)):
            msg = f"{type(exc).__name__}: {msg}\n{traceback.format_exc(limit=3)}"
        return Outcome(job, "failed", error=msg.strip(), wall_s=time.perf_counter() - t0)
    return Outcome(job, "ran", wall_s=wall)


def _context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def execute(
    jobs: Sequence[Job],
    cache_dir: str | os.PathLike,
    *,
    n_jobs: int | None = None,
    progress: bool = True,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> Execution:
    """Run every job that is not in the cache, ``n_jobs`` at a time (default: the cores), and
    return every job's outcome. Ctrl-C stops the pool: finished runs stay cached, the
    unfinished ones are marked failed ("interrupted") and ``interrupted`` is set."""
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
        if is_cached(cache_dir, job.key):
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

    try:
        if n_jobs == 1 or len(todo) <= 1:
            for job in todo:
                done(run_job(job, os.fspath(cache_dir)))
        elif todo:
            _execute_pool(todo, cache_dir, min(n_jobs, len(todo)), done)
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


def _execute_pool(todo: list[Job], cache_dir: Path, workers: int, done: Callable[[Outcome], None]) -> None:
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_context())
    pending = {}
    try:
        for job in todo:
            pending[pool.submit(run_job, job, os.fspath(cache_dir))] = job
        while pending:
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in finished:
                job = pending.pop(fut)
                try:
                    done(fut.result())
                except BrokenProcessPool as exc:
                    done(Outcome(job, "failed", error=f"worker process died: {exc}"))
                except Exception as exc:  # noqa: BLE001
                    done(Outcome(job, "failed", error=f"{type(exc).__name__}: {exc}"))
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)


def export(cache_dir: str | os.PathLike, outcomes: Iterable[Outcome], results_dir: str | os.PathLike) -> None:
    """Copy each finished run's Parquet tables and meta.json to
    ``<results_dir>/<entry>/<variant>/seed<k>/``."""
    from .catalog import safe_name

    for o in outcomes:
        if o.status == "failed":
            continue
        src = cache_path(cache_dir, o.job.key)
        dst = Path(results_dir) / safe_name(o.job.entry_id) / safe_name(o.job.variant) / f"seed{o.job.seed}"
        dst.mkdir(parents=True, exist_ok=True)
        for f in src.iterdir():
            if f.suffix == ".parquet" or f.name in ("meta.json", "job.json"):
                target = dst / f.name
                if target.exists():
                    target.unlink()
                try:
                    os.link(f, target)
                except OSError:
                    shutil.copy2(f, target)
