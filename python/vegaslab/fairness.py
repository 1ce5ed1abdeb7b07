"""Jain's fairness index over plain numbers: the one metric the results store computes for every
run (its ``jain_throughput`` column) as well as the claims (:mod:`vegaslab.study.metrics`
re-exports it), so it sits below both, beside the results it is computed from.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

__all__ = ["jain_index"]


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index ``(sum x)^2 / (n * sum x^2)`` of ``values``.

    The AdaVegas paper, section IV ("Fairness", after Chiu and Jain [2]): the index lies between 1/n
    (one user has everything) and 1 (all equal). An empty input, one whose values are all zero,
    or one with a NaN or infinite value gives NaN: the index is undefined there. A missing value
    is not dropped, because the index of the remaining users would then look like a valid
    answer for all n of them (a claim must see missing data as missing).

    >>> jain_index([1, 1, 1, 1])
    1.0
    >>> jain_index([1, 0, 0, 0])
    0.25
    """
    x = np.asarray([v for v in values], dtype="float64")
    if x.size == 0 or not np.all(np.isfinite(x)):
        return math.nan
    sq = float(np.sum(x * x))
    if sq == 0.0:
        return math.nan
    s = float(np.sum(x))
    return s * s / (x.size * sq)
