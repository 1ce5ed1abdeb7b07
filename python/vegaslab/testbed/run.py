"""Run a scenario on the namespace testbed and return the same :class:`~vegaslab.Results`
tables as :func:`vegaslab.run`, so plots, metrics and reports work unchanged.

What the kernel cannot tell is left empty (NaN), never invented: per-flow drops, fast
retransmits versus timeouts, slow-start entries, packets received. ``meta["testbed"]`` says how
the run was made (kernel, sampling interval, the congestion controls used).
"""
from __future__ import annotations

import os
import platform
import sys
import time

import numpy as np

from .. import __version__
from ..results import Results
from .. import kernel
from .flows import run_flows
from .plan import Plan, plan

#: Time between building the network and the flows' time zero (processes start, sockets bind).
SETUP_MARGIN_S = 1.0
SAMPLE_INTERVAL_S = 0.01


def _scenario_doc(scenario, overrides) -> tuple[dict, dict[str, str], str]:
    """The normalised scenario, each flow's ``cc`` name (the core's), and the source."""
    from .. import normalize, validate

    overrides = list(overrides)
    ccs = {f["name"]: f["cc"] for f in validate(scenario, overrides=overrides)["flows"]}
    return normalize(scenario, overrides=overrides), ccs, str(scenario)


def run(scenario: str | os.PathLike, *, overrides=(), sample_interval_s: float = SAMPLE_INTERVAL_S) -> Results:
    """Build the scenario's network from namespaces, run its flows with the kernel's congestion
    controls (vegaslab's as BPF, registered for the run and unregistered after), and return
    the results. Needs root, BTF, clang and bpftool (:func:`vegaslab.kernel.check`)."""
    from .network import Bottleneck, Host, Network

    doc, ccs, source = _scenario_doc(scenario, overrides)
    p = plan(doc, ccs)
    kernel.check()
    started = time.monotonic()
    registered = []
    try:
        for cc, params in {cc: params for cc, params in p.kernel_algorithms.values()}.items():
            registered.append(kernel.register(cc, **params))
        margin = int(SETUP_MARGIN_S * 1e9)
        hosts = [Host(h, "sender") for h in p.senders] + [Host(h, "receiver") for h in p.receivers]
        bottleneck = Bottleneck(rate_bps=p.forward[0], buffer_pkts=p.forward[1],
                                reverse_rate_bps=p.reverse[0], reverse_buffer_pkts=p.reverse[1])
        changes = [(at + margin, x, y, d) for at, x, y, d in p.delay_changes]
        with Network(hosts, bottleneck, p.pair_delays_ns, changes) as net:
            raw = run_flows(net, p.flows, t0_ns=net.start_time_ns() + margin, duration_s=p.duration_s,
                            sample_interval_s=sample_interval_s)
    finally:
        for name in registered:
            try:
                kernel.unregister(name)
            except kernel.KernelError as e:  # never hide a registration left behind
                print(f"vegaslab: warning: {e}", file=sys.stderr)
    return results_of(doc, ccs, source, p, raw, sample_interval_s, time.monotonic() - started)


def results_of(doc: dict, cc_of: dict[str, str], source: str, p: Plan, raw: dict, interval: float,
               wall: float) -> Results:
    """The Results document of a testbed run (docs/results-format.md's tables)."""
    by_flow: dict[str, list[dict]] = {}
    for row in raw["tcp_info"]:
        by_flow.setdefault(row["flow"], []).append(row)
    series, flows = [], []
    for f in p.flows:
        rows = by_flow.get(f.name, [])
        prev_acked = 0
        for r in rows:
            t = r["t"] / 1e9
            series.append({
                "time": round(t, 6), "flow": f.name, "cwnd": float(r["snd_cwnd"]),
                "ssthresh": float(min(r["snd_ssthresh"], 2**31 - 1)),
                "rtt": r["rtt_us"] / 1e6 if r["rtt_us"] else None,
                "throughput_bps": (r["bytes_acked"] - prev_acked) * 8 / interval,
                "active": 1,
            })
            prev_acked = r["bytes_acked"]
        sink = raw["sink"].get(f.name, {"bytes": 0})
        end_s = min(p.duration_s, f.stop_s if f.stop_s is not None else p.duration_s)
        span = max(end_s - f.start_s, 1e-9)
        last = rows[-1] if rows else {}
        done = raw["done"].get(f.name)
        cwnds = [r["snd_cwnd"] for r in rows]
        flows.append({
            "flow": f.name, "cc": cc_of[f.name], "from": f.src, "to": f.dst,
            "start_s": f.start_s, "end_s": end_s,
            "data_pkts_sent": last.get("data_segs_out"), "data_bytes_sent": last.get("bytes_sent"),
            "retransmitted_pkts": last.get("total_retrans"),
            "fast_retransmits": None, "timeouts": None, "slow_start_entries": None, "received_pkts": None,
            "received_bytes": sink["bytes"], "delivered_pkts": None, "delivered_bytes": sink["bytes"],
            "throughput_bps": sink["bytes"] * 8 / span, "goodput_bps": sink["bytes"] * 8 / span,
            "active_throughput_bps": sink["bytes"] * 8 / span,
            "completion_time_s": (done / 1e9 - f.start_s) if (f.size_bytes and done is not None) else None,
            "final_cwnd": float(last["snd_cwnd"]) if last else None,
            "mean_cwnd": float(np.mean(cwnds)) if cwnds else None,
            "final_ssthresh": min(last.get("snd_ssthresh", 0), 2**31 - 1) if last else None,
            "in_flight_pkts": None, "dropped_pkts": None,
        })
    queue_series, lengths = [], []
    for q in raw["queues"]:
        queue_series.append({"time": round(q["t"] / 1e9, 6), "queue": p.bottleneck_name, "length": q["forward"]})
        lengths.append(q["forward"])
    queues = [{
        "queue": p.bottleneck_name, "kind": "droptail", "limit": p.forward[1],
        "arrivals": None, "drops": None, "departures": None, "loss_rate": None,
        "mean_len": float(np.mean(lengths)) if lengths else None,
        "std_len": float(np.std(lengths)) if lengths else None,
        "max_len": int(max(lengths)) if lengths else None,
    }]
    meta = {
        "scenario": doc.get("id"), "source": source, "seed": doc.get("seed"), "version": __version__,
        "duration_s": p.duration_s, "wall_time_s": wall, "events": 0,
        "testbed": {
            "kernel": platform.release(), "sample_interval_s": interval,
            "congestion_controls": sorted({f.cc for f in p.flows}),
            "bottleneck": {"queue": p.bottleneck_name, "rate_bps": p.forward[0], "buffer_pkts": p.forward[1]},
        },
    }
    return Results.from_dict({"meta": meta, "flows": flows, "queues": queues, "links": [],
                              "series": {"flows": series, "queues": queue_series}})

