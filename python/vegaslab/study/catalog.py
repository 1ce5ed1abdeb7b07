"""The scenario catalog: paper experiments as scenario files, shipped inside the package.

Where it lives: the catalog is package data,
``python/vegaslab/catalog_data/*.toml`` in the source tree and ``vegaslab/catalog_data/`` in an
installed wheel, found through :mod:`importlib.resources` (:func:`builtin_dir`). There is one
copy of each file, so the checkout and a ``pip install`` run the same scenarios, and
``vegaslab reproduce va-reroute`` works from any directory. maturin puts every file under the
python-source package into the wheel, so no extra include rule is needed
(tests/test_package_data.py checks that nothing in pyproject.toml excludes them).
``$VEGASLAB_CATALOG`` (or ``directory=``) replaces it with a catalog of your own.

A catalog file is a normal scenario (the core ignores ``[meta]`` and ``[[variant]]``) plus
(docs/catalog-format.md has the full description and examples):

``[meta]``
    ``id``, ``title``, ``paper``, ``figure``, ``notes``, ``assumptions = [{field, value, reason}]``
    and, for a file that is a single run, ``[meta.published]``.
    ``seeds = [1, 2, 3]`` or ``runs = 10`` (seeds 1..10): run every variant once per seed and
    report mean and spread (default: one run with the file's ``run.seed``, else 1).
    ``figures = [{kind = "throughput" | "cwnd" | "queue" | "bar" | "line", ...}]`` (or
    ``[[meta.figures]]`` tables): the report's plots; sensible defaults when absent. A figure's
    ``paper_figure`` names the paper's figure, its ``reference`` tables the levels the paper
    describes over an interval (checked by :func:`_check_figure_papers`).
``[meta.quick]``
    what ``--quick`` changes: ``set`` (overrides applied to every variant, e.g.
    ``{"run.duration" = "50s"}``), ``seeds`` / ``runs``, ``note`` (said in the report).
``[[meta.claim]]``
    ``id`` (a name, :data:`CLAIM_ID`; referred to as ``entry#id``), ``text`` (the paper's
    claim in words), ``expr`` (a checkable expression, see :mod:`vegaslab.study.claims`),
    optional ``source`` (table/figure) and ``kind`` (:data:`CLAIM_KINDS`).
``[[variant]]`` (optional, any number)
    ``name``; ``set`` = override path -> value (``{"flows[0].cc" = "newreno"}``);
    ``published`` = ``"<flow|queue|link>.<metric>"`` -> number
    (``{"f1.completion_time_s" = 161.3, "R1->R2.mean_len_pkts" = 11.46}``).
    With ``[[variant.axis]]`` tables it is a *grid*: ``name`` is a template over the axis
    names (``"vegas-q{limit}"``), ``set`` applies under every point, ``published`` maps a
    produced name to its numbers, and the axes are the sweep language's
    (docs/sweep-format.md) plus ``labels`` (what ``{axis}`` fills in, e.g. ``"5e-4"`` for
    0.0005). See :func:`_expand_grid`.

Claims, figures and quick settings live under ``[meta]`` because the core rejects unknown
top-level tables, so a catalog file stays a runnable scenario (``vegaslab run va-reroute``, or
the file's path).

:func:`expand` turns an entry into :class:`Variant` s and :func:`compare` sets one run's results
beside the published numbers; :func:`vegaslab.reproduction.reproduce` runs entries on the
engine, keeping finished runs in a results store (:mod:`vegaslab.study.runner`), and writes the
report (:mod:`vegaslab.report`): ``index.html``, ``summary.md`` and every run's tables.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd  # imported where used: `vegaslab run CATALOG-ID` resolves ids without it

from ..errors import ScenarioError
from ..spelling import did_you_mean
from ..scenario import format_override, load_scenario, to_toml

from ..deprecation import moved_names
from .comparison import REPRODUCE_COLUMNS, ratio  # noqa: F401 - re-exported
from ..scenario import PACKAGE_DATA, builtin_dir  # noqa: F401 - re-exported: the built-in catalog
from .runner import safe_name  # noqa: F401 - re-exported: the run directories' names

# The entries ``vegaslab reproduce`` runs when given none: owned by the import-free
# catalog_defaults (the command line reads them while building its parser), re-exported here.
from .defaults import DEFAULT_IDS  # noqa: E402

COMPARE_COLUMNS = ["metric", "published", "ours", "ratio"]
#: Figure kinds the report draws (docs/catalog-format.md).
FIGURE_KINDS = ("throughput", "cwnd", "queue", "bar", "line")


@dataclass(frozen=True)
class Variant:
    """One run of a catalog entry (a ``[[variant]]`` table, a grid's point, or the file itself):
    a scenario file plus overrides, and the published numbers to compare it with. Not to be
    confused with :class:`vegaslab.sweeps.store.RunSpec`, one resolved run of the engine."""

    name: str
    scenario_path: Path
    overrides: tuple[str, ...] = ()
    published: Mapping[str, float] = field(default_factory=dict)
    entry_id: str = ""


@dataclass(frozen=True)
class Entry:
    """A catalog file, parsed (its grids expanded and checked by the core; the rest not yet
    validated). ``variants`` are the runs' variant tables in file order, a grid's points
    included as ordinary ``{name, set, published}`` tables."""

    id: str
    path: Path
    meta: Mapping[str, Any]
    variants: tuple[Mapping[str, Any], ...]
    scenario: Mapping[str, Any]

    @property
    def title(self) -> str:
        return str(self.meta.get("title", ""))

    @property
    def paper(self) -> str:
        return str(self.meta.get("paper", ""))

    @property
    def claims(self) -> list[dict]:
        """``[[meta.claim]]`` tables: id, text, expr, source, kind. A claim without an id (an
        entry of a catalog of one's own) is named by its position, 1-based, which moves when
        claims are inserted: the built-in catalog names every claim."""
        return [{"id": str(i), "kind": "paper", **c} for i, c in enumerate(self.meta.get("claim", []), 1)]

    @property
    def note_expectations(self) -> list[tuple[str, str]]:
        """(claim id, ``holds`` or ``fails``) for each ``#id (holds|fails)`` in the notes."""
        return NOTE_EXPECTATION.findall(str(self.meta.get("notes", "")))

    @property
    def figures(self) -> list[dict]:
        """``meta.figures`` (an inline array or ``[[meta.figures]]`` tables)."""
        return [dict(f) for f in self.meta.get("figures", [])]

    @property
    def quick(self) -> Mapping[str, Any]:
        return self.meta.get("quick", {}) or {}

    def seeds(self, quick: bool = False) -> list[int]:
        """The seeds every variant runs with: ``[meta.quick]``'s under ``quick`` when it has
        any, else ``meta.seeds`` / ``meta.runs``, else the file's ``run.seed`` (default 1)."""
        for table in ((self.quick, self.meta) if quick else (self.meta,)):
            got = _seeds_of(table)
            if got:
                return got
        run = self.scenario.get("run", {})
        return [int(run.get("seed", 1)) if isinstance(run, Mapping) else 1]

    def quick_overrides(self) -> tuple[str, ...]:
        return tuple(format_override(k, v) for k, v in (self.quick.get("set") or {}).items())

    def quick_description(self) -> str:
        """What ``--quick`` changes for this entry, in words (empty when nothing)."""
        parts = []
        if self.quick.get("set"):
            parts.append(", ".join(self.quick_overrides()))
        q, full = _seeds_of(self.quick), _seeds_of(self.meta)
        if q and q != (full or [1]):
            parts.append(f"seeds {q} instead of {full or [1]}")
        if self.quick.get("note"):
            parts.append(str(self.quick["note"]).strip())
        return "; ".join(parts)

    def run_count(self, quick: bool = False) -> int:
        """How many simulations ``reproduce`` makes for this entry: its runs (one per
        ``[[variant]]``, or the file itself) times its seeds; under ``quick``, the quick ones."""
        return len(self.runs(quick=quick)) * len(self.seeds(quick=quick))

    def runs(self, *, quick: bool = False) -> list[Variant]:
        """The entry's runs (:func:`expand`); a method so that the runner and the report, which
        never import this module, can expand the entries they are given."""
        return expand(self, quick=quick)

    def published_of(self, variant: str) -> Mapping[str, float]:
        """The published numbers of one run (a variant's name, or the entry's id for a file
        without variants); empty when it has none or there is no such run."""
        for v in self.variants:
            if v["name"] == variant:
                return v.get("published", {}) or {}
        if not self.variants and variant == self.id:
            return self.meta.get("published", {}) or {}
        return {}


def _seeds_of(table: Mapping[str, Any]) -> list[int]:
    if table.get("seeds") is not None:
        return [int(x) for x in table["seeds"]]
    if table.get("runs") is not None:
        return list(range(1, int(table["runs"]) + 1))
    return []


def catalog_dir(directory: str | os.PathLike | None = None) -> Path:
    """The catalog directory: ``directory`` if given, else ``$VEGASLAB_CATALOG``, else the
    built-in catalog (:func:`builtin_dir`). The working directory plays no part, so a command
    gives the same entries wherever it is started."""
    if directory is not None:
        return Path(directory)
    if os.environ.get("VEGASLAB_CATALOG"):
        return Path(os.environ["VEGASLAB_CATALOG"])
    return builtin_dir()


def _check_published(where: str, table: Any) -> dict[str, float]:
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise ScenarioError(f"{where}: must be a table of \"<name>.<metric>\" = number")
    out = {}
    for key, value in table.items():
        if "." not in key:
            raise ScenarioError(f"{where}.{key}: key must be \"<flow|queue|link>.<metric>\"")
        from ..results import renamed_column_message  # here: resolving an id must not import pandas

        if renamed := renamed_column_message(key.rpartition(".")[2]):
            raise ScenarioError(f"{where}.{key}: {renamed}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ScenarioError(f"{where}.{key}: must be a number, got {value!r}")
        out[key] = value
    return out


def _int_list(where: str, value: Any) -> None:
    if not isinstance(value, list) or not value or not all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in value):
        raise ScenarioError(f"{where}: must be a non-empty array of non-negative integers")


def _check_seeds(where: str, table: Mapping[str, Any]) -> None:
    if "seeds" in table and "runs" in table:
        raise ScenarioError(f"{where}: give seeds or runs, not both")
    if "seeds" in table:
        _int_list(f"{where}.seeds", table["seeds"])
    if "runs" in table:
        r = table["runs"]
        if isinstance(r, bool) or not isinstance(r, int) or r < 1:
            raise ScenarioError(f"{where}.runs: must be a positive integer, got {r!r}")


def _check_meta_extensions(path: Path, meta: Mapping[str, Any]) -> None:
    """Structure of seeds/runs, [meta.quick], [[meta.claim]] and figures (the claim
    expressions themselves are checked when evaluated: a bad one is an ``error`` verdict)."""
    where = f"{path}: meta"
    _check_seeds(where, meta)
    quick = meta.get("quick", {})
    if not isinstance(quick, Mapping):
        raise ScenarioError(f"{where}.quick: must be a table")
    _check_seeds(f"{where}.quick", quick)
    if not isinstance(quick.get("set", {}), Mapping):
        raise ScenarioError(f"{where}.quick.set: must be a table of override path -> value")
    claims = meta.get("claim", [])
    if not isinstance(claims, list):
        raise ScenarioError(f"{where}.claim: must be an array of tables ([[meta.claim]])")
    ids: dict[str, int] = {}
    for i, c in enumerate(claims):
        for key in ("text", "expr"):
            if not isinstance(c, Mapping) or not isinstance(c.get(key), str) or not c[key].strip():
                raise ScenarioError(f"{where}.claim[{i}].{key}: required, a non-empty string")
        cid = c.get("id")
        if cid is not None:
            if not isinstance(cid, str) or not CLAIM_ID.fullmatch(cid) or cid.isdigit():
                raise ScenarioError(f"{where}.claim[{i}].id: a claim id is 1 to 48 lower-case letters, digits and '-', "
                                    f"starting with a letter or digit, not only digits (those name claims without an "
                                    f"id by position), got {cid!r}")
            if cid in ids:
                raise ScenarioError(f"{where}.claim[{i}].id: {cid!r} is also the id of claim[{ids[cid]}]")
            ids[cid] = i
        kind = c.get("kind", "paper")
        if kind not in CLAIM_KINDS:
            raise ScenarioError(f"{where}.claim[{i}].kind: must be one of {', '.join(CLAIM_KINDS)}, got {kind!r}")
    named = set(ids) | {str(i) for i, c in enumerate(claims, 1) if isinstance(c, Mapping) and "id" not in c}
    for cid, expected in NOTE_EXPECTATION.findall(str(meta.get("notes", ""))):
        if cid not in named:
            raise ScenarioError(f"{where}.notes: #{cid} ({expected}) names no claim of this entry (its claims: "
                                f"{', '.join(sorted(named)) or 'none'})")
    for name in ("figures",):
        figs = meta.get(name, [])
        if not isinstance(figs, list):
            raise ScenarioError(f"{where}.{name}: must be an array of tables")
        for i, f in enumerate(figs):
            if not isinstance(f, Mapping) or f.get("kind") not in FIGURE_KINDS:
                raise ScenarioError(f"{where}.{name}[{i}].kind: must be one of {', '.join(FIGURE_KINDS)}")


#: A claim's id (``[[meta.claim]] id``): how notes, studies and reports refer to it, as
#: ``entry#id``; a name, so it stays when claims are added, removed or reordered.
CLAIM_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,47}")
#: What a note expects of one of the entry's claims, written in the notes as ``#id (holds)`` or
#: ``#id (fails)``: ``reproduce`` checks it against the verdict and the report marks a note that
#: the verdict contradicts, so that notes cannot go stale unseen.
NOTE_EXPECTATION = re.compile(r"(?<![\w-])#([a-z0-9][a-z0-9-]{0,47})\s+\((holds|fails)\)")

#: ``[[meta.claim]] kind``: ``paper`` (the paper's statement, counted in the held totals) or
#: ``supplementary`` (another reading shown beside it, e.g. a metric that is not the paper's
#: definition; shown, never counted).
CLAIM_KINDS = ("paper", "supplementary")

#: Figure kinds drawn over time: the ones a ``reference`` (a described level over an interval)
#: applies to.
SERIES_FIGURE_KINDS = ("throughput", "cwnd", "queue")
#: Keys of a figure's ``reference`` table (docs/catalog-format.md, "Reference lines").
REFERENCE_KEYS = ("variant", "metric", "level", "interval", "below", "window", "source")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_figure_papers(path: Path, meta: Mapping[str, Any], runs: Mapping[str, Mapping[str, float]]) -> None:
    """A figure's ``paper_figure`` and ``reference`` tables, against the entry's runs (``runs``:
    run name -> its published numbers): every error names the file and the field."""
    for i, f in enumerate(meta.get("figures", []) or []):
        where = f"{path}: meta.figures[{i}]"
        pf = f.get("paper_figure")
        if pf is not None:
            if isinstance(pf, Mapping):
                for k, v in pf.items():
                    if k not in runs:
                        raise ScenarioError(f"{where}.paper_figure.{json.dumps(k)}: not a variant of this entry "
                                            f"(variants: {', '.join(runs)})")
                    if not isinstance(v, str) or not v.strip():
                        raise ScenarioError(f"{where}.paper_figure.{json.dumps(k)}: must be a non-empty string "
                                            "(the paper's figure, e.g. \"Fig. 2\")")
            elif not isinstance(pf, str) or not pf.strip():
                raise ScenarioError(f"{where}.paper_figure: must be a non-empty string (\"Fig. 2\") or a table "
                                    "variant -> string")
        refs = f.get("reference")
        if refs is None:
            continue
        if f.get("kind") not in SERIES_FIGURE_KINDS:
            raise ScenarioError(f"{where}.reference: only a time-series figure ({', '.join(SERIES_FIGURE_KINDS)}) "
                                f"takes a reference; a {f.get('kind')} figure draws the published numbers itself")
        single = isinstance(refs, Mapping)
        if not single and not (isinstance(refs, list) and refs and all(isinstance(r, Mapping) for r in refs)):
            raise ScenarioError(f"{where}.reference: must be a table or a non-empty array of tables")
        for k, r in enumerate([refs] if single else refs):
            at = f"{where}.reference" + ("" if single else f"[{k}]")
            unknown = [x for x in r if x not in REFERENCE_KEYS]
            if unknown:
                raise ScenarioError(f"{at}.{unknown[0]}: unknown field; a reference takes {', '.join(REFERENCE_KEYS)}")
            variant = r.get("variant")
            if not isinstance(variant, str) or variant not in runs:
                raise ScenarioError(f"{at}.variant: must name a variant of this entry ({', '.join(runs)}), "
                                    f"got {variant!r}")
            metric = r.get("metric")
            if not isinstance(metric, str) or "." not in metric:
                raise ScenarioError(f"{at}.metric: must be \"<flow|queue>.<metric>\" (e.g. \"f1.throughput_bps\"), "
                                    f"got {metric!r}")
            if "level" in r:
                if not _number(r["level"]) or r["level"] < 0:
                    raise ScenarioError(f"{at}.level: must be a finite number >= 0, got {r['level']!r}")
            elif metric not in runs[variant]:
                raise ScenarioError(f"{at}.level: required, because variant {variant!r} has no published {metric} "
                                    "to take it from")
            if "interval" in r:
                iv = r["interval"]
                if not (isinstance(iv, list) and len(iv) == 2 and all(_number(x) for x in iv)
                        and 0 <= iv[0] < iv[1]):
                    raise ScenarioError(f"{at}.interval: must be [t0, t1] in seconds with 0 <= t0 < t1, got {iv!r}")
            if "below" in r and not (_number(r["below"]) and 0 < r["below"] < 1):
                raise ScenarioError(f"{at}.below: must be a fraction > 0 and < 1 (of the level), got {r['below']!r}")
            if "window" in r and not (_number(r["window"]) and r["window"] > 0):
                raise ScenarioError(f"{at}.window: must be a number of seconds > 0, got {r['window']!r}")
            if "source" in r and not isinstance(r["source"], str):
                raise ScenarioError(f"{at}.source: must be a string (where the paper says it)")


#: Keys of a hand-written ``[[variant]]`` and of a grid (a ``[[variant]]`` with ``axis``).
VARIANT_KEYS = ("name", "set", "published")
GRID_KEYS = ("name", "set", "published", "axis")
#: Keys a grid's axis takes besides the sweep language's (which the core checks).
GRID_AXIS_EXTRA_KEYS = ("labels",)
_TEMPLATE_FIELD = re.compile(r"\{([^{}]*)\}")


def _grid_error(path: Path, where: str, set_keys: Iterable[str], exc: ScenarioError) -> ScenarioError:
    """The core's error about the ``[sweep]`` built from a grid, re-addressed to the grid:
    ``sweep.axis[1].values[2]`` becomes ``variant[3].axis[1].values[2]``, a bad ``set``
    override is blamed on ``variant[3].set."<path>"``, anything else is prefixed with the
    grid's place (it is an error of the scenario under that grid's overrides)."""
    field_ = exc.field or ""
    reason = exc.reason if exc.reason is not None else str(exc)
    reason = reason.replace("sweep.axis[", f"{where}.axis[")
    if field_ == "sweep" or field_.startswith(("sweep.", "sweep[")):
        field_ = where + field_[len("sweep"):]
        if exc.kind == "unknown-field" and re.fullmatch(re.escape(where) + r"\.axis\[\d+\]\.[^.\[]+", field_):
            reason += f" (a catalog grid's axis also takes {', '.join(GRID_AXIS_EXTRA_KEYS)})"
        message = f"{path}: {field_}: {reason}"
    else:
        owner = next((k for k in set_keys if field_ == k or field_.startswith((k + ".", k + "["))), None)
        if owner is not None:
            field_ = f"{where}.set.{json.dumps(owner)}"
            message = f"{path}: {field_}: {exc.field}: {reason}" if exc.field != owner else f"{path}: {field_}: {reason}"
        else:
            message = f"{path}: {where}: {field_ + ': ' if field_ else ''}{reason}"
            field_ = where
    err = ScenarioError(message)
    err.file, err.field, err.kind, err.reason = str(path), field_, exc.kind, reason
    return err


def _expand_grid(path: Path, scenario: Mapping[str, Any], index: int, grid: Mapping[str, Any]) -> list[dict]:
    """The variants of the grid ``variant[index]``, in the core's point order (row-major over
    the axes as written, last axis fastest: docs/sweep-format.md).

    A grid is a ``[[variant]]`` with ``[[variant.axis]]`` tables, not a top-level table of its
    own, so that a catalog file stays a runnable scenario (docs/decisions.md, "Catalog grids are
    variants with axes"). The axes are handed to the core as the ``[sweep]`` of the entry's own
    scenario (``_core.expand_sweep``, with the grid's ``set`` as the overrides under every point),
    so ranges, value types, override spelling and point validation have one owner; this function
    only strips ``labels``, fills the name template with :func:`vegaslab.study.claims.interpolate`
    (never ``str.format``) and re-addresses the core's errors to the grid. A grid expands into
    ordinary variant tables (``name``, ``set``, ``published``, plus ``overrides``: the grid's
    ``set`` then the core's ``path=value`` strings), so nothing downstream knows grids."""
    from ..core import call_core, load_core
    from .claims import ClaimError, interpolate

    where = f"variant[{index}]"
    unknown = [k for k in grid if k not in GRID_KEYS]
    if unknown:
        raise ScenarioError(f"{path}: {where}.{unknown[0]}: unknown field; a grid (a [[variant]] with axis) takes "
                            f"{', '.join(GRID_KEYS)}")
    template = grid.get("name")
    if not isinstance(template, str) or not template:
        raise ScenarioError(f"{path}: {where}.name: required, a non-empty string (a template such as "
                            "\"vegas-q{limit}\" over the axis names)")
    sets = grid.get("set", {})
    if not isinstance(sets, Mapping):
        raise ScenarioError(f"{path}: {where}.set: must be a table of override path -> value")
    axes = grid["axis"]
    if not isinstance(axes, list) or not axes or not all(isinstance(a, Mapping) for a in axes):
        raise ScenarioError(f"{path}: {where}.axis: must be a non-empty array of tables ([[variant.axis]])")
    labels: dict[int, list] = {}
    core_axes = []
    for k, axis in enumerate(axes):
        if "labels" in axis:
            got = axis["labels"]
            if not isinstance(got, list) or not got or not all(
                    isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in got):
                raise ScenarioError(f"{path}: {where}.axis[{k}].labels: must be a non-empty array of strings or "
                                    f"numbers (what {{name}} fills in for each value), got {got!r}")
            labels[k] = got
        core_axes.append({key: val for key, val in axis.items() if key not in GRID_AXIS_EXTRA_KEYS})

    base = {key: val for key, val in scenario.items() if key != "sweep"}
    text = to_toml({**base, "sweep": {"axis": core_axes}})
    set_overrides = [format_override(str(key), val) for key, val in sets.items()]
    core = load_core()
    try:
        plan = json.loads(call_core(core.expand_sweep, text, str(path), set_overrides))
    except ScenarioError as exc:
        raise _grid_error(path, where, [str(key) for key in sets], exc) from None

    for k, got in labels.items():
        n = plan["axes"][k]["len"]
        if len(got) != n:
            raise ScenarioError(f"{path}: {where}.axis[{k}].labels: has {len(got)} labels but the axis has {n} "
                                "values: give one label per value")
    columns = [p for a in plan["axes"] for p in a["params"]]
    known = sorted({p["name"] for p in columns} | {plan["axes"][k]["name"] for k in labels})
    for m in _TEMPLATE_FIELD.finditer(template):
        if re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", m.group(1)) and m.group(1) not in known:
            usable = [n for n in known if re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", n)]
            raise ScenarioError(f"{path}: {where}.name: {{{m.group(1)}}} is not an axis of this grid; the template can "
                                f"fill in {', '.join('{' + n + '}' for n in usable) or 'nothing: name the axes'} "
                                "(an axis is named by its name, else its path)")

    variants: list[dict] = []
    first_point: dict[str, int] = {}
    for point in plan["points"]:
        env: dict[str, Any] = {}
        for p, value in zip(columns, point["values"]):
            env[p["name"]] = value
        for k, got in labels.items():
            env[plan["axes"][k]["name"]] = got[point["coords"][k]]
        try:
            name = interpolate(template, env, f"{path}: {where}.name")
        except ClaimError as exc:
            raise ScenarioError(str(exc)) from None
        if name in first_point:
            raise ScenarioError(f"{path}: {where}.name: {template!r} gives {name!r} for point {first_point[name]} and "
                                f"for point {point['index']} ({', '.join(point['overrides'])}): put every axis that "
                                "varies in the template")
        first_point[name] = point["index"]
        merged = dict(sets)
        merged.update({p["path"]: value for p, value in zip(columns, point["values"])})
        variants.append({"name": name, "set": merged, "published": {},
                         "overrides": tuple(set_overrides) + tuple(point["overrides"]),
                         "grid": index, "point": point["index"]})

    published = grid.get("published", {})
    if not isinstance(published, Mapping):
        raise ScenarioError(f"{path}: {where}.published: must be a table of variant name -> "
                            "{ \"<flow|queue|link>.<metric>\" = number }")
    by_name = {v["name"]: v for v in variants}
    for name, table in published.items():
        if name not in by_name:
            raise ScenarioError(f"{path}: {where}.published.{json.dumps(name)}: not a variant of this grid "
                                f"(it makes {', '.join(by_name)})")
        by_name[name]["published"] = _check_published(f"{path}: {where}.published.{json.dumps(name)}", table)
    return variants


def _parse_entry(path: Path) -> Entry:
    doc = load_scenario(path)
    meta = doc.get("meta", {})
    if not isinstance(meta, Mapping):
        raise ScenarioError(f"{path}: meta: must be a table")
    _check_published(f"{path}: meta.published", meta.get("published"))
    _check_meta_extensions(path, meta)
    tables = doc.get("variant", [])
    if not isinstance(tables, list):
        raise ScenarioError(f"{path}: variant: must be an array of tables ([[variant]])")
    scenario = {k: v for k, v in doc.items() if k not in ("meta", "variant")}
    variants: list[Mapping[str, Any]] = []
    seen: dict[str, str] = {}
    for i, v in enumerate(tables):
        where = f"{path}: variant[{i}]"
        if isinstance(v, Mapping) and "axis" in v:
            made = _expand_grid(path, scenario, i, v)
        else:
            if not isinstance(v, Mapping) or not isinstance(v.get("name"), str) or not v["name"]:
                raise ScenarioError(f"{where}.name: required, a non-empty string")
            unknown = [k for k in v if k not in VARIANT_KEYS]
            if unknown:
                raise ScenarioError(f"{where}.{unknown[0]}: unknown field; a variant takes {', '.join(VARIANT_KEYS)} "
                                    "(and axis, for a grid)")
            if _TEMPLATE_FIELD.search(v["name"]):
                raise ScenarioError(f"{where}.name: {v['name']!r} is a name template but the variant has no "
                                    "[[variant.axis]]; a grid needs axes, a hand-written variant a plain name")
            if not isinstance(v.get("set", {}), Mapping):
                raise ScenarioError(f"{where}.set: must be a table of override path -> value")
            _check_published(f"{where}.published", v.get("published"))
            made = [v]
        for m in made:
            owner = f"variant[{i}]" + (f" (point {m['point']})" if "point" in m else "")
            # Variant names become directory names (results/<entry>/<variant>/) and claim
            # references: the core's rule for names, so none can climb out of its directory
            # ("..") or collide with another once made safe ("a/b" and "a_b").
            if not _VARIANT_NAME.fullmatch(m["name"]):
                raise ScenarioError(f"{where}.name: {m['name']!r}"
                                    + (f" (made by {owner})" if "point" in m else "")
                                    + " must be 1 to 64 characters of letters, digits, '_' and '-'")
            if m["name"] in seen:
                raise ScenarioError(f"{where}.name: duplicate variant name {m['name']!r}"
                                    + (f", made by {owner}" if "point" in m else "")
                                    + f"; already the name of {seen[m['name']]}")
            seen[m["name"]] = owner
        variants.extend(made)
    runs = ({str(v["name"]): v.get("published", {}) or {} for v in variants} if variants
            else {str(meta.get("id", path.stem)): meta.get("published", {}) or {}})
    _check_figure_papers(path, meta, runs)
    return Entry(id=str(meta.get("id", path.stem)), path=path, meta=meta,
                 variants=tuple(variants), scenario=scenario)


def list_entries(directory: str | os.PathLike | None = None) -> list[Entry]:
    """Every ``*.toml`` directly in the catalog directory, sorted by id."""
    root = catalog_dir(directory)
    return sorted((_parse_entry(p) for p in root.glob("*.toml")), key=lambda e: e.id)


#: A variant's name: the core's rule for node and flow names (scenario/limits.rs).
_VARIANT_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def load_entry(id_or_path: str | os.PathLike, directory: str | os.PathLike | None = None) -> Entry:
    """An entry by id (``meta.id`` or file stem, e.g. ``"va-buffer"``), by a path relative to
    the catalog (``"bench/grids-net2"``), or by a file path."""
    root = catalog_dir(directory)
    name = os.fspath(id_or_path)
    candidates = [Path(name), root / name, root / f"{name}.toml"]
    for p in candidates:
        if p.is_file():
            return _parse_entry(p)
    for entry in list_entries(root):
        if entry.id == name:
            return entry
    ids = [e.id for e in list_entries(root)] if root.is_dir() else []
    known = ", ".join(ids) if root.is_dir() else f"no directory {root}"
    raise KeyError(f"no catalog entry {name!r}{did_you_mean(name, ids)} (known: {known})")


#: The group of entries whose ``meta.paper`` is empty in :func:`by_paper`.
NO_PAPER = "(no paper)"


def by_paper(entries: Iterable[Entry]) -> dict[str, list[Entry]]:
    """Entries grouped by ``meta.paper`` (papers sorted by name, entries by id; entries without
    a paper last, under :data:`NO_PAPER`). Every key but that one is a name
    :func:`resolve` (and ``vegaslab reproduce``) accepts for the whole group."""
    groups: dict[str, list[Entry]] = {}
    for e in sorted(entries, key=lambda e: e.id):
        groups.setdefault(e.paper or NO_PAPER, []).append(e)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0] == NO_PAPER, kv[0])))


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def format_listing(entries: Iterable[Entry], *, where: str | os.PathLike | None = None) -> str:
    """``vegaslab reproduce --list``: per paper, its entries with id, number of runs (full and
    ``--quick``) and title; the paper names and ids are what ``reproduce`` takes."""
    groups = by_paper(entries)
    everything = [e for group in groups.values() for e in group]
    papers = [p for p in groups if p != NO_PAPER]

    def counts(group: list[Entry]) -> str:
        return (f"{_count(len(group), 'entry', 'entries')}, {_count(sum(e.run_count() for e in group), 'run', 'runs')}"
                f" ({sum(e.run_count(quick=True) for e in group)} with --quick)")

    head = counts(everything).replace(",", f" in {_count(len(papers), 'paper', 'papers')},", 1)
    lines = [head + (f"; catalog: {where}" if where else ""),
             "Run entries or whole papers: vegaslab reproduce PAPER|ID ... [--quick], or everything: --all"]
    id_w = max([len("id")] + [len(e.id) for e in everything])
    for paper, group in groups.items():
        lines += ["", f"{paper}: {counts(group)}", f"  {'id'.ljust(id_w)}  {'runs':>5}  {'quick':>5}  title"]
        for e in group:
            lines.append(f"  {e.id.ljust(id_w)}  {e.run_count():>5}  {e.run_count(quick=True):>5}  {e.title}".rstrip())
    return "\n".join(lines)


def variant_overrides(variant: Mapping[str, Any]) -> tuple[str, ...]:
    """A variant's overrides: a grid's point carries the core's strings (``overrides``), a
    hand-written variant its ``set`` in file order."""
    if "overrides" in variant:
        return tuple(variant["overrides"])
    return tuple(format_override(k, val) for k, val in variant.get("set", {}).items())


def expand(entry: Entry, *, quick: bool = False) -> list[Variant]:
    """The runs of an entry: one per variant (a grid's points included, in file order), or the
    file itself when it has none. ``quick`` appends ``[meta.quick].set`` to every run's overrides."""
    extra = entry.quick_overrides() if quick else ()
    if not entry.variants:
        return [Variant(name=entry.id, scenario_path=entry.path, overrides=extra,
                        published=dict(entry.meta.get("published", {})), entry_id=entry.id)]
    return [
        Variant(
            name=v["name"],
            scenario_path=entry.path,
            overrides=variant_overrides(v) + extra,
            published=dict(v.get("published", {})),
            entry_id=entry.id,
        )
        for v in entry.variants
    ]


def resolve(names: Iterable[str] = (), directory: str | os.PathLike | None = None, *,
            all_entries: bool = False) -> list[Entry]:
    """Entries by id, file or paper name (``vegas-a`` = every entry whose ``meta.paper`` is
    vegas-a), in the order given, without duplicates; every top-level entry with
    ``all_entries``. Raises KeyError naming an unknown name."""
    if all_entries:
        return list_entries(directory)
    out: list[Entry] = []
    known: list[Entry] | None = None
    for name in names:
        try:
            found = [load_entry(name, directory)]
        except KeyError:
            known = known if known is not None else list_entries(directory) if catalog_dir(directory).is_dir() else []
            found = [e for e in known if e.paper == name]
            if not found:
                papers = sorted({e.paper for e in known if e.paper})
                hint = did_you_mean(name, [e.id for e in known] + papers)
                raise KeyError(f"no catalog entry or paper {name!r}{hint} (entries: "
                               f"{', '.join(e.id for e in known) or 'none'}; papers: {', '.join(papers) or 'none'})") from None
        for e in found:
            if all(e.path != o.path for o in out):
                out.append(e)
    return out


def compare(results, published: Mapping[str, float]) -> pd.DataFrame:
    """One row per published metric: metric, published, ours, ratio (ours / published).
    Raises KeyError naming the metric when the results have no such flow/queue/link/column."""
    import pandas as pd

    rows = []
    for key, pub in published.items():
        ours = results.value(key)
        rows.append({"metric": key, "published": pub, "ours": ours, "ratio": ratio(ours, pub)})
    return pd.DataFrame(rows, columns=COMPARE_COLUMNS)


#: The comparison table's text forms, which the report layer owns now: readable here for one
#: release, with a warning.
_moved = moved_names(__name__, {"format_comparison": "vegaslab.report.tables",
                                "summary_markdown": "vegaslab.report.tables"})


def __getattr__(name: str) -> Any:
    # The old name of Variant, kept for one release.
    if name == "RunSpec":
        import warnings

        warnings.warn("vegaslab.catalog.RunSpec is deprecated; use vegaslab.study.catalog.Variant",
                      DeprecationWarning, stacklevel=2)
        return Variant
    return _moved(name)
