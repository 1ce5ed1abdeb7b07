"""A scenario run on the namespace testbed end to end: the kernel's TCP with
vegaslab's BPF Vegas and the kernel's reno through the scenario's bottleneck and delays, giving
the same Results tables as the simulator. Needs root and the BPF tools (see test_kernel.py)."""
from __future__ import annotations

from pathlib import Path

from vegaslab import kernel
from vegaslab.study.catalog import builtin_dir
from vegaslab.testbed.network import check as network_check
from accuracy import measurement, report
from kernel_requirements import skip_unless, unavailable

REASON = unavailable(kernel.check, network_check)
pytestmark = skip_unless(REASON)

REROUTE = builtin_dir() / "va-reroute.toml"
# The rerouting chain at 20 Mbit/s (the shape of the kernel comparison (c)), 4 s, 50-packet buffers; a
# window that never binds (the testbed refuses one that would).
FAST = ["run.duration=4s", "links[0].bandwidth=20Mbps", "links[1].bandwidth=20Mbps", "links[2].bandwidth=20Mbps",
        "flows[0].tcp.window=100000"]
RATE_BPS = 20e6
BUFFER_PKTS = 50

# What these check is the run, not how the kernel's TCP fares on this host: a transfer carried
# at more than a fifth of the link (a rate or window read in the wrong unit is off by 8 or 1000
# times; on a busy 2-core host the flows ran at 9-18 Mbit/s), queues against fractions of the
# buffer (a few packets against a full buffer), stamps against half the smallest RTT. The
# tighter numbers (Vegas's queue under 10 packets, reno's reaching 40, the throughputs) are
# measured by test_measure_the_queues_and_throughputs_of_kernel_vegas_rovegas_and_reno.


def _run(*overrides, stack=None):
    from vegaslab.testbed.run import run
    from vegaslab.testbed.stack import Stack

    return run(REROUTE, overrides=[*FAST, *overrides], stack=stack or Stack())


def _queue_after(r, seconds: float):
    """The bottleneck's sampled queue (packets) after ``seconds`` of the run."""
    return r.series_queues[r.series_queues.time_s > seconds].length_pkts


def test_kernel_vegas_keeps_a_small_queue_at_a_bottleneck_where_reno_builds_one():
    vegas = _run("flows[0].cc=vegas", "flows[0].params.flavour=linux")
    reno = _run("flows[0].cc=newreno")
    for r in (vegas, reno):
        assert set(r.flows.columns) >= {"flow", "cc", "throughput_bps", "final_cwnd_pkts", "retransmitted_pkts"}
        assert r.flows.throughput_bps.iloc[0] > RATE_BPS / 5, r.flows.throughput_bps.iloc[0]
        assert len(r.series_flows) >= 350  # one sample per 10 ms (a late sampler catches up)
    # Vegas holds a few packets (alpha to beta, 2 to 4) once out of slow start; a busy host's
    # bursts (the delay line released late) raised its mean to 11 at most: its typical queue
    # stays under half the buffer. Reno, loss-based, builds a queue at the same bottleneck
    # (its largest after 1 s was 32-50 packets, depending on where slow start left its window),
    # so the small one is Vegas's doing; a fifth of the buffer is the bound, against none.
    assert _queue_after(vegas, 2).median() < BUFFER_PKTS / 2, _queue_after(vegas, 2).describe()
    assert _queue_after(reno, 1).max() > BUFFER_PKTS / 5, _queue_after(reno, 1).describe()
    assert vegas.flows.cc.iloc[0] == "vegas" and reno.flows.cc.iloc[0] == "newreno"
    assert "vl_vegas" not in kernel.registered()  # unregistered after the run
    # What each ran with, as the kernel reported it: the BPF program's globals (Linux Vegas'
    # alpha 2, beta 4, gamma 1) and reno, which has no parameters.
    assert vegas.meta["testbed"]["kernel_parameters"] == {"vl_vegas": kernel.program_parameters("vegas")}
    assert vegas.meta["testbed"]["kernel_parameters"]["vl_vegas"]["vl_alpha"] == 2
    assert reno.meta["testbed"]["kernel_parameters"] == {"reno": {}}


def test_a_scheduled_delay_change_reaches_the_kernels_rtt():
    r = _run("flows[0].cc=cubic", 'links[0].delay_schedule=[{ at = "2s", delay = "50ms" }]')
    rtt = r.series_flows.set_index("time_s").rtt_s
    before, after = rtt[(rtt.index > 1.5) & (rtt.index < 2.0)], rtt[rtt.index > 3.5]
    # 10 + 5 + 5 ms each way (40 ms) before; the first link's 50 ms each way after (120 ms).
    assert 0.039 < before.min() < 0.1 and after.min() > 0.115, (before.describe(), after.describe())


def test_the_stack_switches_turn_off_sack_and_delayed_acks_and_the_run_shows_it():
    from vegaslab.testbed.stack import Stack

    runs = {"linux": _run("flows[0].cc=cubic"), "quick": _run("flows[0].cc=cubic", stack=Stack(delayed_ack=False)),
            "no_sack": _run("flows[0].cc=cubic", stack=Stack(sack=False))}
    tb = {name: r.meta["testbed"] for name, r in runs.items()}
    acks = {name: t["acks_per_data_segment"]["f1"] for name, t in tb.items()}
    # Linux's receiver ACKs about every second segment (0.52, within 0.01 from run to run); the
    # sink that re-arms quick ACKs after every read ACKs more, every segment when it reads each
    # one as it comes (0.98), fewer when a busy host runs it late and it reads several at once
    # (0.74 with both cores loaded). A sink that never re-arms would stay at 0.52: 0.05 more is
    # the bound (how close the switch comes to one ACK per segment is measured by
    # test_measure_the_acks_per_data_segment_of_the_stack_switch). Each switch is tried alone:
    # without SACK, Linux's receiver ACKs more often by itself (0.87 per segment).
    assert acks["linux"] < 0.75 and acks["quick"] > acks["linux"] + 0.05, acks
    assert {name: t["sack_negotiated"]["f1"] for name, t in tb.items()} == {"linux": True, "quick": True,
                                                                           "no_sack": False}
    # The kernel's cubic runs with the parameters the simulator's CUBIC takes as defaults.
    from vegaslab import registry

    cubic = tb["linux"]["kernel_parameters"]["cubic"]
    for p in registry.algorithm("cubic").params:
        assert cubic[p.name] == int(p.default), (p.name, cubic)
    assert {name: t["stack"] for name, t in tb.items()} == {
        "linux": {"sack": True, "delayed_ack": True}, "quick": {"sack": True, "delayed_ack": False},
        "no_sack": {"sack": False, "delayed_ack": True}}


def test_rovegas_runs_with_the_bottlenecks_queueing_stamps_reaching_its_controller():
    r = _run("flows[0].cc=rovegas", "flows[0].params.flavour=linux", 'aqt.routers=["S1", "R1"]')
    tb = r.meta["testbed"]
    assert tb["aqt_stamping"] == {"forward": True, "reverse": True}
    counters = tb["rovegas_counters"]
    # Most RTT samples carry a fresh stamp: not those of ACKs whose SACK blocks fill the option
    # space, about a tenth (more when a busy host causes more losses).
    assert counters["samples"] > 500 and counters["stamped"] > counters["samples"] / 2, counters
    # The stamps are queueing times in µs that the rule takes off the RTT: the smallest baseRTT
    # candidate (a stamped sample's RTT less its stamps) lies near the smallest RTT, 40 ms. Read
    # in the wrong unit (ns as µs) every candidate would be 1 µs. A stall of the host between
    # the router's two stamps delays the ACK as well, so it is in the RTT too and cannot lower a
    # candidate: half the smallest RTT is the bound.
    assert counters["min_candidate_us"] > counters["min_rtt_us"] / 2, counters
    assert r.flows.throughput_bps.iloc[0] > RATE_BPS / 5, r.flows.throughput_bps.iloc[0]
    assert _queue_after(r, 2).median() < BUFFER_PKTS / 2, _queue_after(r, 2).describe()  # Vegas-like
    assert "vl_rovegas" not in kernel.registered()


def test_compare_writes_the_side_by_side_report_with_ratios(tmp_path):
    from vegaslab.cli import main
    from vegaslab.results import Results

    scenario = Path(__file__).resolve().parents[1] / "examples" / "kernel" / "b-vegas-reno.toml"
    assert main(["compare", str(scenario), "--kernel", "--set", "run.duration=4s", "--out", str(tmp_path)]) == 0
    page = (tmp_path / "index.html").read_text()
    assert "throughput_ratio" in page and "rtt_ratio" in page and "cwnd.png" in page
    for side in ("sim", "kernel"):
        r = Results.from_dir(tmp_path / side)
        assert list(r.flows.flow) == ["vegas1", "reno2"]
    for png in ("cwnd.png", "rtt.png", "throughput.png"):
        assert (tmp_path / png).stat().st_size > 1000


@measurement
def test_measure_the_queues_and_throughputs_of_kernel_vegas_rovegas_and_reno():
    vegas = _run("flows[0].cc=vegas", "flows[0].params.flavour=linux")
    rovegas = _run("flows[0].cc=rovegas", "flows[0].params.flavour=linux", 'aqt.routers=["S1", "R1"]')
    reno = _run("flows[0].cc=newreno")
    where = "one flow, 20 Mbit/s, 40 ms, 50-packet buffer"
    for name, r in (("kernel Vegas", vegas), ("RoVegas", rovegas), ("reno", reno)):
        mbps = r.flows.throughput_bps.iloc[0] / 1e6
        report(f"{name} ({where}): throughput", mbps, "Mbit/s", "> 15", mbps > 15)
    for name, r in (("kernel Vegas", vegas), ("RoVegas", rovegas)):
        mean = _queue_after(r, 2).mean()
        report(f"{name}: mean queue after 2 s", mean, "packets", "< 10", mean < 10)
    samples = rovegas.series_flows[rovegas.series_flows.time_s > 2].throughput_bps.mean() / 1e6
    report("RoVegas: mean of the throughput samples after 2 s", samples, "Mbit/s", "> 10", samples > 10)
    fullest = _queue_after(reno, 1).max()
    report("reno: largest queue after 1 s", fullest, "packets", ">= 40", fullest >= 40)


@measurement
def test_measure_the_acks_per_data_segment_of_the_stack_switch():
    from vegaslab.testbed.stack import Stack

    for label, stack, target, met in (
            ("delayed ACKs (Linux's default)", Stack(), "about 0.5", lambda a: 0.45 <= a <= 0.6),
            ("delayed_ack=off (quick ACKs re-armed after every read)", Stack(delayed_ack=False), ">= 0.9",
             lambda a: a >= 0.9)):
        acks = _run("flows[0].cc=cubic", stack=stack).meta["testbed"]["acks_per_data_segment"]["f1"]
        report(f"cubic, {label}: ACKs per data segment", acks, "ACKs", target, met(acks))
