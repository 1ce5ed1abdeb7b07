"""Robustness studies: how much of a paper's conclusion survives the assumptions it leaves open
(issue 13, "Which published conclusions are robust?").

A *study* (``catalog_data/studies/<entry>.toml``, docs/robustness-format.md) takes one claim of
a catalog entry, the assumption behind each open choice of the set-up (a *factor*: the
default level, chosen and justified before the study, and the other plausible levels), and
runs the claim's variants at every level of one factor at a time (the others at their
defaults) and at every combination of the factor pairs it names, each with several seeds.

What is decided here, and why:

- **Judged per seed.** At each point (a combination of levels) the claim is evaluated once
  per seed, on that seed's runs alone (the catalog's claims are written over means of seeds;
  a mean over one seed is that seed's value), so each point gives k of n seeds for which the
  conclusion holds. The point *holds* when the 95% Wilson interval of that proportion lies
  above one half, *fails* when it lies below, and is *mixed* otherwise: a conclusion that a
  paper states as a fact should hold for most seeds of a set-up, not on average over them.
  A seed whose claim cannot be judged (a failed run, missing data) makes the point an error,
  never a pass.
- **Verdicts.** *robust*: the point holds at the default and at every level studied;
  *holds only under a narrow set-up*: some point holds, others do not; *not reproducible
  with any plausible set-up*: no point holds. The study shows fragility; it never moves the
  default (a better-justified reading changes the catalog, with the reason, not this file).
- **Same engine, same store.** Every run is an ordinary run of the entry's scenario with
  the point's overrides after the variant's (:mod:`vegaslab.runner`, :mod:`vegaslab.engine`):
  resumable, shared with ``reproduce`` and ``sweep`` in the same store, on one machine or a
  Dask cluster, and a second call recomputes nothing.
"""
from __future__ import annotations

import itertools
import math
import os
import textwrap
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

#: Largest number of runs one study may plan (levels x pairs x variants x seeds).
MAX_STUDY_RUNS = 100_000
#: Fewest seeds a study may have: with 3, even 3 of 3 leaves the Wilson interval's lower end
#: below one half (0.44), so no point could hold or fail.
MIN_SEEDS = 4
#: z for the 95% Wilson interval.
_Z95 = 1.959963984540054


class StudyError(ValueError):
    """A study file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Factor:
    """One open assumption: its levels (label -> overrides, in file order) and its default."""

    name: str
    levels: Mapping[str, tuple[str, ...]]
    default: str
    reason: str = ""


@dataclass(frozen=True)
class Study:
    """A parsed study file."""

    path: Path
    entry: str
    claim: str
    conclusion: str
    default_reason: str
    seeds: tuple[int, ...]
    variants: tuple[str, ...]
    factors: tuple[Factor, ...]
    pairs: tuple[tuple[str, str], ...] = ()
    #: The quantity the conclusion is about, in the claim language (e.g. the lowest
    #: Vegas/Reno ratio), and what it is; measured per seed beside the verdict. Optional:
    #: "" when the study file gives none.
    figure: str = ""
    figure_label: str = ""

    def factor(self, name: str) -> Factor:
        return next(f for f in self.factors if f.name == name)


@dataclass(frozen=True)
class Point:
    """A combination of levels: factor name -> level label (factors not named are at their
    defaults), and the overrides it applies to every run."""

    levels: Mapping[str, str]
    overrides: tuple[str, ...]

    def label(self) -> str:
        return ", ".join(f"{k} = {v}" for k, v in self.levels.items()) or "all defaults"


@dataclass
class PointResult:
    point: Point
    holds: int = 0
    seeds: int = 0
    errors: list[str] = field(default_factory=list)
    #: The study's figure on each judged seed, in seed order (empty without a figure).
    values: list[float] = field(default_factory=list)

    @property
    def value_range(self) -> tuple[float, float, float] | None:
        """(mean, lowest, highest) of :attr:`values`, or None without values."""
        if not self.values:
            return None
        return sum(self.values) / len(self.values), min(self.values), max(self.values)

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.holds, self.seeds)

    @property
    def status(self) -> str:
        """``holds``, ``fails``, ``mixed`` or ``error`` (see the module docstring)."""
        if self.errors or self.seeds == 0:
            return "error"
        lo, hi = self.interval
        return "holds" if lo > 0.5 else "fails" if hi < 0.5 else "mixed"


@dataclass
class StudyResult:
    study: Study
    points: list[PointResult]
    runs: int = 0
    computed: int = 0
    wall_s: float = 0.0
    #: The compute the study's runs took when they were computed: the sum of their stored
    #: wall times (the worker's, per run), whichever call computed them.
    compute_s: float = 0.0
    #: The plan that ran, and our Results at the default point's first seed by variant
    #: (what :func:`vegaslab.robustness_ns2.check` compares ns-2 with); not serialised.
    plan: Any = None
    default_runs: dict[str, Any] = field(default_factory=dict)
    #: ns-2.35 at the default point (:mod:`vegaslab.robustness_ns2`), when checked.
    ns2: Any = None

    def at(self, levels: Mapping[str, str]) -> PointResult:
        want = dict(levels)
        return next(p for p in self.points if dict(p.point.levels) == want)

    @property
    def default(self) -> PointResult:
        return self.at({})

    @property
    def verdict(self) -> str:
        statuses = [p.status for p in self.points]
        if "error" in statuses:
            return "error"
        if all(s == "holds" for s in statuses):
            return "robust"
        if any(s == "holds" for s in statuses):
            return "holds only under a narrow set-up"
        return "not reproducible with any plausible set-up"

    def sentence(self) -> str:
        """"The conclusion holds when X, fails when Y, our default is Z because ...", from the
        one-factor points."""
        holds, fails = [], []
        for f in self.study.factors:
            for label in f.levels:
                if label == f.default:
                    continue
                status = self.at({f.name: label}).status
                if status == "holds":
                    holds.append(f"{f.name} = {label}")
                elif status == "fails":
                    fails.append(f"{f.name} = {label}")
        d = self.default
        parts = [f"“{self.study.conclusion}”"]
        parts.append(f"holds when {', '.join(holds)}" if holds else "holds at no other level studied")
        parts.append(f"fails when {', '.join(fails)}" if fails else "fails at no other level studied")
        defaults = ", ".join(f"{f.name} = {f.default}" for f in self.study.factors)
        return (f"{parts[0]} {parts[1]}; it {parts[2]}. Our default ({defaults}) gives {d.status} "
                f"({d.holds} of {d.seeds} seeds), because {self.study.default_reason}")


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of k successes in n trials ((0, 1) when n is 0)."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    z2 = _Z95 * _Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


# ------------------------------------------------------------------------------ reading


def studies_dir(directory: str | os.PathLike | None = None) -> Path:
    """The study files: ``directory``, else the built-in ones (``catalog_data/studies``, package
    data found as the catalog is: :func:`vegaslab.catalog.builtin_dir`)."""
    if directory is not None:
        return Path(directory)
    from .catalog import builtin_dir

    return builtin_dir() / "studies"


def _err(path: Path, where: str, message: str) -> StudyError:
    return StudyError(f"{path}: {where}: {message}")


def _text(path: Path, table: Mapping[str, Any], key: str, where: str, required: bool = True) -> str:
    v = table.get(key)
    if v is None and not required:
        return ""
    if not isinstance(v, str) or not v.strip():
        raise _err(path, f"{where}.{key}", f"must be a non-empty string, got {v!r}")
    return v


def _overrides(path: Path, value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(o, str) and "=" in o for o in value):
        raise _err(path, where, f"must be a list of overrides \"path=value\" (as --set takes), got {value!r}")
    return tuple(value)


def _factor(path: Path, t: Any, i: int) -> Factor:
    where = f"study.factor[{i}]"
    if not isinstance(t, dict):
        raise _err(path, where, "must be a table")
    unknown = set(t) - {"name", "path", "values", "levels", "default", "reason"}
    if unknown:
        raise _err(path, f"{where}.{sorted(unknown)[0]}", "unknown field (allowed: name, path, values, levels, default, reason)")
    name = _text(path, t, "name", where)
    if ("levels" in t) == ("values" in t):
        raise _err(path, where, "give exactly one of levels (label -> overrides) and path with values")
    if "levels" in t:
        if not isinstance(t["levels"], dict) or not t["levels"]:
            raise _err(path, f"{where}.levels", "must be a non-empty table: label = [\"path=value\", ...]")
        levels = {str(k): _overrides(path, v, f"{where}.levels.{k}") for k, v in t["levels"].items()}
    else:
        p = _text(path, t, "path", where)
        values = t["values"]
        if not isinstance(values, list) or len(values) < 2:
            raise _err(path, f"{where}.values", f"must list at least two levels, got {values!r}")
        levels = {}
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (str, int, float)):
                raise _err(path, f"{where}.values", f"levels are strings or numbers, got {v!r}")
            label = str(v).lower() if isinstance(v, bool) else str(v)
            if label in levels:
                raise _err(path, f"{where}.values", f"{label!r} is listed twice")
            levels[label] = (f"{p}={label}",)
    default = t.get("default")
    default = str(default) if isinstance(default, (int, float)) and not isinstance(default, bool) else default
    if default not in levels:
        raise _err(path, f"{where}.default", f"must be one of the levels ({', '.join(levels)}), got {default!r}")
    return Factor(name, levels, default, _text(path, t, "reason", where, required=False))


def load_study(path: str | os.PathLike) -> Study:
    """Read and check one study file (its entry and claim are checked by :func:`plan`)."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise StudyError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: not TOML: {exc}") from None
    t = doc.get("study")
    if not isinstance(t, dict) or set(doc) != {"study"}:
        raise _err(path, "study", "the file must hold one [study] table and nothing else")
    allowed = {"entry", "claim", "conclusion", "default_reason", "seeds", "variants", "factor", "pair", "figure"}
    unknown = set(t) - allowed
    if unknown:
        raise _err(path, f"study.{sorted(unknown)[0]}", f"unknown field (allowed: {', '.join(sorted(allowed))})")
    seeds = t.get("seeds", 10)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not MIN_SEEDS <= seeds <= 1000:
        raise _err(path, "study.seeds", f"must be a whole number from {MIN_SEEDS} to 1000 (seeds 1..n; with fewer "
                   f"than {MIN_SEEDS} no share of seeds is decisive at 95%), got {seeds!r}")
    variants = t.get("variants", [])
    if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
        raise _err(path, "study.variants", f"must be a list of the entry's variant names, got {variants!r}")
    raw = t.get("factor")
    if not isinstance(raw, list) or not raw:
        raise _err(path, "study.factor", "at least one [[study.factor]] is required")
    factors = tuple(_factor(path, f, i) for i, f in enumerate(raw))
    names = [f.name for f in factors]
    if len(set(names)) != len(names):
        raise _err(path, "study.factor", "factor names must differ")
    pairs = []
    for i, p in enumerate(t.get("pair", [])):
        fs = p.get("factors") if isinstance(p, dict) else None
        if not (isinstance(fs, list) and len(fs) == 2 and all(f in names for f in fs) and fs[0] != fs[1]):
            raise _err(path, f"study.pair[{i}].factors", f"must name two different factors of the study ({', '.join(names)}), got {fs!r}")
        pairs.append((fs[0], fs[1]))
    figure, figure_label = _figure(path, t.get("figure"))
    return Study(path, _text(path, t, "entry", "study"), _text(path, t, "claim", "study"),
                 _text(path, t, "conclusion", "study"), _text(path, t, "default_reason", "study"),
                 tuple(range(1, seeds + 1)), tuple(variants), factors, tuple(pairs),
                 figure, figure_label)


def _figure(path: Path, t: Any) -> tuple[str, str]:
    """The optional ``[study.figure]`` table: ``expr`` (a numeric expression of the claim
    language, checked to parse here) and ``label``."""
    if t is None:
        return "", ""
    if not isinstance(t, dict):
        raise _err(path, "study.figure", "must be a table with expr and label")
    unknown = set(t) - {"expr", "label"}
    if unknown:
        raise _err(path, f"study.figure.{sorted(unknown)[0]}", "unknown field (allowed: expr, label)")
    expr = _text(path, t, "expr", "study.figure")
    from .claims import ClaimError, parse

    try:
        parse(expr)
    except ClaimError as exc:
        raise _err(path, "study.figure.expr", f"not an expression of the claim language: {exc}") from None
    return expr, _text(path, t, "label", "study.figure")


def list_studies(directory: str | os.PathLike | None = None) -> list[Study]:
    """Every ``*.toml`` in the studies directory, by entry id."""
    return sorted((load_study(p) for p in studies_dir(directory).glob("*.toml")), key=lambda s: s.entry)


# ------------------------------------------------------------------------------ planning


def points(study: Study) -> list[Point]:
    """The default point, each factor's other levels alone, then each pair's combinations
    of non-default levels: every combination once."""
    def point(levels: Mapping[str, str]) -> Point:
        over: list[str] = []
        for f in study.factors:
            over += f.levels[levels.get(f.name, f.default)]
        return Point(dict(levels), tuple(over))

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


def plan(study: Study, catalog: str | os.PathLike | None = None) -> Plan:
    """The runs of a study: the claim's variants of its entry at every point and seed."""
    from . import read_text_file
    from .catalog import expand, load_entry
    from .runner import Job, _invalid_key
    from .store import RunSpec, prepare

    try:
        entry = load_entry(study.entry, catalog)
    except KeyError as exc:
        raise _err(study.path, "study.entry", str(exc).strip("'\"")) from None
    claims = [c for c in entry.claims if c.get("text") == study.claim]
    if not claims:
        known = "; ".join(c.get("text", "") for c in entry.claims)
        raise _err(study.path, "study.claim", f"no claim of {study.entry} has this text (its claims: {known})")
    specs = {s.name: s for s in expand(entry)}
    wanted = list(study.variants) or list(specs)
    missing = [v for v in wanted if v not in specs]
    if missing:
        raise _err(study.path, "study.variants", f"{entry.id} has no variant {missing[0]!r} (known: {', '.join(specs)})")
    pts = points(study)
    total = len(pts) * len(wanted) * len(study.seeds)
    if total > MAX_STUDY_RUNS:
        raise _err(study.path, "study", f"plans {total} runs; at most {MAX_STUDY_RUNS} are allowed")
    texts: dict[str, str] = {}
    planned: list[tuple[int, str, int, str, tuple[str, ...], RunSpec]] = []
    for i, pt in enumerate(pts):
        for name in wanted:
            spec = specs[name]
            path = os.fspath(spec.scenario_path)
            texts.setdefault(path, read_text_file(path))
            overrides = tuple(spec.overrides) + pt.overrides
            for s in study.seeds:
                planned.append((i, name, s, path, overrides,
                                RunSpec(texts[path], path, overrides, s, {"entry": entry.id, "variant": name})))
    prepared = prepare([r for *_, r in planned])
    jobs, index = [], []
    for (i, name, s, path, overrides, _), p in zip(planned, prepared):
        key = p.key if not p.error else _invalid_key(path, name, overrides, s)
        jobs.append(Job(entry.id, name, s, path, overrides, key, str(p.error or ""), p))
        index.append((i, name, s))
    return Plan(study, claims[0], pts, jobs, index)


# ------------------------------------------------------------------------------ running


def run_study(study: Study, store_dir: str | os.PathLike, *, catalog: str | os.PathLike | None = None,
              n_jobs: int | None = None, scheduler: Any = None, progress: bool = False,
              run_fn: Callable | None = None) -> StudyResult:
    """Plan, run what the store lacks, and judge the claim at every point and seed. Ctrl-C
    keeps the finished runs in the store and raises ``KeyboardInterrupt``."""
    from .claims import ClaimError, ClaimSkipped, RunSet, evaluate, measure
    from .runner import execute, load

    p = plan(study, catalog)
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
    points_out = [PointResult(pt) for pt in p.points]
    for i, pr in enumerate(points_out):
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
    computed = sum(1 for o in outcome.values() if o.status == "ran")
    return StudyResult(study, points_out, runs=len(set(j.key for j in p.jobs)), computed=computed,
                       wall_s=ex.wall_s, compute_s=_compute_s(store_dir, results), plan=p,
                       default_runs=per.get((0, study.seeds[0]), {}))


def _compute_s(store_dir: str | os.PathLike, results: Mapping[str, Any]) -> float:
    from .store import Store

    if not results:
        return 0.0
    runs = Store(store_dir, create=False).read("runs", list(results))
    return float(runs["wall_s"].sum())


def check_ns2(result: StudyResult, store_dir: str | os.PathLike) -> None:
    """Set ``result.ns2``: ns-2.35 at the study's default point and first seed
    (:mod:`vegaslab.robustness_ns2`; its runs are cached under ``store_dir/ns2``)."""
    from .robustness_ns2 import check

    result.ns2 = check(result.study, result.plan, result.default_runs, Path(store_dir) / "ns2")


# ------------------------------------------------------------------------------ reporting


def figure(result: StudyResult, out: str | os.PathLike) -> list[Path]:
    """One PNG per factor: the share of seeds for which the conclusion holds at each level,
    with its 95% interval, the default level marked; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for n, f in enumerate(result.study.factors):
        labels = list(f.levels)
        prs = [result.default if lab == f.default else result.at({f.name: lab}) for lab in labels]
        share = [pr.holds / pr.seeds if pr.seeds else math.nan for pr in prs]
        # Clamped at 0: at k = 0 or k = n an interval end equals the share up to rounding.
        lo = [max(0.0, s - pr.interval[0]) if pr.seeds else 0.0 for s, pr in zip(share, prs)]
        hi = [max(0.0, pr.interval[1] - s) if pr.seeds else 0.0 for s, pr in zip(share, prs)]
        fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(labels) + 2), 3.2))
        x = range(len(labels))
        ax.errorbar(x, share, yerr=[lo, hi], fmt="o", color="#1f4e9c", capsize=4)
        d = labels.index(f.default)
        ax.plot([d], [share[d]], marker="*", markersize=16, color="#c0392b", linestyle="none", label="our default")
        ax.axhline(0.5, color="#888", linewidth=0.8, linestyle="--")
        ax.set_xticks(list(x), labels, rotation=20 if len(labels) > 4 else 0)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel(f.name)
        ax.set_ylabel("share of seeds where it holds")
        ax.set_title("\n".join(textwrap.wrap(result.study.conclusion, 60)), fontsize=9)
        ax.legend(loc="best", fontsize=8)
        fig.tight_layout()
        path = out / f"{result.study.entry}-{n}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        files.append(path)
    return files


def summary(result: StudyResult, figures: Sequence[str | os.PathLike] = ()) -> dict:
    """Everything a report shows of one study, as plain data (``robustness/<entry>.json``;
    :func:`markdown` and the HTML report both render from it)."""
    st = result.study
    points = []
    for pr in result.points:
        lo, hi = pr.interval
        points.append({"label": pr.point.label(), "levels": dict(pr.point.levels), "holds": pr.holds,
                       "seeds": pr.seeds, "interval": [lo, hi], "status": pr.status,
                       "values": list(pr.values), "errors": list(pr.errors)})
    means = [p.value_range[0] for p in result.points if p.value_range]
    return {
        "entry": st.entry, "claim": st.claim, "conclusion": st.conclusion,
        "default_reason": st.default_reason, "figure_expr": st.figure, "figure_label": st.figure_label,
        "factors": [{"name": f.name, "levels": list(f.levels), "default": f.default, "reason": f.reason}
                    for f in st.factors],
        "verdict": result.verdict, "sentence": result.sentence(), "points": points,
        "study_range": [min(means), max(means)] if means else None,
        "runs": result.runs, "computed": result.computed, "wall_s": result.wall_s, "compute_s": result.compute_s,
        "ns2": result.ns2.to_dict() if result.ns2 is not None else None,
        "figures": [Path(f).as_posix() for f in figures],
    }


def save_summary(summary_: Mapping[str, Any], directory: str | os.PathLike) -> Path:
    """Write ``directory/<entry>.json`` (atomically) and return its path."""
    import json

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{summary_['entry']}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary_, indent=1, allow_nan=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def load_summaries(directory: str | os.PathLike) -> list[dict]:
    """Every study summary saved in ``directory`` (``robustness/`` beside a report), by entry;
    [] when there is none. A file that cannot be read is skipped with its error recorded as
    the study's verdict, so a report never shows it as a result."""
    import json

    out = []
    for path in sorted(Path(directory).glob("*.json")):
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            out.append({"entry": path.stem, "verdict": "error", "conclusion": f"unreadable {path.name}: {exc}",
                        "points": [], "factors": [], "figures": []})
    return out


def fmt(x: float | None) -> str:
    """A figure for a table: three significant digits, "–" for none."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.3g}"


def default_cell(s: Mapping[str, Any]) -> str:
    """Our figure at the default point: the mean over seeds and, when they differ, the range."""
    pts = s.get("points") or []
    vals = pts[0].get("values") if pts else None
    if not vals:
        return "–"
    mean, lo, hi = sum(vals) / len(vals), min(vals), max(vals)
    return fmt(mean) if fmt(lo) == fmt(hi) else f"{fmt(mean)} ({fmt(lo)}-{fmt(hi)})"


def study_cell(s: Mapping[str, Any]) -> str:
    """The figure across the study: the lowest and highest mean over the points."""
    r = s.get("study_range")
    return "–" if not r else f"{fmt(r[0])} to {fmt(r[1])}"


def ns2_cell(s: Mapping[str, Any]) -> str:
    from .robustness_ns2 import Ns2Check, describe

    return describe(Ns2Check.from_dict(s["ns2"]) if s.get("ns2") else None)


def default_status(s: Mapping[str, Any]) -> str:
    pts = s.get("points") or []
    if not pts:
        return "–"
    d = pts[0]
    return f"{d['status']} ({d['holds']}/{d['seeds']} seeds)"


def markdown(summaries: Sequence[Mapping[str, Any]]) -> str:
    """"How robust are the papers' conclusions?": the verdict table, then each study."""
    lines = ["# How robust are the papers' conclusions?", "",
             "Each study takes one conclusion and varies, one at a time and in the pairs that matter, "
             "the assumptions the paper leaves open; at every point the conclusion is judged per seed "
             "(holds: the 95% Wilson interval of the share of seeds is above one half). "
             "The figure is the quantity the conclusion is about; ns-2.35 runs the default set-up at "
             "the first seed. vegaslab.robustness documents the rules.", "",
             "| entry | conclusion | figure | ours at default | ns-2.35 at default | across the study | at our default | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    total = sum(s.get("compute_s", 0) for s in summaries)
    lines[4:4] = [f"{len(summaries)} studies, {sum(s.get('runs', 0) for s in summaries):,} runs, "
                  f"{total:,.0f} s of compute ({total / 3600:.2f} CPU hours).", ""]
    for s in summaries:
        lines.append(f"| {s['entry']} | {s['conclusion']} | {s.get('figure_label') or '–'} | {default_cell(s)} | "
                     f"{ns2_cell(s)} | {study_cell(s)} | {default_status(s)} | **{s['verdict']}** |")
    for s in summaries:
        lines += ["", f"## {s['entry']}: {s['conclusion']}", "", s.get("sentence", ""), "",
                  f"{s.get('runs', 0)} runs, {s.get('compute_s', 0):.0f} s of compute (the runs' wall times); "
                  f"{s.get('computed', 0)} computed in the last call, in {s.get('wall_s', 0):.0f} s.", "",
                  f"ns-2.35 at the default point: {ns2_cell(s)}.", "",
                  "| point | holds in | 95% interval | status | figure (mean, seeds' range) |",
                  "|---|---|---|---|---|"]
        for p in s.get("points", []):
            lo, hi = p["interval"]
            v = p.get("values") or []
            fig = "–" if not v else f"{fmt(sum(v) / len(v))} ({fmt(min(v))}-{fmt(max(v))})"
            lines.append(f"| {p['label']} | {p['holds']}/{p['seeds']} | {lo:.2f}-{hi:.2f} | {p['status']} | {fig} |")
            for e in p.get("errors", [])[:3]:
                lines.append(f"|  | error: {e} |  |  |  |")
        for path in s.get("figures", []):
            lines += ["", f"![{s['entry']}]({path})"]
    return "\n".join(lines) + "\n"
