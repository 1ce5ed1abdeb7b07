"""Weigle and Feng's heuristics for TCP Vegas' alpha and beta.

From the grids paper, Weigle and Feng, "A Case for TCP Vegas in High-Performance Computational
Grids" (LA-UR-01-3420), sections 4.1-4.3 (docs/papers.md). The formulas live in the Rust core
(``vegaslab_cc::heuristics``, each documented there with the paper's words); these functions
call it, so Python and scenario files (``heuristic = "queue" | "red" | "red-exact" |
"red-per-flow"`` in a Vegas-family flow's params, docs/scenario-format.md) share one copy.

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
    value = int(value)
    if not 0 <= value < 2**64:
        raise ValueError(f"{name}: must be between 0 and 2**64 - 1 packets, got {value}")
    return value


def _core_heuristic(name: str, **inputs: object) -> tuple[int, int]:
    from . import _core

    alpha, beta = _core.heuristic(name, [_whole(k, v) for k, v in inputs.items()])
    return int(alpha), int(beta)


def from_queue_size(queue: int) -> tuple[int, int]:
    """Section 4.1: ``alpha = floor(q/3) - 1``, ``beta = floor(q/3)`` for a buffer of q packets.
    ``q = 25`` gives ``(7, 8)``. Needs ``q >= 3``."""
    return _core_heuristic("queue", queue=queue)


def from_red(red_min: int, red_max: int) -> tuple[int, int]:
    """Section 4.2: the RED thresholds as the apparent queue: ``alpha = RED_min - 2``,
    ``beta = RED_max - 2``. Needs ``2 <= RED_min <= RED_max``."""
    return _core_heuristic("red", red_min=red_min, red_max=red_max)


def from_red_exact(red_min: int, red_max: int) -> tuple[int, int]:
    """Section 4.2, second setting: ``alpha = RED_min``, ``beta = RED_max``. Needs
    ``1 <= RED_min <= RED_max``."""
    return _core_heuristic("red-exact", red_min=red_min, red_max=red_max)


def from_red_per_flow(red_min: int, flows: int) -> tuple[int, int]:
    """Sections 4.3-4.4: beta the largest whole number strictly below ``RED_min / N``,
    ``alpha = beta - 1``. Network 3 (8948, 100) gives ``(88, 89)``. Needs ``RED_min > N``."""
    return _core_heuristic("red-per-flow", red_min=red_min, flows=flows)
