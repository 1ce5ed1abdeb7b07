"""vegaslab.study.metrics on small hand-made results (expectations computed by hand from the papers'
definitions), plus one real run through the compiled core."""

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


def _flow(name: str, cc: str, **kw) -> dict:
    row = {"flow": name, "cc": cc, "from": "S", "to": "D", "start_s": 0.0, "end_s": 10.0,
           "throughput_bps": 0.0, "goodput_bps": 0.0, "delivered_bytes": 0, "slow_start_entries": 1}
    row.update(kw)
    return row


def _results(flows=(), queues=(), links=(), series=None, duration=10.0) -> Results:
    return Results.from_dict({
        "meta": {"scenario": "hand", "duration_s": duration, "seed": 1},
        "flows": list(flows),
        "queues": list(queues),
        "links": list(links),
        "series": {"flows": series or {}, "queues": {}},
    })


# ---------------------------------------------------------------------- Jain's index


def test_jain_index_is_one_for_equal_windows_and_one_over_n_for_a_monopoly():
    assert metrics.jain_index([5, 5, 5]) == 1.0
    assert metrics.jain_index([8, 0, 0, 0]) == 0.25


def test_jain_index_matches_a_hand_computation():
    # (1 + 2 + 3)^2 / (3 x (1 + 4 + 9)) = 36 / 42
    assert metrics.jain_index([1, 2, 3]) == pytest.approx(36 / 42)


def test_jain_index_is_undefined_when_a_value_is_missing_or_there_is_nothing():
    # A missing user must not be dropped: [2, nan, 2] is not "two equal users, index 1".
    assert math.isnan(metrics.jain_index([2, float("nan"), 2]))
    assert math.isnan(metrics.jain_index([2, float("inf"), 2]))
    assert math.isnan(metrics.jain_index([]))
    assert math.isnan(metrics.jain_index([0, 0]))


SERIES = {
    # Two sample times, three users. t=1: a and b active (windows 2 and 6), c OFF (its window of
    # 40 must not count). t=2: all three active with windows 4, 4, 4.
    "time_s": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0],
    "flow":   ["a", "b", "c"] * 3,
    "cwnd_pkts": [2.0, 6.0, 40.0, 4.0, 4.0, 4.0, 7.0, 9.0, 3.0],
    "active": [1, 1, 0, 1, 1, 1, 0, 0, 0],
}


def test_jain_over_active_windows_uses_only_active_users_and_averages_over_samples():
    r = _results(flows=[_flow(n, "vegas") for n in "abc"], series=SERIES)
    per_time = metrics.jain_series(r)
    # t=1: (2 + 6)^2 / (2 x (4 + 36)) = 64 / 80 = 0.8; t=2: 1; t=3: nobody active (left out).
    assert list(per_time.index) == [1.0, 2.0]
    assert per_time.tolist() == pytest.approx([0.8, 1.0])
    assert metrics.jain_over_active_windows(r) == pytest.approx(0.9)
    mean, std = metrics.jain_over_active_windows(r, with_std=True)
    assert (mean, std) == pytest.approx((0.9, 0.1))


def test_jain_over_all_windows_counts_off_users_and_differs_from_the_active_users_index():
    r = _results(flows=[_flow(n, "vegas") for n in "abc"], series=SERIES)
    # Every sampled user at every time: t=1 (2, 6, 40): 48^2 / (3 x 1640); t=2: 1;
    # t=3 (7, 9, 3): 19^2 / (3 x 139). The paper's index (active users only) is 0.9.
    expected = (48**2 / (3 * 1640) + 1.0 + 19**2 / (3 * 139)) / 3
    assert metrics.jain_over_all_windows(r) == pytest.approx(expected)
    assert metrics.jain_over_all_windows(r) != pytest.approx(metrics.jain_over_active_windows(r))


def test_jain_over_active_windows_refuses_a_run_without_the_active_flag():
    # Without the flag the active users are unknown; counting everyone would silently give the
    # all-users index under the active-users name.
    series = {k: v for k, v in SERIES.items() if k != "active"}
    r = _results(flows=[_flow(n, "vegas") for n in "abc"], series=series)
    with pytest.raises(ValueError, match="active"):
        metrics.jain_series(r)
    with pytest.raises(ValueError, match="active"):
        metrics.jain_over_active_windows(r)
    # The all-users reading needs no flag.
    assert metrics.jain_over_all_windows(r) > 0


def test_jain_needs_sampled_windows():
    r = _results(flows=[_flow("a", "vegas")])
    with pytest.raises(ValueError, match="monitor.cwnd = true"):
        metrics.jain_over_active_windows(r)


# ---------------------------------------------------------------------- inter-protocol fairness


def _table3(vegas_cc: str, vegas, newreno) -> Results:
    flows = [_flow(f"S{i + 1}", vegas_cc, throughput_bps=t) for i, t in enumerate(vegas)]
    flows += [_flow(f"S{i + 4}", "newreno", throughput_bps=t) for i, t in enumerate(newreno)]
    return _results(flows=flows)


def test_interprotocol_fairness_ratio_reproduces_vegas_a_table_3():
    # The Vegas-A paper (Srijith et al., "TCP Vegas-A: Improving the Performance of TCP Vegas"),
    # Table 3 and section 4.2: 0.497 for Vegas, 2.028 for Vegas-A against NewReno.
    vegas = _table3("vegas", [164_480, 119_242, 106_044], [326_590, 207_002, 250_828])
    assert metrics.interprotocol_fairness_ratio(vegas, "vegas", "newreno") == pytest.approx(0.497, abs=5e-4)
    vegas_a = _table3("vegas-a", [275_480, 167_789, 304_178], [127_908, 131_402, 109_336])
    assert metrics.interprotocol_fairness_ratio(vegas_a, "vegas-a", "newreno") == pytest.approx(2.028, abs=5e-4)


def test_groups_can_be_lists_of_flow_names_and_unknown_names_are_errors():
    r = _table3("vegas", [100, 300], [200])
    assert metrics.interprotocol_fairness_ratio(r, ["S1"], ["S4"]) == 0.5
    assert metrics.interprotocol_fairness_ratio(r, "S2", "newreno") == 1.5
    with pytest.raises(KeyError, match="cubic"):
        metrics.interprotocol_fairness_ratio(r, "cubic", "newreno")
    with pytest.raises(KeyError, match="nope"):
        metrics.interprotocol_fairness_ratio(r, ["S1", "nope"], "newreno")


# ---------------------------------------------------------------------- utilisation, loss


def test_line_utilisation_is_acked_data_over_capacity_times_time():
    # 2 flows acknowledged 1,000 and 500 packets of 1500 bytes in 10 s on a 2 Mbit/s link:
    # 1,500 x 1500 x 8 / (2e6 x 10) = 0.9.
    r = _results(
        flows=[_flow("a", "vegas", delivered_bytes=1_000 * 1500), _flow("b", "vegas", delivered_bytes=500 * 1500)],
        links=[{"link": "R1->R2", "bandwidth_bps": 2e6, "sent_bytes": 0, "utilisation_ratio": 0.95}],
    )
    assert metrics.line_utilisation(r, "R1->R2") == pytest.approx(0.9)
    assert metrics.line_utilisation(r, "R1->R2", flows=["a"]) == pytest.approx(0.6)
    assert metrics.line_utilisation(r, "R1->R2", duration_s=20.0) == pytest.approx(0.45)
    with pytest.raises(KeyError, match="R2->R1"):
        metrics.line_utilisation(r, "R2->R1")


def test_loss_rate_is_drops_over_arrivals_at_the_queue():
    r = _results(queues=[
        {"queue": "R1->R2", "arrived_pkts": 2_000, "dropped_pkts": 26, "departed_pkts": 1_974},
        {"queue": "R2->R1", "arrived_pkts": 0, "dropped_pkts": 0, "departed_pkts": 0},
    ])
    assert metrics.loss_rate(r, "R1->R2") == pytest.approx(0.013)
    assert metrics.loss_rate(r, "R2->R1") == 0.0
    with pytest.raises(KeyError):
        metrics.loss_rate(r, "X->Y")


# ---------------------------------------------------------------------- shares, slow starts


def test_goodput_share_sums_to_one():
    r = _results(flows=[_flow("v", "vegas", goodput_bps=154_417), _flow("n", "newreno", goodput_bps=1_338_156)])
    share = metrics.goodput_share(r)
    assert share.sum() == pytest.approx(1.0)
    assert share["v"] == pytest.approx(154_417 / (154_417 + 1_338_156))


def test_slow_starts_per_flow():
    r = _results(flows=[_flow("v", "vegas", slow_start_entries=4), _flow("n", "newreno", slow_start_entries=31)])
    assert metrics.slow_starts(r).to_dict() == {"v": 4, "n": 31}


# ---------------------------------------------------------------------- a real run


ONOFF_RUN = """
[run]
duration = "120s"
sample_interval = "1s"
[dumbbell]
pairs = 6
access = { bandwidth = "100Mbps", delay = "1ms" }
bottleneck = { bandwidth = "4Mbps", delay = "30ms", queue = { limit = 180 } }
[monitor]
cwnd = true
queues = ["R1->R2"]
[[flows]]
name = "user"
pairs = "1-6"
cc = "vegas"
tcp = { window = 1000, packet_size = 1500 }
app = { kind = "onoff", mean_on = "20s", mean_off = "20s", shape = 1.5 }
[[udp]]
name = "cbr"
from = "D1"
to = "S1"
packet_size = 1000
model = "cbr"
rate = "500kbps"
"""


@pytest.mark.skipif(vegaslab.core_version() is None, reason="needs the compiled core")
def test_metrics_on_a_run_of_onoff_users():
    r = vegaslab.run(ONOFF_RUN)
    assert set(r.series_flows["active"].unique()) == {0, 1}
    per_time = metrics.jain_series(r)
    n_active = r.series_flows[r.series_flows["active"] == 1].groupby("time_s").size()
    # Each sample's index lies in [1/n, 1] for its n active users.
    for t, j in per_time.items():
        assert 1 / n_active[t] - 1e-12 <= j <= 1 + 1e-12
    assert 0 < metrics.jain_over_active_windows(r) <= 1
    util = metrics.line_utilisation(r, "R1->R2")
    # Goodput-based utilisation is below the link's busy fraction (which counts retransmissions).
    assert 0 < util <= float(r.links.set_index("link").loc["R1->R2", "utilisation_ratio"]) + 1e-9
    assert metrics.loss_rate(r, "R1->R2") == pytest.approx(float(r.queues.set_index("queue").loc["R1->R2", "loss_ratio"]))
    assert metrics.goodput_share(r).sum() == pytest.approx(1.0)
    assert (metrics.slow_starts(r) >= 1).all()
    # The UDP table is there, and its source is counted.
    assert r.udp.set_index("source").loc["cbr", "received_pkts"] > 0
    assert r.value("cbr.sent_pkts") == int(r.udp.iloc[0]["sent_pkts"])


# ---------------------------------------------------------------------- the catalog's fairness claims


@pytest.mark.parametrize("entry", sorted(p.stem for p in (CATALOG).glob("av-*.toml")))
def test_adavegas_fairness_claims_use_the_papers_active_users_index_first(entry):
    """The AdaVegas paper (Maor and Mansour, "AdaVegas: Adaptive Control for TCP Vegas"), section
    IV, defines Jain's index over the *active* users. In every AdaVegas
    entry, a claim using the all-users index must be labelled as such and come after a claim
    with the paper's definition."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib

    doc = tomllib.loads((CATALOG / f"{entry}.toml").read_text(encoding="utf-8"))
    claims = doc.get("meta", {}).get("claim", [])
    first_active = next((i for i, c in enumerate(claims) if "jain_over_active_windows" in c["expr"]), None)
    for i, c in enumerate(claims):
        if "jain_over_all_windows" in c["expr"]:
            assert c["text"].startswith("All-users index (fits the published table; not the paper's definition"), \
                f"{entry}#{i + 1}: the all-users index must be labelled"
            assert "jain_over_active_windows" not in c["expr"], f"{entry}#{i + 1}: one reading per claim"
            assert first_active is not None and first_active < i, \
                f"{entry}#{i + 1}: the paper's (active users) claim must come first"
