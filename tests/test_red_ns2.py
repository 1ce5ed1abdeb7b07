"""Differential test of RED against ns-2.35's Queue/RED (packet mode, classic forced drops).

The two simulators draw different random numbers, so runs are not packet-identical; on a
congested RED bottleneck the aggregates must agree: total throughput within 2 %, bottleneck
drops within 10 %, time-averaged queue length within 10 %. The set-up is network 1 of the grids
paper (Weigle and Feng, "A Case for TCP Vegas in High-Performance Computational Grids": 10 Mbps /
4 ms access, 1.55 Mbps / 4 ms bottleneck, 1500-byte packets) with its RED thresholds min 4 /
max 8 and a 25-packet buffer (§4.2).
"""
from __future__ import annotations

import os
import shutil

import pytest

import vegaslab
from vegaslab import ns2

pytestmark = pytest.mark.skipif(shutil.which("ns") is None and os.environ.get("VEGASLAB_REQUIRE_NS2") != "1",
                                reason="ns-2 ('ns') not on PATH; run scripts/install-ns2.sh")

THROUGHPUT_RTOL = 0.02
DROPS_RTOL = 0.10
QUEUE_RTOL = 0.10


def grids_net1(queue: dict, ccs=("newreno", "newreno"), duration="100s") -> dict:
    n = len(ccs)
    return {
        "run": {"duration": duration},
        "dumbbell": {"pairs": n, "access": {"bandwidth": "10Mbps", "delay": "4ms"},
                     "bottleneck": {"bandwidth": "1.55Mbps", "delay": "4ms", "queue": queue}},
        "flows": [{"name": f"f{i}", "from": f"S{i + 1}", "to": f"D{i + 1}", "cc": cc,
                   "tcp": {"window": 100, "packet_size": 1500}} for i, cc in enumerate(ccs)],
    }


CASES = {
    "classic": ({"kind": "red", "limit": 25, "min": 4, "max": 8, "max_p": 0.1, "weight": 0.002},
                ("newreno", "newreno")),
    "classic-reno": ({"kind": "red", "limit": 25, "min": 4, "max": 8, "max_p": 0.1, "weight": 0.002},
                     ("reno", "reno")),
    "gentle-auto": ({"kind": "red", "limit": 25, "min": 4, "max": 8, "max_p": 0.1, "weight": "auto",
                     "gentle": True}, ("newreno", "newreno")),
    "no-wait": ({"kind": "red", "limit": 30, "min": 6, "max": 20, "max_p": 0.05, "weight": 0.01,
                 "wait": False}, ("newreno", "newreno", "newreno")),
}


def _close(ours, theirs, rtol, what):
    assert abs(ours - theirs) <= rtol * max(abs(theirs), 1e-9), f"{what}: ours {ours} vs ns-2 {theirs}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_red_matches_ns2_in_aggregate(name):
    queue, ccs = CASES[name]
    scn = grids_net1(queue, ccs)
    ours = vegaslab.run(scn, seed=1)
    theirs = ns2.run_scenario(scn, seed=1)
    q = ours.queues.set_index("queue").loc["R1->R2"]
    tq = next(x for x in theirs["queues"] if x["queue"] == "R1->R2")
    assert q.kind == "red"
    assert q.dropped_pkts == q.early_dropped_pkts + q.forced_dropped_pkts
    assert q.early_dropped_pkts > 0
    _close(ours.flows.throughput_bps.sum(), sum(f["throughput_bps"] for f in theirs["flows"]), THROUGHPUT_RTOL,
           "total throughput")
    _close(q.dropped_pkts, tq["dropped_pkts"], DROPS_RTOL, "bottleneck drops")
    _close(q.mean_len_pkts, tq["mean_len_pkts"], QUEUE_RTOL, "mean queue length")
