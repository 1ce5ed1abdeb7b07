"""``vegaslab reproduce``: the catalog's paper experiments, compared with the papers, into a report.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Sequence

import vegaslab

from .console import console, say
from .options import FORMATTER, bad_scheduler, jobs_arg, seed_arg, store_error_status, wrap


class DefaultIds(list):
    """The default of ``reproduce``'s names, told apart from the same names typed out: ``--list``
    without names lists the whole catalog, not the three default entries."""


def default_ids() -> Sequence[str]:
    from ..study.defaults import DEFAULT_IDS  # not vegaslab.study.catalog: 14 ms more per command

    return DEFAULT_IDS


def add_parser(sub) -> None:
    """The ``reproduce`` subcommand's parser, on the subparsers ``sub`` of ``vegaslab``."""
    p = sub.add_parser(
        "reproduce", formatter_class=FORMATTER,
        help="run catalog experiments in parallel, compare with the papers, write an HTML report",
        description=wrap("Run every variant and seed of the chosen catalog entries on Dask, over local cores "
                    "or an existing cluster (--scheduler), the engine `vegaslab sweep` uses (finished runs "
                    "are kept in the results store DIR/store/ and reused), compare with the published "
                    "numbers, check each entry's claims, and write DIR/index.html (a self-contained "
                    "report), DIR/summary.md, DIR/summary.csv and DIR/results/ (Parquet tables)."),
        epilog=f"""examples:
  vegaslab reproduce --list                # entries and papers, with their numbers of runs
  vegaslab reproduce                       # {' '.join(default_ids())}
  vegaslab reproduce vegas-a --quick       # every entry of the Vegas-A paper, shortened
  vegaslab reproduce --all --jobs 2 --out report
  vegaslab reproduce va-file va-buffer --seed 2 --out out/seed2
  vegaslab reproduce va-buffer --json -q   # the verdicts as one JSON document (docs/cli.md)

Names are entry ids (a file's meta.id or stem) or paper names (meta.paper: vegas-a, adavegas,
vegas-grids, vegas-lte, rovegas); --list shows them. The catalog ships inside the package
($VEGASLAB_CATALOG names a directory of your own instead); the format is in
docs/catalog-format.md. Exit status 1 when a run failed (the others still ran and the report
is written); a claim that fails is a finding, not an error.""",
    )
    p.add_argument("ids", nargs="*", metavar="PAPER|ID",
                   help=f"entry ids or paper names (default: {' '.join(default_ids())})",
                   default=DefaultIds(default_ids()))
    p.add_argument("--all", dest="all_entries", action="store_true", help="every entry of the catalog")
    p.add_argument("--list", dest="list_entries", action="store_true",
                   help="list the entries (all, or the named ones) by paper with their numbers of runs; run nothing")
    p.add_argument("--quick", action="store_true",
                   help="apply each entry's [meta.quick] (shorter runs, fewer seeds) for a first look")
    p.add_argument("--jobs", "-j", type=jobs_arg, metavar="N",
                   help="worker processes of the local cluster (default: the number of cores); with --scheduler, "
                        "how many workers to wait for")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="an existing Dask scheduler, e.g. tcp://host:8786 (default: $DASK_SCHEDULER_ADDRESS, "
                        "else a local cluster); its workers need only `pip install vegaslab`")
    p.add_argument("--out", metavar="DIR", default="out/reproduce", help="output directory (default: %(default)s)")
    p.add_argument("--seed", type=seed_arg, metavar="N",
                   help="run every variant once with this seed (0 .. 2**63-1) instead of the entry's seeds")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (none is drawn when stderr "
                                                              "is not a terminal)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document on stdout (per entry the published and our numbers and "
                        "the claims' verdicts, the report's path; docs/cli.md), the rest on stderr")
    p.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from ..reproduction import reproduce
    from ..study.catalog import resolve
    from ..outdir import check_output_dir
    from ..sweeps.store import StoreError

    if args.list_entries:
        return _list_entries(args)
    try:  # fail fast, before any run, on an unknown id or paper
        entries = resolve(args.ids, all_entries=args.all_entries)
    except KeyError as exc:
        console.error(f"vegaslab: {exc.args[0]}")
        return 2
    if bad_scheduler(args):
        return 2
    check_output_dir(args.out, replace=False)
    t0 = time.perf_counter()
    try:
        table = reproduce(args.ids, args.out, seed=args.seed, quick=args.quick, jobs=args.jobs,
                          all_entries=args.all_entries, progress=console.progress(args), scheduler=args.scheduler,
                          echo=console.result)
    except StoreError as exc:  # DIR/store unusable or busy (2), or a commit that failed (1), as in sweep
        say(exc)
        return store_error_status(exc)
    code = 1 if (table["metric"] == "(run failed)").any() else 0
    runs = table.attrs.get("runs", {})
    console.detail(f"runs: {runs.get('ran', 0)} ran, {runs.get('cached', 0)} found in {Path(args.out) / 'store'}, "
                f"{runs.get('failed', 0)} failed, of {runs.get('total', 0)}; "
                f"{table.attrs.get('wall_s', time.perf_counter() - t0):.1f} s")
    if args.json:
        console.document(_reproduce_document(entries, table, Path(args.out), code))
    return code


#: The comparison columns ``reproduce --json`` gives per row (catalog.REPRODUCE_COLUMNS less
#: the entry, which is the row's key).
_COMPARISON_KEYS = ("run", "metric", "published", "ours", "std", "n", "ratio", "note")


def _typed(row: dict) -> dict:
    """A comparison row with a count metric's whole values as integers (``"ours": 258``, not
    ``258.0``): the comparison table holds every metric as a float; a count is a column of
    :data:`vegaslab.columns.COUNT_COLUMNS`. A mean over seeds that is not whole stays a
    fraction."""
    from ..columns import COUNT_COLUMNS

    if str(row.get("metric", "")).rpartition(".")[2] not in COUNT_COLUMNS:
        return row
    return {k: int(v) if k in ("published", "ours") and isinstance(v, float) and v.is_integer() else v
            for k, v in row.items()}


def _reproduce_document(entries, table, out: Path, code: int) -> dict:
    """``vegaslab reproduce --json`` (docs/cli.md): per entry, the published-vs-ours rows and
    the claims' verdicts; where the report is."""
    verdicts = table.attrs.get("verdicts", [])
    docs = []
    for e in entries:
        rows = table[table["entry"] == e.id]
        comparisons = [_typed({k: r.get(k) for k in _COMPARISON_KEYS}) for r in rows.to_dict(orient="records")]
        failed = any(c["metric"] == "(run failed)" for c in comparisons)
        docs.append({
            "id": e.id,
            "title": e.title,
            "paper": e.paper,
            "status": "run failed" if failed else "ok",
            "comparisons": comparisons,
            "claims": [{"id": v["id"], "kind": v["kind"], "text": v["text"], "expr": v["expr"], "verdict": v["status"],
                        "detail": v["detail"], "by_tie": v["by_tie"]}
                       for v in verdicts if v["entry"] == e.id],
        })
    report = out / "index.html"
    return {
        "command": "reproduce",
        "out": str(out),
        "report": str(report) if report.is_file() else None,
        "summary": str(out / "summary.md") if (out / "summary.md").is_file() else None,
        "runs": table.attrs.get("runs", {}),
        "wall_s": table.attrs.get("wall_s"),
        "exit_status": code,
        "entries": docs,
        "vegaslab_version": vegaslab.__version__,
        "core_version": vegaslab.core_version(),
    }


def _list_entries(args: argparse.Namespace) -> int:
    """``reproduce --list``: every entry (or the named ids and papers), grouped by paper."""
    from ..study.catalog import catalog_dir, format_listing, list_entries, resolve

    named = bool(args.ids) and not isinstance(args.ids, DefaultIds) and not args.all_entries
    try:
        entries = resolve(args.ids) if named else list_entries()
    except KeyError as exc:
        console.error(f"vegaslab: {exc.args[0]}")
        return 2
    if not entries:
        raise FileNotFoundError(f"{catalog_dir()}: no catalog entries (*.toml) in this directory")
    console.result(format_listing(entries, where=catalog_dir()))
    if args.json:
        console.document({"command": "reproduce --list", "catalog": str(catalog_dir()),
                       "entries": [{"id": e.id, "paper": e.paper, "title": e.title, "path": str(e.path),
                                    "runs": e.run_count(), "quick_runs": e.run_count(quick=True)}
                                   for e in entries]})
    return 0
