"""The scenario catalog: entries, variants, comparison with published numbers, and the
benchmark scenario. Tests marked ``core`` in their name need the compiled core."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import vegaslab
from vegaslab.study.catalog import builtin_dir
from vegaslab.study import catalog
from vegaslab.reproduction import reproduce
from vegaslab.report.tables import summary_markdown
from scenario_text import TWO_HOP

ROOT = Path(__file__).resolve().parents[1]
CATALOG = builtin_dir()  # the catalog ships as package data: vegaslab/catalog_data/
DATA = Path(__file__).parent / "data"

BASE = """
[run]
duration = "2s"
""" + TWO_HOP + """
[monitor]
queues = ["R1->D1"]   # so that the queue's row is certainly in the results
"""

WITH_VARIANTS = """
[meta]
id = "t-buffer"
title = "Buffer sweep"
paper = "vegas-a"
figure = "Table 7"
assumptions = [{ field = "flows[0].tcp.packet_size", value = 1000, reason = "not given" }]
""" + BASE + """
[[variant]]
name = "newreno-q5"
set = { "flows[0].cc" = "newreno", "links[1].queue.limit" = 5 }
published = { "f1.retransmitted_pkts" = 106, "R1->D1.mean_len_pkts" = 2.5 }

[[variant]]
name = "vegas-q5"
set = { "links[1].queue.limit" = 5 }
published = { "f1.retransmitted_pkts" = 0 }
"""

SINGLE = """
[meta]
id = "t-single"
title = "One run"
published = { "f1.goodput_bps" = 400000 }
""" + BASE


@pytest.fixture
def cat(tmp_path) -> Path:
    (tmp_path / "t-buffer.toml").write_text(WITH_VARIANTS)
    (tmp_path / "single.toml").write_text(SINGLE)  # id differs from the stem on purpose
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "nested.toml").write_text(SINGLE.replace("t-single", "t-nested"))
    return tmp_path


def test_list_entries_returns_the_top_level_files_sorted_by_id(cat):
    assert [e.id for e in catalog.list_entries(cat)] == ["t-buffer", "t-single"]


def test_load_entry_by_id_by_stem_by_relative_path_and_by_file(cat):
    assert catalog.load_entry("t-single", cat).path.name == "single.toml"
    assert catalog.load_entry("single", cat).id == "t-single"
    assert catalog.load_entry("sub/nested", cat).id == "t-nested"
    assert catalog.load_entry(cat / "t-buffer.toml").title == "Buffer sweep"


def test_load_entry_lists_the_known_ids_when_the_id_is_unknown(cat):
    with pytest.raises(KeyError, match="t-buffer, t-single"):
        catalog.load_entry("va-nothing", cat)


def test_catalog_dir_honours_the_environment_variable(cat, monkeypatch):
    monkeypatch.setenv("VEGASLAB_CATALOG", str(cat))
    assert catalog.catalog_dir() == cat
    assert catalog.load_entry("t-buffer").path == cat / "t-buffer.toml"


def test_catalog_dir_without_the_environment_variable_is_the_builtin_one_whatever_the_working_directory(
        cat, monkeypatch):
    """A ./catalog in the working directory is not picked up: the same command gives the same
    entries wherever it is started."""
    monkeypatch.delenv("VEGASLAB_CATALOG", raising=False)
    (cat / "catalog").mkdir()
    (cat / "catalog" / "va-reroute.toml").write_text(SINGLE.replace("t-single", "va-reroute"))
    monkeypatch.chdir(cat)
    assert catalog.catalog_dir() == catalog.builtin_dir()
    assert catalog.load_entry("va-reroute").path == catalog.builtin_dir() / "va-reroute.toml"


def test_run_count_is_the_runs_times_the_seeds_full_and_quick(cat):
    (cat / "seeded.toml").write_text(WITH_VARIANTS.replace('id = "t-buffer"', 'id = "t-seeded"\nseeds = [1, 2, 3]')
                                     .replace('[[variant]]', '[meta.quick]\nseeds = [1]\n\n[[variant]]', 1))
    entry = catalog.load_entry("t-seeded", cat)
    assert entry.run_count() == 2 * 3 and entry.run_count(quick=True) == 2 * 1
    assert catalog.load_entry("t-single", cat).run_count() == 1


def test_by_paper_groups_entries_under_their_paper_and_the_paperless_last(cat):
    groups = catalog.by_paper(catalog.list_entries(cat))
    assert [(p, [e.id for e in es]) for p, es in groups.items()] == [
        ("vegas-a", ["t-buffer"]), (catalog.NO_PAPER, ["t-single"])]
    assert [e.id for e in catalog.resolve(["vegas-a"], cat)] == ["t-buffer"]


def test_expand_gives_one_run_per_variant_with_its_overrides_and_published_numbers(cat):
    specs = catalog.expand(catalog.load_entry("t-buffer", cat))
    assert [s.name for s in specs] == ["newreno-q5", "vegas-q5"]
    assert specs[0].overrides == ("flows[0].cc=newreno", "links[1].queue.limit=5")
    assert specs[0].published == {"f1.retransmitted_pkts": 106, "R1->D1.mean_len_pkts": 2.5}
    assert all(s.scenario_path == cat / "t-buffer.toml" and s.entry_id == "t-buffer" for s in specs)


def test_expand_without_variants_is_the_file_itself_with_meta_published(cat):
    (spec,) = catalog.expand(catalog.load_entry("t-single", cat))
    assert spec.name == "t-single" and spec.overrides == ()
    assert spec.published == {"f1.goodput_bps": 400000}


@pytest.mark.parametrize(
    "variant, message",
    [
        ('[[variant]]\nset = {}\n', r"variant\[0\]\.name: required"),
        ('[[variant]]\nname = "a"\n[[variant]]\nname = "a"\n', r"variant\[1\]\.name: duplicate"),
        ('[[variant]]\nname = "a"\nset = 3\n', r"variant\[0\]\.set: must be a table"),
        ('[[variant]]\nname = "a"\npublished = { "f1.x" = "fast" }\n', r"published\.f1\.x: must be a number"),
        ('[[variant]]\nname = "a"\npublished = { "x" = 1 }\n', r"published\.x: key must be"),
    ],
)
def test_malformed_variants_are_scenario_errors_naming_the_field(tmp_path, variant, message):
    (tmp_path / "bad.toml").write_text(BASE + variant)
    with pytest.raises(vegaslab.ScenarioError, match=message):
        catalog.load_entry("bad", tmp_path)


def test_compare_sets_ours_beside_published_with_the_ratio(res):
    table = catalog.compare(res, {"vegas.goodput_bps": 500000, "reno.retransmitted_pkts": 1,
                                  "R1->R2.mean_len_pkts": 2.1})
    assert list(table.columns) == ["metric", "published", "ours", "ratio"]
    assert list(table["metric"]) == ["vegas.goodput_bps", "reno.retransmitted_pkts", "R1->R2.mean_len_pkts"]
    assert table["ours"].tolist() == pytest.approx([400000, 2, 2.1])
    assert table["ratio"].tolist() == pytest.approx([0.8, 2.0, 1.0])


def test_compare_raises_on_an_unknown_flow_so_typos_do_not_pass_silently(res):
    with pytest.raises(KeyError, match="f1"):
        catalog.compare(res, {"f1.goodput_bps": 1})


def test_ratio_is_one_when_both_are_zero_and_inf_or_nan_otherwise():
    assert catalog.ratio(0, 0) == 1.0
    assert catalog.ratio(3, 0) == math.inf
    assert math.isnan(catalog.ratio(float("nan"), 2))
    assert catalog.ratio(1, 4) == 0.25


def test_summary_markdown_has_a_section_with_assumptions_and_a_table_per_entry(cat):
    import pandas as pd

    entry = catalog.load_entry("t-buffer", cat)
    table = pd.DataFrame(
        [{"entry": "t-buffer", "run": "newreno-q5", "metric": "f1.retransmitted_pkts",
          "published": 106, "ours": 53, "ratio": 0.5, "note": ""},
         {"entry": "t-buffer", "run": "vegas-q5", "metric": "(run failed)",
          "published": math.nan, "ours": math.nan, "ratio": math.nan, "note": "boom"}],
        columns=catalog.REPRODUCE_COLUMNS)
    md = summary_markdown(table, [entry])
    assert "## t-buffer: Buffer sweep" in md
    assert "`flows[0].tcp.packet_size` = `1000`: not given" in md
    assert "| newreno-q5 | f1.retransmitted_pkts | 106 | 53 | 0.500 |" in md
    assert "**vegas-q5 failed:** boom" in md


# ---------------------------------------------------------------------- benchmark scenario


def test_bench_scenario_is_grids_network_2_with_25_reno_and_25_vegas_flows():
    doc = vegaslab.load_scenario(CATALOG / "bench" / "grids-net2.toml")
    assert doc["meta"]["id"] == "bench-grids-net2"
    assert doc["run"]["duration"] == "200s"
    db = doc["dumbbell"]
    assert db["pairs"] == 50
    assert db["access"] == {"bandwidth": "100Mbps", "delay": "1ms"}
    assert db["bottleneck"]["bandwidth"] == "155Mbps" and db["bottleneck"]["delay"] == "1.5ms"
    assert db["bottleneck"]["queue"] == {"kind": "droptail", "limit": 6711}
    flows = doc["flows"]
    assert [f["cc"] for f in flows] == ["reno"] * 25 + ["vegas"] * 25
    assert [(f["from"], f["to"]) for f in flows] == [(f"S{i}", f"D{i}") for i in range(1, 51)]
    assert all(f["tcp"] == {"window": 10000, "packet_size": 1500} for f in flows)
    assert all(f["params"] == {"alpha": 100, "beta": 105} for f in flows[25:])
    assert all(f["app"] == "ftp" and f["start"] == "0s" for f in flows)


# ---------------------------------------------------------------------- with the compiled core


@pytest.fixture
def core():
    return pytest.importorskip("vegaslab._core")


def test_core_bench_scenario_validates(core):
    assert vegaslab.validate(CATALOG / "bench" / "grids-net2.toml")


def test_core_every_catalog_variant_validates(core):
    entries = catalog.list_entries(CATALOG)
    for entry in entries:
        for spec in catalog.expand(entry):
            vegaslab.validate(spec.scenario_path, overrides=list(spec.overrides))


def test_core_reproduce_runs_every_variant_and_writes_summary_and_tables(core, cat, tmp_path):
    out = tmp_path / "rep"
    table = reproduce(["t-buffer", "t-single"], out, directory=cat, echo=None)
    assert list(table.columns) == catalog.REPRODUCE_COLUMNS
    assert set(table["run"]) == {"newreno-q5", "vegas-q5", "t-single"}
    assert (table["note"] == "").all(), table["note"].tolist()
    assert table["ours"].notna().all() and table["ratio"].notna().all()
    md = (out / "summary.md").read_text()
    assert "## t-buffer: Buffer sweep" in md and "## t-single: One run" in md
    for run in ("newreno-q5", "vegas-q5"):
        assert (out / "results" / "t-buffer" / run / "seed1" / "flows.parquet").is_file()
    meta = json.loads((out / "results" / "t-single" / "t-single" / "seed1" / "meta.json").read_text())
    assert meta["duration_s"] == pytest.approx(2.0)


def test_core_reproduce_records_a_failing_variant_and_runs_the_others(core, cat, tmp_path):
    (cat / "t-buffer.toml").write_text(WITH_VARIANTS + '\n[[variant]]\nname = "broken"\nset = { "flows[0].start" = "-3s" }\n')
    table = reproduce(["t-buffer"], tmp_path, directory=cat, echo=None)
    failed = table[table["run"] == "broken"]
    assert failed["metric"].tolist() == ["(run failed)"] and "flows[0].start" in failed["note"].iloc[0]
    assert (table[table["run"] != "broken"]["note"] == "").all()


@pytest.mark.parametrize("name", ["..", "a/b", "x y", "../../up"])
def test_a_variant_name_that_could_leave_its_results_directory_is_refused(tmp_path, name):
    from vegaslab.study import catalog

    text = (catalog.builtin_dir() / "va-reroute.toml").read_text(encoding="utf-8")
    text += f'\n[[variant]]\nname = "{name}"\nset = {{ "flows[0].cc" = "reno" }}\n'
    path = tmp_path / "hostile.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(vegaslab.ScenarioError, match="letters, digits"):
        catalog.load_entry(path)


@pytest.mark.parametrize("claims, message", [
    ('[[meta.claim]]\nid = "Bad Id"\ntext = "t"\nexpr = "x:f.a > 1"\n', r"meta\.claim\[0\]\.id: a claim id is 1 to 48"),
    ('[[meta.claim]]\nid = "2"\ntext = "t"\nexpr = "x:f.a > 1"\n', r"meta\.claim\[0\]\.id: .*not only digits"),
    ('[[meta.claim]]\nid = "a"\ntext = "t"\nexpr = "x:f.a > 1"\n[[meta.claim]]\nid = "a"\ntext = "u"\nexpr = "x:f.a > 2"\n',
     r"meta\.claim\[1\]\.id: 'a' is also the id of claim\[0\]"),
    ('[[meta.claim]]\nid = "a"\nkind = "extra"\ntext = "t"\nexpr = "x:f.a > 1"\n',
     r"meta\.claim\[0\]\.kind: must be one of paper, supplementary"),
])
def test_claim_ids_and_kinds_are_checked_naming_the_claim(tmp_path, claims, message):
    (tmp_path / "bad.toml").write_text('[meta]\nid = "bad"\n' + claims + BASE)
    with pytest.raises(vegaslab.ScenarioError, match=message):
        catalog.load_entry("bad", tmp_path)


def test_a_claim_without_an_id_is_named_by_its_position_and_is_the_papers(tmp_path):
    (tmp_path / "e.toml").write_text('[meta]\nid = "e"\n[[meta.claim]]\ntext = "t"\nexpr = "x:f.a > 1"\n'
                                     '[[meta.claim]]\nid = "named"\nkind = "supplementary"\ntext = "u"\n'
                                     'expr = "x:f.a > 2"\n' + BASE)
    claims = catalog.load_entry("e", tmp_path).claims
    assert [(c["id"], c["kind"]) for c in claims] == [("1", "paper"), ("named", "supplementary")]


def test_every_built_in_claim_has_an_id_and_every_other_reading_is_supplementary():
    """Stable ids (notes, studies and reports refer to claims by them), and a claim whose text
    says it is not the paper's definition is never counted as the paper's."""
    for e in catalog.list_entries(catalog.builtin_dir()):
        for c in e.meta.get("claim", []):
            assert "id" in c, f"{e.id}: a claim without an id: {c['text'][:60]}"
            supplementary = "not the paper's definition" in c["text"]
            assert (c.get("kind", "paper") == "supplementary") == supplementary, f"{e.id}#{c['id']}"


NOTED = ('[meta]\nid = "noted"\nnotes = """Ours fails #fast (fails): the link is slow."""\n'
         '[[meta.claim]]\nid = "fast"\ntext = "t"\nexpr = "x:f.a > 1"\n' + BASE)


def test_a_note_expecting_a_verdict_of_a_claim_the_entry_lacks_is_an_error(tmp_path):
    (tmp_path / "e.toml").write_text(NOTED.replace("#fast (fails)", "#quick (fails)"))
    with pytest.raises(vegaslab.ScenarioError, match=r"meta\.notes: #quick \(fails\) names no claim of this entry"):
        catalog.load_entry("e", tmp_path)


def test_the_report_marks_a_note_that_the_verdict_contradicts(tmp_path):
    from vegaslab.report.model import note_contradictions
    from vegaslab.study.claims import Claim, Verdict

    (tmp_path / "e.toml").write_text(NOTED)
    entry = catalog.load_entry("e", tmp_path)
    assert entry.note_expectations == [("fast", "fails")]
    fails = Verdict(Claim("t", "x", id="fast"), "fails", "")
    holds = Verdict(Claim("t", "x", id="fast"), "holds", "")
    assert note_contradictions(entry, [fails]) == []
    assert note_contradictions(entry, [holds]) == ["the notes expect #fast to fail; it holds"]
    assert note_contradictions(entry, []) == ["the notes expect #fast to fail; it was not evaluated"]


def test_every_built_in_notes_expectation_matches_the_last_full_run():
    """The notes of the built-in entries say which claims hold and fail (``#id (holds)``); each
    such statement agrees with the verdicts of the last full reproduction (docs/numbers.json,
    written by `make publish-numbers` from `make reproduce-all`)."""
    numbers = json.loads((Path(__file__).resolve().parents[1] / "docs" / "numbers.json").read_text())
    verdicts = numbers["reproduce"]["verdicts"]
    stale = [f"{e.id}#{cid}: the notes say it {expected}; the last full run: {verdicts.get(e.id, {}).get(cid)}"
             for e in catalog.list_entries(catalog.builtin_dir()) for cid, expected in e.note_expectations
             if verdicts.get(e.id, {}).get(cid) != expected]
    assert not stale, "\n".join(stale)


def test_a_note_naming_another_entrys_claim_is_no_expectation_of_this_one(tmp_path):
    (tmp_path / "e.toml").write_text(NOTED.replace("#fast (fails)", "#fast (fails), unlike va-buffer#vegas-x (holds)"))
    assert catalog.load_entry("e", tmp_path).note_expectations == [("fast", "fails")]


def test_notes_are_not_held_against_a_quick_or_single_seed_reproduction():
    from types import SimpleNamespace

    from vegaslab.report.model import notes_comparable

    assert notes_comparable(SimpleNamespace(quick=False, seed=None))
    assert not notes_comparable(SimpleNamespace(quick=True, seed=None))
    assert not notes_comparable(SimpleNamespace(quick=False, seed=3))
