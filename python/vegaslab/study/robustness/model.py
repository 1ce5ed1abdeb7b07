"""What a robustness study is and how it is judged: its factors and points, a point's share of
seeds with the 95% Wilson interval, the point statuses and the study's verdict (the package
docstring gives the rules), and the error a study file that cannot be used raises."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ...errors import ScenarioError

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
#: The verdicts of a study and the statuses of a point (:class:`StudyResult`, :class:`PointResult`).
VERDICTS = ("robust", "holds only under a narrow set-up", "not reproducible with any plausible set-up", "error")
POINT_STATUSES = ("holds", "fails", "mixed", "error")


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


def study_error(path: Path, where: str, message: str) -> StudyError:
    """The :class:`StudyError` for ``message`` about the field ``where`` of the study file ``path``."""
    return StudyError(f"{path}: {where}: {message}")


def cut_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
