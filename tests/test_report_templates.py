"""The report shows the papers, not just us: rendered from Jinja2 templates with
autoescape, split into model / figures / HTML without import cycles, reference lines and paper
labels in the figures, full citations, and no artefacts of a missing paper on a user's own
catalog (no "? → ?", no "within 10%" of nothing, no ns-2 header, no Python True)."""

from __future__ import annotations

import ast
import importlib.resources
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scenario_text import ONE_LINK

import vegaslab
from vegaslab.errors import ScenarioError
from vegaslab.study import catalog
from vegaslab.reproduction import reproduce

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(vegaslab.__file__).resolve().parent

# A user's own catalog entry: pair flows, a boolean monitor, no published numbers, no paper.
USER_ENTRY = """
[meta]
id = "mine"
title = "two Reno pairs on a dumbbell"

[run]
duration = "2s"

[dumbbell]
pairs = 2
access = { bandwidth = "10Mbps", delay = "2ms" }
bottleneck = { bandwidth = "1Mbps", delay = "5ms" }

[[flows]]
pairs = "1-2"
cc = "reno"

[monitor]
cwnd = true
throughput = true

[[meta.claim]]
text = "the pairs get more than 100 kbit/s each"
expr = "mine:reno1.throughput_bps > 100000"
"""

# A paper's entry with a published level and a described level over an interval.
PAPER_ENTRY = """
[meta]
id = "paperlike"
title = "one Reno flow, its published mean and a described level"
paper = "vegas-a"
figure = "Fig. 9"

[run]
duration = "3s"

""" + ONE_LINK + """
[monitor]
throughput = true

[[variant]]
name = "reno"
set = { "flows[0].cc" = "reno" }
published = { "f1.throughput_bps" = 900000 }

[[meta.figures]]
kind = "throughput"
paper_figure = { reno = "Fig. 9a" }
reference = [{ variant = "reno", metric = "f1.throughput_bps", level = 4e6, interval = [1, 3], source = "text" }]
"""


def _catalog(tmp_path: Path, **files: str) -> Path:
    d = tmp_path / "catalog"
    d.mkdir(exist_ok=True)
    for name, body in files.items():
        (d / f"{name}.toml").write_text(body)
    return d


@pytest.fixture(scope="module")
def user_report(tmp_path_factory) -> str:
    pytest.importorskip("vegaslab._core")
    tmp = tmp_path_factory.mktemp("user")
    d = _catalog(tmp, mine=USER_ENTRY, paperlike=PAPER_ENTRY)
    out = tmp / "out"
    reproduce(["mine"], out, directory=d, echo=None, scheduler="synchronous")
    both = tmp / "both"
    reproduce(["mine", "paperlike"], both, directory=d, echo=None, scheduler="synchronous")
    return (out / "index.html").read_text(encoding="utf-8"), (both / "index.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------------- structure


def _runtime_imports(path: Path) -> list[tuple[int, str]]:
    """Every vegaslab module a file imports at run time (anywhere: top level or inside a
    function), leaving out ``if TYPE_CHECKING:`` blocks, which never run."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for b in node.body for n in ast.walk(b)}
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            mod = ("." * node.level) + (node.module or "")
            names = [mod + ("." if node.module else "") + a.name for a in node.names] if node.level else [mod]
            found += [(node.lineno, n) for n in names + [mod]]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return found


def test_runner_and_the_report_modules_never_import_catalog_so_there_is_no_cycle():
    # (tests/test_architecture.py checks the whole package; this names the seam of the report.)
    lower = [PACKAGE / "study" / "runner.py", *sorted((PACKAGE / "report").glob("*.py"))]
    assert len(lower) >= 7
    offenders = [f"{p.name}:{line} imports {m}" for p in lower for line, m in _runtime_imports(p)
                 if re.fullmatch(r"(\.+|vegaslab\.)(study\.)?catalog(\..*)?", m)]
    assert not offenders, offenders
    # and the report never imports the runner back through catalog: runner imports no report
    assert not [m for _, m in _runtime_imports(PACKAGE / "study" / "runner.py") if "report" in m]


def test_the_public_api_keeps_its_names_through_catalog():
    from vegaslab.report import tables as report_table
    from vegaslab.report import write as report
    from vegaslab.study import runner

    assert catalog.ratio is report_table.ratio and catalog.REPRODUCE_COLUMNS is report_table.REPRODUCE_COLUMNS
    assert catalog.safe_name is runner.safe_name
    assert callable(reproduce) and callable(catalog.expand) and callable(report.build)
    e = catalog.load_entry("va-reroute")
    assert [s.name for s in e.runs()] == [s.name for s in catalog.expand(e)]
    assert e.published_of("vegas") == {"f1.throughput_bps": 217320} and e.published_of("newreno") == {}


def test_the_templates_are_package_data_and_autoescape_what_they_show():
    from vegaslab.report.render import render

    root = importlib.resources.files("vegaslab.report") / "templates"
    assert {"report.html.j2", "_section.html.j2", "robustness.html.j2"} <= {p.name for p in root.iterdir()}
    html = render("_macros.html.j2")  # the macros alone render nothing but must parse
    assert html.strip() == ""
    from vegaslab.report.render import environment

    macro = environment().get_template("_macros.html.j2").module.kv_table
    got = str(macro([["<script>alert(1)</script>", "a & b"]], ["item", "value"], "setup"))
    assert "<script>" not in got and "&lt;script&gt;" in got and "a &amp; b" in got


# ---------------------------------------------------------------------- a user's own catalog


def test_pair_flows_and_booleans_read_as_words_not_placeholders():
    from vegaslab.report.model import setup_facts

    facts = dict(setup_facts(catalog._parse_entry(_write(USER_ENTRY))))
    flows = [(k, v) for k, v in facts.items() if k.startswith("flow")]
    assert flows == [("flows reno<k>, k = 1-2", "S<k> → D<k>, reno")]
    assert facts["monitor"] == "cwnd yes, throughput yes"
    assert not any("?" in k + v or "True" in v or "False" in v for k, v in facts.items())


def _write(body: str) -> Path:
    import tempfile

    d = Path(tempfile.mkdtemp())
    p = d / "entry.toml"
    p.write_text(body)
    return p


def test_a_users_catalog_report_says_no_published_numbers_and_mentions_no_ns2(user_report):
    page, _ = user_report
    head = page[:page.index("<main>")]
    assert "ns-2" not in head
    assert "Every published number is within 10%" not in page
    assert "No published numbers: nothing to compare with." in page
    assert "? → ?" not in page and ">True<" not in page and "True," not in page
    assert 'id="references"' not in page  # nothing cited


def test_a_paper_entry_cites_its_paper_in_full_and_the_page_ends_with_references(user_report):
    _, page = user_report
    section = page[page.index('data-entry="paperlike"'):]
    section = section[:section.index("</section>")]
    assert 'class="citation" data-paper="vegas-a"' in section
    assert "Computer Communications 28, pp. 429-440, 2005" in section and "K.N. Srijith" in section
    refs = page[page.index('id="references"'):]
    assert 'id="ref-vegas-a"' in refs and "TCP Vegas-A: Improving the Performance of TCP Vegas" in refs
    assert "Published numbers are ns-2 runs" in page[:page.index("<main>")]


def test_a_time_series_panel_draws_the_published_level_and_marks_where_the_described_level_fails(user_report):
    _, page = user_report
    page = page[page.index('data-entry="paperlike"'):]
    fig = re.search(r'<figure class="report-figure" data-kind="throughput"[^>]*>.*?</figure>', page, re.S).group(0)
    assert 'data-paper-figure="Fig. 9a"' in fig
    kinds = re.findall(r'<li class="reference-line" data-kind="([a-z-]+)" data-variant="reno"', fig)
    assert kinds == ["published-level", "described"]
    # a Reno flow on a 1 Mbit/s link is always below half of the described 4 Mbit/s
    described = re.search(r'data-kind="described"[^>]*data-departures="(\d+)">([^<]*)<', fig)
    assert int(described.group(1)) >= 1 and "below 50% of the described level for 2.0 s" in described.group(2)


# ---------------------------------------------------------------------- the departure rule


def test_the_departure_rule_marks_the_trailing_mean_below_the_fraction_inside_the_interval_only():
    from vegaslab.report.figures import departures

    t = np.round(np.arange(0.1, 20.01, 0.1), 6)
    y = np.full_like(t, 1.0)
    y[(t > 10) & (t <= 12)] = 0.0           # a 2 s collapse inside the interval
    y[(t > 1) & (t <= 3)] = 0.0             # one outside it: ignored
    got = departures(t, y, 1.0, (5, 20), below=0.5, window=1.0)
    assert len(got["spans"]) == 1
    a, b = got["spans"][0]
    # the 1 s mean falls below 0.5 half a second into the collapse and recovers half a second after
    assert a == pytest.approx(10.4, abs=0.11) and b == pytest.approx(12.4, abs=0.11)
    assert got["mean"] == pytest.approx(1 - 2 / 15, abs=0.01)
    assert departures(t, y, 1.0, (13, 20))["spans"] == []
    assert math.isnan(departures(t, y, 1.0, (30, 40))["mean"])


# ---------------------------------------------------------------------- the catalog format


@pytest.mark.parametrize("ref, field, words", [
    ('{ variant = "nosuch", metric = "f1.throughput_bps", level = 1 }', "reference[0].variant", "must name a variant"),
    ('{ variant = "reno", metric = "throughput", level = 1 }', "reference[0].metric", "<flow|queue>.<metric>"),
    ('{ variant = "reno", metric = "f1.throughput_bps", level = 1, interval = [3, 1] }', "reference[0].interval",
     "0 <= t0 < t1"),
    ('{ variant = "reno", metric = "f1.throughput_bps", level = 1, below = 1.5 }', "reference[0].below", "< 1"),
    ('{ variant = "reno", metric = "f1.cwnd" }', "reference[0].level", "no published f1.cwnd"),
    ('{ variant = "reno", metric = "f1.throughput_bps", level = 1, colour = "red" }', "reference[0].colour",
     "unknown field"),
])
def test_a_bad_reference_is_an_error_naming_file_and_field(tmp_path, ref, field, words):
    body = PAPER_ENTRY.replace(PAPER_ENTRY[PAPER_ENTRY.index("reference = ["):].splitlines()[0], f"reference = [{ref}]")
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(ScenarioError) as err:
        catalog.load_entry(path)
    assert f"bad.toml: meta.figures[0].{field}: " in str(err.value) and words in str(err.value)


def test_a_paper_figure_naming_no_variant_is_an_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(PAPER_ENTRY.replace('paper_figure = { reno = "Fig. 9a" }', 'paper_figure = { renoo = "Fig. 9a" }'))
    with pytest.raises(ScenarioError, match=r'bad.toml: meta.figures\[0\].paper_figure."renoo": not a variant'):
        catalog.load_entry(path)


def test_va_reroute_and_va_buffer_draw_the_papers_into_their_time_series_figures():
    for eid in ("va-reroute", "va-buffer"):
        e = catalog.load_entry(eid)
        series = [f for f in e.figures if f["kind"] in ("throughput", "cwnd", "queue")]
        assert any(f.get("reference") for f in series) and all(f.get("paper_figure") for f in e.figures), eid


# ---------------------------------------------------------------------- citations


def test_every_catalog_paper_has_a_citation_from_the_one_papers_file():
    from vegaslab.report.model import citation, load_papers

    papers = load_papers()
    assert {e.paper for e in catalog.list_entries()} <= set(papers)
    for key, rec in papers.items():
        text = citation(rec)
        assert rec["title"] in text and all(a in text for a in rec["authors"]), key


def test_docs_papers_md_is_generated_from_the_papers_file():
    from vegaslab.report.model import papers_markdown

    assert (ROOT / "docs" / "papers.md").read_text(encoding="utf-8") == papers_markdown(), (
        "docs/papers.md is out of date: python -c 'from vegaslab.report.model import papers_markdown; "
        "print(papers_markdown(), end=\"\")' > docs/papers.md")
    assert "(docs/papers.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------- the first screen


def test_the_page_leads_with_the_papers_then_a_table_of_contents_whose_every_link_has_its_target(user_report):
    _, page = user_report
    main = page[page.index("<main>"):]
    assert main.index('id="papers"') < main.index('id="contents"') < main.index('id="summary"') \
        < main.index('class="experiment"')
    nav = main[main.index('id="contents"'):main.index("</nav>")]
    links = re.findall(r'href="#([^"]+)"', nav)
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    assert {"papers", "summary", "disagreements", "experiments", "exp-mine", "exp-paperlike", "references"} <= set(links)
    assert [x for x in links if x not in ids] == [], "table-of-contents links without a target"
    # the paper's row names its paper and its experiment; the user's entry is grouped apart
    papers = main[main.index('id="papers"'):main.index('id="contents"')]
    assert 'data-paper="vegas-a"' in papers and 'href="#exp-paperlike"' in papers
    assert "key numbers come from va-reroute, not in this report" in papers
    assert 'data-paper="other"' in papers and 'href="#exp-mine"' in papers


def test_no_robustness_box_without_studies_and_the_section_never_precedes_the_papers(user_report):
    from vegaslab.report.robustness import END, START

    _, page = user_report
    between = page[page.index(START) + len(START):page.index(END)]
    assert "<section" not in between and 'id="robustness"' not in page
    assert page.index('id="papers"') < page.index(START)
    assert 'href="#robustness"' not in page


def test_each_paper_shows_its_key_numbers_as_printed_beside_ours_and_a_verdict():
    from types import SimpleNamespace

    import pandas as pd

    from vegaslab.report.front import papers_summary
    from vegaslab.study.claims import Claim, Verdict
    from vegaslab.study.comparison import REPRODUCE_COLUMNS

    papers = {"p": {"title": "A paper", "authors": ["A. Author"], "short": "the P paper",
                    "headline": [{"entry": "e1", "label": "x", "published": 217320, "ours": "v:f1.throughput_bps"},
                                 {"entry": "e1", "label": "u", "printed": "above 99%", "ours": "1", "percent": True}]}}
    b = SimpleNamespace(
        entries=[SimpleNamespace(id="e1", meta={"paper": "p"}, title="t"), SimpleNamespace(id="e2", meta={}, title="u")],
        verdicts={"e1": [Verdict(Claim("c", "1 > 0"), "holds", ""), Verdict(Claim("d", "1 < 0"), "fails", "")]},
        table=pd.DataFrame([{"entry": "e1", "run": "v", "metric": "f1.throughput_bps", "published": 217320,
                             "ours": 217240.4, "std": math.nan, "n": 1, "ratio": 217240.4 / 217320, "note": ""}],
                           columns=REPRODUCE_COLUMNS),
        headlines={"e1": [{**papers["p"]["headline"][0], "ours": 217240.4, "error": ""},
                          {**papers["p"]["headline"][1], "ours": 0.99612, "error": ""}]})
    rows = papers_summary(b, papers)
    assert [r["key"] for r in rows] == ["p", "other"]
    p = rows[0]
    assert (p["verdict"], p["claims"], p["within25"]) == ("partly reproduces", "1/2", "1/1")
    assert [(h["published"], h["ours"], h["ratio"]) for h in p["headlines"]] == [
        ("217,320", "217,240", "1.000"), ("above 99%", "99.6%", "-")]
    assert rows[1]["verdict"] == "nothing to compare"


def test_the_papers_key_numbers_name_an_entry_and_an_expression_of_the_claim_language():
    from vegaslab.report.model import load_papers
    from vegaslab.study.claims import parse

    papers = load_papers()
    ids = {e.id for e in catalog.list_entries()}
    for key, rec in papers.items():
        assert rec.get("headline"), f"{key}: no key number for the first screen"
        for h in rec["headline"]:
            assert h["entry"] in ids, (key, h)
            assert catalog.load_entry(h["entry"]).meta.get("paper") == key, (key, h)
            parse(h["ours"])


# ---------------------------------------------------------------------- robustness section


def test_the_robustness_section_is_spliced_through_its_template_and_shows_ns2_only_when_checked(tmp_path):
    from vegaslab.report.robustness import END, START, section_html, splice

    s = {"entry": "tiny", "verdict": "holds", "conclusion": "x <b>y</b>", "points": [], "figures": [], "runs": 4}
    without = section_html([s], tmp_path)
    assert without.startswith(START) and without.endswith(END)
    assert "ns-2.35" not in without and "x &lt;b&gt;y&lt;/b&gt;" in without
    page = tmp_path / "index.html"
    page.write_text(f"<html>{START}OLD SECTION{END}</html>")
    assert splice(page, [s]) and "OLD SECTION" not in page.read_text() and page.read_text().count(START) == 1
    assert page.read_text() == f"<html>{without}</html>"


def test_a_percent_key_number_prints_the_papers_fraction_as_a_percentage_too():
    from vegaslab.report.front import _headline_cells

    cells = _headline_cells({"label": "utilisation", "entry": "e", "percent": True, "published": 0.93, "ours": 0.97})
    assert cells["published"] == "93%" and cells["ours"].endswith("%") and cells["ratio"] == "1.043"
