"""Robustness studies: study files, the points they plan, the per-seed verdicts and
the command, on a tiny catalog of one two-second Reno run (runs in this process)."""
from __future__ import annotations

import json

import pytest
from scenario_text import ONE_LINK

from vegaslab.report import robustness_text as rt
from vegaslab.study import robustness as rb

ENTRY = """
[meta]
id = "tiny"
title = "one Reno flow over one link"
paper = "test"

[[meta.claim]]
text = "the flow gets more than 600 kbit/s"
expr = "tiny:f1.throughput_bps > 600000"

[run]
duration = "2s"

""" + ONE_LINK

STUDY = """
[study]
entry = "tiny"
claim = "the flow gets more than 600 kbit/s"
conclusion = "the flow gets more than 600 kbit/s"
default_reason = "it is a test."
seeds = 10

[study.figure]
expr = "tiny:f1.throughput_bps / 1000"
label = "throughput in kbit/s"

[[study.factor]]
name = "bandwidth"
path = "links[0].bandwidth"
values = ["1Mbps", "500kbps", "2Mbps"]
default = "1Mbps"
reason = "not given; 500 kbit/s and 2 Mbit/s bracket it"

[[study.factor]]
name = "delay"
levels = { short = ["links[0].delay=5ms"], long = ["links[0].delay=50ms"] }
default = "short"
reason = "not given"

[[study.pair]]
factors = ["bandwidth", "delay"]
"""


@pytest.fixture
def tiny(tmp_path):
    catalog = tmp_path / "catalog"
    studies = tmp_path / "studies"
    catalog.mkdir()
    studies.mkdir()
    (catalog / "tiny.toml").write_text(ENTRY)
    (studies / "tiny.toml").write_text(STUDY)
    return catalog, studies


def test_the_wilson_interval_decides_only_with_enough_seeds():
    assert rb.wilson(4, 4)[0] > 0.5          # 4 of 4: holds
    assert rb.wilson(3, 3)[0] < 0.5          # 3 of 3: not yet decisive
    assert rb.wilson(0, 4)[1] < 0.5          # 0 of 4: fails
    lo, hi = rb.wilson(5, 10)
    assert lo < 0.5 < hi
    assert rb.wilson(7, 10) == pytest.approx((0.3968, 0.8922), abs=1e-4)  # the textbook value


def test_a_study_plans_the_default_each_level_alone_and_the_pairs_non_default_combinations(tiny):
    _, studies = tiny
    st = rb.load_study(studies / "tiny.toml")
    labels = [p.label() for p in rb.points(st)]
    assert labels == ["all defaults", "bandwidth = 500kbps", "bandwidth = 2Mbps", "delay = long",
                      "bandwidth = 500kbps, delay = long", "bandwidth = 2Mbps, delay = long"]
    # Every point sets every factor, the defaults included, in factor order.
    assert rb.points(st)[3].overrides == ("links[0].bandwidth=1Mbps", "links[0].delay=50ms")


def test_a_conclusion_is_judged_per_seed_at_every_point_and_a_rerun_computes_nothing(tiny, tmp_path):
    catalog, studies = tiny
    st = rb.load_study(studies / "tiny.toml")
    r = rb.run_study(st, tmp_path / "store", catalog=catalog, scheduler="synchronous")
    assert r.runs == 6 * 10 and r.computed == 60
    assert (r.default.holds, r.default.seeds, r.default.status) == (10, 10, "holds")
    assert r.at({"bandwidth": "500kbps"}).status == "fails"
    assert r.at({"bandwidth": "2Mbps"}).status == "holds"
    assert r.verdict == "holds only under a narrow set-up"
    assert "fails at 2 (bandwidth = 500kbps; bandwidth = 500kbps, delay = long)" in r.sentence()
    again = rb.run_study(st, tmp_path / "store", catalog=catalog, scheduler="synchronous")
    assert again.computed == 0 and [p.holds for p in again.points] == [p.holds for p in r.points]


def fail_at_2mbps(prepared, text, types):
    """The worker's run function: the runs at 2 Mbit/s fail as a simulation would."""
    from vegaslab.sweeps import engine

    if "links[0].bandwidth=2Mbps" in prepared.spec.overrides:
        return engine.WorkerResult(prepared.key, None, "tiny.toml: simulated failure at 2Mbps", 0.0, "test")
    return engine.run_payload(prepared, text, types)


def test_a_point_whose_runs_fail_is_an_error_never_a_pass(tiny, tmp_path):
    catalog, studies = tiny
    r = rb.run_study(rb.load_study(studies / "tiny.toml"), tmp_path / "store", catalog=catalog,
                     scheduler="synchronous", run_fn=fail_at_2mbps)
    bad = r.at({"bandwidth": "2Mbps"})
    assert bad.status == "error" and "simulated failure at 2Mbps" in bad.errors[0]
    assert r.at({"bandwidth": "500kbps"}).status == "fails"
    assert r.verdict == "error"


@pytest.mark.parametrize("edit, field", [
    (lambda s: s.replace("seeds = 10", "seeds = 9"), r"study\.seeds: must be a whole number from 10"),
    (lambda s: s.replace('reason = "not given"\n', ''), r"study\.factor\[1\]\.reason: a factor the paper leaves open needs"),
    (lambda s: s.replace('default = "short"', 'default = "short"\nstated = { level = "medium", where = "s", quote = "q" }'),
     r"study\.factor\[1\]\.stated\.level: must be one of the levels \(short, long\)"),
    (lambda s: s.replace('default = "short"', 'default = "short"\nstated = { level = "short" }'),
     r"study\.factor\[1\]\.stated: must be a table"),
    (lambda s: s.replace('label = "throughput in kbit/s"', 'label = "x"\nthreshold = 0'), r"study\.figure\.threshold"),
    (lambda s: s.replace('default = "short"', 'default = "medium"'), r"study\.factor\[1\]\.default: must be one of the levels \(short, long\)"),
    (lambda s: s.replace('factors = ["bandwidth", "delay"]', 'factors = ["bandwidth", "jitter"]'), r"study\.pair\[0\]\.factors"),
    (lambda s: s.replace("conclusion =", "conclusoin ="), r"study\.conclusoin: unknown field"),
    (lambda s: s.replace('values = ["1Mbps", "500kbps", "2Mbps"]', 'values = ["1Mbps", "1Mbps"]'), r"study\.factor\[0\]\.values: '1Mbps' is listed twice"),
    (lambda s: s + "\n[other]\n", r"the file must hold one \[study\] table"),
])
def test_bad_study_files_are_errors_naming_the_file_and_field(tiny, edit, field):
    _, studies = tiny
    path = studies / "tiny.toml"
    path.write_text(edit(STUDY))
    with pytest.raises(rb.StudyError, match=field) as exc:
        rb.load_study(path)
    assert str(exc.value).startswith(str(path))


def test_a_claim_the_entry_does_not_have_is_an_error_naming_the_field(tiny):
    catalog, studies = tiny
    (studies / "tiny.toml").write_text(STUDY.replace('claim = "the flow', 'claim = "a flow'))
    with pytest.raises(rb.StudyError, match=r"study\.claim: no claim of tiny has this id or text"):
        rb.plan(rb.load_study(studies / "tiny.toml"), catalog)


def test_the_command_writes_the_verdict_table_and_a_figure_per_factor(tiny, tmp_path, monkeypatch, capsys):
    from vegaslab.cli import main

    catalog, studies = tiny
    monkeypatch.setenv("VEGASLAB_CATALOG", str(catalog))
    out = tmp_path / "out"
    assert main(["robustness", "--studies", str(studies), "--out", str(out), "--scheduler", "synchronous",
                 "--no-progress"]) == 0
    text = (out / "robustness.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| tiny |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    saved = json.loads((out / "robustness" / "tiny.json").read_text())
    means = [sum(p["values"]) / len(p["values"]) for p in saved["points"]]
    assert cells[:4] == ["tiny", "the flow gets more than 600 kbit/s", "throughput in kbit/s", rt.fmt(means[0])]
    assert cells[5] == f"{rt.fmt(min(means))} to {rt.fmt(max(means))}"
    assert min(means) < 500 < 1000 < max(means)   # the 500 kbit/s and 2 Mbit/s points
    assert cells[6] in ("holds (10/10 seeds)", "holds (10/10 seeds, one run)")
    assert cells[7] == "**holds only under a narrow set-up**"
    assert sorted(p.name for p in (out / "robustness").iterdir()) == ["tiny-0.png", "tiny-1.png", "tiny.json"]
    assert main(["robustness", "nosuch", "--studies", str(studies), "--out", str(out)]) == 2
    assert "no study for 'nosuch'" in capsys.readouterr().err


#: The headline claims that fail at our default and that a built-in study takes up, with the
#: causes their entries' notes name (docs/reproductions.md, "How robust are the conclusions?").
STUDIED_HEADLINES = {
    "va-buffer#vegasa-retransmits-most-2", "va-geo#vegasa-gets-newreno-per", "va-leo#vegasa-throughput-largest-1",
    "va-hibw-bias#vegasa-gives-s3-512", "va-old-new#vegasa-per-flow-throughputs",
    "va-newreno-share#newreno-gets-vegasa-3", "va-newreno-share#vegasa-gets-bottleneck-vegas",
    "va-six-flows#vegas-flow-gets-newreno", "va-six-flows#each-s1-s3-gets",
    "av-mix#low-fair-utilisation-stable-around", "av-onoff-150#adavegas-fairness-very-similar",
    "lte-alpha-beta#alpha-beta-20-40", "lte-alpha-beta#doubling-alpha-beta-20", "rv-load#load-1-rovegas-achieves",
    "wf-net1-queue#one-way-larger-queues", "wf-net1-queue#one-way-q-between", "wf-net1-queue#two-way-utilisation-varies",
    "wf-net1-red#alpha-red-min-beta", "wf-net2#100-105-cbr-traffic", "wf-net3#alpha-beta-slightly-below",
    "wf-net3#network-2-reno-suffers", "wf-net4#link-utilisation-32-nps", "wf-net4#link-utilisation-55-pareto",
    "wf-net4#reno-loses-3-6", "wf-net4#crossover-near-alpha-beta",
}


def test_the_built_in_studies_load_name_real_claims_by_id_and_have_a_figure():
    studies = rb.list_studies()
    assert {f"{st.entry}#{st.claim}" for st in studies} == STUDIED_HEADLINES
    for st in studies:
        assert st.path.stem == st.name      # a built-in study's file is named after it
        p = rb.plan(st)
        assert p.claim["id"] == st.claim and p.jobs     # by id: a claim's text may be corrected
        assert st.figure and st.figure_label, st.entry


def test_the_report_gets_the_section_from_reproduce_and_robustness_updates_it(tiny, tmp_path, monkeypatch):
    from vegaslab.cli import main
    from vegaslab.report.robustness import END, START

    catalog, studies = tiny
    monkeypatch.setenv("VEGASLAB_CATALOG", str(catalog))
    out = tmp_path / "out"
    assert main(["reproduce", "tiny", "--out", str(out), "--scheduler", "synchronous", "--no-progress"]) == 0
    page = (out / "index.html").read_text()
    assert page.count(START) == page.count(END) == 1
    assert "No robustness study has been run" in page
    assert 'id="robustness"' not in page and 'href="#robustness"' not in page   # no empty box, no dead link
    assert main(["robustness", "--studies", str(studies), "--out", str(out), "--scheduler", "synchronous",
                 "--no-progress", "--no-ns2"]) == 0
    page = (out / "index.html").read_text()
    section = page[page.index(START):page.index(END)]
    contents = page[page.index('id="contents"'):page.index("</nav>")]
    assert 'href="#robustness"' in contents and page.index('id="papers"') < page.index(START)
    assert "How robust are the papers" in section and "No robustness study" not in section
    assert 'href="#exp-tiny"' in section and "holds only under a narrow set-up" in section
    assert section.count("data:image/png;base64,") == 2   # the two factors' figures, embedded
    # Reproducing again keeps the section: it is drawn from the saved summaries.
    assert main(["reproduce", "tiny", "--out", str(out), "--scheduler", "synchronous", "--no-progress"]) == 0
    assert "holds only under a narrow set-up" in (out / "index.html").read_text()


def test_the_figure_is_measured_per_seed_beside_the_verdict(tiny):
    catalog, studies = tiny
    r = rb.run_study(rb.load_study(studies / "tiny.toml"), studies.parent / "store", catalog=catalog,
                     scheduler="synchronous")
    d = r.default
    assert len(d.values) == d.seeds == 10
    assert all(600 < v < 1000 for v in d.values)  # kbit/s on a 1 Mbit/s link, the claim holding
    slow = r.at({"bandwidth": "500kbps"})
    assert slow.status == "fails" and all(v < 500 for v in slow.values)


def test_a_figure_that_cannot_be_computed_makes_the_point_an_error_never_a_blank(tiny):
    catalog, studies = tiny
    (studies / "tiny.toml").write_text(STUDY.replace('"tiny:f1.throughput_bps / 1000"', '"tiny:f1.no_such_column"'))
    r = rb.run_study(rb.load_study(studies / "tiny.toml"), studies.parent / "store", catalog=catalog,
                     scheduler="synchronous")
    assert r.default.status == "error" and "figure" in r.default.errors[0]
    assert r.verdict == "error"


def test_a_figure_that_is_not_an_expression_is_an_error_naming_the_field(tiny):
    _, studies = tiny
    (studies / "tiny.toml").write_text(STUDY.replace('"tiny:f1.throughput_bps / 1000"', '"import os"'))
    with pytest.raises(rb.StudyError, match=r"study\.figure\.expr: not an expression of the claim language"):
        rb.load_study(studies / "tiny.toml")


def test_the_summary_round_trips_through_its_json_file(tiny, tmp_path):
    catalog, studies = tiny
    r = rb.run_study(rb.load_study(studies / "tiny.toml"), tmp_path / "store", catalog=catalog,
                     scheduler="synchronous")
    s = rb.summary(r, rb.figure(r, tmp_path / "robustness"))
    assert s["figures"] == ["tiny-0.png", "tiny-1.png"]
    rb.save_summary(s, tmp_path / "robustness")
    assert rb.load_summaries(tmp_path / "robustness") == [s]
    assert rt.markdown([s]) == rt.markdown(rb.load_summaries(tmp_path / "robustness"))


def test_an_unreadable_summary_is_set_aside_and_named_never_shown_as_a_result(tmp_path):
    (tmp_path / "broken.json").write_text("{not json")
    [s] = rb.load_summaries(tmp_path)
    assert s == {"file": "broken.json", "set_aside": s["set_aside"]} and "not JSON" in s["set_aside"]
    text = rt.markdown([s])
    assert "| robustness/broken.json | set aside: not JSON" in text and "0 studies" in text
    [line] = rb.problems([s], tmp_path)
    assert line.startswith(f"{tmp_path / 'broken.json'}: set aside")


@pytest.mark.parametrize("statuses, verdict", [
    (["holds", "holds"], "robust"),
    (["holds", "fails", "mixed"], "holds only under a narrow set-up"),
    (["fails", "fails"], "not reproducible with any plausible set-up"),
    (["holds", "mixed"], "undecided"),        # no point fails: holding where decided is not robustness
    (["fails", "mixed"], "undecided"),        # no point holds: failing where decided is not "none holds"
    (["mixed"], "undecided"),
    ([], "undecided"),                        # no point has the paper's stated set-up
])
def test_the_verdict_needs_points_decided_each_way(statuses, verdict):
    assert rb.judge(statuses) == verdict


def test_each_point_is_an_exact_test_corrected_for_the_studys_number_of_points():
    assert rb.point_alpha(10) == pytest.approx(0.005)
    assert rb.half_tail(9, 10) == pytest.approx(11 / 1024) and rb.half_tail(0, 10) == 1.0
    assert rb.decide(10, 10, rb.point_alpha(10)) == "holds" and rb.decide(9, 10, rb.point_alpha(10)) == "mixed"
    assert rb.decide(0, 10, rb.point_alpha(10)) == "fails" and rb.decide(1, 10, rb.point_alpha(4)) == "mixed"
    assert rb.exact_interval(7, 10, 0.05) == pytest.approx((0.3475, 0.9333), abs=1e-4)  # Clopper-Pearson, textbook
    assert rb.min_seeds(25) == 10 and rb.min_seeds(26) == 11 and rb.min_seeds(52) == 12


def test_the_chance_that_any_point_of_a_study_is_wrong_stays_below_five_percent():
    """The family-wise error rate the correction promises, exactly, for a claim that holds for
    exactly half the seeds at every point, over the sizes studies may have. (95% Wilson
    intervals with the same correction break it: 8.3% at 4 points and 10 seeds.)"""
    worst = max(rb.false_verdict_rates(n, m, 0.5)["any point"]
                for m in range(1, 103) for n in range(rb.min_seeds(m), 31))
    assert worst <= rb.FAMILY_ALPHA


def test_a_coin_flip_claim_is_called_narrow_at_most_five_percent_of_the_time():
    """The rule's false-"narrow" rate, exactly, for a claim that holds at each seed with the same
    probability at every point (so "narrow" is always wrong), over the studies' sizes: at most
    5%. The same measure finds the rule it replaced wrong about half the time."""
    worst = max(rb.false_verdict_rates(n, m, p)["narrow"]
                for m in range(2, 61) for n in range(rb.min_seeds(m), 31)
                for p in [i / 20 for i in range(1, 20)])
    assert worst <= 0.05
    assert worst < 0.001   # the bound vegaslab.study.robustness and docs/robustness-format.md state
    # The former rule: 95% intervals, no correction, 4 seeds, "narrow" when some point holds and
    # another does not; a point held only at 4 of 4 (chance 1/16 for a coin flip).
    assert rb.wilson(4, 4)[0] > 0.5 > rb.wilson(3, 4)[0]
    assert 1 - (1 - 1 / 16) ** 10 == pytest.approx(0.476, abs=1e-3)


def test_the_exact_rates_are_the_rates_of_the_codes_own_verdicts_on_simulated_studies():
    """status_chances and false_verdict_rates are the frequencies of PointResult.status and
    judge() on simulated studies, in a setting where every status and verdict is common: 3 points
    of 10 seeds, each seed holding with probability 0.85 (20,000 studies)."""
    import numpy as np

    rng = np.random.default_rng(1)
    alpha, studies = rb.point_alpha(3), 20_000
    statuses, verdicts = [], []
    for holds in rng.binomial(10, 0.85, size=(studies, 3)):
        points = [rb.PointResult(rb.Point({}, ()), holds=int(k), seeds=10, distinct=10, alpha=alpha) for k in holds]
        statuses += [p.status for p in points]
        verdicts.append(rb.judge([p.status for p in points]))
    ph, pf = rb.status_chances(10, 3, 0.85)
    exact = rb.false_verdict_rates(10, 3, 0.85)
    assert 0.15 < ph < 0.5   # common enough for the comparison to mean something
    n = len(statuses)
    assert statuses.count("holds") / n == pytest.approx(ph, abs=4 * (ph * (1 - ph) / n) ** 0.5)
    assert statuses.count("fails") / n == pytest.approx(pf, abs=4 * (max(pf, 1e-9) / n) ** 0.5 + 1e-5)
    robust = verdicts.count("robust") / studies
    assert robust == pytest.approx(exact["robust"], abs=4 * (exact["robust"] / studies) ** 0.5)


def test_a_point_whose_seeds_all_give_the_same_run_rests_on_one_run_with_its_margin():
    one = rb.PointResult(rb.Point({}, ()), holds=10, seeds=10, values=[1.02] * 10, distinct=1, threshold=1.0)
    assert one.single_run and one.status == "holds" and one.margin == pytest.approx(0.02)
    assert one.interval == rb.exact_interval(1, 1, one.alpha)   # one run is no share of seeds
    shared = rb.PointResult(rb.Point({}, ()), holds=10, seeds=10, distinct=3, alpha=rb.point_alpha(10))
    assert not shared.single_run and shared.status == "holds"


STATED = STUDY.replace('default = "1Mbps"\n', 'default = "1Mbps"\nstated = { level = "1Mbps", where = "section 1", '
                       'quote = "a 1 Mbit/s link" }\n')


def test_the_verdict_is_judged_at_the_papers_stated_set_up_and_departures_are_findings(tiny, tmp_path):
    catalog, studies = tiny
    (studies / "tiny.toml").write_text(STATED)
    st = rb.load_study(studies / "tiny.toml")
    assert [st.factor("bandwidth").provenance(x) for x in ("1Mbps", "500kbps")] == ["stated", "departure"]
    assert st.factor("delay").provenance("long") == "assumption"
    r = rb.run_study(st, tmp_path / "store", catalog=catalog, scheduler="synchronous")
    # Stated: the default and delay = long hold; 500 kbit/s fails only as a departure.
    assert [p.point.label() for p in r.stated_points] == ["all defaults", "delay = long"]
    assert r.verdict == "robust"
    slow = r.at({"bandwidth": "500kbps"})
    assert slow.departures == (("bandwidth", "500kbps", "1Mbps"),) and slow.status == "fails"
    assert ("Departing from the paper: where bandwidth = 500kbps instead of the stated 1Mbps, it fails at bandwidth = "
            "500kbps; bandwidth = 500kbps, delay = long.") in r.sentence()
    s = rb.summary(r)
    assert s["factors"][0]["provenance"] == {"1Mbps": "stated", "500kbps": "departure", "2Mbps": "departure"}
    assert s["rule"]["stated_points"] == 2 and s["points"][1]["departures"][0]["stated"] == "1Mbps"
    assert "departs: bandwidth = 500kbps, stated 1Mbps" in rt.markdown([s])


def test_a_study_with_too_few_seeds_for_its_points_is_refused_naming_the_minimum(tiny):
    _, studies = tiny
    many = ", ".join(f'"{i}kbps"' for i in range(600, 1600, 25))   # 40 levels, paired with delay: 80 points
    (studies / "tiny.toml").write_text(STUDY.replace('values = ["1Mbps", "500kbps", "2Mbps"]\ndefault = "1Mbps"',
                                                     f'values = [{many}]\ndefault = "600kbps"'))
    with pytest.raises(rb.StudyError, match=r"study\.seeds: 10 seeds cannot decide any of the study's 80 points.*at "
                                            r"least 12"):
        rb.load_study(studies / "tiny.toml")


def test_a_built_in_study_runs_in_quick_mode_and_says_so(tmp_path):
    """`vegaslab robustness --quick` end to end on the cheapest built-in study: every point and
    seed planned and judged, the summary and its text marked quick."""
    from vegaslab.cli import main

    out = tmp_path / "out"
    assert main(["robustness", "rv-load", "--quick", "--out", str(out), "--scheduler", "synchronous",
                 "--no-progress", "--no-ns2"]) == 0
    saved = json.loads((out / "robustness" / "rv-load.json").read_text())
    assert saved["quick"] is True and saved["sentence"].startswith("Quick mode")
    assert saved["runs"] == 2 * 2 * 10 and all(p["seeds"] == 10 for p in saved["points"])   # points x variants x seeds
    assert "(quick)" in (out / "robustness.md").read_text()
