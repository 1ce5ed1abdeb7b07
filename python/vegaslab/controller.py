"""Congestion control written in Python: the slow path for trying an idea before writing it in
Rust or BPF (docs/your-algorithm.md).

Subclass :class:`Controller`, put the class in an importable module and name it in a scenario as
``cc = "py:package.module:Class"``, or give the class itself as an override's value:
``vegaslab.run(scenario, overrides={"flows[0].cc": MyClass})``. The
hooks are Linux's ``struct tcp_congestion_ops`` (``include/net/tcp.h``), as the core's Rust
controllers have them (``vegaslab_cc::controller``): the sender calls each where Linux calls the
same-named op, with the sender's variables in a :class:`Window` whose ``cwnd`` and ``ssthresh``
the hook may set. A hook that a class does not override is not called at all (the core runs the
same default itself), so a class pays only for the hooks it has.

A controller has no clock but the ``now`` its hooks are given, and no randomness but what it
seeds itself: the same scenario and seed give the same results. Every connection gets a fresh
instance (the class is called without arguments). The first exception a hook raises stops the
run with :class:`vegaslab.ControllerError`, naming the class and the hook, with the exception
as its cause.

Each hook call takes the GIL and builds a few small objects: a Python controller costs far more
per packet than a Rust one (docs/performance.md, "Python controllers").
"""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ._core import Ack, CwndEvent, Loss, RttSample, Window

__all__ = ["Controller", "HOOKS", "load", "spec_of"]

#: The hooks a subclass may override, besides ``cong_avoid`` (always called).
HOOKS = ("init", "pkts_acked", "ssthresh", "set_state", "cwnd_event", "undo_cwnd", "variables")

#: What names a Python controller in a scenario's ``cc``.
PREFIX = "py:"


class Controller:
    """A congestion controller in Python; subclass it and override the hooks you need.

    The hooks and what they are given (all times in integer nanoseconds of simulated time, RTTs
    in seconds, windows in packets):

    - ``w``, a :class:`Window`: ``cwnd`` (float) and ``ssthresh`` (int) may be set by
      ``init``, ``pkts_acked``, ``cong_avoid`` and ``cwnd_event``; read only are ``in_flight``,
      ``next_seq``, ``last_ack``, ``max_window`` (the receiver window), ``cwnd_limited`` and
      ``in_slow_start``.
    - ``ack`` (``cong_avoid``): ``seqno``, ``acked`` (packets newly acknowledged), ``now``,
      ``elapsed`` (seconds since the first packet).
    - ``sample`` (``pkts_acked``): ``now``, ``rtt``, ``rtt_us``, ``queue_forward_s``,
      ``queue_backward_s`` (router-reported queueing, ``None`` unless the path stamps it).
    - ``loss`` (``ssthresh``): ``kind`` (``"fast_retransmit"`` or ``"timeout"``) and
      ``window``, the window the reduction starts from.
    """

    def init(self, w: Window) -> None:
        """The connection starts (Linux ``init``); may set the initial window."""

    def pkts_acked(self, w: Window, sample: RttSample) -> None:
        """An ACK gave an RTT sample, Karn's rule applied (Linux ``pkts_acked``)."""

    def cong_avoid(self, w: Window, ack: Ack) -> None:
        """A new cumulative ACK outside loss recovery (Linux ``cong_avoid``): grow the window.
        Every controller must have it, as every Linux congestion control has ``cong_avoid`` (or
        ``cong_control``)."""
        raise NotImplementedError(f"{type(self).__qualname__} must define cong_avoid")

    def ssthresh(self, w: Window, loss: Loss) -> int | tuple[int, float]:
        """A loss (Linux ``ssthresh``): return the new ssthresh, and cwnd continues from it after
        a fast retransmit (from 1 after a timeout), as in Linux; or return ``(ssthresh, cwnd)``
        to set both. The default is ns-2's Reno halving (``slowdown()``): ssthresh half the
        window (at least 2), cwnd half the window after a fast retransmit, 1 after a timeout,
        the Rust default's very numbers."""
        half = loss.window / 2.0
        return max(int(half), 2), (half if loss.kind == "fast_retransmit" else 1.0)

    def set_state(self, w: Window, state: str) -> None:
        """Loss recovery was entered or left (Linux ``set_state``): ``state`` is ``"open"``,
        ``"disorder"``, ``"cwr"``, ``"recovery"`` or ``"loss"``."""

    def cwnd_event(self, w: Window, event: CwndEvent) -> None:
        """An event outside the ACK path (Linux ``cwnd_event``): ``event.kind`` is
        ``"first_ack"`` (with ``elapsed``), ``"tx_start"`` (sending resumes after idle; ``now``,
        ``last_send``) or ``"cwnd_restart"``."""

    def undo_cwnd(self, w: Window) -> float:
        """The window to restore when a loss proves spurious (Linux ``undo_cwnd``); the default
        keeps the current one. The ns-2 senders never call it."""
        return w.cwnd

    def variables(self) -> dict[str, float]:
        """The algorithm's own variables for the time series (column name to number, the same
        names on every call; a time's name ends in ``_s``). Not a Linux op."""
        return {}


def overridden_hooks(cls: type) -> list[str]:
    """The optional hooks ``cls`` defines itself (or inherits from a class other than
    :class:`Controller`)."""
    return [h for h in HOOKS if getattr(cls, h) is not getattr(Controller, h)]


def spec_of(cls: type) -> str:
    """The ``cc`` name of a controller class, ``py:<module>:<class>``; the class must be defined
    at a module's top level (a worker imports it by that name)."""
    if not (isinstance(cls, type) and issubclass(cls, Controller)):
        raise TypeError(f"{cls!r} is not a subclass of vegaslab.Controller")
    if "." in cls.__qualname__ or "<" in cls.__qualname__ or cls.__module__ == "__main__":
        raise ValueError(f"{cls.__module__}.{cls.__qualname__}: a controller class must be defined at the top "
                         "level of an importable module (not in a function, a class or __main__)")
    return f"{PREFIX}{cls.__module__}:{cls.__qualname__}"


def load(spec: str) -> tuple[type, list[str], str | None]:
    """The class a ``py:`` name (given without its prefix or with it: ``package.module:Class``)
    names, the optional hooks it overrides and the SHA-256 of its module's source file (None
    for a module without one); a ``ValueError`` says, in one sentence, why it cannot be used.
    The core calls this once per flow before a run and when it normalises a scenario (its
    message then follows the flow's ``cc`` field): the hash goes into the normalised scenario,
    so that a results store never serves a run of the class as it was before an edit. Only the
    class's own module is hashed, not the modules it imports."""
    text = spec.removeprefix(PREFIX)
    module_name, _, class_name = text.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import module \"{module_name}\" for \"{PREFIX}{text}\" ({exc}); "
                         "it must be importable where the run happens (on sys.path, or installed)") from exc
    except Exception as exc:  # noqa: BLE001 - the user's module raised while being imported
        raise ValueError(f"importing module \"{module_name}\" for \"{PREFIX}{text}\" raised "
                         f"{type(exc).__name__}: {exc}") from exc
    cls = getattr(module, class_name, None)
    if cls is None:
        raise ValueError(f"module \"{module_name}\" has no class \"{class_name}\"")
    if not (isinstance(cls, type) and issubclass(cls, Controller)):
        raise ValueError(f"\"{module_name}:{class_name}\" is not a subclass of vegaslab.Controller")
    return cls, overridden_hooks(cls), source_sha256(module)


def source_sha256(module: ModuleType) -> str | None:
    """SHA-256 (hex) of a module's source file, None when it has none."""
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return None
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None
