"""The scenario catalog: paper experiments as scenario files in ``catalog/*.toml``.

A catalog file is a normal scenario (the core ignores the two extra tables) plus:

``[meta]``
    ``id``, ``title``, ``paper``, ``figure``, ``notes``, ``assumptions = [{field, value, reason}]``
    and, for a file that is a single run, ``[meta.published]``.
``[[variant]]`` (optional, any number)
    ``name``; ``set`` = override path -> value (``{"flows[0].cc" = "newreno"}``);
    ``published`` = ``"<flow|queue|link>.<metric>"`` -> number
    (``{"f1.completion_time_s" = 161.3, "R1->R2.mean_len" = 11.46}``).

:func:`expand` turns an entry into :class:`RunSpec` s, :func:`compare` sets one run's results
beside the published numbers, and :func:`reproduce` does both for a list of entries and writes
``summary.md`` plus every run's tables.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import pandas as pd

from . import ScenarioError, format_override, load_scenario

#: The entries ``vegaslab reproduce`` runs when given none.
DEFAULT_IDS = ("va-reroute", "va-file", "va-buffer")

COMPARE_COLUMNS = ["metric", "published", "ours", "ratio"]
REPRODUCE_COLUMNS = ["entry", "run", "metric", "published", "ours", "ratio", "note"]


@dataclass(frozen=True)
class RunSpec:
    """One simulation to run: a scenario file plus overrides, and the numbers to compare."""

    name: str
    scenario_path: Path
    overrides: tuple[str, ...] = ()
    published: Mapping[str, float] = field(default_factory=dict)
    entry_id: str = ""


@dataclass(frozen=True)
class Entry:
    """A catalog file, parsed (not yet validated by the core)."""

    id: str
    path: Path
    meta: Mapping[str, Any]
    variants: tuple[Mapping[str, Any], ...]
    scenario: Mapping[str, Any]

    @property
    def title(self) -> str:
        return str(self.meta.get("title", ""))


def catalog_dir(directory: str | os.PathLike | None = None) -> Path:
    """The catalog directory: ``directory`` if given, else ``$VEGASLAB_CATALOG``, else the
    ``catalog/`` of the source tree this package lives in, else ``./catalog``."""
    if directory is not None:
        return Path(directory)
    if os.environ.get("VEGASLAB_CATALOG"):
        return Path(os.environ["VEGASLAB_CATALOG"])
    in_tree = Path(__file__).resolve().parents[2] / "catalog"
    return in_tree if in_tree.is_dir() else Path.cwd() / "catalog"


def _check_published(where: str, table: Any) -> dict[str, float]:
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise ScenarioError(f"{where}: must be a table of \"<name>.<metric>\" = number")
    out = {}
    for key, value in table.items():
        if "." not in key:
            raise ScenarioError(f"{where}.{key}: key must be \"<flow|queue|link>.<metric>\"")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ScenarioError(f"{where}.{key}: must be a number, got {value!r}")
        out[key] = value
    return out


def _parse_entry(path: Path) -> Entry:
    doc = load_scenario(path)
    meta = doc.get("meta", {})
    if not isinstance(meta, Mapping):
        raise ScenarioError(f"{path}: meta: must be a table")
    _check_published(f"{path}: meta.published", meta.get("published"))
    variants = doc.get("variant", [])
    if not isinstance(variants, list):
        raise ScenarioError(f"{path}: variant: must be an array of tables ([[variant]])")
    seen = set()
    for i, v in enumerate(variants):
        where = f"{path}: variant[{i}]"
        if not isinstance(v, Mapping) or not isinstance(v.get("name"), str) or not v["name"]:
            raise ScenarioError(f"{where}.name: required, a non-empty string")
        if v["name"] in seen:
            raise ScenarioError(f"{where}.name: duplicate variant name {v['name']!r}")
        seen.add(v["name"])
        if not isinstance(v.get("set", {}), Mapping):
            raise ScenarioError(f"{where}.set: must be a table of override path -> value")
        _check_published(f"{where}.published", v.get("published"))
    scenario = {k: v for k, v in doc.items() if k not in ("meta", "variant")}
    return Entry(id=str(meta.get("id", path.stem)), path=path, meta=meta,
                 variants=tuple(variants), scenario=scenario)


def list_entries(directory: str | os.PathLike | None = None) -> list[Entry]:
    """Every ``*.toml`` directly in the catalog directory, sorted by id."""
    root = catalog_dir(directory)
    return sorted((_parse_entry(p) for p in root.glob("*.toml")), key=lambda e: e.id)


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
    known = ", ".join(e.id for e in list_entries(root)) if root.is_dir() else f"no directory {root}"
    raise KeyError(f"no catalog entry {name!r} (known: {known})")


def expand(entry: Entry) -> list[RunSpec]:
    """The runs of an entry: one per ``[[variant]]``, or the file itself when it has none."""
    if not entry.variants:
        return [RunSpec(name=entry.id, scenario_path=entry.path, overrides=(),
                        published=dict(entry.meta.get("published", {})), entry_id=entry.id)]
    return [
        RunSpec(
            name=v["name"],
            scenario_path=entry.path,
            overrides=tuple(format_override(k, val) for k, val in v.get("set", {}).items()),
            published=dict(v.get("published", {})),
            entry_id=entry.id,
        )
        for v in entry.variants
    ]


def ratio(ours: Any, published: Any) -> float:
    """ours / published; 1.0 when both are 0, inf when only published is 0, NaN if unknown."""
    try:
        o, p = float(ours), float(published)
    except (TypeError, ValueError):
        return float("nan")
    if math.isnan(o) or math.isnan(p):
        return float("nan")
    if p == 0:
        return 1.0 if o == 0 else math.inf
    return o / p


def compare(results, published: Mapping[str, float]) -> pd.DataFrame:
    """One row per published metric: metric, published, ours, ratio (ours / published).
    Raises KeyError naming the metric when the results have no such flow/queue/link/column."""
    rows = []
    for key, pub in published.items():
        ours = results.value(key)
        rows.append({"metric": key, "published": pub, "ours": ours, "ratio": ratio(ours, pub)})
    return pd.DataFrame(rows, columns=COMPARE_COLUMNS)


# ---------------------------------------------------------------------- reproduce


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "run"


def run_spec(spec: RunSpec, *, seed: int | None = None):
    """Run one :class:`RunSpec` and return its Results."""
    from . import run

    return run(spec.scenario_path, seed=seed, overrides=list(spec.overrides))


def reproduce(
    ids: Iterable[str] | None = None,
    out: str | os.PathLike = "out/reproduce",
    *,
    directory: str | os.PathLike | None = None,
    seed: int | None = None,
    echo: Callable[[str], None] | None = print,
) -> pd.DataFrame:
    """Run every variant of each entry, compare with the published numbers, write
    ``<out>/<entry>/<run>/`` tables and ``<out>/summary.md``; return the comparison table
    (columns entry, run, metric, published, ours, ratio, note). A run that fails is recorded
    with its error in ``note`` and the others still run."""
    from . import VegaslabError

    out = Path(out)
    entries = [load_entry(i, directory) for i in (list(ids) if ids else DEFAULT_IDS)]
    rows: list[dict] = []
    for entry in entries:
        if echo:
            echo(f"== {entry.id}: {entry.title}")
        for spec in expand(entry):
            try:
                res = run_spec(spec, seed=seed)
                res.to_dir(out / _safe_name(entry.id) / _safe_name(spec.name))
                cmp = compare(res, spec.published)
            except (VegaslabError, KeyError, OSError) as exc:
                msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
                rows.append({"entry": entry.id, "run": spec.name, "metric": "(run failed)",
                             "published": math.nan, "ours": math.nan, "ratio": math.nan, "note": msg})
                if echo:
                    echo(f"   {spec.name}: FAILED: {msg}")
                continue
            if cmp.empty:
                rows.append({"entry": entry.id, "run": spec.name, "metric": "(no published numbers)",
                             "published": math.nan, "ours": math.nan, "ratio": math.nan, "note": ""})
            for r in cmp.itertuples(index=False):
                rows.append({"entry": entry.id, "run": spec.name, "metric": r.metric,
                             "published": r.published, "ours": r.ours, "ratio": r.ratio, "note": ""})
        if echo:
            echo(format_comparison(pd.DataFrame([r for r in rows if r["entry"] == entry.id],
                                                columns=REPRODUCE_COLUMNS)))
    table = pd.DataFrame(rows, columns=REPRODUCE_COLUMNS)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.md").write_text(summary_markdown(table, entries), encoding="utf-8")
    table.to_csv(out / "summary.csv", index=False)
    if echo:
        echo(f"wrote {out / 'summary.md'}")
    return table


def _cells(r) -> list[str]:
    from .results import _num

    ratio_txt = "-" if pd.isna(r.ratio) else ("inf" if math.isinf(r.ratio) else f"{r.ratio:.3f}")
    return [str(r.run), str(r.metric), _num(r.published, 7), _num(r.ours, 7), ratio_txt]


def format_comparison(table: pd.DataFrame) -> str:
    """Fixed-width run / metric / published / ours / ratio text for the terminal."""
    from .results import _fixed_width

    lines = _fixed_width(["run", "metric", "published", "ours", "ratio"],
                         [_cells(r) for r in table.itertuples(index=False)], left=2)
    notes = [f"   {r.run}: {r.note}" for r in table.itertuples(index=False) if r.note]
    return "\n".join(["   " + line for line in lines] + notes)


def summary_markdown(table: pd.DataFrame, entries: Iterable[Entry]) -> str:
    """The reproduction summary as Markdown: per entry its set-up notes, assumptions and a
    published / ours / ratio table."""
    out = ["# vegaslab reproduction summary", "",
           "ratio = ours / published. Published numbers are ns-2 runs with each paper's own patches.", ""]
    for e in entries:
        out += [f"## {e.id}: {e.title}".rstrip(": "), ""]
        cite = ", ".join(f"{k}: {e.meta[k]}" for k in ("paper", "figure") if e.meta.get(k))
        if cite:
            out += [cite, ""]
        if e.meta.get("notes"):
            out += [str(e.meta["notes"]).strip(), ""]
        assumptions = e.meta.get("assumptions") or []
        if assumptions:
            out.append("Assumptions (not given by the paper):")
            for a in assumptions:
                out.append(f"- `{a.get('field', '?')}` = `{a.get('value', '?')}`: {a.get('reason', '')}")
            out.append("")
        out += ["| run | metric | published | ours | ratio |", "|---|---|---:|---:|---:|"]
        part = table[table["entry"] == e.id]
        for r in part.itertuples(index=False):
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in _cells(r)) + " |")
        for r in part.itertuples(index=False):
            if r.note:
                out.append(f"\n**{r.run} failed:** {r.note}")
        out.append("")
    return "\n".join(out)
