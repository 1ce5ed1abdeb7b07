"""Scenarios as people write them, as Python sees them: a failure on a dumbbell's bottleneck in
one key (in the file or through ``--set``), a built link changed by name with ``at``, one pair
by number, the errors that say what to write, and the warning when a tie chose a route."""
from __future__ import annotations

import pytest

import vegaslab

DUMBBELL = """
[run]
duration = "4s"
[dumbbell]
pairs = 2
access = { bandwidth = "10Mbps", delay = "2ms" }
bottleneck = { bandwidth = "1Mbps", delay = "10ms" }
[[flows]]
pairs = "1"
cc = "newreno"
"""


def _error(scenario: str, overrides: list[str] | None = None) -> vegaslab.ScenarioError:
    with pytest.raises(vegaslab.ScenarioError) as info:
        vegaslab.normalize(scenario, overrides=overrides or [])
    return info.value


def _link(doc: dict, a: str, b: str) -> dict:
    i, j = doc["nodes"].index(a), doc["nodes"].index(b)
    return next(link for link in doc["links"] if (link["a"], link["b"]) == (i, j))


def test_a_dumbbells_bottleneck_fails_with_one_key_in_the_file_or_on_the_command_line():
    in_file = vegaslab.normalize(DUMBBELL.replace('delay = "10ms" }', 'delay = "10ms", down = [["1s", "2s"]] }'))
    by_set = vegaslab.normalize(DUMBBELL, overrides=['dumbbell.bottleneck.down=[["1s", "2s"]]'])
    assert _link(in_file, "R1", "R2")["down_ns"] == [[1_000_000_000, 2_000_000_000]]
    assert by_set == in_file
    up = vegaslab.run(DUMBBELL).flows.set_index("flow")
    down = vegaslab.run(DUMBBELL, overrides=['dumbbell.bottleneck.down=[["1s", "2s"]]']).flows.set_index("flow")
    assert down.loc["newreno1", "delivered_pkts"] < 0.85 * up.loc["newreno1", "delivered_pkts"]


def test_a_misspelt_down_on_a_builders_link_suggests_down():
    e = _error(DUMBBELL, ['dumbbell.bottleneck.dwon=[["1s", "2s"]]'])
    assert e.field == "dumbbell.bottleneck.dwon" and "did you mean 'down'?" in e.reason, e.reason


def test_at_changes_one_access_link_by_its_nodes():
    doc = vegaslab.normalize(DUMBBELL + '[[links]]\nat = ["S2", "R1"]\ndown = [["1s", "2s"]]\n')
    assert _link(doc, "S2", "R1")["down_ns"] == [[1_000_000_000, 2_000_000_000]]
    assert "down_ns" not in _link(doc, "S1", "R1") and "down_ns" not in _link(doc, "R1", "R2")


def test_an_unknown_link_name_lists_the_named_links():
    e = _error(DUMBBELL + '[[links]]\nat = "bottlenck"\ndown = [["1s", "2s"]]\n')
    assert e.field == "links[0].at" and e.kind == "reference", e
    assert "bottleneck" in e.reason and 'at = ["S1", "R1"]' in e.reason, e.reason


def test_pairs_names_one_pair_as_a_string_and_a_count_gets_the_fix():
    doc = vegaslab.normalize(DUMBBELL.replace('pairs = "1"', 'pairs = "2"'))
    assert [(doc["nodes"][f["from"]], doc["nodes"][f["to"]]) for f in doc["flows"]] == [("S2", "D2")]
    e = _error(DUMBBELL.replace('pairs = "1"', "pairs = 2"))
    assert e.field == "flows[0].pairs" and e.kind == "wrong-type", e
    assert 'pairs = "1-2"' in e.reason and 'pairs = "2"' in e.reason, e.reason
    e = _error(DUMBBELL.replace("pairs = 2", 'pairs = "2"'))
    assert e.field == "dumbbell.pairs" and "pairs = 2 without quotes" in e.reason, e.reason


DIAMOND = """
[run]
duration = "2s"
[[links]]
endpoints = ["B", "D"]
bandwidth = "1Mbps"
delay = "5ms"
[[links]]
endpoints = ["A", "D"]
bandwidth = "0.5Mbps"
delay = "5ms"
[[links]]
endpoints = ["S", "A"]
bandwidth = "10Mbps"
delay = "5ms"
[[links]]
endpoints = ["S", "B"]
bandwidth = "10Mbps"
delay = "5ms"
[[flows]]
name = "f"
from = "S"
to = "D"
cc = "newreno"
"""


def test_a_route_chosen_by_a_tie_is_a_warning_naming_the_flow_and_its_path():
    res = vegaslab.run(DIAMOND)
    assert res.meta["route_ties"] == [{"flow": "f", "equal_paths": 2, "path": ["S", "B", "D"], "ack_path": ["D", "B", "S"]}]
    warning = res.route_tie_warning()
    assert warning is not None and "f via S -> B -> D (2 equal paths)" in warning and "node number" in warning, warning
    assert vegaslab.run(DUMBBELL).route_tie_warning() is None


def test_vegaslab_run_prints_the_route_tie_warning(tmp_path, capsys):
    from vegaslab import cli

    scenario = tmp_path / "diamond.toml"
    scenario.write_text(DIAMOND)
    assert cli.main(["run", str(scenario), "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "chosen by a tie between equal-length paths" in err and "f via S -> B -> D" in err, err
