"""Run a scenario on the namespace testbed and return the same :class:`~vegaslab.Results`
tables as :func:`vegaslab.run`, so plots, metrics and reports work unchanged.

What the kernel cannot tell is left empty (NaN), never invented: per-flow drops, fast
retransmits versus timeouts, slow-start entries, packets received. ``meta["testbed"]`` says how
the run was made (kernel, sampling interval, the congestion controls used and the parameters
each ran with as the kernel reports them).
"""
from __future__ import annotations

import os
import platform
import time
from contextlib import contextmanager
from dataclasses import asdict

import numpy as np

from ..core import package_version
from ..results import Results
from .. import kernel
from .flows import run_flows
from .plan import Plan, plan
from .session import KernelSession
from .stack import Stack

#: Time between building the network and the flows' time zero (processes start, sockets bind).
SETUP_MARGIN_S = 1.0
SAMPLE_INTERVAL_S = 0.01
_TCPI_OPT_SACK = 2  # include/uapi/linux/tcp.h


def _scenario_doc(scenario, overrides) -> tuple[dict, dict[str, str], str]:
    """The normalised scenario, each flow's ``cc`` name (the core's), and the source."""
    from ..simulation import normalize, validate

    overrides = list(overrides)
    ccs = {f["name"]: f["cc"] for f in validate(scenario, overrides=overrides)["flows"]}
    return normalize(scenario, overrides=overrides), ccs, str(scenario)


def run(scenario: str | os.PathLike, *, overrides=(), sample_interval_s: float = SAMPLE_INTERVAL_S,
        stack: Stack = Stack()) -> Results:
    """Build the scenario's network from namespaces, run its flows with the kernel's congestion
    controls (vegaslab's as BPF, registered for the run and unregistered after) and the kernel
    TCP behaviours ``stack`` switches, and return the results. Needs root, BTF, clang and
    bpftool (:func:`vegaslab.kernel.check`)."""
    from .network import Bottleneck, Host, Network

    doc, ccs, source = _scenario_doc(scenario, overrides)
    p = plan(doc, ccs)
    kernel.check()
    started = time.monotonic()
    margin = int(SETUP_MARGIN_S * 1e9)
    hosts = [Host(h, "sender") for h in p.senders] + [Host(h, "receiver") for h in p.receivers]
    bottleneck = Bottleneck(rate_bps=p.forward[0], buffer_pkts=p.forward[1],
                            reverse_rate_bps=p.reverse[0], reverse_buffer_pkts=p.reverse[1])
    changes = [(at + margin, x, y, d) for at, x, y, d in p.delay_changes]
    with KernelSession(p.kernel_algorithms, [f.cc for f in p.flows]) as session:
        with Network(hosts, bottleneck, p.pair_delays_ns, changes,
                     endpoint_sysctls=stack.endpoint_sysctls(), routes=p.routes) as net:
            with _aqt_path(net, p) as aqt:
                raw = run_flows(net, p.flows, t0_ns=net.start_time_ns() + margin, duration_s=p.duration_s,
                                sample_interval_s=sample_interval_s, delayed_ack=stack.delayed_ack,
                                preexec_fn=aqt.enter if aqt else None)
            if p.aqt is not None:  # how many of RoVegas' RTT samples carried router stamps
                raw["rovegas_counters"] = kernel.rovegas_counters()
            raw["kernel_parameters"] = session.parameters()
    return results_of(doc, ccs, source, p, raw, sample_interval_s, time.monotonic() - started, stack)


@contextmanager
def _aqt_path(net, p: Plan):
    """RoVegas needs AQT-enabled routers (:mod:`.aqt`): when a flow runs it, every flow's
    processes join the AQT cgroup and the bottleneck queues the plan names stamp queueing
    time (other algorithms ignore the option, which takes 12 bytes of each segment's payload).
    Otherwise nothing."""
    if p.aqt is None:
        yield None
        return
    from .aqt import AqtPath

    with AqtPath([hop for hop, stamps in zip(net.aqt_hops(), p.aqt) if stamps]) as aqt:
        yield aqt


def results_of(doc: dict, cc_of: dict[str, str], source: str, p: Plan, raw: dict, interval: float,
               wall: float, stack: Stack = Stack()) -> Results:
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
                "time_s": round(t, 6), "flow": f.name, "cwnd_pkts": float(r["snd_cwnd"]),
                "ssthresh_pkts": float(min(r["snd_ssthresh"], 2**31 - 1)),
                "rtt_s": r["rtt_us"] / 1e6 if r["rtt_us"] else None,
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
            "sent_pkts": last.get("data_segs_out"), "sent_bytes": last.get("bytes_sent"),
            "retransmitted_pkts": last.get("total_retrans"),
            "fast_retransmits": None, "timeouts": None, "slow_start_entries": None, "received_pkts": None,
            "received_bytes": sink["bytes"], "delivered_pkts": None, "delivered_bytes": sink["bytes"],
            "throughput_bps": sink["bytes"] * 8 / span, "goodput_bps": sink["bytes"] * 8 / span,
            "active_throughput_bps": sink["bytes"] * 8 / span,
            "completion_time_s": (done / 1e9 - f.start_s) if (f.size_bytes and done is not None) else None,
            "final_cwnd_pkts": float(last["snd_cwnd"]) if last else None,
            "mean_cwnd_pkts": float(np.mean(cwnds)) if cwnds else None,
            "final_ssthresh_pkts": min(last.get("snd_ssthresh", 0), 2**31 - 1) if last else None,
            "in_flight_pkts": None, "dropped_pkts": None,
        })
    queue_series, lengths = [], []
    for q in raw["queues"]:
        queue_series.append({"time_s": round(q["t"] / 1e9, 6), "queue": p.bottleneck_name, "length_pkts": q["forward"]})
        lengths.append(q["forward"])
    queues = [{
        "queue": p.bottleneck_name, "kind": "droptail", "limit_pkts": p.forward[1],
        "arrived_pkts": None, "dropped_pkts": None, "departed_pkts": None, "backlog_pkts": None, "loss_ratio": None,
        "mean_len_pkts": float(np.mean(lengths)) if lengths else None,
        "std_len_pkts": float(np.std(lengths)) if lengths else None,
        "max_len_pkts": int(max(lengths)) if lengths else None,
    }]
    meta = {
        "scenario": doc.get("id"), "source": source, "seed": doc.get("seed"), "version": package_version(),
        "duration_s": p.duration_s, "wall_time_s": wall, "events": 0,
        "testbed": {
            "kernel": platform.release(), "sample_interval_s": interval,
            "congestion_controls": sorted({f.cc for f in p.flows}),
            "kernel_parameters": raw.get("kernel_parameters"),
            "bottleneck": {"queue": p.bottleneck_name, "rate_bps": p.forward[0], "buffer_pkts": p.forward[1]},
            "stack": asdict(stack),
            "aqt_stamping": None if p.aqt is None else {"forward": p.aqt[0], "reverse": p.aqt[1]},
            "rovegas_counters": raw.get("rovegas_counters"),
            "routes": {host: asdict(r) for host, r in p.routes.items()},
            "sack_negotiated": {f.name: bool(by_flow[f.name][-1]["options"] & _TCPI_OPT_SACK) if by_flow.get(f.name)
                                else None for f in p.flows},
            "acks_per_data_segment": {f.name: raw["sink"].get(f.name, {}).get("acks_per_data_segment")
                                      for f in p.flows},
        },
    }
    return Results.from_dict({"meta": meta, "flows": flows, "queues": queues, "links": [],
                              "series": {"flows": series, "queues": queue_series}})

