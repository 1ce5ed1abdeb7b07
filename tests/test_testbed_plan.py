"""What the namespace testbed builds from a scenario (no root needed): one shared bottleneck,
the summed propagation delay of every pair, delay changes, kernel congestion controls; and the
scenarios it refuses, with the reason."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from vegaslab.simulation import normalize, validate
from vegaslab.study.catalog import builtin_dir
from vegaslab.testbed.network import Route
from vegaslab.testbed.plan import PlanError, plan

CATALOG = builtin_dir()


def _plan(name: str, *overrides: str):
    path, overrides = CATALOG / name, list(overrides)
    ccs = {f["name"]: f["cc"] for f in validate(path, overrides=overrides)["flows"]}
    return plan(normalize(path, overrides=overrides), ccs)


def test_the_rerouting_chain_has_one_bottleneck_and_a_delay_change_at_20_s():
    p = _plan("va-reroute.toml")
    assert p.senders == ["S1"] and p.receivers == ["D1"]
    assert p.forward == (1e6, 50) and p.bottleneck_name == "S1->R1"
    # 10 + 5 + 5 ms one way in each direction.
    assert p.pair_delays_ns == {("S1", "D1"): 20_000_000, ("D1", "S1"): 20_000_000}
    # At 20 s the first link's forward delay becomes 100 ms: S1->D1 is 110 ms from then on.
    # The scenario changes both directions of that link.
    assert p.delay_changes == [(20_000_000_000, "D1", "S1", 110_000_000), (20_000_000_000, "S1", "D1", 110_000_000)]
    assert [(f.name, f.cc) for f in p.flows] == [("f1", "vl_vegas")]
    assert p.kernel_algorithms == {"f1": ("vegas", {"alpha": 1.0, "beta": 3.0, "gamma": 1.0})}


def test_reno_and_newreno_run_as_the_kernels_reno_and_cubic_as_its_cubic():
    p = _plan("va-reroute.toml", "flows[0].cc=newreno")
    assert p.flows[0].cc == "reno" and p.kernel_algorithms == {}
    assert _plan("va-reroute.toml", "flows[0].cc=cubic").flows[0].cc == "cubic"


def test_a_dumbbell_gives_every_pair_its_own_path_delay():
    p = _plan("va-newreno-share.toml")
    assert len(p.flows) >= 2
    assert set(p.senders).isdisjoint(p.receivers)
    for f in p.flows:
        assert (f.src, f.dst) in p.pair_delays_ns and (f.dst, f.src) in p.pair_delays_ns


def test_each_receiver_gets_a_route_with_the_flows_packet_size_and_initial_window():
    p = _plan("va-reroute.toml", "flows[0].tcp.window_init=4")
    # 1000-byte payloads + 52 bytes of kernel headers (IPv4, TCP, timestamps).
    assert p.routes == {"D1": Route(mtu=1052, initcwnd=4)}


def test_flows_to_one_receiver_must_agree_on_packet_size_and_initial_window():
    both_to_d1 = ("flows[1].to=D1", "flows[0].tcp.window=100000", "flows[1].tcp.window=100000")
    assert _plan("va-newreno-share.toml", *both_to_d1).routes.keys() == {"D1"}
    with pytest.raises(PlanError, match=r"flows \(nr\).tcp: every flow to D1 must have the same packet_size and window_init"):
        _plan("va-newreno-share.toml", *both_to_d1, "flows[1].tcp.window_init=4")


def test_rovegas_gets_router_stamps_in_each_direction_whose_router_is_aqt_enabled():
    assert _plan("va-reroute.toml").aqt is None  # no RoVegas flow: no AQT option at all
    rovegas = ("flows[0].cc=rovegas", "flows[0].params.flavour=linux")
    # The bottleneck is S1 -> R1: its forward queue is S1's, its reverse queue R1's.
    assert _plan("va-reroute.toml", *rovegas, 'aqt.routers=["S1"]').aqt == (True, False)
    assert _plan("va-reroute.toml", *rovegas, 'aqt.routers=["S1", "R1"]').aqt == (True, True)
    assert _plan("va-reroute.toml", *rovegas, 'aqt.routers=["R2"]').aqt == (False, False)
    assert _plan("va-reroute.toml", *rovegas).kernel_algorithms["f1"][0] == "rovegas"


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kernel"


def _plan_file(path, *overrides: str):
    overrides = list(overrides)
    ccs = {f["name"]: f["cc"] for f in validate(path, overrides=overrides)["flows"]}
    return plan(normalize(path, overrides=overrides), ccs)


def test_two_way_traffic_puts_each_host_on_its_side_and_each_flow_in_its_direction():
    p = _plan_file(EXAMPLES / "e-two-way.toml")
    # Vegas S1 -> D1 is the first flow: its direction is forward, its upstream side the sender
    # namespace; Reno D2 -> S2 crosses the same link the other way.
    assert p.senders == ["S1", "S2"] and p.receivers == ["D1", "D2"]
    assert p.directions == {"vegas": "forward", "reno": "reverse"} and p.two_way
    assert (p.bottleneck_name, p.reverse_name) == ("R1->R2", "R2->R1")
    assert p.forward == p.reverse == (20e6, 67)
    # Each receiver gets its route from the other side: D1 from the sender namespace, S2 from
    # the receiver namespace.
    assert set(p.routes) == {"D1", "S2"}
    assert [(f.src, f.dst) for f in p.flows] == [("S1", "D1"), ("D2", "S2")]
    assert not _plan_file(EXAMPLES / "b-vegas-reno.toml").two_way


def test_the_grids_papers_two_way_runs_have_hosts_that_send_and_receive():
    p = _plan("wf-net1-queue.toml")
    assert p.directions == {"reno1": "forward", "vegas2": "forward", "rreno1": "reverse", "rvegas2": "reverse"}
    assert p.senders == ["S1", "S2"] and p.receivers == ["D1", "D2"]
    assert set(p.routes) == {"S1", "S2", "D1", "D2"}


def test_a_host_may_not_send_larger_segments_than_it_receives():
    # The receiver advertises the MSS of its route back to the sender, so S1, receiving
    # 1000-byte segments, would send 1000-byte ones too where the scenario says 1448.
    with pytest.raises(PlanError, match=r"flows \(vegas\).tcp.packet_size: S1 receives 1000-byte segments and "
                                        r"cannot send larger ones"):
        _plan_file(EXAMPLES / "e-two-way.toml", "flows[1].from=D1", "flows[1].to=S1", "flows[1].tcp.packet_size=1000")
    both = _plan_file(EXAMPLES / "e-two-way.toml", "flows[1].from=D1", "flows[1].to=S1")
    assert both.directions == {"vegas": "forward", "reno": "reverse"}


def test_the_rovegas_backward_load_example_and_its_vegas_twin_plan_alike():
    rovegas = _plan_file(EXAMPLES / "f-rovegas-backward.toml")
    vegas = _plan_file(EXAMPLES / "f-rovegas-backward.toml", "flows[0].cc=vegas")
    assert rovegas.aqt == (True, True) and vegas.aqt is None  # both routers stamp, each direction
    assert rovegas.directions == vegas.directions == {"f1": "forward", "backward": "reverse"}
    assert rovegas.kernel_algorithms["f1"][1]["alpha"] == vegas.kernel_algorithms["f1"][1]["alpha"] == 1
    assert rovegas.kernel_algorithms["f1"][1]["beta"] == vegas.kernel_algorithms["f1"][1]["beta"] == 3
    assert [f.start_s for f in rovegas.flows] == [0.0, 10.0]


def test_a_file_transfer_keeps_its_size():
    p = _plan("va-file.toml")
    assert p.flows[0].size_bytes == 5_000_000


@pytest.mark.parametrize("name, overrides, message", [
    ("wf-net1-red.toml", (), r"links\[\d\]\.\w+\.queue: the testbed has DropTail bottlenecks only"),
    ("va-reroute.toml", ('links[0].queue={ kind = "red", limit = 50, min = 5, max = 15 }',),
     r"DropTail bottlenecks only"),
    ("va-reroute.toml", ('links[0].queue={ kind = "codel", limit = 100 }',),
     r"links\[0\]\.\w+\.queue: the testbed has DropTail bottlenecks only \(these machines' kernels have no RED "
     r"or CoDel qdisc\), got 'codel'"),
    ("rv-single.toml", (), r"udp: the testbed runs TCP flows only"),
    ("va-reroute.toml", ("flows[0].cc=rovegas", "flows[0].params.probe_every=2"), r"probe_every"),
    ("va-reroute.toml", ("links[0].error_rate=0.01",), r"error_rate: the testbed has no packet errors"),
    # At 20 Mbit/s, after the reroute to a 220 ms RTT, the path holds 579 packets (529 of 1040
    # bytes in flight, 50 queued): a window of 100 binds in the simulator, and the kernel's
    # cannot be capped.
    ("va-reroute.toml", ("links[0].bandwidth=20Mbps", "links[1].bandwidth=20Mbps", "links[2].bandwidth=20Mbps"),
     r"flows \(f1\).tcp.window: 100 packets would limit this flow below what the path holds \(579 packets: "
     r"20 Mbit/s x 220 ms plus a 50-packet buffer\)"),
    ("va-reroute.toml", ("flows[0].tcp.packet_size=3000",), r"packet_size: the testbed sends whole payloads of 40 to 1996"),
    ("va-reroute.toml", ("flows[0].tcp.window_init=1.5",), r"window_init: the kernel's initial window is a whole number"),
])
def test_scenarios_the_testbed_cannot_build_are_refused_with_the_reason(name, overrides, message):
    with pytest.raises(PlanError, match=message):
        _plan(name, *overrides)


def test_every_key_of_the_layout_the_testbed_reads_is_used_refused_or_listed_as_ignored():
    """A key the core adds to the normalised scenario must get a decision here, never be
    carried past the testbed unread (as link failures and loss patterns once were)."""
    import pathlib

    from vegaslab import schema
    from vegaslab.testbed import plan as plan_module

    source = pathlib.Path(plan_module.__file__).read_text(encoding="utf-8")
    read = [("Scenario", None), ("LinkSpec", None), ("DirectionSpec", None), ("QueueSpec", "droptail"),
            ("FlowSpec", None), ("TcpConfig", None), ("AppSpec", "ftp"), ("AppSpec", "file")]
    undecided = sorted(f"{name}.{key}" for name, variant in read for key in schema.keys(name, variant)
                       if key not in plan_module.IGNORED.get(name, ()) and f'"{key}"' not in source)
    assert undecided == []


@pytest.mark.parametrize("overrides, message", [
    (["links[1].down=[[\"5s\", \"6s\"]]"], "links[1].down: the testbed does not take links down"),
    (["links[1].loss={ every = 10 }"], "loss: the testbed has no loss patterns"),
])
def test_link_failures_and_loss_patterns_are_refused(overrides, message):
    with pytest.raises(PlanError, match=re.escape(message)):
        _plan("va-reroute.toml", *overrides)
