"""A scenario run on the namespace testbed end to end (issue 10): the kernel's TCP with
vegaslab's BPF Vegas and the kernel's reno through the scenario's bottleneck and delays, giving
the same Results tables as the simulator. Needs root and the BPF tools (see test_kernel.py)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from vegaslab import kernel
from vegaslab.catalog import builtin_dir

try:
    kernel.check()
    from vegaslab.testbed.network import check as network_check

    network_check()
    REASON = None
except Exception as e:  # noqa: BLE001 - the reason to skip, whatever is missing
    REASON = str(e)
if REASON and os.environ.get("VEGASLAB_REQUIRE_BPF") == "1":
    raise RuntimeError(f"VEGASLAB_REQUIRE_BPF=1 but {REASON}")
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

REROUTE = builtin_dir() / "va-reroute.toml"
# The rerouting chain at 20 Mbit/s (the scenario (c) shape), 4 s, 50-packet buffers.
FAST = ["run.duration=4s", "links[0].bandwidth=20Mbps", "links[1].bandwidth=20Mbps", "links[2].bandwidth=20Mbps"]


def _run(*overrides):
    from vegaslab.testbed.run import run

    return run(REROUTE, overrides=[*FAST, *overrides])


def test_kernel_vegas_keeps_a_small_queue_where_reno_fills_the_buffer():
    vegas = _run("flows[0].cc=vegas", "flows[0].params.flavour=linux")
    reno = _run("flows[0].cc=newreno")
    for r in (vegas, reno):
        assert set(r.flows.columns) >= {"flow", "cc", "throughput_bps", "final_cwnd", "retransmitted_pkts"}
        assert r.flows.throughput_bps.iloc[0] > 15e6, r.flows.throughput_bps.iloc[0]
        assert len(r.series_flows) >= 350  # one sample per 10 ms
    steady = lambda r: r.series_queues[r.series_queues.time > 2].length  # noqa: E731
    assert steady(vegas).mean() < 10, steady(vegas).describe()
    assert steady(reno).max() >= 40, steady(reno).describe()
    assert vegas.flows.cc.iloc[0] == "vegas" and reno.flows.cc.iloc[0] == "newreno"
    assert "vl_vegas" not in kernel.registered()  # unregistered after the run


def test_a_scheduled_delay_change_reaches_the_kernels_rtt():
    r = _run("flows[0].cc=cubic", 'links[0].delay_schedule=[{ at = "2s", delay = "50ms" }]')
    rtt = r.series_flows.set_index("time").rtt
    before, after = rtt[(rtt.index > 1.5) & (rtt.index < 2.0)], rtt[rtt.index > 3.5]
    # 10 + 5 + 5 ms each way (40 ms) before; the first link's 50 ms each way after (120 ms).
    assert 0.039 < before.min() < 0.1 and after.min() > 0.115, (before.describe(), after.describe())


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
