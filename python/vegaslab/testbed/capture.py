"""A packet capture of the bottleneck during a testbed run: Wireshark's ``dumpcap`` on the
router's egress interface of each captured direction, headers only.

Where and why there: a capture on a veth's egress sees each packet when it leaves the
bottleneck queue (Linux hands a packet to its taps after the qdisc released it,
``dev_queue_xmit_nit``), so the file holds the queue's departures with their times. The
filter ``outbound`` keeps only what leaves the router on that interface, so no packet is in
the file twice (arriving on one interface, leaving on the other). Both directions go into one
file in libpcap format (``editcap -F pcap``: a pcap reader needs nothing more); a packet's
direction is its Ethernet source, the router interface's MAC, which the record gives
(``eth.src == MAC`` in Wireshark or tshark).

The snapshot length keeps headers only (128 bytes: Ethernet 14, IPv4 20, TCP 20 with up to 40
bytes of options and the AQT option) so a file stays small: about 150 bytes a packet.
``dumpcap`` comes with Wireshark (``make tshark``, scripts/install-tshark.sh).
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .errors import TestbedError

__all__ = ["Capture", "SNAPLEN", "FILE_NAME", "check"]

#: Bytes kept of each packet: every header, no payload.
SNAPLEN = 128
#: The capture's name in a run directory.
FILE_NAME = "bottleneck.pcap"
_START_TIMEOUT_S = 10.0
_PR_SET_PDEATHSIG = 1


def check() -> None:
    """Raise :class:`TestbedError` unless Wireshark's capture tools are installed."""
    for tool in ("dumpcap", "editcap", "capinfos"):
        if shutil.which(tool) is None:
            raise TestbedError(f"{tool} is not installed (Wireshark's; `make tshark` installs it), which the "
                               f"bottleneck capture needs; or run without it (--no-capture)")


def _die_with_parent() -> None:
    """``preexec_fn``: the capture ends (SIGTERM) when the process that started it ends, even by
    SIGKILL, so no ``dumpcap`` outlives its run."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


class Capture:
    """``dumpcap`` in namespace ``ns`` on ``interfaces`` (direction -> device), writing
    ``directory/FILE_NAME``; a context manager. :attr:`record` is what ``meta["trace"]``
    says of it once the block has ended."""

    def __init__(self, ns: str, interfaces: dict[str, str], directory: Path, *, queues: dict[str, str],
                 snaplen: int = SNAPLEN):
        self.ns, self.interfaces, self.directory = ns, dict(interfaces), Path(directory)
        self.queues, self.snaplen = dict(queues), snaplen
        self.path = self.directory / FILE_NAME
        self._raw = self.directory / ".bottleneck.pcapng"
        self._proc: subprocess.Popen | None = None
        self._t0_unix_ns: int | None = None
        self.record: dict | None = None

    def _mac(self, dev: str) -> str:
        out = subprocess.run(["ip", "-n", self.ns, "-j", "link", "show", "dev", dev], capture_output=True,
                             text=True)
        return json.loads(out.stdout)[0]["address"] if out.returncode == 0 else ""

    def __enter__(self) -> "Capture":
        check()
        if self.path.exists() or self._raw.exists():
            raise TestbedError(f"{self.path}: already exists; the capture is always a new file")
        args = ["ip", "netns", "exec", self.ns, "dumpcap", "-q", "-n", "-s", str(self.snaplen), "-f", "outbound"]
        for dev in self.interfaces.values():
            args += ["-i", dev]
        self._proc = subprocess.Popen([*args, "-w", str(self._raw)], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      preexec_fn=_die_with_parent)
        # dumpcap says "Capturing on ..." once every interface is open.
        said = b""
        with selectors.DefaultSelector() as sel:
            sel.register(self._proc.stderr, selectors.EVENT_READ)
            deadline = time.monotonic() + _START_TIMEOUT_S
            while b"Capturing on" not in said:
                left = deadline - time.monotonic()
                chunk = os.read(self._proc.stderr.fileno(), 4096) if left > 0 and sel.select(left) else b""
                if not chunk:
                    self._stop()
                    text = said.decode(errors="replace").strip().splitlines()
                    raise TestbedError(f"the bottleneck capture (dumpcap) did not start: "
                                       f"{text[-1] if text else 'no answer within 10 s'}")
                said += chunk
        self._said = said
        return self

    def t0(self, t0_monotonic_ns: int) -> None:
        """Note the run's time zero (``CLOCK_MONOTONIC``) as the capture's clock (real time) has
        it, so a packet's time in the file can be placed on the run's time axis."""
        self._t0_unix_ns = t0_monotonic_ns + (time.time_ns() - time.monotonic_ns())

    def _stop(self) -> bytes:
        """Stop dumpcap (SIGTERM: it writes what it has and reports its counts); its stderr."""
        if self._proc is None:
            return b""
        if self._proc.poll() is None:
            self._proc.terminate()
        try:
            _, err = self._proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            _, err = self._proc.communicate()
        self._proc = None
        return err or b""

    def __exit__(self, exc_type, exc, tb) -> None:
        macs = {direction: self._mac(dev) for direction, dev in self.interfaces.items()}
        said = (self._said + self._stop()).decode(errors="replace")
        if exc_type is not None:
            self._raw.unlink(missing_ok=True)
            return
        try:
            if not self._raw.exists():
                raise TestbedError(f"the bottleneck capture wrote no file: {said.strip().splitlines()[-1:]}")
            done = subprocess.run(["editcap", "-F", "pcap", str(self._raw), str(self.path)], capture_output=True,
                                  text=True)
            if done.returncode != 0:
                raise TestbedError(f"converting the bottleneck capture to pcap failed: {done.stderr.strip()}")
        finally:
            self._raw.unlink(missing_ok=True)
        dropped = sum(int(m) for m in re.findall(r"received/dropped on interface '[^']*': \d+/(\d+)", said))
        self.record = {
            "file": FILE_NAME, "format": "pcap", "source": "testbed: dumpcap on the router's egress",
            "packets": packet_count(self.path), "dropped_by_capture": dropped, "snaplen": self.snaplen,
            "t0_unix_ns": self._t0_unix_ns,
            "directions": {direction: {"queue": self.queues.get(direction), "interface": dev, "eth_src": macs[direction]}
                           for direction, dev in self.interfaces.items()},
        }


def packet_count(path: Path) -> int:
    """The packets in a capture file (``capinfos``)."""
    out = subprocess.run(["capinfos", "-T", "-r", "-c", "-M", str(path)], capture_output=True, text=True)
    if out.returncode != 0:
        raise TestbedError(f"counting the packets of {path} failed: {out.stderr.strip()}")
    return int(out.stdout.split()[-1])
