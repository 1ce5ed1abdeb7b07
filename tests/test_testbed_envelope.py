"""The testbed's operating envelope as a run checks it (no root, no namespaces): made-up
envelope files against a scenario's bottleneck rate. The measurement itself is the host's
(`vegaslab testbed envelope`, `make testbed-envelope`) and is never asserted here."""
from __future__ import annotations

import io
import json

import pytest

from vegaslab.testbed import envelope
from vegaslab.testbed.errors import TestbedError

HERE = envelope.machine()


def _file(tmp_path, held_mbps: float, **machine):
    path = tmp_path / "testbed-envelope.json"
    path.write_text(json.dumps({"held_rate_bps": held_mbps * 1e6, "measured": "2026-11-29T20:00:00Z",
                                "machine": {**HERE, **machine}, "steps": []}))
    return path


def test_a_rate_within_the_envelope_runs_without_a_word(tmp_path):
    out = io.StringIO()
    got = envelope.check_rates([50e6], _file(tmp_path, 60), stream=out)
    assert got == {"file": str(tmp_path / "testbed-envelope.json"), "held_rate_bps": 60e6, "within": True}
    assert out.getvalue() == ""


def test_a_rate_beyond_the_envelope_warns_and_names_both_rates(tmp_path):
    out = io.StringIO()
    # Two-way: the reverse direction's rate counts as well.
    got = envelope.check_rates([50e6, 100e6], _file(tmp_path, 60), stream=out)
    assert got["within"] is False and got["held_rate_bps"] == 60e6
    assert "the bottleneck's 100 Mbit/s is beyond this machine's testbed envelope (60 Mbit/s held" in out.getvalue()


def test_without_an_envelope_file_the_run_says_so_once_and_goes_ahead(tmp_path):
    out = io.StringIO()
    missing = tmp_path / "none.json"
    first = envelope.check_rates([500e6], missing, stream=out)
    second = envelope.check_rates([500e6], missing, stream=out)
    assert first == second == {"file": None, "held_rate_bps": None, "within": None}
    assert out.getvalue().count("no testbed envelope is recorded for this machine") == 1


def test_an_envelope_of_another_machine_is_not_applied(tmp_path):
    out = io.StringIO()
    got = envelope.check_rates([500e6], _file(tmp_path, 60, hostname="elsewhere", cpus=64), stream=out)
    assert got["within"] is None and "measured on elsewhere (64 cores), not this machine" in out.getvalue()


def test_a_broken_envelope_file_is_an_error_naming_it(tmp_path):
    path = tmp_path / "testbed-envelope.json"
    path.write_text("[1, 2")
    with pytest.raises(TestbedError, match=r"testbed-envelope.json: not a testbed envelope \(invalid JSON"):
        envelope.check_rates([10e6], path)
    path.write_text("[1, 2]")
    with pytest.raises(TestbedError, match=r"not a testbed envelope \(expected a JSON object\)"):
        envelope.check_rates([10e6], path)


@pytest.mark.parametrize("carried, empty, held", [
    (49.1e6, 0.0, True),     # within 2% of 50 Mbit/s, never empty
    (48.9e6, 0.0, False),    # 2.2% short
    (50.0e6, 0.011, False),  # the queue empty in 1.1% of the samples
    (50.0e6, 0.01, True),
])
def test_a_step_holds_its_rate_when_it_carries_it_and_the_queue_never_starves(carried, empty, held):
    assert envelope.held(50e6, carried, empty) is held


def test_the_measurement_refuses_rates_outside_the_delay_lines_range():
    with pytest.raises(TestbedError, match=r"rates: between 1 and 500 Mbit/s each"):
        envelope.measure([10, 1000])


def test_the_envelope_file_is_written_whole(tmp_path):
    path = envelope.write({"held_rate_bps": 1e6, "machine": HERE}, tmp_path / "out" / "env.json")
    assert json.loads(path.read_text())["held_rate_bps"] == 1e6
    assert [p.name for p in path.parent.iterdir()] == ["env.json"]
