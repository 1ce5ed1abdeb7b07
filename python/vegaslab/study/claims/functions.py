"""The functions a claim can call: the built-in ones (:data:`SIMPLE`; the time-series ones,
:data:`SERIES_FUNCTIONS`, read data and are the evaluator's), and the public functions of
:mod:`vegaslab.study.metrics`."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from .budgets import MAX_ITEMS, MAX_RANGE_BOUND, MAX_ROUND_DIGITS
from .errors import ClaimError, ClaimSkipped, missing_data, over_budget
from .shown import fmt


def as_float(v: Any, what: str) -> float:
    """``v`` as a float, NaN and infinities included; a bool, a string or a list is a
    :class:`ClaimError`."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        try:
            import numpy as np

            if isinstance(v, np.generic) and not isinstance(v, np.bool_):
                return as_float(v.item(), what)
        except ImportError:  # pragma: no cover
            pass
        raise ClaimError(f"{what}: expected a number, got {fmt(v)}")
    try:
        return float(v)
    except OverflowError:
        raise ClaimError(f"{what}: the number {str(v)[:40]}… is too large") from None


def as_number(v: Any, what: str, finite: bool = True) -> float:
    """``v`` as a float (:func:`as_float`); NaN is a :class:`ClaimError`, and so is an infinity
    unless ``finite`` is false (comparisons with the literal ``inf``)."""
    f = as_float(v, what)
    if math.isnan(f) or (finite and math.isinf(f)):
        raise ClaimError(f"{what}: {fmt(f)} is not a finite number")
    return f


def _numbers(values: Any, what: str) -> list[float]:
    return [as_number(v, what) for v in values]


def mean_of(xs: Sequence[float]) -> float:
    if not xs:
        raise missing_data("mean() of an empty list")
    return math.fsum(xs) / len(xs)


def _std(xs: Sequence[float]) -> float:
    if not xs:
        raise missing_data("std() of an empty list")
    m = mean_of(xs)
    return math.sqrt(math.fsum((x - m) ** 2 for x in xs) / len(xs))


def _nonempty(name: str, fn: Callable[[list[float]], float]) -> Callable[[list[float]], float]:
    def call(xs: list[float]) -> float:
        if not xs:
            raise missing_data(f"{name}() of an empty list")
        return fn(xs)

    return call


def _aggregate(name: str, fn: Callable[[list[float]], Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        items = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
        return fn(_numbers(items, name))

    return call


def _approx(a: Any, b: Any, rel: Any = 0.1) -> bool:
    a, b, rel = as_number(a, "approx"), as_number(b, "approx"), as_number(rel, "approx rel")
    return abs(a - b) <= rel * abs(b)


def _within(x: Any, lo: Any, hi: Any) -> bool:
    return as_number(lo, "within") <= as_number(x, "within") <= as_number(hi, "within")


def _integer(v: Any, what: str, bound: float) -> int:
    f = as_number(v, what)
    if not f.is_integer():
        raise ClaimError(f"{what}: expected an integer, got {fmt(v)}")
    if abs(f) > bound:
        raise over_budget(f"{what}: {fmt(v)} is outside +-{bound:,.0f}")
    return int(f)


def _range(*args: Any) -> list[int]:
    if not 1 <= len(args) <= 3:
        raise ClaimError("range() takes 1 to 3 integers")
    ints = [_integer(a, "range", MAX_RANGE_BOUND) for a in args]
    if len(ints) == 3 and ints[2] == 0:
        raise ClaimError("range(): the step must not be zero")
    r = range(*ints)  # lazy: its length is known before any list is built
    if len(r) > MAX_ITEMS:
        raise over_budget(f"range() of {len(r):,} items, at most {MAX_ITEMS:,} are allowed")
    return list(r)


def _round(x: Any, nd: Any = 0) -> float:
    return round(as_number(x, "round"), _integer(nd, "round digits", MAX_ROUND_DIGITS))


def _len(xs: Any) -> int:
    if not isinstance(xs, (list, tuple, str)):
        raise ClaimError(f"len() needs a list, got {fmt(xs)}")
    return len(xs)


SIMPLE: dict[str, Callable[..., Any]] = {
    "mean": _aggregate("mean", mean_of),
    "min": _aggregate("min", _nonempty("min", min)),
    "max": _aggregate("max", _nonempty("max", max)),
    "sum": _aggregate("sum", _nonempty("sum", math.fsum)),
    "std": _aggregate("std", _std),
    "abs": lambda x: abs(as_number(x, "abs")),
    "round": _round,
    "len": _len,
    "approx": _approx,
    "within": _within,
    "range": _range,
}
SERIES_FUNCTIONS = ("between", "series_max", "series_min", "seeds")


def metrics_function(name: str) -> Callable[..., Any]:
    """A public function of :mod:`vegaslab.study.metrics`: only names in its ``__all__`` (never a
    module, class or helper it happens to import)."""
    try:
        from .. import metrics  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - any import failure means "not available"
        raise ClaimSkipped(f"{name}(): vegaslab.study.metrics is not available ({exc})") from None
    public = getattr(metrics, "__all__", ())
    fn = getattr(metrics, name, None) if name in public and not name.startswith("_") else None
    if not callable(fn) or isinstance(fn, type):
        raise ClaimSkipped(f"{name}(): no such function (not built in, not in vegaslab.study.metrics)")
    return fn


def call_metric(fn: Callable[..., Any], name: str, args: list, kwargs: dict) -> Any:
    try:
        return fn(*args, **kwargs)
    except (ClaimError, ClaimSkipped):
        raise
    except Exception as exc:  # noqa: BLE001 - a metric's own failure is the claim's error
        raise ClaimError(f"{name}(): {type(exc).__name__}: {exc}") from None
