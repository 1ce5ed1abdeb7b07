"""The testbed's network: sender, router and receiver namespaces with a bottleneck and a
propagation delay per host pair.

>>> from vegaslab.testbed import Host, Bottleneck, Network
>>> hosts = [Host("s1", "sender"), Host("r1", "receiver")]
>>> with Network(hosts, Bottleneck(50e6, 250, 50e6, 250),
...              {("s1", "r1"): 20_000_000, ("r1", "s1"): 20_000_000}) as net:  # doctest: +SKIP
...     net.ip("s1"), net.sender_ns, net.queue_packets()
('10.251.1.1', 'vl1a2b-0-snd', (0, 0))

Topology and why:

- Three namespaces joined by two veth pairs: ``sender — router — receiver``. Every sender
  host is an address on the sender namespace's veth, every receiver host one on the receiver
  namespace's veth; a flow binds its host's address as its source.
- The bottleneck is on the router's egress (forward: toward the receivers; reverse: toward the
  senders), ``htb`` at the rate with a ``pfifo limit N`` child, N the buffer in packets; htb
  counts IP bytes (a size table takes the Ethernet header off), as the simulator's links do,
  and repays a late timer's lost time at up to 1.25x the rate, never two packets back to
  back (see ``_shape``).
  On the router, not on the sender's own interface, so that the sender's stack sees a remote
  queue (local back-pressure and TCP small queues would otherwise throttle it early).
- This kernel has no netem, so propagation delay is a user-space delay line: policy routing
  sends every packet arriving on either router veth into a TUN device, ``vl-delayline``
  (``kernel/delayline.c``) holds it for its (source, destination) pair's delay and writes it
  back, and the main table routes it on to the bottleneck qdisc. The delay is therefore before
  the queue in both directions; pairs without a delay pass with none.
- Offloads (TSO, GSO, GRO) are off on every veth, so the queue holds real packets; reverse-path
  filtering is off in the router (packets re-enter from the TUN with a source routed
  elsewhere); IPv6 is off in all three namespaces so no stray traffic crosses the path; the
  neighbours are static so no ARP exchange ever delays a packet.
- Addresses are a private /16 (10.251.0.0/16 unless the machine's own routes use it) inside
  the namespaces only: senders ``x.y.1.i``, receivers ``x.y.2.i``, the router ``.254``.

Clean and safe: names carry a tag unique per run (``vl`` + the pid and a counter in base 36,
so every interface name fits Linux's 15 characters). A state file per live network in
``/run/vegaslab-testbed/`` records the owner's pid (and its start time, against pid reuse) and
the names. The network is removed on leaving the ``with`` block (also on an exception), on
SIGINT/SIGTERM (handlers clean up, then the previous handler runs or the signal is re-raised)
and at interpreter exit. After a SIGKILL of its owner, the delay line ends by itself at once
(a parent-death signal, see kernel/delayline.c) and the next ``Network`` start removes the
namespaces (and the delay line, should it still run) of every state file whose owner is dead.

This module builds the path (:class:`Network`); the parts it uses are modules of their own:
:mod:`.spec` (the inputs and their check), :mod:`.prefixes` (the address range),
:mod:`.delayline` (the delay line's process), :mod:`.netlink` (queue lengths),
:mod:`.state` and :mod:`.cleanup` (state files and removing what they name), :mod:`.signals`
(teardown on signals and at exit), :mod:`.kernelstate` (what a kernel session leaves),
:mod:`.processes` and :mod:`.tags`. The names callers import from here (``STATE_DIR``,
``remove_stale``, ``process_start``, ``build_delayline``, ...) are re-exported.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

from . import delayline, signals
from .cleanup import destroy, remove_stale
from .delayline import DELAYLINE
from .errors import TestbedError
from .netlink import netlink_socket_in, qdisc_qlens
from .prefixes import pick_prefix
from .processes import process_start, run
from .spec import Bottleneck, Host, Route, validate
from .state import STATE_DIR, save_state, state_lock, write_state
from .tags import new_tag

# Not used here: re-exported so that callers may import them from this module too.
from .delayline import KERNEL_DIR, build_delayline
from .kernelstate import ALLOWED_SYSCTL, adopt, allowed, release, undo, write_allowed
from .spec import ROUTE_MTU
from .state import live_states
from .tags import b36, counter

__all__ = ["Host", "Bottleneck", "Route", "Network", "TestbedError", "check", "build_delayline",
           "STATE_DIR", "DELAYLINE", "ALLOWED_SYSCTL", "allowed", "write_allowed", "undo"]

#: Routing table in the router namespace that sends everything into the TUN.
_DELAY_TABLE = 100
#: Socket buffer limits in the sender and receiver namespaces (per namespace sysctls): 64 MiB,
#: so that neither end's buffer, but the scenario, limits a flow (Linux's default 6 MiB / 4 MiB
#: would cap a 622 Mbit/s x 100 ms path).
ENDPOINT_BUFFERS = {"net.ipv4.tcp_rmem": "4096 131072 67108864", "net.ipv4.tcp_wmem": "4096 16384 67108864"}


def check() -> None:
    """Raise :class:`TestbedError` (one sentence) unless the testbed can be built here."""
    if os.geteuid() != 0:
        raise TestbedError("the namespace testbed needs root (it creates network namespaces)")
    for tool, package in (("ip", "iproute2"), ("tc", "iproute2"), ("ethtool", "ethtool"),
                          ("sysctl", "procps")):
        if shutil.which(tool) is None:
            raise TestbedError(f"{tool} is not installed (package {package}; scripts/install-bpf.sh installs it)")
    if not Path("/dev/net/tun").exists():
        raise TestbedError("this machine has no TUN device (/dev/net/tun), which the delay line needs")
    if not os.access(DELAYLINE, os.X_OK):
        raise TestbedError(f"the delay line is not built ({DELAYLINE}): run make -C kernel delayline")


class Network:
    """A sender/router/receiver path with a bottleneck and per-pair propagation delays; use it
    as a context manager (see the module docstring)."""

    def __init__(self, hosts: list[Host], bottleneck: Bottleneck, pair_delays_ns: dict[tuple[str, str], int],
                 delay_changes: list[tuple[int, str, str, int]] = (), tag: str | None = None,
                 endpoint_sysctls: dict[str, str] | None = None, routes: dict[str, Route] | None = None):
        self.hosts = list(hosts)
        #: Host -> the other side's route to it; hosts not named get the defaults (MTU 1500,
        #: Linux's initial window of 10).
        self.routes = dict(routes or {})
        #: Set in the sender and receiver namespaces after they are made (e.g. the
        #: ``net.ipv4.tcp_sack`` switch of :class:`~vegaslab.testbed.stack.Stack`).
        self.endpoint_sysctls = dict(endpoint_sysctls or {})
        self.bottleneck = bottleneck
        self.pair_delays_ns = dict(pair_delays_ns)
        self.delay_changes = [tuple(c) for c in delay_changes]
        validate(self.hosts, self.bottleneck, self.pair_delays_ns, self.delay_changes, self.routes)
        if tag is None:
            tag = new_tag()
        elif not (isinstance(tag, str) and 3 <= len(tag) <= 13 and tag.startswith("vl")
                  and all(c.isascii() and (c.isalnum() or c == "-") for c in tag)):
            raise TestbedError(f"tag: must be 3 to 13 letters, digits or '-' starting with 'vl', got {tag!r}")
        self.tag = tag
        self.sender_ns, self.router_ns, self.receiver_ns = f"{tag}-snd", f"{tag}-rtr", f"{tag}-rcv"
        # Interfaces: sender's veth, its router end, receiver's veth, its router end, the TUN.
        self._snd_if, self._rtr_snd_if = f"{tag}s", f"{tag}rs"
        self._rcv_if, self._rtr_rcv_if = f"{tag}r", f"{tag}rr"
        self._tun = f"{tag}t"
        self._state_path = STATE_DIR / f"{tag}.json"
        self._log_path = STATE_DIR / f"{tag}.log"
        self._addresses: dict[str, str] = {}
        self._proc: subprocess.Popen | None = None
        self._start_ns: int | None = None
        self._nl: socket.socket | None = None
        self._nl_lock = threading.Lock()
        self._nl_seq = 0
        self._queue_keys: tuple[tuple[int, int], tuple[int, int]] | None = None
        self._state: dict | None = None
        self._entered = False

    # ---- the public view ----

    def ip(self, host: str) -> str:
        """The host's IPv4 address (in its side's namespace)."""
        try:
            return self._addresses[host]
        except KeyError:
            raise TestbedError(f"unknown host {host!r} (or the network is not built yet)") from None

    def namespace_of(self, host: str) -> str:
        """The namespace the host lives in (its side's)."""
        for h in self.hosts:
            if h.name == host:
                return self.sender_ns if h.side == "sender" else self.receiver_ns
        raise TestbedError(f"unknown host {host!r}")

    def egress(self) -> dict[str, str]:
        """The router's egress interface of each bottleneck direction (``forward``: toward the
        receivers, ``reverse``: toward the senders), in :attr:`router_ns`; a capture there sees
        each packet as it leaves the queue."""
        return {"forward": self._rtr_rcv_if, "reverse": self._rtr_snd_if}

    def aqt_hops(self) -> list[tuple[tuple[str, str], tuple[str, str]]]:
        """The router's two egress interfaces, each with the next hop's interface: where an
        AQT-enabled router stamps queueing time (:class:`~vegaslab.testbed.aqt.AqtPath`)."""
        return [((self.router_ns, self._rtr_rcv_if), (self.receiver_ns, self._rcv_if)),
                ((self.router_ns, self._rtr_snd_if), (self.sender_ns, self._snd_if))]

    def start_time_ns(self) -> int:
        """CLOCK_MONOTONIC nanoseconds at which the delay line's schedule started (time 0 of
        ``delay_changes``)."""
        if self._start_ns is None:
            raise TestbedError("the network is not built: use it inside a with block")
        return self._start_ns

    def queue_packets(self) -> tuple[int, int]:
        """Packets queued now in the (forward, reverse) bottleneck buffers. One netlink dump,
        no process: well under a millisecond. Raises :class:`TestbedError` if the delay line
        has died (the path would be cut)."""
        if self._nl is None or self._queue_keys is None:
            raise TestbedError("the network is not built: use it inside a with block")
        self._check_delayline()
        with self._nl_lock:
            self._nl_seq += 1
            q = qdisc_qlens(self._nl, self._nl_seq)
        fwd, rev = self._queue_keys
        return q.get(fwd, 0), q.get(rev, 0)

    def _check_delayline(self) -> None:
        if self._proc is not None and self._proc.poll() is not None:
            raise TestbedError(f"the delay line stopped: {self._delayline_message()}")

    def _delayline_message(self) -> str:
        return delayline.message(self._proc, self._log_path)

    # ---- building ----

    def __enter__(self) -> "Network":
        if self._entered:
            raise TestbedError("a Network can be entered once; make a new one")
        self._entered = True
        check()
        remove_stale()
        signals.watch(self)
        try:
            self._build()
        except BaseException:
            self._teardown()
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        failed = None
        if self._proc is not None and self._proc.poll() is not None and exc_type is None:
            failed = self._delayline_message()
        left = self._teardown()
        if exc_type is None:
            if failed is not None:
                raise TestbedError(f"the delay line stopped during the run: {failed}")
            if left:
                raise TestbedError(f"could not remove the namespaces {', '.join(left)}")

    def _save_state(self) -> None:
        save_state(self._state_path, self._state)

    def _build(self) -> None:
        tag = self.tag
        with state_lock():
            taken = set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split())
            clash = [ns for ns in (self.sender_ns, self.router_ns, self.receiver_ns) if ns in taken]
            if clash or self._state_path.exists():
                raise TestbedError(f"tag {tag!r} is in use (namespace {clash[0] if clash else tag} exists)")
            # Recorded before anything exists, so a SIGKILL at any point leaves a recipe for removal.
            self._state = {
                "tag": tag, "pid": os.getpid(), "start": process_start(os.getpid()),
                "namespaces": [self.sender_ns, self.router_ns, self.receiver_ns],
                "links": [[self.router_ns, self._tun], [self.router_ns, self._rtr_snd_if],
                          [self.router_ns, self._rtr_rcv_if]],
                "delayline": None,
            }
            write_state(self._state_path, self._state)

        prefix = pick_prefix()
        base = prefix.network_address
        snd_gw, rcv_gw = str(base + 256 + 254), str(base + 512 + 254)
        i_snd = i_rcv = 0
        for h in self.hosts:
            if h.side == "sender":
                i_snd += 1
                self._addresses[h.name] = str(base + 256 + i_snd)
            else:
                i_rcv += 1
                self._addresses[h.name] = str(base + 512 + i_rcv)

        S, R, D = self.sender_ns, self.router_ns, self.receiver_ns
        for ns in (S, R, D):
            run(["ip", "netns", "add", ns], f"creating the namespace {ns} failed")
        for ns in (S, R, D):
            # Quiet namespaces: no IPv6 chatter crossing the path.
            run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                 "net.ipv6.conf.default.disable_ipv6=1"], f"configuring {ns} failed")
        for ns in (S, D):
            for key, value in {**ENDPOINT_BUFFERS, **self.endpoint_sysctls}.items():
                run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"{key}={value}"],
                    f"setting {key}={value} in {ns} failed")
        run(["ip", "link", "add", self._snd_if, "netns", S, "type", "veth", "peer", "name", self._rtr_snd_if,
             "netns", R], "creating the sender-side veth pair failed")
        run(["ip", "link", "add", self._rcv_if, "netns", D, "type", "veth", "peer", "name", self._rtr_rcv_if,
             "netns", R], "creating the receiver-side veth pair failed")
        run(["ip", "-n", R, "tuntap", "add", "mode", "tun", "name", self._tun], "creating the TUN device failed")
        for h in self.hosts:
            ns, dev = (S, self._snd_if) if h.side == "sender" else (D, self._rcv_if)
            run(["ip", "-n", ns, "addr", "add", f"{self._addresses[h.name]}/24", "dev", dev],
                f"adding {h.name}'s address failed")
        run(["ip", "-n", R, "addr", "add", f"{snd_gw}/24", "dev", self._rtr_snd_if], "addressing the router failed")
        run(["ip", "-n", R, "addr", "add", f"{rcv_gw}/24", "dev", self._rtr_rcv_if], "addressing the router failed")
        rp_off = [f"net.ipv4.conf.{k}.rp_filter=0" for k in ("all", "default", self._tun, self._rtr_snd_if,
                                                              self._rtr_rcv_if)]
        run(["ip", "netns", "exec", R, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1",
             "net.ipv4.conf.all.send_redirects=0", *rp_off], "configuring the router failed")
        for ns, dev in ((S, self._snd_if), (R, self._rtr_snd_if), (R, self._rtr_rcv_if), (D, self._rcv_if)):
            run(["ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"],
                f"turning offloads off on {dev} failed")
        for ns, dev in ((S, "lo"), (S, self._snd_if), (R, "lo"), (R, self._rtr_snd_if), (R, self._rtr_rcv_if),
                        (R, self._tun), (D, "lo"), (D, self._rcv_if)):
            run(["ip", "-n", ns, "link", "set", dev, "up"], f"bringing {dev} up failed")
        run(["ip", "-n", R, "link", "set", self._tun, "txqueuelen", "10000"], "sizing the TUN queue failed")
        # A route MTU above the devices' 1500 bytes (packet_size + 52 > 1500, e.g. the grids
        # paper's 1500-byte payloads) needs devices that carry it: a locked route MTU is used
        # as it is (Linux's ipv4_mtu), and a veth drops a packet longer than its own MTU. Only
        # then, so that the default path keeps 1500 bytes.
        mtu = max([1500] + [r.mtu for r in self.routes.values()])
        if mtu > 1500:
            for ns, dev in ((S, self._snd_if), (R, self._rtr_snd_if), (R, self._rtr_rcv_if), (R, self._tun),
                            (D, self._rcv_if)):
                run(["ip", "-n", ns, "link", "set", dev, "mtu", str(mtu)], f"setting the MTU of {dev} failed")
        run(["ip", "-n", S, "route", "add", "default", "via", snd_gw], "routing the sender failed")
        side = {h.name: h.side for h in self.hosts}
        for host, r in sorted(self.routes.items()):
            ns, gw = (S, snd_gw) if side[host] == "receiver" else (D, rcv_gw)
            run(["ip", "-n", ns, "route", "add", f"{self._addresses[host]}/32", "via", gw, "mtu", "lock",
                 str(r.mtu), "initcwnd", str(r.initcwnd)],
                f"routing the other side to {host} failed")
        run(["ip", "-n", D, "route", "add", "default", "via", rcv_gw], "routing the receiver failed")
        self._static_neighbours(snd_gw, rcv_gw)

        b = self.bottleneck
        self._shape(self._rtr_rcv_if, b.rate_bps, b.buffer_pkts)
        self._shape(self._rtr_snd_if, b.reverse_rate_bps, b.reverse_buffer_pkts)

        self._start_delayline()

        run(["ip", "-n", R, "route", "add", "default", "dev", self._tun, "table", str(_DELAY_TABLE)],
            "routing into the delay line failed")
        for dev in (self._rtr_snd_if, self._rtr_rcv_if):
            run(["ip", "-n", R, "rule", "add", "iif", dev, "lookup", str(_DELAY_TABLE), "pref", "1000"],
                "routing into the delay line failed")

        links = json.loads(run(["ip", "-n", R, "-j", "link", "show"], "reading the router's links failed"))
        index = {ln["ifname"]: ln["ifindex"] for ln in links}
        pfifo = 0x00100000  # handle 10: of the pfifo child (see _shape)
        self._queue_keys = ((index[self._rtr_rcv_if], pfifo), (index[self._rtr_snd_if], pfifo))
        self._nl = netlink_socket_in(R)

    def _static_neighbours(self, snd_gw: str, rcv_gw: str) -> None:
        def mac(ns, dev):
            (info,) = json.loads(run(["ip", "-n", ns, "-j", "link", "show", "dev", dev], f"reading {dev} failed"))
            return info["address"]

        S, R, D = self.sender_ns, self.router_ns, self.receiver_ns
        mac_s, mac_rs = mac(S, self._snd_if), mac(R, self._rtr_snd_if)
        mac_d, mac_rr = mac(D, self._rcv_if), mac(R, self._rtr_rcv_if)
        entries = [(S, snd_gw, mac_rs, self._snd_if), (D, rcv_gw, mac_rr, self._rcv_if)]
        for h in self.hosts:
            if h.side == "sender":
                entries.append((R, self._addresses[h.name], mac_s, self._rtr_snd_if))
            else:
                entries.append((R, self._addresses[h.name], mac_d, self._rtr_rcv_if))
        for ns, addr, lladdr, dev in entries:
            run(["ip", "-n", ns, "neigh", "replace", addr, "lladdr", lladdr, "dev", dev, "nud", "permanent"],
                "adding a static neighbour failed")

    def _shape(self, dev: str, rate_bps: float, buffer_pkts: int) -> None:
        R = self.router_ns
        rate = f"{int(round(rate_bps))}bit"
        # stab overhead -14: htb charges each packet's IP length, not the 14-byte Ethernet
        # header on top, so the rate is the scenario's IP-level rate as the simulator's (without
        # it, 1448-byte segments get 50 x 1448/1514 = 47.8 of 50 Mbit/s instead of 48.3).
        run(["ip", "netns", "exec", R, "tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "stab",
             "overhead", "-14", "htb", "default", "1"], f"adding the bottleneck on {dev} failed")
        # Late htb timers (this VM delays them at times) must cost no rate, yet the queue must
        # not release packets back to back. htb sends from a root class while both its buckets
        # hold credit (it cannot borrow), charging a packet after sending it. The rate bucket
        # keeps up to four packets of credit (burst), so lateness is repaid, not lost; the ceil
        # bucket (1.25x the rate) keeps less than one packet (cburst 100 bytes), so every
        # packet waits for its own 0.8 packet times of credit and none leaves right behind
        # another. With tc's defaults (about one packet of burst in both, ceil = rate) a full
        # 20 Mbit/s queue drained at 18.2-19.6 Mbit/s in 5 of 8 runs, and a bucket that holds
        # a packet and a bit sends two back to back after an idle spell or a late tick
        # (docs/testbed.md). The price: after an idle spell up to four packets leave at 1.25x
        # the rate.
        packet = 1514
        run(["ip", "netns", "exec", R, "tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:1",
             "htb", "rate", rate, "burst", str(4 * packet), "ceil", f"{int(round(1.25 * rate_bps))}bit",
             "cburst", "100", "quantum", str(packet)],
            f"setting the bottleneck rate on {dev} failed")
        run(["ip", "netns", "exec", R, "tc", "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:",
             "pfifo", "limit", str(buffer_pkts)], f"setting the bottleneck buffer on {dev} failed")

    def _start_delayline(self) -> None:
        """Start the delay line in the router namespace and wait for its ready line. It is
        started from the thread that enters the network and ends when that thread's process
        ends, even by SIGKILL (``--parent-pid``, a parent-death signal: kernel/delayline.c)."""
        args = ["--dev", self._tun, "--parent-pid", str(os.getpid())]
        for (src, dst), d in sorted(self.pair_delays_ns.items()):
            args += ["--pair", f"{self.ip(src)},{self.ip(dst)},{d}"]
        for at, src, dst, d in self.delay_changes:
            args += ["--change", f"{at},{self.ip(src)},{self.ip(dst)},{d}"]
        self._proc = delayline.start(self.router_ns, args, self._log_path)
        self._state["delayline"] = {"pid": self._proc.pid, "start": process_start(self._proc.pid)}
        self._save_state()
        self._start_ns = delayline.wait_ready(self._proc, self._log_path)

    # ---- removal ----

    def _teardown(self) -> list[str]:
        """Remove everything this network made; safe to call again (each step is idempotent).
        Returns the namespaces that could not be removed."""
        with signals.registry_lock:
            if self._nl is not None:
                self._nl.close()  # the socket pins the router namespace
                self._nl = None
            left: list[str] = []
            if self._proc is not None:
                delayline.stop(self._proc)
            if self._state is not None:
                left = destroy(self._state)
                if not left:
                    with state_lock():
                        self._state_path.unlink(missing_ok=True)
                        self._log_path.unlink(missing_ok=True)
                    self._state = None
            signals.unwatch(self)
            return left
