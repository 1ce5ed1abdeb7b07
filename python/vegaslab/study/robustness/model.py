"""What a robustness study is and how it is judged: its factors (each level the paper's stated
value, a departure from it, or an assumption where the paper is silent) and points, a point's
share of seeds judged by an exact binomial test (corrected for the study's number of points),
runs that every seed repeats exactly (one run, with its margin), the point statuses and the
study's verdict (the package docstring gives the rules), and the error a study file that cannot
be used raises."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any, Mapping, Sequence

from ...errors import ScenarioError

#: Largest number of runs one study may plan (levels x pairs x variants x seeds).
MAX_STUDY_RUNS = 100_000
#: Fewest seeds a study may have. A study also needs enough seeds that n of n can decide at
#: the corrected level (:func:`min_seeds`): 10 for up to 25 points, 11 for up to 51, 12 for up
#: to 102.
MIN_SEEDS = 10
#: The chance, for the whole study, that any point's status is wrong (a point called holds or
#: fails where the claim holds for exactly half the seeds): the family-wise error rate that the
#: Bonferroni correction of each point's exact test (:func:`point_alpha`) keeps.
FAMILY_ALPHA = 0.05
#: z for the 95% Wilson interval.
_Z95 = 1.959963984540054
#: A study's entry (a catalog entry id) and its own name (``[study] id``), by the core's rule for
#: names (scenario/limits.rs), the rule variant names follow. The study's outputs are named
#: after its name (``<id>.json``, ``<id>-<n>.png``), so they are plain names by construction; a
#: path is never an entry.
ENTRY_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: The verdicts of a study and the statuses of a point (:class:`StudyResult`, :class:`PointResult`).
VERDICTS = ("robust", "holds only under a narrow set-up", "not reproducible with any plausible set-up", "undecided",
            "error")
POINT_STATUSES = ("holds", "fails", "mixed", "error")


class StudyError(ScenarioError):
    """A study file that cannot be used; the message names the file and the field. Raised
    before anything runs (the command line exits 2: bad input)."""


#: Where a level comes from (:meth:`Factor.provenance`).
PROVENANCES = ("stated", "departure", "assumption")


@dataclass(frozen=True)
class Stated:
    """The level of a factor that the paper states, and where: ``where`` (its section, table or
    figure) and ``quote`` (the paper's words)."""

    level: str
    where: str
    quote: str


@dataclass(frozen=True)
class Factor:
    """One choice of the set-up: its levels (label -> overrides, in file order), its default and,
    when the paper states a value, :class:`Stated`."""

    name: str
    levels: Mapping[str, tuple[str, ...]]
    default: str
    reason: str = ""
    #: The override path of a factor given as ``path`` with ``values`` ("" for ``levels``).
    path: str = ""
    stated: Stated | None = None
    #: An algorithm reading (:mod:`.readings`): the ``cc`` whose every flow takes the levels'
    #: overrides, which are then relative to a flow (``params.equal_throughput=hold``); "" for
    #: a factor of the set-up.
    reading: str = ""

    def provenance(self, label: str) -> str:
        """``stated`` (the paper's value), ``departure`` (another level where the paper states
        one) or ``assumption`` (every level of a factor the paper leaves open)."""
        if self.stated is None:
            return "assumption"
        return "stated" if label == self.stated.level else "departure"


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
    #: The figure's value at which the conclusion turns (optional): a point's margin is its
    #: figure's distance from it, relative to it.
    figure_threshold: float | None = None
    #: The study's own name (``[study] id``; the entry's id when the file gives none): its
    #: outputs are named after it (``robustness/<id>.json``), so that several studies, each of
    #: one claim, may share an entry.
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.entry)

    def factor(self, name: str) -> Factor:
        return next(f for f in self.factors if f.name == name)

    def departures(self, point: "Point") -> tuple[tuple[str, str, str], ...]:
        """(factor name, level, the level the paper states) of each factor whose level at
        ``point`` departs from the value the paper states."""
        return tuple((f.name, label, f.stated.level) for f in self.factors if f.stated is not None
                     for label in [point.levels.get(f.name, f.default)] if label != f.stated.level)


@dataclass(frozen=True)
class Point:
    """A combination of levels: factor name -> level label (factors not named are at their
    defaults), and the overrides it applies to every run."""

    levels: Mapping[str, str]
    overrides: tuple[str, ...]
    #: The reading factors' levels: (cc, override relative to a flow), applied to every flow of
    #: that cc in each run (:func:`.readings.applied`).
    flow_overrides: tuple[tuple[str, str], ...] = ()

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
    #: How many different runs the judged seeds gave (the seeds' runs compared by content):
    #: 1 when every seed repeats the same run, a set-up without randomness.
    distinct: int = 0
    #: The point's two-sided test level: the study's, corrected for its number of points
    #: (:func:`point_alpha`).
    alpha: float = FAMILY_ALPHA
    #: The departures from the paper's stated set-up at this point (factor name, level, stated level).
    departures: tuple[tuple[str, str, str], ...] = ()
    #: The study's figure threshold, for :attr:`margin`.
    threshold: float | None = None

    @property
    def value_range(self) -> tuple[float, float, float] | None:
        """(mean, lowest, highest) of :attr:`values`, or None without values."""
        if not self.values:
            return None
        return sum(self.values) / len(self.values), min(self.values), max(self.values)

    @property
    def interval(self) -> tuple[float, float]:
        """The exact (Clopper-Pearson) interval of the share of seeds that hold, at the point's
        level; of a single run (:attr:`single_run`), that of one trial: one run is no share."""
        if self.single_run:
            return exact_interval(int(self.holds > 0), 1, self.alpha)
        return exact_interval(self.holds, self.seeds, self.alpha)

    @property
    def single_run(self) -> bool:
        """Every judged seed gave the same run: the point's evidence is one run, not a share."""
        return self.distinct == 1

    @property
    def margin(self) -> float | None:
        """The figure's mean distance from the study's threshold, relative to the threshold
        (positive above it); None without a figure or threshold."""
        r = self.value_range
        if r is None or self.threshold is None or self.threshold == 0:
            return None
        return (r[0] - self.threshold) / abs(self.threshold)

    @property
    def status(self) -> str:
        """``holds``, ``fails``, ``mixed`` or ``error`` (see the package docstring). A single run
        holds or fails as that run does (:attr:`single_run`; the verdict says it rests on one)."""
        if self.errors or self.seeds == 0:
            return "error"
        if self.single_run:
            return "holds" if self.holds == self.seeds else "fails" if self.holds == 0 else "mixed"
        return decide(self.holds, self.seeds, self.alpha)


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
    #: Run with the entries' shortened quick set-up (``robustness --quick``): a check that the
    #: study runs, not its verdict.
    quick: bool = False
    #: What each non-default level of a reading factor changes in every entry that runs its
    #: algorithm (:class:`.readings.ReadingCost`), when computed.
    readings: list[Any] = field(default_factory=list)

    def at(self, levels: Mapping[str, str]) -> PointResult:
        want = dict(levels)
        return next(p for p in self.points if dict(p.point.levels) == want)

    @property
    def default(self) -> PointResult:
        return self.at({})

    @property
    def stated_points(self) -> list[PointResult]:
        """The points with the paper's stated set-up: no factor at a level departing from a
        value the paper states (levels of open factors vary)."""
        return [p for p in self.points if not p.departures]

    @property
    def departure_points(self) -> list[PointResult]:
        return [p for p in self.points if p.departures]

    @property
    def verdict(self) -> str:
        """:func:`judge` of the stated points' statuses; ``error`` when any point is one."""
        if any(p.status == "error" for p in self.points):
            return "error"
        return judge([p.status for p in self.stated_points])

    def sentence(self) -> str:
        """The verdict in words: where, under the paper's stated set-up, the conclusion holds,
        fails and is undecided (single-factor and paired points alike), what rests on a single
        run and by what margin, what holds or fails only after departing from the paper, and
        what the default gives and why."""
        stated = self.stated_points
        by_status: dict[str, list[str]] = {status: [] for status in POINT_STATUSES}
        for p in stated:
            by_status[p.status].append(p.point.label())
        words = (("holds", "holds"), ("fails", "fails"), ("mixed", "is undecided"), ("error", "is an error"))
        counts = ", ".join(f"{word} at {len(by_status[s])}" + (f" ({'; '.join(by_status[s])})" if by_status[s] else "")
                           for s, word in words if by_status[s] or s != "error")
        points = "the point" if len(stated) == 1 else f"the {len(stated)} points"
        text = [f"“{self.study.conclusion}”: {self.verdict} at {points} with the paper's stated set-up (it {counts})."]
        if self.quick:
            text.insert(0, "Quick mode (every run shortened by the entry's quick set-up): not the study's verdict.")
        single = [p for p in stated if p.single_run]
        if single:
            margins = [abs(p.margin) for p in single if p.margin is not None]
            margin = f"; the smallest margin from the figure's threshold is {min(margins):.1%}" if margins else ""
            text.append(f"At {len(single)} of them ({'; '.join(p.point.label() for p in single)}) every seed gave the "
                        f"same run, so the point rests on that one run{margin}.")
        # The departures' findings, grouped by what departs: "where queue = 20 instead of the
        # stated 50, it holds at all defaults; window = 200".
        groups: dict[str, dict[str, list[str]]] = {}
        for p in self.departure_points:
            if p.status in ("holds", "fails"):
                groups.setdefault(departure_text(p.departures), {}).setdefault(p.status, []).append(p.point.label())
        for k, (where, by) in enumerate(groups.items()):
            found = ", and ".join(f"{status} at {'; '.join(labels)}" for status, labels in by.items())
            text.append(f"{'Departing from the paper: w' if k == 0 else 'W'}here {where}, it {found}.")
        d = self.default
        one = ", one run" if d.single_run else ""
        margin = f", margin {d.margin:+.1%}" if d.margin is not None else ""
        defaults = ", ".join(f"{f.name} = {f.default}" for f in self.study.factors)
        text.append(f"Our default ({defaults}) gives {d.status} ({d.holds} of {d.seeds} seeds{one}{margin}), because "
                    f"{self.study.default_reason}")
        text += [cost.text() for cost in self.readings]
        return " ".join(text)


def departure_text(departures: Sequence[tuple[str, str, str]]) -> str:
    """"queue = 20 instead of the stated 50, ..."."""
    return ", ".join(f"{name} = {level} instead of the stated {stated}" for name, level, stated in departures)


def judge(statuses: Sequence[str]) -> str:
    """A study's verdict from the statuses of its points with the paper's stated set-up:
    *robust* when every one holds; *holds only under a narrow set-up* when some hold and some
    fail; *not reproducible with any plausible set-up* when every one fails; *undecided*
    otherwise (points whose share of seeds decides neither way, with no point holding or none
    failing; or no point with the stated set-up)."""
    h, f, m = (sum(s == x for s in statuses) for x in ("holds", "fails", "mixed"))
    if h and f:
        return "holds only under a narrow set-up"
    if h and not (f or m):
        return "robust"
    if f and not (h or m):
        return "not reproducible with any plausible set-up"
    return "undecided"


def point_alpha(points: int) -> float:
    """The two-sided level of each point's test in a study of ``points`` points:
    ``FAMILY_ALPHA / points`` (Bonferroni), so that the chance that any point of the study is
    called holds or fails wrongly stays below :data:`FAMILY_ALPHA`."""
    return FAMILY_ALPHA / max(1, points)


def half_tail(k: int, n: int) -> float:
    """P(X >= k) for X ~ Binomial(n, 1/2), exactly (as a float of an exact fraction)."""
    if k <= 0:
        return 1.0
    return sum(math.comb(n, j) for j in range(k, n + 1)) / 2 ** n


def decide(holds: int, seeds: int, alpha: float) -> str:
    """A point's status by the exact binomial test of "the claim holds for half the seeds":
    ``holds`` when P(X >= holds) <= alpha/2, ``fails`` when P(X <= holds) <= alpha/2 (X the
    number of seeds that hold if each were a coin flip), ``mixed`` otherwise. Equivalent to the
    exact (Clopper-Pearson) interval at level ``alpha`` lying above or below one half."""
    if seeds == 0:
        return "mixed"
    if half_tail(holds, seeds) <= alpha / 2:
        return "holds"
    if half_tail(seeds - holds, seeds) <= alpha / 2:
        return "fails"
    return "mixed"


def min_seeds(points: int) -> int:
    """The fewest seeds (at least :data:`MIN_SEEDS`) with which n of n seeds holds at the
    corrected level of a study of ``points`` points."""
    n = MIN_SEEDS
    while decide(n, n, point_alpha(points)) != "holds":
        n += 1
    return n


def status_chances(seeds: int, points: int, p: float) -> tuple[float, float]:
    """(chance a point holds, chance it fails) for a claim that holds at each seed with
    probability ``p`` independently, in a study of ``points`` points with ``seeds`` seeds
    (exact, over the binomial distribution of the seeds that hold)."""
    alpha = point_alpha(points)
    ph = pf = 0.0
    for k in range(seeds + 1):
        chance = math.comb(seeds, k) * p ** k * (1 - p) ** (seeds - k)
        status = decide(k, seeds, alpha)
        ph += chance if status == "holds" else 0.0
        pf += chance if status == "fails" else 0.0
    return ph, pf


def false_verdict_rates(seeds: int, points: int, p: float = 0.5) -> dict[str, float]:
    """The chance of each decided verdict for a claim that is the same coin flip (probability
    ``p`` per seed) at every point, where any decided verdict but the one ``p`` deserves is
    false: ``narrow`` (some point holds and some fails), ``robust`` (all hold) and ``not
    reproducible`` (all fail); and ``any point`` (some point holds or fails, which at p = 1/2 is
    the family-wise error the correction bounds). Exact, for independent points."""
    ph, pf = status_chances(seeds, points, p)
    return {"narrow": 1 - (1 - ph) ** points - (1 - pf) ** points + (1 - ph - pf) ** points,
            "robust": ph ** points, "not reproducible": pf ** points,
            "any point": 1 - (1 - ph - pf) ** points}


def _binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in logs (n up to the 1000 seeds a study may have)."""
    if k < 0:
        return 0.0
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    lp, lq = math.log(p), math.log1p(-p)
    return min(1.0, sum(math.exp(math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lp + (n - j) * lq)
                        for j in range(k + 1)))


def exact_interval(k: int, n: int, alpha: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of k successes in n trials at two-sided level
    ``alpha`` ((0, 1) when n is 0), by bisection on the binomial distribution."""
    if n == 0:
        return 0.0, 1.0

    def solve(f) -> float:  # f decreasing in p, root in [0, 1]
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        return (lo + hi) / 2

    lower = 0.0 if k == 0 else solve(lambda p: alpha / 2 - (1 - _binomial_cdf(k - 1, n, p)))
    upper = 1.0 if k == n else solve(lambda p: _binomial_cdf(k, n, p) - alpha / 2)
    return lower, upper


def wilson(k: int, n: int, z: float = _Z95) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials, 95% unless given ``z`` (kept for
    readers of the rule before the exact test: :func:`decide` judges points; (0, 1)
    when n is 0)."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def study_error(path: Path, where: str, message: str) -> StudyError:
    """The :class:`StudyError` for ``message`` about the field ``where`` of the study file ``path``."""
    return StudyError(f"{path}: {where}: {message}")


def cut_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
