"""Checkable claims: a small, safe expression language over a catalog entry's runs.

A claim (``[[meta.claim]]`` in a catalog file, docs/catalog-format.md) has ``text`` (the paper's
words), ``expr`` (an expression in this language) and optionally ``source`` (table or figure).
The expression is parsed with :mod:`ast` and evaluated by walking the tree: only the constructs
below are accepted, nothing is ever passed to :func:`eval`, and nothing in a claim can reach a
Python attribute, a global or a dunder name (see "Safety" below).

References
    ``VARIANT:ENTITY.METRIC`` is the mean over seeds of one number of a variant's runs, as
    :meth:`Results.value` reads it: ``vegas-a:f1.throughput_bps``, ``newreno-q10:R1->R2.mean_len_pkts``,
    ``vegas:meta.duration_s``. An entry without ``[[variant]]`` has one run named after the entry
    id. ``{name}`` inside a reference is filled in from a comprehension variable
    (``v1-on{m}:R1->R2.utilisation_ratio``); ``*`` and ``?`` in the variant part are wildcards and
    make the reference a list, one mean per matching variant in catalog order
    (``vegas-q*:f1.retransmitted_pkts``). A reference that needs other characters, or starts with
    a wildcard, goes in backticks: `` `*-q10:f1.completion_time_s` ``. Put spaces around
    ``-`` and ``*`` next to a reference (``a - vegas:f1.x``): ``a-vegas:f1.x`` reads as the
    variant ``a-vegas``.

Operators
    numbers, strings, ``[lists]``, ``+ - * / // % **``, comparisons (chains too), ``and``,
    ``or``, ``not``, ``x if c else y``, and generator expressions
    ``f(expr for m in [200, 150, 100] if cond)`` (also over ``range(...)`` or a list reference).
    ``true``, ``false`` and ``inf`` are names; ``inf`` may only be compared with (``x < inf``),
    never computed with.

Functions
    ``mean min max sum std len abs all any round`` over a list, a generator or their arguments
    (``std`` is the population standard deviation); ``approx(a, b, rel=0.1)`` (|a - b| <= rel
    |b|); ``within(x, lo, hi)``; ``seeds(ref)`` the per-seed values of a reference;
    ``between(ref, t0, t1)`` the mean of a time series (``series_flows`` columns for a flow:
    ``throughput_bps``, ``cwnd_pkts``, ``rtt_s``...; ``length_pkts`` for a queue) over
    ``t0 < time_s <= t1``,
    averaged over seeds; ``series_max(ref[, t0, t1])`` and ``series_min(...)`` likewise;
    ``run("variant")`` a variant's runs, for functions of :mod:`vegaslab.study.metrics`.
    Any other name is looked up in ``vegaslab.study.metrics.__all__`` when that module can be imported
    (``jain_index([...])``, ``line_utilisation(run("vegas"), "R1->R2")``): a ``run(...)``
    argument calls the function once per seed with that seed's :class:`Results` and the results
    are averaged. A name that is not available gives the verdict ``skipped``.

Safety
    ``str.format`` field lookups reach any object (in an audit,
    ``'{m.__init__.__globals__[...]}'`` read an environment variable into ``index.html``), so
    strings and references are filled in by :func:`interpolate`, which accepts exactly ``{name}``
    where ``name`` is a comprehension variable holding a string or a number: no attribute
    (``{m.x}``), index (``{m[0]}``), conversion or format spec (``{m:>99999}``), and a stray brace
    is an error. The parser rejects attribute access, indexing, ``**kwargs``, lambdas, and every
    name that starts with ``_``; functions come from the fixed table below or
    ``vegaslab.study.metrics.__all__``. A claim's ``text`` is never interpolated.

Budgets
    Every evaluation runs under fixed limits, so that a claim cannot exhaust memory or time
    (``len(range(10**9))`` used to raise MemoryError out of :func:`evaluate` and kill
    ``reproduce`` after all its runs had finished). The numbers are at least ten times what the
    catalog needs (measured over its 177 claims on the runs of a full reproduce: at most 895
    characters, depth 11, 712 steps, 200 data reads, a 2,843-character detail, 4.4 s) and low
    enough that a hostile claim ends within about a second of its own work (200,000 steps take
    0.3-1.3 s), or about 6 s when it makes 2,000 distinct time-series reads:

    ==========================  ===========  =================================================
    :data:`MAX_EXPR_CHARS`      10,000       characters in an expression
    :data:`MAX_DEPTH`           100          nesting depth of the syntax tree
    :data:`MAX_STEPS`           200,000      evaluation steps: one per syntax node evaluated and
                                             one per list item built (a ``range``, a list, a
                                             comprehension's items)
    :data:`MAX_ITEMS`           100,000      items in one list (``range``, literal, comprehension)
    :data:`MAX_READS`           2,000        data reads: one per seed whose value, time series
                                             or metric is read (repeating a read is free)
    :data:`MAX_EXPONENT`        1,000        ``abs(b)`` in ``a ** b``
    :data:`MAX_STRING`          1,000        characters in a string built by ``{name}``
    :data:`MAX_ROUND_DIGITS`    15           ``abs(n)`` in ``round(x, n)``
    :data:`MAX_RANGE_BOUND`     1e15         ``abs`` of a ``range`` argument
    :data:`MAX_TEXT`            20,000       characters of a verdict's detail (cut with "…")
    :data:`MAX_SHOWN_ITEMS`     100          list items a verdict shows (the rest is counted)
    :data:`MAX_SECONDS`         30           wall time of one claim (a safety net for slow
                                             metric functions; checked between steps)
    ==========================  ===========  =================================================

    Exceeding one gives an ``error`` verdict whose detail starts ``budget exceeded:``.
    Numbers are floats; an arithmetic result that overflows is an error.

Missing data
    A claim must not hold, or fail, on data that is not there (``max([0, nan])`` is 0, ``x / 0``
    is inf, ``all([])`` is true, NaN compares unequal to everything). The verdict is ``error``
    with a detail starting ``missing data:`` that names the reference, variant and seed when:

    - a referenced value is null, NaN or infinite (``missing data: vegas:f1.completion_time_s
      is nan in seed 2``), or a metric function returns one;
    - a variant has any failed seed: it is not judged on the surviving seeds (the detail gives
      the failed seeds and their errors, from :attr:`RunSet.failed`);
    - a time series has no finite sample in the window (NaN samples, e.g. ``rtt`` while no
      connection is open, are skipped; an infinite sample is missing data);
    - ``mean min max sum std all any`` get an empty list, or a division (``/ // %``) has a
      zero divisor.

    ``len`` of an empty list is 0 (a count is honest), and the literal ``inf`` may be compared
    with but not computed with.

:func:`evaluate` returns a :class:`Verdict`: ``holds`` / ``fails`` (the expression's truth),
``error`` (a reference to a missing variant or metric, missing data, a budget exceeded, a type
error, or any other failure) or ``skipped``, with the expression re-written with the numbers it
used, e.g. ``940,240 > 3 x 217,320 = 651,960``. :func:`evaluate` and :func:`evaluate_all` never
raise (except KeyboardInterrupt and SystemExit, which are the user's).
"""

from __future__ import annotations

import ast
import fnmatch
import math
import numbers
import operator
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["Claim", "Verdict", "RunSet", "ClaimError", "ClaimMissingData", "ClaimBudgetExceeded",
           "parse", "evaluate", "evaluate_all", "fmt", "interpolate"]

# ---------------------------------------------------------------------- budgets (see the docstring)

#: Characters in an expression (the catalog's longest claim has 895).
MAX_EXPR_CHARS = 10_000
#: Nesting depth of the parsed syntax tree; also keeps the recursive walk far from Python's
#: recursion limit.
MAX_DEPTH = 100
#: Evaluation steps: one per syntax node evaluated and one per list item built.
MAX_STEPS = 200_000
#: Items in one list: a ``range(...)``, a list literal, a comprehension's result.
MAX_ITEMS = 100_000
#: Data reads: one per seed whose value, time series or metric is read (a read is remembered
#: for the rest of the claim, so reading the same thing again costs nothing). A read costs about
#: 1-3 ms (a metric function: up to 0.1 s); the catalog's busiest claim makes 200.
MAX_READS = 2_000
#: ``abs(b)`` in ``a ** b``.
MAX_EXPONENT = 1_000
#: Characters in a string built by ``{name}`` interpolation.
MAX_STRING = 1_000
#: ``abs(n)`` in ``round(x, n)``.
MAX_ROUND_DIGITS = 15
#: ``abs`` of a ``range(...)`` argument.
MAX_RANGE_BOUND = 10**15
#: Characters of any text a verdict shows (longer texts are cut with "…").
MAX_TEXT = 20_000
#: Items a list shows in a verdict (the rest is counted, not shown).
MAX_SHOWN_ITEMS = 100
#: Wall time of one claim's evaluation, checked between steps: a safety net for slow metric
#: functions (the catalog's slowest claim takes 4.4 s on a loaded 2-core machine).
MAX_SECONDS = 30.0


class ClaimError(Exception):
    """The expression is malformed, refers to something that does not exist, or cannot be
    evaluated."""


class ClaimMissingData(ClaimError):
    """The data a claim needs is missing, NaN, infinite or empty, or a variant has failed
    seeds. The message starts with ``missing data:``."""


class ClaimBudgetExceeded(ClaimError):
    """The evaluation went over one of the budgets. The message starts with ``budget exceeded:``."""


class ClaimSkipped(Exception):
    """The expression needs something that is not available here (e.g. vegaslab.study.metrics)."""


def _missing(msg: str) -> ClaimMissingData:
    return ClaimMissingData(f"missing data: {msg}")


def _over(msg: str) -> ClaimBudgetExceeded:
    return ClaimBudgetExceeded(f"budget exceeded: {msg}")


@dataclass(frozen=True)
class Claim:
    text: str
    expr: str
    source: str = ""


@dataclass
class Verdict:
    """The outcome of one claim: status is ``holds``, ``fails``, ``error`` or ``skipped``."""

    claim: Claim
    status: str
    detail: str
    value: Any = None

    @property
    def text(self) -> str:
        return self.claim.text

    @property
    def expr(self) -> str:
        return self.claim.expr

    def line(self) -> str:
        return f"{self.detail}: {self.status}" if self.status in ("holds", "fails") else f"{self.status}: {self.detail}"


# ---------------------------------------------------------------------- data


@dataclass
class RunSet:
    """The runs of one entry: variant name -> the Results of its seeds (successful ones), in
    catalog order, and variant name -> error message for variants with failed seeds (any
    failed seed: a claim that refers to the variant is then ``error: missing data``, never
    judged on the survivors)."""

    runs: Mapping[str, Sequence[Any]]
    failed: Mapping[str, str] = field(default_factory=dict)
    order: Sequence[str] = ()

    def names(self) -> list[str]:
        names = list(self.order) or list(self.runs)
        return names + [n for n in list(self.runs) + list(self.failed) if n not in names]

    def results(self, variant: str) -> Sequence[Any]:
        """The Results of every seed of ``variant``. Raises :class:`ClaimMissingData` when any
        seed failed and :class:`ClaimError` when there is no such variant."""
        got = self.runs.get(variant) or ()
        if variant in self.failed:
            if got:
                raise _missing(f"variant {variant!r} has failed runs ({self.failed[variant]}); it is not "
                               f"judged on its {len(got)} surviving seed{'s' if len(got) != 1 else ''}")
            raise _missing(f"variant {variant!r} has no results: its runs failed ({self.failed[variant]})")
        if got:
            return got
        if variant in self.runs:
            raise _missing(f"variant {variant!r} has no runs")
        raise ClaimError(f"no variant {variant!r} (known: {', '.join(self.names())})")

    def match(self, pattern: str) -> list[str]:
        found = [n for n in self.names() if fnmatch.fnmatchcase(n, pattern)]
        if not found:
            raise ClaimError(f"no variant matches {pattern!r} (known: {', '.join(self.names())})")
        return found


def _seed_of(res: Any) -> str:
    """`` in seed N`` for a Results whose meta names its seed, else ``""``."""
    try:
        seed = res.meta.get("seed")
    except Exception:  # noqa: BLE001 - a Results without meta simply has no seed to name
        return ""
    return "" if seed is None else f" in seed {seed}"


# ---------------------------------------------------------------------- interpolation

_FIELD = re.compile(r"\{([^{}]*)\}")
_VARIABLE = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def _check_template(text: str, what: str) -> None:
    """Every ``{...}`` in ``text`` must be ``{name}``; no other brace may appear."""
    for m in _FIELD.finditer(text):
        if not _VARIABLE.match(m.group(1)):
            raise ClaimError(f"{what}: {{{m.group(1)}}}: only {{name}} of a comprehension variable can be "
                             "filled in (no attributes, indexes, conversions or format specs)")
    rest = _FIELD.sub("", text)
    if "{" in rest or "}" in rest:
        raise ClaimError(f"{what}: a brace that is not part of {{name}}")


def interpolate(template: str, env: Mapping[str, Any], what: str = "template") -> str:
    """Fill each ``{name}`` in ``template`` with ``str(env[name])``: the strict replacement of
    ``str.format``, which would follow ``{x.attr}`` and ``{x[key]}`` into any object. ``name``
    must be a key of ``env`` holding a string or a finite number (a float with an integral value
    shows as an integer, ``200.0`` -> ``200``); the result is at most :data:`MAX_STRING`
    characters. Raises :class:`ClaimError` otherwise."""
    _check_template(template, what)

    def one(m: re.Match) -> str:
        name = m.group(1)
        if name not in env:
            raise ClaimError(f"{what}: {{{name}}} is not a comprehension variable here")
        v = env[name]
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise ClaimError(f"{what}: {{{name}}} is {fmt(v)}; only a string or a number can be filled in")
        if isinstance(v, float):
            if not math.isfinite(v):
                raise ClaimError(f"{what}: {{{name}}} is {fmt(v)}")
            if v.is_integer() and abs(v) < 1e16:
                v = int(v)
        s = str(v)
        if len(s) > MAX_STRING:
            raise _over(f"{what}: {{{name}}} is longer than {MAX_STRING:,} characters")
        return s

    out = _FIELD.sub(one, template)
    if len(out) > MAX_STRING:
        raise _over(f"{what}: the filled-in text is longer than {MAX_STRING:,} characters")
    return out


@dataclass(frozen=True)
class _Ref:
    template: str  # "variant:entity.metric", possibly with {var} and wildcards

    def resolve(self, env: Mapping[str, Any]) -> tuple[str, str]:
        text = self.template
        if "{" in text or "}" in text:
            text = interpolate(text, env, f"reference {self.template!r}")
        variant, sep, key = text.partition(":")
        entity, dot, metric = key.rpartition(".")
        if not sep or not variant or not dot or not entity or not metric:
            raise ClaimError(f"reference {text!r}: expected VARIANT:ENTITY.METRIC")
        if metric.startswith("_"):
            raise ClaimError(f"reference {text!r}: a metric name cannot start with '_'")
        return variant, key


@dataclass(frozen=True)
class _RunRef:
    variant: str


# ---------------------------------------------------------------------- parsing

_REF_START = re.compile(r"[A-Za-z_{]")
_BARE_REF = re.compile(r"[A-Za-z_{][\w{}.+*?-]*:[\w{}*?][\w{}>*?-]*\.[A-Za-z_]\w*")
_WORD = re.compile(r"[\w{}]+")
_PLACEHOLDER = "__ref_"
_PLACEHOLDER_NAME = re.compile(r"__ref_(\d+)\Z")

_ALLOWED = (
    ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.IfExp, ast.Call,
    ast.Constant, ast.Name, ast.Load, ast.Store, ast.List, ast.Tuple, ast.GeneratorExp, ast.ListComp,
    ast.comprehension, ast.keyword,
    ast.And, ast.Or, ast.Not, ast.USub, ast.UAdd,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
)


@dataclass(frozen=True)
class Parsed:
    tree: ast.Expression
    refs: tuple[_Ref, ...]


def _replace_refs(expr: str) -> tuple[str, list[str]]:
    out: list[str] = []
    refs: list[str] = []
    i, n = 0, len(expr)
    while i < n:
        c = expr[i]
        if c in "\"'":
            j = i + 1
            while j < n and expr[j] != c:
                j += 2 if expr[j] == "\\" else 1
            out.append(expr[i:j + 1])
            i = j + 1
            continue
        if c == "`":
            j = expr.find("`", i + 1)
            if j < 0:
                raise ClaimError("unterminated `reference`")
            refs.append(expr[i + 1:j].strip())
            out.append(f"{_PLACEHOLDER}{len(refs) - 1}")
            i = j + 1
            continue
        prev = expr[i - 1] if i else " "
        if _REF_START.match(c) and not (prev.isalnum() or prev in "_}.{"):
            m = _BARE_REF.match(expr, i)
            if m:
                refs.append(m.group(0))
                out.append(f"{_PLACEHOLDER}{len(refs) - 1}")
                i = m.end()
                continue
            # not a reference: copy the whole word so that its tail is not taken for one
            m = _WORD.match(expr, i)
            if m.group(0).startswith("_"):
                raise ClaimError(f"name {m.group(0)!r} is not allowed (names starting with '_' are reserved)")
            out.append(m.group(0))
            i = m.end()
            continue
        out.append(c)
        i += 1
    return "".join(out), refs


def _check_node(node: ast.AST, n_refs: int) -> None:
    if isinstance(node, ast.Attribute):
        raise ClaimError(f"attribute access (.{node.attr}) is not allowed in a claim expression")
    if isinstance(node, ast.Subscript):
        raise ClaimError("indexing ([...]) is not allowed in a claim expression")
    if not isinstance(node, _ALLOWED):
        raise ClaimError(f"{type(node).__name__} is not allowed in a claim expression")
    if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name):
        raise ClaimError("only named functions can be called")
    if isinstance(node, ast.keyword) and node.arg is None:
        raise ClaimError("**arguments are not allowed in a claim expression")
    if isinstance(node, ast.Name) and node.id.startswith("_"):
        m = _PLACEHOLDER_NAME.match(node.id)
        if not m or int(m.group(1)) >= n_refs or not isinstance(node.ctx, ast.Load):
            raise ClaimError(f"name {node.id!r} is not allowed (names starting with '_' are reserved)")
    if isinstance(node, ast.Constant):
        v = node.value
        if not isinstance(v, (bool, int, float, str)):
            raise ClaimError(f"the constant {v!r} is not allowed (numbers and strings only)")
        if isinstance(v, float) and not math.isfinite(v):
            raise ClaimError(f"the number {v!r} is not finite (too large for a float)")
        if isinstance(v, str):
            _check_template(v, f"string {v[:60]!r}")
    if isinstance(node, ast.comprehension):
        if node.is_async:
            raise ClaimError("async comprehensions are not allowed")
        if not isinstance(node.target, ast.Name):
            raise ClaimError("a comprehension variable must be a single name")


def parse(expr: str) -> Parsed:
    """Parse a claim expression; raises :class:`ClaimError` when it is malformed, too long or
    too deep, or uses a construct outside the language."""
    if not isinstance(expr, str) or not expr.strip():
        raise ClaimError("empty expression")
    if len(expr) > MAX_EXPR_CHARS:
        raise _over(f"the expression has {len(expr):,} characters, at most {MAX_EXPR_CHARS:,} are allowed")
    text, refs = _replace_refs(expr.strip())
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ClaimError(f"syntax error: {exc.msg} in {expr[:200]!r}") from None
    except (RecursionError, MemoryError, ValueError) as exc:  # too deep for the parser, NUL bytes
        raise ClaimError(f"cannot parse the expression ({type(exc).__name__}: {exc})") from None
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]  # iterative: a deep tree must not recurse here
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _over(f"the expression is nested more than {MAX_DEPTH} levels deep")
        _check_node(node, len(refs))
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    for r in refs:
        _check_template(r, f"reference {r!r}")
    return Parsed(tree, tuple(_Ref(r) for r in refs))


# ---------------------------------------------------------------------- formatting


def fmt(v: Any) -> str:
    """A number as the report shows it: thousands separators from 1,000 on, else 4 significant
    digits; lists in brackets (at most :data:`MAX_SHOWN_ITEMS` items in all, then a count);
    booleans as true/false."""
    return _fmt(v, [MAX_SHOWN_ITEMS])


def _fmt(v: Any, left: list[int]) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        parts = []
        for i, x in enumerate(v):
            if left[0] <= 0:
                parts.append(f"… {len(v) - i:,} more")
                break
            left[0] -= 1
            parts.append(_fmt(x, left))
        return "[" + ", ".join(parts) + "]"
    if isinstance(v, str):
        return repr(v) if len(v) <= MAX_STRING else repr(v[:MAX_STRING]) + "…"
    if isinstance(v, _RunRef):
        return f"run({v.variant!r})"
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return str(v)[:MAX_STRING] if isinstance(v, (int, float)) else type(v).__name__
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if abs(f) >= 1000:
        return f"{f:,.0f}"
    if f == int(f):
        return str(int(f))
    return f"{f:.4g}"


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 1] + "…"


def _join(parts: Iterable[str], sep: str) -> str:
    """``sep.join(parts)``, stopping once the text is longer than :data:`MAX_TEXT`."""
    out: list[str] = []
    size = 0
    for p in parts:
        if size > MAX_TEXT:
            out.append("…")
            break
        out.append(p)
        size += len(p) + len(sep)
    return _cut(sep.join(out))


_BINOPS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("x", operator.mul),
    ast.Div: ("/", operator.truediv), ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod), ast.Pow: ("^", operator.pow),
}
_CMPOPS: dict[type, tuple[str, Callable[[Any, Any], bool]]] = {
    ast.Eq: ("==", operator.eq), ast.NotEq: ("!=", operator.ne), ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le), ast.Gt: (">", operator.gt), ast.GtE: (">=", operator.ge),
}


@dataclass
class _V:
    """A value and how it reads with the numbers filled in; ``leaf`` when the text is the value;
    ``src`` the references it was computed from (to name them when data is missing)."""

    value: Any
    text: str
    leaf: bool = True
    op: bool = False  # an arithmetic operation (parenthesised inside another)
    src: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.text = _cut(self.text)

    def shown(self) -> str:
        if self.leaf or isinstance(self.value, bool):  # a statement reads as itself
            return self.text
        return _cut(f"{self.text} = {fmt(self.value)}")


def _sources(*vs: _V) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s for v in vs for s in v.src))


def _from(v: _V) -> str:
    return f" (from {', '.join(v.src)})" if v.src else ""


# ---------------------------------------------------------------------- evaluation


def _float(v: Any, what: str) -> float:
    """``v`` as a float, NaN and infinities included; a bool, a string or a list is a
    :class:`ClaimError`."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        try:
            import numpy as np

            if isinstance(v, np.generic) and not isinstance(v, np.bool_):
                return _float(v.item(), what)
        except ImportError:  # pragma: no cover
            pass
        raise ClaimError(f"{what}: expected a number, got {fmt(v)}")
    try:
        return float(v)
    except OverflowError:
        raise ClaimError(f"{what}: the number {str(v)[:40]}… is too large") from None


def _num(v: Any, what: str, finite: bool = True) -> float:
    """``v`` as a float (:func:`_float`); NaN is a :class:`ClaimError`, and so is an infinity
    unless ``finite`` is false (comparisons with the literal ``inf``)."""
    f = _float(v, what)
    if math.isnan(f) or (finite and math.isinf(f)):
        raise ClaimError(f"{what}: {fmt(f)} is not a finite number")
    return f


def _numbers(values: Any, what: str) -> list[float]:
    return [_num(v, what) for v in values]


def _mean(xs: Sequence[float]) -> float:
    if not xs:
        raise _missing("mean() of an empty list")
    return math.fsum(xs) / len(xs)


def _std(xs: Sequence[float]) -> float:
    if not xs:
        raise _missing("std() of an empty list")
    m = _mean(xs)
    return math.sqrt(math.fsum((x - m) ** 2 for x in xs) / len(xs))


def _nonempty(name: str, fn: Callable[[list[float]], float]) -> Callable[[list[float]], float]:
    def call(xs: list[float]) -> float:
        if not xs:
            raise _missing(f"{name}() of an empty list")
        return fn(xs)

    return call


def _aggregate(name: str, fn: Callable[[list[float]], Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        items = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
        return fn(_numbers(items, name))

    return call


def _approx(a: Any, b: Any, rel: Any = 0.1) -> bool:
    a, b, rel = _num(a, "approx"), _num(b, "approx"), _num(rel, "approx rel")
    return abs(a - b) <= rel * abs(b)


def _within(x: Any, lo: Any, hi: Any) -> bool:
    return _num(lo, "within") <= _num(x, "within") <= _num(hi, "within")


def _integer(v: Any, what: str, bound: float) -> int:
    f = _num(v, what)
    if not f.is_integer():
        raise ClaimError(f"{what}: expected an integer, got {fmt(v)}")
    if abs(f) > bound:
        raise _over(f"{what}: {fmt(v)} is outside +-{bound:,.0f}")
    return int(f)


def _range(*args: Any) -> list[int]:
    if not 1 <= len(args) <= 3:
        raise ClaimError("range() takes 1 to 3 integers")
    ints = [_integer(a, "range", MAX_RANGE_BOUND) for a in args]
    if len(ints) == 3 and ints[2] == 0:
        raise ClaimError("range(): the step must not be zero")
    r = range(*ints)  # lazy: its length is known before any list is built
    if len(r) > MAX_ITEMS:
        raise _over(f"range() of {len(r):,} items, at most {MAX_ITEMS:,} are allowed")
    return list(r)


def _round(x: Any, nd: Any = 0) -> float:
    return round(_num(x, "round"), _integer(nd, "round digits", MAX_ROUND_DIGITS))


def _len(xs: Any) -> int:
    if not isinstance(xs, (list, tuple, str)):
        raise ClaimError(f"len() needs a list, got {fmt(xs)}")
    return len(xs)


_SIMPLE: dict[str, Callable[..., Any]] = {
    "mean": _aggregate("mean", _mean),
    "min": _aggregate("min", _nonempty("min", min)),
    "max": _aggregate("max", _nonempty("max", max)),
    "sum": _aggregate("sum", _nonempty("sum", math.fsum)),
    "std": _aggregate("std", _std),
    "abs": lambda x: abs(_num(x, "abs")),
    "round": _round,
    "len": _len,
    "approx": _approx,
    "within": _within,
    "range": _range,
}
_SERIES_FUNCS = ("between", "series_max", "series_min", "seeds")


def _metrics_function(name: str) -> Callable[..., Any]:
    """A public function of :mod:`vegaslab.study.metrics`: only names in its ``__all__`` (never a
    module, class or helper it happens to import)."""
    try:
        from . import metrics  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - any import failure means "not available"
        raise ClaimSkipped(f"{name}(): vegaslab.study.metrics is not available ({exc})") from None
    public = getattr(metrics, "__all__", ())
    fn = getattr(metrics, name, None) if name in public and not name.startswith("_") else None
    if not callable(fn) or isinstance(fn, type):
        raise ClaimSkipped(f"{name}(): no such function (not built in, not in vegaslab.study.metrics)")
    return fn


class _Evaluator:
    def __init__(self, parsed: Parsed, runs: RunSet) -> None:
        self.parsed = parsed
        self.runs = runs
        self.steps = 0
        self.reads = 0
        self.memo: dict[tuple, Any] = {}  # reads already made: (kind, what...) -> value
        self.deadline = time.monotonic() + MAX_SECONDS

    # -- budgets

    def charge(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > MAX_STEPS:
            raise _over(f"more than {MAX_STEPS:,} evaluation steps (nodes evaluated and list items built)")
        if time.monotonic() > self.deadline:
            raise _over(f"the evaluation took longer than {MAX_SECONDS:g} s")

    def read(self) -> None:
        self.reads += 1
        if self.reads > MAX_READS:
            raise _over(f"more than {MAX_READS:,} data reads (one per seed of each value, series or metric)")
        self.charge()

    def items(self, n: int, what: str) -> None:
        if n > MAX_ITEMS:
            raise _over(f"{what} of more than {MAX_ITEMS:,} items")
        self.charge(n)

    # -- references

    def _ref_of(self, node: ast.AST) -> _Ref | None:
        if isinstance(node, ast.Name) and node.id.startswith(_PLACEHOLDER):
            return self.parsed.refs[int(node.id[len(_PLACEHOLDER):])]
        return None

    def _variants(self, variant: str) -> tuple[list[str], bool]:
        if any(ch in variant for ch in "*?["):
            return self.runs.match(variant), True
        return [variant], False

    def _per_seed(self, variant: str, key: str) -> list[float]:
        memo = ("value", variant, key)
        if memo not in self.memo:
            self.memo[memo] = self._read_per_seed(variant, key)
        return list(self.memo[memo])

    def _read_per_seed(self, variant: str, key: str) -> list[float]:
        label = f"{variant}:{key}"
        vals = []
        for res in self.runs.results(variant):
            self.read()
            try:
                v = res.value(key)
            except KeyError as exc:
                raise ClaimError(f"{label}: {exc.args[0] if exc.args else exc}") from None
            except Exception as exc:  # noqa: BLE001 - a damaged result is this claim's error
                raise ClaimError(f"{label}: {type(exc).__name__}: {exc}") from None
            if v is None:
                raise _missing(f"{label} is null{_seed_of(res)}")
            f = _float(v, label)
            if not math.isfinite(f):
                raise _missing(f"{label} is {fmt(f)}{_seed_of(res)}")
            vals.append(f)
        return vals

    def ref_value(self, ref: _Ref, env: Mapping[str, Any]) -> tuple[Any, str]:
        variant, key = ref.resolve(env)
        names, many = self._variants(variant)
        values = [_mean(self._per_seed(n, key)) for n in names]
        return (values if many else values[0]), f"{variant}:{key}"

    def _series(self, ref: _Ref, env: Mapping[str, Any], t0: float | None, t1: float | None,
                how: str) -> Any:
        variant, key = ref.resolve(env)
        names, many = self._variants(variant)
        out = []
        for n in names:
            memo = ("series", n, key, t0, t1, how)
            if memo not in self.memo:
                self.memo[memo] = self._read_series(n, key, t0, t1, how)
            out.append(self.memo[memo])
        return out if many else out[0]

    def _read_series(self, n: str, key: str, t0: float | None, t1: float | None, how: str) -> float:
        entity, _, metric = key.rpartition(".")
        from ..results import renamed_column_message

        if renamed := renamed_column_message(metric):
            raise ClaimError(f"{n}:{key}: {renamed}")
        per_seed = []
        for res in self.runs.results(n):
            self.read()
            s = None
            for table, col in (("series_flows", "flow"), ("series_queues", "queue")):
                df = getattr(res, table)
                if metric in df.columns and (df[col] == entity).any():
                    s = df[df[col] == entity]
                    break
            if s is None:
                raise ClaimError(f"{n}:{key}: no time series {metric!r} for {entity!r} "
                                 "(is the monitor on?)")
            if t0 is not None:
                s = s[s["time_s"] > t0]
            if t1 is not None:
                s = s[s["time_s"] <= t1]
            col = s[metric].dropna()  # a null sample is "no value at that time" (docs/results-format.md)
            window = f"between {fmt(t0)} and {fmt(t1)} s" if t0 is not None else "in the run"
            if col.empty:
                raise _missing(f"{n}:{key}: the series has no samples {window}{_seed_of(res)}")
            v = _float(getattr(col, how)(), f"{n}:{key}")
            if not math.isfinite(v):
                raise _missing(f"{n}:{key}: the series {window} has a {fmt(v)} sample{_seed_of(res)}")
            per_seed.append(v)
        return _mean(per_seed)

    # -- nodes

    def eval(self, node: ast.AST, env: dict[str, Any]) -> _V:
        self.charge()
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise ClaimError(f"{type(node).__name__} is not allowed in a claim expression")
        return method(node, env)

    def _Expression(self, node: ast.Expression, env: dict) -> _V:
        return self.eval(node.body, env)

    def _Constant(self, node: ast.Constant, env: dict) -> _V:
        v = node.value
        if isinstance(v, str) and ("{" in v or "}" in v):
            v = interpolate(v, env, f"string {v[:60]!r}")
        return _V(v, fmt(v))

    def _Name(self, node: ast.Name, env: dict) -> _V:
        ref = self._ref_of(node)
        if ref is not None:
            v, label = self.ref_value(ref, env)
            return _V(v, fmt(v), src=(label,))
        if node.id in env:
            return _V(env[node.id], fmt(env[node.id]))
        if node.id in ("true", "True"):
            return _V(True, "true")
        if node.id in ("false", "False"):
            return _V(False, "false")
        if node.id in ("inf",):
            return _V(math.inf, "inf")
        raise ClaimError(f"unknown name {node.id!r} (a reference is VARIANT:ENTITY.METRIC)")

    def _List(self, node: ast.List, env: dict) -> _V:
        self.items(len(node.elts), "a list")
        items = [self.eval(e, env) for e in node.elts]
        return _V([i.value for i in items], "[" + _join((i.text for i in items), ", ") + "]",
                  src=_sources(*items))

    _Tuple = _List

    def _UnaryOp(self, node: ast.UnaryOp, env: dict) -> _V:
        x = self.eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return _V(not bool(x.value), f"not ({x.shown()})", leaf=False)
        v = _num(x.value, "unary operator", finite=False)  # -inf is a bound to compare with
        v = -v if isinstance(node.op, ast.USub) else v
        return _V(v, f"-{x.text}" if isinstance(node.op, ast.USub) else x.text, leaf=x.leaf, src=x.src)

    def _BinOp(self, node: ast.BinOp, env: dict) -> _V:
        left, right = self.eval(node.left, env), self.eval(node.right, env)
        sym, fn = _BINOPS[type(node.op)]

        def part(x: _V) -> str:  # a function call inside arithmetic shows its value
            return x.text if x.leaf else (f"({x.text})" if x.op else fmt(x.value))

        text = f"{part(left)} {sym} {part(right)}"
        a, b = _num(left.value, f"left of {sym} in {text}"), _num(right.value, f"right of {sym} in {text}")
        if isinstance(node.op, ast.Pow) and abs(b) > MAX_EXPONENT:
            raise _over(f"the exponent in {text} is larger than {MAX_EXPONENT:,}")
        try:
            v = fn(a, b)
        except ZeroDivisionError:
            raise _missing(f"division by zero in {text}{_from(right)}") from None
        except OverflowError:
            raise ClaimError(f"overflow: {text} is too large for a float") from None
        if not isinstance(v, float):  # a negative number to a fractional power is complex
            raise ClaimError(f"{text} is not a real number")
        if not math.isfinite(v):
            raise ClaimError(f"overflow: {text} = {fmt(v)} is too large for a float")
        return _V(v, text, leaf=False, op=True, src=_sources(left, right))

    def _Compare(self, node: ast.Compare, env: dict) -> _V:
        left = self.eval(node.left, env)
        parts = [left.shown()]
        ok = True
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp, env)
            sym, fn = _CMPOPS[type(op)]
            a, b = left.value, right.value
            if not (isinstance(a, str) and isinstance(b, str)):
                a, b = _num(a, f"left of {sym}", finite=False), _num(b, f"right of {sym}", finite=False)
            ok = ok and bool(fn(a, b))
            parts += [sym, right.shown()]
            left = right
        return _V(ok, _join(parts, " "), leaf=False)

    def _BoolOp(self, node: ast.BoolOp, env: dict) -> _V:
        items = [self.eval(v, env) for v in node.values]
        word = "and" if isinstance(node.op, ast.And) else "or"
        vals = [bool(i.value) for i in items]
        v = all(vals) if word == "and" else any(vals)
        text = _join((f"({i.shown()}: {fmt(bool(i.value))})" for i in items), f" {word} ")
        return _V(v, text, leaf=False)

    def _IfExp(self, node: ast.IfExp, env: dict) -> _V:
        test = self.eval(node.test, env)
        return self.eval(node.body if test.value else node.orelse, env)

    def _iterate(self, node: ast.GeneratorExp | ast.ListComp, env: dict) -> list[_V]:
        out: list[_V] = []

        def walk(i: int, scope: dict) -> None:
            if i == len(node.generators):
                if len(out) >= MAX_ITEMS:
                    raise _over(f"a comprehension of more than {MAX_ITEMS:,} items")
                out.append(self.eval(node.elt, scope))
                return
            gen = node.generators[i]
            if not isinstance(gen.target, ast.Name):
                raise ClaimError("a comprehension variable must be a single name")
            seq = self.eval(gen.iter, scope).value
            if not isinstance(seq, (list, tuple)):
                raise ClaimError(f"cannot iterate over {fmt(seq)}")
            for item in seq:
                self.charge()
                inner = {**scope, gen.target.id: item}
                if all(self.eval(cond, inner).value for cond in gen.ifs):
                    walk(i + 1, inner)

        walk(0, dict(env))
        return out

    def _GeneratorExp(self, node: ast.GeneratorExp, env: dict) -> _V:
        items = self._iterate(node, env)
        return _V([i.value for i in items], "[" + _join((i.shown() for i in items), ", ") + "]",
                  leaf=False, src=_sources(*items))

    _ListComp = _GeneratorExp

    def _Call(self, node: ast.Call, env: dict) -> _V:
        name = node.func.id  # type: ignore[attr-defined]
        if name in ("all", "any"):
            return self._all_any(name, node, env)
        if name == "run":
            if len(node.args) != 1 or node.keywords:
                raise ClaimError('run() takes one variant name: run("vegas")')
            variant = self.eval(node.args[0], env).value
            if not isinstance(variant, str):
                raise ClaimError("run(): the variant name must be a string")
            self.runs.results(variant)  # raises when unknown or when a seed failed
            return _V(_RunRef(variant), f"run({variant!r})", src=(f"run({variant!r})",))
        if name in _SERIES_FUNCS:
            return self._series_call(name, node, env)
        args = [self.eval(a, env) for a in node.args]
        kwargs = {k.arg: self.eval(k.value, env) for k in node.keywords if k.arg}
        if len(args) == 1 and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp)):
            inner = args[0].text
        else:
            inner = _join([a.text for a in args] + [f"{k}={v.text}" for k, v in kwargs.items()], ", ")
        text = f"{name}({inner})"
        src = _sources(*args, *kwargs.values())
        try:
            if name in _SIMPLE:
                try:
                    v = _SIMPLE[name](*[a.value for a in args], **{k: v.value for k, v in kwargs.items()})
                except TypeError as exc:
                    raise ClaimError(f"{name}(): {exc}") from None
                except OverflowError:
                    raise ClaimError(f"overflow: {name}() is too large for a float") from None
            else:
                v = self._metrics_call(name, [a.value for a in args], {k: x.value for k, x in kwargs.items()})
        except ClaimBudgetExceeded:
            raise
        except ClaimError as exc:  # say where, and from which references
            raise type(exc)(_cut(f"{exc} (in {text}{_from(_V(None, '', src=src))})")) from None
        if isinstance(v, list):
            self.items(len(v), f"{name}()")
        elif isinstance(v, float) and not math.isfinite(v):
            raise ClaimError(f"overflow: {text} = {fmt(v)}")
        return _V(v, text, leaf=False, src=src)

    def _metrics_call(self, name: str, args: list, kwargs: dict) -> Any:
        fn = _metrics_function(name)
        memo = ("metric", name, repr(args), repr(sorted(kwargs.items())))  # the functions are pure
        if memo not in self.memo:
            self.memo[memo] = self._read_metric(fn, name, args, kwargs)
        return self.memo[memo]

    def _read_metric(self, fn: Callable[..., Any], name: str, args: list, kwargs: dict) -> float:
        run_refs = [a for a in [*args, *kwargs.values()] if isinstance(a, _RunRef)]
        if not run_refs:
            self.read()
            v = _call_metric(fn, name, args, kwargs)
            f = _float(v, f"{name}()")
            if not math.isfinite(f):
                raise _missing(f"{name}() is {fmt(f)}")
            return f
        # one call per seed, with that seed's Results in place of each run(...)
        seeds_of = {a.variant: self.runs.results(a.variant) for a in run_refs}
        counts = {len(s) for s in seeds_of.values()}
        if len(counts) != 1:
            raise ClaimError(f"{name}(): the runs have different numbers of seeds "
                             f"({', '.join(f'{k}: {len(s)}' for k, s in seeds_of.items())})")
        values = []
        for k in range(counts.pop()):
            self.read()
            a2 = [seeds_of[a.variant][k] if isinstance(a, _RunRef) else a for a in args]
            k2 = {key: seeds_of[a.variant][k] if isinstance(a, _RunRef) else a for key, a in kwargs.items()}
            f = _float(_call_metric(fn, name, a2, k2), f"{name}()")
            if not math.isfinite(f):
                first = seeds_of[run_refs[0].variant][k]
                raise _missing(f"{name}() is {fmt(f)} for {', '.join(repr(v) for v in seeds_of)}{_seed_of(first)}")
            values.append(f)
        return _mean(values)

    def _all_any(self, name: str, node: ast.Call, env: dict) -> _V:
        if len(node.args) != 1 or node.keywords:
            raise ClaimError(f"{name}() takes one generator or list")
        arg = node.args[0]
        if isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
            items = self._iterate(arg, env)
        else:
            x = self.eval(arg, env)
            if not isinstance(x.value, (list, tuple)):
                raise ClaimError(f"{name}() needs a list, got {fmt(x.value)}")
            items = [_V(e, fmt(e)) for e in x.value]
        if not items:
            written = re.sub(r"__ref_(\d+)", lambda m: self.parsed.refs[int(m.group(1))].template, ast.unparse(arg))
            raise _missing(f"{name}() over an empty list: nothing to check (in {name}({written[:500]}))")
        vals = [bool(i.value) for i in items]
        v = all(vals) if name == "all" else any(vals)
        marks = _join((f"{i.shown()} ({'yes' if b else 'NO'})" for i, b in zip(items, vals)), "; ")
        return _V(v, f"{name} of {len(items)}: {marks}", leaf=False)

    def _series_call(self, name: str, node: ast.Call, env: dict) -> _V:
        if not node.args or node.keywords:
            raise ClaimError(f"{name}() takes a reference first, e.g. {name}(vegas:f1.throughput_bps, 20, 200)")
        ref = self._ref_of(node.args[0])
        if ref is None:
            raise ClaimError(f"{name}(): the first argument must be a reference VARIANT:ENTITY.METRIC")
        rest = [_num(self.eval(a, env).value, name) for a in node.args[1:]]
        label = ref.resolve(env)
        label_txt = f"{label[0]}:{label[1]}"
        if name == "seeds":
            if rest:
                raise ClaimError("seeds() takes one reference")
            variant, key = label
            names, many = self._variants(variant)
            vals = [self._per_seed(n, key) for n in names]
            v = vals if many else vals[0]
            return _V(v, f"seeds({label_txt}) = {fmt(v)}", leaf=True, src=(label_txt,))
        if name == "between" and len(rest) != 2:
            raise ClaimError("between(ref, t0, t1) takes a reference and two times in seconds")
        if len(rest) not in (0, 2):
            raise ClaimError(f"{name}(ref[, t0, t1])")
        t0, t1 = (rest + [None, None])[:2]
        how = {"between": "mean", "series_max": "max", "series_min": "min"}[name]
        v = self._series(ref, env, t0, t1, how)
        span = f", {fmt(t0)}, {fmt(t1)}" if rest else ""
        return _V(v, f"{name}({label_txt}{span})", leaf=False, src=(label_txt,))


def _call_metric(fn: Callable[..., Any], name: str, args: list, kwargs: dict) -> Any:
    try:
        return fn(*args, **kwargs)
    except (ClaimError, ClaimSkipped):
        raise
    except Exception as exc:  # noqa: BLE001 - a metric's own failure is the claim's error
        raise ClaimError(f"{name}(): {type(exc).__name__}: {exc}") from None


def _as_claim(claim: Any) -> Claim:
    if isinstance(claim, Claim):
        return claim
    return Claim(text=str(claim.get("text", "")), expr=str(claim.get("expr", "")),
                 source=str(claim.get("source", "")))


def _verdict(claim: Claim, runs: RunSet) -> Verdict:
    try:
        parsed = parse(claim.expr)
        v = _Evaluator(parsed, runs).eval(parsed.tree, {})
        if not isinstance(v.value, bool):
            return Verdict(claim, "error", _cut(f"the expression is not a comparison: {v.shown()}"), v.value)
        return Verdict(claim, "holds" if v.value else "fails", v.text, v.value)
    except ClaimSkipped as exc:
        return Verdict(claim, "skipped", _cut(str(exc)))
    except ClaimError as exc:
        return Verdict(claim, "error", _cut(str(exc)))
    except RecursionError:
        return Verdict(claim, "error", "the expression is nested too deeply to evaluate (RecursionError)")
    except MemoryError:
        return Verdict(claim, "error", "out of memory while evaluating the claim (MemoryError)")
    except Exception as exc:  # noqa: BLE001 - any failure is this claim's error, never a crash
        return Verdict(claim, "error", _cut(f"{type(exc).__name__}: {exc}"))


def evaluate(claim: Claim | Mapping[str, Any], runs: RunSet) -> Verdict:
    """Evaluate one claim over an entry's runs, under the budgets of the module docstring.
    Never raises: every problem (missing data, a budget exceeded, MemoryError, RecursionError,
    a type error, anything) becomes an ``error`` (or ``skipped``) verdict with the message as
    detail."""
    try:
        claim = _as_claim(claim)
    except Exception as exc:  # noqa: BLE001 - not a claim at all
        return Verdict(Claim("", ""), "error", f"not a claim: {type(exc).__name__}")
    try:
        return _verdict(claim, runs)
    except Exception as exc:  # noqa: BLE001 - e.g. an exception whose str() itself fails
        return Verdict(claim, "error", f"{type(exc).__name__} while evaluating the claim")


def measure(expr: str, runs: RunSet) -> float:
    """The value of a numeric expression of the claim language over ``runs`` (e.g. the
    quantity a claim compares: a robustness study's *figure*), under the same budgets as a
    claim. Raises :class:`ClaimError` (missing data included) or :class:`ClaimSkipped` when
    it cannot be computed, and :class:`ClaimError` when the result is not a finite number:
    a figure is never a guess."""
    try:
        parsed = parse(expr)
        v = _Evaluator(parsed, runs).eval(parsed.tree, {})
    except (ClaimError, ClaimSkipped):
        raise
    except RecursionError:
        raise ClaimError("the expression is nested too deeply to evaluate (RecursionError)") from None
    except Exception as exc:  # noqa: BLE001 - any failure is this expression's error
        raise ClaimError(_cut(f"{type(exc).__name__}: {exc}")) from None
    value = v.value
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ClaimError(_cut(f"the expression is not a finite number: {v.shown()}"))
    return float(value)


def evaluate_all(claims: Iterable[Claim | Mapping[str, Any]], runs: RunSet) -> list[Verdict]:
    """:func:`evaluate` for each claim; never raises."""
    return [evaluate(c, runs) for c in claims]
