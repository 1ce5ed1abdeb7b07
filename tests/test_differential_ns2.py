"""Differential tests: vegaslab's simulator against ns-2.35 on the same scenario dicts.

Each case builds one scenario dict (``SCENARIOS`` / the ``va_*`` helpers below, reusable by
benchmarks and reports), runs it through ``vegaslab.run`` and through
``vegaslab.ns2.run_scenario``, and compares per flow, with these tolerances:

* throughput_bps within 2 %
* completion_time_s within 1 % (file transfers)
* retransmitted_pkts within 20 % or 3 packets, whichever is larger

and, since both simulators run every sender with the same tick-clock phase (ns-2's
``boot_time_``: the bridge hands ns-2 the phase vegaslab draws from the seed, or the one the
scenario sets with ``tcp.tick_phase``), one run against one run to the packet: per flow the
data packets sent, dropped and retransmitted, and those the sender saw acknowledged, must be
equal.  Cases ``*-phase-*`` set the phase; ``va-file-packets*`` give the file as a packet count.

It also checks conservation on our side: sent_pkts == received_pkts + dropped_pkts +
in_flight_pkts.  Skipped when ``ns`` is not on PATH or when ``vegaslab.run`` does not exist yet.
"""
from __future__ import annotations

import copy
import importlib.util
import pathlib
import os
import shutil
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Use python/ from the checkout when vegaslab is not installed (or its __init__ is not there yet).
if (not (ROOT / "python" / "vegaslab" / "__init__.py").exists()
        or importlib.util.find_spec("vegaslab") is None):
    sys.path.insert(0, str(ROOT / "python"))

pytestmark = pytest.mark.skipif(shutil.which("ns") is None and os.environ.get("VEGASLAB_REQUIRE_NS2") != "1",
                                reason="ns-2 ('ns') not on PATH; run scripts/install-ns2.sh")

THROUGHPUT_RTOL = 0.02
#: Per-flow counts that must be equal in both simulators (one run against one run).
#: ``acked_pkts`` is the sender's cumulative ACK (ns-2: ``ack_ + 1`` less the SYN, from the
#: agent at the end of the run), so it also checks the ACKs' way back to the sender.
PACKET_COUNTS = ("sent_pkts", "dropped_pkts", "retransmitted_pkts", "acked_pkts")
COMPLETION_RTOL = 0.01
RETX_RTOL, RETX_ATOL = 0.20, 3

# --------------------------------------------------------------------- scenario helpers
# Window choice (all cases): window = 100 packets.  ns-2's default window_ = 20 caps NewReno
# on va-reroute (708 kbit/s instead of ~995 kbit/s) and hides the losses the Vegas-A paper
# reports for NewReno in va-buffer/va-file; Vegas never reaches 20 there, so its numbers are
# the same for 20, 100 or 1000 (217,160 bit/s goodput on va-reroute:
# docs/vegas-implementations.md, "Why ns-2 is the reference").
WINDOW = 100
PACKET_SIZE = 1000


def _flow(cc: str, **extra) -> dict:
    f = {"name": cc, "from": "S1", "to": "D1", "cc": cc,
         "tcp": {"window": WINDOW, "packet_size": PACKET_SIZE}}
    f.update(extra)
    return f


def _chain(bandwidths, delays, *, buffer=50, buffer_link=1, first_link_extra=None) -> list:
    """S1 - R1 - R2 - D1 links; ``buffer`` on link ``buffer_link`` (others 50)."""
    links = []
    for i, (a, b) in enumerate([("S1", "R1"), ("R1", "R2"), ("R2", "D1")]):
        link = {"endpoints": [a, b], "bandwidth": bandwidths[i], "delay": delays[i],
                "queue": {"kind": "droptail", "limit": buffer if i == buffer_link else 50}}
        if i == 0 and first_link_extra:
            link.update(first_link_extra)
        links.append(link)
    return links


def va_reroute(cc: str) -> dict:
    """va-reroute: S1-R1 1 Mbps 10 ms one-way (RTT 20 ms) -> 100 ms (RTT 200 ms) at 20 s.

    R1-R2 and R2-D1 1 Mbps, 5 ms one-way (RTT 10 ms); DropTail 50; 200 s; 1000-byte packets;
    window 100 (see WINDOW).
    """
    return {"meta": {"id": "va-reroute", "paper": "vegas-a"},
            "run": {"duration": "200s"},
            "links": _chain(["1Mbps", "1Mbps", "1Mbps"], ["10ms", "5ms", "5ms"],
                            first_link_extra={"delay_schedule": [{"at": "20s", "delay": "100ms"}]}),
            "flows": [_flow(cc)]}


def va_buffer(cc: str, buffer: int) -> dict:
    """va-buffer: one 10 MB (10,000,000 B) transfer, R1-R2 500 kbps with ``buffer`` packets.

    End-to-end RTT 40 ms split as one-way 5 ms (S1-R1, 1 Mbps) + 10 ms (R1-R2) + 5 ms (R2-D1,
    1 Mbps).  200 s run (ns-2 finishes in 160-168 s).
    """
    return {"meta": {"id": "va-buffer", "paper": "vegas-a"},
            "run": {"duration": "200s"},
            "links": _chain(["1Mbps", "500kbps", "1Mbps"], ["5ms", "10ms", "5ms"], buffer=buffer),
            "flows": [_flow(cc, app="file", file_size="10MB")]}


def va_file(cc: str, size: str) -> dict:
    """va-file: one 5 MB or 10 MB transfer; S1-R1 1 Mbps 2.5 ms, R1-R2 250 kbps 2.5 ms (50
    packets), R2-D1 1 Mbps 5 ms.  Run 200 s (5 MB) or 400 s (10 MB)."""
    return {"meta": {"id": "va-file", "paper": "vegas-a"},
            "run": {"duration": "200s" if size == "5MB" else "400s"},
            "links": _chain(["1Mbps", "250kbps", "1Mbps"], ["2.5ms", "2.5ms", "5ms"]),
            "flows": [_flow(cc, app="file", file_size=size)]}


def file_packets(cc: str, packets: int) -> dict:
    """va-file's network with the transfer given as a packet count, ``app = { kind = "file",
    packets = N }`` (ns-2: ``$app produce N``). The bottleneck's 50-packet queue overflows in
    slow start, so losses and retransmissions are part of what must match.  200 s."""
    scn = va_file(cc, "5MB")
    scn["meta"]["id"] = "va-file-packets"
    flow = scn["flows"][0]
    del flow["file_size"]
    flow["app"] = {"kind": "file", "packets": packets}
    return scn


def _is_file(flow: dict) -> bool:
    app = flow.get("app")
    return app == "file" or (isinstance(app, dict) and app.get("kind") == "file")


def congested(cc: str) -> dict:
    """One Reno or NewReno flow through a 10-packet DropTail bottleneck (losses every cycle).

    Dumbbell, 1 pair: access/egress 10 Mbps 1 ms, bottleneck 1 Mbps 10 ms, limit 10;
    window 100; 60 s.
    """
    return {"meta": {"id": f"congested-{cc}"},
            "run": {"duration": "60s"},
            "dumbbell": {"pairs": 1,
                         "access": {"bandwidth": "10Mbps", "delay": "1ms"},
                         "bottleneck": {"bandwidth": "1Mbps", "delay": "10ms",
                                        "queue": {"kind": "droptail", "limit": 10}}},
            "flows": [_flow(cc)]}


def stopped_file(cc: str) -> dict:
    """va-file's 5 MB transfer with ``stop = "60s"``: the application stops before the
    transfer completes (~165 s), in the core and, as ``$app stop``, in ns-2 (the bridge once
    ignored ``stop`` for file transfers)."""
    scn = va_file(cc, "5MB")
    scn["meta"]["id"] = "va-file-stopped"
    scn["flows"][0]["stop"] = "60s"
    return scn


def congested_phase(phase, cc: str = "reno") -> dict:
    """``congested`` with the sender's tick-clock phase set and no lower bound on the RTO
    (``min_rto = 0``), so that the phase, through the RTT samples counted in whole ticks, moves
    the retransmission timer: phase 0 and a phase late in the tick give different runs (Reno:
    7,279 and 7,300 packets sent), each the same in both simulators."""
    scn = congested(cc)
    scn["meta"]["id"] = f"congested-{cc}-phase"
    scn["flows"][0]["tcp"].update(tick_phase=phase, min_rto=0)
    return scn


def two_flows_phases(phase_newreno, phase_reno) -> dict:
    """NewReno and Reno (starting 0.5 s later) through one 15-packet 1 Mbps bottleneck, each
    with its own tick-clock phase on ns-2's old 100 ms tick (dumbbell, access 10 Mbps 1 ms,
    bottleneck 10 ms, window 100, 60 s)."""
    return {"meta": {"id": "two-flows-phases"}, "run": {"duration": "60s"},
            "dumbbell": {"pairs": 2,
                         "access": {"bandwidth": "10Mbps", "delay": "1ms"},
                         "bottleneck": {"bandwidth": "1Mbps", "delay": "10ms",
                                        "queue": {"kind": "droptail", "limit": 15}}},
            "flows": [_flow("newreno", tcp={"window": WINDOW, "packet_size": PACKET_SIZE,
                                            "tick": "100ms", "tick_phase": phase_newreno}),
                      _flow("reno", start="0.5s", to="D2", **{"from": "S2"},
                            tcp={"window": WINDOW, "packet_size": PACKET_SIZE,
                                 "tick": "100ms", "tick_phase": phase_reno})]}


def simultaneous(cc: str, delays, starts, buffer: int) -> dict:
    """Flows on a dumbbell whose packets reach the router at the same instant: whole-millisecond
    access delays and start times (access 10 Mbps, so 1000-byte packets take 0.8 ms), a
    1.5 Mbps 10 ms bottleneck with a ``buffer``-packet DropTail queue, 10 s. The order in which
    simultaneous arrivals are served (ns-2's: by the instant each arrival was scheduled, then
    first in, first out) decides who is queued first and who is dropped."""
    n = len(delays)
    return {"meta": {"id": f"simultaneous-{cc}"}, "run": {"duration": "10s"},
            "dumbbell": {"pairs": n, "access": [{"bandwidth": "10Mbps", "delay": d} for d in delays],
                         "egress": {"bandwidth": "10Mbps", "delay": "1ms"},
                         "bottleneck": {"bandwidth": "1.5Mbps", "delay": "10ms",
                                        "queue": {"kind": "droptail", "limit": buffer}}},
            "flows": [_flow(cc, start=starts[k], **{"from": f"S{k + 1}", "to": f"D{k + 1}"}) | {"name": f"{cc}{k + 1}"}
                      for k in range(n)]}


#: Cases built with deliberate same-instant arrivals (found by a random search over such
#: dumbbells; `test_the_simultaneous_cases_have_simultaneous_arrivals` checks they still do).
SIMULTANEOUS = {
    "simultaneous-reno-5": ("reno", ["3ms", "4ms", "1ms", "1ms", "1ms"], ["1ms", "0ms", "2ms", "2ms", "3ms"], 9),
    "simultaneous-newreno-5": ("newreno", ["2ms", "2ms", "2ms", "4ms", "4ms"], ["0ms", "3ms", "0ms", "0ms", "0ms"], 15),
    "simultaneous-newreno-4": ("newreno", ["1ms", "1ms", "1ms", "1ms"], ["3ms", "2ms", "3ms", "3ms"], 10),
    # Two of the three cases of that search that ns-2 served differently until events at the
    # same nanosecond were ordered by ns-2's doubles (`run.clock`, `event`).
    "simultaneous-newreno-5-doubles": ("newreno", ["2ms", "2ms", "4ms", "1ms", "3ms"], ["1ms", "0ms", "0ms", "2ms", "3ms"], 9),
    "simultaneous-newreno-4-doubles": ("newreno", ["3ms", "4ms", "2ms", "4ms"], ["0ms", "0ms", "3ms", "0ms"], 14),
}


def vegas_tie_chain(base_pkts: int, buffer: int, alpha: int, beta: int, starts) -> dict:
    """Vegas flows (one per start time) on a chain S - R1 - R2 - D whose base RTT is exactly
    ``base_pkts`` bottleneck packet times (1 Mbps, 1000-byte packets with no header: 8 ms; the
    8 Mbps edges and the 40-byte ACKs make up the rest of the sums to the microsecond), so
    RTTs are whole numbers of packet times and Vegas's diff lands exactly on alpha or beta
    again and again. ns-2 then decides by the rounding of its double clock: matching it
    needs ``run.clock = "ns2"`` (`test_the_clock_tie_cases_need_ns2s_clock`). 30 s."""
    fixed_us = 1000 + 8000 + 1000 + 40 + 320 + 40  # transmissions on the round trip
    delay = f"{(base_pkts * 8000 - fixed_us) / 2}us"
    return {"meta": {"id": "vegas-tie-chain"}, "run": {"duration": "30s"},
            "links": [{"endpoints": ["S", "R1"], "bandwidth": "8Mbps", "delay": "0s"},
                      {"endpoints": ["R1", "R2"], "bandwidth": "1Mbps", "delay": delay,
                       "queue": {"kind": "droptail", "limit": buffer}},
                      {"endpoints": ["R2", "D"], "bandwidth": "8Mbps", "delay": "0s"}],
            "flows": [{"name": f"vegas{k + 1}", "from": "S", "to": "D", "cc": "vegas", "start": start,
                       "params": {"alpha": alpha, "beta": beta},
                       "tcp": {"window": 200, "packet_size": PACKET_SIZE, "header_bytes": 0, "syn": False}}
                      for k, start in enumerate(starts)]}


#: Cases whose run depends on ns-2's doubles (found by a random search over such chains: of
#: 72, the two clocks gave different runs in 11; ns-2.35 matched the exact clock in none of
#: them, the ns2 clock in 8, and all 11 once same-nanosecond events and a queue's arrivals
#: and transmission starts were also ordered by the doubles).  Arguments of
#: :func:`vegas_tie_chain`.
CLOCK_TIES = {
    "clock-tie-2-flows-alpha-beta-1": (5, 36, 1, 1, ["37ms", "39ms"]),
    "clock-tie-2-flows-alpha-beta-3": (3, 30, 3, 3, ["9ms", "29ms"]),
    "clock-tie-3-flows": (6, 36, 2, 5, ["29ms", "17ms", "32ms"]),
    "clock-tie-2-flows-short-base": (3, 11, 1, 1, ["24ms", "27ms"]),
    # ns-2 drops one packet here: an arrival whose double is below the resume event's finds
    # the 7-packet queue still full.
    "clock-tie-full-queue": (3, 7, 2, 2, ["10ms", "7ms"]),
    "clock-tie-3-flows-short-base": (2, 6, 3, 6, ["0ms", "24ms", "13ms"]),
}

#: The cases that match ns-2.35 only with its doubles (`test_the_double_cases_need_ns2s_doubles`).
NEEDS_DOUBLES = sorted(CLOCK_TIES) + ["simultaneous-newreno-5-doubles", "simultaneous-newreno-4-doubles"]


def link_failure(cc: str, backup: bool) -> dict:
    """A link failing and repaired (``links[].down``; ns-2 ``$ns rtmodel-at`` under ``$ns
    rtproto Session``): S1 - R1 = R2 - D1, the 1 Mbps 10 ms link R1 - R2 down from 2 s to 4 s,
    access links 10 Mbps 1 ms, window 100, 8 s. With ``backup``, R1 - R3 - R2 (two 1 Mbps 10 ms
    links, one hop longer) takes the traffic during the failure; without, the flow stalls
    (what it sends is dropped at the down link) and recovers after the repair. Node numbers
    make no tie between paths of equal length (``equal_paths`` has those)."""
    links = [{"endpoints": ["S1", "R1"], "bandwidth": "10Mbps", "delay": "1ms"},
             {"endpoints": ["R1", "R2"], "bandwidth": "1Mbps", "delay": "10ms",
              "down": [["2s", "4s"]]},
             {"endpoints": ["R2", "D1"], "bandwidth": "10Mbps", "delay": "1ms"}]
    if backup:
        links += [{"endpoints": ["R1", "R3"], "bandwidth": "1Mbps", "delay": "10ms"},
                  {"endpoints": ["R3", "R2"], "bandwidth": "1Mbps", "delay": "10ms"}]
    return {"meta": {"id": f"link-failure-{'backup' if backup else 'stall'}-{cc}"},
            "run": {"duration": "8s"}, "links": links, "flows": [_flow(cc)]}


def dumbbell_failure(cc: str) -> dict:
    """A dumbbell whose bottleneck fails from 2 s to 4 s, written as one key of the bottleneck's
    table (``down``): two pairs, access 10 Mbps 1 ms, bottleneck 1 Mbps 10 ms, one flow on pair
    1, window 100, 8 s."""
    return {"meta": {"id": f"dumbbell-failure-{cc}"}, "run": {"duration": "8s"},
            "dumbbell": {"pairs": 2, "access": {"bandwidth": "10Mbps", "delay": "1ms"},
                         "bottleneck": {"bandwidth": "1Mbps", "delay": "10ms", "down": [["2s", "4s"]]}},
            "flows": [_flow(cc, **{"from": "S1", "to": "D1"})]}


def equal_paths(access_first: str, cc: str = "newreno") -> dict:
    """Two paths of equal length, S - A - D and S - B - D, where only the tie rule picks the
    route: B's path 1 Mbps, A's 0.5 Mbps (the X - D links; access S - X 10 Mbps, all 5 ms),
    window 100, 8 s. The links into D come first, so the nodes are numbered B 0, D 1, A 2,
    S 3 in both cases, and ``access_first`` says which access link is listed first: the link
    order disagrees with the node order in one case and agrees in the other. ns-2 takes B's
    path in both (D's lowest-numbered neighbour nearer to S, ``RouteLogic::compute_routes``)."""
    fast = {"bandwidth": "1Mbps", "delay": "5ms"}
    slow = {"bandwidth": "0.5Mbps", "delay": "5ms"}
    access = {"bandwidth": "10Mbps", "delay": "5ms"}
    links = [{"endpoints": ["B", "D"], **fast}, {"endpoints": ["A", "D"], **slow}]
    first, second = ("A", "B") if access_first == "A" else ("B", "A")
    links += [{"endpoints": ["S", first], **access}, {"endpoints": ["S", second], **access}]
    return {"meta": {"id": f"equal-paths-{access_first.lower()}-first-{cc}"}, "run": {"duration": "8s"},
            "links": links, "flows": [_flow(cc, **{"from": "S", "to": "D"})]}


def lossy(cc: str, loss: dict, *, direction: str = "forward", file_size: str | None = None) -> dict:
    """One flow through a bottleneck whose ``loss_<direction>`` (or ``loss`` for "both") pattern
    loses packets the queue would not: dumbbell, access/egress 10 Mbps 1 ms, bottleneck
    1 Mbps 10 ms with 50 DropTail slots, window 20 (Vegas never fills the queue; Reno's window
    of 20 does not overflow it either, so every loss is the pattern's), 20 s.  The pattern
    counts every packet the bottleneck direction transmits: data packets one way (Reno's SYN
    is packet 0), ACKs the other (ns-2 ``link-lossmodel``, see
    ``vegaslab.ns2.script``, ``_loss_lines``).  With ``file_size`` the flow sends a file instead
    of running FTP for the whole run."""
    key = "loss" if direction == "both" else f"loss_{direction}"
    app = {} if file_size is None else {"app": "file", "file_size": file_size}
    return {"meta": {"id": f"lossy-{cc}"}, "run": {"duration": "20s"},
            "dumbbell": {"pairs": 1,
                         "access": {"bandwidth": "10Mbps", "delay": "1ms"},
                         "bottleneck": {"bandwidth": "1Mbps", "delay": "10ms", key: loss,
                                        "queue": {"kind": "droptail", "limit": 50}}},
            "flows": [_flow(cc, tcp={"window": 20, "packet_size": PACKET_SIZE}, **app)]}


def two_way_queues(cc_forward: str, cc_reverse: str) -> dict:
    """A different queue per direction of the bottleneck, with two-way traffic: a flow S1 -> D1
    whose data crosses RED (R1 -> R2) and whose ACKs share a 5-packet DropTail queue (R2 -> R1)
    with the data of a flow D2 -> S2 (whose ACKs cross the RED queue).  Dumbbell, access
    10 Mbps 1 ms, bottleneck 1 Mbps 10 ms, window 100, 30 s.

    The RED queue has weight 1, min 4, max 5: its average is the queue seen by each arrival, a
    whole number, so RED never draws an early drop that could come out differently (ns-2's RED
    draws from its default RNG, the core from its own stream): it drops, forced, every arrival
    that finds 5 or more packets waiting, and its limit of 20 is never reached.  A DropTail
    queue of limit 5 would hold only 4 waiting packets, so the forward kind changes the run
    (with these settings it runs as DropTail with limit 6 would).

    Access delays of 1.1 ms: with 1 ms the NewReno/Reno pair differs from ns-2 by 17 of 3,152
    packets sent (and 1 drop), and by exactly as much with DropTail in both directions, so the
    difference is not the queues' (it is one of the simulator-level mechanisms: the order of
    same-instant events and ns-2's double clock); 1.1 ms (and 1.3 ms) agree to the packet."""
    return {"meta": {"id": f"two-way-queues-{cc_forward}-{cc_reverse}"}, "run": {"duration": "30s"},
            "dumbbell": {"pairs": 2,
                         "access": {"bandwidth": "10Mbps", "delay": "1.1ms"},
                         "bottleneck": {"bandwidth": "1Mbps", "delay": "10ms",
                                        "queue_forward": {"kind": "red", "min": 4, "max": 5,
                                                          "weight": 1, "limit": 20},
                                        "queue_reverse": {"kind": "droptail", "limit": 5}}},
            "flows": [_flow(cc_forward) | {"name": "forward"},
                      _flow(cc_reverse, start="0.3s", **{"from": "D2", "to": "S2"}) | {"name": "reverse"}]}


#: Loss-pattern cases: (cc, pattern, direction, file size).  Packet counts alone barely see
#: an index shifted by one (losing packet 31 instead of 30 costs the same), so the cases are
#: built on the edges where a shift changes them: the lists end with the last packet the
#: 500-packet transfer transmits (Reno: index 504, after its SYN, 500 data packets and four
#: retransmissions; Vegas: 503), so an index one too late loses nothing there; Reno's list and
#: periodic pattern start at index 1, the first data packet, so one too early loses the SYN
#: (index 0) instead.  Between them: a pair back to back in slow start and one later; lost
#: ACKs; bursts of 2 in both directions.
LOSSY = {
    "lossy-list-reno": ("reno", {"packets": [1, 30, 31, 200, 504]}, "forward", "500000B"),
    "lossy-list-vegas": ("vegas", {"packets": [30, 31, 200, 503]}, "forward", "500000B"),
    "lossy-list-acks-reno": ("reno", {"packets": [5, 400, 401, 402]}, "reverse", None),
    "lossy-periodic-reno": ("reno", {"every": 97, "first": 1}, "forward", None),
    "lossy-periodic-vegas": ("vegas", {"every": 97, "first": 10}, "forward", None),
    "lossy-periodic-both-vegas": ("vegas", {"every": 150, "first": 40, "burst": 2}, "both", None),
}


def _cases() -> dict:
    cases = {}
    for cc in ("vegas", "newreno"):
        cases[f"va-reroute-{cc}"] = va_reroute(cc)
        for b in (10, 20, 30):
            cases[f"va-buffer{b}-{cc}"] = va_buffer(cc, b)
        for size in ("5MB", "10MB"):
            cases[f"va-file{size}-{cc}"] = va_file(cc, size)
    for cc in ("reno", "newreno"):
        cases[f"congested-{cc}"] = congested(cc)
    for cc in ("vegas", "newreno"):
        cases[f"va-file-stopped-{cc}"] = stopped_file(cc)
    # A file given in packets, an odd count (not a round number of bytes either way).
    for cc in ("reno", "vegas"):
        cases[f"va-file-packets3001-{cc}"] = file_packets(cc, 3001)
    # The Vegas-A paper's NewReno evidently sent 1000-byte packets with no header and no SYN
    # (the catalog's va-file.toml notes); check that configuration too.
    for case_id in ("va-file5MB-newreno", "va-buffer10-newreno", "va-buffer20-newreno"):
        headerless = copy.deepcopy(cases[case_id])
        headerless["flows"][0]["tcp"].update({"header_bytes": 0, "syn": False})
        cases[case_id + "-headerless"] = headerless
    # NewReno re-arming its timer on every partial ACK (ns-2 newreno_changes1_ 0, as Linux):
    # the recoveries that time out with the default end without a timeout (va-buffer30: 93
    # retransmissions become 55; va-file5MB: 108 become 54).
    for case_id in ("va-buffer30-newreno", "va-file5MB-newreno", "congested-newreno"):
        every = copy.deepcopy(cases[case_id])
        every["flows"][0]["tcp"]["partial_ack_timer"] = "every"
        cases[case_id + "-every-partial-ack"] = every
    # Set tick phases: 0 (ns-2 gets exactly 0.0, see vegaslab.ns2.translate.phase_reset), a
    # phase given to the last bit, and two flows with different phases each.
    cases["congested-reno-phase-0"] = congested_phase(0)
    cases["congested-reno-phase-late"] = congested_phase(0.0098765432101234567)
    cases["two-flows-phase-0-70ms"] = two_flows_phases(0, "70ms")
    cases["two-flows-phase-70ms-0"] = two_flows_phases("70ms", 0)
    for case_id, args in SIMULTANEOUS.items():
        cases[case_id] = simultaneous(*args)
    for case_id, args in CLOCK_TIES.items():
        cases[case_id] = vegas_tie_chain(*args)
    for cc in ("reno", "vegas"):
        for backup in (True, False):
            case = link_failure(cc, backup)
            cases[case["meta"]["id"]] = case
    for cc in ("reno", "vegas"):
        cases[f"dumbbell-failure-{cc}"] = dumbbell_failure(cc)
    for access_first in ("A", "B"):
        case = equal_paths(access_first)
        cases[case["meta"]["id"]] = case
    for case_id, (cc, loss, direction, size) in LOSSY.items():
        cases[case_id] = lossy(cc, loss, direction=direction, file_size=size)
    cases["two-way-queues-reno-vegas"] = two_way_queues("reno", "vegas")
    cases["two-way-queues-newreno-reno"] = two_way_queues("newreno", "reno")
    return cases


SCENARIOS = _cases()


def scenario(case_id: str) -> dict:
    """A fresh copy of one case's scenario dict."""
    return copy.deepcopy(SCENARIOS[case_id])


# ------------------------------------------------------------------------------ tests

@pytest.fixture(scope="module")
def vegaslab_run():
    vegaslab = pytest.importorskip("vegaslab")
    if not hasattr(vegaslab, "run") or importlib.util.find_spec("vegaslab._core") is None:
        pytest.skip("vegaslab.run / the compiled core not available yet (simulator not built)")
    return vegaslab.run


def _ours_by_flow(result):
    df = result.flows
    if "flow" in df.columns:
        df = df.set_index("flow")
    return {name: row for name, row in df.iterrows()}


@pytest.mark.parametrize("case_id", sorted(SCENARIOS))
def test_ns2_side(case_id):
    """The reference side alone: every case runs in ns-2 and makes sense."""
    from vegaslab.ns2 import run_scenario

    for f in run_scenario(scenario(case_id))["flows"]:
        assert f["sent_pkts"] == f["received_pkts"] + f["dropped_pkts"] + f["in_flight_pkts"]
        assert f["throughput_bps"] > 0
        if _is_file(SCENARIOS[case_id]["flows"][0]):
            assert f["completion_time_s"] is not None
        if case_id.startswith("congested"):
            assert f["retransmitted_pkts"] > 0


@pytest.mark.parametrize("case_id", sorted(SCENARIOS))
def test_against_ns2(case_id, vegaslab_run):
    from vegaslab.ns2 import run_scenario

    ours = _ours_by_flow(vegaslab_run(scenario(case_id), seed=1, overrides=[]))
    ref = {f["flow"]: f for f in run_scenario(scenario(case_id), seed=1)["flows"]}
    assert set(ours) == set(ref)
    problems = []
    for name, r in ref.items():
        o = ours[name]
        # conservation on our side
        assert int(o["sent_pkts"]) == (int(o["received_pkts"]) + int(o["dropped_pkts"])
                                            + int(o["in_flight_pkts"])), f"{name}: conservation"
        if r["throughput_bps"] > 0:
            rel = abs(float(o["throughput_bps"]) - r["throughput_bps"]) / r["throughput_bps"]
            if rel > THROUGHPUT_RTOL:
                problems.append(f"{name}: throughput {o['throughput_bps']:.0f} vs ns-2 "
                                f"{r['throughput_bps']:.0f} ({rel:.2%})")
        if r["completion_time_s"] is not None:
            oc = o["completion_time_s"]
            if oc is None or oc != oc:  # None or NaN
                problems.append(f"{name}: unfinished, ns-2 finished in {r['completion_time_s']:.3f} s")
            else:
                rel = abs(float(oc) - r["completion_time_s"]) / r["completion_time_s"]
                if rel > COMPLETION_RTOL:
                    problems.append(f"{name}: completion {float(oc):.3f} s vs ns-2 "
                                    f"{r['completion_time_s']:.3f} s ({rel:.2%})")
        tol = max(RETX_RTOL * r["retransmitted_pkts"], RETX_ATOL)
        if abs(int(o["retransmitted_pkts"]) - r["retransmitted_pkts"]) > tol:
            problems.append(f"{name}: retransmissions {int(o['retransmitted_pkts'])} vs ns-2 "
                            f"{r['retransmitted_pkts']} (tolerance {tol:.1f})")
        # One run against one run: the same phases give the same packets.
        packets = {k: (int(o[k]), r[k]) for k in PACKET_COUNTS}
        if any(a != b for a, b in packets.values()):
            problems.append(f"{name}: not the same packets (ours, ns-2): {packets}")
    assert not problems, "; ".join(problems)


def test_simultaneous_arrivals_are_served_in_ns2s_order(tmp_path):
    """An exact tie at a router (tests/data/simultaneous-arrivals.*: every time a binary
    fraction of a second and a whole number of nanoseconds): ns-2.35 serves the arrival whose
    transmission started first and drops the other; so do we. Our scheduling order alone would
    drop the other packet. (UDP sources are not in the bridge, so the OTcl is written by hand.)"""
    import subprocess

    data = ROOT / "tests" / "data"
    trace = tmp_path / "out.tr"
    subprocess.run(["ns", str(data / "simultaneous-arrivals.tcl"), str(trace)], check=True, timeout=60,
                   capture_output=True)
    drops = [line.split() for line in trace.read_text().splitlines() if line.startswith("d ")]
    assert [(d[2], d[3], d[7]) for d in drops] == [("2", "3", "2")]  # R -> D, flow 2 (B)
    import vegaslab

    r = vegaslab.run(data / "simultaneous-arrivals.toml")
    assert r.udp.set_index("source")["dropped_pkts"].to_dict() == {"a": 0, "b": 1}
    assert r.meta["tie_reorders"] == 1


@pytest.mark.parametrize("case_id", sorted(SIMULTANEOUS))
def test_the_simultaneous_cases_have_simultaneous_arrivals(case_id, vegaslab_run):
    assert vegaslab_run(scenario(case_id), seed=1, overrides=[]).meta["same_instant_arrivals"] >= 2


@pytest.mark.parametrize("case_id", NEEDS_DOUBLES)
def test_the_double_cases_need_ns2s_doubles(case_id, vegaslab_run):
    """With ``run.clock = "exact"`` (the integer clock, ties by scheduling instant alone) the
    run is a different one, so matching ns-2.35 to the packet on these cases
    (`test_against_ns2`) is the doubles' doing; in the Vegas chains, Vegas's diff does sit
    exactly on its thresholds."""
    default = vegaslab_run(scenario(case_id), seed=1, overrides=[]).flows
    exact = vegaslab_run(scenario(case_id), seed=1, overrides=['run.clock="exact"']).flows
    assert not default[list(PACKET_COUNTS)].equals(exact[list(PACKET_COUNTS)])
    if case_id in CLOCK_TIES:
        assert default["vegas_decisive_ties"].sum() > 0


def test_the_phase_cases_are_not_the_same_run_twice():
    """The set phases matter: each pair of phase cases gives two different runs (so matching
    ns-2 on both is evidence that the phase reaches ns-2, not a phase-blind coincidence)."""
    vegaslab = pytest.importorskip("vegaslab")
    for a, b in (("congested-reno-phase-0", "congested-reno-phase-late"),
                 ("two-flows-phase-0-70ms", "two-flows-phase-70ms-0")):
        ra = vegaslab.run(scenario(a), seed=1).flows[list(PACKET_COUNTS)]
        rb = vegaslab.run(scenario(b), seed=1).flows[list(PACKET_COUNTS)]
        assert not ra.equals(rb), (a, b)


@pytest.mark.parametrize("case_id", sorted(LOSSY))
def test_the_loss_cases_lose_packets_to_their_pattern_only(case_id, vegaslab_run):
    """Each loss case loses packets to its pattern, in the direction it names, and none to the
    queue (so matching ns-2 checks the patterns, not only queue drops)."""
    _, loss, direction, _ = LOSSY[case_id]
    q = vegaslab_run(scenario(case_id), seed=1, overrides=[]).queues.set_index("queue")
    errors = {d: int(q.loc[d, "error_pkts"]) if q.loc[d, "error_pkts"] == q.loc[d, "error_pkts"] else 0
              for d in ("R1->R2", "R2->R1")}
    assert int(q["dropped_pkts"].sum()) == 0
    want = {"forward": ("R1->R2",), "reverse": ("R2->R1",), "both": ("R1->R2", "R2->R1")}[direction]
    assert all(errors[d] > 0 for d in want) and all(errors[d] == 0 for d in errors if d not in want)


@pytest.mark.parametrize("case_id", ["two-way-queues-reno-vegas", "two-way-queues-newreno-reno"])
def test_the_two_way_cases_run_a_different_queue_per_direction_in_both_simulators(case_id, vegaslab_run):
    from vegaslab.ns2 import run_scenario

    ours = vegaslab_run(scenario(case_id), seed=1, overrides=[]).queues.set_index("queue")
    ref = {q["queue"]: q for q in run_scenario(scenario(case_id), seed=1)["queues"]}
    for name, kind, limit in (("R1->R2", "red", 20), ("R2->R1", "droptail", 5)):
        assert (ours.loc[name, "kind"], int(ours.loc[name, "limit_pkts"])) == (kind, limit)
        assert (ref[name]["kind"], ref[name]["limit_pkts"]) == (kind, limit)
    # Both queues drop: the reverse one the ACKs and data sharing it, the forward one (RED) too.
    assert int(ours.loc["R2->R1", "dropped_pkts"]) > 0 and int(ours.loc["R1->R2", "dropped_pkts"]) > 0


def test_equal_length_paths_take_ns2s_route_whatever_the_link_order(vegaslab_run):
    """Both link orders of ``equal_paths``: the run reports the tie and takes B's path, ns-2's
    route, and the goodput matches ns-2's within the throughput tolerance (the packet counts
    are compared by ``test_against_ns2``). The other route would halve it: A's path has half
    the rate, so a wrong route cannot pass."""
    from vegaslab.ns2 import run_scenario

    goodputs = []
    for access_first in ("A", "B"):
        case = equal_paths(access_first)
        ours = vegaslab_run(copy.deepcopy(case), seed=1, overrides=[])
        ties = ours.meta["route_ties"]
        assert [(t["flow"], t["equal_paths"], t["path"], t["ack_path"]) for t in ties] == \
            [("newreno", 2, ["S", "B", "D"], ["D", "B", "S"])], ties
        ref = run_scenario(copy.deepcopy(case), seed=1)["flows"][0]
        got = float(_ours_by_flow(ours)["newreno"]["throughput_bps"])
        assert abs(got - ref["throughput_bps"]) <= THROUGHPUT_RTOL * ref["throughput_bps"], (access_first, got, ref)
        goodputs.append(got)
    assert goodputs[0] == goodputs[1]
    assert goodputs[0] > 0.9e6 * 0.9
