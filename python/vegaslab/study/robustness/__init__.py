"""Robustness studies: how much of a paper's conclusion survives the assumptions it leaves open.

A *study* (``catalog_data/studies/<id>.toml``, docs/robustness-format.md) takes one claim of
a catalog entry, the assumption behind each open choice of the set-up (a *factor*: the
default level, chosen and justified before the study, and the other plausible levels), and
runs the claim's variants at every level of one factor at a time (the others at their
defaults) and at every combination of the factor pairs it names, each with several seeds.

What is decided here, and why:

- **Where each level comes from.** A factor whose value the paper states names it
  (``stated``: the level, where the paper says so and its words); its other levels are
  *departures*. A factor the paper leaves open has only *assumptions*, with the reason for its
  levels. The verdict is judged at the points with the paper's stated set-up; a point with a
  departure is reported as its own finding ("holds if the queue is 20 instead of the stated
  50"), never as what makes a conclusion narrow.
- **Judged per seed, at a level corrected for the study's size.** At each point the claim is
  evaluated once per seed, on that seed's runs alone (the catalog's claims are written over
  means of seeds; a mean over one seed is that seed's value), so each point gives k of n seeds
  for which the conclusion holds. The point *holds* when an exact binomial test rejects "half
  the seeds" in favour of more (P(X >= k) <= alpha/2 for X ~ Binomial(n, 1/2)), *fails* when it
  rejects it in favour of fewer, and is *mixed* otherwise (:func:`decide`; the same as the exact
  Clopper-Pearson interval lying above or below one half), with alpha = ``FAMILY_ALPHA / m`` for
  a study of m points (Bonferroni, over all its points, the departures' included: conservative):
  the chance that any point of the study is called holds or fails wrongly stays below 5%,
  exactly (an approximate interval such as Wilson's does not keep that at 10 seeds). A study needs
  at least 10 seeds, and enough that n of n can decide at its corrected level (:func:`min_seeds`).
  A seed whose claim cannot be judged (a failed run, missing data) makes the point an error,
  never a pass.
- **One run is one run.** Where every seed at a point gives the same run (compared by content:
  the set-up has no randomness the seed reaches), the point's evidence is that one run, not a
  share of seeds: it holds or fails as the run does, and the verdict says so and gives the
  figure's margin from its threshold (``[study.figure] threshold``).
- **Verdicts**, over the points with the stated set-up (:func:`judge`): *robust* when every one
  holds; *holds only under a narrow set-up* when some hold and some fail; *not reproducible with
  any plausible set-up* when every one fails; *undecided* otherwise (mixed points, with none
  holding or none failing). For a claim that is the same coin flip at every point, the chance
  of "narrow" is below 0.1% for 2 to 60 points and 10 to 30 seeds (:func:`false_verdict_rates`;
  the rule before this one, 95% intervals with no correction and 4 seeds, gave it about half the
  time). The study shows fragility; it never moves
  the default (a better-justified reading changes the catalog, with the reason, not this
  file).
- **A reading of an algorithm is everyone's.** A factor that reads an algorithm's text
  (``reading = "<cc>"``: Vegas-A's rule on equal throughput) applies each level to every flow
  of that algorithm, and :mod:`.readings` runs every catalog entry with such a flow at each
  level: the verdict names the claims each level turns elsewhere, so a conclusion that holds
  only under a reading is never shown without what the reading costs.
- **Same engine, same store.** Every run is an ordinary run of the entry's scenario with
  the point's overrides after the variant's (:mod:`vegaslab.study.runner`, :mod:`vegaslab.sweeps.engine`):
  resumable, shared with ``reproduce`` and ``sweep`` in the same store, on one machine or a
  Dask cluster, and a second call recomputes nothing.
- **Checked before anything runs.** :func:`load_study` checks every field of a study file and
  :func:`plan` has the core resolve every run it plans; a mistake is a :class:`StudyError`
  naming the file, the field and the level, never a failed run hours later. A study file
  names input only: its entry is a catalog id (:data:`ENTRY_ID`), never a path.
- **Outputs under the one rule for files.** A study writes ``<id>.json`` and
  ``<id>-<n>.png`` with :mod:`vegaslab.safe_io`, and reads a report directory's summaries
  and figures back as files it does not own (:func:`load_summaries`): checked against
  :data:`SUMMARY_SCHEMA`, figures only PNGs of that study in that directory; a bad one is set
  aside and named, never used.

One module per job: :mod:`.model` (factors, points, statuses, verdicts), :mod:`.files` (reading
study files), :mod:`.planning`, :mod:`.running`, :mod:`.readings` (algorithm readings across
entries), :mod:`.figures` and :mod:`.summaries`; this
package re-exports their public names. The summaries' text forms are the report's
(:mod:`vegaslab.report.robustness_text`).
"""
from __future__ import annotations

from ...deprecation import moved_names
from .figures import MAX_FIGURE_BYTES, PNG_SIGNATURE, figure, figure_name, read_figure
from .files import list_studies, load_study, one_study_per_entry, one_study_per_name, studies_dir
from .model import (ENTRY_ID, FAMILY_ALPHA, MAX_STUDY_RUNS, MIN_SEEDS, POINT_STATUSES, PROVENANCES, VERDICTS, Factor,
                    Point, PointResult, Stated, Study, StudyError, StudyResult, decide, exact_interval,
                    false_verdict_rates, half_tail, judge, min_seeds, point_alpha, status_chances, wilson)
from .planning import Plan, plan, point_count, points
from .running import check_ns2, run_study
from .summaries import (MAX_ERROR_CHARS, MAX_POINT_ERRORS, MAX_SUMMARY_BYTES, SUMMARY_SCHEMA, load_summaries,
                        problems, save_summary, study_name, summary)

#: The summaries' text forms (their table cells and ``robustness.md``), which the report layer
#: owns now (:mod:`vegaslab.report.robustness_text`): readable here for one release, with a warning.
__getattr__ = moved_names(__name__, dict.fromkeys(
    ("fmt", "default_cell", "study_cell", "ns2_cell", "default_status", "markdown", "set_aside_name"),
    "vegaslab.report.robustness_text"))
