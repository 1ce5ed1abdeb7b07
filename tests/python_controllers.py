"""Python controllers the tests name by import path (``py:python_controllers:<Class>``): this
directory is on ``sys.path`` under pytest, and a Dask worker is started with it there."""

from __future__ import annotations

import vegaslab


class Reno(vegaslab.Controller):
    """ns-2's Reno window rule (``opencwnd`` with ``windowOption_ 1``) and its halving
    (``slowdown()``), written out in full so that every hook that matters runs in Python."""

    def cong_avoid(self, w, ack):
        if w.cwnd < w.ssthresh:
            w.cwnd += 1.0
        else:
            w.cwnd += 1.0 / w.cwnd

    def ssthresh(self, w, loss):
        half = loss.window / 2.0
        return max(int(half), 2), (half if loss.kind == "fast_retransmit" else 1.0)


class CountingReno(Reno):
    """Reno that counts its ACKs and losses and reports them as time-series variables."""

    def __init__(self):
        self.acks = 0
        self.losses = 0

    def cong_avoid(self, w, ack):
        self.acks += 1
        super().cong_avoid(w, ack)

    def ssthresh(self, w, loss):
        self.losses += 1
        return super().ssthresh(w, loss)

    def variables(self):
        return {"acks": float(self.acks), "losses": float(self.losses)}


class FailsAfter50Acks(Reno):
    """Raises in ``cong_avoid`` on its 51st ACK."""

    def __init__(self):
        self.acks = 0

    def cong_avoid(self, w, ack):
        self.acks += 1
        if self.acks > 50:
            raise ZeroDivisionError("the idea divided by zero")
        super().cong_avoid(w, ack)


class ZeroWindow(Reno):
    """Sets a window the sender cannot use."""

    def cong_avoid(self, w, ack):
        w.cwnd = 0.0


class LinuxSsthresh(Reno):
    """Answers ``ssthresh`` as Linux's op does: an int (cwnd continues from it)."""

    def ssthresh(self, w, loss):
        return max(int(w.cwnd) // 2, 2)


class NotAController:
    """A class that is not a :class:`vegaslab.Controller`."""


class Recording(Reno):
    """Reno that records every hook call it gets, with what the hook was given."""

    def __init__(self):
        self.calls = []

    def init(self, w):
        self.calls.append(("init", w.cwnd, w.ssthresh))

    def pkts_acked(self, w, sample):
        self.calls.append(("pkts_acked", sample.rtt, sample.rtt_us, sample.now))

    def set_state(self, w, state):
        self.calls.append(("set_state", state))

    def cwnd_event(self, w, event):
        self.calls.append(("cwnd_event", event.kind))

    def cong_avoid(self, w, ack):
        self.calls.append(("cong_avoid", ack.acked, w.in_flight, w.in_slow_start))
        super().cong_avoid(w, ack)

    def ssthresh(self, w, loss):
        self.calls.append(("ssthresh", loss.kind, loss.window))
        return super().ssthresh(w, loss)

    def variables(self):
        names = {c[0] for c in self.calls}
        return {f"{hook}_calls": float(sum(1 for c in self.calls if c[0] == hook)) for hook in sorted(names)}
