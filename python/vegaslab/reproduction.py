"""Reproducing paper experiments (``vegaslab reproduce``): run catalog entries on the engine,
keeping finished runs in a results store, compare with the published numbers, check the
claims and write the report.

Above both :mod:`vegaslab.study` (the catalog, the runner, the claims) and
:mod:`vegaslab.report` (what is written), which is why it is a module of its own: the report
reads studies, and this ties the two together.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from .outdir import check_output_dir
from .report.tables import format_comparison
from .safe_io import make_dir
from .simulation import check_seed, run
from .study import runner
from .study.catalog import DEFAULT_IDS, Variant, resolve

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .report.model import EntryPart
    from .results import Results
    from .study.catalog import Entry
    from .study.runner import Execution, Job

__all__ = ["reproduce", "run_variant"]


def run_variant(spec: Variant, *, seed: int | None = None) -> "Results":
    """Run one :class:`~vegaslab.study.catalog.Variant` and return its Results."""
    return run(spec.scenario_path, seed=seed, overrides=list(spec.overrides))


def _entry_part(entry: "Entry", jobs: list["Job"], execution: "Execution", out: Path, *, quick: bool) -> "EntryPart":
    """Read one entry's finished runs back from ``<out>/store/``, export them to
    ``<out>/results/`` and compute its part of the report (rows, verdicts, figures:
    :func:`vegaslab.report.write.entry_part`). Its Results are dropped on return, so the
    report's peak memory is the largest entry's runs, not every run's (5 GB for the 765 runs
    of ``reproduce --all``)."""
    from .report import write as report_mod

    keys = list(dict.fromkeys(j.key for j in jobs if j.entry_id == entry.id and j.key in execution.outcomes
                              and execution.outcomes[j.key].status != "failed"))
    results = runner.load(out / "store", keys)
    runner.unreadable_fail(execution, results, out / "store", keys)
    runner.export(results, [o for o in execution.per_job if o.job.entry_id == entry.id], out / "results")
    return report_mod.entry_part(entry, jobs, execution, results, quick=quick)


def reproduce(
    ids: Iterable[str] | None = None,
    out: str | os.PathLike = "out/reproduce",
    *,
    directory: str | os.PathLike | None = None,
    seed: int | None = None,
    echo: Callable[[str], None] | None = print,
    quick: bool = False,
    jobs: int | None = None,
    all_entries: bool = False,
    progress: bool | None = None,
    report: bool = True,
    run_fn: Callable | None = None,
    scheduler: Any = None,
) -> pd.DataFrame:
    """Run the chosen entries (ids, files or paper names; :data:`DEFAULT_IDS` when none) on
    the engine (:mod:`vegaslab.study.runner`): ``jobs`` local worker processes (default: the cores)
    or the Dask cluster at ``scheduler`` (``"tcp://host:8786"``; also ``DASK_SCHEDULER_ADDRESS``),
    reusing the runs stored in ``<out>/store/`` (a results store, docs/store-format.md);
    compare with the published numbers, check the claims and write ``<out>/index.html``,
    ``<out>/summary.md``, ``<out>/summary.csv`` and ``<out>/results/`` (see
    :func:`vegaslab.report.write.write_report`). ``seed`` runs every variant once with that seed
    instead of the entry's seeds; ``quick`` applies each entry's ``[meta.quick]``.

    Returns the comparison table (:data:`REPRODUCE_COLUMNS`; a failed run is a row with
    metric ``"(run failed)"`` and the error in ``note``). ``table.attrs`` holds ``runs``
    (counts: ran, cached = found in the store, failed, total), ``verdicts`` (one dict per
    claim) and ``wall_s``. A failing run does not stop the others. Ctrl-C stops the engine
    within seconds, keeps the finished runs in the store and raises ``KeyboardInterrupt``
    without writing a report (the next call computes only what is missing, then writes it).

    ``out`` and ``seed`` are checked before anything runs (:class:`vegaslab.outdir.OutputDirError`,
    :class:`ScenarioError`). ``run_fn`` replaces :func:`vegaslab.sweeps.engine.run_payload` in the
    workers (for tests that simulate crashing runs). Each robustness summary or figure in
    ``<out>/robustness/`` the report sets aside is a ``UserWarning`` naming it (the command
    line prints it as a warning)."""
    # Imported here for its cost only (pandas, numpy, matplotlib, jinja2): importing this
    # module must not pay it.
    from .report import write as report_mod

    t0 = time.perf_counter()
    out = Path(out)
    check_seed(seed, "--seed")
    check_output_dir(out, replace=False)
    names = list(ids) if ids else ([] if all_entries else list(DEFAULT_IDS))
    entries = resolve(names, directory, all_entries=all_entries)
    jobs_list = runner.plan(entries, quick=quick, seed=seed)
    # The directories reproduce writes into, made (or found) as real directories before any
    # run: a link planted as DIR/store or DIR/results is refused, never followed.
    out.mkdir(parents=True, exist_ok=True)
    for name in ("store", "results"):
        make_dir(out, name)
    if echo:
        echo(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, {len(jobs_list)} runs"
             f"{' (quick)' if quick else ''}: {', '.join(e.id for e in entries)}")
    execution = runner.execute(jobs_list, out / "store", n_jobs=jobs, scheduler=scheduler,
                               progress=(echo is not None) if progress is None else progress, run_fn=run_fn)
    if execution.interrupted:
        # The finished runs are committed; reading them back for a partial report would take
        # ~40 ms a run, more than the few seconds a Ctrl-C may take. The run of the same
        # command that finishes them writes the report.
        raise KeyboardInterrupt
    parts = [_entry_part(entry, jobs_list, execution, out, quick=quick) for entry in entries]
    built = report_mod.assemble(entries, jobs_list, execution, parts, quick=quick, seed=seed)
    table = built.table
    if echo:
        for entry in entries:
            echo(f"== {entry.id}: {entry.title}")
            echo(format_comparison(table[table["entry"] == entry.id]))
            for v in built.verdicts.get(entry.id, []):
                echo(f"   claim {v.status.upper():7s} {v.text}: {v.detail}")
    built.reproduce_wall_s = time.perf_counter() - t0
    if report:
        written = report_mod.write_report(built, out)
        if echo:
            echo(f"wrote {', '.join(str(p) for p in written)}")
    table.attrs["runs"] = {"ran": execution.ran, "cached": execution.cached, "failed": execution.failed,
                           "total": len(execution.outcomes)}
    table.attrs["verdicts"] = [
        {"entry": eid, "id": v.claim.id, "kind": v.claim.kind, "text": v.text, "expr": v.expr, "status": v.status,
         "detail": v.detail, "by_tie": v.by_tie}
        for eid, vs in built.verdicts.items() for v in vs]
    table.attrs["wall_s"] = time.perf_counter() - t0
    return table
