"""Claims that are safe and honest: no attribute or global access through a claim, a
step and size budget on every evaluation, no crash out of evaluate(), and no verdict on missing
data. No simulation: the runs are the saved results document in tests/data."""

from __future__ import annotations

import ast
import math
import re
import sys
import time
import types
from pathlib import Path

import pytest

import vegaslab
import vegaslab.study
from vegaslab.study.catalog import builtin_dir
from vegaslab.study import catalog
from vegaslab.study import claims as claims_mod
from vegaslab.study.claims import functions
from vegaslab.study.claims import Claim, ClaimError, RunSet, evaluate, evaluate_all, interpolate, parse
from vegaslab.results import Results

ROOT = Path(__file__).resolve().parents[1]
CATALOG = builtin_dir()  # the catalog ships as package data: vegaslab/catalog_data/
DATA = Path(__file__).parent / "data"
SECRET = "hunter2-do-not-leak"


def _results(seed: int = 1, **flow_values) -> Results:
    """results-small (flows vegas and reno; reno's completion_time_s is null) with some of the
    vegas flow's columns replaced."""
    res = Results.from_json((DATA / "results-small.json").read_text())
    res.flows = res.flows.copy()
    for col, v in flow_values.items():
        res.flows[col] = res.flows[col].astype(float)
        res.flows.loc[res.flows["flow"] == "vegas", col] = v
    res.meta = {**res.meta, "seed": seed}
    return res


@pytest.fixture(scope="module")
def runs() -> RunSet:  # read-only: evaluation never changes a RunSet (test_claims.py)
    return RunSet(
        runs={
            "vegas": [_results(1), _results(2)],
            "nanseed": [_results(1), _results(2, goodput_bps=math.nan)],
            "infseed": [_results(1, goodput_bps=math.inf)],
            "partly": [_results(1)],                   # seeds 2 and 3 failed
            "q10": [_results(1)],
            "q20": [_results(1)],
        },
        failed={"partly": "seed 2: worker process died; seed 3: flows[0].start: must be >= 0 s",
                "broken": "flows[0].start: must be >= 0 s"},
        order=["vegas", "nanseed", "infseed", "partly", "q10", "q20", "broken"],
    )


def check(expr: str, runs: RunSet):
    return evaluate(Claim("t", expr), runs)


# ---------------------------------------------------------------------- 1. no secrets


@pytest.mark.parametrize(
    "expr",
    [
        # the audit's exploit: a str.format field lookup from a comprehension variable
        "all('{m.__init__.__globals__[fnmatch].os.environ[VEGASLAB_TEST_SECRET]}' == 'x' for m in [run('vegas')])",
        "all(`{m.__init__.__globals__[fnmatch].os.environ[VEGASLAB_TEST_SECRET]}:f1.x` > 0 for m in [run('vegas')])",
        "all('{m[0]}' == 'x' for m in ['abc'])",
        "all('{m!r}' == 'x' for m in ['abc'])",
        "all('{m:>20}' == 'x' for m in ['abc'])",
        "all('{0}' == 'x' for m in ['abc'])",
        "all('{}' == 'x' for m in ['abc'])",
        "all('{m}}' == 'x' for m in ['abc'])",
    ],
)
def test_a_string_or_reference_fills_in_only_plain_comprehension_variables(runs, expr, monkeypatch):
    monkeypatch.setenv("VEGASLAB_TEST_SECRET", SECRET)
    v = check(expr, runs)
    assert v.status == "error", v.detail
    assert SECRET not in v.detail
    assert re.search(r"only \{name\}|brace", v.detail), v.detail
    with pytest.raises(ClaimError):
        parse(expr)


@pytest.mark.parametrize(
    "expr, message",
    [
        ("run('vegas').variant == 'vegas'", "attribute access"),
        ("seeds(vegas:vegas.goodput_bps)[0] > 0", "indexing"),
        ("__ref_0 > 0", "reserved"),
        ("_x > 0", "reserved"),
        ("all(_m > 0 for _m in [1])", "reserved"),
        ("max(**{'a': 1}) > 0", "not allowed"),
        ("(lambda: 1)() == 1", "Lambda|only named functions"),
        ("1j == 1j", "constant"),
    ],
)
def test_attributes_indexes_and_reserved_names_are_rejected_by_the_parser(expr, message):
    with pytest.raises(ClaimError, match=message):
        parse(expr)


def test_only_public_metrics_functions_can_be_called(runs, monkeypatch):
    import os

    fake = types.ModuleType("vegaslab.study.metrics")
    fake.jain_index = lambda xs: 1.0
    fake.getenv = os.getenv  # imported by the module, not one of its metrics
    fake.__all__ = ["jain_index"]
    monkeypatch.setitem(sys.modules, "vegaslab.study.metrics", fake)
    monkeypatch.setattr(vegaslab.study, "metrics", fake, raising=False)
    monkeypatch.setenv("VEGASLAB_TEST_SECRET", SECRET)
    v = check("getenv('VEGASLAB_TEST_SECRET') == 'x'", runs)
    assert v.status == "skipped" and SECRET not in v.detail, v.detail
    assert check("jain_index([1, 2]) == 1", runs).status == "holds"


def test_interpolate_fills_names_and_refuses_everything_else():
    assert interpolate("v1-on{m}-{a}", {"m": 200.0, "a": "ada"}) == "v1-on200-ada"
    for bad, env in [("{m.x}", {"m": 1}), ("{m}", {}), ("{m}", {"m": [1]}), ("{m}", {"m": True}),
                     ("{m}", {"m": math.nan}), ("{", {}), ("{m}", {"m": "x" * 2000})]:
        with pytest.raises(ClaimError):
            interpolate(bad, env)


def test_a_claims_text_is_shown_as_written(runs):
    v = evaluate(Claim("Vegas {m.__init__} wins", "1 < 2"), runs)
    assert v.status == "holds" and v.text == "Vegas {m.__init__} wins"


# ---------------------------------------------------------------------- 2. budgets, never a crash


@pytest.mark.parametrize(
    "expr, message",
    [
        ("len(range(10**9)) > 0", "budget exceeded: range"),
        ("len(range(10**7)) > 0", "budget exceeded: range"),
        ("sum(1 for a in range(1000) for b in range(1000) for c in range(1000)) > 0", "budget exceeded"),
        ("len([x for x in range(90000) for y in range(2)]) > 0", "budget exceeded"),
        ("all(len(range(90000)) > 0 for i in range(90000))", "budget exceeded"),
        ("all('{m:>999999999}' == 'x' for m in [1])", "only {name}"),
        ("1.0001 ** 100000 > 1", "budget exceeded: the exponent"),
        ("2 ** 1000 * 2 ** 1000 > 0", "overflow"),
        ("round(1.5, 10**9) > 0", "budget exceeded: round"),
        ("-" * 3000 + "1 < 0", "nested|budget exceeded|parse"),
        ("(" * 3000 + "1" + ")" * 3000 + " > 0", "nested|budget exceeded|parse|syntax"),
        ("1 < 2 and " * 2500 + "1 < 2", "budget exceeded: the expression has"),
        ("9" * 5000 + " > 0", "syntax error|too large|digits"),
    ],
)
def test_a_hostile_expression_ends_quickly_in_an_error_verdict(runs, expr, message):
    t0 = time.monotonic()
    v = check(expr, runs)
    assert v.status == "error" and re.search(message, v.detail), v.detail
    # Stopped by a budget of work (steps, items, sizes: about a second of work at most), not by
    # the wall-time safety net; that net is also the bound on the time taken, a hang guard
    # that a busy host cannot reach.
    assert "took longer than" not in v.detail, v.detail
    assert time.monotonic() - t0 < claims_mod.MAX_SECONDS
    assert len(v.detail) <= claims_mod.MAX_TEXT


class _Exploding:
    """A Results whose value() fails with ``exc``: whatever happens while reading the data."""

    meta = {"seed": 1}

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def value(self, key: str):
        raise self.exc


@pytest.mark.parametrize("exc", [MemoryError(), RecursionError("deep"), RuntimeError("odd"), OverflowError("big"),
                                 ZeroDivisionError("zero"), AttributeError("attr"), IndexError("idx")])
def test_any_failure_inside_evaluation_is_an_error_verdict_never_an_exception(exc):
    rs = RunSet(runs={"v": [_Exploding(exc)]})
    (v,) = evaluate_all([Claim("t", "v:f1.goodput_bps > 0")], rs)
    assert v.status == "error", v.detail
    assert type(exc).__name__ in v.detail or "out of memory" in v.detail, v.detail


def test_evaluate_all_survives_claims_that_are_not_claims(runs):
    got = evaluate_all([{"text": "ok", "expr": "1 < 2"}, None, {"expr": 5}, Claim("t", "")], runs)
    assert [v.status for v in got] == ["holds", "error", "error", "error"]


def test_the_budgets_are_documented_in_the_module_docstring():
    for name in ("MAX_EXPR_CHARS", "MAX_DEPTH", "MAX_STEPS", "MAX_ITEMS", "MAX_READS", "MAX_EXPONENT",
                 "MAX_STRING", "MAX_ROUND_DIGITS", "MAX_TEXT", "MAX_SHOWN_ITEMS", "MAX_SECONDS"):
        value = getattr(claims_mod, name)
        shown = f"{value:,}" if isinstance(value, int) else f"{value:g}"
        assert re.search(rf":data:`{name}`\s+{re.escape(shown)}\s", claims_mod.__doc__), name


# ---------------------------------------------------------------------- 3. no verdict on missing data


@pytest.mark.parametrize(
    "expr, names",
    [
        # a NaN in one seed: max() ignored it, != held
        ("max([0, vegas:reno.completion_time_s]) == 0", ["vegas:reno.completion_time_s", "nan", "seed 1"]),
        ("vegas:reno.completion_time_s != 5", ["vegas:reno.completion_time_s", "nan"]),
        ("nanseed:vegas.goodput_bps > 0", ["nanseed:vegas.goodput_bps", "nan", "seed 2"]),
        ("all(x > 0 for x in `*seed:vegas.goodput_bps`)", ["nanseed:vegas.goodput_bps", "seed 2"]),
        ("infseed:vegas.goodput_bps > 0", ["infseed:vegas.goodput_bps", "inf", "seed 1"]),
        # a zero divisor: the quotient was inf (or nan) and compared as if it were a number
        ("vegas:reno.goodput_bps / vegas:vegas.retransmitted_pkts > 1", ["division by zero",
                                                                        "vegas:vegas.retransmitted_pkts"]),
        ("vegas:reno.goodput_bps % vegas:vegas.retransmitted_pkts >= 0", ["division by zero"]),
        # an aggregate of nothing: all([]) was true
        ("all(x > 0 for x in q*:vegas.goodput_bps if x > 1e12)", ["all() over an empty list"]),
        ("all([])", ["all() over an empty list"]),
        ("any([])", ["any() over an empty list"]),
        ("max(x for x in q*:vegas.goodput_bps if x > 1e12) > 0", ["max() of an empty list"]),
        ("sum([]) == 0", ["sum() of an empty list"]),
        ("mean([]) == 0", ["mean() of an empty list"]),
        # a series with nothing in the window
        ("between(q10:vegas.throughput_bps, 100, 200) > 0", ["q10:vegas.throughput_bps", "no samples", "seed 1"]),
        ("series_max(q10:vegas.active) > 0", ["q10:vegas.active", "no samples", "seed 1"]),
        # a variant with failed seeds is not judged on its survivors
        ("partly:vegas.goodput_bps > 0", ["'partly'", "seed 2: worker process died", "seed 3: flows[0].start",
                                           "1 surviving seed"]),
        ("seeds(partly:vegas.goodput_bps) == seeds(partly:vegas.goodput_bps)", ["'partly'", "seed 2"]),
        ("max(`p*:vegas.goodput_bps`) > 0", ["'partly'", "seed 3"]),
        ("jain_index([1, 1]) == 1 and line_utilisation(run('partly'), 'R1->R2') > 0", ["'partly'", "seed 2"]),
        ("broken:vegas.goodput_bps > 0", ["'broken'", "no results", "flows[0].start"]),
    ],
)
def test_missing_data_is_an_error_that_names_the_run(runs, expr, names):
    v = check(expr, runs)
    assert v.status == "error" and v.detail.startswith("missing data: "), v.detail
    for name in names:
        assert name in v.detail, (name, v.detail)


def test_a_metric_that_returns_nan_is_missing_data_for_that_run_and_seed(runs, monkeypatch):
    fake = types.ModuleType("vegaslab.study.metrics")
    fake.goodput_of = lambda res, flow: float(res.value(f"{flow}.goodput_bps"))
    fake.__all__ = ["goodput_of"]
    monkeypatch.setitem(sys.modules, "vegaslab.study.metrics", fake)
    monkeypatch.setattr(vegaslab.study, "metrics", fake, raising=False)
    assert check('goodput_of(run("vegas"), "vegas") == 400000', runs).status == "holds"
    v = check('goodput_of(run("nanseed"), "vegas") > 0', runs)
    assert v.status == "error" and v.detail.startswith("missing data: goodput_of() is nan for 'nanseed' in seed 2"), v.detail


def test_complete_data_still_gives_holds_and_fails(runs):
    assert check("vegas:vegas.goodput_bps == 400000", runs).status == "holds"
    assert check("len(q*:vegas.goodput_bps) == 2 and len([]) == 0", runs).status == "holds"
    assert check("vegas:vegas.goodput_bps < inf and -inf < 0", runs).status == "holds"
    assert check("between(q10:vegas.rtt_s, 0, 1) > 0", runs).status == "holds"  # null samples are skipped
    v = check("vegas:vegas.goodput_bps / vegas:reno.goodput_bps > 2", runs)
    assert v.status == "fails" and v.detail == "400,000 / 240,000 = 1.667 > 2"


def test_inf_can_be_compared_with_but_not_computed_with(runs):
    assert check("inf - inf > 0", runs).status == "error"
    assert check("max([1, inf]) > 0", runs).status == "error"


# ---------------------------------------------------------------------- the catalog


def _comprehension_variables(tree: ast.AST) -> set[str]:
    return {g.target.id for node in ast.walk(tree) if isinstance(node, (ast.GeneratorExp, ast.ListComp))
            for g in node.generators}


def test_every_catalog_claim_parses_within_the_budgets_and_fills_in_only_its_own_variables():
    n = 0
    for entry in catalog.list_entries(CATALOG):
        for c in entry.claims:
            expr = c["expr"]
            parsed = parse(expr)
            n += 1
            assert len(expr) <= claims_mod.MAX_EXPR_CHARS / 4, (entry.id, expr)
            bound = _comprehension_variables(parsed.tree)
            strings = [node.value for node in ast.walk(parsed.tree)
                       if isinstance(node, ast.Constant) and isinstance(node.value, str)]
            for text in strings + [r.template for r in parsed.refs]:
                for name in re.findall(r"\{([^{}]*)\}", text):
                    assert name in bound, f"{entry.id}: {expr}: {{{name}}} is not a comprehension variable"
    assert n >= 150  # the 27 catalog files hold 160-odd claims


def test_every_function_a_catalog_claim_calls_is_built_in_or_public_in_vegaslab_metrics():
    from vegaslab.study import metrics

    from vegaslab.study.claims.timecourse import TIMECOURSE_FUNCTIONS

    builtin = set(functions.SIMPLE) | set(functions.SERIES_FUNCTIONS) | set(TIMECOURSE_FUNCTIONS) | {"all", "any", "run"}
    for entry in catalog.list_entries(CATALOG):
        for c in entry.claims:
            for node in ast.walk(parse(c["expr"]).tree):
                if isinstance(node, ast.Call) and node.func.id not in builtin:
                    assert node.func.id in metrics.__all__, f"{entry.id}: {node.func.id}() is not in metrics.__all__"
