"""Congestion control written in Python (``cc = "py:package.module:Class"``,
``vegaslab.Controller``): a Python Reno runs exactly as the native Rust Reno on a lossy
dumbbell; names that cannot be used, hooks that raise and windows the sender cannot use are
errors naming the flow's field or the class and hook; runs are deterministic; a sweep runs the
class on Dask workers, which import it by its name."""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from pandas.testing import assert_frame_equal

pytest.importorskip("vegaslab._core")

import vegaslab  # noqa: E402
from vegaslab.controller import load, spec_of  # noqa: E402

import python_controllers  # noqa: E402

#: Two Reno flows over a 1.5 Mbps dumbbell with a 10-packet droptail queue and 1% random loss
#: on the bottleneck: fast retransmits and timeouts both happen.
DUMBBELL = """
[run]
duration = "30s"

[monitor]
cwnd = true

[dumbbell]
pairs = 2
access = { bandwidth = "10Mbps", delay = "4ms" }
bottleneck = { bandwidth = "1.5Mbps", delay = "20ms", queue = { kind = "droptail", limit = 10 }, error_rate = 0.01 }

[[flows]]
from = "S1"
to = "D1"
cc = "reno"

[[flows]]
from = "S2"
to = "D2"
cc = "reno"
start = "1s"
"""

PY_RENO = "py:python_controllers:Reno"


def run(overrides, seed=1):
    return vegaslab.run(DUMBBELL, overrides=overrides, seed=seed)


def both(cc):
    return [f"flows[0].cc={cc}", f"flows[1].cc={cc}"]


def test_a_python_reno_runs_the_native_renos_cwnd_trajectory_and_goodput_exactly():
    native = run(both("reno"))
    python = run(both(PY_RENO))
    nf, pf = native.flows, python.flows
    assert list(pf["cc"]) == [PY_RENO, PY_RENO]
    assert (nf["dropped_pkts"] > 0).all(), "the comparison needs losses"
    assert_frame_equal(nf.drop(columns="cc"), pf.drop(columns="cc"), check_exact=True)
    ns, ps = native.series_flows, python.series_flows
    assert len(ns) > 100
    for column in ("cwnd_pkts", "ssthresh_pkts"):
        np.testing.assert_array_equal(ns[column].to_numpy(), ps[column].to_numpy())


def test_a_python_controller_passed_as_a_class_runs_under_its_import_path():
    res = run({"flows[0].cc": python_controllers.Reno, "flows[1].cc": python_controllers.Reno})
    assert list(res.flows["cc"]) == [PY_RENO, PY_RENO]


def test_a_python_controllers_variables_are_time_series_columns():
    res = run(both("py:python_controllers:CountingReno"))
    series = res.series_flows
    assert {"acks", "losses"} <= set(series.columns)
    assert series["acks"].max() > 100 and series["losses"].max() >= 1


def test_every_hook_is_called_with_what_it_describes():
    res = run(both("py:python_controllers:Recording"))
    last = res.series_flows.groupby("flow").last()
    for hook in ("init", "pkts_acked", "cong_avoid", "ssthresh", "set_state"):
        assert (last[f"{hook}_calls"] >= 1).all(), hook
    # One init per connection; far more ACKs than losses.
    assert (last["init_calls"] == 1).all()
    assert (last["cong_avoid_calls"] > 10 * last["ssthresh_calls"]).all()


def test_a_python_controller_runs_on_linuxs_stack():
    res = run([*both("py:python_controllers:Recording"), "flows[0].tcp.stack=linux", "flows[1].tcp.stack=linux"])
    assert (res.flows["goodput_bps"] > 0).all()
    assert (res.series_flows.groupby("flow")["cwnd_event_calls"].max() >= 1).all()


def test_a_sweep_keeps_the_runs_a_failing_controller_did_not_spoil(tmp_path):
    sweep = DUMBBELL + """
[[sweep.axis]]
path = "flows[0].cc"
values = ["reno", "py:python_controllers:FailsAfter50Acks"]
"""
    res = vegaslab.sweep(sweep, out=tmp_path / "store", scheduler="synchronous")
    outcomes = {o.spec.params["flows[0].cc"]: o for o in res.execution.outcomes}
    assert outcomes["reno"].status == "ran"
    failed = outcomes["py:python_controllers:FailsAfter50Acks"]
    assert failed.status != "ran"
    assert 'failed in cong_avoid: ZeroDivisionError: the idea divided by zero' in failed.error
    assert set(res.flows["cc"]) == {"reno"}


def test_an_int_from_ssthresh_lets_cwnd_continue_from_it_as_in_linux():
    res = run(both("py:python_controllers:LinuxSsthresh"))
    native = run(both("reno"))
    assert list(res.flows["goodput_bps"]) != list(native.flows["goodput_bps"])


def test_the_same_scenario_and_seed_give_identical_results_with_a_python_controller():
    a = run(both("py:python_controllers:CountingReno"), seed=7)
    b = run(both("py:python_controllers:CountingReno"), seed=7)
    assert a.flows.equals(b.flows)
    assert a.series_flows.equals(b.series_flows)


@pytest.mark.parametrize("cc, message", [
    ("py:no_such_module_here:Reno", 'flows[0].cc: cannot import module "no_such_module_here"'),
    ("py:python_controllers:Missing", 'flows[0].cc: module "python_controllers" has no class "Missing"'),
    ("py:python_controllers:NotAController",
     'flows[0].cc: "python_controllers:NotAController" is not a subclass of vegaslab.Controller'),
    ("py:python_controllers", 'flows[0].cc=py:python_controllers: "py:python_controllers" is not a Python '
                              'controller name: expected "py:package.module:Class"'),
])
def test_a_python_controller_name_that_cannot_be_used_names_the_flows_cc_field(cc, message):
    with pytest.raises(vegaslab.ScenarioError) as err:
        run([f"flows[0].cc={cc}"])
    assert message in str(err.value)


def test_a_hook_that_raises_stops_the_run_naming_the_class_and_the_hook():
    with pytest.raises(vegaslab.ControllerError) as err:
        run(both("py:python_controllers:FailsAfter50Acks"))
    line = next(i for i, text in enumerate(Path(python_controllers.__file__).read_text().splitlines(), 1)
                if "the idea divided by zero" in text)
    assert str(err.value) == ('the Python controller "py:python_controllers:FailsAfter50Acks" failed in cong_avoid: '
                              f"ZeroDivisionError: the idea divided by zero (at python_controllers.py:{line})")
    assert isinstance(err.value.__cause__, ZeroDivisionError)
    assert isinstance(err.value, vegaslab.SimulationError)


def test_a_window_the_sender_cannot_use_is_an_error_naming_the_hook():
    with pytest.raises(vegaslab.ControllerError, match=r'"py:python_controllers:ZeroWindow" failed in cong_avoid: '
                                                        r"ValueError: set cwnd to 0"):
        run(both("py:python_controllers:ZeroWindow"))


def test_the_base_class_default_ssthresh_is_the_rust_default():
    class Loss:
        kind, window = "fast_retransmit", 23.0
    assert vegaslab.Controller().ssthresh(None, Loss()) == (11, 11.5)
    Loss.kind = "timeout"
    assert vegaslab.Controller().ssthresh(None, Loss()) == (11, 1.0)


def test_a_controller_class_pickles_by_reference_and_loads_by_its_name():
    cls = pickle.loads(pickle.dumps(python_controllers.CountingReno))
    assert cls is python_controllers.CountingReno
    assert spec_of(cls) == "py:python_controllers:CountingReno"
    loaded, hooks, sha = load(spec_of(cls))
    assert (loaded, hooks) == (cls, ["ssthresh", "variables"])
    assert sha == hashlib.sha256(Path(python_controllers.__file__).read_bytes()).hexdigest()


def test_the_normalised_scenario_records_the_hash_of_the_controllers_module(tmp_path, monkeypatch):
    module = tmp_path / "edited_controller.py"
    module.write_text("import vegaslab\nclass Mine(vegaslab.Controller):\n    def cong_avoid(self, w, ack):\n"
                      "        w.cwnd += 1.0 / w.cwnd\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    overrides = ["flows[0].cc=py:edited_controller:Mine"]
    before = vegaslab.normalize(DUMBBELL, overrides=overrides)["flows"][0]["algorithm"]["Python"]
    module.write_text(module.read_text() + "    # an edit\n")
    after = vegaslab.normalize(DUMBBELL, overrides=overrides)["flows"][0]["algorithm"]["Python"]
    assert before["module"] == "edited_controller" and before["class"] == "Mine"
    assert before["source_sha256"] != after["source_sha256"]


def test_a_class_defined_in_a_function_has_no_import_path():
    class Local(vegaslab.Controller):
        def cong_avoid(self, w, ack):
            pass
    with pytest.raises(ValueError, match="top level of an importable module"):
        spec_of(Local)


SWEEP = DUMBBELL + """
[sweep]
seeds = 2

[[sweep.axis]]
path = "flows[0].cc"
values = ["reno", "py:python_controllers:Reno"]
"""


@pytest.mark.parametrize("scheduler", ["synchronous", "local"])
def test_a_sweep_runs_a_python_controller_on_its_workers(tmp_path, monkeypatch, scheduler):
    here = str(Path(__file__).parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
    res = vegaslab.sweep(SWEEP, out=tmp_path / "store", scheduler=scheduler, workers=1)
    flows = res.flows
    first = flows[flows["flow"] == flows["flow"].iloc[0]]
    by_cc = {cc: sorted(g["goodput_bps"]) for cc, g in first.groupby("cc")}
    assert set(by_cc) == {"reno", "py:python_controllers:Reno"}
    assert by_cc["reno"] == by_cc["py:python_controllers:Reno"]


#: The dumbbell without packet errors, which neither ns-2's bridge nor the testbed has, and
#: with windows the testbed does not refuse.
WITHOUT_ERRORS = ["dumbbell.bottleneck.error_rate=0", "flows[0].tcp.window=1000", "flows[1].tcp.window=1000"]


def test_the_ns2_bridge_refuses_a_python_controller_in_one_sentence():
    from vegaslab.ns2 import build_model

    doc = vegaslab.normalize(DUMBBELL, overrides=[f"flows[0].cc={PY_RENO}", *WITHOUT_ERRORS])
    with pytest.raises(ValueError, match=r"flows\[0\] \('flow0'\)\.algorithm: a Python controller runs only in vegaslab's own "
                                         r"simulator; ns-2 cannot host it"):
        build_model(doc)


def test_the_kernel_testbed_refuses_a_python_controller_in_one_sentence():
    from vegaslab.testbed.plan import PlanError, plan

    overrides = [f"flows[0].cc={PY_RENO}", *WITHOUT_ERRORS]
    ccs = {f["name"]: f["cc"] for f in vegaslab.validate(DUMBBELL, overrides=overrides)["flows"]}
    with pytest.raises(PlanError, match=r"is a Python controller, which runs only in vegaslab's own simulator; "
                                        r"the kernel testbed cannot host it"):
        plan(vegaslab.normalize(DUMBBELL, overrides=overrides), ccs)


def test_the_command_line_tells_a_failing_hook_in_one_line_with_exit_status_1(tmp_path, capsys):
    from vegaslab.cli import main

    scenario = tmp_path / "s.toml"
    scenario.write_text(DUMBBELL)
    code = main(["run", str(scenario), "--set", "flows[0].cc=py:python_controllers:FailsAfter50Acks",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 1
    assert err.startswith('vegaslab: the Python controller "py:python_controllers:FailsAfter50Acks" failed in '
                          "cong_avoid: ZeroDivisionError"), err
    assert "\n" not in err and "Traceback" not in err
