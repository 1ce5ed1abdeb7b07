"""Running a documentation page as written: every block under a ``<!-- walkthrough: ... -->``
marker is executed in order in one directory, the shell lines with the installed ``vegaslab``
command, the Python blocks in a fresh interpreter. Markers:

- ``file NAME``: write the block to NAME (a path under the directory);
- ``append BASE to NAME``: write BASE's text followed by the block to NAME;
- ``sh`` (or ``sh, expect exit N``): run each line with bash; every line must exit 0 (or N, with
  a short error and no traceback);
- ``python``: run the block with this interpreter;
- ``show``: shown, not run (the page says why, e.g. it needs root and minutes of a testbed).

A page in several parts that need different tools names a block's part in the marker,
``<!-- walkthrough[bpf]: sh -->``; :func:`run_steps` runs one part (by default the blocks that
name none), each in its own directory.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

STEP = re.compile(r"<!-- walkthrough(?:\[(?P<part>[a-z]+)\])?: (?P<what>[^>]*?) -->\n```[a-z]*\n(?P<body>.*?)```",
                  re.S)

#: :func:`steps`' ``part`` for every block of the page, whatever its part.
EVERY_PART = "*"


def steps(doc: Path, part: str | None = EVERY_PART) -> list[tuple[str, str]]:
    """The page's marked blocks of ``part`` (None: those that name no part): (marker, body)."""
    return [(m["what"].strip(), m["body"]) for m in STEP.finditer(doc.read_text(encoding="utf-8"))
            if part == EVERY_PART or m["part"] == part]


def run_steps(doc: Path, directory: Path, part: str | None = None) -> None:
    """Execute the marked blocks of ``doc``'s ``part`` (None: those that name no part) in
    ``directory``; an assertion names the step that failed with the end of its output."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               MPLBACKEND="Agg")
    for what, body in steps(doc, part):
        if what.startswith("file "):
            (directory / what.split()[1]).write_text(body)
        elif what.startswith("append "):
            _, base, _, name = what.split()
            (directory / name).write_text((directory / base).read_text() + "\n" + body)
        elif what == "show":
            continue
        elif what.startswith("sh"):
            expect = int(what.rsplit(" ", 1)[1]) if "expect exit" in what else 0
            for line in filter(None, (ln.strip() for ln in body.splitlines())):
                p = subprocess.run(["bash", "-c", line], cwd=directory, env=env, capture_output=True, text=True,
                                   timeout=300)
                assert p.returncode == expect, f"{line}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
                if expect:
                    assert "Traceback" not in p.stderr and p.stderr.strip().count("\n") < 3, p.stderr
        elif what == "python":
            p = subprocess.run([sys.executable, "-c", body], cwd=directory, env=env, capture_output=True, text=True,
                               timeout=300)
            assert p.returncode == 0, f"{body}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
        else:
            raise AssertionError(f"unknown walkthrough marker: {what!r}")
