"""Planning a study: its points (the default, each factor's other levels, the pairs' combinations)
and every run at every point and seed, resolved by the core, so that a level the simulator
refuses, or two points that run the same scenario, is a :class:`~.model.StudyError` before
anything runs."""

from __future__ import annotations

import dataclasses
import itertools
import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ...errors import ScenarioError
from ...spelling import did_you_mean
from .model import MAX_STUDY_RUNS, Point, Study, StudyError, study_error
from .readings import FlowAlgorithm, applied, flow_algorithms


def point_count(study: Study) -> int:
    """How many points :func:`points` gives, without making them."""
    levels = {f.name: len(f.levels) - 1 for f in study.factors}
    return 1 + sum(levels.values()) + sum(levels[a] * levels[b] for a, b in study.pairs)


def points(study: Study) -> list[Point]:
    """The default point, each factor's other levels alone, then each pair's combinations
    of non-default levels: every combination once."""
    def point(levels: Mapping[str, str]) -> Point:
        over: list[str] = []
        per_flow: list[tuple[str, str]] = []
        for f in study.factors:
            chosen = f.levels[levels.get(f.name, f.default)]
            if f.reading:
                per_flow += [(f.reading, o) for o in chosen]
            else:
                over += chosen
        return Point(dict(levels), tuple(over), tuple(per_flow))

    out = [point({})]
    for f in study.factors:
        out += [point({f.name: label}) for label in f.levels if label != f.default]
    for a, b in study.pairs:
        fa, fb = study.factor(a), study.factor(b)
        for la, lb in itertools.product(fa.levels, fb.levels):
            if la != fa.default and lb != fb.default:
                out.append(point({a: la, b: lb}))
    return out


@dataclass
class Plan:
    study: Study
    claim: dict
    points: list[Point]
    jobs: list[Any]                   # runner.Job, per (point, variant, seed)
    index: list[tuple[int, str, int]]  # (point number, variant, seed) of each job
    #: Every run with the entry's ``[meta.quick].set`` (shortened runs; see :func:`plan`).
    quick: bool = False


@dataclass(frozen=True)
class _Planned:
    """One run of a plan before the core has resolved it."""

    point: int
    variant: str
    seed: int
    variant_overrides: tuple[str, ...]
    spec: Any                         # store.RunSpec


def _find_entry(study: Study, catalog: str | os.PathLike | None):
    """The catalog entry ``study.entry`` names: ``<id>.toml`` in the catalog directory (the
    built-in one, ``$VEGASLAB_CATALOG`` or ``catalog``), else the entry whose ``meta.id`` it
    is; never a path, and never a file in the working directory."""
    from ..catalog import catalog_dir, list_entries, load_entry

    root = catalog_dir(catalog)
    try:
        if (root / f"{study.entry}.toml").is_file():
            return load_entry(root / f"{study.entry}.toml")
        entries = list_entries(root) if root.is_dir() else []
    except ScenarioError as exc:
        raise study_error(study.path, "study.entry", f"the catalog entry cannot be read: {exc}") from None
    found = [e for e in entries if e.id == study.entry]
    if found:
        return found[0]
    known = ", ".join(e.id for e in entries) if root.is_dir() else f"no directory {root}"
    hint = did_you_mean(study.entry, [e.id for e in entries])
    raise study_error(study.path, "study.entry", f"no catalog entry {study.entry!r}{hint} in {root} (known: {known})")


def plan(study: Study, catalog: str | os.PathLike | None = None, *, quick: bool = False) -> Plan:
    """The runs of a study: the claim's variants of its entry at every point and seed, each
    resolved by the core. ``quick`` gives every run the entry's ``[meta.quick].set`` (shorter
    runs, as ``reproduce --quick``) and keeps the study's points and seeds, which its rule
    needs: a check that the study runs, whose verdict is marked quick and never published. Everything a run would find wrong with the study is a
    :class:`StudyError` here, before anything runs: an unknown entry, claim or variant, a level
    the simulator refuses (named by factor and level), and two points or variants that would
    run the same scenario."""
    from ...scenario import read_text_file
    from ..catalog import expand
    from ..runner import Job
    from ...sweeps.store import RunSpec, prepare

    entry = _find_entry(study, catalog)
    claims = [c for c in entry.claims if c.get("id") == study.claim] or \
        [c for c in entry.claims if c.get("text") == study.claim]
    if not claims:
        known = "; ".join(f"{c['id']}: {c.get('text', '')}" for c in entry.claims)
        raise study_error(study.path, "study.claim", f"no claim of {study.entry} has this id or text (its claims: "
                          f"{known})")
    specs = {s.name: s for s in expand(entry, quick=quick)}
    wanted = list(study.variants) or list(specs)
    missing = [v for v in wanted if v not in specs]
    if missing:
        raise study_error(study.path, "study.variants", f"{entry.id} has no variant {missing[0]!r} (known: {', '.join(specs)})")
    total = point_count(study) * len(wanted) * len(study.seeds)
    if total > MAX_STUDY_RUNS:
        raise study_error(study.path, "study", f"plans {total} runs; at most {MAX_STUDY_RUNS} are allowed")
    pts = points(study)
    texts: dict[str, str] = {}
    planned: list[_Planned] = []
    for i, pt in enumerate(pts):
        for name in wanted:
            spec = specs[name]
            path = os.fspath(spec.scenario_path)
            texts.setdefault(path, read_text_file(path))
            overrides = tuple(spec.overrides) + pt.overrides
            if pt.flow_overrides:
                overrides += applied(pt.flow_overrides, _algorithms(texts[path], path, overrides))
            for s in study.seeds:
                planned.append(_Planned(i, name, s, tuple(spec.overrides), RunSpec(
                    texts[path], path, overrides, s, {"entry": entry.id, "variant": name})))
    prepared = prepare([r.spec for r in planned])
    _check_runs(study, entry.id, pts, planned, prepared)
    jobs = [Job(entry.id, r.variant, r.seed, r.spec.source, r.spec.overrides, p.key, "", p)
            for r, p in zip(planned, prepared)]
    return Plan(study, claims[0], pts, jobs, [(r.point, r.variant, r.seed) for r in planned], quick)


def _algorithms(text: str, path: str, overrides: Sequence[str]) -> list[FlowAlgorithm]:
    """Each flow's ``cc`` for a run (:func:`.readings.flow_algorithms`); a scenario the core
    refuses has none here, and is named by :func:`_check_runs`."""
    try:
        return flow_algorithms(text, path, overrides)
    except ScenarioError:
        return []


def _check_runs(study: Study, entry_id: str, pts: Sequence[Point], planned: Sequence[_Planned],
                prepared: Sequence[Any]) -> None:
    """A :class:`StudyError` for the first run the core refused, or for two runs of the first
    seed with the same key (the same resolved scenario): a level that changes nothing, or
    variants the study's levels make alike."""
    seen: dict[str, _Planned] = {}
    for r, p in zip(planned, prepared):
        if p.error:
            raise _refused(study, entry_id, pts, r, p.error)
        if r.seed != study.seeds[0]:
            continue
        first = seen.setdefault(p.key, r)
        if first is not r and not (first.variant == r.variant and _readings_apart(study, pts[first.point], pts[r.point])):
            raise _same_runs(study, pts, first, r)
    _readings_change_runs(study, pts, planned, prepared)


def _readings_apart(study: Study, a: Point, b: Point) -> bool:
    """Whether two points differ only in reading factors' levels: a variant without a flow of
    the reading's algorithm runs the same scenario at both, as it should."""
    names = set(a.levels) | set(b.levels)
    return all(study.factor(n).reading for n in names
               if a.levels.get(n, study.factor(n).default) != b.levels.get(n, study.factor(n).default))


def _readings_change_runs(study: Study, pts: Sequence[Point], planned: Sequence[_Planned],
                          prepared: Sequence[Any]) -> None:
    """A :class:`StudyError` for a reading factor's level that changes no run of the first seed
    (no variant has a flow of its algorithm, or the level sets what the default sets)."""
    keys: dict[int, set[str]] = {}
    for r, p in zip(planned, prepared):
        if r.seed == study.seeds[0]:
            keys.setdefault(r.point, set()).add(p.key)
    for i, pt in enumerate(pts):
        if len(pt.levels) == 1 and study.factor(next(iter(pt.levels))).reading and keys.get(i) == keys.get(0):
            (name, label), = pt.levels.items()
            k = _factor_index(study, name)
            f = study.factors[k]
            raise study_error(study.path, _level_field(study, k, label), f"level {label!r} of the reading {f.name!r} "
                              f"changes no run: no variant the study runs has a {f.reading} flow, or the level sets what "
                              f"{f.default!r} sets")


def _refused(study: Study, entry_id: str, pts: Sequence[Point], r: _Planned, error: str) -> StudyError:
    """The error for a run the core refused, naming what in the study file caused it: the
    variant itself, a factor's level (at the default point, the first factor whose default
    level makes the run fail), or a pair's combination."""
    from ...sweeps.store import prepare

    def refusal(overrides: Sequence[str]) -> str:
        return prepare([dataclasses.replace(r.spec, overrides=tuple(overrides))])[0].error or ""

    if refusal(r.variant_overrides):
        return study_error(study.path, "study.variants", f"variant {r.variant} of {entry_id} is refused by the simulator "
                    f"before any level is applied: {error}")
    pt = pts[r.point]
    if not pt.levels:
        applied = list(r.variant_overrides)
        for k, f in enumerate(study.factors):
            applied += f.levels[f.default]
            why = refusal(applied)
            if why:
                return _level_error(study, k, f.default, r.variant, why)
        return study_error(study.path, "study.factor", f"the default levels together are refused by the simulator for "
                    f"variant {r.variant}: {error}")
    if len(pt.levels) == 1:
        (name, label), = pt.levels.items()
        return _level_error(study, _factor_index(study, name), label, r.variant, error)
    j = next(j for j, pair in enumerate(study.pairs) if set(pair) == set(pt.levels))
    return study_error(study.path, f"study.pair[{j}]", f"the combination {pt.label()} is refused by the simulator for "
                f"variant {r.variant}: {error}")


def _factor_index(study: Study, name: str) -> int:
    return next(k for k, f in enumerate(study.factors) if f.name == name)


def _level_field(study: Study, k: int, label: str) -> str:
    """Where the study file sets a factor's level: its ``values``, or ``levels.<label>``."""
    f = study.factors[k]
    return f"study.factor[{k}].values" if f.path else f"study.factor[{k}].levels.{label}"


def _level_error(study: Study, k: int, label: str, variant: str, error: str) -> StudyError:
    f = study.factors[k]
    default = " (its default)" if label == f.default else ""
    return study_error(study.path, _level_field(study, k, label), f"level {label!r} of factor {f.name!r}{default} is "
                f"refused by the simulator for variant {variant}: {error}")


def _same_runs(study: Study, pts: Sequence[Point], a: _Planned, b: _Planned) -> StudyError:
    """The error for two planned runs that resolve to the same scenario."""
    pa, pb = pts[a.point], pts[b.point]
    if a.point == b.point:
        return study_error(study.path, "study.variants", f"variants {a.variant!r} and {b.variant!r} run the same scenario "
                    f"at {pa.label()}: the study's levels set what tells them apart")
    variant = a.variant if a.variant == b.variant else f"{a.variant} and {b.variant}"
    factors = {name for p in (pa, pb) for name in p.levels}
    if len(factors) == 1 and len(pa.levels) <= 1 and len(pb.levels) <= 1:
        (name,) = factors
        k = _factor_index(study, name)
        f = study.factors[k]
        la, lb = pa.levels.get(name, f.default), pb.levels.get(name, f.default)
        where = f"study.factor[{k}].values" if f.path else f"study.factor[{k}].levels"
        return study_error(study.path, where, f"levels {la!r} and {lb!r} of factor {f.name!r} give the same runs "
                    f"(variant {variant}): each level must set the scenario differently")
    return study_error(study.path, "study", f"the points {pa.label()!r} and {pb.label()!r} give the same runs "
                f"(variant {variant}): some level sets what another factor's level also sets")
