"""What :func:`vegaslab.sweeps.engine.execute` reports: each spec's outcome, and the execution's
totals and cost."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..store import RunSpec


@dataclass
class RunOutcome:
    """What happened to one spec: ``stored`` (already in the store), ``ran`` (computed and
    committed now), ``failed`` (``error`` says why; nothing was stored) or ``interrupted``
    (not finished when Ctrl-C or SIGTERM stopped the execution; nothing was stored, the next
    execution computes it)."""

    spec: RunSpec
    key: str
    status: str
    error: str = ""
    wall_s: float = 0.0
    worker: str = ""


@dataclass
class Execution:
    """Every spec's outcome (in spec order) and what the run of :func:`vegaslab.sweeps.engine.execute` cost."""

    outcomes: list[RunOutcome] = field(default_factory=list)
    wall_s: float = 0.0
    submitted: int = 0
    commits: int = 0
    #: Commits merged away by the compaction at the end (see ``compact`` of :func:`vegaslab.sweeps.engine.execute`).
    merged: int = 0
    interrupted: bool = False
    executor: str = ""
    #: The work estimated when ``scheduler="auto"`` chose the engine, seconds (else None).
    estimate_s: float | None = None

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def ran(self) -> int:
        return self.count("ran")

    @property
    def stored(self) -> int:
        return self.count("stored")

    @property
    def failed(self) -> int:
        return self.count("failed")

    @property
    def interrupted_runs(self) -> int:
        """Runs not finished because the execution was interrupted (not failures)."""
        return self.count("interrupted")
