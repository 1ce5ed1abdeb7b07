"""Robustness studies: how much of a paper's conclusion survives the assumptions it leaves open.

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
  the point's overrides after the variant's (:mod:`vegaslab.study.runner`, :mod:`vegaslab.sweeps.engine`):
  resumable, shared with ``reproduce`` and ``sweep`` in the same store, on one machine or a
  Dask cluster, and a second call recomputes nothing.
- **Checked before anything runs.** :func:`load_study` checks every field of a study file and
  :func:`plan` has the core resolve every run it plans; a mistake is a :class:`StudyError`
  naming the file, the field and the level, never a failed run hours later. A study file
  names input only: its entry is a catalog id (:data:`ENTRY_ID`), never a path.
- **Outputs under the one rule for files.** A study writes ``<entry>.json`` and
  ``<entry>-<n>.png`` with :mod:`vegaslab.safe_io`, and reads a report directory's summaries
  and figures back as files it does not own (:func:`load_summaries`): checked against
  :data:`SUMMARY_SCHEMA`, figures only PNGs of that study in that directory; a bad one is set
  aside and named, never used.
"""
from __future__ import annotations

import dataclasses
import io
import itertools
import json
import math
import os
import re
import textwrap
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..deprecation import moved_names
from ..errors import ScenarioError, VegaslabError
from .. import safe_io
from .ns2_check import STATUSES as NS2_STATUSES

#: Largest number of runs one study may plan (levels x pairs x variants x seeds).
MAX_STUDY_RUNS = 100_000
#: Fewest seeds a study may have: with 3, even 3 of 3 leaves the Wilson interval's lower end
#: below one half (0.44), so no point could hold or fail.
MIN_SEEDS = 4
#: z for the 95% Wilson interval.
_Z95 = 1.959963984540054
#: A study's entry: a catalog entry id, by the core's rule for names (scenario/limits.rs), the
#: rule variant names follow. The study's outputs are named after it (``<entry>.json``,
#: ``<entry>-<n>.png``), so they are plain names by construction; a path is never an entry.
ENTRY_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class StudyError(ScenarioError):
    """A study file that cannot be used; the message names the file and the field. Raised
    before anything runs (the command line exits 2: bad input)."""


@dataclass(frozen=True)
class Factor:
    """One open assumption: its levels (label -> overrides, in file order) and its default."""

    name: str
    levels: Mapping[str, tuple[str, ...]]
    default: str
    reason: str = ""
    #: The override path of a factor given as ``path`` with ``values`` ("" for ``levels``).
    path: str = ""


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
    #: (what :func:`vegaslab.study.ns2_check.check` compares ns-2 with); not serialised.
    plan: Any = None
    default_runs: dict[str, Any] = field(default_factory=dict)
    #: ns-2.35 at the default point (:mod:`vegaslab.study.ns2_check`), when checked.
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
    data found as the catalog is: :func:`vegaslab.study.catalog.builtin_dir`)."""
    if directory is not None:
        return Path(directory)
    from .catalog import builtin_dir

    return builtin_dir() / "studies"


def _err(path: Path, where: str, message: str) -> StudyError:
    return StudyError(f"{path}: {where}: {message}")


def _shown(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _text(path: Path, table: Mapping[str, Any], key: str, where: str, required: bool = True) -> str:
    v = table.get(key)
    if v is None and not required:
        return ""
    if not isinstance(v, str) or not v.strip():
        raise _err(path, f"{where}.{key}", f"must be a non-empty string, got {_shown(v)}")
    return v


def _sets_seed(key: str, raw: str) -> bool:
    """Whether the override ``key=raw`` sets ``run.seed`` (directly, or as a key of a whole
    ``run`` table). The core trims the path and splits it at dots (scenario/overrides.rs)."""
    key = key.strip()
    if key == "run.seed":
        return True
    if key != "run":
        return False
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        return False
    return isinstance(value, dict) and "seed" in value


def _check_override(path: Path, where: str, override: str) -> None:
    """The shape of one override, ``path=value`` as ``--set`` takes it; the simulator judges
    the path and the value when the study is planned (:func:`plan`)."""
    key, eq, raw = override.partition("=")
    if not eq:
        raise _err(path, where, f"{_shown(override)} is not an override \"path=value\" (as --set takes)")
    if not key.strip():
        raise _err(path, where, f"{_shown(override)} has no path before '=' (an override is \"path=value\")")
    if _sets_seed(key, raw):
        raise _err(path, where, f"{_shown(override)} sets run.seed: seeds are the study's own axis "
                   "(study.seeds), never a factor")


def _overrides(path: Path, value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(o, str) for o in value):
        raise _err(path, where, f"must be a list of overrides \"path=value\" (as --set takes), got {_shown(value)}")
    for o in value:
        _check_override(path, where, o)
    return tuple(value)


def _value_label(path: Path, where: str, v: Any) -> str:
    """The label of one of ``values``: a string as written, a number as Python prints it."""
    if isinstance(v, str) and v.strip():
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
        return str(v)
    raise _err(path, where, f"levels are non-empty strings or finite numbers, got {_shown(v)}")


def _levels_table(path: Path, t: Mapping[str, Any], where: str) -> dict[str, tuple[str, ...]]:
    """``levels = { label = ["path=value", ...], ... }``."""
    raw = t["levels"]
    if not isinstance(raw, dict) or not raw:
        raise _err(path, f"{where}.levels", "must be a non-empty table: label = [\"path=value\", ...]")
    levels = {}
    for label, value in raw.items():
        if not label.strip():
            raise _err(path, f"{where}.levels", "a level's label must be a non-empty string")
        levels[label] = _overrides(path, value, f"{where}.levels.{label}")
    return levels


def _path_values(path: Path, t: Mapping[str, Any], where: str) -> tuple[str, dict[str, tuple[str, ...]]]:
    """``path`` with ``values``: one level per value, ``path=value``."""
    p = _text(path, t, "path", where)
    if "=" in p:
        raise _err(path, f"{where}.path", f"an override path has no '=', got {_shown(p)}")
    if _sets_seed(p, ""):
        raise _err(path, f"{where}.path", "run.seed cannot be a factor: seeds are the study's own axis (study.seeds)")
    values = t["values"]
    if not isinstance(values, list) or len(values) < 2:
        raise _err(path, f"{where}.values", f"must list at least two levels, got {_shown(values)}")
    levels: dict[str, tuple[str, ...]] = {}
    for v in values:
        label = _value_label(path, f"{where}.values", v)
        if label in levels:
            raise _err(path, f"{where}.values", f"{label!r} is listed twice")
        levels[label] = (f"{p}={label}",)
    return p, levels


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
        if "path" in t:
            raise _err(path, f"{where}.path", "a factor with levels has no path (each level lists its overrides)")
        factor_path, levels = "", _levels_table(path, t, where)
    else:
        factor_path, levels = _path_values(path, t, where)
    default = t.get("default")
    if isinstance(default, bool) or not isinstance(default, (str, int, float)):
        raise _err(path, f"{where}.default", f"must name one of the levels ({', '.join(levels)}) as a string or "
                   f"number, got {_shown(default)}")
    default = default if isinstance(default, str) else str(default)
    if default not in levels:
        raise _err(path, f"{where}.default", f"must be one of the levels ({', '.join(levels)}), got {default!r}")
    return Factor(name, levels, default, _text(path, t, "reason", where, required=False), factor_path)


def _entry_id(path: Path, t: Mapping[str, Any]) -> str:
    """``study.entry``: a catalog entry id, never a path (see :data:`ENTRY_ID`)."""
    entry = t.get("entry")
    if not isinstance(entry, str) or not ENTRY_ID.fullmatch(entry):
        raise _err(path, "study.entry", "must be a catalog entry id: 1 to 64 letters, digits, '_' and '-', looked "
                   f"up in the catalog directory (never a file path), got {_shown(entry)}")
    return entry


def _variants(path: Path, t: Mapping[str, Any]) -> tuple[str, ...]:
    variants = t.get("variants", [])
    if not isinstance(variants, list) or not all(isinstance(v, str) and v for v in variants):
        raise _err(path, "study.variants", f"must be a list of the entry's variant names, got {_shown(variants)}")
    seen: set[str] = set()
    for v in variants:
        if v in seen:
            raise _err(path, "study.variants", f"{v!r} is listed twice")
        seen.add(v)
    return tuple(variants)


def _pairs(path: Path, raw: Any, names: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``[[study.pair]]`` tables, each ``factors = ["a", "b"]``."""
    if not isinstance(raw, list):
        raise _err(path, "study.pair", f"must be an array of tables ([[study.pair]] with factors = [\"a\", \"b\"]), "
                   f"got {_shown(raw)}")
    pairs: list[tuple[str, str]] = []
    for i, p in enumerate(raw):
        where = f"study.pair[{i}]"
        if not isinstance(p, dict):
            raise _err(path, where, f"must be a table with factors = [\"a\", \"b\"], got {_shown(p)}")
        unknown = set(p) - {"factors"}
        if unknown:
            raise _err(path, f"{where}.{sorted(unknown)[0]}", "unknown field (allowed: factors)")
        fs = p.get("factors")
        if not (isinstance(fs, list) and len(fs) == 2 and all(isinstance(f, str) and f in names for f in fs)
                and fs[0] != fs[1]):
            raise _err(path, f"{where}.factors", f"must name two different factors of the study ({', '.join(names)}), "
                       f"got {_shown(fs)}")
        if any({fs[0], fs[1]} == set(q) for q in pairs):
            raise _err(path, f"{where}.factors", f"the pair {fs[0]!r}, {fs[1]!r} is listed twice")
        pairs.append((fs[0], fs[1]))
    return tuple(pairs)


def load_study(path: str | os.PathLike) -> Study:
    """Read and check one study file: every field's type and shape, each override's syntax, no
    factor on ``run.seed``, no duplicates. What needs the entry's scenario (the entry, claim
    and variants exist; the simulator accepts every level) is checked by :func:`plan`; both
    before anything runs."""
    from ..errors import ScenarioError
    from ..scenario import read_text_file

    path = Path(path)
    try:
        text = read_text_file(path)  # a bounded read; a directory or bad bytes named
    except (OSError, ScenarioError) as exc:
        raise StudyError(f"{path}: cannot read: {str(exc).removeprefix(f'{path}: ')}") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: not TOML: {exc}") from None
    except RecursionError:
        raise StudyError(f"{path}: not TOML: arrays or tables nested too deep") from None
    t = doc.get("study")
    if not isinstance(t, dict) or set(doc) != {"study"}:
        raise _err(path, "study", "the file must hold one [study] table and nothing else")
    allowed = {"entry", "claim", "conclusion", "default_reason", "seeds", "variants", "factor", "pair", "figure"}
    unknown = set(t) - allowed
    if unknown:
        raise _err(path, f"study.{sorted(unknown)[0]}", f"unknown field (allowed: {', '.join(sorted(allowed))})")
    entry = _entry_id(path, t)
    seeds = t.get("seeds", 10)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not MIN_SEEDS <= seeds <= 1000:
        raise _err(path, "study.seeds", f"must be a whole number from {MIN_SEEDS} to 1000 (seeds 1..n; with fewer "
                   f"than {MIN_SEEDS} no share of seeds is decisive at 95%), got {_shown(seeds)}")
    variants = _variants(path, t)
    raw = t.get("factor")
    if not isinstance(raw, list) or not raw:
        raise _err(path, "study.factor", "at least one [[study.factor]] is required")
    factors = tuple(_factor(path, f, i) for i, f in enumerate(raw))
    names = [f.name for f in factors]
    if len(set(names)) != len(names):
        raise _err(path, "study.factor", "factor names must differ")
    pairs = _pairs(path, t.get("pair", []), names)
    figure, figure_label = _figure(path, t.get("figure"))
    return Study(path, entry, _text(path, t, "claim", "study"),
                 _text(path, t, "conclusion", "study"), _text(path, t, "default_reason", "study"),
                 tuple(range(1, seeds + 1)), variants, factors, pairs,
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


def one_study_per_entry(studies: Sequence[Study]) -> None:
    """A :class:`StudyError` when two studies name the same entry: a study's outputs are named
    after its entry (``robustness/<entry>.json``), so the second would replace the first."""
    seen: dict[str, Study] = {}
    for st in studies:
        first = seen.setdefault(st.entry, st)
        if first is not st:
            raise _err(st.path, "study.entry", f"{st.entry!r} is also the entry of {first.path}; one study per entry "
                       "(its outputs are named after it)")


def list_studies(directory: str | os.PathLike | None = None) -> list[Study]:
    """Every ``*.toml`` in the studies directory, by entry id; one study per entry."""
    studies = [load_study(p) for p in sorted(studies_dir(directory).glob("*.toml"))]
    one_study_per_entry(studies)
    return sorted(studies, key=lambda s: s.entry)


# ------------------------------------------------------------------------------ planning


def point_count(study: Study) -> int:
    """How many points :func:`points` gives, without making them."""
    levels = {f.name: len(f.levels) - 1 for f in study.factors}
    return 1 + sum(levels.values()) + sum(levels[a] * levels[b] for a, b in study.pairs)


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
    from .catalog import catalog_dir, list_entries, load_entry

    root = catalog_dir(catalog)
    try:
        if (root / f"{study.entry}.toml").is_file():
            return load_entry(root / f"{study.entry}.toml")
        entries = list_entries(root) if root.is_dir() else []
    except ScenarioError as exc:
        raise _err(study.path, "study.entry", f"the catalog entry cannot be read: {exc}") from None
    found = [e for e in entries if e.id == study.entry]
    if found:
        return found[0]
    known = ", ".join(e.id for e in entries) if root.is_dir() else f"no directory {root}"
    raise _err(study.path, "study.entry", f"no catalog entry {study.entry!r} in {root} (known: {known})")


def plan(study: Study, catalog: str | os.PathLike | None = None) -> Plan:
    """The runs of a study: the claim's variants of its entry at every point and seed, each
    resolved by the core. Everything a run would find wrong with the study is a
    :class:`StudyError` here, before anything runs: an unknown entry, claim or variant, a level
    the simulator refuses (named by factor and level), and two points or variants that would
    run the same scenario."""
    from ..scenario import read_text_file
    from .catalog import expand
    from .runner import Job
    from ..sweeps.store import RunSpec, prepare

    entry = _find_entry(study, catalog)
    claims = [c for c in entry.claims if c.get("text") == study.claim]
    if not claims:
        known = "; ".join(c.get("text", "") for c in entry.claims)
        raise _err(study.path, "study.claim", f"no claim of {study.entry} has this text (its claims: {known})")
    specs = {s.name: s for s in expand(entry)}
    wanted = list(study.variants) or list(specs)
    missing = [v for v in wanted if v not in specs]
    if missing:
        raise _err(study.path, "study.variants", f"{entry.id} has no variant {missing[0]!r} (known: {', '.join(specs)})")
    total = point_count(study) * len(wanted) * len(study.seeds)
    if total > MAX_STUDY_RUNS:
        raise _err(study.path, "study", f"plans {total} runs; at most {MAX_STUDY_RUNS} are allowed")
    pts = points(study)
    texts: dict[str, str] = {}
    planned: list[_Planned] = []
    for i, pt in enumerate(pts):
        for name in wanted:
            spec = specs[name]
            path = os.fspath(spec.scenario_path)
            texts.setdefault(path, read_text_file(path))
            overrides = tuple(spec.overrides) + pt.overrides
            for s in study.seeds:
                planned.append(_Planned(i, name, s, tuple(spec.overrides), RunSpec(
                    texts[path], path, overrides, s, {"entry": entry.id, "variant": name})))
    prepared = prepare([r.spec for r in planned])
    _check_runs(study, entry.id, pts, planned, prepared)
    jobs = [Job(entry.id, r.variant, r.seed, r.spec.source, r.spec.overrides, p.key, "", p)
            for r, p in zip(planned, prepared)]
    return Plan(study, claims[0], pts, jobs, [(r.point, r.variant, r.seed) for r in planned])


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
        if first is not r:
            raise _same_runs(study, pts, first, r)


def _refused(study: Study, entry_id: str, pts: Sequence[Point], r: _Planned, error: str) -> StudyError:
    """The error for a run the core refused, naming what in the study file caused it: the
    variant itself, a factor's level (at the default point, the first factor whose default
    level makes the run fail), or a pair's combination."""
    from ..sweeps.store import prepare

    def refusal(overrides: Sequence[str]) -> str:
        return prepare([dataclasses.replace(r.spec, overrides=tuple(overrides))])[0].error or ""

    if refusal(r.variant_overrides):
        return _err(study.path, "study.variants", f"variant {r.variant} of {entry_id} is refused by the simulator "
                    f"before any level is applied: {error}")
    pt = pts[r.point]
    if not pt.levels:
        applied = list(r.variant_overrides)
        for k, f in enumerate(study.factors):
            applied += f.levels[f.default]
            why = refusal(applied)
            if why:
                return _level_error(study, k, f.default, r.variant, why)
        return _err(study.path, "study.factor", f"the default levels together are refused by the simulator for "
                    f"variant {r.variant}: {error}")
    if len(pt.levels) == 1:
        (name, label), = pt.levels.items()
        return _level_error(study, _factor_index(study, name), label, r.variant, error)
    j = next(j for j, pair in enumerate(study.pairs) if set(pair) == set(pt.levels))
    return _err(study.path, f"study.pair[{j}]", f"the combination {pt.label()} is refused by the simulator for "
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
    return _err(study.path, _level_field(study, k, label), f"level {label!r} of factor {f.name!r}{default} is "
                f"refused by the simulator for variant {variant}: {error}")


def _same_runs(study: Study, pts: Sequence[Point], a: _Planned, b: _Planned) -> StudyError:
    """The error for two planned runs that resolve to the same scenario."""
    pa, pb = pts[a.point], pts[b.point]
    if a.point == b.point:
        return _err(study.path, "study.variants", f"variants {a.variant!r} and {b.variant!r} run the same scenario "
                    f"at {pa.label()}: the study's levels set what tells them apart")
    variant = a.variant if a.variant == b.variant else f"{a.variant} and {b.variant}"
    factors = {name for p in (pa, pb) for name in p.levels}
    if len(factors) == 1 and len(pa.levels) <= 1 and len(pb.levels) <= 1:
        (name,) = factors
        k = _factor_index(study, name)
        f = study.factors[k]
        la, lb = pa.levels.get(name, f.default), pb.levels.get(name, f.default)
        where = f"study.factor[{k}].values" if f.path else f"study.factor[{k}].levels"
        return _err(study.path, where, f"levels {la!r} and {lb!r} of factor {f.name!r} give the same runs "
                    f"(variant {variant}): each level must set the scenario differently")
    return _err(study.path, "study", f"the points {pa.label()!r} and {pb.label()!r} give the same runs "
                f"(variant {variant}): some level sets what another factor's level also sets")


# ------------------------------------------------------------------------------ running


def run_study(study: Study, store_dir: str | os.PathLike, *, catalog: str | os.PathLike | None = None,
              n_jobs: int | None = None, scheduler: Any = None, progress: bool = False,
              run_fn: Callable | None = None, planned: Plan | None = None) -> StudyResult:
    """Plan (unless ``planned`` is the study's :func:`plan`), run what the store lacks, and
    judge the claim at every point and seed. Ctrl-C keeps the finished runs in the store and
    raises ``KeyboardInterrupt``."""
    from .claims import ClaimError, ClaimSkipped, RunSet, evaluate, measure
    from .runner import execute, load

    p = planned if planned is not None else plan(study, catalog)
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
    from ..sweeps.store import Store

    if not results:
        return 0.0
    runs = Store(store_dir, create=False).read("runs", list(results))
    return float(runs["wall_s"].sum())


def check_ns2(result: StudyResult, store_dir: str | os.PathLike) -> None:
    """Set ``result.ns2``: ns-2.35 at the study's default point and first seed
    (:mod:`vegaslab.study.ns2_check`; its runs are cached under ``store_dir/ns2``)."""
    from .ns2_check import check

    result.ns2 = check(result.study, result.plan, result.default_runs, Path(store_dir) / "ns2")


# ------------------------------------------------------------------------------ reporting


#: The largest summary file read back (``robustness/<entry>.json``). A summary keeps at most
#: :data:`MAX_POINT_ERRORS` errors per point, so even a study of :data:`MAX_STUDY_RUNS` runs
#: stays far below it; :func:`save_summary` refuses to write a larger one.
MAX_SUMMARY_BYTES = 64 << 20
#: The largest figure embedded in a report; the figures :func:`figure` draws are 20-80 KB.
MAX_FIGURE_BYTES = 8 << 20
#: Errors a summary keeps per point (the report shows three), and the characters of each.
MAX_POINT_ERRORS = 10
MAX_ERROR_CHARS = 500
#: The first bytes of every PNG file (PNG specification, section 5.2, "PNG signature").
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: The verdicts of a study and the statuses of a point (:class:`StudyResult`, :class:`PointResult`).
VERDICTS = ("robust", "holds only under a narrow set-up", "not reproducible with any plausible set-up", "error")
POINT_STATUSES = ("holds", "fails", "mixed", "error")


def figure_name(entry: str, n: int) -> str:
    """The file name of a study's ``n``-th figure (one per factor, in factor order)."""
    return f"{entry}-{n}.png"


def _figure_pattern(entry: str) -> re.Pattern:
    return re.compile(re.escape(entry) + r"-(?:0|[1-9][0-9]{0,5})\.png")


def figure(result: StudyResult, out: str | os.PathLike) -> list[Path]:
    """One PNG per factor, ``out/<entry>-<n>.png``: the share of seeds for which the
    conclusion holds at each level, with its 95% interval, the default level marked; returns
    the files written. ``out`` is made when absent; each file is written under the rule for
    files vegaslab writes (:func:`vegaslab.safe_io.write_file`)."""
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
        try:
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
            png = io.BytesIO()
            fig.savefig(png, format="png", dpi=100)
        finally:
            plt.close(fig)
        files.append(safe_io.write_file(out, figure_name(result.study.entry, n), png.getvalue()))
    return files


def _kept_errors(errors: Sequence[str]) -> list[str]:
    """A point's errors as a summary keeps them: the first :data:`MAX_POINT_ERRORS`, each cut
    to :data:`MAX_ERROR_CHARS`, and a last line counting the rest (the runs' own errors stay in
    the store)."""
    kept = [e if len(e) <= MAX_ERROR_CHARS else e[:MAX_ERROR_CHARS] + "..." for e in errors[:MAX_POINT_ERRORS]]
    if len(errors) > MAX_POINT_ERRORS:
        kept.append(f"... and {len(errors) - MAX_POINT_ERRORS} more")
    return kept


def summary(result: StudyResult, figures: Sequence[str | os.PathLike] = ()) -> dict:
    """Everything a report shows of one study, as plain data (``robustness/<entry>.json``;
    :func:`vegaslab.report.robustness_text.markdown` and the HTML report both render from it). ``figures`` are the files
    :func:`figure` wrote; the summary keeps their names (``<entry>-<n>.png``), which a reader
    looks up in the summary's own directory. It matches :data:`SUMMARY_SCHEMA`."""
    st = result.study
    points = []
    for pr in result.points:
        lo, hi = pr.interval
        points.append({"label": pr.point.label(), "levels": dict(pr.point.levels), "holds": pr.holds,
                       "seeds": pr.seeds, "interval": [lo, hi], "status": pr.status,
                       "values": list(pr.values), "errors": _kept_errors(pr.errors)})
    means = [p.value_range[0] for p in result.points if p.value_range]
    names = [Path(f).name for f in figures]
    for name in names:
        if not _figure_pattern(st.entry).fullmatch(name):
            raise ValueError(f"{name}: not a figure of study {st.entry} ({figure_name(st.entry, 0)}, ..., as figure() "
                             "writes them)")
    return {
        "entry": st.entry, "claim": st.claim, "conclusion": st.conclusion,
        "default_reason": st.default_reason, "figure_expr": st.figure, "figure_label": st.figure_label,
        "factors": [{"name": f.name, "levels": list(f.levels), "default": f.default, "reason": f.reason}
                    for f in st.factors],
        "verdict": result.verdict, "sentence": result.sentence(), "points": points,
        "study_range": [min(means), max(means)] if means else None,
        "runs": result.runs, "computed": result.computed, "wall_s": result.wall_s, "compute_s": result.compute_s,
        "ns2": result.ns2.to_dict() if result.ns2 is not None else None,
        "figures": names,
    }


_NUMBER = {"type": "number"}
_TEXT = {"type": "string"}
_COUNT = {"type": "integer", "minimum": 0}
_TWO_NUMBERS = {"type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 2}
_NS2_CHECK = {
    "type": "object", "additionalProperties": False, "required": ["status", "seed"],
    "properties": {
        "status": {"enum": list(NS2_STATUSES)}, "seed": {"type": "integer"}, "detail": _TEXT,
        "ns2_figure": {"type": ["number", "null"]}, "our_figure": {"type": ["number", "null"]},
        "ns2_claim": {"type": ["string", "null"]}, "our_claim": {"type": ["string", "null"]},
        "variants": {"type": "object", "additionalProperties": _TEXT},
        "flow_diff": {"type": ["number", "null"]}, "flow_diff_at": _TEXT, "flows_compared": _COUNT,
    },
}
_POINT = {
    "type": "object", "additionalProperties": False,
    "required": ["label", "levels", "holds", "seeds", "interval", "status", "values", "errors"],
    "properties": {
        "label": _TEXT, "levels": {"type": "object", "additionalProperties": _TEXT},
        "holds": _COUNT, "seeds": _COUNT, "interval": _TWO_NUMBERS, "status": {"enum": list(POINT_STATUSES)},
        "values": {"type": "array", "items": _NUMBER}, "errors": {"type": "array", "items": _TEXT},
    },
}
_FACTOR = {
    "type": "object", "additionalProperties": False, "required": ["name", "levels", "default", "reason"],
    "properties": {"name": _TEXT, "levels": {"type": "array", "items": _TEXT}, "default": _TEXT, "reason": _TEXT},
}
#: The JSON Schema of a study summary (:func:`summary`, ``robustness/<entry>.json``), the one
#: vegaslab 0.4.0 wrote too. A file read back from a report's directory is used only when it
#: matches (:func:`load_summaries`). ``figures`` are checked one by one there: a figure that
#: cannot be embedded is refused alone, and the study is still shown.
SUMMARY_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "vegaslab robustness study summary",
    "type": "object", "additionalProperties": False,
    "required": ["entry", "claim", "conclusion", "default_reason", "figure_expr", "figure_label", "factors",
                 "verdict", "sentence", "points", "study_range", "runs", "computed", "wall_s", "compute_s", "ns2",
                 "figures"],
    "properties": {
        "entry": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
        "claim": _TEXT, "conclusion": _TEXT, "default_reason": _TEXT, "figure_expr": _TEXT, "figure_label": _TEXT,
        "factors": {"type": "array", "items": _FACTOR},
        "verdict": {"enum": list(VERDICTS)},
        "sentence": _TEXT,
        "points": {"type": "array", "items": _POINT},
        "study_range": {"anyOf": [{"type": "null"}, _TWO_NUMBERS]},
        "runs": _COUNT, "computed": _COUNT,
        "wall_s": {"type": "number", "minimum": 0}, "compute_s": {"type": "number", "minimum": 0},
        "ns2": {"anyOf": [{"type": "null"}, _NS2_CHECK]},
        "figures": {"type": "array", "items": _TEXT},
    },
}


def save_summary(summary_: Mapping[str, Any], directory: str | os.PathLike) -> Path:
    """Write ``directory/<entry>.json`` (made when absent) under the rule for files vegaslab
    writes (atomically, never through a link: :func:`vegaslab.safe_io.write_file`) and return
    its path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{summary_['entry']}.json"
    data = json.dumps(summary_, indent=1, allow_nan=False).encode("utf-8")
    if len(data) > MAX_SUMMARY_BYTES:
        raise VegaslabError(f"{directory / name}: the summary has {len(data):,} bytes, more than the "
                            f"{MAX_SUMMARY_BYTES:,} a report reads back; not written")
    return safe_io.write_file(directory, name, data)


def read_figure(directory_fd: int, name: str, entry: str) -> bytes:
    """The bytes of the figure ``name`` of study ``entry``, from the directory open as
    ``directory_fd`` (:func:`vegaslab.safe_io.open_dir`). ``name`` is a figure entry of the
    summary: ``<entry>-<n>.png``, or ``robustness/<entry>-<n>.png`` as vegaslab 0.4.0 wrote it
    (relative to the report's directory). Anything else (a ``/``, ``..``, an absolute path,
    another study's figure) is refused, as are a link, a FIFO, a file larger than
    :data:`MAX_FIGURE_BYTES` and one without the PNG signature: :class:`ForeignFileError`
    naming the figure as the summary gives it."""
    plain = name.removeprefix("robustness/")
    if not _figure_pattern(entry).fullmatch(plain):
        raise safe_io.ForeignFileError(name, f"not a figure of this study: a summary names its figures "
                                             f"{figure_name(entry, 0)}, ..., inside its own directory")
    try:
        data = safe_io.read_bytes(plain, max_bytes=MAX_FIGURE_BYTES, dir_fd=directory_fd)
    except FileNotFoundError:
        raise safe_io.ForeignFileError(name, "no such file") from None
    except safe_io.ForeignFileError as exc:
        raise safe_io.ForeignFileError(name, exc.reason) from None
    if not data.startswith(PNG_SIGNATURE):
        raise safe_io.ForeignFileError(name, "not a PNG image (no PNG signature); only PNG figures are embedded")
    return data


def _set_aside(name: str, reason: str) -> dict:
    """What :func:`load_summaries` gives for a file it does not use: its name and why."""
    return {"file": name, "set_aside": reason}


def _load_summary(directory_fd: int, name: str) -> dict:
    """One summary file of the directory open as ``directory_fd``: read under the rule for
    files read back, checked against :data:`SUMMARY_SCHEMA`, its entry its file's name, and
    each figure checked (:func:`read_figure`); or a set-aside record saying why not."""
    try:
        s = safe_io.read_json(name, max_bytes=MAX_SUMMARY_BYTES, schema=SUMMARY_SCHEMA, dir_fd=directory_fd)
    except FileNotFoundError:
        return _set_aside(name, "removed while it was read")
    except safe_io.ForeignFileError as exc:
        return _set_aside(name, exc.reason)
    except safe_io.UnsafePathError:
        return _set_aside(name, "not a plain file name")
    stem = name.removesuffix(".json")
    if s["entry"] != stem or not ENTRY_ID.fullmatch(stem):
        return _set_aside(name, f"its entry {_shown(s['entry'])} is not its file's name (a study saves <entry>.json, "
                                "the entry a catalog id)")
    figures, refused = [], []
    for f in s["figures"]:
        try:
            read_figure(directory_fd, f, s["entry"])
        except safe_io.ForeignFileError as exc:
            refused.append({"name": f, "reason": exc.reason})
            continue
        plain = f.removeprefix("robustness/")
        if plain not in figures:
            figures.append(plain)
    s["figures"] = figures
    if refused:
        s["refused_figures"] = refused
    return s


def load_summaries(directory: str | os.PathLike) -> list[dict]:
    """Every study summary saved in ``directory`` (``robustness/`` beside a report), by file
    name; [] when there is none. The directory is not vegaslab's own (it may have been copied
    or shared), so it is read under the rule for files read back (:mod:`vegaslab.safe_io`):
    nothing is followed out of it (a link in its place, or in place of a file, is refused),
    every ``*.json`` is checked against :data:`SUMMARY_SCHEMA`, and each figure a summary names
    must be a PNG of that study in the same directory (:func:`read_figure`; the names are
    given as ``<entry>-<n>.png``). A file that fails is *set aside*: ``{"file", "set_aside"}``
    in its place, saying why, so the report names it instead of a result; a refused figure is
    listed in its summary's ``refused_figures``. :func:`problems` words both as warnings."""
    directory = Path(directory)
    try:
        fd = safe_io.open_dir(directory)
    except FileNotFoundError:
        return []
    except safe_io.ForeignFileError as exc:
        return [_set_aside("", exc.reason)]
    try:
        names = sorted(n for n in os.listdir(fd) if n.endswith(".json") and not n.startswith("."))
        return [_load_summary(fd, n) for n in names]
    finally:
        os.close(fd)


def problems(summaries: Sequence[Mapping[str, Any]], directory: str | os.PathLike) -> list[str]:
    """One line per file :func:`load_summaries` set aside and per figure it refused, naming
    the file (``directory`` is where the summaries were read from)."""
    directory = Path(directory)
    out = []
    for s in summaries:
        if "set_aside" in s and not s["file"]:
            out.append(f"{directory}: {s['set_aside']}; no study is shown in the report")
        elif "set_aside" in s:
            name = s["file"] if s["file"].isprintable() else repr(s["file"])
            out.append(f"{directory / name}: set aside, not shown in the report: {s['set_aside']}")
        for f in s.get("refused_figures", []):
            out.append(f"{directory / (s['entry'] + '.json')}: figure {f['name']!r} not embedded: {f['reason']}")
    return out


#: The summaries' text forms (their table cells and ``robustness.md``), which the report layer
#: owns now (:mod:`vegaslab.report.robustness_text`): readable here for one release, with a warning.
__getattr__ = moved_names(__name__, dict.fromkeys(
    ("fmt", "default_cell", "study_cell", "ns2_cell", "default_status", "markdown", "set_aside_name"),
    "vegaslab.report.robustness_text"))
