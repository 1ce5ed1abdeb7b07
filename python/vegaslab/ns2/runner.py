"""Run a scenario through ns-2.35 and return results-format metrics.

See :func:`run_scenario` (a scenario dict or TOML path, normalised by the core first) and
:func:`run_normalized` (an already normalised scenario).  The OTcl script comes from
:mod:`vegaslab.ns2.translate` (written by :mod:`vegaslab.ns2.script`); this module runs ``ns``
in a temporary directory, reads the ``VLAB`` lines it prints and (with ``trace=True``) the
drop/receive trace, and computes the metrics of docs/results-format.md.
"""
from __future__ import annotations

import pathlib
import shutil
import subprocess
import tempfile
import time

from .translate import build_model, build_script, normalize, ns2_seed

__all__ = ["run_scenario", "run_normalized", "ns_available", "NS2Error"]

NS_VERSION = "2.35"


class NS2Error(RuntimeError):
    """ns exited with an error or printed no results."""


def ns_available() -> bool:
    """True when the ``ns`` binary is on PATH."""
    return shutil.which("ns") is not None


def _parse_trace(path: pathlib.Path, model) -> tuple[dict, dict, dict]:
    """Per-flow received (pkts, bytes, syn_pkts, in-order point), dropped data and dropped ACKs.

    The in-order point is the number of consecutive seqnos from 0 that reached the sink
    (the sink's cumulative ACK + 1).

    Trace line: ``ev time from to type size flags fid src dst seqno uid``.
    """
    dst_of = {f.index: f.dst for f in model.flows}
    recv = {i: [0, 0, 0, 0] for i in dst_of}
    ooo = {i: set() for i in dst_of}
    drops = {i: 0 for i in dst_of}
    ack_drops = {i: 0 for i in dst_of}
    with open(path) as fh:
        for line in fh:
            p = line.split()
            if len(p) < 12:
                continue
            ev, ptype = p[0], p[4]
            fid = int(p[7])
            if fid not in recv:
                continue
            if ev == "r":
                if ptype == "tcp" and int(p[3]) == dst_of[fid]:
                    r = recv[fid]
                    size = int(p[5])
                    r[0] += 1
                    r[1] += size
                    seq = int(p[10])
                    if seq == 0 and model.flows[fid].sends_syn:
                        r[2] += 1
                    if seq == r[3]:
                        r[3] += 1
                        pend = ooo[fid]
                        while r[3] in pend:
                            pend.discard(r[3])
                            r[3] += 1
                    elif seq > r[3]:
                        ooo[fid].add(seq)
            elif ev == "d":
                if ptype == "tcp":
                    drops[fid] += 1
                elif ptype == "ack":
                    ack_drops[fid] += 1
    return recv, drops, ack_drops


def run_scenario(scenario, *, overrides=(), seed=None, workdir=None, keep_files=False,
                 trace=True, timeout=None, cwnd=False, trace_all=False) -> dict:
    """Run ``scenario`` (dict, or TOML path) in ns-2.35 and return metrics.

    The core normalises the scenario first (``vegaslab.normalize``: its units, defaults,
    topology builders and validation, with ``overrides`` and ``seed`` applied as for a
    vegaslab run); see :func:`run_normalized` for the rest.

    ``overrides``: ``"dotted.path[0].x=value"`` strings (docs/scenario-format.md).
    ``seed``: replaces ``run.seed``; it seeds ns-2's default RNG (used by RED) through
    :func:`vegaslab.ns2.rng.ns2_seed`, and the core's draws of the senders' tick phases
    that ns-2 is given (``tcp.tick_phase = "seeded"``, the default).
    """
    doc = normalize(scenario, overrides=overrides, seed=seed)
    return run_normalized(doc, workdir=workdir, keep_files=keep_files, trace=trace,
                          timeout=timeout, cwnd=cwnd, trace_all=trace_all)


def run_normalized(doc: dict, *, workdir=None, keep_files=False, trace=True,
                   timeout=None, cwnd=False, trace_all=False) -> dict:
    """Run a normalised scenario (the dict of ``vegaslab.normalize``) in ns-2.35.

    ``workdir``: where the script and trace go (default: a fresh temporary directory, deleted
    afterwards unless ``keep_files``).  ``trace=False`` skips traces and queue monitors and
    reports only what the senders' variables give at the end, plus wall time. ``cwnd=True``
    also traces every sender's ``cwnd_`` and adds ``mean_cwnd_pkts`` to each flow (:func:`mean_cwnd`).
    ``trace_all=True``: ns-2 also writes every link's ``+ - r d`` lines (``$ns trace-all``) to
    ``vl_all.tr`` in the working directory (give ``workdir`` or ``keep_files`` to read it).

    Returns ``{"meta": {...}, "flows": [...], "queues": [...], "links": [...]}``.  Flow dicts
    use the results-format keys; ns-2 specific extras: ``syn_pkts`` (the 40-byte SYN of
    Reno/NewReno, counted in ``sent_pkts`` and ``received_pkts``), ``ack_drops``,
    ``sink_delivered_pkts`` and ``sink_delivered_bytes`` (the sink's in-order point from the
    trace, which is ahead of the sender's ``ack_`` by the ACKs still in flight at the end), ``ns2_ack`` and ``ns2_nrexmit``
    (raw ``ack_`` / ``nrexmit_``; ns-2's Vegas also counts its fine-grained dup-ACK
    retransmissions in ``nrexmit_``, so for Vegas ``timeouts`` over-counts).
    ``meta["normalized"]`` is the normalised scenario that ran (provenance);
    ``meta["tick_phases"]`` each flow's tick-clock phase in seconds (``boot_time_``), set or
    drawn, exactly as vegaslab runs it.

    ``delivered_pkts`` is the sender's final cumulative ACK (``ack_ + 1``, minus the SYN of
    Reno/NewReno), so ``goodput_bps`` reproduces the usual ns-2 script measurement.
    ``acked_pkts`` is the same number under the core's name for it (the core's
    ``delivered_pkts`` is the sink's point, ns-2's ``sink_delivered_pkts``): ``ack_`` is -1
    before any ACK (``TcpAgent::reset``), so a flow with nothing acknowledged reports 0.
    """
    model = build_model(doc)
    ns = shutil.which("ns")
    if ns is None:
        raise NS2Error("ns-2 binary 'ns' not found on PATH (scripts/install-ns2.sh installs it)")

    own_dir = workdir is None
    wdir = pathlib.Path(tempfile.mkdtemp(prefix="vegaslab-ns2-") if own_dir else workdir)
    wdir.mkdir(parents=True, exist_ok=True)
    script_path = wdir / "scenario.tcl"
    trace_path = wdir / "vl.tr"
    script = build_script(model, trace=trace, trace_file=trace_path.name, cwnd_trace=cwnd,
                          trace_all="vl_all.tr" if trace_all else None)
    cwnd_paths = [wdir / f"vl_cwnd_{f.index}.tr" for f in model.flows] if cwnd else []
    try:
        script_path.write_text(script)
        t0 = time.perf_counter()
        proc = subprocess.run([ns, script_path.name], cwd=wdir, capture_output=True, text=True,
                              timeout=timeout)
        wall = time.perf_counter() - t0
        out = proc.stdout.splitlines()
        vl = [ln.split() for ln in out if ln.startswith("VLAB ")]
        if proc.returncode != 0 or not any(p[1] == "FLOW" for p in vl):
            raise NS2Error(f"ns failed (exit {proc.returncode}) in {wdir}:\n"
                           f"{proc.stderr[-3000:]}\n{proc.stdout[-2000:]}")
        done, fvars, qvars = {}, {}, {}
        for p in vl:
            if p[1] == "DONE":
                done.setdefault(int(p[2]), (float(p[3]), int(p[4]), int(p[5])))
            elif p[1] == "FLOW":
                fvars[int(p[2])] = p[3:]
            elif p[1] == "QUEUE":
                qvars[int(p[2])] = p[3:]
        if trace:
            recv, drops, ack_drops = _parse_trace(trace_path, model)
        result = _assemble(model, fvars, done, qvars, recv if trace else None,
                           drops if trace else None, ack_drops if trace else None)
        for f, d, path in zip(model.flows, result["flows"], cwnd_paths):
            d["mean_cwnd_pkts"] = mean_cwnd(path, f.start, d["end_s"])
        result["meta"] = {"scenario": model.name, "simulator": "ns-2", "ns_version": NS_VERSION,
                          "seed": model.seed, "ns2_seed": ns2_seed(model.seed),
                          "tick_phases": [f.tick_phase for f in model.flows],
                          "duration_s": model.duration, "wall_time_s": wall,
                          "trace": trace, "script": script,
                          "workdir": str(wdir) if keep_files else None,
                          "normalized": model.normalized}
        return result
    finally:
        if not keep_files:
            if own_dir:
                shutil.rmtree(wdir, ignore_errors=True)
            else:
                for p in (script_path, trace_path, *cwnd_paths):
                    p.unlink(missing_ok=True)


def mean_cwnd(path: pathlib.Path, start: float, end: float) -> float | None:
    """The time-weighted mean of a sender's ``cwnd_`` over [start, end] from its ns-2
    traced-variable file (``time saddr sport daddr dport cwnd_ value`` per change), the
    core's ``mean_cwnd_pkts``: the window is taken as constant between changes, and before the
    first change as the first value traced (ns-2 traces the initial window when the agent
    resets at its start). The file's precision (10 us, 0.001 packet) bounds the agreement
    with the core's exact mean. None when nothing was traced or the interval is empty."""
    changes = []
    with open(path) as fh:
        for line in fh:
            p = line.split()
            if len(p) >= 7 and p[5] == "cwnd_":
                changes.append((float(p[0]), float(p[6])))
    if not changes or end <= start:
        return None
    area, t, value = 0.0, start, changes[0][1]
    for when, v in changes:
        if when >= end:
            break
        if when > t:
            area += value * (when - t)
            t = when
        value = v
    area += value * (end - t)
    return area / (end - start)


def _assemble(model, fvars, done, qvars, recv, drops, ack_drops) -> dict:
    T = model.duration
    flows = []
    for f in model.flows:
        ack, ndp, nrx, nrexmit, ndb, cwnd = fvars[f.index]
        ack, ndp, nrx, nrexmit, ndb = int(ack), int(ndp), int(nrx), int(nrexmit), int(ndb)
        syn = 1 if (f.sends_syn and ndp > 0) else 0
        # ack_ is the highest cumulative ACK seqno; Reno/NewReno number the SYN 0.
        delivered = max(0, ack + 1 - syn)
        delivered_bytes = delivered * f.packet_size
        if f.file_size is not None:
            delivered_bytes = min(delivered_bytes, f.file_size)
        ct = None
        if f.index in done:
            # ns-2's Vegas keeps firing (and counting) its idle retransmit timer after the
            # transfer; report the counters as they were at completion.
            ct, _, nrexmit = done[f.index]
        completion = None if ct is None else ct - f.start
        end = ct if ct is not None else (T if f.stop is None else min(f.stop, T))
        d = {"flow": f.name, "cc": f.cc, "from": f.src_name, "to": f.dst_name,
             "start_s": f.start, "end_s": end,
             "sent_pkts": ndp, "sent_bytes": ndb,
             "retransmitted_pkts": nrx, "timeouts": nrexmit,
             "delivered_pkts": delivered, "delivered_bytes": delivered_bytes,
             "acked_pkts": delivered,
             "goodput_bps": delivered_bytes * 8 / T,
             "completion_time_s": completion, "final_cwnd_pkts": float(cwnd),
             "syn_pkts": syn, "ns2_ack": ack, "ns2_nrexmit": nrexmit}
        if recv is not None:
            rp, rb, _, inorder = recv[f.index]
            d.update({"received_pkts": rp, "received_bytes": rb,
                      "throughput_bps": rb * 8 / T,
                      "active_throughput_bps": rb * 8 / (end - f.start) if end > f.start else 0.0,
                      "dropped_pkts": drops[f.index],
                      "in_flight_pkts": ndp - rp - drops[f.index],
                      "ack_drops": ack_drops[f.index],
                      "sink_delivered_pkts": max(0, inorder - syn)})
            sink_bytes = d["sink_delivered_pkts"] * f.packet_size
            d["sink_delivered_bytes"] = sink_bytes if f.file_size is None else min(sink_bytes, f.file_size)
        flows.append(d)
    queues, links = [], []
    for k, ld in enumerate(model.links):
        if k not in qvars:
            continue
        arr, drp, dep, bdep, s, lastx, lasty = qvars[k]
        arr, drp, dep, bdep = int(arr), int(drp), int(dep), int(bdep)
        integral = float(s) + float(lasty) * max(0.0, T - float(lastx))
        queues.append({"queue": ld.name, "kind": ld.kind, "limit_pkts": ld.limit,
                       "arrived_pkts": arr, "dropped_pkts": drp, "departed_pkts": dep,
                       # ns-2's queue monitor counts a departure when the packet leaves the
                       # queue for the link (its transmission starts), as vegaslab does.
                       "backlog_pkts": arr - drp - dep,
                       "loss_ratio": drp / arr if arr else 0.0, "mean_len_pkts": integral / T})
        bsent = _unwrap32(bdep, ld.bandwidth * T / 8)
        links.append({"link": ld.name, "bandwidth_bps": ld.bandwidth, "sent_bytes": bsent,
                      "utilisation_ratio": bsent * 8 / (ld.bandwidth * T)})
    return {"flows": flows, "queues": queues, "links": links}


def _unwrap32(value: int, upper_bound: float) -> int:
    """Undo the 32-bit wrap of ns-2's QueueMonitor byte counters (``int`` in C++).

    The counter is exact modulo 2**32; the link capacity bounds the true value.  When the
    capacity allows more than one candidate, the largest one not above it is taken (a link
    sending over 4.29 GB in one run is assumed to be busy).
    """
    v = value % (1 << 32)
    while v + (1 << 32) <= upper_bound:
        v += 1 << 32
    return v
