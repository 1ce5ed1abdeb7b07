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
"""
from __future__ import annotations

import atexit
import ctypes
import fcntl
import ipaddress
import itertools
import json
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import VegaslabError

__all__ = ["Host", "Bottleneck", "Route", "Network", "TestbedError", "check", "build_delayline",
           "STATE_DIR", "DELAYLINE", "ALLOWED_SYSCTL", "allowed", "write_allowed", "undo"]

#: The repository's ``kernel/`` and the delay line built there (``make -C kernel delayline``).
KERNEL_DIR = Path(__file__).resolve().parents[3] / "kernel"
DELAYLINE = KERNEL_DIR / "build" / "vl-delayline"
#: One state file per live network (and the delay line's log); see the module docstring.
STATE_DIR = Path("/run/vegaslab-testbed")

#: Routing table in the router namespace that sends everything into the TUN.
_DELAY_TABLE = 100
_MAX_HOSTS_PER_SIDE = 253
_READY_TIMEOUT_S = 5.0
#: Socket buffer limits in the sender and receiver namespaces (per namespace sysctls): 64 MiB,
#: so that neither end's buffer, but the scenario, limits a flow (Linux's default 6 MiB / 4 MiB
#: would cap a 622 Mbit/s x 100 ms path).
ENDPOINT_BUFFERS = {"net.ipv4.tcp_rmem": "4096 131072 67108864", "net.ipv4.tcp_wmem": "4096 16384 67108864"}
#: Route MTUs the testbed accepts: room for the kernel's 52 bytes of headers and some payload,
#: up to the largest packet the delay line holds (its slot, kernel/delayline.c SLOT_BYTES).
ROUTE_MTU = (92, 2048)
_CANDIDATE_PREFIXES = ["10.251.0.0/16", "10.252.0.0/16", "10.253.0.0/16", "10.254.0.0/16",
                       "172.30.0.0/16", "172.29.0.0/16"]


class TestbedError(VegaslabError, RuntimeError):
    """The testbed cannot be used here, or building or running it failed; the message says why."""

    __test__ = False  # not a pytest test class despite the name


@dataclass(frozen=True)
class Host:
    """A traffic end: a sender host lives in the sender namespace, a receiver in the receiver
    namespace; each has its own address there."""

    name: str
    side: Literal["sender", "receiver"]


@dataclass(frozen=True)
class Bottleneck:
    """The router's two egress queues: forward (toward the receivers) and reverse (toward the
    senders), each a rate in bit/s and a drop-tail buffer in packets."""

    rate_bps: float
    buffer_pkts: int
    reverse_rate_bps: float
    reverse_buffer_pkts: int


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


def build_delayline() -> Path:
    """Build ``kernel/build/vl-delayline`` (``make -C kernel delayline``); returns its path."""
    if shutil.which("make") is None or not (KERNEL_DIR / "Makefile").is_file():
        raise TestbedError(f"cannot build the delay line: needs make and the repository's {KERNEL_DIR}")
    p = subprocess.run(["make", "-s", "-C", str(KERNEL_DIR), f"PYTHON={sys.executable}", "delayline"], capture_output=True, text=True)
    if p.returncode != 0:
        lines = (p.stderr.strip() or p.stdout.strip()).splitlines()
        raise TestbedError(f"building the delay line failed: {lines[-1] if lines else p.returncode}")
    return DELAYLINE


# ---- small helpers ----

def _run(cmd: list[str], what: str) -> str:
    from ..kernel import run_command

    return run_command(cmd, what, TestbedError).stdout


def _quiet(cmd: list[str]) -> None:
    """Run a cleanup command; failures (already gone) are fine."""
    subprocess.run(cmd, capture_output=True)


def b36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def process_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (tells a reused pid apart), or None
    when there is no such process or it has ended (a zombie nobody has reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def _alive(pid: int, start: int | None) -> bool:
    return start is not None and process_start(pid) == start


def _kill(pid: int, start: int | None, timeout: float = 2.0) -> None:
    """SIGTERM the process ``pid`` if it is still the one that started at ``start``, then
    SIGKILL it if it has not ended within ``timeout``."""
    if not _alive(pid, start):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid, start):
            return
        time.sleep(0.01)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@contextmanager
def _state_lock():
    STATE_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
    with open(STATE_DIR / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _write_state(path: Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, path)  # atomic: a reader never sees half a file


def _destroy(state: dict) -> list[str]:
    """Remove everything a state file names: the delay line, any other process left in the
    namespaces (they were started there by the testbed's user), the links and the namespaces;
    for a kernel session's file (:mod:`.session`), its registrations and allowed-list entries.
    Returns what could not be removed."""
    if "registrations" in state or "allowed_added" in state:
        return undo(state)
    dl = state.get("delayline")
    if dl:
        _kill(dl["pid"], dl["start"])
    namespaces = state.get("namespaces", [])
    for ns in namespaces:
        p = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        for pid in (int(x) for x in p.stdout.split() if x.isdigit()):
            _kill(pid, process_start(pid))
    for ns, dev in state.get("links", []):
        _quiet(["ip", "-n", ns, "link", "del", dev])
    for ns in namespaces:
        _quiet(["ip", "netns", "del", ns])
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    return [ns for ns in namespaces if ns in listed]


def remove_stale() -> None:
    """Remove the networks whose owner died without cleaning up (SIGKILL, power cut of the
    process): every state file whose pid is dead or reused."""
    with _state_lock():
        dead = []
        for path in sorted(STATE_DIR.glob("*.json")):
            try:
                state = json.loads(path.read_text())
                owner_alive = _alive(state["pid"], state["start"])
            except (OSError, ValueError, KeyError, TypeError):
                path.unlink(missing_ok=True)  # not ours or unreadable: nothing to act on
                continue
            if not owner_alive:
                dead.append((path, state))
        # Networks first: their sockets hold the algorithms a kernel session registered.
        dead.sort(key=lambda item: "registrations" in item[1])
        for path, state in dead:
            _destroy(state)
            path.unlink(missing_ok=True)
            (STATE_DIR / f"{state.get('tag', path.stem)}.log").unlink(missing_ok=True)


def live_states() -> list[dict]:
    """The state files whose owner still runs (read without the lock: files are replaced
    atomically, so a reader sees a whole one)."""
    states = []
    for path in sorted(STATE_DIR.glob("*.json")):
        try:
            state = json.loads(path.read_text())
            if _alive(state["pid"], state["start"]):
                states.append(state)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return states


# ---------------------------------------------------------------------- kernel sessions' state
# A kernel session (:mod:`.session`) keeps its registrations and allowed-list additions in a
# state file here too; undoing them is part of removing a dead owner's state.

#: The machine's list of congestion controls any process may select.
ALLOWED_SYSCTL = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")


def allowed() -> list[str]:
    """The congestion controls in the allowed list now."""
    return ALLOWED_SYSCTL.read_text().split()


def write_allowed(names: list[str]) -> None:
    """Replace the allowed list with ``names``."""
    try:
        ALLOWED_SYSCTL.write_text(" ".join(names))
    except OSError as e:
        raise TestbedError(f"writing {ALLOWED_SYSCTL} failed: {e.strerror}") from None


def _claimed_by_live_sessions(key: str, except_tag: str) -> set[str]:
    """The names under ``key`` in the state files of other sessions whose owner still runs."""
    claimed: set[str] = set()
    for state in live_states():
        if state.get("tag") != except_tag:
            claimed.update(state.get(key, []))
    return claimed


def undo(state: dict) -> list[str]:
    """Undo what a session's state records: take its additions out of the allowed list, then
    unregister its algorithms (each skipped while another live run still uses it). Returns
    what could not be undone, as sentences."""
    from .. import kernel  # here: a network alone never needs the kernel's BPF loader

    failed = []
    added = set(state.get("allowed_added", [])) - _claimed_by_live_sessions("allowed_added", state.get("tag"))
    if added:
        try:
            write_allowed([n for n in allowed() if n not in added])
        except TestbedError as e:
            failed.append(str(e))
    in_use = _claimed_by_live_sessions("registrations", state.get("tag"))
    for name in state.get("registrations", []):
        if name in in_use:
            continue
        try:
            if name in kernel.registered():
                kernel.unregister(name)
        except kernel.KernelError as e:
            failed.append(str(e))
    return failed


def save_state(path: Path, state: dict) -> None:
    """Write a state file under the lock."""
    with _state_lock():
        _write_state(path, state)


def adopt(owner, path: Path, state: dict) -> None:
    """Record ``owner``'s state file and tear it down on SIGINT/SIGTERM and at exit, like a
    network (``owner`` has ``tag`` and ``_teardown()``); used by :mod:`.session`."""
    save_state(path, state)
    with _registry_lock:
        _install_handlers()
        _live[owner.tag] = owner


def release(owner, path: Path) -> None:
    """The opposite of :func:`adopt`, once ``owner`` is undone."""
    with _state_lock():
        path.unlink(missing_ok=True)
    with _registry_lock:
        _live.pop(owner.tag, None)
        if not _live:
            _restore_handlers()


# ---- reading queue lengths through rtnetlink (cheap: no process per call) ----

_CLONE_NEWNET = 0x40000000
_RTM_NEWQDISC, _RTM_GETQDISC = 36, 38
_NLMSG_ERROR, _NLMSG_DONE = 2, 3
_NLM_F_REQUEST, _NLM_F_DUMP = 0x1, 0x300
_TCA_STATS2, _TCA_STATS_QUEUE = 7, 3
_NLMSGHDR = struct.Struct("=IHHII")
_TCMSG = struct.Struct("=BBHiIII")
_RTATTR = struct.Struct("=HH")


def _netlink_socket_in(ns: str) -> socket.socket:
    """An rtnetlink socket bound to the namespace ``ns``: made by a short-lived thread that
    enters ``ns`` (setns affects only the calling thread), so this process stays where it is."""
    out: dict = {}

    def enter_and_open():
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(f"/run/netns/{ns}", os.O_RDONLY | os.O_CLOEXEC)
            try:
                if libc.setns(fd, _CLONE_NEWNET) != 0:
                    e = ctypes.get_errno()
                    raise OSError(e, os.strerror(e))
            finally:
                os.close(fd)
            s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, 0)
            s.bind((0, 0))
            out["socket"] = s
        except OSError as e:
            out["error"] = e

    t = threading.Thread(target=enter_and_open, name="vegaslab-netns")
    t.start()
    t.join()
    if "error" in out:
        raise TestbedError(f"cannot open a netlink socket in {ns}: {out['error']}")
    return out["socket"]


def _attrs(buf: bytes, start: int, end: int):
    while start + 4 <= end:
        length, kind = _RTATTR.unpack_from(buf, start)
        if length < 4:
            return
        yield kind & 0x3FFF, start + 4, start + length
        start += (length + 3) & ~3


def _qdisc_qlens(sock: socket.socket, seq: int) -> dict[tuple[int, int], int]:
    """{(ifindex, handle): packets queued} of every qdisc in the socket's namespace."""
    req = _TCMSG.pack(socket.AF_UNSPEC, 0, 0, 0, 0, 0, 0)
    sock.send(_NLMSGHDR.pack(_NLMSGHDR.size + len(req), _RTM_GETQDISC, _NLM_F_REQUEST | _NLM_F_DUMP,
                             seq, 0) + req)
    out: dict[tuple[int, int], int] = {}
    while True:
        buf = sock.recv(1 << 16)
        off = 0
        while off + _NLMSGHDR.size <= len(buf):
            length, kind, _flags, mseq, _pid = _NLMSGHDR.unpack_from(buf, off)
            if length < _NLMSGHDR.size:
                raise TestbedError("reading the queue lengths failed: a malformed netlink reply")
            if mseq == seq:
                if kind == _NLMSG_DONE:
                    return out
                if kind == _NLMSG_ERROR:
                    (err,) = struct.unpack_from("=i", buf, off + _NLMSGHDR.size)
                    if err:
                        raise TestbedError(f"reading the queue lengths failed: {os.strerror(-err)}")
                if kind == _RTM_NEWQDISC:
                    body = off + _NLMSGHDR.size
                    _fam, _p1, _p2, ifindex, handle, _parent, _info = _TCMSG.unpack_from(buf, body)
                    for a, s, e in _attrs(buf, body + _TCMSG.size, off + length):
                        if a == _TCA_STATS2:
                            for b, s2, _e2 in _attrs(buf, s, e):
                                if b == _TCA_STATS_QUEUE:
                                    out[(ifindex, handle)] = struct.unpack_from("=I", buf, s2)[0]
            off += (length + 3) & ~3


# ---- signals and interpreter exit ----

#: What SIGINT/SIGTERM and exit tear down: live networks and kernel sessions, by tag.
_live: dict[str, object] = {}
_previous_handlers: dict[int, object] = {}
counter = itertools.count()
_registry_lock = threading.RLock()


def _on_signal(signum, frame):
    for owner in reversed(list(_live.values())):  # newest first: networks before kernel sessions
        owner._teardown()
    previous = _previous_handlers.get(signum, signal.SIG_DFL)
    _restore_handlers()
    if callable(previous):
        previous(signum, frame)  # e.g. Python's SIGINT handler raises KeyboardInterrupt
    elif previous != signal.SIG_IGN:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)  # die of the signal, as without the testbed


def _install_handlers() -> None:
    if _previous_handlers or threading.current_thread() is not threading.main_thread():
        return  # installed already, or not allowed here (the with block still cleans up)
    for sig in (signal.SIGINT, signal.SIGTERM):
        _previous_handlers[sig] = signal.signal(sig, _on_signal)


def _restore_handlers() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for sig, previous in list(_previous_handlers.items()):
        if signal.getsignal(sig) is _on_signal:
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
    _previous_handlers.clear()


@atexit.register
def _teardown_all() -> None:
    for owner in reversed(list(_live.values())):
        owner._teardown()


def _used_prefixes() -> list[ipaddress.IPv4Network]:
    out = _run(["ip", "-j", "-4", "route", "show", "table", "all"], "reading this machine's routes failed")
    nets = []
    for r in json.loads(out or "[]"):
        dst = r.get("dst", "default")
        if dst != "default":
            nets.append(ipaddress.ip_network(dst, strict=False))
    return nets


@dataclass(frozen=True)
class Route:
    """The sender namespace's route to one receiver host: the path MTU (bytes) and the initial
    congestion window (packets).

    (A locked ``cwnd`` route metric would set Linux's ``snd_cwnd_clamp``, but only for
    connections to a destination already in the kernel's TCP metrics cache, i.e. not the first
    one: it is not used. A flow's window limit is the receiver's advertised window instead;
    see :mod:`.flows`.)"""

    mtu: int
    initcwnd: int


class Network:
    """A sender/router/receiver path with a bottleneck and per-pair propagation delays; use it
    as a context manager (see the module docstring)."""

    def __init__(self, hosts: list[Host], bottleneck: Bottleneck, pair_delays_ns: dict[tuple[str, str], int],
                 delay_changes: list[tuple[int, str, str, int]] = (), tag: str | None = None,
                 endpoint_sysctls: dict[str, str] | None = None, routes: dict[str, Route] | None = None):
        self.hosts = list(hosts)
        #: Receiver host -> the sender's route to it; receivers not named get the defaults
        #: (MTU 1500, Linux's initial window of 10).
        self.routes = dict(routes or {})
        #: Set in the sender and receiver namespaces after they are made (e.g. the
        #: ``net.ipv4.tcp_sack`` switch of :class:`~vegaslab.testbed.stack.Stack`).
        self.endpoint_sysctls = dict(endpoint_sysctls or {})
        self.bottleneck = bottleneck
        self.pair_delays_ns = dict(pair_delays_ns)
        self.delay_changes = [tuple(c) for c in delay_changes]
        self._validate()
        if tag is None:
            tag = f"vl{b36(os.getpid())}-{b36(next(counter))}"
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

    # ---- input ----

    def _validate(self) -> None:
        names = {}
        for i, h in enumerate(self.hosts):
            if not isinstance(h, Host):
                raise TestbedError(f"hosts[{i}]: expected a Host, got {h!r}")
            if h.side not in ("sender", "receiver"):
                raise TestbedError(f"hosts[{i}].side: must be 'sender' or 'receiver', got {h.side!r}")
            if h.name in names:
                raise TestbedError(f"hosts[{i}].name: {h.name!r} is given twice")
            names[h.name] = h.side
        for side in ("sender", "receiver"):
            n = sum(1 for s in names.values() if s == side)
            if not 1 <= n <= _MAX_HOSTS_PER_SIDE:
                raise TestbedError(f"hosts: need 1 to {_MAX_HOSTS_PER_SIDE} {side} hosts, got {n}")
        b = self.bottleneck
        for field in ("rate_bps", "reverse_rate_bps"):
            v = getattr(b, field)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 1000 <= v <= 10e9:
                raise TestbedError(f"bottleneck.{field}: must be between 1000 and 1e10 bit/s, got {v!r}")
        for field in ("buffer_pkts", "reverse_buffer_pkts"):
            v = getattr(b, field)
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 1_000_000:
                raise TestbedError(f"bottleneck.{field}: must be an integer between 1 and 1000000 packets, got {v!r}")

        def pair(where, src, dst):
            for h in (src, dst):
                if h not in names:
                    raise TestbedError(f"{where}: unknown host {h!r} (hosts: {', '.join(names)})")
            if names[src] == names[dst]:
                raise TestbedError(f"{where}: {src!r} and {dst!r} are both {names[src]}s; a delay is "
                                   "between a sender and a receiver")

        def delay(where, v):
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 60_000_000_000:
                raise TestbedError(f"{where}: must be an integer between 0 and 60e9 ns, got {v!r}")

        for key, v in self.pair_delays_ns.items():
            if not (isinstance(key, tuple) and len(key) == 2):
                raise TestbedError(f"pair_delays_ns: keys are (src_host, dst_host), got {key!r}")
            pair(f"pair_delays_ns[{key!r}]", *key)
            delay(f"pair_delays_ns[{key!r}]", v)
        for i, c in enumerate(self.delay_changes):
            if len(c) != 4:
                raise TestbedError(f"delay_changes[{i}]: expected (at_ns, src, dst, delay_ns), got {c!r}")
            at, src, dst, d = c
            delay(f"delay_changes[{i}].at_ns", at)
            pair(f"delay_changes[{i}]", src, dst)
            delay(f"delay_changes[{i}].delay_ns", d)
        limits = {"mtu": ROUTE_MTU, "initcwnd": (1, 2**31 - 1)}
        for host, r in self.routes.items():
            if names.get(host) != "receiver":
                raise TestbedError(f"routes[{host!r}]: not a receiver host (receivers: "
                                   f"{', '.join(n for n, side in names.items() if side == 'receiver')})")
            for field, (lo, hi) in limits.items():
                v = getattr(r, field)
                if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                    raise TestbedError(f"routes[{host!r}].{field}: must be an integer between {lo} and {hi}, got {v!r}")

    # ---- the public view ----

    def ip(self, host: str) -> str:
        """The host's IPv4 address (in its side's namespace)."""
        try:
            return self._addresses[host]
        except KeyError:
            raise TestbedError(f"unknown host {host!r} (or the network is not built yet)") from None

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
            q = _qdisc_qlens(self._nl, self._nl_seq)
        fwd, rev = self._queue_keys
        return q.get(fwd, 0), q.get(rev, 0)

    def _check_delayline(self) -> None:
        if self._proc is not None and self._proc.poll() is not None:
            raise TestbedError(f"the delay line stopped: {self._delayline_message()}")

    def _delayline_message(self) -> str:
        try:
            lines = [ln for ln in self._log_path.read_text().splitlines() if ln.strip()]
        except OSError:
            lines = []
        code = self._proc.returncode if self._proc is not None else None
        return lines[-1] if lines else f"exit status {code}"

    # ---- building ----

    def __enter__(self) -> "Network":
        if self._entered:
            raise TestbedError("a Network can be entered once; make a new one")
        self._entered = True
        check()
        remove_stale()
        with _registry_lock:
            _install_handlers()
            _live[self.tag] = self
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
        with _state_lock():
            _write_state(self._state_path, self._state)

    def _build(self) -> None:
        tag = self.tag
        with _state_lock():
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
            _write_state(self._state_path, self._state)

        prefix = self._pick_prefix()
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
            _run(["ip", "netns", "add", ns], f"creating the namespace {ns} failed")
        for ns in (S, R, D):
            # Quiet namespaces: no IPv6 chatter crossing the path.
            _run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                  "net.ipv6.conf.default.disable_ipv6=1"], f"configuring {ns} failed")
        for ns in (S, D):
            for key, value in {**ENDPOINT_BUFFERS, **self.endpoint_sysctls}.items():
                _run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"{key}={value}"],
                     f"setting {key}={value} in {ns} failed")
        _run(["ip", "link", "add", self._snd_if, "netns", S, "type", "veth", "peer", "name", self._rtr_snd_if,
              "netns", R], "creating the sender-side veth pair failed")
        _run(["ip", "link", "add", self._rcv_if, "netns", D, "type", "veth", "peer", "name", self._rtr_rcv_if,
              "netns", R], "creating the receiver-side veth pair failed")
        _run(["ip", "-n", R, "tuntap", "add", "mode", "tun", "name", self._tun], "creating the TUN device failed")
        for h in self.hosts:
            ns, dev = (S, self._snd_if) if h.side == "sender" else (D, self._rcv_if)
            _run(["ip", "-n", ns, "addr", "add", f"{self._addresses[h.name]}/24", "dev", dev],
                 f"adding {h.name}'s address failed")
        _run(["ip", "-n", R, "addr", "add", f"{snd_gw}/24", "dev", self._rtr_snd_if], "addressing the router failed")
        _run(["ip", "-n", R, "addr", "add", f"{rcv_gw}/24", "dev", self._rtr_rcv_if], "addressing the router failed")
        rp_off = [f"net.ipv4.conf.{k}.rp_filter=0" for k in ("all", "default", self._tun, self._rtr_snd_if,
                                                              self._rtr_rcv_if)]
        _run(["ip", "netns", "exec", R, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1",
              "net.ipv4.conf.all.send_redirects=0", *rp_off], "configuring the router failed")
        for ns, dev in ((S, self._snd_if), (R, self._rtr_snd_if), (R, self._rtr_rcv_if), (D, self._rcv_if)):
            _run(["ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"],
                 f"turning offloads off on {dev} failed")
        for ns, dev in ((S, "lo"), (S, self._snd_if), (R, "lo"), (R, self._rtr_snd_if), (R, self._rtr_rcv_if),
                        (R, self._tun), (D, "lo"), (D, self._rcv_if)):
            _run(["ip", "-n", ns, "link", "set", dev, "up"], f"bringing {dev} up failed")
        _run(["ip", "-n", R, "link", "set", self._tun, "txqueuelen", "10000"], "sizing the TUN queue failed")
        _run(["ip", "-n", S, "route", "add", "default", "via", snd_gw], "routing the sender failed")
        for host, r in sorted(self.routes.items()):
            _run(["ip", "-n", S, "route", "add", f"{self._addresses[host]}/32", "via", snd_gw, "mtu", "lock",
                  str(r.mtu), "initcwnd", str(r.initcwnd)],
                 f"routing the sender to {host} failed")
        _run(["ip", "-n", D, "route", "add", "default", "via", rcv_gw], "routing the receiver failed")
        self._static_neighbours(snd_gw, rcv_gw)

        b = self.bottleneck
        self._shape(self._rtr_rcv_if, b.rate_bps, b.buffer_pkts)
        self._shape(self._rtr_snd_if, b.reverse_rate_bps, b.reverse_buffer_pkts)

        self._start_delayline()

        _run(["ip", "-n", R, "route", "add", "default", "dev", self._tun, "table", str(_DELAY_TABLE)],
             "routing into the delay line failed")
        for dev in (self._rtr_snd_if, self._rtr_rcv_if):
            _run(["ip", "-n", R, "rule", "add", "iif", dev, "lookup", str(_DELAY_TABLE), "pref", "1000"],
                 "routing into the delay line failed")

        links = json.loads(_run(["ip", "-n", R, "-j", "link", "show"], "reading the router's links failed"))
        index = {ln["ifname"]: ln["ifindex"] for ln in links}
        pfifo = 0x00100000  # handle 10: of the pfifo child (see _shape)
        self._queue_keys = ((index[self._rtr_rcv_if], pfifo), (index[self._rtr_snd_if], pfifo))
        self._nl = _netlink_socket_in(R)

    def _pick_prefix(self) -> ipaddress.IPv4Network:
        used = _used_prefixes()
        for text in _CANDIDATE_PREFIXES:
            net = ipaddress.ip_network(text)
            if not any(net.overlaps(u) for u in used):
                return net
        raise TestbedError(f"every address range the testbed may use ({', '.join(_CANDIDATE_PREFIXES)}) "
                           "is routed on this machine")

    def _static_neighbours(self, snd_gw: str, rcv_gw: str) -> None:
        def mac(ns, dev):
            (info,) = json.loads(_run(["ip", "-n", ns, "-j", "link", "show", "dev", dev], f"reading {dev} failed"))
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
            _run(["ip", "-n", ns, "neigh", "replace", addr, "lladdr", lladdr, "dev", dev, "nud", "permanent"],
                 "adding a static neighbour failed")

    def _shape(self, dev: str, rate_bps: float, buffer_pkts: int) -> None:
        R = self.router_ns
        rate = f"{int(round(rate_bps))}bit"
        # stab overhead -14: htb charges each packet's IP length, not the 14-byte Ethernet
        # header on top, so the rate is the scenario's IP-level rate as the simulator's (without
        # it, 1448-byte segments get 50 x 1448/1514 = 47.8 of 50 Mbit/s instead of 48.3).
        _run(["ip", "netns", "exec", R, "tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "stab",
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
        _run(["ip", "netns", "exec", R, "tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:1",
              "htb", "rate", rate, "burst", str(4 * packet), "ceil", f"{int(round(1.25 * rate_bps))}bit",
              "cburst", "100", "quantum", str(packet)],
             f"setting the bottleneck rate on {dev} failed")
        _run(["ip", "netns", "exec", R, "tc", "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:",
              "pfifo", "limit", str(buffer_pkts)], f"setting the bottleneck buffer on {dev} failed")

    def _start_delayline(self) -> None:
        """Start the delay line in the router namespace and wait for its ready line. It is
        started from the thread that enters the network and ends when that thread's process
        ends, even by SIGKILL (``--parent-pid``, a parent-death signal: kernel/delayline.c)."""
        args = [str(DELAYLINE), "--dev", self._tun, "--parent-pid", str(os.getpid())]
        for (src, dst), d in sorted(self.pair_delays_ns.items()):
            args += ["--pair", f"{self.ip(src)},{self.ip(dst)},{d}"]
        for at, src, dst, d in self.delay_changes:
            args += ["--change", f"{at},{self.ip(src)},{self.ip(dst)},{d}"]
        with open(self._log_path, "wb") as log:
            self._proc = subprocess.Popen(["ip", "netns", "exec", self.router_ns, *args], stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=log, close_fds=True)
        # `ip netns exec` execs the program: this pid is the delay line's.
        self._state["delayline"] = {"pid": self._proc.pid, "start": process_start(self._proc.pid)}
        self._save_state()
        line = b""
        with selectors.DefaultSelector() as sel:
            sel.register(self._proc.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + _READY_TIMEOUT_S
            while not line.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise TestbedError(f"the delay line did not start within {_READY_TIMEOUT_S:g} s")
                chunk = os.read(self._proc.stdout.fileno(), 256)
                if not chunk:
                    self._proc.wait()
                    raise TestbedError(f"the delay line failed to start: {self._delayline_message()}")
                line += chunk
        words = line.split()
        if len(words) != 2 or words[0] != b"ready":
            raise TestbedError(f"the delay line said {line!r} instead of 'ready START_NS'")
        self._start_ns = int(words[1])

    # ---- removal ----

    def _teardown(self) -> list[str]:
        """Remove everything this network made; safe to call again (each step is idempotent).
        Returns the namespaces that could not be removed."""
        with _registry_lock:
            if self._nl is not None:
                self._nl.close()  # the socket pins the router namespace
                self._nl = None
            left: list[str] = []
            if self._proc is not None:
                if self._proc.poll() is None:
                    self._proc.terminate()
                    try:
                        self._proc.wait(timeout=2)
                    except subprocess.TimeoutExpired:
                        self._proc.kill()
                        self._proc.wait()
                if self._proc.stdout is not None:
                    self._proc.stdout.close()
            if self._state is not None:
                left = _destroy(self._state)
                if not left:
                    with _state_lock():
                        self._state_path.unlink(missing_ok=True)
                        self._log_path.unlink(missing_ok=True)
                    self._state = None
            _live.pop(self.tag, None)
            if not _live:
                _restore_handlers()
            return left
