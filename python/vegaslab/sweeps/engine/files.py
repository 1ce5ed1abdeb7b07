"""A run's referenced files, written where the worker's core finds them.

A worker receives the scenario's text and the content of every file it references, never paths
(the client's paths mean nothing on another machine). :func:`materialised` writes them into a
private temporary directory beside a copy of the scenario's file name, so relative references
resolve and the scenario id (the file stem) is unchanged."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Iterator

from ..store import PreparedRun
from .errors import EngineError


def _safe_relative(name: str) -> PurePosixPath | None:
    """``name`` as a relative path (``..`` allowed), or None when it is absolute."""
    if PurePosixPath(name).is_absolute() or PureWindowsPath(name).is_absolute():
        return None
    return PurePosixPath(name.replace("\\", "/"))


@contextmanager
def materialised(prepared: PreparedRun) -> Iterator[tuple[str, str]]:
    """The source name to run under, and the temporary directory to hide in messages.

    Without referenced files it is the original source name (the core reads nothing from
    it). With them, the files are written into a fresh temporary directory and the scenario
    text is written as a file ``depth`` directories deep (``depth`` = the most ``..`` any
    name climbs), so each name resolves, relative to it, to its own copy. An absolute name is not copied: the
    worker reads that path itself, and the normalised-scenario check catches a difference."""
    if not prepared.files:
        yield prepared.spec.source, ""
        return
    rels = {name: _safe_relative(name) for name in prepared.files}
    depth = max((sum(1 for p in r.parts if p == "..") for r in rels.values() if r is not None), default=0)
    with tempfile.TemporaryDirectory(prefix="vegaslab-run-") as tmp:
        home = Path(tmp).joinpath(*[f"d{i}" for i in range(depth)])
        home.mkdir(parents=True, exist_ok=True)
        for name, rel in rels.items():
            if rel is None:
                continue
            target = Path(os.path.normpath(home / Path(*rel.parts)))
            if not str(target).startswith(str(Path(tmp))):  # pragma: no cover - depth covers every ".."
                raise EngineError(f"{prepared.spec.source}: cannot place referenced file {name!r}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(prepared.files[name])
        # The core resolves names against the scenario's directory only when the scenario
        # file exists (else against the working directory), so the text is written too.
        scenario = home / (Path(prepared.spec.source).name or "scenario.toml")
        scenario.write_text(prepared.spec.text, encoding="utf-8")
        yield str(scenario), str(home)
