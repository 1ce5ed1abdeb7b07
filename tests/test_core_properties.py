"""Whole-run properties of the simulator: determinism, conservation and golden summaries.

These run the compiled core through the public API on the catalog's scenarios, so they guard
the simulator's bookkeeping end to end (the controllers have their own unit tests in Rust).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import vegaslab
from vegaslab.study.catalog import builtin_dir
from vegaslab.study import catalog

ROOT = Path(__file__).resolve().parents[1]
CATALOG = builtin_dir()  # the catalog ships as package data: vegaslab/catalog_data/
GOLDEN = ROOT / "tests" / "golden"

# A short slice keeps the catalog-wide checks fast: every source gets 5 s after the last one
# starts (each run still sees slow start, losses and the Vegas rounds), and at most three
# variants of each entry run.
SLICE_AFTER_LAST_START_S = 5.0
VARIANTS_PER_ENTRY = 3
_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def _seconds(value) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    for unit in sorted(_UNITS, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * _UNITS[unit]
    return float(text)


def _short_duration(entry, spec) -> list[str]:
    sc = entry.scenario
    starts = [_seconds(x.get("start", 0)) for x in sc.get("flows", []) + sc.get("udp", [])]
    for item in spec.overrides:  # a variant may move start times
        key, _, value = item.partition("=")
        if key.endswith(".start"):
            starts.append(_seconds(value.strip().strip('"')))
    duration = _seconds(sc["run"]["duration"])
    return [f"run.duration={min(duration, max(starts, default=0.0) + SLICE_AFTER_LAST_START_S)}s"]


def _all_catalog_runs():
    for entry in catalog.list_entries():
        for spec in catalog.expand(entry)[:VARIANTS_PER_ENTRY]:
            yield pytest.param(spec, _short_duration(entry, spec), id=f"{entry.id}/{spec.name}")


def _without_wall_time(doc: dict) -> dict:
    doc = dict(doc)
    doc["meta"] = {k: v for k, v in doc["meta"].items() if k != "wall_time_s"}
    return doc


RUN_IN_CHILD = """
import json, sys, vegaslab
r = vegaslab.run(sys.argv[1], seed=7)
doc = {"meta": r.meta, "flows": r.flows.to_dict("records"), "queues": r.queues.to_dict("records")}
doc["meta"].pop("wall_time_s")
print(json.dumps(doc, sort_keys=True))
"""


def test_same_scenario_and_seed_give_byte_identical_results_in_two_processes():
    scenario = str(CATALOG / "va-reroute.toml")
    outs = [
        subprocess.run([sys.executable, "-c", RUN_IN_CHILD, scenario], check=True,
                       capture_output=True, text=True).stdout
        for _ in range(2)
    ]
    assert outs[0] == outs[1]
    assert json.loads(outs[0])["flows"][0]["sent_pkts"] > 0


def test_a_different_seed_changes_only_seeded_quantities_deterministically():
    # The only randomness in these scenarios is each sender's tick-clock phase (ns-2's
    # boot_time_); the same seed twice must agree exactly, whatever it changes.
    a = vegaslab.run(CATALOG / "va-buffer.toml", seed=3, overrides=["flows[0].cc=newreno"])
    b = vegaslab.run(CATALOG / "va-buffer.toml", seed=3, overrides=["flows[0].cc=newreno"])
    assert a.flows.equals(b.flows)


@pytest.mark.parametrize("spec, short", list(_all_catalog_runs()))
def test_packets_are_conserved_in_every_catalog_run(spec, short):
    r = vegaslab.run(spec.scenario_path, overrides=list(spec.overrides) + short)
    for _, f in r.flows.iterrows():
        assert f.sent_pkts == f.received_pkts + f.dropped_pkts + f.in_flight_pkts, f.flow
        assert f.delivered_pkts <= f.received_pkts
    q = r.queues
    # Every arrival at a queue is dropped, transmitted (its transmission started by the end of
    # the run) or still waiting at the end.
    assert (q.arrived_pkts == q.departed_pkts + q.dropped_pkts + q.backlog_pkts).all()
    assert (q.backlog_pkts <= q.max_len_pkts).all()


def test_packets_are_conserved_on_the_congested_benchmark_slice():
    r = vegaslab.run(CATALOG / "bench" / "grids-net2.toml", overrides=["run.duration=3s"])
    assert int(r.flows.dropped_pkts.sum()) > 0, "the slice should already be congested"
    for _, f in r.flows.iterrows():
        assert f.sent_pkts == f.received_pkts + f.dropped_pkts + f.in_flight_pkts, f.flow


# A 2 Mbit/s CBR source into a 1 Mbit/s link with a 100-packet queue (shared with the Rust tests).
OVERLOADED_LINK = (Path(__file__).parent / "data" / "overloaded-link.toml").read_text(encoding="utf-8")


def test_a_congested_link_departs_no_more_packets_and_bytes_than_its_bandwidth_carries():
    """Twice the bottleneck's rate into a 100-packet queue: the link transmits back to back
    from the start, and about 100 accepted packets still wait when the run ends. Over a run of
    D seconds it can start at most one transmission per packet time, the last at most at D."""
    r = vegaslab.run(OVERLOADED_LINK)
    q = r.queues.set_index("queue").loc["R->D"]
    link = r.links.set_index("link").loc["R->D"]
    u = r.udp.iloc[0]
    size = u.sent_bytes / u.sent_pkts  # one packet's wire size
    packet_s = size * 8 / link.bandwidth_bps
    duration = r.meta["duration_s"]
    assert q.departed_pkts * packet_s <= duration + packet_s
    assert link.sent_bytes * 8 / link.bandwidth_bps <= duration + packet_s
    assert q.departed_pkts * packet_s > duration - 10 * packet_s, "the link should be busy throughout"
    assert link.utilisation_ratio == pytest.approx(1.0, abs=packet_s / duration)
    assert 90 < q.backlog_pkts <= q.max_len_pkts
    assert q.arrived_pkts == q.departed_pkts + q.dropped_pkts + q.backlog_pkts
    assert int(r.meta["packet_hops"]) == int(r.queues.departed_pkts.sum())


def test_the_benchmark_bottleneck_sends_no_more_bytes_than_155_mbit_s_carry_in_10_s():
    """The benchmark's bottleneck once reported more bytes and departures than 10 s
    at 155 Mbit/s allow (packets still waiting in its 6711-packet queue at the end were counted)."""
    r = vegaslab.run(CATALOG / "bench" / "grids-net2.toml", overrides=["run.duration=10s"])
    link = r.links.set_index("link").loc["R1->R2"]
    q = r.queues.set_index("queue").loc["R1->R2"]
    largest = 1500 + 40  # the scenario's 1500-byte packets plus Reno's 40-byte TCP/IP header
    packet_s = largest * 8 / link.bandwidth_bps
    assert link.sent_bytes * 8 / link.bandwidth_bps <= r.meta["duration_s"] + packet_s
    assert q.arrived_pkts == q.departed_pkts + q.dropped_pkts + q.backlog_pkts


def _golden_cases() -> dict[str, dict]:
    """The golden cases, listed once in tests/golden/cases.toml, which the Rust test
    (crates/vegaslab-sim/tests/golden.rs) reads too: name -> {scenario, seed, overrides}."""
    with open(GOLDEN / "cases.toml", "rb") as fh:
        cases = tomllib.load(fh)["case"]
    return {c["name"]: c for c in cases}


GOLDEN_CASES = _golden_cases()


def _golden_dir() -> Path:
    """VEGASLAB_GOLDEN_DIR (as in the Rust test) reads and writes the golden files elsewhere,
    e.g. to regenerate into a scratch copy; the cases still come from tests/golden/cases.toml."""
    return Path(os.environ["VEGASLAB_GOLDEN_DIR"]) if os.environ.get("VEGASLAB_GOLDEN_DIR") else GOLDEN


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden_summary_is_unchanged(name):
    """A fixed scenario + seed must give the same summary forever, unless a change says why
    it moved: regenerate with VEGASLAB_UPDATE_GOLDEN=1 and explain the move in the commit.
    `cargo test -p vegaslab-sim --test golden` checks the same files and writes the same bytes;
    a missing file is a failure in both, never created silently."""
    case = GOLDEN_CASES[name]
    r = vegaslab.run(ROOT / case["scenario"], seed=case["seed"], overrides=case["overrides"])
    summary = {
        "flows": r.flows.to_dict("records"),
        "queues": r.queues.to_dict("records"),
        "events": int(r.meta["events"]),
    }
    text = json.dumps(summary, sort_keys=True, indent=1, default=float) + "\n"
    path = _golden_dir() / f"{name}.json"
    if os.environ.get("VEGASLAB_UPDATE_GOLDEN"):
        path.write_text(text)
    elif not path.exists():
        pytest.fail(f"golden file {path} is missing; create it with VEGASLAB_UPDATE_GOLDEN=1 and commit it")
    assert text == path.read_text(), f"{name} moved; see the test's docstring"
