"""Weigle and Feng's heuristics for TCP Vegas' alpha and beta.

From "A Case for TCP Vegas in High-Performance Computational Grids" (LA-UR-01-3420;
``shared/papers/vegas-grids.txt``, sections 4.1-4.3). The same formulas as the Rust core's
``vegaslab_cc::heuristics``; a scenario can also name them in a Vegas-family flow's params
(``heuristic = "queue" | "red" | "red-exact" | "red-per-flow"``, docs/scenario-format.md).

Every function takes packet counts (whole numbers) and returns ``(alpha, beta)`` in packets,
or raises :class:`ValueError` naming the offending input.

>>> from_queue_size(25)
(7, 8)
>>> from_red_per_flow(8948, 100)
(88, 89)
"""

from __future__ import annotations

import numbers

__all__ = ["from_queue_size", "from_red", "from_red_exact", "from_red_per_flow"]


def _whole(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name}: must be a whole number of packets, got {value!r}")
    return int(value)


def from_queue_size(queue: int) -> tuple[int, int]:
    """Section 4.1: ``alpha = floor(q/3) - 1``, ``beta = floor(q/3)`` for a buffer of q packets.

    Derived from Reno taking 75% of the bandwidth and Vegas 100%, with bandwidth following
    buffer occupancy. ``q = 25`` gives ``(7, 8)``. Needs ``q >= 3`` (else alpha < 0).
    """
    q = _whole("queue", queue)
    if q < 3:
        raise ValueError(f"queue: must be >= 3 packets (alpha = floor(queue/3) - 1 would be negative), got {q}")
    third = q // 3
    return third - 1, third


def _check_red_order(red_min: int, red_max: int) -> None:
    if red_max < red_min:
        raise ValueError(f"red_max: must be >= red_min ({red_min}), got {red_max}")


def from_red(red_min: int, red_max: int) -> tuple[int, int]:
    """Section 4.2: the RED thresholds as the apparent queue: ``alpha = RED_min - 2``,
    ``beta = RED_max - 2``. Needs ``2 <= RED_min <= RED_max``.
    """
    lo, hi = _whole("red_min", red_min), _whole("red_max", red_max)
    if lo < 2:
        raise ValueError(f"red_min: must be >= 2 packets (alpha = red_min - 2 would be negative), got {lo}")
    _check_red_order(lo, hi)
    return lo - 2, hi - 2


def from_red_exact(red_min: int, red_max: int) -> tuple[int, int]:
    """Section 4.2, second setting: ``alpha = RED_min``, ``beta = RED_max`` (Vegas then wins
    everywhere, at the cost of loss and utilisation). Needs ``1 <= RED_min <= RED_max``.
    """
    lo, hi = _whole("red_min", red_min), _whole("red_max", red_max)
    if lo < 1:
        raise ValueError(f"red_min: must be >= 1 packet, got {lo}")
    _check_red_order(lo, hi)
    return lo, hi


def from_red_per_flow(red_min: int, flows: int) -> tuple[int, int]:
    """Sections 4.3-4.4: alpha and beta "slightly smaller" than ``RED_min / N``, the effective
    fair queueing space per flow.

    "Slightly below", numerically: beta is the largest whole number strictly below
    ``RED_min / N`` (``(RED_min - 1) // N``) and ``alpha = beta - 1``, the one-packet gap of
    section 4.1. Network 3 (RED_min 8948, N = 100, 89.48): ``(88, 89)``, the paper's
    "slightly less than 8948/100 ~ 89". Network 2 (6711, 50): ``(133, 134)``. Needs
    ``RED_min > N``.
    """
    lo, n = _whole("red_min", red_min), _whole("flows", flows)
    if n < 1:
        raise ValueError(f"flows: must be >= 1, got {n}")
    if lo <= n:
        raise ValueError(
            f"red_min: must be > flows ({n}) so that alpha, beta just below red_min/flows are >= 0, got {lo}"
        )
    beta = (lo - 1) // n
    return beta - 1, beta
