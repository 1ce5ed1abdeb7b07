"""Differential tests: vegaslab's simulator against ns-2.35 on the same scenario dicts.

Each case builds one scenario dict (``SCENARIOS`` / the ``va_*`` helpers below, reusable by
benchmarks and reports), runs it through ``vegaslab.run`` and through
``vegaslab.ns2.run_scenario``, and compares per flow, with the tolerances of the issue:

* throughput_bps within 2 %
* completion_time_s within 1 % (file transfers)
* retransmitted_pkts within 20 % or 3 packets, whichever is larger

and, since both simulators run every sender with the same tick-clock phase (ns-2's
``boot_time_``: the bridge hands ns-2 the phase vegaslab draws from the seed, or the one the
scenario sets with ``tcp.tick_phase``), one run against one run to the packet: per flow the
data packets sent, dropped and retransmitted must be equal.  Cases ``*-phase-*`` set the phase.

It also checks conservation on our side: data_pkts_sent == received_pkts + dropped_pkts +
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
PACKET_COUNTS = ("data_pkts_sent", "dropped_pkts", "retransmitted_pkts")
COMPLETION_RTOL = 0.01
RETX_RTOL, RETX_ATOL = 0.20, 3

# --------------------------------------------------------------------- scenario helpers
# Window choice (all cases): window = 100 packets.  ns-2's default window_ = 20 caps NewReno
# on va-reroute (708 kbit/s instead of ~995 kbit/s) and hides the losses the Vegas-A paper
# reports for NewReno in va-buffer/va-file; Vegas never reaches 20 there, so its numbers are
# the same for 20, 100 or 1000 (217,160 bit/s goodput on va-reroute, as REFERENCE.md says).
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


#: Cases whose run depends on the senders' clock (found by a random search over such chains:
#: of 72, the two clocks gave different runs in 11; ns-2.35 matched the ns2 clock to the
#: packet in 8 of them and the exact clock in none; the other 3 are in the closing note of
#: issue 12).  Arguments of :func:`vegas_tie_chain`.
CLOCK_TIES = {
    "clock-tie-2-flows-alpha-beta-1": (5, 36, 1, 1, ["37ms", "39ms"]),
    "clock-tie-2-flows-alpha-beta-3": (3, 30, 3, 3, ["9ms", "29ms"]),
    "clock-tie-3-flows": (6, 36, 2, 5, ["29ms", "17ms", "32ms"]),
    "clock-tie-2-flows-short-base": (3, 11, 1, 1, ["24ms", "27ms"]),
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
        assert f["data_pkts_sent"] == f["received_pkts"] + f["dropped_pkts"] + f["in_flight_pkts"]
        assert f["throughput_bps"] > 0
        if "file_size" in SCENARIOS[case_id]["flows"][0]:
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
        assert int(o["data_pkts_sent"]) == (int(o["received_pkts"]) + int(o["dropped_pkts"])
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


@pytest.mark.parametrize("case_id", sorted(CLOCK_TIES))
def test_the_clock_tie_cases_need_ns2s_clock(case_id, vegaslab_run):
    """With the integer time as the senders' clock the run is a different one, so matching
    ns-2.35 to the packet on these cases (`test_against_ns2`) is the ns2 clock's doing; and
    Vegas's diff does sit exactly on its thresholds there."""
    default = vegaslab_run(scenario(case_id), seed=1, overrides=[]).flows
    exact = vegaslab_run(scenario(case_id), seed=1, overrides=['run.clock="exact"']).flows
    assert not default[list(PACKET_COUNTS)].equals(exact[list(PACKET_COUNTS)])
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
