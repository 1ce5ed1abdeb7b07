"""RoVegas' AQT option on a testbed: the TCP ends and the AQT-enabled router hops.

RoVegas needs routers that stamp accumulated queueing time (AQT) into probing packets and a
receiver that echoes it (the RoVegas paper, Chan et al., "Design and performance evaluation of an
improved TCP congestion avoidance scheme", section 3). On this kernel the paper's
IP option becomes an RFC 6994 experimental TCP option (kind 253, ExID 0x564C, 12 bytes:
AQT and AQT-echo in µs), see ``kernel/aqt.h`` for the layout and why:

- the ends: a cgroup sock_ops program (``kernel/aqt_sockops.bpf.c``) writes the option on every
  segment of every TCP socket created in a dedicated cgroup v2 (AQT = 0, AQT-echo = the AQT last
  received) and parses the peer's into the socket-storage map ``vl_aqt_stamps``, pinned at
  ``/sys/fs/bpf/vegaslab/`` and shared with ``vl_rovegas`` (which reads it in pkts_acked);
- a router hop: tc clsact egress on the router's interface subtracts now (µs) from AQT, before
  the qdisc; tc ingress on the next hop's interface (its veth peer, in another namespace, same
  clock) adds now back, so AQT grows by the qdisc wait plus serialisation
  (``kernel/aqt_tc.bpf.c``).

>>> with AqtPath(hops=[(("rtr", "vlXrr"), ("rcv", "vlXr")),      # doctest: +SKIP
...                    (("rtr", "vlXrs"), ("snd", "vlXs"))]) as aqt:
...     subprocess.Popen([...], preexec_fn=aqt.enter)  # the flow processes join the cgroup

Both flow ends must be in the cgroup (the data sender writes the option on data, the receiver
on its ACKs; an accepted socket inherits its listener's cgroup). Everything is removed on exit
(also on an exception): the tc programs (``clsact`` qdiscs) of every hop whose namespace still
exists, the sock_ops attachment and the cgroup (its remaining processes move to the parent).
A cgroup left by an owner that died without unwinding (SIGKILL, or SIGTERM after the
Network's handler re-raised it) is removed by the next :class:`AqtPath` start
(:func:`remove_stale`); the tc programs go with the namespaces. The pinned map stays: ``vl_rovegas`` registrations hold it, and a
later sock_ops attachment must find the same map (an empty socket-storage map costs nothing).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import os
import socket
import struct
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from ..kernel import BUILD_DIR, KERNEL_DIR, KernelError, check, ensure_bpffs, run_command
from .tags import b36

__all__ = ["AqtPath", "Stamp", "read_stamp", "map_id", "remove_stale", "cgroup2_root", "PIN_DIR", "MAP_PIN"]

#: libbpf's pin root for the shared map (``VL_AQT_PIN_DIR`` in ``kernel/aqt.h``).
PIN_DIR = Path("/sys/fs/bpf/vegaslab")
MAP_PIN = PIN_DIR / "vl_aqt_stamps"
SOCKOPS_OBJ = BUILD_DIR / "vl_aqt_sockops.bpf.o"
EGRESS_OBJ = BUILD_DIR / "vl_aqt_egress.bpf.o"
INGRESS_OBJ = BUILD_DIR / "vl_aqt_ingress.bpf.o"
_CGROUP_PREFIX = "vegaslab-aqt-"
_counter = itertools.count()


def _run(cmd: list[str], what: str) -> str:
    return run_command(cmd, what).stdout


def cgroup2_root() -> Path:
    """Where the cgroup v2 hierarchy is mounted (``/sys/fs/cgroup`` on a unified host,
    ``/sys/fs/cgroup/unified`` on a hybrid one); :class:`KernelError` if nowhere."""
    for line in Path("/proc/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2] == "cgroup2":
            return Path(fields[1])
    raise KernelError("no cgroup v2 hierarchy is mounted, which BPF sock_ops (the AQT option) needs")


def build() -> None:
    """Build the AQT objects and the loader (``make -C kernel aqt loader``)."""
    check()
    _run(["make", "-s", "-C", str(KERNEL_DIR), f"PYTHON={sys.executable}", "aqt", "loader"], "building the AQT programs failed")


def _owner_alive(name: str) -> bool:
    try:
        pid = int(name[len(_CGROUP_PREFIX):].split("-")[0], 36)
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_cgroup(path: Path) -> None:
    parent = path.parent / "cgroup.procs"
    try:
        pids = (path / "cgroup.procs").read_text().split()
    except OSError:
        return
    for pid in pids:
        try:
            parent.write_text(pid)
        except OSError:
            pass  # exited meanwhile
    try:
        path.rmdir()  # releases the cgroup's BPF attachments
    except OSError:
        pass


def remove_stale() -> None:
    """Remove the AQT cgroups (and so their sock_ops attachments) of owners that died."""
    try:
        root = cgroup2_root()
    except KernelError:
        return
    for d in root.glob(_CGROUP_PREFIX + "*"):
        if d.is_dir() and not _owner_alive(d.name):
            _remove_cgroup(d)


class AqtPath:
    """The AQT option on a path: a dedicated cgroup with the sock_ops program, and the tc
    programs on each hop; a context manager (module docstring).

    ``hops``: ``((router_ns, router_dev), (next_ns, next_dev))`` pairs, one per direction to
    instrument: egress on the router's device, ingress on the next hop's (its veth peer).
    ``None`` as a namespace is the initial one."""

    def __init__(self, hops: list[tuple[tuple[str | None, str], tuple[str | None, str]]]):
        self.hops = [tuple(map(tuple, h)) for h in hops]
        for i, h in enumerate(self.hops):
            if len(h) != 2 or any(len(e) != 2 or not isinstance(e[1], str) or not e[1] for e in h):
                raise KernelError(f"hops[{i}]: expected ((router_ns, router_dev), (next_ns, next_dev)), got {h!r}")
        self.cgroup: Path | None = None
        self.prog_id: int | None = None
        self._clsact: list[tuple[str | None, str]] = []

    def enter(self) -> None:
        """Move the calling process into the cgroup (``preexec_fn`` of a flow process)."""
        if self.cgroup is None:
            raise KernelError("the AQT path is not set up: use it inside a with block")
        (self.cgroup / "cgroup.procs").write_text("0")

    @staticmethod
    def _tc(ns: str | None, *args: str) -> list[str]:
        return (["ip", "netns", "exec", ns] if ns else []) + ["tc", *args]

    def __enter__(self) -> "AqtPath":
        build()
        ensure_bpffs()
        remove_stale()
        root = cgroup2_root()
        try:
            self.cgroup = root / f"{_CGROUP_PREFIX}{b36(os.getpid())}-{next(_counter)}"
            self.cgroup.mkdir()
            out = _run([str(BUILD_DIR / "vl-loader"), "sockops", str(SOCKOPS_OBJ), str(self.cgroup)],
                       "attaching the AQT sock_ops program failed")
            self.prog_id = int(out.split()[0])
            for (rns, rdev), (nns, ndev) in self.hops:
                for ns, dev, direction, obj in ((rns, rdev, "egress", EGRESS_OBJ), (nns, ndev, "ingress", INGRESS_OBJ)):
                    if (ns, dev) not in self._clsact:
                        _run(self._tc(ns, "qdisc", "add", "dev", dev, "clsact"), f"adding clsact on {dev} failed")
                        self._clsact.append((ns, dev))
                    _run(self._tc(ns, "filter", "add", "dev", dev, direction, "bpf", "direct-action", "obj", str(obj),
                                  "sec", "tc"), f"attaching the AQT {direction} program on {dev} failed")
        except BaseException:
            self._teardown()
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._teardown()

    def _teardown(self) -> None:
        for ns, dev in reversed(self._clsact):
            # Gone with its namespace is fine: the programs went with it.
            subprocess.run(self._tc(ns, "qdisc", "del", "dev", dev, "clsact"), capture_output=True)
        self._clsact.clear()
        if self.cgroup is not None:
            if self.prog_id is not None:
                subprocess.run(["bpftool", "cgroup", "detach", str(self.cgroup), "sock_ops", "id", str(self.prog_id)],
                               capture_output=True)
            _remove_cgroup(self.cgroup)
            self.cgroup = None
            self.prog_id = None


# ---- reading a socket's stamp from user space (observability and tests) ----

class Stamp(NamedTuple):
    """The last AQT option a socket received. On a data sender, ``rx_aqt_us`` is the backward
    (ACK path) queueing time and ``rx_echo_us`` the forward (data path) one."""
    rx_aqt_us: int
    rx_echo_us: int
    count: int
    written: int


_BPF_MAP_LOOKUP_ELEM, _BPF_OBJ_GET, _BPF_MAP_GET_FD_BY_ID, _BPF_OBJ_GET_INFO_BY_FD = 1, 7, 14, 15
_SYS_BPF = {"x86_64": 321, "aarch64": 280}.get(os.uname().machine)
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _bpf(cmd: int, attr: bytes) -> int:
    if _SYS_BPF is None:
        raise KernelError(f"reading BPF maps is not supported on {os.uname().machine}")
    buf = ctypes.create_string_buffer(attr, 128)
    r = _libc.syscall(_SYS_BPF, cmd, buf, 128)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def map_id() -> int:
    """The kernel id of the pinned AQT stamps map (for :func:`read_stamp` in a process that
    cannot see /sys/fs/bpf: ``ip netns exec`` mounts a fresh /sys)."""
    fd = _open_map(None)
    try:
        info = ctypes.create_string_buffer(80)
        _bpf(_BPF_OBJ_GET_INFO_BY_FD, struct.pack("=IIQ", fd, 80, ctypes.addressof(info)))
        return struct.unpack_from("=I", info.raw, 4)[0]  # struct bpf_map_info: type, id, ...
    finally:
        os.close(fd)


def _open_map(id_: int | None) -> int:
    try:
        if id_ is not None:
            return _bpf(_BPF_MAP_GET_FD_BY_ID, struct.pack("=III", id_, 0, 0))
        path = ctypes.create_string_buffer(str(MAP_PIN).encode())
        return _bpf(_BPF_OBJ_GET, struct.pack("=QII", ctypes.addressof(path), 0, 0))
    except OSError as e:
        where = f"id {id_}" if id_ is not None else str(MAP_PIN)
        raise KernelError(f"cannot open the AQT stamps map ({where}): {e.strerror}") from None


def read_stamp(sock: socket.socket | int, map_id: int | None = None) -> Stamp | None:
    """The socket's AQT stamp (``None`` if it never sent or received the option). The key of
    a socket-storage map, from user space, is the socket's file descriptor. The map is opened
    by its pin, or by ``map_id`` (:func:`map_id`) where the pin is not visible."""
    fd = sock.fileno() if isinstance(sock, socket.socket) else int(sock)
    map_fd = _open_map(map_id)
    try:
        key = ctypes.c_int(fd)
        value = ctypes.create_string_buffer(16)
        try:
            _bpf(_BPF_MAP_LOOKUP_ELEM, struct.pack("=IIQQQ", map_fd, 0, ctypes.addressof(key),
                                                   ctypes.addressof(value), 0))
        except OSError as e:
            if e.errno == 2:  # ENOENT: no storage on this socket
                return None
            raise KernelError(f"reading the AQT stamp failed: {e.strerror}") from None
        return Stamp(*struct.unpack("=IIII", value.raw))
    finally:
        os.close(map_fd)
