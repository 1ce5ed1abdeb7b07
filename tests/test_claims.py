"""The claim expression language (vegaslab.study.claims): parsing, safety, evaluation, verdict text.
No simulation: the runs are the saved results document in tests/data."""

from __future__ import annotations

import copy
import re
import sys
import types
from pathlib import Path

import pytest

import vegaslab
import vegaslab.study
from vegaslab.study.catalog import builtin_dir
from vegaslab.study import catalog
from vegaslab.study.claims import Claim, ClaimError, RunSet, evaluate, fmt, parse
from vegaslab.results import Results

ROOT = Path(__file__).resolve().parents[1]
CATALOG = builtin_dir()  # the catalog ships as package data: vegaslab/catalog_data/
DATA = Path(__file__).parent / "data"


def _results(scale: float = 1.0, seed: int = 1) -> Results:
    res = Results.from_json((DATA / "results-small.json").read_text())
    res.flows = res.flows.copy()
    for col in ("goodput_bps", "throughput_bps"):
        res.flows[col] = res.flows[col] * scale
    res.meta = {**res.meta, "seed": seed}
    return res


@pytest.fixture
def runs() -> RunSet:
    # results-small: flows vegas (goodput 400,000, 0 retx) and reno (240,000, 2 retx);
    # queue R1->R2 mean_len_pkts 2.1; 0.1 s series of throughput/cwnd.
    return RunSet(
        runs={
            "vegas": [_results(1.0, 1), _results(1.5, 2)],   # goodput mean 500,000 over two seeds
            "vegas-a": [_results(3.0)],                       # 1,200,000
            "q10": [_results(1.0)],
            "q20": [_results(2.0)],
        },
        failed={"broken": "flows[0].start: must be >= 0 s"},
        order=["vegas", "vegas-a", "q10", "q20", "broken"],
    )


def check(expr: str, runs: RunSet):
    return evaluate(Claim("t", expr), runs)


# ---------------------------------------------------------------------- holds / fails / error


def test_a_true_comparison_holds_and_shows_the_numbers(runs):
    v = check("vegas-a:vegas.goodput_bps > 2 * vegas:vegas.goodput_bps", runs)
    assert v.status == "holds"
    assert v.detail == "1,200,000 > 2 x 500,000 = 1,000,000"
    assert v.line() == "1,200,000 > 2 x 500,000 = 1,000,000: holds"


def test_a_false_comparison_fails_and_shows_the_numbers(runs):
    v = check("vegas:vegas.goodput_bps > 3 * vegas-a:vegas.goodput_bps", runs)
    assert v.status == "fails"
    assert v.detail == "500,000 > 3 x 1,200,000 = 3,600,000"


def test_a_reference_is_the_mean_over_seeds(runs):
    assert check("vegas:vegas.goodput_bps == 500000", runs).status == "holds"
    v = check("seeds(vegas:vegas.goodput_bps) == [400000, 600000]", runs)
    assert v.status == "error"  # comparing lists is not allowed ...
    assert check("std(seeds(vegas:vegas.goodput_bps)) == 100000", runs).status == "holds"  # ... their stats are


@pytest.mark.parametrize(
    "expr, message",
    [
        ("nothere:vegas.goodput_bps > 1", "no variant 'nothere'"),
        ("vegas:nobody.goodput_bps > 1", "no flow, queue or link named 'nobody'"),
        ("vegas:vegas.no_such_column > 1", "no column 'no_such_column'"),
        ("broken:f1.goodput_bps > 1", "broken.*no results.*flows\\[0\\].start"),
        ("vegas:vegas.goodput_bps + 1", "not a comparison"),
        ("vegas:vegas.goodput_bps >", "syntax error"),
        ("unknown_name > 1", "unknown name 'unknown_name'"),
        ("`vegas-x:f1.goodput_bps` > 1", "no variant"),
    ],
)
def test_problems_are_error_verdicts_with_a_message(runs, expr, message):
    v = check(expr, runs)
    assert v.status == "error"
    assert re.search(message, v.detail), v.detail


@pytest.mark.parametrize(
    "expr",
    [
        '__import__("os").system("true")',
        "vegas.__class__",
        "(lambda: 1)() == 1",
        "[x for x in ().__class__.__mro__]",
        "open('/etc/passwd')",
        "{1: 2}",
        "x[0] > 1",
    ],
)
def test_anything_outside_the_language_is_rejected_not_run(runs, expr):
    v = check(expr, runs)
    assert v.status in ("error", "skipped")
    with pytest.raises(ClaimError):
        if v.status == "skipped":  # a call to an unknown function is parsed, then skipped
            raise ClaimError(v.detail)
        parse(expr)


# ---------------------------------------------------------------------- arithmetic and logic


@pytest.mark.parametrize(
    "expr, status",
    [
        ("(1 + 2) * 3 == 9", "holds"),
        ("10 / 4 == 2.5 and 10 // 4 == 2 and 10 % 4 == 2 and 2 ** 3 == 8", "holds"),
        ("-vegas:reno.retransmitted_pkts == -2", "holds"),
        ("1 < 2 < 3", "holds"),
        ("1 < 3 < 2", "fails"),
        ("not (1 > 2)", "holds"),
        ("1 > 2 or 2 > 1", "holds"),
        ("(1 if 2 > 1 else 5) == 1", "holds"),
        ("0.2e6 == 200000", "holds"),
        ("approx(vegas:R1->R2.mean_len_pkts, 2.0, rel=0.1)", "holds"),
        ("approx(vegas:R1->R2.mean_len_pkts, 2.0, rel=0.01)", "fails"),
        ("within(vegas:R1->R2.mean_len_pkts, 2, 2.2)", "holds"),
        ("abs(-3) == 3 and round(2.26, 1) == 2.3 and len([1, 2]) == 2", "holds"),
        ("2 ** 0.5 > 1.414 and 7 // 2 * 2 + 7 % 2 == 7", "holds"),
        # division by zero is an error verdict (missing data), not inf: tests/test_claims_safety.py
    ],
)
def test_arithmetic_comparisons_and_logic(runs, expr, status):
    assert check(expr, runs).status == status, check(expr, runs).detail


def test_a_queue_name_with_an_arrow_is_part_of_the_reference(runs):
    v = check("vegas:R1->R2.mean_len_pkts - 0.1 == 2", runs)
    assert v.status == "holds" and v.detail.startswith("2.1 - 0.1 = 2")


def test_and_or_show_each_part(runs):
    v = check("vegas:reno.retransmitted_pkts > 1 and vegas:vegas.retransmitted_pkts > 0", runs)
    assert v.status == "fails"
    assert v.detail == "(2 > 1: true) and (0 > 0: false)"


# ---------------------------------------------------------------------- lists, wildcards, forall


def test_aggregates_over_arguments_lists_and_generators(runs):
    assert check("mean(1, 2, 3) == 2 and max([1, 5]) == 5 and min(x for x in [4, 2]) == 2", runs).status == "holds"
    assert check("sum(x * 2 for x in range(4)) == 12", runs).status == "holds"
    assert check("std([2, 4, 4, 4, 5, 5, 7, 9]) == 2", runs).status == "holds"


def test_a_wildcard_reference_is_a_list_over_matching_variants_in_catalog_order(runs):
    v = check("max(q*:vegas.goodput_bps) == 800000", runs)
    assert v.status == "holds"
    assert v.detail == "max([400,000, 800,000]) = 800,000 == 800,000"
    assert check("len(vegas*:vegas.goodput_bps) == 2", runs).status == "holds"
    assert check("min(`?10:vegas.retransmitted_pkts`) == 0", runs).status == "holds"
    v = check("min(`*:vegas.retransmitted_pkts`) == 0", runs)  # matches the failed variant too
    assert v.status == "error" and "broken" in v.detail


def test_forall_with_a_template_variable_in_the_reference(runs):
    v = check("all(q{b}:vegas.goodput_bps >= 400000 for b in [10, 20])", runs)
    assert v.status == "holds"
    assert v.detail == "all of 2: 400,000 >= 400,000 (yes); 800,000 >= 400,000 (yes)"
    v = check("all(q{b}:vegas.goodput_bps > 500000 for b in [10, 20])", runs)
    assert v.status == "fails" and "400,000 > 500,000 (NO)" in v.detail
    assert check("any(q{b}:vegas.goodput_bps > 500000 for b in [10, 20])", runs).status == "holds"


def test_forall_over_strings_with_a_filter_and_nested_loops(runs):
    expr = 'all({a}:vegas.goodput_bps >= {b}:vegas.goodput_bps for a in ["vegas-a"] for b in ["vegas", "q10", "q20"] if a != b)'
    assert check(expr, runs).status == "holds"


def test_forall_iterating_over_a_wildcard_list(runs):
    assert check("all(x > 0 for x in q*:vegas.goodput_bps)", runs).status == "holds"


# ---------------------------------------------------------------------- time series


def test_between_is_the_mean_of_the_series_in_the_window(runs):
    res = runs.runs["q10"][0]
    s = res.series_flows[(res.series_flows["flow"] == "vegas")]
    want = float(s[(s["time_s"] > 0.1) & (s["time_s"] <= 0.3)]["throughput_bps"].mean())
    v = check(f"between(q10:vegas.throughput_bps, 0.1, 0.3) == {want!r}", runs)
    assert v.status == "holds", v.detail
    assert v.detail.startswith("between(q10:vegas.throughput_bps, 0.1, 0.3) = ")


def test_series_max_and_queue_series(runs):
    res = runs.runs["q10"][0]
    qmax = res.series_queues[res.series_queues["queue"] == "R1->R2"]["length_pkts"].max()
    assert check(f"series_max(q10:R1->R2.length_pkts) == {qmax}", runs).status == "holds"
    assert check("series_min(q10:vegas.cwnd_pkts) > 0", runs).status == "holds"
    v = check("between(q10:vegas.nothing, 0, 1) > 0", runs)
    assert v.status == "error" and "no time series" in v.detail
    assert check("between(1, 0, 1) > 0", runs).status == "error"


# ---------------------------------------------------------------------- vegaslab.study.metrics


def test_other_functions_come_from_vegaslab_metrics_with_runs_per_seed(runs, monkeypatch):
    fake = types.ModuleType("vegaslab.study.metrics")
    fake.jain_index = lambda xs: sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))
    fake.goodput_of = lambda res, flow: float(res.value(f"{flow}.goodput_bps"))
    fake.__all__ = ["jain_index", "goodput_of"]  # only the public functions are callable
    monkeypatch.setitem(sys.modules, "vegaslab.study.metrics", fake)
    monkeypatch.setattr(vegaslab.study, "metrics", fake, raising=False)
    assert check("jain_index([1, 1, 1, 1]) == 1", runs).status == "holds"
    v = check('goodput_of(run("vegas"), "vegas") == 500000', runs)  # mean of 400,000 and 600,000
    assert v.status == "holds", v.detail
    assert check('goodput_of(run("nothere"), "vegas") > 0', runs).status == "error"
    assert check("not_a_metric(1) > 0", runs).status == "skipped"


def test_without_vegaslab_metrics_a_metric_claim_is_skipped(runs, monkeypatch):
    monkeypatch.setitem(sys.modules, "vegaslab.study.metrics", None)
    monkeypatch.delattr(vegaslab.study, "metrics", raising=False)
    v = check("jain_index([1, 1]) == 1", runs)
    assert v.status == "skipped" and "vegaslab.study.metrics" in v.detail


# ---------------------------------------------------------------------- formatting and the catalog


@pytest.mark.parametrize("value, text", [(940240, "940,240"), (217320.4, "217,320"), (0.1318, "0.1318"),
                                         (3, "3"), (2.5, "2.5"), (True, "true"), ([1, 2000], "[1, 2,000]"),
                                         (float("inf"), "inf")])
def test_fmt(value, text):
    assert fmt(value) == text


def test_every_claim_in_the_catalog_parses_and_names_existing_variants():
    for entry in catalog.list_entries(CATALOG):
        names = {s.name for s in catalog.expand(entry)}
        for c in entry.claims:
            parsed = parse(c["expr"])
            for ref in parsed.refs:
                variant = ref.template.split(":")[0]
                if "{" in variant:
                    continue
                pattern = "^" + re.escape(variant).replace("\\*", ".*").replace("\\?", ".") + "$"
                assert any(re.match(pattern, n) for n in names), f"{entry.id}: {c['expr']}: {variant}"


def test_claims_structure_is_checked_when_the_entry_is_loaded(tmp_path):
    base = (CATALOG / "va-reroute.toml").read_text()
    (tmp_path / "bad.toml").write_text(base + '\n[[meta.claim]]\ntext = "no expression"\n')
    with pytest.raises(vegaslab.ScenarioError, match=r"meta.claim\[\d+\].expr: required"):
        catalog.load_entry("bad", tmp_path)
    (tmp_path / "bad.toml").write_text(base + '\n[[meta.figures]]\nkind = "pie"\n')
    with pytest.raises(vegaslab.ScenarioError, match=r"figures\[\d+\].kind"):
        catalog.load_entry("bad", tmp_path)
    (tmp_path / "bad.toml").write_text(base.replace("[run]", "seeds = []\n\n[run]", 1))
    with pytest.raises(vegaslab.ScenarioError, match="meta.seeds"):
        catalog.load_entry("bad", tmp_path)


def test_copying_a_runset_is_not_needed_for_evaluation(runs):
    before = copy.deepcopy(runs.runs["q10"][0].flows)
    check("q10:vegas.goodput_bps > 0", runs)
    assert runs.runs["q10"][0].flows.equals(before)


def test_a_claim_that_holds_only_because_two_measured_values_are_equal_is_flagged(runs):
    tie = check("q10:vegas.goodput_bps >= vegas:vegas.retransmitted_pkts * 0 + q10:vegas.goodput_bps", runs)
    assert tie.status == "holds" and tie.by_tie and tie.ties[0].startswith("400,000 >= ")
    # Equal to a number the claim states is no tie: "at most 2" holds at 2.
    bound = check("vegas:reno.retransmitted_pkts <= 2", runs)
    assert bound.status == "holds" and not bound.ties
    # A strict win is no tie, and a claim that fails is not flagged.
    assert not check("q20:vegas.goodput_bps >= q10:vegas.goodput_bps", runs).ties
    assert not check("q10:vegas.goodput_bps > q10:vegas.goodput_bps", runs).by_tie


def test_a_tie_that_did_not_decide_the_verdict_is_not_flagged_and_one_in_a_comprehension_is(runs):
    # One item of an any() ties, another holds outright: the tie decided nothing.
    either = check("any(x >= q10:vegas.goodput_bps for x in [q10:vegas.goodput_bps, q20:vegas.goodput_bps])", runs)
    assert either.status == "holds" and not either.by_tie
    # Over a list of measured values, the comprehension variable is measured too.
    only = check("all(x >= q10:vegas.goodput_bps for x in [q10:vegas.goodput_bps])", runs)
    assert only.status == "holds" and only.by_tie


# ---------------------------------------------------------------------- time courses


def _course(dips: list[tuple[float, float]], seed: int = 1, level: float = 1e6) -> Results:
    """A 0.1 s throughput series at ``level`` for 0-200 s, at a tenth of it inside ``dips``."""
    import pandas as pd

    res = _results(seed=seed)
    t = [round(0.1 * i, 1) for i in range(1, 2001)]
    y = [level / 10 if any(a < x <= b for a, b in dips) else level for x in t]
    res.series_flows = pd.DataFrame({"time_s": t, "flow": "f1", "throughput_bps": y})
    return res


def test_a_recovery_claim_fails_when_the_series_departs_though_its_mean_clears_the_level():
    # 13 s at a tenth of 1 Mbit/s inside 40-200 s: the mean stays over 0.9 Mbit/s ...
    runs = RunSet(runs={"a": [_course([(70, 76), (140, 147)])]})
    mean_only = check("between(a:f1.throughput_bps, 40, 200) > 0.9e6", runs)
    assert mean_only.status == "holds", mean_only.detail
    # ... and the time course shows about the 13 s of the dips (the 1 s window shifts each edge)
    v = check("between(a:f1.throughput_bps, 40, 200) > 0.9e6 and "
              "seconds_below(a:f1.throughput_bps, 0.45e6, 40, 200) == 0", runs)
    assert v.status == "fails", v.detail
    seconds = evaluate(Claim("t", "seconds_below(a:f1.throughput_bps, 0.45e6, 40, 200) > 0"), runs)
    got = float(re.search(r"\[worst seed\] = ([0-9.]+)", seconds.detail).group(1))
    assert abs(got - 13) <= 1.0, seconds.detail


def test_a_recovery_claim_holds_on_a_series_that_stays_at_its_level():
    runs = RunSet(runs={"a": [_course([(10, 30)])]})   # the dip is before the claim's interval
    v = check("seconds_below(a:f1.throughput_bps, 0.45e6, 40, 200) == 0", runs)
    assert v.status == "holds", v.detail
    assert check("seconds_outside(a:f1.throughput_bps, 0.9e6, 1.1e6, 40, 200) == 0", runs).status == "holds"
    assert check("seconds_outside(a:f1.throughput_bps, 0.9e6, 1.1e6, 0, 200) == 0", runs).status == "fails"


def test_a_time_course_is_judged_by_its_worst_seed_not_the_seeds_mean():
    runs = RunSet(runs={"a": [_course([]), _course([(100, 110)], seed=2)]})
    # seed 2 departs for about 10 s; the mean of the seeds would be about 5 s
    v = check("seconds_below(a:f1.throughput_bps, 0.45e6, 40, 200) > 9", runs)
    assert v.status == "holds", v.detail


@pytest.mark.parametrize("expr, message", [
    ("seconds_below(a:f1.throughput_bps, 0.45e6, 40) == 0", "takes a reference and 3 or 4 numbers"),
    ("seconds_below(a:f1.throughput_bps, 0.45e6, 200, 40) == 0", "t0 (200) must be before t1 (40)"),
    ("seconds_outside(a:f1.throughput_bps, 2, 1, 0, 10) == 0", "lo (2) is above hi (1)"),
    ("seconds_below(a:f1.throughput_bps, 1, 0, 10, 0) == 0", "the window must be positive"),
    ("seconds_below(1, 1, 0, 10) == 0", "takes a reference first"),
    ("seconds_below(a:f1.throughput_bps, 1, 300, 400) == 0", "missing data: a:f1.throughput_bps: the series has no samples"),
])
def test_a_malformed_time_course_claim_is_an_error_naming_the_form(expr, message):
    v = check(expr, RunSet(runs={"a": [_course([])]}))
    assert v.status == "error" and message in v.detail, v.detail


def test_a_time_course_claim_and_the_figures_red_shading_find_the_hand_counted_spans():
    # A 0.1 s series at 1 Mbit/s with 0.1 Mbit/s inside (70, 76] and (140, 147]; its trailing
    # 1 s mean (ten samples) is below 0.45 Mbit/s while seven or more of the ten are in a dip:
    # samples 70.7-76.3 and 140.7-147.3, each standing for the 0.1 s ending at it.
    import numpy as np

    from vegaslab.report.figures import departures as shaded
    from vegaslab.study.claims.timecourse import departures

    res = _course([(70, 76), (140, 147)])
    t, y = res.series_flows["time_s"].to_numpy(), res.series_flows["throughput_bps"].to_numpy(float)
    got = departures(t, y, 0.45e6, np.inf, 40, 200)
    assert got["spans"] == [[70.6, 76.3], [140.6, 147.3]] and got["seconds"] == pytest.approx(12.4)
    red = shaded(t, y, 0.9e6, (40, 200))   # the figure's rule: below half the described level
    assert red["spans"] == got["spans"] and red["seconds"] == got["seconds"]


def test_the_first_samples_after_t0_are_judged_on_a_full_window():
    # One empty 0.1 s bin right after t0 is one bin of ten in the window, as anywhere else.
    import numpy as np

    from vegaslab.study.claims.timecourse import departures

    t = np.round(np.arange(1, 2001) * 0.1, 1)
    y = np.where(np.isclose(t, 40.1), 0.0, 1e6)
    assert departures(t, y, 0.45e6, np.inf, 40, 200)["seconds"] == 0.0
    assert departures(t, np.where(np.isclose(t, 100.1), 0.0, 1e6), 0.45e6, np.inf, 40, 200)["seconds"] == 0.0


def test_a_departure_is_never_counted_before_t0():
    import numpy as np

    from vegaslab.study.claims.timecourse import departures

    t = np.round(np.arange(1, 11) * 0.1, 1)
    got = departures(t, np.zeros(10), 0.5, np.inf, 0.15, 0.2)
    assert got["spans"] == [[0.15, 0.2]] and got["seconds"] == pytest.approx(0.05)
