"""Numbers from runs are written by a program and cannot go stale by hand.

README.md and docs/*.md state the run-derived numbers (claims held, published numbers within
10% and 25%, ns-2's time over ours, `reproduce --all`'s wall time) only inside blocks
``<!-- numbers:NAME -->`` ... ``<!-- /numbers:NAME -->``, rendered from the committed
docs/numbers.json by scripts/publish_numbers.py (`make publish-numbers`). The rule for lines
outside the blocks (publish_numbers.RULES): no fraction N/M on a line about claims or about
numbers within 10%/25%, no N.Nx on a line naming ns-2, no seconds or minutes on a line naming
`reproduce --all`; a past measurement kept as history sits between ``<!-- history -->`` and
``<!-- /history -->``, with its date, and is exempt. Code blocks are exempt too.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("publish_numbers", ROOT / "scripts" / "publish_numbers.py")
pn = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pn)


def _copy_pages(tmp_path: Path) -> Path:
    """README.md, docs/*.md and docs/numbers.json copied to a scratch root."""
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    for page in (ROOT / "docs").glob("*.md"):
        shutil.copy(page, tmp_path / "docs" / page.name)
    shutil.copy(ROOT / "docs" / "numbers.json", tmp_path / "docs" / "numbers.json")
    return tmp_path


# ---------------------------------------------------------------------- the committed pages


def test_every_numbers_block_is_the_rendering_of_docs_numbers_json():
    problems = pn.check()
    assert not problems, "\n".join(problems)


def test_the_readme_and_the_docs_show_the_headline_and_the_latest_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "<!-- numbers:headline -->" in readme
    shown = {m["name"] for page in pn.pages() for m in pn.BLOCK.finditer(page.read_text(encoding="utf-8"))}
    assert shown == set(pn.BLOCKS), f"blocks never shown: {set(pn.BLOCKS) - shown}"


def test_docs_numbers_json_says_when_where_and_under_what_load_it_was_measured():
    n = json.loads((ROOT / "docs" / "numbers.json").read_text(encoding="utf-8"))
    for part in ("reproduce", "bench"):
        m = n[part]["measured"]
        assert re.fullmatch(r"[0-9a-f]{40}", m["commit"]), part
        assert m["started_utc"] and m["machine"]["nproc"] >= 1 and m["machine"]["cpu_model"]
        assert m["load_1min_at_start"] >= 0 and m["exit_status"] == 0
    r = n["reproduce"]
    assert r["cached"] == 0 and r["failed_runs"] == 0 and r["measured"]["peak_rss_bytes"] > 0
    assert sum(p["claims"] for p in r["papers"]) == r["claims"]
    assert n["bench"]["ns2_over_core_cpu"] > 0


def test_a_number_edited_by_hand_in_a_block_is_named_by_file_and_block(tmp_path):
    root = _copy_pages(tmp_path)
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    block = re.search(r"<!-- numbers:headline -->\n(.*?)<!-- /numbers:headline -->", text, re.S)
    edited = re.sub(r"\*\*(\d+)/(\d+)\*\*", lambda m: f"**{int(m[1]) + 1}/{m[2]}**", block[1], count=1)
    assert edited != block[1]
    readme.write_text(text.replace(block[1], edited), encoding="utf-8")
    problems = pn.check(root)
    assert len(problems) == 1 and problems[0].startswith("README.md: block 'headline' differs"), problems
    pn.render(root)
    assert readme.read_text(encoding="utf-8") == text and pn.check(root) == []


def test_a_changed_numbers_json_makes_every_block_that_shows_it_stale(tmp_path):
    root = _copy_pages(tmp_path)
    n = json.loads((root / "docs" / "numbers.json").read_text(encoding="utf-8"))
    n["reproduce"]["holds"] -= 1
    (root / "docs" / "numbers.json").write_text(json.dumps(n), encoding="utf-8")
    stale = {p.split(":")[0] + " " + p.split("'")[1] for p in pn.check(root)}
    assert stale == {"README.md headline", "docs/reproductions.md reproductions"}


# ---------------------------------------------------------------------- the rule outside the blocks


@pytest.mark.parametrize("line", [
    "121/177 claims hold (124 before).",
    "Claims held: 47/61 for Vegas-A.",
    "published numbers within 25%: 197/278",
    "The core runs 11.6x faster than ns-2.",
    "ns-2's CPU time over ours: 9x",
    "`reproduce --all` (27 experiments) took 603 s on two cores.",
    "`make reproduce-all` runs the 27 experiments (8-10 minutes).",
])
def test_a_run_derived_number_outside_a_block_is_named(line):
    text = f"# Page\n\nSome text.\n{line}\n"
    problems = pn.stray_numbers(text, "page.md")
    assert len(problems) == 1 and problems[0].startswith("page.md:4: "), problems


@pytest.mark.parametrize("line", [
    "The paper's claim holds at 3 of 4 seeds.",              # no fraction
    "Vegas-A's pseudo-code (lines 01-26).",
    "ns-2's default window is 20 packets.",                  # no ratio
    "`reproduce --all` writes index.html.",                  # no time
    "A 2x2 grid of figures.",                                # no ns-2 on the line
    "throughput within 2% of ns-2 for 1/3 of the cases",     # a fraction, but not about claims
])
def test_ordinary_text_is_not_taken_for_a_run_derived_number(line):
    assert pn.stray_numbers(f"{line}\n", "page.md") == []


def test_history_blocks_numbers_blocks_and_code_blocks_are_exempt():
    text = ("<!-- history -->\nOn 2026-11-28 the core ran 11.0x ns-2's CPU time; 121/177 claims held.\n"
            "<!-- /history -->\n<!-- numbers:bench -->\nns-2 over the core: 12.0x\n<!-- /numbers:bench -->\n"
            "```\nvegaslab bench   # ns-2 over ours: about 10x\n```\n")
    assert pn.stray_numbers(text, "x.md") == []
    assert len(pn.stray_numbers(text + "Today: 12.5x ns-2.\n", "x.md")) == 1


def test_an_unknown_or_unclosed_block_is_named(tmp_path):
    numbers = json.loads((ROOT / "docs" / "numbers.json").read_text(encoding="utf-8"))
    page = tmp_path / "README.md"
    _, problems = pn.render_text("<!-- numbers:nosuch -->\nx\n<!-- /numbers:nosuch -->\n", numbers, page, tmp_path)
    assert problems == ["README.md: unknown numbers block 'nosuch' (known: " + ", ".join(pn.BLOCKS) + ")"]
    _, problems = pn.render_text("<!-- numbers:bench -->\nx\n", numbers, page, tmp_path)
    assert len(problems) == 1 and "not closed" in problems[0]


# ---------------------------------------------------------------------- publish


def _report_dir(tmp_path: Path) -> Path:
    """A reproduce output directory of two experiments of two papers, as the report writes it."""
    d = tmp_path / "report"
    (d / "results").mkdir(parents=True)
    pd.DataFrame({"entry": ["va-buffer", "va-buffer", "rv-load", "rv-load"], "id": ["a", "b", "c", "d"],
                  "kind": ["paper", "paper", "paper", "supplementary"], "text": ["a", "b", "c", "d"], "source": "",
                  "expr": "", "status": ["holds", "fails", "holds", "holds"], "detail": "",
                  "by_tie": [False, False, True, False]}).to_parquet(d / "results" / "claims.parquet")
    pd.DataFrame({"entry": ["va-buffer", "va-buffer", "rv-load"], "run": "x", "metric": ["m1", "m2", "m3"],
                  "published": [100.0, 100.0, None], "ours": [105.0, 120.0, 1.0], "std": None, "n": 1,
                  "ratio": [1.05, 1.2, None], "note": ""}).to_parquet(d / "results" / "comparison.parquet")
    pd.DataFrame({"entry": ["va-buffer", "rv-load"], "variant": "x", "seed": 1, "status": "ran", "wall_s": 1.0,
                  "error": "", "key": ["k1", "k2"], "overrides": "", "scenario_sha256": "", "source_revision": "r"}
                 ).to_parquet(d / "results" / "runs.parquet")
    (d / "results" / "provenance.json").write_text(json.dumps({"builds": [], "quick": False, "runs": []}))
    (d / "summary.md").write_text("- Claims held: 2/3 (1 fail, 0 error, 0 skipped)\n"
                                  "- Numbers within 10%: 1/2; within 25%: 2/2\n")
    (d / "measured.json").write_text(json.dumps({"exit_status": 0}))
    return d


def test_publish_counts_per_paper_as_the_report_does(tmp_path):
    r = pn.reproduce_facts(_report_dir(tmp_path))
    assert (r["holds"], r["claims"], r["within10"], r["within25"], r["numbers"], r["runs"]) == (2, 3, 1, 2, 2, 2)
    # The supplementary claim is counted apart, the tie flagged; every verdict is kept by id.
    assert (r["supplementary"], r["supplementary_holds"], r["by_tie"]) == (1, 1, 1)
    assert r["verdicts"] == {"va-buffer": {"a": "holds", "b": "fails"}, "rv-load": {"c": "holds", "d": "holds"}}
    by = {p["paper"]: p for p in r["papers"]}
    assert (by["vegas-a"]["holds"], by["vegas-a"]["claims"], by["vegas-a"]["within10"]) == (1, 2, 1)
    assert (by["rovegas"]["holds"], by["rovegas"]["numbers"]) == (1, 0)


def test_publish_refuses_a_report_whose_summary_disagrees_or_whose_runs_came_from_the_store(tmp_path):
    d = _report_dir(tmp_path)
    (d / "summary.md").write_text("- Claims held: 3/3 (0 fail)\n- Numbers within 10%: 1/2; within 25%: 2/2\n")
    with pytest.raises(pn.PublishError, match="summary.md: says claims 3/3"):
        pn.reproduce_facts(d)
    d = _report_dir(tmp_path / "b")
    runs = pd.read_parquet(d / "results" / "runs.parquet").assign(status=["ran", "cached"])
    runs.to_parquet(d / "results" / "runs.parquet")
    with pytest.raises(pn.PublishError, match="1 of 2 runs came from the store"):
        pn.reproduce_facts(d)


def test_measure_records_the_command_its_status_time_memory_and_load(tmp_path):
    out = tmp_path / "m" / "measured.json"
    status = pn.measure(out, [sys.executable, "-c", "import sys; b = b'x' * 50_000_000; sys.exit(3)"])
    m = json.loads(out.read_text())
    assert status == 3 and m["exit_status"] == 3 and m["wall_s"] > 0
    assert m["peak_rss_bytes"] >= 50_000_000 and m["load_1min_at_start"] >= 0 and m["machine"]["nproc"] >= 1


def test_measure_gives_back_the_callers_ctrl_c_handler(tmp_path):
    import signal

    before = signal.getsignal(signal.SIGINT)
    pn.measure(tmp_path / "m.json", [sys.executable, "-c", "pass"])
    assert signal.getsignal(signal.SIGINT) is before


def _study_summary(tmp_path: Path) -> dict:
    """A study's summary as `vegaslab robustness` saves it, from a hand-made result: the default
    point holds on one run; the departure 500kbps holds too."""
    from vegaslab.study import robustness as rb

    (tmp_path / "tiny.toml").write_text(
        '[study]\nentry = "tiny"\nclaim = "c"\nconclusion = "the flow is fast"\ndefault_reason = "a test."\n'
        'seeds = 10\n[study.figure]\nexpr = "tiny:f1.throughput_bps"\nlabel = "x"\nthreshold = 1\n'
        '[[study.factor]]\nname = "bandwidth"\npath = "links[0].bandwidth"\nvalues = ["1Mbps", "500kbps"]\n'
        'default = "1Mbps"\nstated = { level = "1Mbps", where = "s1", quote = "q" }\n')
    study = rb.load_study(tmp_path / "tiny.toml")
    points = [rb.PointResult(pt, holds=10, seeds=10, values=[1.5] * 10, distinct=1, threshold=1.0,
                             departures=study.departures(pt)) for pt in rb.points(study)]
    return rb.summary(rb.StudyResult(study, points, runs=20, computed=20, wall_s=1.0, compute_s=2.5))


def test_publish_robustness_records_each_verdict_with_its_evidence(tmp_path):
    from vegaslab.study import robustness as rb

    rb.save_summary(_study_summary(tmp_path), tmp_path / "report" / "robustness")
    r = pn.robustness_facts(tmp_path / "report")
    [s] = r["studies"]
    assert (s["verdict"], s["stated_points"], s["stated_holds"], s["single_runs"]) == ("robust", 1, 1, 1)
    assert s["departures_holding"] == ["bandwidth = 500kbps"] and s["default_margin"] == pytest.approx(0.5)
    assert (r["runs"], r["compute_s"]) == (20, 2.5)
    table = pn.render_robustness({"robustness": r})
    assert "| tiny | the flow is fast | robust | 1 / 0 / 0 of 1 | 1 | holds (10 of 10 seeds, one run, margin +50.0%) |" \
        in table


def test_publish_robustness_lists_what_each_reading_turns_elsewhere(tmp_path):
    from vegaslab.study import robustness as rb
    from vegaslab.study.robustness.readings import ReadingCost

    summary = _study_summary(tmp_path)
    summary["readings"] = [
        ReadingCost("tie rule", "vegas-a", "hold", "increase", ("a", "b"), 7,
                    (("a#fast", "paper", "fails", "holds"), ("b#slow", "paper", "holds", "fails"))).to_dict()]
    rb.save_summary(summary, tmp_path / "report" / "robustness")
    r = pn.robustness_facts(tmp_path / "report")
    [s] = r["studies"]
    table = pn.render_robustness({"robustness": r})
    assert ("- the vegas-a reading tie rule = hold (instead of increase), varied by tiny: on every vegas-a flow of 2 "
            "entries it changes 2 of their 7 claims: `a#fast` fails -> holds; `b#slow` holds -> fails.") in table
    summary["readings"].append(ReadingCost("tie rule", "vegas-a", "odd", "increase", ("a", "b"), 7, (),
                                           ("a/x seed 1: failed",)).to_dict())
    rb.save_summary(summary, tmp_path / "report" / "robustness")
    with pytest.raises(pn.PublishError, match=r"tiny.json: the reading tie rule = odd could not be judged in every "
                                              r"entry \(a/x seed 1: failed\)"):
        pn.robustness_facts(tmp_path / "report")


def test_publish_robustness_refuses_a_set_aside_or_old_summary(tmp_path):
    from vegaslab.study import robustness as rb

    d = tmp_path / "report" / "robustness"
    d.mkdir(parents=True)
    (d / "broken.json").write_text("{")
    with pytest.raises(pn.PublishError, match="broken.json: not JSON"):
        pn.robustness_facts(tmp_path / "report")
    (d / "broken.json").unlink()
    rb.save_summary({**_study_summary(tmp_path), "quick": True}, d)
    with pytest.raises(pn.PublishError, match=r"quick-mode studies \(tiny\) are checks, not verdicts"):
        pn.robustness_facts(tmp_path / "report")
    old = _study_summary(tmp_path)
    for key in ("rule", "figure_threshold"):
        del old[key]
    rb.save_summary(old, d)
    with pytest.raises(pn.PublishError, match="written before studies recorded their rule"):
        pn.robustness_facts(tmp_path / "report")
