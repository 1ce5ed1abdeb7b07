"""The AdaVegas block of vegaslab.study.metrics (time_to_reach, settling_time, pipe_packets,
time_to_fair_share, window_overshoot, line_utilisation_of, mean_goodput_per_user) on hand-made
results with hand-computed expectations, plus the two-user scenario of the catalog's av-two-users.toml
through the compiled core."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import vegaslab
from vegaslab.study.catalog import builtin_dir
from vegaslab.study import metrics
from vegaslab.results import Results

ROOT = Path(__file__).resolve().parents[1]
CATALOG = builtin_dir()  # the catalog ships as package data: vegaslab/catalog_data/


def _results(flows=(), links=(), series=None, duration=10.0) -> Results:
    return Results.from_dict({
        "meta": {"scenario": "hand", "duration_s": duration, "seed": 1},
        "flows": list(flows),
        "queues": [],
        "links": list(links),
        "series": {"flows": series or {}, "queues": {}},
    })


def _flow(name, cc, **kw):
    row = {"flow": name, "cc": cc, "from": "S", "to": "D", "start_s": 0.0, "end_s": 10.0,
           "sent_pkts": 100, "sent_bytes": 150_000, "delivered_bytes": 0}
    row.update(kw)
    return row


# f1's window: 10 until t=2, then grows 10 -> 40 by t=5, peaks at 50 at t=6, settles at 44.
TIMES = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
CWND = [10.0, 10.0, 20.0, 30.0, 40.0, 50.0, 47.0, 44.0, 44.0, 44.0]
SERIES = {
    "time_s": TIMES,
    "flow": ["f1"] * 10,
    "cwnd_pkts": CWND,
    # baseRTT 0.6 s from the second sample on (the first has no RTT sample yet)
    "base_rtt_s": [math.nan] + [0.6] * 9,
    "active": [1] * 10,
}
# 1500-byte packets (150,000 bytes / 100 packets) over 0.6 Mbit/s: pipe = 0.6e6 x 0.6 / 12000 = 30
LINK = {"link": "R1->R2", "bandwidth_bps": 0.6e6, "sent_bytes": 0, "utilisation_ratio": 0.0}


def hand() -> Results:
    return _results(flows=[_flow("f1", "vegas_8")], links=[LINK], series=SERIES)


def test_time_to_reach_counts_from_after_s_to_the_first_sample_at_the_level():
    r = hand()
    assert metrics.time_to_reach(r, "f1", 30, 2.0) == 2.0        # 30 first at t=4
    assert metrics.time_to_reach(r, "f1", 25, 2.0) == 2.0        # >= 25 first at t=4 too
    assert metrics.time_to_reach(r, "f1", 10, 2.0) == 1.0        # first sample after 2 s is t=3
    assert metrics.time_to_reach(r, "f1", 51, 0.0) == math.inf   # never
    assert metrics.time_to_reach(r, "f1", 10, 0.5) == 0.5        # t=1 already at 10


def test_settling_time_is_when_the_window_enters_the_final_band_for_good():
    r = hand()
    # final 44, band 39.6..48.4: out at t=6 (50), in from t=7 on -> 7 - 2 = 5 s
    assert metrics.settling_time(r, "f1", 2.0) == pytest.approx(5.0)
    # a 20% band (35.2..52.8): last sample out is t=4 (30), in from t=5 -> 3 s
    assert metrics.settling_time(r, "f1", 2.0, tol=0.2) == pytest.approx(3.0)
    assert metrics.settling_time(r, "f1", 7.5) == 0.0


def test_pipe_packets_is_bandwidth_times_base_rtt_over_the_packet_size():
    assert metrics.pipe_packets(hand(), "f1", "R1->R2") == pytest.approx(30.0)


def test_time_to_fair_share_and_overshoot_are_relative_to_the_pipe():
    r = hand()
    # 90% of 30 = 27: first reached at t=4
    assert metrics.time_to_fair_share(r, "f1", "R1->R2", 2.0) == pytest.approx(2.0)
    assert metrics.time_to_fair_share(r, "f1", "R1->R2", 2.0, fraction=0.5) == pytest.approx(1.0)
    # peak 50 over a pipe of 30
    assert metrics.window_overshoot(r, "f1", "R1->R2", 2.0) == pytest.approx(20.0)
    assert metrics.window_overshoot(r, "f1", "R1->R2", 7.5) == pytest.approx(14.0)


def test_unknown_flow_or_link_is_a_keyerror():
    with pytest.raises(KeyError):
        metrics.time_to_reach(hand(), "nope", 1)
    with pytest.raises(KeyError):
        metrics.pipe_packets(hand(), "f1", "R2->R1")


def test_line_utilisation_of_a_name_prefix_and_mean_goodput_per_user():
    flows = [_flow("lo1", "adavegas", delivered_bytes=150_000),
             _flow("lo2", "adavegas", delivered_bytes=75_000),
             _flow("hi3", "vegas_1", delivered_bytes=375_000)]
    r = _results(flows=flows, links=[{"link": "R1->R2", "bandwidth_bps": 1e6, "sent_bytes": 0,
                                      "utilisation_ratio": 0.0}], duration=10.0)
    # (150,000 + 75,000) x 8 / (1e6 x 10) = 0.18; 375,000 x 8 / 1e7 = 0.3
    assert metrics.line_utilisation_of(r, "R1->R2", "lo") == pytest.approx(0.18)
    assert metrics.line_utilisation_of(r, "R1->R2", "hi") == pytest.approx(0.30)
    with pytest.raises(KeyError):
        metrics.line_utilisation_of(r, "R1->R2", "mid")
    assert metrics.mean_goodput_per_user(r, "adavegas") == pytest.approx(112_500)
    assert metrics.mean_goodput_per_user(r, "vegas_1") == pytest.approx(375_000)


def test_two_users_vegas_8_reaches_the_doubled_fair_share_far_sooner_than_vegas_1():
    """av-two-users.toml (the catalog) at 8 Mbit/s: the pipe is bandwidth x baseRTT (606 ms) / 12,000
    bits = 404 packets, and Vegas_1 (+1 per RTT) needs several times as long as Vegas_8."""
    path = CATALOG / "av-two-users.toml"
    times = {}
    for cc in ("vegas_1", "vegas_8"):
        r = vegaslab.run(path, overrides={"flows[0].cc": cc, "flows[1].cc": cc,
                                          "dumbbell.bottleneck.bandwidth": "8Mbps"})
        assert metrics.pipe_packets(r, "f1", "R1->R2") == pytest.approx(8e6 * 0.6058 / 12000, rel=0.002)
        times[cc] = metrics.time_to_fair_share(r, "f1", "R1->R2", 200)
    assert 0 < times["vegas_8"] < 20
    assert times["vegas_1"] > 3 * times["vegas_8"]


def test_jain_over_all_windows_counts_the_off_users_too():
    series = {
        "time_s": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0],
        "flow": ["a", "b", "c"] * 2,
        "cwnd_pkts": [2.0, 6.0, 2.0, 4.0, 4.0, 4.0],
        "active": [1, 1, 0, 1, 1, 1],
    }
    r = _results(flows=[_flow(n, "vegas_1") for n in "abc"], series=series)
    # t=1: (2+6+2)^2 / (3 x 44) = 100/132; t=2: 1.  Active only at t=1: 64 / (2 x 40) = 0.8
    assert metrics.jain_over_all_windows(r) == pytest.approx((100 / 132 + 1) / 2)
    assert metrics.jain_over_active_windows(r) == pytest.approx((0.8 + 1) / 2)
