"""Claims about a time course ("recovers fully", "stays at", "stabilises"), judged on the time
series itself rather than on its mean: a mean over 40-200 s can clear a level while the
series collapses twice inside the interval.

The rule, shared with the red shading of the report's reference lines: inside the interval
(``t0 < time_s <= t1``) the series is smoothed by a trailing ``window``-second mean over the
samples up to each one, those before ``t0`` included (1 s by default: the papers plot
throughput in windows of about a second, and a single 0.1 s sample is one or two packets); a
sample *departs* where that windowed value lies outside the allowed band, and each departing
sample stands for the sampling period ending at it, never before ``t0``. The claim's number
is the seconds of departure.

- ``seconds_below(ref, level, t0, t1[, window])``: seconds with the windowed series below
  ``level``;
- ``seconds_outside(ref, lo, hi, t0, t1[, window])``: seconds with it below ``lo`` or above
  ``hi`` ("stays within 10% of 1 Mbit/s from 40 s on" is
  ``seconds_outside(ref, 0.9e6, 1.1e6, 40, 200) == 0``).

A time course is judged seed by seed: the value is the *largest* of the seeds' seconds (the
worst seed), so that one seed's collapse is not averaged away by another seed's calm. The
numbers are computed by :func:`departures` on plain arrays; the evaluator reads the series
(:meth:`vegaslab.study.claims.evaluator.Evaluator._series_samples`).
"""

from __future__ import annotations

import math

import numpy as np

#: The functions of this module a claim can call.
TIMECOURSE_FUNCTIONS = ("seconds_below", "seconds_outside")
#: The trailing window, in seconds, when a claim does not give one.
DEFAULT_WINDOW_S = 1.0


def trailing_mean(y: np.ndarray, n: int) -> np.ndarray:
    """The mean of each sample and the ``n - 1`` before it (fewer at the start)."""
    c = np.concatenate([[0.0], np.cumsum(y, dtype=float)])
    idx = np.arange(1, len(y) + 1)
    lo = np.maximum(idx - n, 0)
    return (c[idx] - c[lo]) / (idx - lo)


def departures(t: np.ndarray, y: np.ndarray, lo: float, hi: float, t0: float, t1: float,
               window: float = DEFAULT_WINDOW_S) -> dict:
    """Where the trailing ``window``-second mean of ``y`` (samples at times ``t``, regular)
    leaves ``[lo, hi]`` inside ``t0 < t <= t1``: ``spans`` (start, end) in seconds, their total
    ``seconds`` and the number of ``samples`` in the interval. NaN samples are left out (no
    value at that time); ``lo`` may be ``-inf`` and ``hi`` ``inf``."""
    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    # The mean runs over the whole series up to t1, so the interval's first samples are
    # judged on a full window like the rest, not on the one or two samples after t0.
    known = (t <= t1) & np.isfinite(y)
    t, y = t[known], y[known]
    dt = float(np.median(np.diff(t))) if len(t) > 1 else window
    n = max(1, int(round(window / dt))) if dt > 0 else 1
    inside = t > t0
    t, smooth = t[inside], trailing_mean(y, n)[inside]
    if not len(t):
        return {"spans": [], "seconds": 0.0, "samples": 0}
    out = (smooth < lo) | (smooth > hi)
    edges = np.diff(np.concatenate([[0], out.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    # Each departing sample stands for the sampling period ending at it, never before t0. Times
    # are whole microseconds of simulated time: rounding there drops float noise (0.1 - 0.1 =
    # -1.4e-15; + 0.0 turns the -0.0 it rounds to into 0.0) without moving a span.
    spans = [[round(max(float(t[i] - dt), t0), 6) + 0.0, round(float(t[j]), 6)] for i, j in zip(starts, ends)]
    return {"spans": spans, "seconds": round(float(sum(b - a for a, b in spans)), 6), "samples": int(len(t))}


def band(name: str, numbers: list[float]) -> tuple[float, float, float, float, float]:
    """``(lo, hi, t0, t1, window)`` from a claim's numbers after the reference:
    ``seconds_below``: level, t0, t1[, window]; ``seconds_outside``: lo, hi, t0, t1[, window].
    Raises ValueError with the call's form when the numbers do not fit it."""
    if name == "seconds_below":
        form, need = "seconds_below(ref, level, t0, t1[, window])", 3
    else:
        form, need = "seconds_outside(ref, lo, hi, t0, t1[, window])", 4
    if len(numbers) not in (need, need + 1):
        raise ValueError(f"{form} takes a reference and {need} or {need + 1} numbers")
    window = numbers[need] if len(numbers) > need else DEFAULT_WINDOW_S
    if name == "seconds_below":
        lo, hi, (t0, t1) = numbers[0], math.inf, numbers[1:3]
    else:
        lo, hi, t0, t1 = numbers[:4]
        if lo > hi:
            raise ValueError(f"{form}: lo ({lo:g}) is above hi ({hi:g})")
    if not t0 < t1:
        raise ValueError(f"{form}: t0 ({t0:g}) must be before t1 ({t1:g})")
    if not window > 0:
        raise ValueError(f"{form}: the window must be positive (got {window:g})")
    return lo, hi, t0, t1, window
