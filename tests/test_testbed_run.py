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
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kernel"
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


def _run(*overrides, stack=None, **options):
    from vegaslab.testbed.run import run
    from vegaslab.testbed.stack import Stack

    return run(REROUTE, overrides=[*FAST, *overrides], stack=stack or Stack(), **options)


def _data_segments(pcap: Path, eth_src: str) -> int:
    """TCP segments with payload that left the router through the interface with MAC ``eth_src``
    (tshark reads the capture)."""
    import subprocess

    out = subprocess.run(["tshark", "-r", str(pcap), "-Y", f"tcp.len > 0 && eth.src == {eth_src}", "-T", "fields",
                          "-e", "frame.number"], capture_output=True, text=True, check=True).stdout
    return len(out.split())


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

    runs = {"linux": _run("flows[0].cc=cubic"),
            "quick": _run("flows[0].cc=cubic", stack=Stack(delayed_ack=False), capture=False),
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
    # The capture is on unless switched off.
    assert runs["linux"].trace_path is not None and runs["quick"].trace_path is None
    assert "trace" not in runs["quick"].meta
    assert {name: t["stack"] for name, t in tb.items()} == {
        "linux": {"sack": True, "delayed_ack": True}, "quick": {"sack": True, "delayed_ack": False},
        "no_sack": {"sack": False, "delayed_ack": True}}


def test_the_bottleneck_capture_holds_the_runs_data_segments_headers_only():
    r = _run("flows[0].cc=cubic")
    trace = r.meta["trace"]
    pcap = r.trace_path
    assert pcap.name == trace["file"] == "bottleneck.pcap" and trace["format"] == "pcap"
    assert list(trace["directions"]) == ["forward"]  # one-way: the forward queue's departures
    # Headers only: every packet is cut to the snapshot length, the data segments (1040 bytes
    # on the wire) included.
    import subprocess

    fields = subprocess.run(["tshark", "-r", str(pcap), "-T", "fields", "-e", "frame.cap_len", "-e", "frame.len"],
                            capture_output=True, text=True, check=True).stdout.split("\n")
    kept = [tuple(map(int, line.split())) for line in fields if line.strip()]
    assert len(kept) == trace["packets"] and trace["snaplen"] == 128
    assert max(c for c, _ in kept) <= 128 and max(w for _, w in kept) > 1000
    assert pcap.stat().st_size < 200 * trace["packets"]
    # Every data segment that left the queue: the sender's segments less those the queue dropped
    # (each retransmitted, about) and those still on their way at the end (at most a window);
    # the ACKs went the other way, so they are not in it.
    data = _data_segments(pcap, trace["directions"]["forward"]["eth_src"])
    assert _plausible(data, r.flows.iloc[0]), (data, r.flows.iloc[0])
    assert trace["packets"] >= data and trace["dropped_by_capture"] == 0


def _plausible(captured: int, flow) -> bool:
    """Whether ``captured`` data segments left the queue of a flow (a ``flows`` row) that sent
    ``sent_pkts`` (retransmissions included), ``retransmitted_pkts`` of them again, and ended with
    ``final_cwnd_pkts`` in flight: at least what it sent less what the queue dropped (about its
    retransmissions, and a window's worth not yet repaired) and less a window still on its way at
    the end; at most what it sent and the 10 ms it sent after its last sample (a window)."""
    sent, retx, window = flow.sent_pkts, flow.retransmitted_pkts, flow.final_cwnd_pkts
    return sent - retx - 2 * window <= captured <= sent + window


def test_two_way_traffic_carries_flows_both_ways_and_builds_each_directions_queue(tmp_path):
    from vegaslab.cli import main
    from vegaslab.results import Results

    # Reno both ways: each direction's queue is filled by a loss-based flow.
    assert main(["testbed", "run", str(EXAMPLES / "e-two-way.toml"), "--set", "run.duration=5s", "--set",
                 "flows[0].cc=newreno", "--set", "flows[0].params={}", "--out", str(tmp_path)]) == 0
    r = Results.from_dir(tmp_path)
    assert r.meta["testbed"]["directions"] == {"vegas": "forward", "reno": "reverse"}
    assert r.meta["testbed"]["two_way"] is True
    assert list(r.flows.flow) == ["vegas", "reno"]
    # Carried: each flow more than a tenth of its direction's 20 Mbit/s.
    assert (r.flows.goodput_bps > RATE_BPS / 10).all(), r.flows.goodput_bps
    # Each direction's queue reaches a fifth of its 67-packet buffer after slow start.
    q = r.series_queues
    for name in ("R1->R2", "R2->R1"):
        assert q[(q.queue == name) & (q.time_s > 1)].length_pkts.max() > 67 / 5, name
    assert set(r.queues.queue) == {"R1->R2", "R2->R1"}
    # The capture holds both directions' departures, each flow's data leaving its own queue.
    trace = r.meta["trace"]
    assert (tmp_path / "bottleneck.pcap").is_file() and r.trace_path == tmp_path / "bottleneck.pcap"
    assert {d: v["queue"] for d, v in trace["directions"].items()} == {"forward": "R1->R2", "reverse": "R2->R1"}
    for flow, direction in (("vegas", "forward"), ("reno", "reverse")):
        row = r.flows[r.flows.flow == flow].iloc[0]
        data = _data_segments(tmp_path / "bottleneck.pcap", trace["directions"][direction]["eth_src"])
        assert _plausible(data, row), (flow, data, row)


def test_rovegas_reads_the_backward_queue_stamped_by_the_reverse_router_under_reverse_load():
    from vegaslab.testbed.run import run

    # Only R2 stamps: the reverse queue, which the RoVegas flow's ACKs and the backward Reno
    # flow's data share. Reno fills it from 2 s (100 packets, 60 ms at 20 Mbit/s).
    r = run(EXAMPLES / "f-rovegas-backward.toml",
            overrides=["run.duration=6s", "flows[1].start=2s", 'aqt.routers=["R2"]'], capture=False)
    tb = r.meta["testbed"]
    assert tb["aqt_stamping"] == {"forward": False, "reverse": True}
    counters = tb["rovegas_counters"]
    assert counters["stamped"] > counters["samples"] / 2, counters
    # The backward queueing time reaches the controller: above a fifth of the full buffer's
    # 60 ms (the forward queue, not stamped here, cannot contribute).
    assert counters["max_queueing_us"] > 12_000, counters
    assert (r.flows.goodput_bps > RATE_BPS / 20).all(), r.flows.goodput_bps


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
    assert (tmp_path / "kernel" / "bottleneck.pcap").is_file()  # the kernel run's capture is kept


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
def test_measure_rovegas_keeping_its_throughput_under_backward_load_where_vegas_falls():
    # The RoVegas paper's section 4.1 in the kernel (examples/kernel/f-rovegas-backward.toml):
    # throughput after the backward load starts (10 s) against before, RoVegas and its Vegas twin.
    from vegaslab.testbed.run import run

    path = EXAMPLES / "f-rovegas-backward.toml"
    share = {}
    for cc in ("rovegas", "vegas"):
        r = run(path, overrides=[f"flows[0].cc={cc}"], capture=False)
        s = r.series_flows[r.series_flows.flow == "f1"]
        before = s[(s.time_s > 3) & (s.time_s <= 10)].throughput_bps.mean()
        after = s[s.time_s > 12].throughput_bps.mean()
        share[cc] = after / before
    report("RoVegas under backward Reno load: throughput after / before the load", share["rovegas"], "",
           "> Vegas's", share["rovegas"] > share["vegas"])
    report("Vegas under backward Reno load: throughput after / before the load", share["vegas"], "", "(reference)",
           True)
    report("RoVegas / Vegas, throughput under backward load", share["rovegas"] / share["vegas"], "", "> 1.5",
           share["rovegas"] / share["vegas"] > 1.5)


@measurement
def test_measure_the_acks_per_data_segment_of_the_stack_switch():
    from vegaslab.testbed.stack import Stack

    for label, stack, target, met in (
            ("delayed ACKs (Linux's default)", Stack(), "about 0.5", lambda a: 0.45 <= a <= 0.6),
            ("delayed_ack=off (quick ACKs re-armed after every read)", Stack(delayed_ack=False), ">= 0.9",
             lambda a: a >= 0.9)):
        acks = _run("flows[0].cc=cubic", stack=stack).meta["testbed"]["acks_per_data_segment"]["f1"]
        report(f"cubic, {label}: ACKs per data segment", acks, "ACKs", target, met(acks))
