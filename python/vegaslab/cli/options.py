"""What several subcommands share: the argument parser class, the argument types and common
options (``--set``, ``--seed``, ``--jobs``, ``--stack``, ``-q``/``-v``), finding a scenario by file or
catalog id, and the checks made before anything runs (a scheduler address, a store's error).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from ..errors import ScenarioError
from ..simulation import MAX_SEED
from ..spelling import did_you_mean
from .console import say


FORMATTER = argparse.RawDescriptionHelpFormatter


class Parser(argparse.ArgumentParser):
    """argparse with usage errors as the usage of the (sub)command the error was made on, then
    one line (``vegaslab: argument --seed: ...``); exit 2.

    Each sub-parser rejects the arguments it does not know itself (argparse would leave them
    to the top-level parser, whose usage says nothing about ``run``'s options)."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras

    def error(self, message: str):  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(2, f"vegaslab: {message} (see `{self.prog} --help`)\n")


def add_verbosity(p: argparse.ArgumentParser, *, top: bool) -> None:
    """``-q``/``-v``, on the top-level parser and every sub-parser (so that both
    ``vegaslab -q run x`` and ``vegaslab run x -q`` work); a sub-parser's default is
    SUPPRESS, so it does not undo the top-level's."""
    default = {} if top else {"default": argparse.SUPPRESS}
    g = p.add_mutually_exclusive_group()
    g.add_argument("-q", "--quiet", action="store_true", help="print errors only", **default)
    g.add_argument("-v", "--verbose", action="store_true",
                   help="also print per-run detail (monitors, files, timings) on stderr", **default)


def seed_arg(text: str) -> int:
    """``--seed``: the core's range of ``run.seed``, 0 .. 2**63-1."""
    try:
        value = int(text, 0) if text.strip().lower().startswith("0x") else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 2**63-1 ({MAX_SEED}), got {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(
            f"must be from 0 to 2**63-1 ({MAX_SEED}, the range of run.seed), got {text}")
    return value


def jobs_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def wrap(text: str) -> str:
    return textwrap.fill(text, width=88)


def add_set(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario field (repeatable), e.g. --set 'flows[0].cc=newreno' "
                        "(quoted: brackets are shell patterns)")


def add_stack(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stack", dest="stack", action="append", default=[], metavar="NAME=on|off",
                   help="switch a kernel TCP behaviour for the testbed run (repeatable): sack, delayed_ack "
                        "(default: on, as Linux); e.g. --stack delayed_ack=off makes the receiver ACK every "
                        "segment, as the simulator's sink does")


def stack_of(args):
    from ..testbed.stack import Stack

    return Stack.parse(args.stack)


def resolve_scenario(name: str) -> Path:
    """A scenario file path, or the file of a catalog entry with that id."""
    p = Path(name)
    if p.exists():  # a file (read errors are reported when it is read) or a directory
        if p.is_dir():
            raise ScenarioError(f"{p}: is a directory, not a scenario file")
        return p
    from ..study.catalog import load_entry

    try:
        return load_entry(name).path
    except KeyError:
        from ..study.catalog import catalog_dir, list_entries

        ids = [e.id for e in list_entries()] if catalog_dir().is_dir() else []
        raise FileNotFoundError(f"{name}: no such scenario file and no catalog entry with that id"
                                f"{did_you_mean(name, ids)}") from None


def bad_scheduler(args: argparse.Namespace) -> bool:
    """Say so (one line, naming ``--scheduler`` or ``DASK_SCHEDULER_ADDRESS``) and return
    True when the scheduler address cannot be one: a usage error, found before anything runs
    or is written. A well-formed address nobody answers at fails later, in seconds (exit 1)."""
    from ..sweeps.engine import EngineError, check_scheduler

    try:
        check_scheduler(args.scheduler, "--scheduler")
    except EngineError as exc:
        say(exc)
        return True
    return False


def store_error_status(exc: BaseException) -> int:
    """The exit status of a store error (docs/cli.md): 1 when a commit could not be written
    (disk full: the runs failed), else 2 (the store is not one this version can use, is
    locked by another writer, or holds something planted: bad input)."""
    from ..sweeps.store import StoreWriteError

    return 1 if isinstance(exc, StoreWriteError) else 2
