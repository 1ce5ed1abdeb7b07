"""Algorithm readings in robustness studies: a reading factor's level applies to every flow of its
algorithm, in the study's runs and in every catalog entry that runs the algorithm, and the
verdict names the claims it changes there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vegaslab.study import robustness as rb
from vegaslab.study.robustness.readings import reading_costs

LINK = """
[run]
duration = "5s"

[[links]]
endpoints = ["A", "B"]
bandwidth = "1Mbps"
delay = "20ms"
queue = { limit = 100 }
"""

FLOW = """
[[flows]]
name = "{name}"
from = "A"
to = "B"
cc = "{cc}"
start = "{start}"
"""


def _entry(entry_id: str, claim_expr: str, flows: list[tuple[str, str, str]], extra: str = "") -> str:
    return (f'[meta]\nid = "{entry_id}"\ntitle = "test"\npaper = "test"\n\n[[meta.claim]]\nid = "short-queue"\n'
            f'text = "the queue stays short"\nexpr = "{claim_expr}"\n'
            + LINK + "".join(FLOW.format(name=n, cc=cc, start=s) for n, cc, s in flows) + extra)


@pytest.fixture
def catalog(tmp_path) -> Path:
    """Four entries: Vegas then Reno, Reno then Vegas (Vegas is the second flow), Vegas with its
    own alpha and beta (set away from the defaults on purpose), and Reno alone."""
    d = tmp_path / "catalog"
    d.mkdir()
    (d / "vegas-first.toml").write_text(_entry("vegas-first", "vegas-first:A->B.mean_len_pkts < 8",
                                               [("f1", "vegas", "0s"), ("f2", "reno", "4s")]))
    (d / "vegas-second.toml").write_text(_entry("vegas-second", "vegas-second:f2.throughput_bps > 0",
                                                [("f1", "reno", "4s"), ("f2", "vegas", "0s")]))
    (d / "vegas-own.toml").write_text(_entry("vegas-own", "vegas-own:A->B.mean_len_pkts < 8",
                                             [("f1", "vegas", "0s")], "params = { alpha = 20, beta = 20 }\n"))
    (d / "reno-only.toml").write_text(_entry("reno-only", "reno-only:f1.throughput_bps > 0", [("f1", "reno", "0s")]))
    return d


STUDY = """
[study]
id = "vegas-first-alpha"
entry = "vegas-first"
claim = "short-queue"
conclusion = "the queue stays short"
default_reason = "it is a test."
seeds = 10

[[study.factor]]
name = "alpha and beta"
reading = "vegas"
levels = { "1, 3" = ["params.alpha=1", "params.beta=3"], "20, 20" = ["params.alpha=20", "params.beta=20"] }
default = "1, 3"
reason = "a reading of Vegas itself"
"""


def _study(tmp_path: Path, text: str = STUDY) -> rb.Study:
    path = tmp_path / "study.toml"
    path.write_text(text)
    return rb.load_study(path)


def test_a_reading_level_applies_to_every_flow_of_its_algorithm_and_no_other(tmp_path, catalog, monkeypatch):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(catalog))
    p = rb.plan(_study(tmp_path))
    at_default = [j for j, (i, _, _) in zip(p.jobs, p.index) if i == 0][0]
    assert at_default.overrides[-2:] == ("flows[0].params.alpha=1", "flows[0].params.beta=3")
    assert not any(o.startswith("flows[1].params") for o in at_default.overrides)


def test_a_reading_level_is_judged_in_every_entry_that_runs_the_algorithm(tmp_path, catalog):
    costs = reading_costs(_study(tmp_path), tmp_path / "store", catalog=catalog, scheduler="synchronous")
    (cost,) = costs
    assert cost.entries == ("vegas-first", "vegas-own", "vegas-second")  # reno-only runs no Vegas flow
    assert cost.claims == 3 and cost.level == "20, 20" and cost.default == "1, 3"
    # alpha = beta = 20 keeps about 13 packets queued, where 1, 3 keeps about 4: the claim turns.
    # vegas-own sets its own alpha and beta, which neither level replaces: its claim fails at both.
    assert cost.changed == (("vegas-first#short-queue", "paper", "holds", "fails"),)
    assert "changes 1 of their 3 claims: vegas-first#short-queue holds -> fails" in cost.text()


def test_a_study_with_a_reading_names_its_cost_in_the_verdict_and_the_summary(tmp_path, catalog, monkeypatch):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(catalog))
    study = _study(tmp_path)
    result = rb.run_study(study, tmp_path / "store", scheduler="synchronous")
    assert "The reading alpha and beta = 20, 20 (instead of 1, 3), applied to every vegas flow of the 3 entries" \
        in result.sentence()
    s = rb.summary(result)
    assert s["readings"][0]["changed"] == [{"claim": "vegas-first#short-queue", "kind": "paper",
                                            "at_default": "holds", "at_level": "fails"}]
    assert s["factors"][0]["reading"] == "vegas"
    rb.save_summary(s, tmp_path / "robustness")
    assert rb.load_summaries(tmp_path / "robustness")[0]["readings"] == s["readings"]


@pytest.mark.parametrize("edit, field", [
    (('reading = "vegas"', 'reading = "vegas-z"'), "study.factor[0].reading"),
    (('reading = "vegas"', "reading = 3"), "study.factor[0].reading"),
    (('"params.alpha=20"', '"flows[0].params.alpha=20"'), "study.factor[0].levels.20, 20"),
])
def test_a_reading_must_name_an_algorithm_and_give_overrides_relative_to_a_flow(tmp_path, edit, field):
    with pytest.raises(rb.StudyError, match=re.escape(f"study.toml: {field}: ")):
        _study(tmp_path, STUDY.replace(*edit))


def test_a_reading_of_an_algorithm_no_variant_runs_is_refused_when_planned(tmp_path, catalog, monkeypatch):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(catalog))
    study = _study(tmp_path, STUDY.replace('reading = "vegas"', 'reading = "vegas-a"').replace(
        '"params.alpha=1", "params.beta=3"', '"params.equal_throughput=increase"').replace(
        '"params.alpha=20", "params.beta=20"', '"params.equal_throughput=hold"'))
    with pytest.raises(rb.StudyError, match=r"study\.factor\[0\]\.levels\.20, 20: level '20, 20' of the reading "
                                            r"'alpha and beta' changes no run: no variant the study runs has a vegas-a"):
        rb.plan(study)
