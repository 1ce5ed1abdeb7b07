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
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..core import package_version
from ..results import Results
from ..scenario import scenario_source
from .. import kernel
from . import envelope as envelope_check
from .bpfobject import preflight
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


def checked_plan(scenario: str | os.PathLike, *, overrides=()) -> tuple[Plan, dict, dict[str, str], str]:
    """The testbed plan of ``scenario`` (:mod:`.plan`) once everything the testbed can check
    before building anything holds (no privileges needed): the scenario's BPF objects are the
    ones it was read with, each declares one struct_ops map and runs with this kernel's
    ``CONFIG_HZ`` (:func:`.bpfobject.preflight`). Also the normalised scenario, each flow's
    ``cc`` name and the source."""
    doc, ccs, source = _scenario_doc(scenario, overrides)
    # The objects' paths are read as the core read them: against the file the core was given.
    p = plan(doc, ccs, scenario_source(scenario)[1])
    preflight(list(p.bpf_objects.values()))
    return p, doc, ccs, source


def run(scenario: str | os.PathLike, *, overrides=(), sample_interval_s: float = SAMPLE_INTERVAL_S,
        stack: Stack = Stack(), capture: bool = True, capture_dir: str | os.PathLike | None = None,
        envelope: str | os.PathLike | None = None) -> Results:
    """Build the scenario's network from namespaces, run its flows with the kernel's congestion
    controls (vegaslab's as BPF, registered for the run and unregistered after) and the kernel
    TCP behaviours ``stack`` switches, and return the results. Needs root, BTF, clang and
    bpftool (:func:`vegaslab.kernel.check`).

    ``capture``: write a pcap of the bottleneck's departures, headers only (:mod:`.capture`),
    into ``capture_dir`` (an existing directory, e.g. the run's output directory) or a private
    temporary one; ``Results.trace_path`` is the file and ``meta["trace"]`` its record.
    ``envelope``: the operating envelope file to check the bottleneck's rate against
    (:mod:`.envelope`; default ``out/testbed-envelope.json`` of the repository); beyond it the
    run warns and ``meta["testbed"]["envelope"]`` says so."""
    from .network import Bottleneck, Host

    p, doc, ccs, source = checked_plan(scenario, overrides=overrides)
    kernel.check()
    if capture:
        from .capture import check as capture_check

        capture_check()
    rates = [p.forward[0]] + ([p.reverse[0]] if p.two_way else [])
    within = envelope_check.check_rates(rates, envelope_check.DEFAULT_PATH if envelope is None else Path(envelope))
    started = time.monotonic()
    margin = int(SETUP_MARGIN_S * 1e9)
    hosts = [Host(h, "sender") for h in p.senders] + [Host(h, "receiver") for h in p.receivers]
    bottleneck = Bottleneck(rate_bps=p.forward[0], buffer_pkts=p.forward[1],
                            reverse_rate_bps=p.reverse[0], reverse_buffer_pkts=p.reverse[1])
    changes = [(at + margin, x, y, d) for at, x, y, d in p.delay_changes]
    own_dir = None
    if capture and capture_dir is None:
        own_dir = capture_dir = tempfile.mkdtemp(prefix="vegaslab-capture-")
    try:
        raw, cap = _run_in_kernel(p, hosts, bottleneck, changes, margin, stack, sample_interval_s,
                                  capture_dir if capture else None)
    except BaseException:
        if own_dir is not None:
            shutil.rmtree(own_dir, ignore_errors=True)
        raise
    raw["envelope"] = within
    res = results_of(doc, ccs, source, p, raw, sample_interval_s, time.monotonic() - started, stack)
    if cap is not None:
        res._keep_trace(cap.path, owned_dir=own_dir)
    return res


def _run_in_kernel(p: Plan, hosts, bottleneck, changes, margin: int, stack: Stack, sample_interval_s: float,
                   capture_dir) -> tuple[dict, "object | None"]:
    """The run itself: kernel session, network, AQT path and capture around the flows; the raw
    samples and the capture (None without one)."""
    from .network import Network

    with KernelSession(p.kernel_algorithms, [f.cc for f in p.flows], list(p.bpf_objects.values())) as session:
        with Network(hosts, bottleneck, p.pair_delays_ns, changes,
                     endpoint_sysctls=stack.endpoint_sysctls(), routes=p.routes) as net:
            with _aqt_path(net, p) as aqt, _capture(net, p, capture_dir) as cap:
                t0 = net.start_time_ns() + margin
                if cap is not None:
                    cap.t0(t0)
                raw = run_flows(net, p.flows, t0_ns=t0, duration_s=p.duration_s,
                                sample_interval_s=sample_interval_s, delayed_ack=stack.delayed_ack,
                                preexec_fn=aqt.enter if aqt else None)
            if p.aqt is not None:  # how many of RoVegas' RTT samples carried router stamps
                raw["rovegas_counters"] = kernel.rovegas_counters()
            raw["kernel_parameters"] = session.parameters()
    raw["capture"] = cap.record if cap is not None else None
    return raw, cap


@contextmanager
def _capture(net, p: Plan, directory):
    """The bottleneck's capture (:mod:`.capture`) into ``directory``: its forward direction,
    and the reverse one too when flows cross it both ways; nothing when ``directory`` is None."""
    if directory is None:
        yield None
        return
    from .capture import Capture

    egress = net.egress()
    directions = ["forward", "reverse"] if p.two_way else ["forward"]
    names = {"forward": p.bottleneck_name, "reverse": p.reverse_name}
    with Capture(net.router_ns, {d: egress[d] for d in directions}, Path(directory),
                 queues={d: names[d] for d in directions}) as cap:
        yield cap


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
    queue_series, queues = [], []
    sides = [("forward", p.bottleneck_name, p.forward[1])]
    if p.two_way:
        sides.append(("reverse", p.reverse_name, p.reverse[1]))
    for direction, name, limit in sides:
        lengths = []
        for q in raw["queues"]:
            queue_series.append({"time_s": round(q["t"] / 1e9, 6), "queue": name, "length_pkts": q[direction]})
            lengths.append(q[direction])
        queues.append({
            "queue": name, "kind": "droptail", "limit_pkts": limit,
            "arrived_pkts": None, "dropped_pkts": None, "departed_pkts": None, "backlog_pkts": None,
            "loss_ratio": None,
            "mean_len_pkts": float(np.mean(lengths)) if lengths else None,
            "std_len_pkts": float(np.std(lengths)) if lengths else None,
            "max_len_pkts": int(max(lengths)) if lengths else None,
        })
    meta = {
        "scenario": doc.get("id"), "source": source, "seed": doc.get("seed"), "version": package_version(),
        "duration_s": p.duration_s, "wall_time_s": wall, "events": 0,
        "testbed": {
            "kernel": platform.release(), "sample_interval_s": interval,
            "congestion_controls": sorted({f.cc for f in p.flows}),
            "kernel_parameters": raw.get("kernel_parameters"),
            "bottleneck": {"queue": p.bottleneck_name, "rate_bps": p.forward[0], "buffer_pkts": p.forward[1],
                           "reverse": {"queue": p.reverse_name, "rate_bps": p.reverse[0],
                                       "buffer_pkts": p.reverse[1]}},
            "two_way": p.two_way,
            "directions": {f.name: p.directions.get(f.name, "forward") for f in p.flows},
            "envelope": raw.get("envelope"),
            "stack": asdict(stack),
            "aqt_stamping": None if p.aqt is None else {"forward": p.aqt[0], "reverse": p.aqt[1]},
            "rovegas_counters": raw.get("rovegas_counters"),
            "routes": {host: asdict(r) for host, r in p.routes.items()},
            "sack_negotiated": {f.name: bool(by_flow[f.name][-1]["options"] & _TCPI_OPT_SACK) if by_flow.get(f.name)
                                else None for f in p.flows},
            "acks_per_data_segment": {f.name: raw["sink"].get(f.name, {}).get("acks_per_data_segment")
                                      for f in p.flows},
            "socket_congestion_controls": {f.name: raw.get("congestion", {}).get(f.name) for f in p.flows},
        },
    }
    if raw.get("capture") is not None:
        meta["trace"] = raw["capture"]
    return Results.from_dict({"meta": meta, "flows": flows, "queues": queues, "links": [],
                              "series": {"flows": series, "queues": queue_series}})

