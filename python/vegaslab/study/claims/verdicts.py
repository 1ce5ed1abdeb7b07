"""A claim and its verdict: :func:`evaluate` parses and evaluates one claim and turns every
outcome, failures included, into a :class:`Verdict`; :func:`measure` gives a numeric
expression's value."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .errors import ClaimError, ClaimSkipped
from .evaluator import Evaluator
from .parser import parse
from .runs import RunSet
from .shown import cut


@dataclass(frozen=True)
class Claim:
    text: str
    expr: str
    source: str = ""
    #: ``[[meta.claim]] id`` and ``kind`` (vegaslab.study.catalog: CLAIM_ID, CLAIM_KINDS).
    id: str = ""
    kind: str = "paper"


@dataclass
class Verdict:
    """The outcome of one claim: status is ``holds``, ``fails``, ``error`` or ``skipped``."""

    claim: Claim
    status: str
    detail: str
    value: Any = None
    #: The comparisons of two measured values that held only because the values were equal
    #: (``a >= b`` with a == b): a claim that holds by such a tie is flagged, not trusted.
    ties: tuple[str, ...] = ()

    @property
    def by_tie(self) -> bool:
        """The claim holds, and some comparison in it held only by an exact tie."""
        return self.status == "holds" and bool(self.ties)

    @property
    def text(self) -> str:
        return self.claim.text

    @property
    def expr(self) -> str:
        return self.claim.expr

    def line(self) -> str:
        return f"{self.detail}: {self.status}" if self.status in ("holds", "fails") else f"{self.status}: {self.detail}"


def _as_claim(claim: Any) -> Claim:
    if isinstance(claim, Claim):
        return claim
    return Claim(text=str(claim.get("text", "")), expr=str(claim.get("expr", "")),
                 source=str(claim.get("source", "")), id=str(claim.get("id", "")),
                 kind=str(claim.get("kind", "paper")))


def _verdict(claim: Claim, runs: RunSet) -> Verdict:
    try:
        parsed = parse(claim.expr)
        evaluator = Evaluator(parsed, runs)
        v = evaluator.eval(parsed.tree, {})
        if not isinstance(v.value, bool):
            return Verdict(claim, "error", cut(f"the expression is not a comparison: {v.shown()}"), v.value)
        ties: tuple[str, ...] = ()
        if v.value and evaluator.ties:
            # A tie decided the verdict only if the claim fails with every tie counted against it.
            again = Evaluator(parsed, runs, ties_fail=True)
            if not again.eval(parsed.tree, {}).value:
                ties = tuple(evaluator.ties)
        return Verdict(claim, "holds" if v.value else "fails", v.text, v.value, ties)
    except ClaimSkipped as exc:
        return Verdict(claim, "skipped", cut(str(exc)))
    except ClaimError as exc:
        return Verdict(claim, "error", cut(str(exc)))
    except RecursionError:
        return Verdict(claim, "error", "the expression is nested too deeply to evaluate (RecursionError)")
    except MemoryError:
        return Verdict(claim, "error", "out of memory while evaluating the claim (MemoryError)")
    except Exception as exc:  # noqa: BLE001 - any failure is this claim's error, never a crash
        return Verdict(claim, "error", cut(f"{type(exc).__name__}: {exc}"))


def evaluate(claim: Claim | Mapping[str, Any], runs: RunSet) -> Verdict:
    """Evaluate one claim over an entry's runs, under the budgets of :mod:`vegaslab.study.claims`.
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
        v = Evaluator(parsed, runs).eval(parsed.tree, {})
    except (ClaimError, ClaimSkipped):
        raise
    except RecursionError:
        raise ClaimError("the expression is nested too deeply to evaluate (RecursionError)") from None
    except Exception as exc:  # noqa: BLE001 - any failure is this expression's error
        raise ClaimError(cut(f"{type(exc).__name__}: {exc}")) from None
    value = v.value
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ClaimError(cut(f"the expression is not a finite number: {v.shown()}"))
    return float(value)


def evaluate_all(claims: Iterable[Claim | Mapping[str, Any]], runs: RunSet) -> list[Verdict]:
    """:func:`evaluate` for each claim; never raises."""
    return [evaluate(c, runs) for c in claims]
