"""Checkable claims: a small, safe expression language over a catalog entry's runs.

A claim (``[[claim]]`` in a catalog file, docs/catalog-format.md) has ``text`` (the paper's words),
``expr`` (an expression in this language) and optionally ``source`` (table or figure). The
expression is parsed with :mod:`ast` and evaluated by walking the tree: only the constructs below
are accepted, nothing is ever passed to :func:`eval`.

References
    ``VARIANT:ENTITY.METRIC`` is the mean over seeds of one number of a variant's runs, as
    :meth:`Results.value` reads it: ``vegas-a:f1.throughput_bps``, ``newreno-q10:R1->R2.mean_len``,
    ``vegas:meta.duration_s``. An entry without ``[[variant]]`` has one run named after the entry
    id. ``{name}`` inside a reference is filled in from a comprehension variable
    (``v1-on{m}:R1->R2.utilisation``); ``*`` and ``?`` in the variant part are wildcards and
    make the reference a list, one mean per matching variant in catalog order
    (``vegas-q*:f1.retransmitted_pkts``). A reference that needs other characters, or starts with
    a wildcard, goes in backticks: `` `*-q10:f1.completion_time_s` ``. Put spaces around
    ``-`` and ``*`` next to a reference (``a - vegas:f1.x``): ``a-vegas:f1.x`` reads as the
    variant ``a-vegas``.

Operators
    numbers, strings, ``[lists]``, ``+ - * / // % **``, comparisons (chains too), ``and``,
    ``or``, ``not``, ``x if c else y``, and generator expressions
    ``f(expr for m in [200, 150, 100] if cond)`` (also over ``range(...)`` or a list reference).

Functions
    ``mean min max sum std len abs all any round`` over a list, a generator or their arguments
    (``std`` is the population standard deviation); ``approx(a, b, rel=0.1)`` (|a - b| <= rel
    |b|); ``within(x, lo, hi)``; ``seeds(ref)`` the per-seed values of a reference;
    ``between(ref, t0, t1)`` the mean of a time series (``series_flows`` columns for a flow:
    ``throughput_bps``, ``cwnd``, ``rtt``...; ``length`` for a queue) over ``t0 < time <= t1``,
    averaged over seeds; ``series_max(ref[, t0, t1])`` and ``series_min(...)`` likewise;
    ``run("variant")`` a variant's runs, for functions of :mod:`vegaslab.metrics`.
    Any other name is looked up in :mod:`vegaslab.metrics` when that module can be imported
    (``jain_index([...])``, ``line_utilisation(run("vegas"), "R1->R2")``): a ``run(...)``
    argument calls the function once per seed with that seed's :class:`Results` and the results
    are averaged. A name that is not available gives the verdict ``skipped``.

:func:`evaluate` returns a :class:`Verdict`: ``holds`` / ``fails`` (the expression's truth),
``error`` (a reference to a missing variant or metric, a run that failed, a type error...) or
``skipped``, with the expression re-written with the numbers it used, e.g.
``940,240 > 3 x 217,320 = 651,960``.
"""

from __future__ import annotations

import ast
import fnmatch
import math
import operator
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["Claim", "Verdict", "RunSet", "ClaimError", "parse", "evaluate", "evaluate_all", "fmt"]


class ClaimError(Exception):
    """The expression is malformed or refers to something that does not exist."""


class ClaimSkipped(Exception):
    """The expression needs something that is not available here (e.g. vegaslab.metrics)."""


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
    catalog order, and variant name -> error message for variants with failed seeds."""

    runs: Mapping[str, Sequence[Any]]
    failed: Mapping[str, str] = field(default_factory=dict)
    order: Sequence[str] = ()

    def names(self) -> list[str]:
        names = list(self.order) or list(self.runs)
        return names + [n for n in list(self.runs) + list(self.failed) if n not in names]

    def results(self, variant: str) -> Sequence[Any]:
        got = self.runs.get(variant)
        if got:
            return got
        if variant in self.failed:
            raise ClaimError(f"variant {variant!r} has no results: {self.failed[variant]}")
        raise ClaimError(f"no variant {variant!r} (known: {', '.join(self.names())})")

    def match(self, pattern: str) -> list[str]:
        found = [n for n in self.names() if fnmatch.fnmatchcase(n, pattern)]
        if not found:
            raise ClaimError(f"no variant matches {pattern!r} (known: {', '.join(self.names())})")
        return found


@dataclass(frozen=True)
class _Ref:
    template: str  # "variant:entity.metric", possibly with {var} and wildcards

    def resolve(self, env: Mapping[str, Any]) -> tuple[str, str]:
        text = self.template
        if "{" in text:
            try:
                text = text.format(**{k: _plain(v) for k, v in env.items()})
            except (KeyError, IndexError, ValueError) as exc:
                raise ClaimError(f"reference {self.template!r}: cannot fill in {exc}") from None
        variant, sep, key = text.partition(":")
        if not sep or not variant or "." not in key:
            raise ClaimError(f"reference {text!r}: expected VARIANT:ENTITY.METRIC")
        return variant, key


@dataclass(frozen=True)
class _RunRef:
    variant: str


def _plain(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


# ---------------------------------------------------------------------- parsing

_REF_START = re.compile(r"[A-Za-z_{]")
_BARE_REF = re.compile(r"[A-Za-z_{][\w{}.+*?-]*:[\w{}*?][\w{}>*?-]*\.[A-Za-z_]\w*")
_PLACEHOLDER = "__ref_"

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
            m = re.compile(r"[\w{}]+").match(expr, i)
            out.append(m.group(0))
            i = m.end()
            continue
        out.append(c)
        i += 1
    return "".join(out), refs


def parse(expr: str) -> Parsed:
    """Parse a claim expression; raises :class:`ClaimError` when it is malformed or uses a
    construct outside the language."""
    if not isinstance(expr, str) or not expr.strip():
        raise ClaimError("empty expression")
    text, refs = _replace_refs(expr.strip())
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ClaimError(f"syntax error: {exc.msg} in {expr!r}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ClaimError(f"{type(node).__name__} is not allowed in a claim expression")
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name):
            raise ClaimError("only named functions can be called")
        if isinstance(node, ast.Name) and node.id.startswith("__") and not node.id.startswith(_PLACEHOLDER):
            raise ClaimError(f"name {node.id!r} is not allowed")
    return Parsed(tree, tuple(_Ref(r) for r in refs))


# ---------------------------------------------------------------------- formatting


def fmt(v: Any) -> str:
    """A number as the report shows it: thousands separators from 1,000 on, else 4 significant
    digits; lists in brackets; booleans as true/false."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, _RunRef):
        return f"run({v.variant!r})"
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if abs(f) >= 1000:
        return f"{f:,.0f}"
    if f == int(f):
        return str(int(f))
    return f"{f:.4g}"


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
    """A value and how it reads with the numbers filled in; ``leaf`` when the text is the value."""

    value: Any
    text: str
    leaf: bool = True
    op: bool = False  # an arithmetic operation (parenthesised inside another)

    def shown(self) -> str:
        if self.leaf or isinstance(self.value, bool):  # a statement reads as itself
            return self.text
        return f"{self.text} = {fmt(self.value)}"


# ---------------------------------------------------------------------- evaluation


def _num(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        try:
            import numpy as np

            if isinstance(v, np.generic):
                return float(v)
        except ImportError:  # pragma: no cover
            pass
        raise ClaimError(f"{what}: expected a number, got {fmt(v)}")
    return float(v)


def _numbers(values: Iterable[Any], what: str) -> list[float]:
    return [_num(v, what) for v in values]


def _mean(xs: Sequence[float]) -> float:
    if not xs:
        raise ClaimError("mean of an empty list")
    return sum(xs) / len(xs)


def _std(xs: Sequence[float]) -> float:
    if not xs:
        raise ClaimError("std of an empty list")
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


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


_SIMPLE: dict[str, Callable[..., Any]] = {
    "mean": _aggregate("mean", _mean),
    "min": _aggregate("min", lambda xs: min(xs) if xs else _raise("min of an empty list")),
    "max": _aggregate("max", lambda xs: max(xs) if xs else _raise("max of an empty list")),
    "sum": _aggregate("sum", sum),
    "std": _aggregate("std", _std),
    "abs": lambda x: abs(_num(x, "abs")),
    "round": lambda x, nd=0: round(_num(x, "round"), int(nd)),
    "len": lambda xs: len(xs),
    "approx": _approx,
    "within": _within,
    "range": lambda *a: list(range(*[int(_num(x, "range")) for x in a])),
}
_SERIES_FUNCS = ("between", "series_max", "series_min", "seeds")


def _raise(msg: str):
    raise ClaimError(msg)


def _metrics_function(name: str) -> Callable[..., Any]:
    try:
        from . import metrics  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - any import failure means "not available"
        raise ClaimSkipped(f"{name}(): vegaslab.metrics is not available ({exc})") from None
    fn = getattr(metrics, name, None)
    if name.startswith("_") or not callable(fn):
        raise ClaimSkipped(f"{name}(): no such function (not built in, not in vegaslab.metrics)")
    return fn


class _Evaluator:
    def __init__(self, parsed: Parsed, runs: RunSet) -> None:
        self.parsed = parsed
        self.runs = runs

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
        vals = []
        for res in self.runs.results(variant):
            try:
                v = res.value(key)
            except KeyError as exc:
                raise ClaimError(f"{variant}:{key}: {exc.args[0] if exc.args else exc}") from None
            vals.append(_num(v, f"{variant}:{key}"))
        return vals

    def ref_value(self, ref: _Ref, env: Mapping[str, Any]) -> Any:
        variant, key = ref.resolve(env)
        names, many = self._variants(variant)
        values = [_mean(self._per_seed(n, key)) for n in names]
        return values if many else values[0]

    def _series(self, ref: _Ref, env: Mapping[str, Any], t0: float | None, t1: float | None,
                how: str) -> Any:
        variant, key = ref.resolve(env)
        entity, _, metric = key.rpartition(".")
        names, many = self._variants(variant)
        out = []
        for n in names:
            per_seed = []
            for res in self.runs.results(n):
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
                    s = s[s["time"] > t0]
                if t1 is not None:
                    s = s[s["time"] <= t1]
                col = s[metric].dropna()
                if col.empty:
                    raise ClaimError(f"{n}:{key}: the series is empty between {fmt(t0)} and {fmt(t1)} s")
                per_seed.append(float(getattr(col, how)()))
            out.append(_mean(per_seed))
        return out if many else out[0]

    # -- nodes

    def eval(self, node: ast.AST, env: dict[str, Any]) -> _V:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise ClaimError(f"{type(node).__name__} is not allowed in a claim expression")
        return method(node, env)

    def _Expression(self, node: ast.Expression, env: dict) -> _V:
        return self.eval(node.body, env)

    def _Constant(self, node: ast.Constant, env: dict) -> _V:
        v = node.value
        if isinstance(v, str) and "{" in v and env:
            v = v.format(**{k: _plain(x) for k, x in env.items()})
        return _V(v, fmt(v))

    def _Name(self, node: ast.Name, env: dict) -> _V:
        ref = self._ref_of(node)
        if ref is not None:
            v = self.ref_value(ref, env)
            return _V(v, fmt(v))
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
        items = [self.eval(e, env) for e in node.elts]
        return _V([i.value for i in items], "[" + ", ".join(i.text for i in items) + "]")

    _Tuple = _List

    def _UnaryOp(self, node: ast.UnaryOp, env: dict) -> _V:
        x = self.eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return _V(not bool(x.value), f"not ({x.shown()})", leaf=False)
        v = _num(x.value, "unary operator")
        v = -v if isinstance(node.op, ast.USub) else v
        return _V(v, f"-{x.text}" if isinstance(node.op, ast.USub) else x.text, leaf=x.leaf)

    def _BinOp(self, node: ast.BinOp, env: dict) -> _V:
        left, right = self.eval(node.left, env), self.eval(node.right, env)
        sym, fn = _BINOPS[type(node.op)]
        a, b = _num(left.value, f"left of {sym}"), _num(right.value, f"right of {sym}")
        try:
            v = fn(a, b)
        except ZeroDivisionError:
            v = math.copysign(math.inf, a) if a else math.nan

        def part(x: _V) -> str:  # a function call inside arithmetic shows its value
            return x.text if x.leaf else (f"({x.text})" if x.op else fmt(x.value))

        return _V(v, f"{part(left)} {sym} {part(right)}", leaf=False, op=True)

    def _Compare(self, node: ast.Compare, env: dict) -> _V:
        left = self.eval(node.left, env)
        parts = [left.shown()]
        ok = True
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp, env)
            sym, fn = _CMPOPS[type(op)]
            a, b = left.value, right.value
            if not (isinstance(a, str) and isinstance(b, str)):
                a, b = _num(a, f"left of {sym}"), _num(b, f"right of {sym}")
            ok = ok and bool(fn(a, b))
            parts += [sym, right.shown()]
            left = right
        return _V(ok, " ".join(parts), leaf=False)

    def _BoolOp(self, node: ast.BoolOp, env: dict) -> _V:
        items = [self.eval(v, env) for v in node.values]
        word = "and" if isinstance(node.op, ast.And) else "or"
        vals = [bool(i.value) for i in items]
        v = all(vals) if word == "and" else any(vals)
        text = f" {word} ".join(f"({i.shown()}: {fmt(bool(i.value))})" for i in items)
        return _V(v, text, leaf=False)

    def _IfExp(self, node: ast.IfExp, env: dict) -> _V:
        test = self.eval(node.test, env)
        return self.eval(node.body if test.value else node.orelse, env)

    def _iterate(self, node: ast.GeneratorExp | ast.ListComp, env: dict) -> list[tuple[_V, dict]]:
        out: list[tuple[_V, dict]] = []

        def walk(i: int, scope: dict) -> None:
            if i == len(node.generators):
                out.append((self.eval(node.elt, scope), scope))
                return
            gen = node.generators[i]
            if not isinstance(gen.target, ast.Name):
                raise ClaimError("a comprehension variable must be a single name")
            seq = self.eval(gen.iter, scope).value
            if not isinstance(seq, (list, tuple)):
                raise ClaimError(f"cannot iterate over {fmt(seq)}")
            for item in seq:
                inner = {**scope, gen.target.id: item}
                if all(self.eval(cond, inner).value for cond in gen.ifs):
                    walk(i + 1, inner)

        walk(0, dict(env))
        return out

    def _GeneratorExp(self, node: ast.GeneratorExp, env: dict) -> _V:
        items = [v for v, _ in self._iterate(node, env)]
        return _V([i.value for i in items], "[" + ", ".join(i.shown() for i in items) + "]", leaf=False)

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
            self.runs.results(variant)  # raises when unknown
            return _V(_RunRef(variant), f"run({variant!r})")
        if name in _SERIES_FUNCS:
            return self._series_call(name, node, env)
        args = [self.eval(a, env) for a in node.args]
        kwargs = {k.arg: self.eval(k.value, env) for k in node.keywords if k.arg}
        if len(args) == 1 and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp)):
            inner = args[0].text
        else:
            inner = ", ".join([a.text for a in args] + [f"{k}={v.text}" for k, v in kwargs.items()])
        if name in _SIMPLE:
            try:
                v = _SIMPLE[name](*[a.value for a in args], **{k: v.value for k, v in kwargs.items()})
            except TypeError as exc:
                raise ClaimError(f"{name}(): {exc}") from None
        else:
            v = self._metrics_call(name, [a.value for a in args], {k: x.value for k, x in kwargs.items()})
        return _V(v, f"{name}({inner})", leaf=False)

    def _metrics_call(self, name: str, args: list, kwargs: dict) -> Any:
        fn = _metrics_function(name)
        run_args = [i for i, a in enumerate(args) if isinstance(a, _RunRef)]
        run_kw = [k for k, a in kwargs.items() if isinstance(a, _RunRef)]
        if not run_args and not run_kw:
            return _call_metric(fn, name, args, kwargs)
        # one call per seed, with that seed's Results in place of each run(...)
        seeds_of = {id(a): self.runs.results(a.variant) for a in [*args, *kwargs.values()]
                    if isinstance(a, _RunRef)}
        n = min(len(s) for s in seeds_of.values())
        values = []
        for k in range(n):
            a2 = [seeds_of[id(a)][k] if isinstance(a, _RunRef) else a for a in args]
            k2 = {key: seeds_of[id(a)][k] if isinstance(a, _RunRef) else a for key, a in kwargs.items()}
            values.append(_num(_call_metric(fn, name, a2, k2), f"{name}()"))
        return _mean(values)

    def _all_any(self, name: str, node: ast.Call, env: dict) -> _V:
        if len(node.args) != 1 or node.keywords:
            raise ClaimError(f"{name}() takes one generator or list")
        arg = node.args[0]
        if isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
            items = [v for v, _ in self._iterate(arg, env)]
        else:
            x = self.eval(arg, env)
            if not isinstance(x.value, (list, tuple)):
                raise ClaimError(f"{name}() needs a list, got {fmt(x.value)}")
            items = [_V(e, fmt(e)) for e in x.value]
        vals = [bool(i.value) for i in items]
        v = all(vals) if name == "all" else any(vals)
        marks = "; ".join(f"{i.shown()} ({'yes' if b else 'NO'})" for i, b in zip(items, vals))
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
            return _V(v, f"seeds({label_txt}) = {fmt(v)}", leaf=True)
        if name == "between" and len(rest) != 2:
            raise ClaimError("between(ref, t0, t1) takes a reference and two times in seconds")
        if len(rest) not in (0, 2):
            raise ClaimError(f"{name}(ref[, t0, t1])")
        t0, t1 = (rest + [None, None])[:2]
        how = {"between": "mean", "series_max": "max", "series_min": "min"}[name]
        v = self._series(ref, env, t0, t1, how)
        span = f", {fmt(t0)}, {fmt(t1)}" if rest else ""
        return _V(v, f"{name}({label_txt}{span})", leaf=False)


def _call_metric(fn: Callable[..., Any], name: str, args: list, kwargs: dict) -> Any:
    try:
        return fn(*args, **kwargs)
    except (ClaimError, ClaimSkipped):
        raise
    except Exception as exc:  # noqa: BLE001 - a metric's own failure is the claim's error
        raise ClaimError(f"{name}(): {type(exc).__name__}: {exc}") from None


def evaluate(claim: Claim | Mapping[str, Any], runs: RunSet) -> Verdict:
    """Evaluate one claim over an entry's runs. Never raises: problems become ``error`` (or
    ``skipped``) verdicts with the message as detail."""
    if not isinstance(claim, Claim):
        claim = Claim(text=str(claim.get("text", "")), expr=str(claim.get("expr", "")),
                      source=str(claim.get("source", "")))
    try:
        parsed = parse(claim.expr)
        v = _Evaluator(parsed, runs).eval(parsed.tree, {})
    except ClaimSkipped as exc:
        return Verdict(claim, "skipped", str(exc))
    except ClaimError as exc:
        return Verdict(claim, "error", str(exc))
    except (ArithmeticError, TypeError, ValueError) as exc:
        return Verdict(claim, "error", f"{type(exc).__name__}: {exc}")
    if not isinstance(v.value, bool):
        return Verdict(claim, "error", f"the expression is not a comparison: {v.shown()}", v.value)
    return Verdict(claim, "holds" if v.value else "fails", v.text, v.value)


def evaluate_all(claims: Iterable[Claim | Mapping[str, Any]], runs: RunSet) -> list[Verdict]:
    return [evaluate(c, runs) for c in claims]
