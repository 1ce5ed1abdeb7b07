"""The budgets every claim is evaluated under (the package docstring's table says why each is
what it is): exceeding one gives an ``error`` verdict whose detail starts ``budget exceeded:``."""

#: Characters in an expression (the catalog's longest claim has 895).
MAX_EXPR_CHARS = 10_000
#: Nesting depth of the parsed syntax tree; also keeps the recursive walk far from Python's
#: recursion limit.
MAX_DEPTH = 100
#: Evaluation steps: one per syntax node evaluated and one per list item built.
MAX_STEPS = 200_000
#: Items in one list: a ``range(...)``, a list literal, a comprehension's result.
MAX_ITEMS = 100_000
#: Data reads: one per seed whose value, time series or metric is read (a read is remembered
#: for the rest of the claim, so reading the same thing again costs nothing). A read costs about
#: 1-3 ms (a metric function: up to 0.1 s); the catalog's busiest claim makes 200.
MAX_READS = 2_000
#: ``abs(b)`` in ``a ** b``.
MAX_EXPONENT = 1_000
#: Characters in a string built by ``{name}`` interpolation.
MAX_STRING = 1_000
#: ``abs(n)`` in ``round(x, n)``.
MAX_ROUND_DIGITS = 15
#: ``abs`` of a ``range(...)`` argument.
MAX_RANGE_BOUND = 10**15
#: Characters of any text a verdict shows (longer texts are cut with "…").
MAX_TEXT = 20_000
#: Items a list shows in a verdict (the rest is counted, not shown).
MAX_SHOWN_ITEMS = 100
#: Wall time of one claim's evaluation, checked between steps: a safety net for slow metric
#: functions (the catalog's slowest claim takes 4.4 s on a loaded 2-core machine).
MAX_SECONDS = 30.0
