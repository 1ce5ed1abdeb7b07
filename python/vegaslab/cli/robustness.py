"""``vegaslab robustness``: the sensitivity studies of the papers' conclusions (docs/robustness-format.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..spelling import did_you_mean
from .console import console, say
from .options import FORMATTER, bad_scheduler, jobs_arg, store_error_status, wrap


def add_parser(sub) -> None:
    """The ``robustness`` subcommand's parser, on the subparsers ``sub`` of ``vegaslab``."""
    p = sub.add_parser(
        "robustness", formatter_class=FORMATTER,
        help="how robust are the papers' conclusions? run the sensitivity studies",
        description=wrap("Run the robustness studies (docs/robustness-format.md): for each, one claim of a "
                    "catalog entry is judged per seed at every level of the assumptions the paper leaves "
                    "open, one at a time and in pairs, on the engine `reproduce` uses (the runs go into "
                    "DIR/store/, shared with `reproduce --out DIR`; a second call recomputes nothing). "
                    "Each study's default set-up also runs in ns-2.35 (first seed; cached in DIR/store/ns2/) "
                    "where the bridge can express it. Writes DIR/robustness/<id>.json and a figure per "
                    "factor, DIR/robustness.md (every study saved in DIR: the verdict table, a sentence and a "
                    "table per study), and updates the section \"How robust are the papers' conclusions?\" "
                    "of DIR/index.html when `reproduce` wrote one there."),
        epilog="""examples:
  vegaslab robustness                          # every built-in study, into out/reproduce
  vegaslab robustness va-buffer --jobs 2
  vegaslab robustness --studies my-studies/ --out out/mine
  vegaslab robustness my-study.toml --out out/mine

Every study file is checked, and every run it plans resolved by the simulator, before anything
runs: a bad one exits 2 naming its file and field. A study's verdict, judged at the points with
the paper's stated set-up, is "robust", "holds only under a narrow set-up", "not reproducible
with any plausible set-up" or "undecided"; "error" when a run failed or a claim could not be
judged (exit 1).""",
    )
    p.add_argument("ids", nargs="*", metavar="ID|FILE.toml",
                   help="studies to run by id (an entry's id that no study has runs every study of that entry), or study files (default: every study)")
    p.add_argument("--studies", metavar="DIR", help="a directory of study files (default: the built-in ones)")
    p.add_argument("--out", metavar="DIR", default="out/reproduce", help="output directory (default: %(default)s)")
    p.add_argument("--jobs", "-j", type=jobs_arg, metavar="N",
                   help="worker processes of the local cluster (default: the number of cores)")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="an existing Dask scheduler, e.g. tcp://host:8786; 'synchronous' runs in this process")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-ns2", action="store_true", help="skip the ns-2.35 runs of the default set-ups")
    p.add_argument("--quick", action="store_true",
                   help="every run shortened by its entry's [meta.quick] set-up, the points and seeds kept: a check "
                        "that the studies run, its verdicts marked quick (never published)")
    p.set_defaults(func=cmd_robustness)


def _chosen_studies(args: argparse.Namespace) -> list:
    """The studies to run: each ``FILE.toml`` given, and the studies of ``--studies`` (or the
    built-in ones) named by each id given: the study of that name, else every study of the entry
    of that id (all of them when none is given); every study file read
    and checked (:class:`vegaslab.study.robustness.StudyError`, a ``ValueError`` for an unknown id)."""
    from ..study import robustness as rb

    files = [a for a in args.ids if a.endswith(".toml")]
    ids = [a for a in args.ids if not a.endswith(".toml")]
    chosen = [rb.load_study(f) for f in files]
    if ids or not files:
        studies = rb.list_studies(args.studies)
        known = {s.name for s in studies} | {s.entry for s in studies}
        unknown = [i for i in ids if i not in known]
        if unknown:
            hint = did_you_mean(unknown[0], sorted(known))
            raise ValueError(f"no study for {unknown[0]!r}{hint} (studies: {', '.join(sorted(s.name for s in studies)) or 'none'})")
        names = {s.name for s in studies}
        chosen += [s for s in studies if not ids or s.name in ids or (s.entry in ids and s.entry not in names)]
    rb.one_study_per_name(chosen)
    return chosen


def cmd_robustness(args: argparse.Namespace) -> int:
    from ..study import robustness as rb
    from .. import safe_io
    from ..outdir import check_output_dir
    from ..report.robustness import splice
    from ..report.robustness_text import markdown, ns2_cell
    from ..sweeps.store import StoreError

    # Every study file is read and planned (the core resolves every run) before anything runs
    # or is written: a bad one stops the command with its file and field (exit 2).
    try:
        studies = _chosen_studies(args)
        plans = [rb.plan(st, quick=args.quick) for st in studies]
    except (rb.StudyError, ValueError) as exc:
        say(exc)
        return 2
    if bad_scheduler(args):
        return 2
    out = Path(args.out)
    check_output_dir(out, replace=False)
    try:
        out.mkdir(parents=True, exist_ok=True)
        directory = safe_io.make_dir(out, "robustness")
        safe_io.make_dir(out, "store")  # a link planted as DIR/store is refused, not followed
    except safe_io.UnsafePathError as exc:
        say(exc)
        return 2
    results = []
    for st, p in zip(studies, plans):
        try:
            r = rb.run_study(st, out / "store", n_jobs=args.jobs, scheduler=args.scheduler,
                             progress=console.progress(args), planned=p)
        except StoreError as exc:
            say(exc)
            return store_error_status(exc)
        if not args.no_ns2:
            rb.check_ns2(r, out / "store")
        results.append(r)
        summary = rb.summary(r, rb.figure(r, directory))
        rb.save_summary(summary, directory)
        d = r.default
        ns2 = f"; ns-2.35: {ns2_cell(summary)}" if r.ns2 is not None else ""
        console.result(f"{st.name}: {r.verdict}{' (quick)' if r.quick else ''} (at our default: {d.status}, {d.holds}/{d.seeds} seeds); "
                    f"{r.runs} runs, {r.computed} computed in {r.wall_s:.1f} s{ns2}")
    saved = rb.load_summaries(directory)
    for message in rb.problems(saved, directory):
        console.warning(f"warning: {message}")
    report = safe_io.write_file(out, "robustness.md", markdown(saved))
    console.result(f"wrote {report} ({sum('set_aside' not in s for s in saved)} studies)")
    page = out / "index.html"
    if page.exists() or page.is_symlink():
        try:
            console.result(f"updated {page}" if splice(page, saved) else
                        f"{page} predates the robustness section: run `vegaslab reproduce --out {out}` again to add it")
        except safe_io.ForeignFileError as exc:
            console.warning(f"warning: {exc}; its robustness section was not updated")
    return 1 if any(r.verdict == "error" for r in results) else 0
