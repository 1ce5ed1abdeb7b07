"""Tests of the ns-2 bridge alone (vegaslab.ns2): translation, overrides, and ns-2 runs.

Translation tests need nothing; the tests that run ns-2 skip when ``ns`` is not on PATH.
"""
from __future__ import annotations

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

from vegaslab.ns2 import (apply_overrides, build_model, build_script, parse_bandwidth,  # noqa: E402
                          parse_size, parse_time, run_scenario)

needs_ns = pytest.mark.skipif(shutil.which("ns") is None and os.environ.get("VEGASLAB_REQUIRE_NS2") != "1", reason="ns-2 ('ns') not on PATH")


def chain(cc="vegas", *, window=100, app=None, size=None, duration="200s",
          delays=("10ms", "5ms", "5ms"), bws=("1Mbps", "1Mbps", "1Mbps"), limit=50, sched=True):
    links = []
    for i, (a, b) in enumerate([("S1", "R1"), ("R1", "R2"), ("R2", "D1")]):
        links.append({"endpoints": [a, b], "bandwidth": bws[i], "delay": delays[i],
                      "queue": {"kind": "droptail", "limit": limit if i == 1 else 50}})
    if sched:
        links[0]["delay_schedule"] = [{"at": "20s", "delay": "100ms"}]
    flow = {"name": cc, "from": "S1", "to": "D1", "cc": cc,
            "tcp": {"window": window, "packet_size": 1000}}
    if app:
        flow.update(app=app, file_size=size)
    return {"run": {"duration": duration}, "links": links, "flows": [flow]}


def dumbbell(ccs=("reno",), limit=10, duration="60s", window=100):
    return {"run": {"duration": duration},
            "dumbbell": {"pairs": len(ccs), "access": {"bandwidth": "10Mbps", "delay": "1ms"},
                         "bottleneck": {"bandwidth": "1Mbps", "delay": "10ms",
                                        "queue": {"kind": "droptail", "limit": limit}}},
            "flows": [{"name": f"{cc}{i + 1}", "from": f"S{i + 1}", "to": f"D{i + 1}", "cc": cc,
                       "tcp": {"window": window}} for i, cc in enumerate(ccs)]}


# ------------------------------------------------------------------ translation only

def test_units():
    assert parse_time("20ms") == pytest.approx(0.02)
    assert parse_time("250us") == pytest.approx(250e-6)
    assert parse_time(3) == 3.0
    assert parse_bandwidth("1.5Mbps") == 1.5e6
    assert parse_bandwidth("250Kb") == 250e3
    assert parse_bandwidth("10Gb") == 1e10
    assert parse_size("10MB") == 10_000_000
    assert parse_size("5KB") == 5000
    with pytest.raises(ValueError):
        parse_time("20 parsecs")
    with pytest.raises(ValueError):
        parse_bandwidth("1MB")


def test_overrides():
    scn = chain()
    apply_overrides(scn, ["run.duration=100s", "flows[0].cc=newreno", "links[1].queue.limit=10",
                          "flows[0].tcp.window=64", "flows[0].tcp.syn=false",
                          "flows[0].params.alpha=2"])
    assert scn["run"]["duration"] == "100s"
    assert scn["flows"][0]["cc"] == "newreno"
    assert scn["links"][1]["queue"]["limit"] == 10
    assert scn["flows"][0]["tcp"]["window"] == 64
    assert scn["flows"][0]["tcp"]["syn"] is False
    assert scn["flows"][0]["params"] == {"alpha": 2}
    with pytest.raises(ValueError):
        apply_overrides(scn, ["flows[3].cc=vegas"])
    with pytest.raises(ValueError):
        apply_overrides(scn, ["novalue"])


def test_script_contents():
    scn = chain()
    scn["flows"][0]["params"] = {"alpha": 2, "beta": 4, "gamma": 1, "flavour": "ns2"}
    scn["flows"][0]["tcp"].update(header_bytes=40, syn=True, delay_growth=False, max_burst=4,
                                  dupacks=3, tick="10ms", min_rto="200ms", max_rto="60s",
                                  initial_rto="3s", limited_transmit=False, window_init=2)
    text = build_script(build_model(scn))
    assert "new Agent/TCP/Vegas" in text
    for frag in ("v_alpha_ 2", "v_beta_ 4", "v_gamma_ 1", "window_ 100", "packetSize_ 1000",
                 "tcpip_base_hdr_size_ 40", "syn_ true", "delay_growth_ false", "maxburst_ 4",
                 "numdupacks_ 3", "tcpTick_ 0.01", "minrto_ 0.2", "maxrto_ 60",
                 "rtxcur_init_ 3", "singledup_ 0", "windowInit_ 2", "Agent/TCPSink",
                 "queue-limit $n(1) $n(2) 50"):
        assert frag in text, frag
    # the delay change is applied to both directions' DelayLink
    assert text.count("link] set delay_ 0.1") == 2
    assert "1000000 0.01 DropTail" in text


def test_dumbbell_model_and_access_array():
    scn = dumbbell(("reno", "newreno"))
    scn["dumbbell"]["access"] = [{"bandwidth": "10Mbps", "delay": "1ms"},
                                 {"bandwidth": "5Mbps", "delay": "3ms"}]
    m = build_model(scn)
    assert m.nodes == ["S1", "S2", "R1", "R2", "D1", "D2"]
    names = {ld.name: ld for ld in m.links}
    assert names["S2->R1"].bandwidth == 5e6 and names["S2->R1"].delay == pytest.approx(0.003)
    assert names["R2->D2"].bandwidth == 5e6       # egress defaults to the (per-pair) access
    assert names["R1->R2"].limit == 10


def test_rejects_outside_subset():
    bad = []
    s = chain(); s["links"][1]["queue"] = {"kind": "red", "limit": 10}; bad.append(s)
    s = chain(); s["flows"][0]["cc"] = "cubic"; bad.append(s)
    s = chain(); s["flows"][0]["params"] = {"alpha": 1, "flavour": "linux"}; bad.append(s)
    s = chain(); s["flows"][0]["tcp"]["ns2_vegas_headers"] = True; bad.append(s)
    s = chain(); s["flows"][0]["tcp"]["sack"] = True; bad.append(s)
    s = chain(); s["flows"][0]["app"] = "cbr"; bad.append(s)
    s = chain(); s["flows"][0]["to"] = "D9"; bad.append(s)
    s = chain(); del s["run"]["duration"]; bad.append(s)
    s = chain(); s["errors"] = {"per": 0.01}; bad.append(s)
    for s in bad:
        with pytest.raises(ValueError):
            build_model(s)


# --------------------------------------------------------------------- ns-2 runs

@needs_ns
def test_reroute_vegas_reference_number():
    """REFERENCE.md: ns-2.35 gives Vegas 217,160 bit/s on va-reroute (1000-byte packets)."""
    r = run_scenario(chain("vegas"))
    f = r["flows"][0]
    assert f["goodput_bps"] == pytest.approx(217_160, abs=1)
    # Vegas: no SYN, no header: wire size = packetSize_
    assert f["syn_pkts"] == 0
    assert f["received_bytes"] == 1000 * f["received_pkts"]
    assert f["data_pkts_sent"] == f["received_pkts"] + f["dropped_pkts"] + f["in_flight_pkts"]
    assert r["meta"]["ns_version"] == "2.35" and "Agent/TCP/Vegas" in r["meta"]["script"]


@needs_ns
def test_file_transfer_reno_syn_and_sizes():
    r = run_scenario(chain("newreno", window=20, app="file", size="1MB", duration="30s",
                           sched=False))
    f = r["flows"][0]
    assert f["completion_time_s"] is not None and f["completion_time_s"] < 30
    assert f["delivered_pkts"] == 1000 and f["delivered_bytes"] == 1_000_000
    assert f["syn_pkts"] == 1
    # one 40-byte SYN + 1000 data packets of 1040 bytes, no loss at window 20
    assert f["retransmitted_pkts"] == 0
    assert f["received_pkts"] == 1001 and f["received_bytes"] == 40 + 1000 * 1040
    assert f["data_pkts_sent"] == 1001


@needs_ns
@pytest.mark.parametrize("cc", ["reno", "newreno"])
def test_congested_conservation_and_queue(cc):
    r = run_scenario(dumbbell((cc,)))
    f = r["flows"][0]
    assert f["dropped_pkts"] > 0 and f["retransmitted_pkts"] > 0
    assert f["in_flight_pkts"] >= 0
    assert f["data_pkts_sent"] == f["received_pkts"] + f["dropped_pkts"] + f["in_flight_pkts"]
    q = {q["queue"]: q for q in r["queues"]}["R1->R2"]
    assert q["drops"] == f["dropped_pkts"]
    # what is left at the end is still queued (at most the limit)
    assert 0 <= q["arrivals"] - q["departures"] - q["drops"] <= q["limit"]
    assert 0 < q["mean_len"] < 10
    assert 0 < q["loss_rate"] < 0.1
    link = {l["link"]: l for l in r["links"]}["R1->R2"]
    assert 0.9 < link["utilisation"] <= 1.0


@needs_ns
def test_trace_false_and_files(tmp_path):
    scn = dumbbell(("reno", "vegas"), duration="10s")
    r = run_scenario(scn, trace=False, workdir=tmp_path)
    assert r["queues"] == []
    assert "received_pkts" not in r["flows"][0]
    assert r["flows"][0]["data_pkts_sent"] > 0 and r["meta"]["wall_time_s"] > 0
    assert not any(tmp_path.iterdir())          # temp files deleted
    r = run_scenario(scn, workdir=tmp_path, keep_files=True, overrides=["run.duration=5s"])
    assert (tmp_path / "scenario.tcl").exists() and (tmp_path / "vl.tr").exists()
    assert r["meta"]["duration_s"] == 5.0


@needs_ns
def test_toml_path(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('[run]\nduration = "5s"\n[[links]]\nendpoints = ["A", "B"]\n'
                 'bandwidth = "1Mbps"\ndelay = "5ms"\n[[flows]]\nfrom = "A"\nto = "B"\n'
                 'cc = "vegas"\napp = "file"\nfile_size = "100KB"\n')
    r = run_scenario(p, overrides=["flows[0].cc=reno"])
    f = r["flows"][0]
    assert f["flow"] == "flow0" and f["cc"] == "reno"
    assert f["delivered_pkts"] == 100 and f["completion_time_s"] > 0
