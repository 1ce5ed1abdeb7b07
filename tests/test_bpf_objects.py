"""Compiled BPF struct_ops objects as a flow's congestion control, from Python: ``vegaslab.run``
takes one as a path or a ``{bpf = ...}`` table, results name it ``bpf:<name>``, a faulty object
is a ``ScenarioError`` on its field, sweeps run it on Dask workers, and the ns-2 bridge refuses it.

The objects come from ``make bpf`` (``kernel/build/``); without them these tests skip with the
reason, and fail under ``make test`` (``VEGASLAB_REQUIRE_BPF=1``).
"""
from __future__ import annotations

from pathlib import Path

import pytest

import vegaslab
from kernel_requirements import simulator_loads, skip_unless, unavailable

BUILD = Path(__file__).resolve().parents[1] / "kernel" / "build"
VEGAS = BUILD / "vl_vegas.bpf.o"
CUBIC = BUILD / "selftests" / "bpf_cubic.bpf.o"
OOB = BUILD / "test-objects" / "oob.bpf.o"


def _built(*paths: Path) -> None:
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(f"{p} is missing (run `make bpf`)")


needs_objects = skip_unless(unavailable(lambda: _built(VEGAS, CUBIC, OOB)))

SCENARIO = """
[run]
duration = "20s"

[[links]]
endpoints = ["S1", "D1"]
bandwidth = "2Mbps"
delay = "20ms"
queue = { limit = 20 }

[[flows]]
from = "S1"
to = "D1"
cc = "vegas"
params = { flavour = "linux" }

[[flows]]
from = "S1"
to = "D1"
cc = "cubic"
start = "2s"
"""


@needs_objects
def test_an_object_given_as_a_path_runs_and_is_named_after_its_struct_ops_name():
    res = vegaslab.run(SCENARIO, overrides={"flows[0].cc": VEGAS, "flows[0].params": {}})
    flows = res.flows.set_index("flow")
    assert flows.loc["flow0", "cc"] == "bpf:vl_vegas"
    assert flows.loc["flow0", "goodput_bps"] > 0


@needs_objects
def test_the_kernel_vegas_object_gives_the_rust_linux_vegas_results_exactly():
    native = vegaslab.run(SCENARIO)
    obj = vegaslab.run(SCENARIO, overrides={"flows[0].cc": {"bpf": str(VEGAS)}, "flows[0].params": {}})
    cols = ["goodput_bps", "retransmitted_pkts", "mean_cwnd_pkts", "final_cwnd_pkts"]
    assert native.flows[cols].to_dict("records") == obj.flows[cols].to_dict("records")


@needs_objects
def test_the_normalised_scenario_records_the_object_by_its_hash():
    import hashlib

    doc = vegaslab.normalize(SCENARIO, overrides={"flows[1].cc": CUBIC})
    record = doc["flows"][1]["algorithm"]["Bpf"]
    assert record["name"] == "bpf_cubic"
    assert record["sha256"] == hashlib.sha256(CUBIC.read_bytes()).hexdigest()


@needs_objects
def test_an_object_that_faults_is_a_scenario_error_naming_the_flow():
    with pytest.raises(vegaslab.ScenarioError) as e:
        vegaslab.run(SCENARIO, overrides={"flows[0].cc": OOB, "flows[0].params": {}})
    assert e.value.field == "flows[0].cc.bpf"
    assert e.value.kind == "file"
    assert "the BPF program hostile failed in cong_avoid at" in str(e.value)


def test_a_file_that_is_not_an_object_is_a_scenario_error_on_its_field(tmp_path):
    bad = tmp_path / "bad.bpf.o"
    bad.write_bytes(b"\x7fELF but not really")
    with pytest.raises(vegaslab.ScenarioError) as e:
        vegaslab.run(SCENARIO, overrides={"flows[0].cc": bad, "flows[0].params": {}})
    assert e.value.field == "flows[0].cc.bpf"
    assert e.value.kind == "file"
    assert str(bad) in str(e.value)


@needs_objects
def test_the_ns2_bridge_refuses_a_bpf_object_in_one_sentence():
    from vegaslab.ns2 import build_model

    doc = vegaslab.normalize(SCENARIO, overrides={"flows[0].cc": VEGAS, "flows[0].params": {}})
    with pytest.raises(ValueError, match=r"flows\[0\] \('flow0'\)\.algorithm: a BPF object runs in vegaslab's own "
                                         r"simulator and in the Linux kernel; ns-2 cannot load it"):
        build_model(doc)


@needs_objects
def test_a_sweep_runs_an_object_on_dask_workers(tmp_path):
    sweep = SCENARIO + f"""
[sweep]
seeds = 2

[[sweep.axis]]
path = "flows[1].cc"
values = ["cubic", "bpf:{CUBIC}"]
"""
    res = vegaslab.sweep(sweep, out=tmp_path / "store", scheduler="local", workers=1)
    second = res.flows[res.flows["flow"] == "flow1"]
    assert sorted(set(second["cc"])) == ["bpf:bpf_cubic", "cubic"]
    assert (second["goodput_bps"] > 0).all()


SUITE = Path(__file__).resolve().parents[1] / "examples" / "kernel" / "suite" / "cases.toml"


def _suite_cases() -> list[dict]:
    import tomllib

    return tomllib.loads(SUITE.read_text())["case"]


@needs_objects
@pytest.mark.parametrize("case", _suite_cases(), ids=lambda c: c["name"])
def test_the_kernel_vegas_family_objects_give_the_rust_results_on_the_comparison_suite(case):
    """Each Vegas-family flow of a suite case (at its default parameters: the objects carry
    their defaults compiled in) run from its kernel object gives the very results of the Rust
    controller it was written from."""
    from vegaslab import kernel
    from vegaslab.study.robustness.readings import flow_algorithms

    path = (SUITE.parent / case["scenario"]).resolve()
    sets = list(case.get("set", []))
    objects = {}
    for i, f in enumerate(flow_algorithms(path.read_text(), str(path), sets)):
        obj = BUILD / f"{kernel.ALGORITHMS.get(f.cc, '')}.bpf.o"
        if f.cc in kernel.ALGORITHMS and f.set_params <= {"flavour"} and simulator_loads(obj):
            objects[i] = obj
    if not objects:
        pytest.skip(f"{case['name']}: no Vegas-family flow at its default parameters")
    swapped = sets + [o for i, obj in objects.items() for o in (f"flows[{i}].cc=bpf:{obj}", f"flows[{i}].params={{}}")]
    native, obj = vegaslab.run(path, overrides=sets), vegaslab.run(path, overrides=swapped)
    cols = ["flow", "goodput_bps", "retransmitted_pkts", "timeouts", "mean_cwnd_pkts", "final_cwnd_pkts"]
    assert native.flows[cols].to_dict("records") == obj.flows[cols].to_dict("records")
