"""Where the command line's words go (:class:`Console`, one instance, :data:`console`), and the
one-line error and exit status conventions every subcommand shares (docs/cli.md).
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import TYPE_CHECKING, Any, Callable

from .. import interrupts

if TYPE_CHECKING:  # pragma: no cover
    import argparse


__all__ = ["Console", "console", "say", "one_line", "silence", "jsonable", "interrupted", "EXIT_BROKEN_PIPE",
           "EXIT_INTERRUPTED"]


#: Exit status after stdout was closed under a command that had not finished printing (the
#: status a shell reports for a process ended by SIGPIPE, 128 + 13).
EXIT_BROKEN_PIPE = 141


#: Exit status after Ctrl-C (SIGINT; 128 + 2, as a shell reports a process it ended).
EXIT_INTERRUPTED = interrupts.EXIT_INTERRUPTED


class Console:
    """Where the command line's words go, set once from ``-q``/``-v``/``--json``.

    One small switchboard instead of ``print`` calls that each decide. :meth:`result` is the human
    output (summaries, tables, "wrote ..."): stdout, or stderr under ``--json`` (stdout then
    carries only the JSON document), nothing under ``-q``. :meth:`detail` is ``-v``'s per-run
    detail, on stderr. :meth:`error` always prints. :meth:`document` writes the ``--json``
    document, also under ``-q``.

    A reader that goes away (``vegaslab run x | head -1``) is not an error of the command:
    on ``BrokenPipeError`` stdout is pointed at /dev/null (the pattern the Python docs give
    for SIGPIPE) and the command goes on, so a run still writes its output directory and
    exits 0."""

    QUIET, NORMAL, VERBOSE = 0, 1, 2

    def __init__(self) -> None:
        self.reset()

    def reset(self, level: int = 1, json_mode: bool = False) -> None:
        self.level = level
        self.json = json_mode
        self.documented = False
        self.last_error: str | None = None

    def _write(self, stream, text: str) -> None:
        try:
            stream.write(text + "\n")
            stream.flush()
        except BrokenPipeError:
            silence(stream)

    def result(self, text: str | Callable[[], str] = "") -> None:
        """Print a result; ``text`` may be a callable that makes it, called only when printed
        (a 20,000-flow summary took 1.5 s to format, wasted under ``-q``)."""
        if self.level >= self.NORMAL:
            self._write(sys.stderr if self.json else sys.stdout, text() if callable(text) else text)

    def detail(self, text: str) -> None:
        if self.level >= self.VERBOSE:
            self._write(sys.stderr, text)

    def warning(self, text: str) -> None:
        """Something the user should know about the results (not an error; ``text`` starts with
        "warning:"): stderr, unless -q."""
        if self.level >= self.NORMAL:
            self._write(sys.stderr, f"vegaslab: {text}")

    def error(self, text: str) -> None:
        self.last_error = text.removeprefix("vegaslab: ")
        self._write(sys.stderr, text)

    def document(self, doc: dict) -> None:
        self.documented = True
        self._write(sys.stdout, json.dumps(jsonable(doc), indent=2, allow_nan=False))

    def progress(self, args: argparse.Namespace) -> bool:
        """Draw progress bars? Not under ``-q`` or ``--no-progress``, and only on a terminal:
        a redirected stderr (a log file, a pipe) gets no ``\\r`` frames."""
        if self.level < self.NORMAL or getattr(args, "no_progress", False):
            return False
        try:
            return sys.stderr.isatty()
        except (AttributeError, ValueError):
            return False


console = Console()


def silence(stream) -> None:
    """Point the file descriptor of ``stream`` at /dev/null (its reader is gone)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture): drop it
        pass


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers and NaN/infinity as ``null``, so the
    document is strict JSON (docs/cli.md)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    try:  # pandas' NA and NaT
        import pandas as pd

        if pd.isna(value):
            return None
    except (ImportError, TypeError, ValueError):
        pass
    return str(value)


def one_line(text: str) -> str:
    return " ".join(text.split())


def say(exc: BaseException) -> None:
    """``vegaslab: <message>`` on one line; the message names the file (or option) first."""
    msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    if isinstance(exc, OSError) and exc.filename is not None:  # raised by the OS, not by us
        msg = f"{exc.filename}: {exc.strerror}"
    console.error(f"vegaslab: {one_line(msg)}")


def interrupted() -> int:
    """Say "interrupted" (once per command) and return its exit status."""
    if not (console.last_error or "").startswith("interrupted"):
        console.error("vegaslab: interrupted")
    return EXIT_INTERRUPTED
