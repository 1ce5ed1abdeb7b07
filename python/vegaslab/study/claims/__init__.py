"""Checkable claims: a small, safe expression language over a catalog entry's runs.

A claim (``[[meta.claim]]`` in a catalog file, docs/catalog-format.md) has ``text`` (the paper's
words), ``expr`` (an expression in this language) and optionally ``source`` (table or figure).
The expression is parsed with :mod:`ast` and evaluated by walking the tree: only the constructs
below are accepted, nothing is ever passed to :func:`eval`, and nothing in a claim can reach a
Python attribute, a global or a dunder name (see "Safety" below).

References
    ``VARIANT:ENTITY.METRIC`` is the mean over seeds of one number of a variant's runs, as
    :meth:`Results.value` reads it: ``vegas-a:f1.throughput_bps``, ``newreno-q10:R1->R2.mean_len_pkts``,
    ``vegas:meta.duration_s``. An entry without ``[[variant]]`` has one run named after the entry
    id. ``{name}`` inside a reference is filled in from a comprehension variable
    (``v1-on{m}:R1->R2.utilisation_ratio``); ``*`` and ``?`` in the variant part are wildcards and
    make the reference a list, one mean per matching variant in catalog order
    (``vegas-q*:f1.retransmitted_pkts``). A reference that needs other characters, or starts with
    a wildcard, goes in backticks: `` `*-q10:f1.completion_time_s` ``. Put spaces around
    ``-`` and ``*`` next to a reference (``a - vegas:f1.x``): ``a-vegas:f1.x`` reads as the
    variant ``a-vegas``.

Operators
    numbers, strings, ``[lists]``, ``+ - * / // % **``, comparisons (chains too), ``and``,
    ``or``, ``not``, ``x if c else y``, and generator expressions
    ``f(expr for m in [200, 150, 100] if cond)`` (also over ``range(...)`` or a list reference).
    ``true``, ``false`` and ``inf`` are names; ``inf`` may only be compared with (``x < inf``),
    never computed with.

Functions
    ``mean min max sum std len abs all any round`` over a list, a generator or their arguments
    (``std`` is the population standard deviation); ``approx(a, b, rel=0.1)`` (|a - b| <= rel
    |b|); ``within(x, lo, hi)``; ``seeds(ref)`` the per-seed values of a reference;
    ``between(ref, t0, t1)`` the mean of a time series (``series_flows`` columns for a flow:
    ``throughput_bps``, ``cwnd_pkts``, ``rtt_s``...; ``length_pkts`` for a queue) over
    ``t0 < time_s <= t1``,
    averaged over seeds; ``series_max(ref[, t0, t1])`` and ``series_min(...)`` likewise;
    ``seconds_below(ref, level, t0, t1[, window])`` and ``seconds_outside(ref, lo, hi, t0, t1[,
    window])`` judge a time course: the seconds the series' trailing ``window``-second mean
    spends below ``level`` (outside ``lo..hi``), the worst seed's (:mod:`.timecourse`);
    ``run("variant")`` a variant's runs, for functions of :mod:`vegaslab.study.metrics`.
    Any other name is looked up in ``vegaslab.study.metrics.__all__`` when that module can be imported
    (``jain_index([...])``, ``line_utilisation(run("vegas"), "R1->R2")``): a ``run(...)``
    argument calls the function once per seed with that seed's :class:`Results` and the results
    are averaged. A name that is not available gives the verdict ``skipped``.

Safety
    ``str.format`` field lookups reach any object (in an audit,
    ``'{m.__init__.__globals__[...]}'`` read an environment variable into ``index.html``), so
    strings and references are filled in by :func:`interpolate`, which accepts exactly ``{name}``
    where ``name`` is a comprehension variable holding a string or a number: no attribute
    (``{m.x}``), index (``{m[0]}``), conversion or format spec (``{m:>99999}``), and a stray brace
    is an error. The parser rejects attribute access, indexing, ``**kwargs``, lambdas, and every
    name that starts with ``_``; functions come from the fixed table below or
    ``vegaslab.study.metrics.__all__``. A claim's ``text`` is never interpolated.

Budgets
    Every evaluation runs under fixed limits, so that a claim cannot exhaust memory or time
    (``len(range(10**9))`` used to raise MemoryError out of :func:`evaluate` and kill
    ``reproduce`` after all its runs had finished). The numbers are at least ten times what the
    catalog needs (measured over its 177 claims on the runs of a full reproduce: at most 895
    characters, depth 11, 712 steps, 200 data reads, a 2,843-character detail, 4.4 s) and low
    enough that a hostile claim ends within about a second of its own work (200,000 steps take
    0.3-1.3 s), or about 6 s when it makes 2,000 distinct time-series reads:

    ==========================  ===========  =================================================
    :data:`MAX_EXPR_CHARS`      10,000       characters in an expression
    :data:`MAX_DEPTH`           100          nesting depth of the syntax tree
    :data:`MAX_STEPS`           200,000      evaluation steps: one per syntax node evaluated and
                                             one per list item built (a ``range``, a list, a
                                             comprehension's items)
    :data:`MAX_ITEMS`           100,000      items in one list (``range``, literal, comprehension)
    :data:`MAX_READS`           2,000        data reads: one per seed whose value, time series
                                             or metric is read (repeating a read is free)
    :data:`MAX_EXPONENT`        1,000        ``abs(b)`` in ``a ** b``
    :data:`MAX_STRING`          1,000        characters in a string built by ``{name}``
    :data:`MAX_ROUND_DIGITS`    15           ``abs(n)`` in ``round(x, n)``
    :data:`MAX_RANGE_BOUND`     1e15         ``abs`` of a ``range`` argument
    :data:`MAX_TEXT`            20,000       characters of a verdict's detail (cut with "…")
    :data:`MAX_SHOWN_ITEMS`     100          list items a verdict shows (the rest is counted)
    :data:`MAX_SECONDS`         30           wall time of one claim (a safety net for slow
                                             metric functions; checked between steps)
    ==========================  ===========  =================================================

    Exceeding one gives an ``error`` verdict whose detail starts ``budget exceeded:``.
    Numbers are floats; an arithmetic result that overflows is an error.

Missing data
    A claim must not hold, or fail, on data that is not there (``max([0, nan])`` is 0, ``x / 0``
    is inf, ``all([])`` is true, NaN compares unequal to everything). The verdict is ``error``
    with a detail starting ``missing data:`` that names the reference, variant and seed when:

    - a referenced value is null, NaN or infinite (``missing data: vegas:f1.completion_time_s
      is nan in seed 2``), or a metric function returns one;
    - a variant has any failed seed: it is not judged on the surviving seeds (the detail gives
      the failed seeds and their errors, from :attr:`RunSet.failed`);
    - a time series has no finite sample in the window (NaN samples, e.g. ``rtt`` while no
      connection is open, are skipped; an infinite sample is missing data);
    - ``mean min max sum std all any`` get an empty list, or a division (``/ // %``) has a
      zero divisor.

    ``len`` of an empty list is 0 (a count is honest), and the literal ``inf`` may be compared
    with but not computed with.

:func:`evaluate` returns a :class:`Verdict`: ``holds`` / ``fails`` (the expression's truth),
``error`` (a reference to a missing variant or metric, missing data, a budget exceeded, a type
error, or any other failure) or ``skipped``, with the expression re-written with the numbers it
used, e.g. ``940,240 > 3 x 217,320 = 651,960``. :func:`evaluate` and :func:`evaluate_all` never
raise (except KeyboardInterrupt and SystemExit, which are the user's).

The language is in one module per job: :mod:`.parser` (an expression to a checked syntax
tree), :mod:`.evaluator` (the tree to a value, under the budgets of :mod:`.budgets`),
:mod:`.functions` (what a claim can call), :mod:`.interpolation` (``{name}``), :mod:`.runs`
(the data), :mod:`.timecourse` (the time-course rule), :mod:`.shown` (values as a verdict shows them), :mod:`.errors` (what stops a
verdict) and :mod:`.verdicts` (:func:`evaluate`, :func:`measure`); this package re-exports their
public names.
"""

from __future__ import annotations

from .budgets import (MAX_DEPTH, MAX_EXPONENT, MAX_EXPR_CHARS, MAX_ITEMS, MAX_RANGE_BOUND, MAX_READS,
                      MAX_ROUND_DIGITS, MAX_SECONDS, MAX_SHOWN_ITEMS, MAX_STEPS, MAX_STRING, MAX_TEXT)
from .errors import ClaimBudgetExceeded, ClaimError, ClaimMissingData, ClaimSkipped
from .interpolation import interpolate
from .parser import Parsed, parse
from .runs import RunSet
from .shown import fmt
from .verdicts import Claim, Verdict, evaluate, evaluate_all, measure

__all__ = ["Claim", "Verdict", "RunSet", "ClaimError", "ClaimMissingData", "ClaimBudgetExceeded",
           "parse", "evaluate", "evaluate_all", "fmt", "interpolate"]
