"""Running a planned study on the engine and store shared with ``reproduce`` and ``sweep``, and
judging its claim per seed at every point; the ns-2.35 check of its default point."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd

from .model import PointResult, Study, StudyResult, point_alpha
from .planning import Plan, plan
from .readings import reading_costs


def run_digest(result: Any) -> str:
    """What a run gave, as a digest of its content: its event and packet-hop counts and every
    result table. Two seeds whose runs have the same digests repeated one run (the set-up has no
    randomness the seed reaches)."""
    from ...results import TABLES

    h = hashlib.sha256(repr((result.meta.get("events"), result.meta.get("packet_hops"))).encode())
    for name in TABLES:
        table = getattr(result, name, None)
        if isinstance(table, pd.DataFrame):
            h.update(name.encode())
            h.update(pd.util.hash_pandas_object(table, index=False).values.tobytes())
    return h.hexdigest()


def run_study(study: Study, store_dir: str | os.PathLike, *, catalog: str | os.PathLike | None = None,
              n_jobs: int | None = None, scheduler: Any = None, progress: bool = False,
              run_fn: Callable | None = None, planned: Plan | None = None, quick: bool = False) -> StudyResult:
    """Plan (unless ``planned`` is the study's :func:`plan`; ``quick`` as there), run what the
    store lacks, and judge the claim at every point and seed; for a reading factor, also what
    each of its levels changes in every entry that runs its algorithm
    (:func:`.readings.reading_costs`). Ctrl-C keeps the finished runs in the store and raises
    ``KeyboardInterrupt``."""
    from ..claims import ClaimError, ClaimSkipped, RunSet, evaluate, measure
    from ..runner import execute, load

    p = planned if planned is not None else plan(study, catalog, quick=quick)
    ex = execute(p.jobs, store_dir, n_jobs=n_jobs, scheduler=scheduler, progress=progress, run_fn=run_fn)
    if ex.interrupted:  # the finished runs are committed; the claim is judged on the next run
        raise KeyboardInterrupt
    results = load(store_dir, [o.job.key for o in ex.outcomes.values() if o.status != "failed"])
    outcome = ex.outcomes
    per: dict[tuple[int, int], dict[str, Any]] = {}
    errors: dict[tuple[int, int], list[str]] = {}
    for job, (i, name, s) in zip(p.jobs, p.index):
        o = outcome.get(job.key)
        res = results.get(job.key)
        if o is None or o.status == "failed" or res is None:
            errors.setdefault((i, s), []).append(f"{name} seed {s}: {o.error if o else 'not run'}")
            continue
        per.setdefault((i, s), {})[name] = res
    alpha = point_alpha(len(p.points))
    points_out = [PointResult(pt, alpha=alpha, threshold=study.figure_threshold, departures=study.departures(pt))
                  for pt in p.points]
    for i, pr in enumerate(points_out):
        outcomes = set()
        for s in study.seeds:
            if (i, s) in errors:
                pr.errors += errors[(i, s)]
                continue
            runs = RunSet(runs={k: [r] for k, r in per.get((i, s), {}).items()})
            v = evaluate(p.claim, runs)
            if v.status not in ("holds", "fails"):
                pr.errors.append(f"seed {s}: {v.status}: {v.detail}")
                continue
            if study.figure:
                try:
                    pr.values.append(measure(study.figure, runs))
                except (ClaimError, ClaimSkipped) as exc:
                    # The figure is part of the study's answer: one it cannot give is an error.
                    pr.errors.append(f"seed {s}: figure: {exc}")
                    continue
            pr.seeds += 1
            pr.holds += v.status == "holds"
            outcomes.add(tuple(sorted((name, run_digest(r)) for name, r in per.get((i, s), {}).items())))
        pr.distinct = len(outcomes)
    computed = sum(1 for o in outcome.values() if o.status == "ran")
    readings = reading_costs(study, store_dir, catalog=catalog, n_jobs=n_jobs, scheduler=scheduler,
                             progress=progress, quick=p.quick, run_fn=run_fn)
    return StudyResult(study, points_out, runs=len(set(j.key for j in p.jobs)), computed=computed,
                       wall_s=ex.wall_s, compute_s=_compute_s(store_dir, results), plan=p,
                       default_runs=per.get((0, study.seeds[0]), {}), quick=p.quick, readings=readings)


def _compute_s(store_dir: str | os.PathLike, results: Mapping[str, Any]) -> float:
    from ...sweeps.store import Store

    if not results:
        return 0.0
    runs = Store(store_dir, create=False).read("runs", list(results))
    return float(runs["wall_s"].sum())


def check_ns2(result: StudyResult, store_dir: str | os.PathLike) -> None:
    """Set ``result.ns2``: ns-2.35 at the study's default point and first seed
    (:mod:`vegaslab.study.ns2_check`; its runs are cached under ``store_dir/ns2``)."""
    from ..ns2_check import check

    result.ns2 = check(result.study, result.plan, result.default_runs, Path(store_dir) / "ns2")
