"""TCP flows on a testbed :class:`~vegaslab.testbed.network.Network`, sampled every 10 ms.

One source process in the sender namespace opens every flow at its start time (bound to its
host's address, ``TCP_CONGESTION`` set on the socket before connecting and read back once
connected: the congestion control the kernel actually gave it), sends until its stop
time (or its file size), and samples ``TCP_INFO`` of every open socket each sample interval:
cwnd, ssthresh, smoothed RTT, retransmissions, bytes acknowledged. One sink process in the
receiver namespace counts the bytes of each flow. Both run on ``CLOCK_MONOTONIC``, which the
namespaces share, from one start time ``t0_ns`` the caller picks.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import asdict, dataclass

PORT_BASE = 5200


@dataclass(frozen=True)
class FlowSpec:
    """One TCP flow: hosts as the Network names them, the kernel congestion control's name."""
    name: str
    src: str
    dst: str
    cc: str
    start_s: float
    stop_s: float | None = None
    size_bytes: int | None = None  # None: bulk (FTP-like) until stop or the end


# struct tcp_info offsets (include/uapi/linux/tcp.h): u32 unless noted.
_TCP_INFO_FIELDS = {
    "rtt_us": 68, "snd_ssthresh": 76, "snd_cwnd": 80, "total_retrans": 100,
    "bytes_acked": 120,  # u64
    "data_segs_out": 156,
    "bytes_sent": 200,   # u64
}

SOURCE = textwrap.dedent("""
    import json, socket, struct, sys, threading, time
    flows = json.loads(sys.argv[1]); t0 = int(sys.argv[2]); end = int(sys.argv[3]); step = int(sys.argv[4])
    U32 = {"rtt_us": 68, "snd_ssthresh": 76, "snd_cwnd": 80, "total_retrans": 100, "data_segs_out": 156}
    U64 = {"bytes_acked": 120, "bytes_sent": 200}
    socks, errors, done, congestion = {}, [], {}, {}
    chunk = b"x" * 65536
    def wait(ns):
        while True:
            d = ns - time.monotonic_ns()
            if d <= 0: return
            time.sleep(min(d / 1e9, 0.05))
    def send(f, port):
        try:
            wait(t0 + int(f["start_s"] * 1e9))
            s = socket.socket()
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, f["cc"].encode())
            s.bind((f["src_ip"], 0)); s.connect((f["dst_ip"], port)); socks[f["name"]] = s
            congestion[f["name"]] = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\\0").decode()
            s.settimeout(0.05)  # a full send buffer must not keep us past the stop time
            stop = t0 + int(f["stop_s"] * 1e9) if f["stop_s"] is not None else end
            left = f["size_bytes"]
            while time.monotonic_ns() < min(stop, end) and (left is None or left > 0):
                try: n = s.send(chunk if left is None else chunk[:min(left, len(chunk))])
                except TimeoutError: continue
                if left is not None: left -= n
            if left == 0: done[f["name"]] = time.monotonic_ns()
            s.shutdown(socket.SHUT_WR)
        except Exception as e:
            errors.append(f"{f['name']}: {type(e).__name__}: {e}")
    threads = [threading.Thread(target=send, args=(f, p), daemon=True) for f, p in flows]
    for t in threads: t.start()
    samples = []
    tick = t0
    while tick <= end:
        wait(tick)
        now = time.monotonic_ns()
        for name, s in list(socks.items()):
            try: raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
            except OSError: continue
            row = {"t": now - t0, "flow": name}
            row.update({k: struct.unpack_from("I", raw, o)[0] for k, o in U32.items()})
            row.update({k: struct.unpack_from("Q", raw, o)[0] for k, o in U64.items()})
            row["options"] = raw[5]  # tcpi_options: TCPI_OPT_SACK = 2 when SACK was negotiated
            samples.append(row)
        tick += step
    for t in threads: t.join(timeout=2)
    # Abort what is still open (RST): a socket left to drain its send buffer into a network that
    # is about to be removed would linger for minutes, holding its congestion control, which
    # then cannot be unregistered.
    for s in socks.values():
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); s.close()
        except OSError: pass
    print(json.dumps({"samples": samples, "errors": errors, "done": {k: v - t0 for k, v in done.items()},
                      "congestion": congestion}))
""")

SINK = textwrap.dedent("""
    import json, selectors, socket, struct, sys, time
    ports = json.loads(sys.argv[1]); end = int(sys.argv[2]); quickack = sys.argv[3] == "1"
    sel = selectors.DefaultSelector(); got = {}; first = {}; last = {}; acks = {}
    def count_acks(c, name):
        # tcp_info: segs_out (u32 at 136) = the ACKs this end sent; data_segs_in (u32 at 152).
        try: raw = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
        except OSError: return
        a = acks.setdefault(name, [0, 0])
        a[0] += struct.unpack_from("I", raw, 136)[0]; a[1] += struct.unpack_from("I", raw, 152)[0]
    for name, ip, port in ports:
        l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.bind((ip, port)); l.listen(4); l.setblocking(False); sel.register(l, selectors.EVENT_READ, ("listen", name))
        got[name] = 0
    print("ready", flush=True)
    while time.monotonic_ns() < end + 2_000_000_000:
        for key, _ in sel.select(timeout=0.05):
            kind, name = key.data
            if kind == "listen":
                c, _ = key.fileobj.accept(); c.setblocking(False); sel.register(c, selectors.EVENT_READ, ("data", name))
                if quickack: c.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
                continue
            try: b = key.fileobj.recv(1 << 18)
            except BlockingIOError: continue
            except OSError: b = b""  # reset: the source aborts what is open at the end
            if not b:
                count_acks(key.fileobj, name); sel.unregister(key.fileobj); key.fileobj.close(); continue
            # The kernel leaves quick-ACK mode on its own; re-armed after every read, it stays.
            if quickack: key.fileobj.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
            now = time.monotonic_ns(); first.setdefault(name, now); last[name] = now; got[name] += len(b)
    for key in list(sel.get_map().values()):
        if key.data[0] == "data": count_acks(key.fileobj, key.data[1])
    print(json.dumps({"bytes": got, "first": first, "last": last, "acks": acks}))
""")


def run_flows(net, flows: list[FlowSpec], *, t0_ns: int, duration_s: float,
              sample_interval_s: float = 0.01, delayed_ack: bool = True, preexec_fn=None) -> dict:
    """Run ``flows`` on ``net`` from ``t0_ns`` (``CLOCK_MONOTONIC``) for ``duration_s``; returns
    the raw samples: ``tcp_info`` rows, ``queues`` rows, per-flow sink bytes and times, the
    ACKs the sink sent per data segment it received, and each flow's congestion control as its
    socket reports it (``congestion``). ``delayed_ack=False``: the sink re-arms
    ``TCP_QUICKACK`` after every read, so every segment is ACKed at once (as the simulator's
    sink does). ``preexec_fn`` runs in the sink and source processes before they start (e.g.
    :meth:`~vegaslab.testbed.aqt.AqtPath.enter`, which puts them in the AQT cgroup).

    One source process runs in each namespace that has a flow's sender and one sink in each
    that has a flow's receiver (``net.namespace_of``): two with one-way traffic, four with
    two-way."""
    end = t0_ns + int(duration_s * 1e9)
    step = int(sample_interval_s * 1e9)
    sources: dict[str, list] = {}
    sink_ports: dict[str, list] = {}
    for i, f in enumerate(flows):
        sink_ports.setdefault(net.namespace_of(f.dst), []).append((f.name, net.ip(f.dst), PORT_BASE + i))
        sources.setdefault(net.namespace_of(f.src), []).append(
            ({**asdict(f), "src_ip": net.ip(f.src), "dst_ip": net.ip(f.dst)}, PORT_BASE + i))
    started: list[subprocess.Popen] = []
    try:
        sinks = []
        for ns, ports in sink_ports.items():
            sink = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", SINK,
                                     json.dumps(ports), str(end), "0" if delayed_ack else "1"],
                                    stdout=subprocess.PIPE, text=True, preexec_fn=preexec_fn)
            started.append(sink)
            sinks.append(sink)
            if sink.stdout.readline().strip() != "ready":
                raise RuntimeError("the testbed's sink did not start")
        srcs = []
        for ns, spec in sources.items():
            source = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", SOURCE,
                                       json.dumps(spec), str(t0_ns), str(end), str(step)],
                                      stdout=subprocess.PIPE, text=True, preexec_fn=preexec_fn)
            started.append(source)
            srcs.append(source)
        queues: list[dict] = []
        stop = threading.Event()

        def sample_queues():
            tick = t0_ns
            while tick <= end and not stop.is_set():
                ahead = (tick - time.monotonic_ns()) / 1e9
                if ahead > 0:
                    time.sleep(ahead)
                forward, reverse = net.queue_packets()
                queues.append({"t": time.monotonic_ns() - t0_ns, "forward": forward, "reverse": reverse})
                tick += step

        sampler = threading.Thread(target=sample_queues, daemon=True)
        sampler.start()
        outs = [source.communicate(timeout=duration_s + 60)[0] for source in srcs]
        stop.set()
        sampler.join(timeout=5)
        sink_outs = [sink.communicate(timeout=30)[0] for sink in sinks]
    finally:
        for p in started:
            if p.poll() is None:
                p.kill()
                p.wait()
    samples, errors, done, congestion = [], [], {}, {}
    for out in outs:
        src = json.loads(out)
        samples += src["samples"]
        errors += src["errors"]
        done.update(src["done"])
        congestion.update(src["congestion"])
    if errors:
        raise RuntimeError("testbed flows failed: " + "; ".join(errors))
    samples.sort(key=lambda r: r["t"])
    sink = {}
    for out in sink_outs:
        snk = json.loads(out)
        sink.update({k: {"bytes": snk["bytes"].get(k, 0), "first": snk["first"].get(k), "last": snk["last"].get(k),
                         "acks_per_data_segment": (snk["acks"][k][0] / snk["acks"][k][1]
                                                   if snk["acks"].get(k, [0, 0])[1] else None)}
                     for k in snk["bytes"]})
    return {"tcp_info": samples, "done": done, "queues": queues, "sink": sink, "t0_ns": t0_ns,
            "congestion": congestion}
