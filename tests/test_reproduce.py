"""`vegaslab reproduce`: the runner (parallel, cache, failures), the report's tables, and an end
to end run of two small catalog entries. Tests named ``test_core_*`` need the compiled core."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

import vegaslab
from vegaslab.study.catalog import builtin_dir
from vegaslab.study import catalog, runner
from vegaslab.reproduction import reproduce
from vegaslab import cli
from vegaslab.report import write as report
from vegaslab.report.tables import summary_markdown
from vegaslab.study.claims import Claim, RunSet, Verdict
from vegaslab.results import Results
from vegaslab.sweeps.store import Store
from scenario_text import TWO_HOP

ROOT = Path(__file__).resolve().parents[1]
CATALOG = builtin_dir()  # the catalog ships as package data: vegaslab/catalog_data/
DATA = Path(__file__).parent / "data"

TINY = """
[meta]
id = "t-seeds"
title = "Two seeds"
paper = "test-paper"
runs = 2
notes = "A note that explains the disagreement."

[meta.quick]
set = { "run.duration" = "1s" }
seeds = [7]
note = "1 s"

[[meta.claim]]
text = "Vegas retransmits nothing"
expr = "vegas:f1.retransmitted_pkts == 0"

[[meta.claim]]
text = "A claim about a variant that fails"
expr = "broken:f1.goodput_bps > 0"

[[meta.claim]]
text = "A claim that fails"
expr = "vegas:f1.goodput_bps > 10 * newreno:f1.goodput_bps"

[run]
duration = "2s"
""" + TWO_HOP + """
[monitor]
cwnd = true
throughput = true
queues = ["R1->D1"]

[[variant]]
name = "vegas"
published = { "f1.goodput_bps" = 400000, "f1.retransmitted_pkts" = 0 }

[[variant]]
name = "newreno"
set = { "flows[0].cc" = "newreno" }
published = { "f1.goodput_bps" = 100 }

[[variant]]
name = "broken"
set = { "flows[0].start" = "-3s" }
published = { "f1.goodput_bps" = 1 }
"""


@pytest.fixture
def core():
    return pytest.importorskip("vegaslab._core")


@pytest.fixture
def cat(tmp_path) -> Path:
    d = tmp_path / "cat"
    d.mkdir()
    (d / "t-seeds.toml").write_text(TINY)
    return d


# ---------------------------------------------------------------------- planning (no core)


def test_names_are_entry_ids_or_paper_names_without_duplicates():
    entries = catalog.resolve(["vegas-a"], CATALOG)
    ids = [e.id for e in entries]
    assert {"va-reroute", "va-file", "va-buffer"} <= set(ids)
    assert all(e.paper == "vegas-a" for e in entries)
    again = catalog.resolve(["va-file", "vegas-a"], CATALOG)
    assert [e.id for e in again][0] == "va-file" and len(again) == len(entries)
    assert {e.id for e in catalog.resolve([], CATALOG, all_entries=True)} >= set(ids)
    with pytest.raises(KeyError, match="no catalog entry or paper 'nope'.*papers: .*vegas-a"):
        catalog.resolve(["nope"], CATALOG)


def test_plan_runs_every_variant_for_every_seed_and_quick_changes_both(cat):
    entry = catalog.load_entry("t-seeds", cat)
    assert entry.seeds() == [1, 2] and entry.seeds(quick=True) == [7]
    jobs = runner.plan([entry])
    assert [(j.variant, j.seed) for j in jobs] == [(v, s) for v in ("vegas", "newreno", "broken") for s in (1, 2)]
    quick = runner.plan([entry], quick=True)
    assert [(j.variant, j.seed) for j in quick] == [("vegas", 7), ("newreno", 7), ("broken", 7)]
    assert all(j.overrides[-1] == "run.duration=1s" for j in quick)
    assert runner.plan([entry], seed=5)[0].seed == 5
    assert "run.duration=1s" in entry.quick_description() and "seeds [7]" in entry.quick_description()


def test_the_cache_key_follows_the_scenario_not_the_claims_or_notes(cat):
    entry = catalog.load_entry("t-seeds", cat)
    key = runner.plan([entry])[0].key
    (cat / "t-seeds.toml").write_text(TINY.replace("A note that", "Another note that").replace(
        "Vegas retransmits nothing", "Vegas retransmits no packet"))
    assert runner.plan([catalog.load_entry("t-seeds", cat)])[0].key == key
    (cat / "t-seeds.toml").write_text(TINY.replace('duration = "2s"', 'duration = "3s"'))
    assert runner.plan([catalog.load_entry("t-seeds", cat)])[0].key != key
    keys = {j.key for j in runner.plan([entry])}
    assert len(keys) == 6  # every variant x seed is its own run


# ---------------------------------------------------------------------- table math (no core)


def _res(goodput: float) -> Results:
    res = Results.from_json((DATA / "results-small.json").read_text())
    res.flows = res.flows.copy()
    res.flows.loc[res.flows["flow"] == "vegas", "goodput_bps"] = goodput
    return res


def test_comparison_rows_give_mean_sample_std_seed_count_and_ratio():
    rows = report.variant_rows("e", "v", {"vegas.goodput_bps": 100.0, "vegas.retransmitted_pkts": 0,
                                             "reno.retransmitted_pkts": 4},
                                   [_res(90.0), _res(110.0), _res(100.0)], "")
    g, r0, r4 = rows
    assert g["ours"] == pytest.approx(100.0) and g["std"] == pytest.approx(10.0) and g["n"] == 3
    assert g["ratio"] == pytest.approx(1.0)
    assert r0["ours"] == 0 and r0["ratio"] == 1.0          # 0 published, 0 ours: agreement
    assert r4["ours"] == 2 and r4["ratio"] == pytest.approx(0.5)
    (one,) = report.variant_rows("e", "v", {"vegas.goodput_bps": 200.0}, [_res(150.0)], "")
    assert math.isnan(one["std"]) and one["n"] == 1 and one["ratio"] == pytest.approx(0.75)
    (bad,) = report.variant_rows("e", "v", {"nobody.goodput_bps": 1}, [_res(1.0)], "")
    assert math.isnan(bad["ours"]) and "nobody" in bad["note"]
    (failed,) = report.variant_rows("e", "v", {"vegas.goodput_bps": 1}, [], "boom")
    assert failed["metric"] == "(run failed)" and failed["note"] == "boom"


def test_a_mean_over_only_some_seeds_is_shown_but_never_counted_as_agreeing_with_the_paper():
    (nan_seed,) = report.variant_rows("e", "v", {"vegas.goodput_bps": 100.0},
                                          [_res(100.0), _res(math.nan), _res(100.0)], "")
    assert nan_seed["ours"] == pytest.approx(100.0) and nan_seed["n"] == 2
    assert math.isnan(nan_seed["ratio"]) and "missing value (NaN) in 1 of 3 seeds" in nan_seed["note"]
    (failed_seed,) = report.variant_rows("e", "v", {"vegas.goodput_bps": 100.0}, [_res(100.0)],
                                             "seed 2: boom")
    assert failed_seed["ours"] == pytest.approx(100.0) and math.isnan(failed_seed["ratio"])
    assert "seed 2: boom" in failed_seed["note"]
    counts = report.ratio_stats(pd.DataFrame([nan_seed, failed_seed], columns=catalog.REPRODUCE_COLUMNS))
    assert counts == {"total": 2, "within10": 0, "within25": 0}


def test_ratio_counts_and_worst_disagreements():
    t = pd.DataFrame({
        "entry": ["a"] * 6, "run": list("uvwxyz"), "metric": ["m"] * 6,
        "published": [100, 100, 100, 100, 0, math.nan], "ours": [105, 120, 300, 10, 5, 1],
        "std": [math.nan] * 6, "n": [1] * 6, "ratio": [1.05, 1.2, 3.0, 0.1, math.inf, math.nan], "note": [""] * 6,
    })
    assert report.ratio_stats(t) == {"total": 5, "within10": 1, "within25": 2}
    w = report.worst(t)
    # |log 0.1| > |log 3| > |log 1.2|; u is within 10%; y (paper 0, ours 5) is below the floor
    # (a tenth of the quantity's largest published value, 100) and listed apart.
    assert list(w["run"]) == ["x", "w", "v"]
    assert list(report.zero_mismatches(t)["run"]) == ["y"]
    assert report.disagreement(50, 100, 100) == pytest.approx(report.disagreement(200, 100, 100))


def _ranking_table(rows: list[tuple[str, str, str, float, float]]) -> pd.DataFrame:
    from vegaslab.study.comparison import ratio

    return pd.DataFrame([{"entry": e, "run": r, "metric": m, "published": p, "ours": o, "std": math.nan, "n": 1,
                          "ratio": ratio(o, p), "note": ""} for e, r, m, p, o in rows],
                        columns=catalog.REPRODUCE_COLUMNS)


def test_a_published_zero_or_one_against_our_twenty_does_not_outrank_a_throughput_off_by_a_factor_of_two_and_a_half():
    t = _ranking_table([
        ("va-buffer", "vegas-q10", "f1.retransmitted_pkts", 0, 5),      # paper 0, ours 5 (ratio inf)
        ("va-buffer", "vegas-q15", "f1.retransmitted_pkts", 1, 20),     # paper 1, ours 20 (ratio 20)
        ("va-buffer", "newreno-q10", "f1.retransmitted_pkts", 150, 160),
        ("va-reroute", "vegas", "f1.throughput_bps", 1e6, 4e5),        # a real disagreement: x2.5
        ("va-reroute", "vegas-a", "f1.throughput_bps", 9e5, 8.5e5),
    ])
    w = report.worst(t)
    assert list(w["run"])[0] == "vegas", w
    by_run = dict(zip(w["run"], w["gap"]))
    assert by_run["vegas"] == pytest.approx(math.log(2.5))
    # 20 against 1 where the paper prints 150 retransmissions elsewhere: |log(20 / 15)|
    assert by_run["vegas-q15"] == pytest.approx(math.log(20 / 15))
    # 5 against 0 is below the floor (15): no disagreement, so not listed
    assert "vegas-q10" not in by_run and math.isfinite(max(by_run.values()))


def test_a_quantity_the_paper_prints_only_as_zero_takes_its_scale_from_ours_and_stays_finite():
    t = _ranking_table([("e", "a", "f1.dropped_pkts", 0, 52), ("e", "b", "f1.dropped_pkts", 0, 3),
                        ("e", "c", "f1.throughput_bps", 1e6, 1.2e6)])
    w = report.worst(t)
    by_run = dict(zip(w["run"], w["gap"]))
    assert by_run["a"] == pytest.approx(math.log(10)) and "b" not in by_run
    assert by_run["c"] == pytest.approx(math.log(1.2))


def test_a_number_the_counts_call_within_ten_percent_is_never_listed_as_a_disagreement():
    # 0.905 is within 10% by the counts' rule (|ratio - 1| <= 0.1) though |log 0.905| > log 1.1
    t = _ranking_table([("e", "a", "f1.throughput_bps", 1e6, 0.905e6), ("e", "b", "f1.throughput_bps", 1e6, 0.85e6)])
    assert report.ratio_stats(t)["within10"] == 1
    assert list(report.worst(t)["run"]) == ["b"]


def test_published_numbers_are_printed_as_the_paper_prints_them_and_ours_to_the_same_digits():
    from vegaslab.report.tables import like, printed

    assert printed(217320) == "217,320" and printed(217320.0) == "217,320"
    assert printed(0.93) == "0.93" and printed(78.67) == "78.67" and printed(162.353) == "162.353"
    assert printed(1208387) == "1,208,387" and printed(0) == "0" and printed(math.nan) == "-"
    assert like(0.8998032, 0.93) == "0.90"            # the paper's two decimals
    assert like(925200.3, 940240) == "925,200" and like(36.0, 2) == "36"   # whole, as printed
    assert like(160.24, 161.3) == "160.2" and like(160.2141, 162.353) == "160.214"
    assert like(12345678.9, 12) == "12,345,679"
    assert like(0.000912, 0.013) == "0.00091"         # at least two significant digits


def test_markdown_summary_shows_mean_and_std_and_verdicts(cat):
    entry = catalog.load_entry("t-seeds", cat)
    t = pd.DataFrame([{"entry": "t-seeds", "run": "vegas", "metric": "f1.goodput_bps", "published": 400000,
                       "ours": 380000.0, "std": 12345.6, "n": 2, "ratio": 0.95, "note": ""}],
                     columns=catalog.REPRODUCE_COLUMNS)
    v = Verdict(Claim("Vegas wins", "a > b", "Table 1"), "holds", "2 > 1")
    md = summary_markdown(t, [entry], {"t-seeds": [v]})
    assert "| vegas | f1.goodput_bps | 400,000 | 380,000 ± 12,300 | 0.950 |" in md
    assert "- **holds**: Vegas wins (Table 1). `a > b` → 2 > 1" in md


# ---------------------------------------------------------------------- with the core


def test_core_multi_seed_entry_with_a_failing_variant_and_a_failing_claim(core, cat, tmp_path):
    out = tmp_path / "rep"
    table = reproduce(["t-seeds"], out, directory=cat, echo=None, jobs=2)
    runs = table.attrs["runs"]
    assert runs == {"ran": 4, "cached": 0, "failed": 2, "total": 6}
    ok = table[table["run"] == "vegas"].set_index("metric")
    assert ok.loc["f1.goodput_bps", "n"] == 2 and ok.loc["f1.goodput_bps", "ours"] > 0
    broken = table[table["run"] == "broken"]
    assert broken["metric"].tolist() == ["(run failed)"] and "flows[0].start" in broken["note"].iloc[0]
    status = {v["text"]: v["status"] for v in table.attrs["verdicts"]}
    assert status == {"Vegas retransmits nothing": "holds", "A claim about a variant that fails": "error",
                      "A claim that fails": "fails"}
    page = (out / "index.html").read_text()
    assert "Disagreements with the paper" in page and "A note that explains the disagreement." in page
    assert "broken: the run failed" in page
    for seed in (1, 2):
        assert (out / "results" / "t-seeds" / "vegas" / f"seed{seed}" / "flows.parquet").is_file()
    assert not (out / "results" / "t-seeds" / "broken").exists()
    runs_table = pd.read_parquet(out / "results" / "runs.parquet")
    assert sorted(runs_table["status"]) == ["failed", "failed", "ran", "ran", "ran", "ran"]
    # the failed variant is not cached: a rerun retries it (and fails again), the rest is reused
    again = reproduce(["t-seeds"], out, directory=cat, echo=None, jobs=2)
    assert again.attrs["runs"] == {"ran": 0, "cached": 4, "failed": 2, "total": 6}
    pd.testing.assert_frame_equal(table, again)


def test_core_the_report_holds_one_entrys_results_at_a_time(core, cat, tmp_path, monkeypatch):
    import gc
    import weakref

    (cat / "t-other.toml").write_text(TINY.replace('id = "t-seeds"', 'id = "t-other"')
                                      .replace('duration = "2s"', 'duration = "1500ms"'))
    entries = catalog.resolve(["t-seeds", "t-other"], cat)
    keys_of = {e.id: {j.key for j in runner.plan([e], quick=True)} for e in entries}
    real_load, loads = runner.load, []

    def load(store_dir, keys):
        gc.collect()
        alive = sum(1 for refs, _ in loads for ref in refs if ref() is not None)
        got = real_load(store_dir, keys)
        loads.append(([weakref.ref(r) for r in got.values()], alive))
        assert any(set(keys) <= ks for ks in keys_of.values())  # one entry's runs
        return got

    monkeypatch.setattr(runner, "load", load)
    table = reproduce(["t-seeds", "t-other"], tmp_path / "rep", directory=cat, echo=None, quick=True, jobs=2)
    assert [len(refs) for refs, _ in loads] == [2, 2]  # each entry's vegas and newreno; broken failed
    assert [alive for _, alive in loads] == [0, 0]  # the first entry's Results were gone before the second's
    assert set(table["entry"]) == {"t-seeds", "t-other"}


def test_core_an_interrupted_reproduce_keeps_its_finished_runs(core, cat, tmp_path):
    out = tmp_path / "rep"
    entry = catalog.load_entry("t-seeds", cat)
    jobs = [j for j in runner.plan([entry], quick=True) if j.variant != "broken"]
    first = runner.execute(jobs[:1], out / "store", n_jobs=1, progress=False)  # "interrupted" after one
    assert first.ran == 1
    table = reproduce(["t-seeds"], out, directory=cat, echo=None, quick=True, jobs=2)
    assert table.attrs["runs"] == {"ran": 1, "cached": 1, "failed": 1, "total": 3}


def test_core_reproduce_quick_end_to_end_on_two_catalog_entries_with_cache_reuse(core, tmp_path, monkeypatch, capsys):
    out = tmp_path / "report"
    monkeypatch.setenv("VEGASLAB_CATALOG", str(CATALOG))
    code = cli.main(["reproduce", "va-reroute", "va-file", "--quick", "--jobs", "2", "--out", str(out),
                     "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "claim HOLDS" in printed
    for f in ("index.html", "summary.md", "summary.csv", "results/comparison.parquet", "results/claims.parquet",
              "results/runs.parquet", "results/va-file/vegas-5MB/seed1/flows.parquet",
              "results/va-reroute/newreno/seed1/series_flows.parquet", "results/va-reroute/vegas/seed1/meta.json"):
        assert (out / f).is_file(), f
    n = len(runner.plan(catalog.resolve(["va-reroute", "va-file"]), quick=True))
    md = (out / "summary.md").read_text()
    assert f"runs: {n} computed, 0 from the store, 0 failed (of {n})" in md
    assert "## va-reroute:" in md and "## va-file:" in md and "Claims held:" in md
    page = (out / "index.html").read_text()
    assert page.count('class="experiment"') == 2 and "Quick mode" in page
    assert 'src="http' not in page and "<link" not in page  # self-contained
    claims = pd.read_parquet(out / "results" / "claims.parquet")
    assert set(claims["entry"]) == {"va-reroute", "va-file"}
    assert claims["status"].isin(["holds", "fails"]).all(), claims[["expr", "detail"]].to_string()
    assert (claims["status"] == "holds").sum() >= 5
    store = Store(out / "store")
    assert len(store) == n and not store.broken()
    commits = {p: p.stat().st_mtime_ns for p in (out / "store" / "data").rglob("*") if p.is_file()}

    # the second run computes nothing: every run comes from the cache, untouched
    assert cli.main(["reproduce", "va-reroute", "va-file", "--quick", "--jobs", "2", "--out", str(out),
                     "--no-progress"]) == 0
    assert f"runs: 0 computed, {n} from the store, 0 failed (of {n})" in (out / "summary.md").read_text()
    assert {p: p.stat().st_mtime_ns for p in (out / "store" / "data").rglob("*") if p.is_file()} == commits

    # a truncated stored file is detected: the runs of its commit are computed again, the rest reused
    victim = min(store.commits(), key=lambda c: len(c.runs))
    flows = victim.path / "flows.parquet"
    flows.write_bytes(flows.read_bytes()[:-100])
    table = reproduce(["va-reroute", "va-file"], out, echo=None, quick=True, jobs=2)
    k = len(victim.runs)
    assert table.attrs["runs"] == {"ran": k, "cached": n - k, "failed": 0, "total": n}
    assert len(Store(out / "store")) == n and not Store(out / "store").broken()


def test_core_cli_reproduce_exits_1_when_a_run_failed_and_2_for_bad_arguments(core, cat, tmp_path, monkeypatch):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(cat))
    assert cli.main(["reproduce", "test-paper", "--quick", "--jobs", "1", "--out", str(tmp_path / "o"),
                     "--no-progress"]) == 1
    assert (tmp_path / "o" / "index.html").is_file()
    assert cli.main(["reproduce", "t-seeds", "--jobs", "0", "--out", str(tmp_path / "p")]) == 2
    assert not (tmp_path / "p").exists()


# ---------------------------------------------------------------------- cache key and provenance

TRACED = """
[meta]
id = "traced"

[run]
duration = "1s"

[[links]]
endpoints = ["S1", "D1"]
bandwidth = "1Mbps"
delay_trace = "trace.txt"

[[flows]]
name = "f1"
from = "S1"
to = "D1"
cc = "vegas"
"""


@pytest.fixture
def traced(tmp_path) -> Path:
    d = tmp_path / "tcat"
    d.mkdir()
    (d / "trace.txt").write_text("0 10ms\n")
    (d / "traced.toml").write_text(TRACED)
    return d


def test_core_the_cache_key_follows_the_content_of_a_referenced_delay_trace(core, traced):
    key = runner.plan([catalog.load_entry("traced", traced)])[0].key
    (traced / "trace.txt").write_text("0 40ms\n")
    assert runner.plan([catalog.load_entry("traced", traced)])[0].key != key
    (traced / "trace.txt").write_text("0 10ms\n")
    assert runner.plan([catalog.load_entry("traced", traced)])[0].key == key


def test_core_reproduce_reruns_after_a_delay_trace_changed_and_reports_the_new_numbers(core, traced, tmp_path):
    out = tmp_path / "rep"
    first = reproduce(["traced"], out, directory=traced, echo=None, jobs=1)
    assert first.attrs["runs"]["ran"] == 1
    meta = json.loads((out / "results" / "traced" / "traced" / "seed1" / "meta.json").read_text())
    (traced / "trace.txt").write_text("0 200ms\n")
    again = reproduce(["traced"], out, directory=traced, echo=None, jobs=1)
    assert again.attrs["runs"] == {"ran": 1, "cached": 0, "failed": 0, "total": 1}
    meta2 = json.loads((out / "results" / "traced" / "traced" / "seed1" / "meta.json").read_text())
    assert meta2["provenance"]["scenario"]["files"][0]["sha256"] != meta["provenance"]["scenario"]["files"][0]["sha256"]


def test_core_an_invalid_variant_fails_at_planning_without_a_worker(core, cat):
    jobs = runner.plan([catalog.load_entry("t-seeds", cat)])
    broken = [j for j in jobs if j.variant == "broken"]
    assert broken and all("flows[0].start" in j.error for j in broken)
    assert all(not j.error for j in jobs if j.variant != "broken")


def test_core_reproduce_records_provenance_per_run_and_in_the_report(core, cat, tmp_path):
    out = tmp_path / "rep"
    reproduce(["t-seeds"], out, directory=cat, echo=None, quick=True, jobs=2)
    run_dir = out / "results" / "t-seeds" / "newreno" / "seed7"
    res = Results.from_dir(run_dir)  # the exported run directory is consistent on its own
    prov = res.meta["provenance"]
    assert prov["seed"] == 7 and prov["overrides"] == ["flows[0].cc=newreno", "run.duration=1s"]
    assert prov["scenario"] == vegaslab.normalize(cat / "t-seeds.toml", seed=7, overrides=prov["overrides"])
    assert prov["source_revision"] == vegaslab.source_revision() and prov["core_version"] == vegaslab.core_version()
    summary = json.loads((out / "results" / "provenance.json").read_text())
    assert {r["dir"] for r in summary["runs"]} == {"t-seeds/vegas/seed7", "t-seeds/newreno/seed7"}
    assert summary["builds"][0]["source_revision"] == vegaslab.source_revision()
    runs = pd.read_parquet(out / "results" / "runs.parquet")
    ok = runs[runs["status"] != "failed"]
    assert ok["scenario_sha256"].str.len().eq(64).all()
    assert f"source revision {vegaslab.source_revision()}" in (out / "summary.md").read_text()
    assert f"source revision {vegaslab.source_revision()}" in (out / "index.html").read_text()


DUPLICATE = """
[meta]
id = "dup"

[run]
duration = "1s"
""" + TWO_HOP + """
[[variant]]
name = "plain"

[[variant]]
name = "explicit-vegas"
set = { "flows[0].cc" = "vegas" }
"""


def test_core_two_variants_that_resolve_to_one_run_are_computed_once_and_both_reported(core, tmp_path):
    d = tmp_path / "dcat"
    d.mkdir()
    (d / "dup.toml").write_text(DUPLICATE)
    out = tmp_path / "rep"
    table = reproduce(["dup"], out, directory=d, echo=None, jobs=1, progress=False)
    assert table.attrs["runs"] == {"ran": 1, "cached": 0, "failed": 0, "total": 1}  # one distinct run
    for variant in ("plain", "explicit-vegas"):
        assert (out / "results" / "dup" / variant / "seed1" / "flows.parquet").is_file(), variant
    runs = pd.read_parquet(out / "results" / "runs.parquet")
    assert sorted(runs["variant"]) == ["explicit-vegas", "plain"] and runs["key"].nunique() == 1


def test_core_a_run_a_sweep_stored_with_a_shadowing_parameter_is_a_failed_run_not_a_stored_one(core, cat, tmp_path):
    from vegaslab.sweeps.engine import execute

    out = tmp_path / "rep"
    (job,) = [j for j in runner.plan([catalog.load_entry("t-seeds", cat)], quick=True) if j.variant == "vegas"]
    spec = dataclasses.replace(job.prepared.spec, params={"limit_pkts": 1})  # the same run, a parameter named like queues.limit_pkts
    assert execute([spec], out / "store", scheduler="synchronous").ran == 1
    table = reproduce(["t-seeds"], out, directory=cat, echo=None, quick=True, jobs=1, progress=False)
    failed = table[table["metric"] == "(run failed)"]
    assert "vegas" in set(failed["run"]) and "cannot be rebuilt" in " ".join(failed["note"])
    assert table.attrs["runs"]["failed"] == 2  # the broken variant and this one
