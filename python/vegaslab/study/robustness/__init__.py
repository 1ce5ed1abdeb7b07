"""Robustness studies: how much of a paper's conclusion survives the assumptions it leaves open.

A *study* (``catalog_data/studies/<entry>.toml``, docs/robustness-format.md) takes one claim of
a catalog entry, the assumption behind each open choice of the set-up (a *factor*: the
default level, chosen and justified before the study, and the other plausible levels), and
runs the claim's variants at every level of one factor at a time (the others at their
defaults) and at every combination of the factor pairs it names, each with several seeds.

What is decided here, and why:

- **Judged per seed.** At each point (a combination of levels) the claim is evaluated once
  per seed, on that seed's runs alone (the catalog's claims are written over means of seeds;
  a mean over one seed is that seed's value), so each point gives k of n seeds for which the
  conclusion holds. The point *holds* when the 95% Wilson interval of that proportion lies
  above one half, *fails* when it lies below, and is *mixed* otherwise: a conclusion that a
  paper states as a fact should hold for most seeds of a set-up, not on average over them.
  A seed whose claim cannot be judged (a failed run, missing data) makes the point an error,
  never a pass.
- **Verdicts.** *robust*: the point holds at the default and at every level studied;
  *holds only under a narrow set-up*: some point holds, others do not; *not reproducible
  with any plausible set-up*: no point holds. The study shows fragility; it never moves the
  default (a better-justified reading changes the catalog, with the reason, not this file).
- **Same engine, same store.** Every run is an ordinary run of the entry's scenario with
  the point's overrides after the variant's (:mod:`vegaslab.study.runner`, :mod:`vegaslab.sweeps.engine`):
  resumable, shared with ``reproduce`` and ``sweep`` in the same store, on one machine or a
  Dask cluster, and a second call recomputes nothing.
- **Checked before anything runs.** :func:`load_study` checks every field of a study file and
  :func:`plan` has the core resolve every run it plans; a mistake is a :class:`StudyError`
  naming the file, the field and the level, never a failed run hours later. A study file
  names input only: its entry is a catalog id (:data:`ENTRY_ID`), never a path.
- **Outputs under the one rule for files.** A study writes ``<entry>.json`` and
  ``<entry>-<n>.png`` with :mod:`vegaslab.safe_io`, and reads a report directory's summaries
  and figures back as files it does not own (:func:`load_summaries`): checked against
  :data:`SUMMARY_SCHEMA`, figures only PNGs of that study in that directory; a bad one is set
  aside and named, never used.

One module per job: :mod:`.model` (factors, points, statuses, verdicts), :mod:`.files` (reading
study files), :mod:`.planning`, :mod:`.running`, :mod:`.figures` and :mod:`.summaries`; this
package re-exports their public names. The summaries' text forms are the report's
(:mod:`vegaslab.report.robustness_text`).
"""
from __future__ import annotations

from ...deprecation import moved_names
from .figures import MAX_FIGURE_BYTES, PNG_SIGNATURE, figure, figure_name, read_figure
from .files import list_studies, load_study, one_study_per_entry, studies_dir
from .model import (ENTRY_ID, MAX_STUDY_RUNS, MIN_SEEDS, POINT_STATUSES, VERDICTS, Factor, Point, PointResult, Study,
                    StudyError, StudyResult, wilson)
from .planning import Plan, plan, point_count, points
from .running import check_ns2, run_study
from .summaries import (MAX_ERROR_CHARS, MAX_POINT_ERRORS, MAX_SUMMARY_BYTES, SUMMARY_SCHEMA, load_summaries,
                        problems, save_summary, summary)

#: The summaries' text forms (their table cells and ``robustness.md``), which the report layer
#: owns now (:mod:`vegaslab.report.robustness_text`): readable here for one release, with a warning.
__getattr__ = moved_names(__name__, dict.fromkeys(
    ("fmt", "default_cell", "study_cell", "ns2_cell", "default_status", "markdown", "set_aside_name"),
    "vegaslab.report.robustness_text"))
