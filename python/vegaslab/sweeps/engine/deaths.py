"""Worker deaths: how each worker process of the embedded cluster ended, read from its nanny's
log, and the message a run whose worker died each time it was tried fails with.

Dask says only that a run's worker died (``KilledWorker``); the nanny in this process logs how
(``Worker process 123 was killed by signal 6``), so the failure can say whether it was a crash,
a kill or running out of memory."""

from __future__ import annotations

import logging
import re
import signal
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from ..store import PreparedRun
from .noise import drop_death_noise


class WorkerDeaths(logging.Filter):
    """Remembers how each worker process of the embedded cluster ended, by pid.

    The nannies of a ``LocalCluster`` run in this process and log each worker's end at INFO
    (``Worker process 123 was killed by signal 6``); this filter, on the nanny's logger,
    records those lines and lets only warnings and errors through (the cluster's logs stay
    as quiet as before). An existing cluster's nannies log elsewhere: then nothing is known."""

    _LINE = re.compile(r"Worker process (\d+) (was killed by signal (\d+)|exited with status (-?\d+)|"
                       r"was killed by unknown signal)")

    #: How long a failure waits for its worker's end to be logged: the scheduler may learn
    #: of the death (the worker's connection drops) before the nanny sees the process exit.
    WAIT_S = 2.0

    def __init__(self) -> None:
        super().__init__()
        self.by_pid: dict[int, str] = {}
        self._changed = threading.Condition()
        #: Set while an embedded cluster runs: only then can a death be logged here.
        self.local = False

    def how_ended(self, pid: int | None) -> str | None:
        """How worker process ``pid`` ended, waiting up to :data:`WAIT_S` for the nanny's
        line when the cluster is embedded; None when unknown."""
        if not pid:
            return None
        deadline = time.monotonic() + (self.WAIT_S if self.local else 0.0)
        with self._changed:
            while pid not in self.by_pid:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._changed.wait(left)
            return self.by_pid[pid]

    def filter(self, record: logging.LogRecord) -> bool:
        m = self._LINE.search(record.getMessage())
        if m:
            pid, sig, status = int(m.group(1)), m.group(3), m.group(4)
            if sig is not None:
                try:
                    name = signal.Signals(int(sig)).name
                except ValueError:
                    name = f"signal {sig}"
                how = f"killed by {name}"
            elif status is not None:
                how = f"exited with status {status}"
            else:
                how = "killed by an unknown signal"
            with self._changed:
                self.by_pid[pid] = f"worker process {pid} {how}"
                self._changed.notify_all()
        return record.levelno >= logging.WARNING

    @contextmanager
    def watching(self) -> Iterator["WorkerDeaths"]:
        """Record deaths meanwhile, and drop the scheduler's errors about them: the engine
        reports each failed run itself, and Dask recovers from the lost results it logs."""
        log = logging.getLogger("distributed.nanny")
        scheduler_log = logging.getLogger("distributed.scheduler")
        level = log.level
        log.setLevel(logging.INFO)
        log.addFilter(self)
        scheduler_log.addFilter(drop_death_noise)
        try:
            yield self
        finally:
            scheduler_log.removeFilter(drop_death_noise)
            log.removeFilter(self)
            log.setLevel(level)


def failure_message(prepared: PreparedRun, exc: BaseException, deaths: WorkerDeaths | None = None) -> str:
    """Why a run failed whose task raised ``exc`` instead of returning a result: for a
    ``KilledWorker``, how often its worker died and how it ended the last time (from
    ``deaths``); for anything else, the exception."""
    from distributed import KilledWorker

    if isinstance(exc, KilledWorker):
        how = deaths.how_ended(getattr(exc.last_worker, "pid", None)) if deaths is not None else None
        tries = exc.allowed_failures + 1
        return (f"{prepared.spec.label}: the run's worker process died each time it was tried "
                f"({tries} time{'s' if tries > 1 else ''}; last: {how or 'worker ' + str(exc.last_worker.address)}): "
                "the run crashed the process or ran out of memory (the other runs are not affected)")
    return f"{prepared.spec.label}: {type(exc).__name__}: {exc}"
