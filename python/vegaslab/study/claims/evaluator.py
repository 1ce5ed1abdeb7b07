"""Evaluating a parsed claim by walking its syntax tree, node by node, under the budgets: every
data read per seed (remembered for the rest of the claim), every operator and call with the
numbers it used written into the verdict's text, and missing data never judged."""

from __future__ import annotations

import ast
import math
import operator
import re
import time
from typing import Any, Callable, Mapping

from .budgets import MAX_EXPONENT, MAX_ITEMS, MAX_READS, MAX_SECONDS, MAX_STEPS
from .errors import ClaimBudgetExceeded, ClaimError, missing_data, over_budget
from .functions import SERIES_FUNCTIONS, SIMPLE, as_float, as_number, call_metric, mean_of, metrics_function
from .interpolation import interpolate
from .parser import PLACEHOLDER, Parsed, Ref
from .runs import RunRef, RunSet, seed_of
from .shown import Shown, cut, fmt, from_sources, join, sources
from .timecourse import TIMECOURSE_FUNCTIONS, band, departures

#: Arithmetic and comparison operators: the symbol a verdict shows, and the operation.
_BINOPS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("x", operator.mul),
    ast.Div: ("/", operator.truediv), ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod), ast.Pow: ("^", operator.pow),
}
_CMPOPS: dict[type, tuple[str, Callable[[Any, Any], bool]]] = {
    ast.Eq: ("==", operator.eq), ast.NotEq: ("!=", operator.ne), ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le), ast.Gt: (">", operator.gt), ast.GtE: (">=", operator.ge),
}


class Evaluator:
    def __init__(self, parsed: Parsed, runs: RunSet, *, ties_fail: bool = False) -> None:
        self.parsed = parsed
        #: Evaluate a tie of two measured values under ``<=``/``>=`` as false: the counterfactual
        #: by which a verdict decides whether a tie decided it (verdicts.py).
        self.ties_fail = ties_fail
        self.runs = runs
        self.steps = 0
        self.reads = 0
        self.memo: dict[tuple, Any] = {}  # reads already made: (kind, what...) -> value
        #: Comparisons ``<=``/``>=`` of two measured values (both read from runs) that held by
        #: equality, as they read with the numbers (Verdict.ties).
        self.ties: list[str] = []
        self.deadline = time.monotonic() + MAX_SECONDS

    # -- budgets

    def charge(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > MAX_STEPS:
            raise over_budget(f"more than {MAX_STEPS:,} evaluation steps (nodes evaluated and list items built)")
        if time.monotonic() > self.deadline:
            raise over_budget(f"the evaluation took longer than {MAX_SECONDS:g} s")

    def read(self) -> None:
        self.reads += 1
        if self.reads > MAX_READS:
            raise over_budget(f"more than {MAX_READS:,} data reads (one per seed of each value, series or metric)")
        self.charge()

    def items(self, n: int, what: str) -> None:
        if n > MAX_ITEMS:
            raise over_budget(f"{what} of more than {MAX_ITEMS:,} items")
        self.charge(n)

    # -- references

    def _ref_of(self, node: ast.AST) -> Ref | None:
        if isinstance(node, ast.Name) and node.id.startswith(PLACEHOLDER):
            return self.parsed.refs[int(node.id[len(PLACEHOLDER):])]
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
                raise missing_data(f"{label} is null{seed_of(res)}")
            f = as_float(v, label)
            if not math.isfinite(f):
                raise missing_data(f"{label} is {fmt(f)}{seed_of(res)}")
            vals.append(f)
        return vals

    def ref_value(self, ref: Ref, env: Mapping[str, Any]) -> tuple[Any, str]:
        variant, key = ref.resolve(env)
        names, many = self._variants(variant)
        values = [mean_of(self._per_seed(n, key)) for n in names]
        return (values if many else values[0]), f"{variant}:{key}"

    def _series(self, ref: Ref, env: Mapping[str, Any], t0: float | None, t1: float | None,
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

    def _series_samples(self, n: str, key: str, res: Any) -> Any:
        """One seed's time series of ``key`` (``ENTITY.COLUMN``): the rows of ``series_flows``
        or ``series_queues`` for the entity, with ``time_s`` and the column. One data read."""
        entity, _, metric = key.rpartition(".")
        from ...results import renamed_column_message

        if renamed := renamed_column_message(metric):
            raise ClaimError(f"{n}:{key}: {renamed}")
        self.read()
        for table, col in (("series_flows", "flow"), ("series_queues", "queue")):
            df = getattr(res, table)
            if metric in df.columns and (df[col] == entity).any():
                return df[df[col] == entity]
        raise ClaimError(f"{n}:{key}: no time series {metric!r} for {entity!r} (is the monitor on?)")

    def _read_series(self, n: str, key: str, t0: float | None, t1: float | None, how: str) -> float:
        metric = key.rpartition(".")[2]
        per_seed = []
        for res in self.runs.results(n):
            s = self._series_samples(n, key, res)
            if t0 is not None:
                s = s[s["time_s"] > t0]
            if t1 is not None:
                s = s[s["time_s"] <= t1]
            col = s[metric].dropna()  # a null sample is "no value at that time" (docs/results-format.md)
            window = f"between {fmt(t0)} and {fmt(t1)} s" if t0 is not None else "in the run"
            if col.empty:
                raise missing_data(f"{n}:{key}: the series has no samples {window}{seed_of(res)}")
            v = as_float(getattr(col, how)(), f"{n}:{key}")
            if not math.isfinite(v):
                raise missing_data(f"{n}:{key}: the series {window} has a {fmt(v)} sample{seed_of(res)}")
            per_seed.append(v)
        return mean_of(per_seed)

    def _timecourse(self, ref: Ref, env: Mapping[str, Any], lo: float, hi: float, t0: float, t1: float,
                    window: float) -> Any:
        """Seconds the windowed series leaves ``[lo, hi]`` in ``(t0, t1]``, the worst seed's
        (:mod:`.timecourse`); one number per variant."""
        variant, key = ref.resolve(env)
        names, many = self._variants(variant)
        out = []
        for n in names:
            memo = ("timecourse", n, key, lo, hi, t0, t1, window)
            if memo not in self.memo:
                worst = 0.0
                for res in self.runs.results(n):
                    s = self._series_samples(n, key, res)
                    got = departures(s["time_s"].to_numpy(), s[key.rpartition(".")[2]].to_numpy(dtype=float),
                                     lo, hi, t0, t1, window)
                    if not got["samples"]:
                        raise missing_data(f"{n}:{key}: the series has no samples between {fmt(t0)} and "
                                           f"{fmt(t1)} s{seed_of(res)}")
                    worst = max(worst, got["seconds"])
                self.memo[memo] = worst
            out.append(self.memo[memo])
        return out if many else out[0]

    # -- nodes

    def eval(self, node: ast.AST, env: dict[str, Any]) -> Shown:
        self.charge()
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise ClaimError(f"{type(node).__name__} is not allowed in a claim expression")
        return method(node, env)

    def _Expression(self, node: ast.Expression, env: dict) -> Shown:
        return self.eval(node.body, env)

    def _Constant(self, node: ast.Constant, env: dict) -> Shown:
        v = node.value
        if isinstance(v, str) and ("{" in v or "}" in v):
            v = interpolate(v, env, f"string {v[:60]!r}")
        return Shown(v, fmt(v))

    def _Name(self, node: ast.Name, env: dict) -> Shown:
        ref = self._ref_of(node)
        if ref is not None:
            v, label = self.ref_value(ref, env)
            return Shown(v, fmt(v), src=(label,))
        if node.id in env:
            # A comprehension variable carries the sources of the list it runs over (the key
            # cannot clash with a name of the language, which never starts with "_").
            return Shown(env[node.id], fmt(env[node.id]), src=env.get(f"__src__{node.id}", ()))
        if node.id in ("true", "True"):
            return Shown(True, "true")
        if node.id in ("false", "False"):
            return Shown(False, "false")
        if node.id in ("inf",):
            return Shown(math.inf, "inf")
        raise ClaimError(f"unknown name {node.id!r} (a reference is VARIANT:ENTITY.METRIC)")

    def _List(self, node: ast.List, env: dict) -> Shown:
        self.items(len(node.elts), "a list")
        items = [self.eval(e, env) for e in node.elts]
        return Shown([i.value for i in items], "[" + join((i.text for i in items), ", ") + "]",
                  src=sources(*items))

    _Tuple = _List

    def _UnaryOp(self, node: ast.UnaryOp, env: dict) -> Shown:
        x = self.eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return Shown(not bool(x.value), f"not ({x.shown()})", leaf=False)
        v = as_number(x.value, "unary operator", finite=False)  # -inf is a bound to compare with
        v = -v if isinstance(node.op, ast.USub) else v
        return Shown(v, f"-{x.text}" if isinstance(node.op, ast.USub) else x.text, leaf=x.leaf, src=x.src)

    def _BinOp(self, node: ast.BinOp, env: dict) -> Shown:
        left, right = self.eval(node.left, env), self.eval(node.right, env)
        sym, fn = _BINOPS[type(node.op)]

        def part(x: Shown) -> str:  # a function call inside arithmetic shows its value
            return x.text if x.leaf else (f"({x.text})" if x.op else fmt(x.value))

        text = f"{part(left)} {sym} {part(right)}"
        a, b = as_number(left.value, f"left of {sym} in {text}"), as_number(right.value, f"right of {sym} in {text}")
        if isinstance(node.op, ast.Pow) and abs(b) > MAX_EXPONENT:
            raise over_budget(f"the exponent in {text} is larger than {MAX_EXPONENT:,}")
        try:
            v = fn(a, b)
        except ZeroDivisionError:
            raise missing_data(f"division by zero in {text}{from_sources(right)}") from None
        except OverflowError:
            raise ClaimError(f"overflow: {text} is too large for a float") from None
        if not isinstance(v, float):  # a negative number to a fractional power is complex
            raise ClaimError(f"{text} is not a real number")
        if not math.isfinite(v):
            raise ClaimError(f"overflow: {text} = {fmt(v)} is too large for a float")
        return Shown(v, text, leaf=False, op=True, src=sources(left, right))

    def _Compare(self, node: ast.Compare, env: dict) -> Shown:
        left = self.eval(node.left, env)
        parts = [left.shown()]
        ok = True
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp, env)
            sym, fn = _CMPOPS[type(op)]
            a, b = left.value, right.value
            if not (isinstance(a, str) and isinstance(b, str)):
                a, b = as_number(a, f"left of {sym}", finite=False), as_number(b, f"right of {sym}", finite=False)
            tie = sym in ("<=", ">=") and a == b and bool(left.src) and bool(right.src)
            ok = ok and bool(fn(a, b)) and not (tie and self.ties_fail)
            if tie and len(self.ties) < 10:
                self.ties.append(cut(f"{left.shown()} {sym} {right.shown()}"))
            parts += [sym, right.shown()]
            left = right
        return Shown(ok, join(parts, " "), leaf=False)

    def _BoolOp(self, node: ast.BoolOp, env: dict) -> Shown:
        items = [self.eval(v, env) for v in node.values]
        word = "and" if isinstance(node.op, ast.And) else "or"
        vals = [bool(i.value) for i in items]
        v = all(vals) if word == "and" else any(vals)
        text = join((f"({i.shown()}: {fmt(bool(i.value))})" for i in items), f" {word} ")
        return Shown(v, text, leaf=False)

    def _IfExp(self, node: ast.IfExp, env: dict) -> Shown:
        test = self.eval(node.test, env)
        return self.eval(node.body if test.value else node.orelse, env)

    def _iterate(self, node: ast.GeneratorExp | ast.ListComp, env: dict) -> list[Shown]:
        out: list[Shown] = []

        def walk(i: int, scope: dict) -> None:
            if i == len(node.generators):
                if len(out) >= MAX_ITEMS:
                    raise over_budget(f"a comprehension of more than {MAX_ITEMS:,} items")
                out.append(self.eval(node.elt, scope))
                return
            gen = node.generators[i]
            if not isinstance(gen.target, ast.Name):
                raise ClaimError("a comprehension variable must be a single name")
            over = self.eval(gen.iter, scope)
            seq = over.value
            if not isinstance(seq, (list, tuple)):
                raise ClaimError(f"cannot iterate over {fmt(seq)}")
            for item in seq:
                self.charge()
                inner = {**scope, gen.target.id: item, f"__src__{gen.target.id}": over.src}
                if all(self.eval(cond, inner).value for cond in gen.ifs):
                    walk(i + 1, inner)

        walk(0, dict(env))
        return out

    def _GeneratorExp(self, node: ast.GeneratorExp, env: dict) -> Shown:
        items = self._iterate(node, env)
        return Shown([i.value for i in items], "[" + join((i.shown() for i in items), ", ") + "]",
                  leaf=False, src=sources(*items))

    _ListComp = _GeneratorExp

    def _Call(self, node: ast.Call, env: dict) -> Shown:
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
            return Shown(RunRef(variant), f"run({variant!r})", src=(f"run({variant!r})",))
        if name in SERIES_FUNCTIONS:
            return self._series_call(name, node, env)
        if name in TIMECOURSE_FUNCTIONS:
            return self._timecourse_call(name, node, env)
        args = [self.eval(a, env) for a in node.args]
        kwargs = {k.arg: self.eval(k.value, env) for k in node.keywords if k.arg}
        if len(args) == 1 and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp)):
            inner = args[0].text
        else:
            inner = join([a.text for a in args] + [f"{k}={v.text}" for k, v in kwargs.items()], ", ")
        text = f"{name}({inner})"
        src = sources(*args, *kwargs.values())
        try:
            if name in SIMPLE:
                try:
                    v = SIMPLE[name](*[a.value for a in args], **{k: v.value for k, v in kwargs.items()})
                except TypeError as exc:
                    raise ClaimError(f"{name}(): {exc}") from None
                except OverflowError:
                    raise ClaimError(f"overflow: {name}() is too large for a float") from None
            else:
                v = self._metrics_call(name, [a.value for a in args], {k: x.value for k, x in kwargs.items()})
        except ClaimBudgetExceeded:
            raise
        except ClaimError as exc:  # say where, and from which references
            raise type(exc)(cut(f"{exc} (in {text}{from_sources(Shown(None, '', src=src))})")) from None
        if isinstance(v, list):
            self.items(len(v), f"{name}()")
        elif isinstance(v, float) and not math.isfinite(v):
            raise ClaimError(f"overflow: {text} = {fmt(v)}")
        return Shown(v, text, leaf=False, src=src)

    def _metrics_call(self, name: str, args: list, kwargs: dict) -> Any:
        fn = metrics_function(name)
        memo = ("metric", name, repr(args), repr(sorted(kwargs.items())))  # the functions are pure
        if memo not in self.memo:
            self.memo[memo] = self._read_metric(fn, name, args, kwargs)
        return self.memo[memo]

    def _read_metric(self, fn: Callable[..., Any], name: str, args: list, kwargs: dict) -> float:
        run_refs = [a for a in [*args, *kwargs.values()] if isinstance(a, RunRef)]
        if not run_refs:
            self.read()
            v = call_metric(fn, name, args, kwargs)
            f = as_float(v, f"{name}()")
            if not math.isfinite(f):
                raise missing_data(f"{name}() is {fmt(f)}")
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
            a2 = [seeds_of[a.variant][k] if isinstance(a, RunRef) else a for a in args]
            k2 = {key: seeds_of[a.variant][k] if isinstance(a, RunRef) else a for key, a in kwargs.items()}
            f = as_float(call_metric(fn, name, a2, k2), f"{name}()")
            if not math.isfinite(f):
                first = seeds_of[run_refs[0].variant][k]
                raise missing_data(f"{name}() is {fmt(f)} for {', '.join(repr(v) for v in seeds_of)}{seed_of(first)}")
            values.append(f)
        return mean_of(values)

    def _all_any(self, name: str, node: ast.Call, env: dict) -> Shown:
        if len(node.args) != 1 or node.keywords:
            raise ClaimError(f"{name}() takes one generator or list")
        arg = node.args[0]
        if isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
            items = self._iterate(arg, env)
        else:
            x = self.eval(arg, env)
            if not isinstance(x.value, (list, tuple)):
                raise ClaimError(f"{name}() needs a list, got {fmt(x.value)}")
            items = [Shown(e, fmt(e)) for e in x.value]
        if not items:
            written = re.sub(r"__ref_(\d+)", lambda m: self.parsed.refs[int(m.group(1))].template, ast.unparse(arg))
            raise missing_data(f"{name}() over an empty list: nothing to check (in {name}({written[:500]}))")
        vals = [bool(i.value) for i in items]
        v = all(vals) if name == "all" else any(vals)
        marks = join((f"{i.shown()} ({'yes' if b else 'NO'})" for i, b in zip(items, vals)), "; ")
        return Shown(v, f"{name} of {len(items)}: {marks}", leaf=False)

    def _series_call(self, name: str, node: ast.Call, env: dict) -> Shown:
        if not node.args or node.keywords:
            raise ClaimError(f"{name}() takes a reference first, e.g. {name}(vegas:f1.throughput_bps, 20, 200)")
        ref = self._ref_of(node.args[0])
        if ref is None:
            raise ClaimError(f"{name}(): the first argument must be a reference VARIANT:ENTITY.METRIC")
        rest = [as_number(self.eval(a, env).value, name) for a in node.args[1:]]
        label = ref.resolve(env)
        label_txt = f"{label[0]}:{label[1]}"
        if name == "seeds":
            if rest:
                raise ClaimError("seeds() takes one reference")
            variant, key = label
            names, many = self._variants(variant)
            vals = [self._per_seed(n, key) for n in names]
            v = vals if many else vals[0]
            return Shown(v, f"seeds({label_txt}) = {fmt(v)}", leaf=True, src=(label_txt,))
        if name == "between" and len(rest) != 2:
            raise ClaimError("between(ref, t0, t1) takes a reference and two times in seconds")
        if len(rest) not in (0, 2):
            raise ClaimError(f"{name}(ref[, t0, t1])")
        t0, t1 = (rest + [None, None])[:2]
        how = {"between": "mean", "series_max": "max", "series_min": "min"}[name]
        v = self._series(ref, env, t0, t1, how)
        span = f", {fmt(t0)}, {fmt(t1)}" if rest else ""
        return Shown(v, f"{name}({label_txt}{span})", leaf=False, src=(label_txt,))

    def _timecourse_call(self, name: str, node: ast.Call, env: dict) -> Shown:
        ref = self._ref_of(node.args[0]) if node.args and not node.keywords else None
        if ref is None:
            raise ClaimError(f"{name}() takes a reference first, e.g. {name}(vegas:f1.throughput_bps, 0.45e6, 40, 200)")
        rest = [as_number(self.eval(a, env).value, name) for a in node.args[1:]]
        try:
            lo, hi, t0, t1, window = band(name, rest)
        except ValueError as exc:
            raise ClaimError(str(exc)) from None
        variant, key = ref.resolve(env)
        v = self._timecourse(ref, env, lo, hi, t0, t1, window)
        args = ", ".join(fmt(x) for x in rest)
        return Shown(v, f"{name}({variant}:{key}, {args}) [worst seed]", leaf=False, src=(f"{variant}:{key}",))
