"""Scenarios as people give them: a file path holding ``=`` is a path, a misspelt catalog id
gets a suggestion, a ``--set`` error names the option, and what is printed (meta.json,
``--json``) carries times without float noise and counts as integers."""

from __future__ import annotations

import json

import pytest

import vegaslab
from vegaslab import cli
from scenario_text import TWO_HOP

TEXT = '[run]\nduration = "0.5s"\n' + TWO_HOP


@pytest.fixture
def core():
    return pytest.importorskip("vegaslab._core")


# ---------------------------------------------------------------------- numbers as printed


def test_core_meta_json_and_run_json_print_times_as_the_decimal_the_scenario_wrote(core, tmp_path, capsys):
    scenario = tmp_path / "s.toml"
    scenario.write_text(TEXT)
    out = tmp_path / "out"
    # 30 s is where the simulation's own conversion (ns times 1e-9) gives 30.000000000000004.
    assert cli.main(["run", str(scenario), "--out", str(out), "--no-plots", "--json", "-q",
                     "--set", "run.duration=30s"]) == 0
    doc = json.loads(capsys.readouterr().out)
    meta_text = (out / "meta.json").read_text()
    assert '"duration_s": 30.0,' in meta_text, meta_text[:200]
    assert "0000000" not in meta_text.partition('"provenance"')[0]
    assert doc["duration_s"] == 30.0 and doc["flows"][0]["end_s"] == 30.0
    flow = doc["flows"][0]
    assert flow["throughput_bps"] == flow["received_bytes"] * 8 / 30
    assert all(type(flow[k]) is int for k in ("sent_pkts", "received_bytes", "timeouts", "dropped_pkts"))


def test_core_a_count_read_by_name_keeps_its_integer_type(core):
    r = vegaslab.run(TEXT)
    assert type(r.value("f1.sent_pkts")) is int
    assert type(r.value("R1->D1.max_len_pkts")) is int
    assert type(r.value("f1.throughput_bps")) is float


def test_core_reproduce_json_gives_count_metrics_as_integers(core, tmp_path, monkeypatch, capsys):
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "tiny.toml").write_text(
        '[meta]\nid = "tiny"\npublished = { "f1.retransmitted_pkts" = 3, "f1.throughput_bps" = 4e5 }\n' + TEXT)
    monkeypatch.setenv("VEGASLAB_CATALOG", str(tmp_path / "cat"))
    assert cli.main(["reproduce", "tiny", "--out", str(tmp_path / "out"), "--json", "-q",
                     "--scheduler", "synchronous"]) == 0
    rows = {c["metric"]: c for c in json.loads(capsys.readouterr().out)["entries"][0]["comparisons"]}
    count, rate = rows["f1.retransmitted_pkts"], rows["f1.throughput_bps"]
    assert (type(count["published"]), type(count["ours"])) == (int, int), count
    assert (type(rate["published"]), type(rate["ours"])) == (float, float), rate
