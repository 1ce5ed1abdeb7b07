"""Which engine a sweep's work deserves (``scheduler="auto"``): the runs start in this process,
and move to the embedded local cluster as soon as the estimated work of the whole sweep says
the cluster pays for itself (docs/decisions.md,
"A sweep starts in process and moves to the local cluster when its work pays for it").

The estimate is measured, not modelled: how long a run takes depends on the topology, the
algorithms, the monitors and the machine's load far more than on any count in the scenario.
The first run's speed is known after :data:`PROBE_S` of wall time (the core reports its
simulated time every 0.2 s), so the sweep's work is estimated as the runs done + the run in
progress (its wall time so far, scaled by simulated time still to go) + the runs left, each
as long as the mean finished one (or as the run in progress while none has finished).

The cluster pays when its fixed cost (starting ``W`` worker processes, each importing
pyarrow and pandas, and closing them) is repaid by running ``W`` runs at once:
``cost + T / W <= MAX_SLOWDOWN x T``, i.e. from ``T = cost / (MAX_SLOWDOWN - 1 / W)`` of work
(:func:`cluster_threshold_s`), judged on the work still to do. Below that the runs stay here,
so a small sweep costs its runs' own time and no start-up; above it, the move costs the run
in progress, abandoned and run again there (its wall time so far: at least :data:`PROBE_S`,
at most a run's time), beside the runs already done here, one after another.
"""

from __future__ import annotations

import time
from typing import Callable

#: The embedded cluster's fixed cost assumed, in seconds: starting and closing its worker
#: processes and their first imports, which grows with the machine's load (docs/decisions.md);
#: the threshold is computed for a loaded machine.
CLUSTER_COST_S = 3.0
#: The slowdown over the runs' own time the cluster may cause at the threshold.
MAX_SLOWDOWN = 1.2
#: Wall time of the first run after which its speed is taken as the sweep's.
PROBE_S = 0.2


def cluster_threshold_s(workers: int) -> float:
    """Estimated work (seconds of runs, summed) from which ``workers`` worker processes of
    the local cluster finish a sweep within :data:`MAX_SLOWDOWN` x its runs' own time despite
    :data:`CLUSTER_COST_S`; infinite for one worker (the cluster is then never faster)."""
    if workers < 2:
        return float("inf")
    return CLUSTER_COST_S / (MAX_SLOWDOWN - 1.0 / workers)


class MovingToCluster(Exception):
    """Raised through the core's progress callback to abandon the run in progress in this
    process: the sweep moves to the local cluster, which runs it again."""


class WorkBudget:
    """The estimated work of a sweep running in this process, and whether the work still to do
    has passed ``limit_s`` (then :attr:`exceeded` is set and the rest goes to the cluster).

    The move is judged on the work left, not on the sweep's total: the runs done here are paid
    for whatever happens next. A move also needs at least ``workers`` runs left (counting one
    abandoned in progress), since fewer cannot use the cluster's workers at once."""

    def __init__(self, runs: int, limit_s: float, workers: int = 2) -> None:
        self.runs = runs
        self.limit_s = limit_s
        self.workers = workers
        self.done = 0
        self.done_s = 0.0
        self.estimate_s = 0.0
        self.exceeded = False

    def _judge(self, left_s: float, runs_left: int) -> bool:
        self.estimate_s = self.done_s + left_s
        self.exceeded = runs_left >= self.workers and left_s > self.limit_s
        return self.exceeded

    def finished(self, wall_s: float) -> bool:
        """Count a run done here; True when the work left now passes the limit."""
        self.done += 1
        self.done_s += wall_s
        left = self.runs - self.done
        return self._judge(self.done_s / self.done * left, left)

    def watch(self) -> Callable[[float, float], None]:
        """A progress callback for the next run here (``(simulated s, duration s)``, every 0.2
        s of wall time): raises :class:`MovingToCluster` once the work left (this run again in
        full, as the cluster would run it, and the runs after it) passes the limit."""
        t0 = time.perf_counter()

        def check(sim_s: float, duration_s: float) -> None:
            elapsed = time.perf_counter() - t0
            if elapsed < PROBE_S or sim_s <= 0 or duration_s <= 0:
                return
            this_run = elapsed * duration_s / min(sim_s, duration_s)
            per_run = self.done_s / self.done if self.done else this_run
            left = self.runs - self.done
            if self._judge(this_run + per_run * (left - 1), left):
                raise MovingToCluster(f"estimated work left {self.estimate_s - self.done_s:.1f} s passes "
                                      f"{self.limit_s:.1f} s")

        return check
