"""The runs of ``vegaslab reproduce``: catalog variants x seeds, computed by the one engine.

A :class:`Job` is one simulation: an entry's variant with one seed (and, under ``--quick``,
the entry's quick overrides). :func:`plan` lists the jobs of some entries, each resolved by the
core into a :class:`vegaslab.sweeps.store.PreparedRun`; :func:`execute` hands them to
:func:`vegaslab.sweeps.engine.execute`, which computes what the results store ``<out>/store/`` lacks
on Dask (an embedded local cluster, or ``--scheduler``) and commits it there; :func:`load`
rebuilds each stored run's :class:`vegaslab.Results`; :func:`export` writes them to
``<out>/results/<entry>/<variant>/seed<k>/``.

How it works, and why (docs/decisions.md, "Sweeps, engine and store"):

- **One runner.** ``reproduce`` and ``sweep`` run on the same engine and the same store
  (:mod:`vegaslab.sweeps.engine`, :mod:`vegaslab.sweeps.store`): a run's key is the store's (normalised
  scenario, seed, core version; never a path, a time or the build), so a store computed on
  one machine serves ``reproduce`` on another, and a sweep and a reproduce that share a store
  share runs. Each job's store parameters are ``entry`` and ``variant`` (labels only).
- **Crash isolation** is the engine's: every run happens in a Dask worker process (also with
  ``jobs=1``); a run that kills its worker is tried once more on a fresh worker
  (:data:`ALLOWED_FAILURES`) and then fails alone, with the signal in the message when the
  embedded cluster saw it; the other runs complete. Worker processes exit when the command
  dies, even by SIGKILL (``distributed`` gives each worker a pipe from its parent and exits
  on end-of-file).
- **Nothing computed is lost.** Finished runs are committed to the store in batches (at most
  ``flush_s`` = 2 s after they finish); a run that fails is not stored, so the next reproduce
  tries it again; Ctrl-C commits what finished.
- **Build changes.** The key holds the core's semantic version, not its build: a change of
  the core that changes results must bump ``vegaslab_sim::VERSION`` (or use a new ``--out``).
  Each stored run records the source revision it was computed with, and the report lists the
  builds its runs came from.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover - type names only: runner never imports catalog
    from .catalog import Entry
    from ..results import Results
    from ..sweeps.store import PreparedRun

#: Worker deaths a reproduce run may cause before it fails: a crash is deterministic, so one
#: retry on a fresh worker (against a coincidental death) is enough.
ALLOWED_FAILURES = 1

#: The store's parameter columns of a reproduce run.
PARAMS = ("entry", "variant")


def safe_name(name: str) -> str:
    """A file-system-safe form of an entry or variant name (a run's directory under
    ``results/``; :mod:`vegaslab.study.catalog` re-exports it)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "run"


@dataclass(frozen=True)
class Job:
    """One simulation: ``entry_id``'s ``variant`` with ``seed``. ``key`` is the store's run
    key; ``prepared`` the core's resolution of it (what the engine runs)."""

    entry_id: str
    variant: str
    seed: int
    scenario_path: str
    overrides: tuple[str, ...]
    key: str
    #: Set when the scenario is invalid at planning time: the job fails with this message
    #: without being run (and is never stored).
    error: str = ""
    prepared: "PreparedRun | None" = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        return f"{self.entry_id}/{self.variant}/seed{self.seed}"


@dataclass
class Outcome:
    """What happened to a job: ``cached`` (found in the store), ``ran`` or ``failed``."""

    job: Job
    status: str
    error: str = ""
    wall_s: float = 0.0  # the run's wall time in its worker (for a stored run: when it was computed)


@dataclass
class Execution:
    """Every distinct run's outcome (by run key), and counts for the report. Two jobs that
    resolve to the same scenario and seed (two variants written differently) are one run,
    computed once; :attr:`per_job` has every job with its run's outcome."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    jobs: list[Job] = field(default_factory=list)
    wall_s: float = 0.0
    interrupted: bool = False
    executor: str = ""

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes.values() if o.status == status)

    @property
    def per_job(self) -> list[Outcome]:
        """Every job, in plan order, with the outcome of its run."""
        return [dataclasses.replace(self.outcomes[j.key], job=j) if j.key in self.outcomes else
                Outcome(j, "failed", error="not run") for j in self.jobs]

    @property
    def ran(self) -> int:
        return self.count("ran")

    @property
    def cached(self) -> int:
        return self.count("cached")

    @property
    def failed(self) -> int:
        return self.count("failed")


# ---------------------------------------------------------------------- plans


def _invalid_key(path: str, variant: str, overrides: Sequence[str], seed: int) -> str:
    text = json.dumps(["invalid", path, variant, list(overrides), seed])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plan(entries: Iterable["Entry"], *, quick: bool = False, seed: int | None = None) -> list[Job]:
    """The jobs of these entries: every variant x every seed (``seed`` replaces the entry's
    seeds with that one seed). Each file is read once and each job resolved by the core
    (:func:`vegaslab.sweeps.store.prepare`); a job whose scenario the core rejects carries the error
    (it fails without running)."""
    from ..scenario import read_text_file
    from ..sweeps.store import RunSpec, prepare

    texts: dict[str, str] = {}
    planned: list[tuple[str, str, int, str, tuple[str, ...], RunSpec | str]] = []
    for entry in entries:
        seeds = [seed] if seed is not None else entry.seeds(quick=quick)
        for spec in entry.runs(quick=quick):
            path = os.fspath(spec.scenario_path)
            if path not in texts:
                try:
                    texts[path] = read_text_file(path)
                except (OSError, ValueError) as exc:
                    texts[path] = exc  # type: ignore[assignment]
            for s in seeds:
                text = texts[path]
                run: RunSpec | str = (str(text) if isinstance(text, Exception) else
                                      RunSpec(text, path, tuple(spec.overrides), int(s),
                                              {"entry": entry.id, "variant": spec.name}))
                planned.append((entry.id, spec.name, int(s), path, tuple(spec.overrides), run))
    resolved = iter(prepare([r for *_, r in planned if isinstance(r, RunSpec)]))
    jobs: list[Job] = []
    for entry_id, variant, s, path, overrides, run in planned:
        p = next(resolved) if isinstance(run, RunSpec) else None
        error = run if p is None else p.error
        key = p.key if p is not None and not p.error else _invalid_key(path, variant, overrides, s)
        jobs.append(Job(entry_id, variant, s, path, overrides, key, str(error or ""), p))
    return jobs


# ---------------------------------------------------------------------- running


def default_jobs() -> int:
    """One worker per core this process may use."""
    from ..sweeps.engine import default_workers

    return default_workers()


def execute(
    jobs: Sequence[Job],
    store_dir: str | os.PathLike,
    *,
    n_jobs: int | None = None,
    scheduler: Any = None,
    progress: bool = True,
    on_outcome: Callable[[Outcome], None] | None = None,
    run_fn: Callable | None = None,
) -> Execution:
    """Compute every job whose run is not in the store at ``store_dir`` on the engine
    (``n_jobs`` worker processes, default one per core, or the Dask cluster at ``scheduler``)
    and return every job's outcome. Ctrl-C commits the finished runs, marks the others failed
    ("interrupted") and sets ``interrupted``. ``run_fn`` replaces
    :func:`vegaslab.sweeps.engine.run_payload` in the workers (tests that simulate crashing runs)."""
    from ..sweeps import engine
    from ..sweeps.store import Store

    store = Store(store_dir)
    ex = Execution()
    runnable: list[Job] = []
    seen: set[str] = set()
    for job in jobs:
        if job.key in seen:
            continue
        seen.add(job.key)
        if job.error or job.prepared is None:
            o = Outcome(job, "failed", error=job.error or "not planned")
            ex.outcomes[job.key] = o
            if on_outcome:
                on_outcome(o)
        else:
            runnable.append(job)
    by_key = {j.key: j for j in runnable}

    def outcome_of(ro: "engine.RunOutcome") -> Outcome:
        job = by_key[ro.key]
        status = {"stored": "cached"}.get(ro.status, ro.status)
        error = f"{job.label}: {ro.error}" if ro.error and not ro.error.startswith(job.label) else ro.error
        return Outcome(job, status, error, ro.wall_s)

    def seen_outcome(ro: "engine.RunOutcome") -> None:
        if on_outcome and ro.key in by_key:
            on_outcome(outcome_of(ro))

    kw: dict[str, Any] = {"run_fn": run_fn} if run_fn is not None else {}
    result = engine.execute([j.prepared for j in runnable], store, scheduler=scheduler, workers=n_jobs,
                            allowed_failures=ALLOWED_FAILURES, progress=progress, on_outcome=seen_outcome, **kw)
    walls = _stored_walls(store, [o.key for o in result.outcomes if o.status == "stored"])
    for ro in result.outcomes:
        o = outcome_of(ro)
        if o.status == "cached":
            o.wall_s = walls.get(ro.key, 0.0)
        ex.outcomes[ro.key] = o
    ex.jobs = list(jobs)
    ex.interrupted = result.interrupted
    ex.executor = result.executor
    ex.wall_s = result.wall_s
    return ex


def _stored_walls(store: Any, keys: Sequence[str]) -> dict[str, float]:
    if not keys:
        return {}
    runs = store.read("runs", keys=set(keys))
    return {str(k): float(w) for k, w in zip(runs["run_key"], runs["wall_s"])}


# ---------------------------------------------------------------------- reading and exporting


def load(store_dir: str | os.PathLike, keys: Iterable[str]) -> dict[str, "Results"]:
    """The stored :class:`vegaslab.Results` of these run keys (the ones not stored are left out)."""
    from ..sweeps.store import Store

    return Store(store_dir, create=False).load_results(keys)


def unreadable_fail(execution: Execution, results: Mapping[str, "Results"], store_dir: str | os.PathLike,
                    keys: Iterable[str] | None = None) -> None:
    """Mark failed each run (among ``keys``, default all) that finished or was found stored
    but is not in ``results`` (:func:`load` left it out: a sweep sharing the store named a
    parameter like a column the core wrote, which replaced it), so that it is never counted
    as a finished run."""
    for key in (execution.outcomes if keys is None else dict.fromkeys(keys)):
        o = execution.outcomes.get(key)
        if o is not None and o.status != "failed" and key not in results:
            o.status, o.error = "failed", (
                f"{o.job.label}: the run is in {store_dir} but cannot be rebuilt from it: a sweep stored it "
                "with a parameter named like a column of the results, which replaced that column; "
                "reproduce into another --out")


def export(results: Mapping[str, "Results"], outcomes: Iterable[Outcome], results_dir: str | os.PathLike) -> None:
    """Write each finished job's tables (Parquet), meta.json (with the run's provenance and
    the tables' SHA-256) and job.json to ``<results_dir>/<entry>/<variant>/seed<k>/``. A
    directory whose job.json already names the same run is left as it is (its files came from
    that run). No CSV copies (the default): for ``reproduce --all`` they were 1.4 GB of the
    1.6 GB written."""
    from ..outdir import output_dir
    from ..safe_io import ForeignFileError, UnsafePathError, make_dir, make_dirs, read_json

    root = Path(results_dir)
    root.parent.mkdir(parents=True, exist_ok=True)  # the directory the user named
    results_dir = make_dir(root.parent, root.name)
    for o in outcomes:
        res = results.get(o.job.key)
        if o.status == "failed" or res is None:
            continue
        # Each level made (or found) as a real directory, never followed through a link.
        parent = make_dirs(results_dir, safe_name(o.job.entry_id), safe_name(o.job.variant))
        dst = parent / f"seed{o.job.seed}"
        if os.path.islink(dst):
            raise UnsafePathError(f"{dst}: is a symbolic link, not a run directory vegaslab wrote; move it away")
        try:
            if read_json(dst / "job.json", max_bytes=1 << 20).get("key") == o.job.key:
                continue
        except (OSError, ForeignFileError, AttributeError):
            pass  # absent or not ours: the directory is written again, whole
        info = {"entry_id": o.job.entry_id, "variant": o.job.variant, "seed": o.job.seed,
                "scenario_path": o.job.scenario_path, "overrides": list(o.job.overrides), "key": o.job.key,
                "wall_s": o.wall_s}
        # Replaced whole (never file by file), so its tables always match its meta.json.
        with output_dir(dst) as tmp:
            res.write_files(tmp)
            (tmp / "job.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
