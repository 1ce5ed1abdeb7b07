"""run.tie_order (scenario::TieOrder): events tied on time, ns-2 double and scheduling instant
run in scheduling order by default, or in an order drawn from the seed with "shuffled"."""
import pytest

import vegaslab
from vegaslab.ns2 import translate

# Four Reno flows started together over equal paths: their packets tie at the routers.
LOCKSTEP = {
    "run": {"duration": "3s"},
    "dumbbell": {"pairs": 4, "bottleneck": {"bandwidth": "5Mbps", "delay": "10ms", "queue": {"kind": "droptail", "limit": 20}},
                 "access": {"bandwidth": "100Mbps", "delay": "1ms"}},
    "flows": [{"name": "f{i}", "pairs": "1-4", "cc": "reno", "start": "0s"}],
    "monitor": {},
}


def _sent(doc, seed=1, *overrides):
    return vegaslab.run(doc, seed=seed, overrides=list(overrides)).flows.sent_pkts.tolist()


def test_the_default_is_absent_from_the_normalised_scenario_so_stored_keys_stay():
    assert "tie_order" not in vegaslab.normalize(vegaslab.to_toml(LOCKSTEP))
    shuffled = vegaslab.normalize(vegaslab.to_toml(LOCKSTEP), overrides=["run.tie_order=shuffled"])
    assert shuffled["tie_order"] == "shuffled"
    assert _sent(LOCKSTEP) == _sent(LOCKSTEP, 1, "run.tie_order=ns2")


def test_shuffled_ties_change_a_lockstep_run_and_are_fixed_by_the_seed():
    default = _sent(LOCKSTEP)
    shuffled = _sent(LOCKSTEP, 1, "run.tie_order=shuffled")
    assert shuffled != default
    assert shuffled == _sent(LOCKSTEP, 1, "run.tie_order=shuffled")
    # Another seed draws another order (the tick phases change too; with ticks fixed as here,
    # only the ties differ).
    fixed = ["flows[0].tcp.tick_phase=1ms"]
    assert _sent(LOCKSTEP, 1, *fixed) == _sent(LOCKSTEP, 2, *fixed)
    assert _sent(LOCKSTEP, 1, *fixed, "run.tie_order=shuffled") != _sent(LOCKSTEP, 2, *fixed, "run.tie_order=shuffled")


def test_an_unknown_tie_order_names_the_field_and_the_allowed_values():
    with pytest.raises(vegaslab.ScenarioError) as err:
        vegaslab.normalize(vegaslab.to_toml(LOCKSTEP), overrides=["run.tie_order=random"])
    assert "run.tie_order" in str(err.value) and '"shuffled"' in str(err.value)


def test_the_ns2_bridge_refuses_shuffled_ties():
    doc = vegaslab.normalize(vegaslab.to_toml(LOCKSTEP), overrides=["run.tie_order=shuffled"])
    with pytest.raises(ValueError, match="run.tie_order"):
        translate.build_model(doc)
    translate.build_model(vegaslab.normalize(vegaslab.to_toml(LOCKSTEP)))  # the default runs
