"""The ``vegaslab`` command line: run | sweep | reproduce | bench.

Every subcommand has ``--help`` with examples. Exit status: 0 ok, 1 simulation failed,
2 bad input (scenario, file, arguments, output directory), 130 interrupted (Ctrl-C).

Errors are one line on stderr, ``vegaslab: <file or option>: <what is wrong>``, never a Python
traceback (set ``VEGASLAB_DEBUG=1`` to get one for an unexpected error); a usage error prints
the usage of the (sub)command it was made on first. Output directories are checked before
anything is simulated, and written all or nothing (:func:`vegaslab.outdir.output_dir`).

Conventions, all in :class:`.console.Console`: ``-q`` prints errors only, ``-v`` adds
per-run detail on stderr; ``run --json`` and ``reproduce --json`` print one JSON document on
stdout (docs/cli.md) and send the human text to stderr; progress bars are drawn only when
stderr is a terminal; a closed stdout (``vegaslab run x | head -1``) stops the printing, not
the command.

One module per subcommand (:mod:`.run`, :mod:`.sweep`, :mod:`.reproduce`, :mod:`.bench`,
:mod:`.kernel`, :mod:`.testbed`, :mod:`.robustness`, :mod:`.compare`, :mod:`.new_cc`), each with its parser
(``add_parser``) and its ``cmd_*`` functions; :mod:`.console` and :mod:`.options` hold what
they share; this module builds the parser and runs a command.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Sequence

import vegaslab

from .. import interrupts
from ..errors import ScenarioError, VegaslabError
from . import bench as bench_cmd
from . import compare as compare_cmd
from . import kernel as kernel_cmd
from . import new_cc as new_cc_cmd
from . import reproduce as reproduce_cmd
from . import robustness as robustness_cmd
from . import run as run_cmd
from . import sweep as sweep_cmd
from . import testbed as testbed_cmd
from .console import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, console, interrupted, one_line, say, silence
from .options import FORMATTER, Parser, add_verbosity, wrap


__all__ = ["main", "entry", "build_parser", "EXIT_BROKEN_PIPE", "EXIT_INTERRUPTED"]


class _VersionAction(argparse.Action):
    """``--version``: the package version and the compiled core's (imported only when asked)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        core = vegaslab.core_version()
        print(f"vegaslab {vegaslab.__version__} (core {core or 'not built'})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with one sub-parser per command."""
    parser = Parser(
        prog="vegaslab",
        description=wrap("Packet-level simulation of TCP Vegas and its variants, with paper reproductions."),
        formatter_class=FORMATTER,
        epilog="""examples:
  vegaslab run va-reroute
  vegaslab run va-reroute --set 'flows[0].cc=newreno' --out out/reroute-newreno
  vegaslab sweep study.toml --dry-run
  vegaslab reproduce --list
  vegaslab reproduce va-buffer
  vegaslab bench --duration 20s --no-ns2
  vegaslab new-cc my_reno --python

Scenario format: docs/scenario-format.md. Results tables: docs/results-format.md.
Output conventions (-q, -v, --json): docs/cli.md.
Run `vegaslab COMMAND --help` for each command's options.""",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the package and core versions and exit")
    add_verbosity(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run_cmd.add_parser(sub)
    sweep_cmd.add_parser(sub)
    reproduce_cmd.add_parser(sub)
    bench_cmd.add_parser(sub)
    kernel_cmd.add_parser(sub)
    testbed_cmd.add_parser(sub)
    robustness_cmd.add_parser(sub)
    compare_cmd.add_parser(sub)
    new_cc_cmd.add_parser(sub)
    _verbosity_everywhere(parser)
    return parser


def _verbosity_everywhere(parser: argparse.ArgumentParser) -> None:
    """``-q``/``-v`` on every sub-parser, nested ones (``kernel register``) included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
                add_verbosity(sub, top=False)
                _verbosity_everywhere(sub)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``vegaslab`` command; returns the exit status.

    Ctrl-C anywhere in the command ends it with :data:`EXIT_INTERRUPTED` (130) and one line,
    ``vegaslab: interrupted``: also when the ``KeyboardInterrupt`` was dropped on the way (a
    Ctrl-C the command saw, :func:`vegaslab.interrupts.command`, is 130 whatever the
    subcommand returned) and when it came while arguments were parsed."""
    console.reset()
    with interrupts.command() as ctrl_c:
        try:
            code = _main(argv)
        except KeyboardInterrupt:
            code = interrupted()
        if ctrl_c.is_set() and code != EXIT_INTERRUPTED:
            code = interrupted()
    return code


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error (already printed)
        return exc.code if isinstance(exc.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    level = console.QUIET if args.quiet else console.VERBOSE if args.verbose else console.NORMAL
    console.reset(level, json_mode=bool(getattr(args, "json", False)))
    with warnings.catch_warnings():
        # The library's warnings (a file set aside, say) as the command's own one-line warnings.
        warnings.showwarning = _show_warning
        code = _dispatch(args)
    if console.json and not console.documented:  # a script still gets a document to parse
        console.document({"command": args.command, "error": console.last_error, "exit_status": code})
    return code


def _dispatch(args: argparse.Namespace) -> int:
    """Run the subcommand; every error becomes one line on stderr and an exit status."""
    from ..outdir import OutputDirError
    from ..safe_io import ForeignFileError, UnsafePathError

    try:
        return args.func(args)
    except ScenarioError as exc:
        say(_as_option(exc, args))
        return 2
    except (FileNotFoundError, OutputDirError, UnsafePathError, ForeignFileError) as exc:
        say(exc)
        return 2
    except VegaslabError as exc:
        say(exc)
        return 1
    except BrokenPipeError:  # a closed pipe that a write outside Console ran into
        silence(sys.stdout)
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return interrupted()
    except OSError as exc:  # e.g. the disk filled up while writing results
        where = f"{exc.filename}: " if exc.filename else ""
        console.error(f"vegaslab: {where}{exc.strerror or exc}")
        return 1
    except Exception as exc:  # noqa: BLE001 - a bug: one line for the user, a traceback on request
        if os.environ.get("VEGASLAB_DEBUG"):
            raise
        console.error(f"vegaslab: internal error: {type(exc).__name__}: {one_line(str(exc))} "
              f"(set VEGASLAB_DEBUG=1 for a traceback, and please report it)")
        return 1


def _as_option(exc: ScenarioError, args: argparse.Namespace) -> ScenarioError:
    """An error one of the command's ``--set`` overrides made, told as that option's
    (``--set tcp.windw=20: ...``); any other as it is."""
    from ..scenario import override_error

    if exc.override is not None and exc.override in getattr(args, "overrides", ()):
        return override_error(exc, exc.override, option="--set")
    return exc


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    """``warnings.showwarning`` while a command runs: a library warning as one line,
    ``vegaslab: warning: ...`` (dropped under ``-q``), without the source location."""
    console.warning(f"warning: {one_line(str(message))}")


def entry() -> None:
    """The ``vegaslab`` console command (and ``python -m vegaslab``): :func:`main`, then an
    immediate exit.

    When :func:`main` returns, everything the command writes is closed (files in ``with`` blocks,
    stores committed, a Dask cluster's workers closed or bound to end with this process), so the
    interpreter's teardown, which frees pandas, matplotlib and the results (0.1-0.3 s after a
    ``vegaslab run``, measured), is skipped: stdout and stderr are flushed and the process ends
    with ``os._exit``. Tests and library code call :func:`main`, which returns normally.

    A reader that closed stdout early (``vegaslab reproduce --list | head -1``) is handled
    as the Python docs recommend for SIGPIPE: stdout is pointed at /dev/null and no traceback
    is printed. :class:`Console` does so where the command prints, and the command finishes
    (exit 0); a ``BrokenPipeError`` from anywhere else (argparse's help, the final flush)
    ends it here with 141, the status of a process ended by SIGPIPE.

    Ctrl-C: besides :func:`main`'s handling, the ``vegaslab`` program arms
    :func:`vegaslab.interrupts.enable_watchdog`, a last resort that ends a process still running
    :data:`vegaslab.interrupts.WATCHDOG_S` seconds after the first Ctrl-C with 130."""
    try:
        interrupts.enable_watchdog()
        code = main()
        sys.stdout.flush()
    except KeyboardInterrupt:  # a Ctrl-C just before or after main's own handling
        code = interrupted()
    except BrokenPipeError:
        silence(sys.stdout)
        code = EXIT_BROKEN_PIPE
    except (OSError, ValueError):  # a closed stream
        code = 1
    try:
        sys.stderr.flush()
    except (OSError, ValueError, KeyboardInterrupt):
        pass
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
