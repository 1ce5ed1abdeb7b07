"""The testbed's network layer: the TUN delay line holds each host pair's packets
for its delay and never less; the htb + pfifo bottleneck limits TCP to its rate, charges IP
bytes and keeps less than a packet of ceil credit, and its queue is observable; delay changes
apply from their time on; and nothing is left behind, whether the owner exits normally, on a
signal or is SIGKILLed.

These check vegaslab's configuration and the order of events, never how promptly this host ran
something: where a number of milliseconds is compared, its bound is half the distance to the
nearest wrong answer (a delay applied twice, a change applied at release instead of arrival),
so a busy machine cannot cross it. How accurate the testbed is on this host (the delay line's
jitter, the rate htb drains a queue at, the gaps between departures, when a change is seen to
take effect) is measured by the tests marked ``measurement`` (tests/accuracy.py), which
``make testbed-accuracy`` runs and ``make test`` skips.

These need root, ip, tc, ethtool, ping and a C compiler (the departures' measurement also
tshark). Elsewhere they skip with the reason; ``make test`` sets VEGASLAB_REQUIRE_BPF=1 (and
installs the tools), so there a missing piece is a failure. The whole file takes about 30 s.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from vegaslab.errors import VegaslabError
from vegaslab.testbed import Bottleneck, Host, Network, TestbedError
from vegaslab.testbed import network as tbnet
from accuracy import measurement, report
from kernel_requirements import skip_unless, unavailable

MS = 1_000_000  # ns


def _root() -> None:
    if os.geteuid() != 0:
        raise TestbedError("the namespace testbed needs root (it creates network namespaces)")


def _ping() -> None:
    if shutil.which("ping") is None:
        raise TestbedError("ping is not installed (package iputils-ping; scripts/install-bpf.sh installs it)")


REASON = unavailable(_root, tbnet.build_delayline, tbnet.check, _ping)
pytestmark = skip_unless(REASON)

HOSTS = [Host("s1", "sender"), Host("r1", "receiver")]


def _path(one_way_ms: float, rate_bps: float, buffer_pkts: int | None = None, **kw) -> Network:
    """One sender, one receiver, the same delay both ways, a 1-BDP buffer unless given."""
    if buffer_pkts is None:
        buffer_pkts = max(2, round(rate_bps * 2 * one_way_ms / 1000 / 8 / 1500))
    d = int(one_way_ms * MS)
    return Network(HOSTS, Bottleneck(rate_bps, buffer_pkts, rate_bps, buffer_pkts),
                   {("s1", "r1"): d, ("r1", "s1"): d}, **kw)


# ---- a bulk TCP transfer and ping, each in its namespace ----

RECEIVER = textwrap.dedent("""
    import json, socket, sys, time
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[1], 5001)); s.listen(1); print("ready", flush=True)
    skip = float(sys.argv[2])
    c, _ = s.accept(); first = None; n = 0; steady = 0; t = time.monotonic()
    while True:
        b = c.recv(1 << 16)
        t = time.monotonic()
        if not b: break
        if first is None: first = t
        n += len(b)
        if t >= first + skip: steady += len(b)
    print(json.dumps({"bytes": n, "span": t - first, "steady_bytes": steady,
                      "steady_span": t - first - skip}), flush=True)
""")

SENDER = textwrap.dedent("""
    import socket, sys, time
    dst, src, cc, seconds, pacing = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    if pacing:
        s.setsockopt(socket.SOL_SOCKET, 47, pacing)  # SO_MAX_PACING_RATE, bytes/s
    s.bind((src, 0)); s.connect((dst, 5001))
    chunk = b"x" * 65536; end = time.monotonic() + seconds
    while time.monotonic() < end:
        s.send(chunk)
    s.shutdown(socket.SHUT_WR); s.recv(1); s.close()
""")


def _python_in(net: Network, host: str, script: str, *args, ready: bool = False) -> subprocess.Popen:
    """``script`` run by this Python in ``host``'s namespace; with ``ready``, once it has said so
    (its first line of output)."""
    ns = {"s1": net.sender_ns, "r1": net.receiver_ns}[host]
    p = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", script, *map(str, args)],
                         stdout=subprocess.PIPE if ready else None, text=True)
    if ready:
        assert p.stdout.readline().strip() == "ready"
    return p


def _stop(*processes: subprocess.Popen) -> None:
    for p in processes:
        if p.poll() is None:
            p.kill()
        p.wait()


class Bulk:
    """A kernel-cubic bulk transfer ``src`` -> ``dst`` for ``seconds`` (its rate capped by the
    stack's own pacing when ``pacing_bps``); ``result()`` is the receiver's report, with the
    goodput after the first ``skip_s`` seconds (slow start) as ``steady_bytes``/``steady_span``."""

    def __init__(self, net: Network, seconds: float, pacing_bps: float = 0, skip_s: float = 0.0,
                 src: str = "s1", dst: str = "r1"):
        self.seconds = seconds
        self.receiver = _python_in(net, dst, RECEIVER, net.ip(dst), skip_s, ready=True)
        self.sender = _python_in(net, src, SENDER, net.ip(dst), net.ip(src), "cubic", seconds, int(pacing_bps / 8))

    def result(self) -> dict:
        # Hang guards only: the transfer ends by itself after `seconds`.
        assert self.sender.wait(timeout=self.seconds + 60) == 0
        out = json.loads(self.receiver.stdout.readline())
        self.receiver.wait(timeout=60)
        return out

    def kill(self):
        _stop(self.sender, self.receiver)


def _ping(net: Network, count: int = 200, interval: float = 0.01, to: str = "r1") -> str:
    cmd = ["ip", "netns", "exec", net.sender_ns, "ping", "-n", "-i", str(interval), "-c", str(count),
           "-I", net.ip("s1"), net.ip(to)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=count * interval + 60)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def _rtts(out: str) -> list[float]:
    """Each reply's RTT in ms, as ping prints it."""
    return [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]


def _rtt_summary(out: str) -> tuple[float, float, int]:
    """(mean, standard deviation, replies) from ping's summary; its mdev is the standard
    deviation computed at full precision (the per-reply lines are rounded to 0.1 ms)."""
    m = re.search(r"= [\d.]+/([\d.]+)/[\d.]+/([\d.]+) ms", out)
    n = re.search(r"(\d+) received", out)
    assert m and n, out
    return float(m.group(1)), float(m.group(2)), int(n.group(1))


def _nearest(value: float, right: float, wrong: list[float]) -> bool:
    """Whether ``value`` is closer to ``right`` than to any of the ``wrong`` answers."""
    return all(abs(value - right) < abs(value - w) for w in wrong)


class Sampler:
    """queue_packets() every 10 ms in a thread, as the results layer will call it."""

    def __init__(self, net: Network):
        self.net, self.samples, self._stop = net, [], threading.Event()
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            self.samples.append(self.net.queue_packets())
            time.sleep(0.01)

    def stop(self) -> list[tuple[int, int]]:
        self._stop.set()
        self._thread.join()
        return self.samples


# ---- (a) the delay line ----

def test_an_idle_40ms_path_delays_every_ping_by_40_ms_and_never_less():
    with _path(20, 50e6) as net:
        assert net.queue_packets() == (0, 0)
        rtts = _rtts(_ping(net))
    assert len(rtts) == 200
    # None early: the delay line never releases a packet before its time. A busy host can only
    # make a packet late, so the fastest ping says which delay the path has: 40 ms, not the 60
    # or 80 ms of a leg's delay applied twice (half-way to the nearest is the bound). How close
    # the typical ping comes to 40.0 ms is the testbed's accuracy (make testbed-accuracy).
    assert min(rtts) >= 40.0 and _nearest(min(rtts), 40, [60, 80]), f"RTT min {min(rtts)} ms"


def test_each_host_pair_gets_its_own_delay_in_each_direction():
    hosts = [Host("s1", "sender"), Host("r1", "receiver"), Host("r2", "receiver")]
    delays = {("s1", "r1"): 10 * MS, ("r1", "s1"): 5 * MS, ("s1", "r2"): 30 * MS, ("r2", "s1"): 20 * MS}
    with Network(hosts, Bottleneck(50e6, 100, 50e6, 100), delays) as net:
        assert net.ip("r1") != net.ip("r2") and net.ip("s1") not in (net.ip("r1"), net.ip("r2"))
        got = {r: _rtts(_ping(net, count=20, to=r)) for r in ("r1", "r2")}
    assert len(got["r1"]) == len(got["r2"]) == 20, got
    # None early, and the fastest ping of each pair nearer its own round trip than any other
    # pair's or direction's (15 ms: not 10 or 20, either leg taken both ways; 50 ms: not 40 or
    # 60, nor r1's 15).
    fastest = {r: min(v) for r, v in got.items()}
    assert fastest["r1"] >= 15.0 and fastest["r2"] >= 50.0, got
    assert _nearest(fastest["r1"], 15, [10, 20, 50]) and _nearest(fastest["r2"], 50, [15, 40, 60]), fastest


# ---- (b), (c) the bottleneck ----

def test_a_bulk_transfer_through_a_20mbps_bottleneck_is_held_to_its_rate():
    with _path(20, 20e6) as net:
        bulk = Bulk(net, 3.0, skip_s=1.0)
        try:
            got = bulk.result()
        finally:
            bulk.kill()
    steady = got["steady_bytes"] * 8 / got["steady_span"] / 1e6
    print(f"20 Mbit/s bottleneck, 40 ms, 1 BDP: goodput {steady:.2f} Mbit/s after the first second")
    # Held to the bottleneck's rate: without it the path carries hundreds of Mbit/s, with a rate
    # read in the wrong unit 8 or 1000 times more or less. The factor of 2 each way leaves room
    # for a receiver that a busy host runs late; the goodput itself is the testbed's accuracy
    # (make testbed-accuracy).
    assert 10 < steady < 40, f"goodput {steady:.2f} Mbit/s"


UDP_SINK = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((sys.argv[1], 5002))
    print("ready", flush=True)
    while True:
        s.recv(2048)
""")

UDP_SOURCE = textwrap.dedent("""
    import socket, sys, time
    dst, src, rate_pps, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((src, 0))
    payload = b"x" * 1472  # + 8 UDP + 20 IP = a 1500-byte IP packet
    start = time.monotonic(); sent = 0
    while (now := time.monotonic()) < start + seconds:
        # Catch up after any stall, so the queue refills rather than drains.
        while sent < (now - start) * rate_pps:
            s.sendto(payload, (dst, 5002)); sent += 1
        time.sleep(0.002)
""")


class Overload:
    """1500-byte UDP packets ``src`` -> ``dst`` at ``factor`` times the bottleneck's packet rate,
    catching up after any stall of the sender, so the bottleneck queue stays full."""

    def __init__(self, net: Network, rate_bps: float, factor: float, seconds: float):
        self.sink = _python_in(net, "r1", UDP_SINK, net.ip("r1"), ready=True)
        self.source = _python_in(net, "s1", UDP_SOURCE, net.ip("r1"), net.ip("s1"), factor * rate_bps / 8 / 1500, seconds)

    def wait(self):
        """Until the source has sent for its ``seconds`` (a hang guard only)."""
        self.source.wait(timeout=120)

    def stop(self):
        _stop(self.source, self.sink)


def _class_stats(net: Network) -> str:
    """``tc -s class show`` of the forward bottleneck (the router's egress to the receivers)."""
    return subprocess.run(["ip", "netns", "exec", net.router_ns, "tc", "-s", "class", "show", "dev",
                           net._rtr_rcv_if], capture_output=True, text=True, check=True).stdout


def _class_sent(net: Network) -> tuple[float, int, int, int]:
    """(time, bytes sent, packets sent, packets queued) of the forward bottleneck's htb class;
    the time is the middle of the ``tc`` call, whose own latency varies under load."""
    before = time.monotonic()
    out = _class_stats(net)
    after = time.monotonic()
    sent = re.search(r"Sent (\d+) bytes (\d+) pkt", out)
    backlog = re.search(r"backlog \S+ (\d+)p", out)
    assert sent and backlog, out
    return (before + after) / 2, int(sent.group(1)), int(sent.group(2)), int(backlog.group(1))


def test_the_bottleneck_charges_each_packet_its_ip_length():
    # The simulator's link rates count IP packets (1448 payload + 52 header = 1500 bytes);
    # htb would also count the 14-byte Ethernet header (1514) without its size table. Counted
    # by htb itself, so exact whatever the host's timing.
    with _path(20, 20e6, buffer_pkts=100) as net:
        load = Overload(net, 20e6, factor=2.0, seconds=0.5)
        try:
            load.wait()
            _, sent_bytes, sent_pkts, _ = _class_sent(net)
        finally:
            load.stop()
    assert sent_pkts > 100, sent_pkts
    assert sent_bytes == 1500 * sent_pkts, (sent_bytes, sent_pkts)


def test_the_bottleneck_class_has_the_rate_and_less_than_a_packet_of_ceil_credit():
    # What keeps two packets from leaving back to back after an idle spell or a late timer
    # (network.py's _shape): the ceil bucket holds less than one packet (cburst), at 1.25x the
    # rate; the rate bucket holds four packets of credit, so late ticks are repaid. How far
    # apart the departures are on this host is measured by make testbed-accuracy.
    with _path(20, 20e6, buffer_pkts=100) as net:
        out = _class_stats(net)
    m = re.search(r"rate (\S+) ceil (\S+) burst (\d+)b cburst (\d+)b", out)
    assert m, out
    rate, ceil, burst, cburst = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
    assert (rate, ceil) == ("20Mbit", "25Mbit"), out
    assert cburst < 1500 and burst >= 4 * 1500, out


def test_queue_packets_is_zero_when_idle_and_rises_in_the_direction_that_is_loaded():
    with _path(20, 20e6, buffer_pkts=50) as net:
        assert net.queue_packets() == (0, 0)
        backlog = {}
        for src, dst in (("s1", "r1"), ("r1", "s1")):
            bulk = Bulk(net, 1.5, src=src, dst=dst)
            sampler = Sampler(net)
            try:
                bulk.result()
            finally:
                samples = sampler.stop()
                bulk.kill()
            backlog[src] = (max(f for f, _ in samples), max(r for _, r in samples))
        # The transfers are over; what they left in flight drains (a hang guard, not a bound).
        deadline = time.monotonic() + 60
        while (idle := net.queue_packets()) != (0, 0) and time.monotonic() < deadline:
            time.sleep(0.01)
    print(f"queue maxima (forward, reverse): forward load {backlog['s1']}, reverse load {backlog['r1']}")
    assert idle == (0, 0)
    fwd_load, rev_load = backlog["s1"], backlog["r1"]
    assert fwd_load[0] > 10 and fwd_load[0] <= 50 and fwd_load[1] < fwd_load[0], backlog
    assert rev_load[1] > 10 and rev_load[1] <= 50 and rev_load[0] < rev_load[1], backlog


# ---- (d) delay changes ----
#
# Probes are numbered UDP datagrams from s1 to r1, sent by this process through sockets opened
# in the testbed's namespaces. Each send is bracketed by two readings of the clock (before and
# after sendto) and each arrival is stamped by r1's kernel (SO_TIMESTAMPNS), all on
# CLOCK_REALTIME. A busy host can delay the send after the first reading and the delay line's
# read of the packet, never the reverse; so "sent before" and "sent after" come from the
# brackets, and a packet's delay is compared only with bounds a late host cannot cross.

SO_RCVBUFFORCE = 33  # asm-generic/socket.h (Python's socket module names neither)
SO_TIMESTAMPNS = 35  # the cmsg carrying the stamp has this type too (SCM_TIMESTAMPNS)
CLONE_NEWNET = 0x40000000  # sched.h
PROBE_PORT = 5003


@dataclass(frozen=True)
class Probe:
    """One datagram: it left the sender between ``sent_from`` and ``sent_by`` (ns), and reached
    the receiver's kernel at ``arrived`` (ns, CLOCK_REALTIME)."""
    seq: int
    sent_from: int
    sent_by: int
    arrived: int

    @property
    def delay_ms(self) -> float:
        """The one-way delay from the start of the send: never less than the packet's own (the
        send may have happened as late as ``sent_by``), so a value under a delay proves the
        packet early."""
        return (self.arrived - self.sent_from) / MS


def _socket_in(ns: str) -> socket.socket:
    """A UDP socket in the network namespace ``ns``, opened by a thread that enters it (setns(2)
    moves only the calling thread; the socket stays in ``ns``)."""
    out: dict = {}

    def enter_and_open():
        try:
            fd = os.open(f"/run/netns/{ns}", os.O_RDONLY | os.O_CLOEXEC)
            try:
                if ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns into {ns}")
            finally:
                os.close(fd)
            out["socket"] = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        except OSError as e:
            out["error"] = e

    t = threading.Thread(target=enter_and_open)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["socket"]


def _receive(rx: socket.socket) -> tuple[bytes, int]:
    """One datagram and the kernel's CLOCK_REALTIME stamp of it (ns)."""
    data, ancillary, _, _ = rx.recvmsg(16, socket.CMSG_SPACE(16))
    stamps = [raw for level, kind, raw in ancillary if (level, kind) == (socket.SOL_SOCKET, SO_TIMESTAMPNS)]
    assert stamps, "the receiver's kernel gave no stamp"
    sec, nsec = struct.unpack("qq", stamps[0])
    return data, sec * 1_000_000_000 + nsec


def _await_arrival_stamps(rx: socket.socket, to_rx: socket.socket, address: tuple[str, int]) -> None:
    """Return once the kernel stamps datagrams when they arrive. The first socket that asks for
    stamps turns them on through a deferred work item of the kernel (net_enable_timestamp in
    net/core/dev.c), which a busy host runs late; until then a datagram is stamped when it is
    read. A datagram to ``rx`` read 50 ms after its send tells the two apart."""
    deadline = time.monotonic() + 60  # a hang guard
    while time.monotonic() < deadline:
        sent = time.time_ns()
        to_rx.sendto(b"stamps?", address)
        time.sleep(0.05)
        data, stamp = _receive(rx)
        assert data == b"stamps?", data
        if stamp - sent < 25 * MS:
            return
    raise AssertionError("the kernel did not start stamping arrivals within a minute")


@pytest.fixture(scope="module")
def arrival_stamps():
    """The kernel stamping arrivals for the whole module, turned on (and awaited) before any
    network is built, so that the wait never eats into a delay change's schedule."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
        rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        rx.bind(("127.0.0.1", 0))
        _await_arrival_stamps(rx, tx, rx.getsockname())
        yield


def _probe(net: Network, until_ns: int, interval_s: float = 0.002) -> list[Probe]:
    """Probes s1 -> r1 every ``interval_s`` until ``until_ns`` (CLOCK_REALTIME), in the order
    r1 received them; fails if any is lost."""
    address = (net.ip("r1"), PROBE_PORT)
    with _socket_in(net.receiver_ns) as rx, _socket_in(net.receiver_ns) as local, \
            _socket_in(net.sender_ns) as tx:
        rx.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 1 << 24)  # all of them queue until read
        rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        rx.bind(address)
        _await_arrival_stamps(rx, local, address)
        tx.bind((net.ip("s1"), 0))
        sends = []
        while (sent_from := time.time_ns()) < until_ns:
            tx.sendto(struct.pack("!I", len(sends)), address)
            sends.append((sent_from, time.time_ns()))
            time.sleep(interval_s)
        rx.settimeout(60)  # a hang guard: the last probe is due a path delay after its send
        probes = []
        try:
            while len(probes) < len(sends):
                data, arrived = _receive(rx)
                (seq,) = struct.unpack("!I", data)
                probes.append(Probe(seq, *sends[seq], arrived))
        except TimeoutError:
            pass
    assert len(probes) == len(sends), f"{len(sends) - len(probes)} of {len(sends)} probes were lost"
    return probes


def _realtime_minus_monotonic_ns() -> int:
    """CLOCK_REALTIME minus CLOCK_MONOTONIC, from the tightest of several paired readings (a
    reading interrupted by the scheduler is off by the interruption)."""
    pairs = []
    for _ in range(20):
        before, real, after = time.monotonic_ns(), time.time_ns(), time.monotonic_ns()
        pairs.append((after - before, real - (before + after) // 2))
    return min(pairs)[1]


def _realtime_of(net: Network, at_ns: int) -> int:
    """The CLOCK_REALTIME instant of ``at_ns`` on the delay line's schedule."""
    return net.start_time_ns() + at_ns + _realtime_minus_monotonic_ns()


def _delay_increase_probes(at_ns: int, interval_s: float) -> tuple[list[Probe], int]:
    """Probes across a change of s1 -> r1 from 50 to 150 ms at ``at_ns`` (r1 -> s1 stays 50 ms)
    until 0.3 s after it, and the change's CLOCK_REALTIME instant."""
    with _path(50, 50e6, delay_changes=[(at_ns, "s1", "r1", 150 * MS)]) as net:
        change = _realtime_of(net, at_ns)
        return _probe(net, change + 300 * MS, interval_s), change


def test_a_delay_increase_applies_to_packets_sent_after_its_time(arrival_stamps):
    probes, change = _delay_increase_probes(1500 * MS, interval_s=0.005)
    new = {p.seq: p.delay_ms >= 100 for p in probes}  # 50 or 150 ms: the bound is half-way
    # In send order, every probe with the old delay comes before every probe with the new one.
    in_send_order = [new[seq] for seq in sorted(new)]
    assert in_send_order == sorted(in_send_order) and 0 < sum(in_send_order) < len(probes), in_send_order
    # A probe whose send began at or after the change's time reached the delay line after it,
    # so it has the new delay however busy the host. One whose send ended 25 ms (half the old
    # delay) before the change has the old delay, unless the host held it for 25 ms before the
    # delay line read it. A change applied at release instead of arrival would give the new
    # delay to every packet sent in the old delay before the change, which this catches.
    before = [p for p in probes if p.sent_by < change - 25 * MS]
    after = [p for p in probes if p.sent_from >= change]
    assert before and after, "the probes did not span the change"
    assert not any(new[p.seq] for p in before), [round(p.delay_ms, 1) for p in before]
    assert all(new[p.seq] for p in after), [round(p.delay_ms, 1) for p in after]
    # None early: each has at least its delay.
    assert all(p.delay_ms >= (150 if new[p.seq] else 50) for p in probes), [(p.seq, p.delay_ms) for p in probes]


def test_a_delay_decrease_never_reorders_packets_of_a_pair(arrival_stamps):
    """After 100 -> 20 ms (one way), the packets sent in the next 80 ms are held until the last
    slow one leaves, then go in order: they arrive in sequence, none before its new delay."""
    at = 1500 * MS
    with _path(100, 50e6, delay_changes=[(at, "s1", "r1", 20 * MS)]) as net:
        change = _realtime_of(net, at)
        probes = _probe(net, change + 300 * MS)
    seqs = [p.seq for p in probes]
    arrivals = [p.arrived for p in probes]
    assert seqs == sorted(seqs) and arrivals == sorted(arrivals), "probes arrived out of order"
    # The change took effect: probes sent after the hold-back (the old 100 ms less the new 20)
    # and half an old delay more have the new delay (20 ms; the bound is half-way to 100).
    late = [p.delay_ms for p in probes if p.sent_from >= change + 130 * MS]
    assert late and all(d < 60 for d in late), late
    # None early: every probe takes at least the new delay, those sent half an old delay
    # before the change the old one. (The probes sent in the 80 ms after the change, about 40
    # of them, are the ones held back: without the hold-back they would arrive out of order.)
    assert all(p.delay_ms >= 20 for p in probes)
    assert all(p.delay_ms >= 100 for p in probes if p.sent_by < change - 50 * MS)


# ---- (e) clean and safe ----

def _leftovers(tag: str) -> list[str]:
    found = [f"namespace {ns}" for ns in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                                          text=True).stdout.split() if tag in ns]
    found += [f"link {ln.split(':')[1].strip()}" for ln in subprocess.run(["ip", "-o", "link"], capture_output=True,
                                                                            text=True).stdout.splitlines()
              if tag in ln]
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if f"--dev {tag}t" in cmd:
                found.append(f"process {proc.name}: {cmd}")
    if (tbnet.STATE_DIR / f"{tag}.json").exists():
        found.append("state file")
    return found


def test_leaving_the_with_block_removes_namespaces_links_and_the_delay_line():
    with _path(5, 10e6) as net:
        tag, pid = net.tag, net._proc.pid
        assert len(f"{tag}rr") <= 15
        assert _leftovers(tag)  # the check sees a live network
    assert _leftovers(tag) == []
    assert tbnet.process_start(pid) is None
    with pytest.raises(ZeroDivisionError):
        with _path(5, 10e6) as net:
            tag = net.tag
            1 / 0
    assert _leftovers(tag) == []


OWNER = textwrap.dedent("""
    import sys, time
    from vegaslab.testbed import Host, Bottleneck, Network
    net = Network([Host("s1", "sender"), Host("r1", "receiver")], Bottleneck(1e7, 10, 1e7, 10),
                  {("s1", "r1"): 5_000_000, ("r1", "s1"): 5_000_000})
    with net:
        print(net.tag, net._proc.pid, flush=True)
        time.sleep(60)
""")


def _owner() -> tuple[subprocess.Popen, str, int]:
    p = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True)
    tag, pid = p.stdout.readline().split()
    return p, tag, int(pid)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_owner_removes_its_network_before_it_exits(sig):
    p, tag, _ = _owner()
    assert _leftovers(tag)
    p.send_signal(sig)
    code = p.wait(timeout=60)  # a hang guard: the removal takes a second or two
    assert code != 0  # it still ends as the signal asked (SIGTERM: killed by it; SIGINT: KeyboardInterrupt)
    assert _leftovers(tag) == []


def _ended_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while tbnet.process_start(pid) is not None:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_delay_line_ends_when_its_owner_is_sigkilled():
    p, tag, delayline = _owner()
    try:
        assert tbnet.process_start(delayline) is not None
        p.kill()  # no handler runs: only the kernel can tell the delay line
        p.wait()
        # A hang guard, not a timing bound: without the parent-death signal it ran until the
        # next testbed start (how fast it ends is make testbed-accuracy's to measure).
        assert _ended_within(delayline, 60.0), _leftovers(tag)
    finally:
        tbnet.remove_stale()  # the namespaces stay until the next start; removed here
    assert _leftovers(tag) == []


def test_the_delay_line_exits_at_once_when_the_process_it_should_end_with_has_already_ended():
    gone = subprocess.Popen(["true"])
    gone.wait()
    p = subprocess.run([str(tbnet.DELAYLINE), "--dev", "lo", "--parent-pid", str(gone.pid)], capture_output=True,
                       text=True, timeout=10)
    assert p.returncode == 1
    assert f"the process that started it (pid {gone.pid}) has already ended" in p.stderr


def test_the_next_network_removes_what_a_sigkilled_owner_left_behind():
    p, tag, delayline = _owner()
    p.kill()
    p.wait()
    left = _leftovers(tag)
    assert any(x.startswith("namespace") for x in left), left
    with _path(5, 10e6):
        assert _leftovers(tag) == []
        assert tbnet.process_start(delayline) is None


# ---- input and the delay line's own limits ----

def test_bad_input_gets_a_testbed_error_naming_the_field():
    assert issubclass(TestbedError, VegaslabError)
    b = Bottleneck(1e7, 10, 1e7, 10)
    with pytest.raises(TestbedError, match=r"pair_delays_ns\[\('s1', 'x'\)\]: unknown host 'x'"):
        Network(HOSTS, b, {("s1", "x"): 1})
    with pytest.raises(TestbedError, match=r"delay_changes\[0\]: 's1' and 's2' are both senders"):
        Network(HOSTS + [Host("s2", "sender")], b, {}, [(0, "s1", "s2", 5)])
    with pytest.raises(TestbedError, match=r"bottleneck.buffer_pkts: must be an integer between 1 and 1000000"):
        Network(HOSTS, Bottleneck(1e7, 0, 1e7, 10), {})
    with pytest.raises(TestbedError, match=r"hosts\[1\].name: 's1' is given twice"):
        Network([HOSTS[0], Host("s1", "receiver")], b, {})
    with pytest.raises(TestbedError, match=r"tag: must be 3 to 13"):
        Network(HOSTS, b, {}, tag="x" * 20)


def test_the_delay_line_exits_1_with_a_clear_error_when_its_packet_pool_overflows():
    ns, tun = f"vlp{os.getpid() % 100000}", f"vlp{os.getpid() % 100000}t"
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    try:
        for cmd in (["ip", "netns", "add", ns], ["ip", "-n", ns, "tuntap", "add", "mode", "tun", "name", tun],
                    ["ip", "-n", ns, "addr", "add", "10.251.9.1/24", "dev", tun],
                    ["ip", "-n", ns, "link", "set", tun, "up"]):
            subprocess.run(cmd, check=True, capture_output=True)
        dl = subprocess.Popen(["ip", "netns", "exec", ns, str(tbnet.DELAYLINE), "--dev", tun, "--pool-packets", "3",
                               "--default-delay", "5000000000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        assert dl.stdout.readline().startswith("ready ")
        subprocess.run(["ip", "netns", "exec", ns, "ping", "-n", "-q", "-i", "0.01", "-c", "6", "-W", "0.1",
                        "10.251.9.2"], capture_output=True, timeout=60)
        assert dl.wait(timeout=60) == 1  # a hang guard: it exits on the fourth packet
        assert "the packet pool is full (3 packets held)" in dl.stderr.read()
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


# ---- measurements of the testbed on this host (make testbed-accuracy; see tests/accuracy.py) ----

@measurement
def test_measure_the_ping_rtt_of_an_idle_40ms_path():
    with _path(20, 50e6) as net:
        assert net.queue_packets() == (0, 0)
        mean, std, n = _rtt_summary(_ping(net))
    assert n == 200
    report("2 x 20 ms path, no other traffic: ping RTT mean", mean, "ms", "40.0-40.5", 40.0 <= mean <= 40.5)
    report("2 x 20 ms path, no other traffic: ping RTT standard deviation", std, "ms", "< 0.1", std < 0.1)


@measurement
def test_measure_the_ping_rtt_while_a_bulk_transfer_loads_the_delay_line():
    """The load is a kernel-cubic transfer paced by its own stack (SO_MAX_PACING_RATE) at 30
    Mbit/s through a 1 Gbit/s bottleneck: the delay line carries real load in both directions
    (data one way, ACKs the other, about 3,700 packets/s) and what ping sees is the delay line,
    not the bottleneck. Measured why the bottleneck must not bind: an unpaced cubic flow
    filling a 1-BDP buffer gives RTT 70 ms mean, 7 ms std (queueing); and even the 30 Mbit/s
    paced flow at a 50 Mbit/s bottleneck leaves ping waiting behind a data packet's 0.24 ms
    serialization now and then, which alone gave 0.07-0.08 ms std (time from the delay line's
    write of the echo request to its read of the reply, per ping), leaving a perfect delay
    line only about 0.06 ms of the 0.1 ms."""
    with _path(20, 1e9) as net:
        bulk = Bulk(net, 3.5, pacing_bps=30e6, skip_s=1.0)
        try:
            time.sleep(1.0)  # past slow start
            mean, std, n = _rtt_summary(_ping(net))
            got = bulk.result()
        finally:
            bulk.kill()
    goodput = got["steady_bytes"] * 8 / got["steady_span"] / 1e6
    assert n == 200
    report("2 x 20 ms path under a paced 30 Mbit/s transfer: its goodput", goodput, "Mbit/s", ">= 28", goodput >= 28)
    report("2 x 20 ms path under that transfer: ping RTT mean", mean, "ms", "40.0-40.5", 40.0 <= mean <= 40.5)
    report("2 x 20 ms path under that transfer: ping RTT standard deviation", std, "ms", "< 0.1", std < 0.1)


@measurement
def test_measure_the_goodput_of_a_bulk_transfer_through_a_20mbps_bottleneck():
    with _path(20, 20e6) as net:
        bulk = Bulk(net, 3.0, skip_s=1.0)
        try:
            got = bulk.result()
        finally:
            bulk.kill()
    steady = got["steady_bytes"] * 8 / got["steady_span"] / 1e6
    report("cubic through 20 Mbit/s, 40 ms, 1 BDP: goodput after the first second", steady, "Mbit/s", "17-20",
           17 <= steady <= 20)


@measurement
def test_measure_the_rate_a_full_20mbps_queue_drains_at():
    # The load is UDP at twice the rate into a 300 ms buffer, not TCP: the rate of a queue that
    # never empties is the shaper's alone, whatever the sender or the delay line do. The rate
    # is the slope fitted through 25 samples, so no one tc call's latency sets it.
    with _path(20, 20e6, buffer_pkts=500) as net:
        load = Overload(net, 20e6, factor=2.0, seconds=4.0)
        try:
            time.sleep(1.0)  # 500 packets fill in 0.3 s at the excess rate
            samples = []
            for _ in range(25):
                samples.append(_class_sent(net))
                time.sleep(0.1)
        finally:
            load.stop()
    times, _, sent_pkts, queued = zip(*samples)
    assert min(queued) > 0, f"the queue emptied, so the rate measured is not the shaper's: {queued}"
    ip_rate = statistics.linear_regression(times, sent_pkts).slope * 1500 * 8 / 1e6
    report("a full 20 Mbit/s queue: the rate it drains at (IP bytes)", ip_rate, "Mbit/s", "19.8-20.2",
           19.8 <= ip_rate <= 20.2)


@measurement
def test_measure_the_gaps_between_departures_after_idle_spells():
    # Three loads of 0.4 s with idle spells between, so the class starts each with full credit
    # (the moment a bucket holding a packet and a bit would send two at once). Departures are
    # captured on the router's egress; the ceil bucket spaces them by 0.8 packet times.
    packet_s = 1500 * 8 / 20e6
    with _path(20, 20e6, buffer_pkts=100) as net:
        cap = subprocess.Popen(["ip", "netns", "exec", net.router_ns, "tshark", "-i", net._rtr_rcv_if, "-f", "udp",
                                "-a", "duration:6", "-T", "fields", "-e", "frame.time_epoch"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            for _ in range(10):  # tshark's notes before it captures (running as root, ...)
                if "Capturing on" in cap.stderr.readline():
                    break
            else:
                raise AssertionError("tshark did not start capturing")
            for _ in range(3):
                load = Overload(net, 20e6, factor=2.0, seconds=0.4)
                time.sleep(0.5)
                load.stop()
                time.sleep(0.3)  # 100 packets drain in 60 ms
            out = cap.stdout.read()
        finally:
            cap.kill()
            cap.wait()
    departures = [float(x) for x in out.split()]
    gaps = [(b - a) / packet_s for a, b in zip(departures, departures[1:])]
    busy = [g for g in gaps if g < 5]  # the idle spells' gaps left out
    assert len(departures) > 1500 and len(gaps) - len(busy) >= 2, (len(departures), len(gaps) - len(busy))
    report("20 Mbit/s bottleneck after idle spells: smallest gap between departures", min(busy), "packet times",
           ">= 0.5", min(busy) >= 0.5)
    below = sum(g < 0.75 for g in busy)
    report("20 Mbit/s bottleneck after idle spells: gaps under 0.75 packet times", below, "gaps", "0", below == 0)


@measurement
def test_measure_when_a_delay_change_is_seen_to_take_effect(arrival_stamps):
    # Probes every 1 ms across a 50 -> 150 ms change (see the delay-change tests): the last
    # probe sent before the change and the first sent after it, as the sender's clock saw them.
    probes, change = _delay_increase_probes(1500 * MS, interval_s=0.001)
    old = [p for p in probes if p.delay_ms < 100]
    new = [p for p in probes if p.delay_ms >= 100]
    assert old and new
    last_old = (max(p.sent_from for p in old) - change) / MS
    first_new = (min(p.sent_by for p in new) - change) / MS
    report("a 50 -> 150 ms change: the latest send that got the old delay, from the change's time", last_old, "ms",
           "< +2", last_old < 2)
    report("a 50 -> 150 ms change: the earliest send that got the new delay, from the change's time", first_new,
           "ms", "> -2", first_new > -2)
    extra = statistics.median(p.delay_ms - 50 for p in old)
    report("a 50 ms leg: median one-way delay beyond 50 ms (kernel receive stamps)", extra, "ms", "< 0.5", extra < 0.5)
