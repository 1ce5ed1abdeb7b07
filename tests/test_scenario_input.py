"""Scenarios as people give them: a file path holding ``=`` is a path, a misspelt catalog id
gets a suggestion, a ``--set`` error names the option, and what is printed (meta.json,
``--json``) carries times without float noise and counts as integers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vegaslab
from vegaslab import cli
from vegaslab.scenario import is_toml_text, scenario_source
from vegaslab.spelling import did_you_mean, nearest
from scenario_text import TWO_HOP

TEXT = '[run]\nduration = "0.5s"\n' + TWO_HOP


@pytest.fixture
def core():
    return pytest.importorskip("vegaslab._core")


# ---------------------------------------------------------------------- path or text


@pytest.mark.parametrize("name", ["alpha=2.toml", "runs/alpha=2/scenario.toml", "[x].toml", "a = b.toml"])
def test_a_path_holding_toml_characters_is_read_as_a_path(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    Path(name).parent.mkdir(parents=True, exist_ok=True)
    Path(name).write_text(TEXT)
    assert scenario_source(name) == (TEXT, name)


def test_a_missing_path_holding_equals_is_file_not_found_naming_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"^alpha=2\.toml: scenario file not found"):
        scenario_source("alpha=2.toml")


@pytest.mark.parametrize("name", ["[run] duration = '2s' " + "x" * 300, "nul\x00byte.toml"])
def test_a_one_line_string_no_file_system_accepts_is_file_not_found_too(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="scenario file not found"):
        scenario_source(name)


def test_only_a_string_with_a_line_break_is_toml_text():
    assert is_toml_text(TEXT) and is_toml_text("[run]\r\n") and not is_toml_text('run.duration = "1s"')
    assert scenario_source(TEXT) == (TEXT, "<string>")


def test_a_path_object_is_a_path_whatever_its_name_holds(tmp_path):
    path = tmp_path / "x=1.toml"
    path.write_text(TEXT)
    assert scenario_source(path)[0] == TEXT


def test_core_runs_a_scenario_file_whose_name_holds_equals(core, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("alpha=2.toml").write_text(TEXT)
    assert vegaslab.run("alpha=2.toml").meta["source"] == "alpha=2.toml"


# ---------------------------------------------------------------------- did you mean


def test_a_name_a_letter_away_is_suggested_and_an_unrelated_one_is_not():
    ids = ["va-reroute", "va-leo", "va-buffer"]
    assert nearest("va-rerout", ids) == "va-reroute"
    assert did_you_mean("va-rerout", ids) == " (did you mean 'va-reroute'?)"
    assert nearest("va-rerout", ["va-leo"]) is None
    assert nearest("va-leo", ids) is None  # known: nothing to suggest


@pytest.mark.parametrize("argv, wanted", [
    (["reproduce", "va-rerout", "--out", "OUT"], "'va-reroute'"),
    (["reproduce", "vegas-aa", "--out", "OUT"], "'vegas-a'"),
    (["reproduce", "--list", "va-bufer"], "'va-buffer'"),
    (["robustness", "va-six-flow-each", "--out", "OUT"], "'va-six-flows-each'"),
    (["run", "va-rerout", "--out", "OUT"], "'va-reroute'"),
    (["sweep", "va-rerout", "--out", "OUT"], "'va-reroute'"),
    (["compare", "va-rerout", "--kernel", "--out", "OUT"], "'va-reroute'"),
    (["testbed", "run", "va-rerout", "--out", "OUT"], "'va-reroute'"),
])
def test_a_misspelt_catalog_id_gets_did_you_mean_and_exit_2(argv, wanted, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    assert cli.main([str(out) if a == "OUT" else a for a in argv]) == 2
    err = capsys.readouterr().err
    assert f"did you mean {wanted}?" in err, err
    assert not out.exists()


def test_the_library_suggests_a_catalog_id_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"did you mean 'va-reroute'\?"):
        vegaslab.validate("va-rerout")


# ---------------------------------------------------------------------- --set errors


@pytest.mark.parametrize("override, says", [
    ("tcp.windw=20", "tcp: unknown field (did you mean 'udp'?)"),
    ("run.duration=-5s", "must be > 0 s"),
    ("flows[9].cc=reno", "no entry [9]"),
    ("flows[f1].params.alpha=9", "flows[0].params.beta: must be >= alpha (9)"),
])
def test_core_a_set_error_names_the_option_first(core, override, says, tmp_path, capsys):
    scenario = tmp_path / "s.toml"
    scenario.write_text(TEXT)
    assert cli.main(["run", str(scenario), "--out", str(tmp_path / "out"), "--set", "run.seed=3",
                     "--set", override]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"vegaslab: --set {override}: "), err
    assert says in err and err.endswith(f"(applied to {scenario})"), err


@pytest.mark.parametrize("override, says", [
    ("tcp.windw=20", "tcp: unknown field"),
    ("sweep.seeds=0", "must be between 1 and"),
])
def test_core_a_sweeps_set_error_names_the_option_first_even_in_the_sweep_table(core, override, says,
                                                                                  tmp_path, capsys):
    scenario = tmp_path / "s.toml"
    scenario.write_text(TEXT + "\n[sweep]\nseeds = 2\n")
    assert cli.main(["sweep", str(scenario), "--dry-run", "--set", override]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"vegaslab: --set {override}: "), err
    assert says in err and err.endswith(f"(applied to {scenario})"), err


def test_core_an_error_of_the_file_itself_stays_the_files(core, tmp_path, capsys):
    scenario = tmp_path / "s.toml"
    scenario.write_text(TEXT.replace('cc = "vegas"', 'cc = "vegass"'))
    assert cli.main(["run", str(scenario), "--out", str(tmp_path / "out"), "--set", "run.seed=3"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"vegaslab: {scenario}: flows[0].cc: unknown congestion control"), err


def test_core_the_library_names_the_override_and_keeps_the_cores_parts(core):
    with pytest.raises(vegaslab.ScenarioError) as info:
        vegaslab.run(TEXT, overrides=["run.seed=1", "tcp.windw=20"])
    err = info.value
    assert str(err).startswith("override tcp.windw=20: tcp: unknown field")
    assert (err.override, err.file, err.field, err.kind) == ("tcp.windw=20", "<string>", "tcp", "unknown-field")


def test_core_an_error_is_blamed_on_the_override_that_made_it_and_the_files_own_on_the_file(core):
    broken = TEXT.replace('duration = "0.5s"', 'duration = "-1s"')
    with pytest.raises(vegaslab.ScenarioError) as info:  # the first override mends the file
        vegaslab.validate(broken, overrides=["run.duration=1s", "flows[0].cc=vegass", "run.seed=2"])
    assert info.value.override == "flows[0].cc=vegass"
    with pytest.raises(vegaslab.ScenarioError) as info:
        vegaslab.validate(broken, overrides=["flows[0].cc=reno"])
    assert info.value.override is None and info.value.field == "run.duration"


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
