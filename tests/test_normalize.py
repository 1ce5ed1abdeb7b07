"""The normalised scenario: the core's one resolved form of a scenario (defaults, units,
referenced files' content), which the bridge, the cache key and provenance read."""

from __future__ import annotations

import vegaslab

SCENARIO = """
[run]
duration = "5s"
[[links]]
endpoints = ["S", "D"]
bandwidth = "1Mbps"
delay_trace = "trace.txt"
[[flows]]
from = "S"
to = "D"
cc = "reno"
"""


def _write(tmp_path, trace: str):
    (tmp_path / "trace.txt").write_text(trace)
    path = tmp_path / "sc.toml"
    path.write_text(SCENARIO)
    return path


def test_normalised_scenario_fills_in_defaults_and_hashes_referenced_files(tmp_path):
    doc = vegaslab.normalize(_write(tmp_path, "0 10ms\n1 20ms\n"))
    assert doc["format"] == 1
    assert doc["duration_ns"] == 5_000_000_000
    assert doc["flows"][0]["tcp"]["packet_size"] == 1000
    assert doc["links"][0]["forward"]["delay_schedule_ns"] == [[0, 10_000_000], [1_000_000_000, 20_000_000]]
    (ref,) = doc["files"]
    assert ref["field"] == "links[0].delay_trace" and ref["name"] == "trace.txt"
    assert len(ref["sha256"]) == 64
    assert str(tmp_path) not in str(doc), "no file system path in the normalised scenario"


def test_changing_a_referenced_file_changes_the_normalised_scenario(tmp_path):
    before = vegaslab.normalize(_write(tmp_path, "0 10ms\n1 20ms\n"))
    after = vegaslab.normalize(_write(tmp_path, "0 10ms\n1 30ms\n"))
    assert before["files"][0]["sha256"] != after["files"][0]["sha256"]
    assert before != after


def test_seed_argument_is_checked_and_recorded(tmp_path):
    path = _write(tmp_path, "0 10ms\n")
    assert vegaslab.normalize(path, seed=9)["seed"] == 9
    for bad in (-1, 2**64, 1.5, True):
        try:
            vegaslab.normalize(path, seed=bad)
        except vegaslab.ScenarioError as e:
            assert "seed" in str(e)
        else:  # pragma: no cover - the assertion below explains
            raise AssertionError(f"seed {bad!r} was accepted")


def test_scenario_errors_carry_kind_file_and_field(tmp_path):
    path = _write(tmp_path, "0 10ms\n")
    try:
        vegaslab.normalize(path, overrides=["flows[0].start=-1s"])
    except vegaslab.ScenarioError as e:
        assert (e.kind, e.field) == ("out-of-range", "flows[0].start")
        assert e.file.endswith("sc.toml")
        assert "must be >= 0 s and <= 10000000 s" in e.reason
    else:  # pragma: no cover
        raise AssertionError("a negative start was accepted")


def test_source_revision_names_a_commit_or_says_unknown():
    rev = vegaslab.source_revision()
    assert rev == "unknown" or len(rev.split("+")[0]) == 40


# ---------------------------------------------------------------------- the canonical text


def _canonical_agrees(text: str) -> None:
    import json

    from vegaslab.simulation import canonical_hash, scenario_hash

    doc = json.loads(text)
    assert text == json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_hash(text) == scenario_hash(doc)


def test_the_cores_canonical_text_is_pythons_for_every_catalog_run():
    # vegaslab.run hashes the core's text as it comes (provenance's scenario_sha256, the cache
    # key's input) instead of parsing and printing it again: the two must agree byte for byte.
    from vegaslab import _core
    from vegaslab.study.catalog import list_entries

    for entry in list_entries():
        for spec in entry.runs(quick=True):
            _canonical_agrees(_core.normalize_scenario(spec.scenario_path.read_text(), str(spec.scenario_path), None,
                                                       list(spec.overrides)))


def test_the_canonical_text_writes_any_float_as_python_does():
    # Floats are where serde_json and Python differ (1e-05 against 0.00001): any value in a
    # float field, tiny, huge or with many digits.
    from hypothesis import given, settings, strategies as st

    from vegaslab import _core

    @settings(max_examples=300, deadline=None)
    @given(rate=st.floats(min_value=0.0, max_value=1.0, exclude_max=True, allow_subnormal=True),
           mean=st.floats(min_value=1e-6, max_value=1e6))
    def check(rate, mean):
        text = SCENARIO.replace('delay_trace = "trace.txt"', f'delay = "1ms"\nerror_rate_forward = {rate!r}')
        text += f'app = {{ kind = "nps", mean_interarrival = {mean!r}, mean_flow_size = "10KB" }}\n'
        _canonical_agrees(_core.normalize_scenario(text, "x.toml", None, []))

    check()


def test_vegaslab_run_records_the_hash_of_the_scenario_it_ran(tmp_path):
    path = _write(tmp_path, "0 10ms\n1 20ms\n")
    r = vegaslab.run(path, overrides=["run.duration=1s"])
    prov = r.meta["provenance"]
    assert prov["scenario"] == vegaslab.normalize(path, overrides=["run.duration=1s"])
    assert prov["scenario_sha256"] == vegaslab.scenario_hash(prov["scenario"])
