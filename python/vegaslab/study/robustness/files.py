"""Reading study files (``catalog_data/studies/<id>.toml``, docs/robustness-format.md): every
field checked, a mistake a :class:`~.model.StudyError` naming the file, the field and the level,
before anything is planned."""

from __future__ import annotations

import math
import os
import tomllib
from pathlib import Path
from typing import Any, Mapping, Sequence

from .model import ENTRY_ID, MIN_SEEDS, Factor, Stated, Study, StudyError, cut_repr, min_seeds, study_error


def studies_dir(directory: str | os.PathLike | None = None) -> Path:
    """The study files: ``directory``, else the built-in ones (``catalog_data/studies``, package
    data found as the catalog is: :func:`vegaslab.study.catalog.builtin_dir`)."""
    if directory is not None:
        return Path(directory)
    from ..catalog import builtin_dir

    return builtin_dir() / "studies"


def _text(path: Path, table: Mapping[str, Any], key: str, where: str, required: bool = True) -> str:
    v = table.get(key)
    if v is None and not required:
        return ""
    if not isinstance(v, str) or not v.strip():
        raise study_error(path, f"{where}.{key}", f"must be a non-empty string, got {cut_repr(v)}")
    return v


def _sets_seed(key: str, raw: str) -> bool:
    """Whether the override ``key=raw`` sets ``run.seed`` (directly, or as a key of a whole
    ``run`` table). The core trims the path and splits it at dots (scenario/overrides.rs)."""
    key = key.strip()
    if key == "run.seed":
        return True
    if key != "run":
        return False
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        return False
    return isinstance(value, dict) and "seed" in value


def _check_override(path: Path, where: str, override: str) -> None:
    """The shape of one override, ``path=value`` as ``--set`` takes it; the simulator judges
    the path and the value when the study is planned (:func:`~.planning.plan`)."""
    key, eq, raw = override.partition("=")
    if not eq:
        raise study_error(path, where, f"{cut_repr(override)} is not an override \"path=value\" (as --set takes)")
    if not key.strip():
        raise study_error(path, where, f"{cut_repr(override)} has no path before '=' (an override is \"path=value\")")
    if _sets_seed(key, raw):
        raise study_error(path, where, f"{cut_repr(override)} sets run.seed: seeds are the study's own axis "
                   "(study.seeds), never a factor")


def _overrides(path: Path, value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(o, str) for o in value):
        raise study_error(path, where, f"must be a list of overrides \"path=value\" (as --set takes), got {cut_repr(value)}")
    for o in value:
        _check_override(path, where, o)
    return tuple(value)


def _value_label(path: Path, where: str, v: Any) -> str:
    """The label of one of ``values``: a string as written, a number as Python prints it."""
    if isinstance(v, str) and v.strip():
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
        return str(v)
    raise study_error(path, where, f"levels are non-empty strings or finite numbers, got {cut_repr(v)}")


def _levels_table(path: Path, t: Mapping[str, Any], where: str) -> dict[str, tuple[str, ...]]:
    """``levels = { label = ["path=value", ...], ... }``."""
    raw = t["levels"]
    if not isinstance(raw, dict) or not raw:
        raise study_error(path, f"{where}.levels", "must be a non-empty table: label = [\"path=value\", ...]")
    levels = {}
    for label, value in raw.items():
        if not label.strip():
            raise study_error(path, f"{where}.levels", "a level's label must be a non-empty string")
        levels[label] = _overrides(path, value, f"{where}.levels.{label}")
    return levels


def _path_values(path: Path, t: Mapping[str, Any], where: str) -> tuple[str, dict[str, tuple[str, ...]]]:
    """``path`` with ``values``: one level per value, ``path=value``."""
    p = _text(path, t, "path", where)
    if "=" in p:
        raise study_error(path, f"{where}.path", f"an override path has no '=', got {cut_repr(p)}")
    if _sets_seed(p, ""):
        raise study_error(path, f"{where}.path", "run.seed cannot be a factor: seeds are the study's own axis (study.seeds)")
    values = t["values"]
    if not isinstance(values, list) or len(values) < 2:
        raise study_error(path, f"{where}.values", f"must list at least two levels, got {cut_repr(values)}")
    levels: dict[str, tuple[str, ...]] = {}
    for v in values:
        label = _value_label(path, f"{where}.values", v)
        if label in levels:
            raise study_error(path, f"{where}.values", f"{label!r} is listed twice")
        levels[label] = (f"{p}={label}",)
    return p, levels


def _factor(path: Path, t: Any, i: int) -> Factor:
    where = f"study.factor[{i}]"
    if not isinstance(t, dict):
        raise study_error(path, where, "must be a table")
    unknown = set(t) - {"name", "path", "values", "levels", "default", "reason", "stated", "reading"}
    if unknown:
        raise study_error(path, f"{where}.{sorted(unknown)[0]}", "unknown field (allowed: name, path, values, levels, default, "
                          "reason, stated, reading)")
    name = _text(path, t, "name", where)
    if ("levels" in t) == ("values" in t):
        raise study_error(path, where, "give exactly one of levels (label -> overrides) and path with values")
    if "levels" in t:
        if "path" in t:
            raise study_error(path, f"{where}.path", "a factor with levels has no path (each level lists its overrides)")
        factor_path, levels = "", _levels_table(path, t, where)
    else:
        factor_path, levels = _path_values(path, t, where)
    default = t.get("default")
    if isinstance(default, bool) or not isinstance(default, (str, int, float)):
        raise study_error(path, f"{where}.default", f"must name one of the levels ({', '.join(levels)}) as a string or "
                   f"number, got {cut_repr(default)}")
    default = default if isinstance(default, str) else str(default)
    if default not in levels:
        raise study_error(path, f"{where}.default", f"must be one of the levels ({', '.join(levels)}), got {default!r}")
    stated = _stated(path, t.get("stated"), levels, f"{where}.stated")
    reason = _text(path, t, "reason", where, required=False)
    if stated is None and not reason:
        raise study_error(path, f"{where}.reason", "a factor the paper leaves open needs the reason for its levels (or "
                          "stated = { level, where, quote } when the paper gives one)")
    return Factor(name, levels, default, reason, factor_path, stated, _reading(path, t, levels, where))


def _reading(path: Path, t: Mapping[str, Any], levels: Mapping[str, tuple[str, ...]], where: str) -> str:
    """``reading = "<cc>"``: the factor reads that algorithm's text (see :mod:`.readings`); its
    overrides are relative to a flow, so none may name ``flows[...]`` itself."""
    from ... import registry

    if "reading" not in t:
        return ""
    cc = t["reading"]
    if not isinstance(cc, str) or cc not in registry.names():
        raise study_error(path, f"{where}.reading", f"must be an algorithm's cc name ({', '.join(registry.names())}), "
                          f"got {cut_repr(cc)}")
    for label, overrides in levels.items():
        for o in overrides:
            if o.startswith("flows["):
                raise study_error(path, f"{where}.{'path' if 'path' in t else 'levels.' + label}", "a reading's "
                                  f"overrides are relative to a flow (params.x=...), applied to every {cc} flow; got "
                                  f"{cut_repr(o)}")
    return cc


def _stated(path: Path, t: Any, levels: Mapping[str, Any], where: str) -> Stated | None:
    """``stated = { level = ..., where = "section 5.2", quote = "..." }``: the level the paper
    states, and where it says so; every other level of the factor is then a departure."""
    if t is None:
        return None
    if not isinstance(t, dict) or set(t) != {"level", "where", "quote"}:
        raise study_error(path, where, "must be a table { level = <one of the levels>, where = \"section, table or "
                          f"figure\", quote = \"the paper's words\" }}, got {cut_repr(t)}")
    level = t["level"]
    label = level if isinstance(level, str) else _value_label(path, f"{where}.level", level)
    if label not in levels:
        raise study_error(path, f"{where}.level", f"must be one of the levels ({', '.join(levels)}), got {label!r}")
    return Stated(label, _text(path, t, "where", where), _text(path, t, "quote", where))


def _entry_id(path: Path, t: Mapping[str, Any]) -> str:
    """``study.entry``: a catalog entry id, never a path (see :data:`ENTRY_ID`)."""
    entry = t.get("entry")
    if not isinstance(entry, str) or not ENTRY_ID.fullmatch(entry):
        raise study_error(path, "study.entry", "must be a catalog entry id: 1 to 64 letters, digits, '_' and '-', looked "
                   f"up in the catalog directory (never a file path), got {cut_repr(entry)}")
    return entry


def _study_name(path: Path, t: Mapping[str, Any], entry: str) -> str:
    """``study.id``: the study's name, the rule of :data:`ENTRY_ID` (its outputs are named after
    it); the entry's id when absent."""
    name = t.get("id", entry)
    if not isinstance(name, str) or not ENTRY_ID.fullmatch(name):
        raise study_error(path, "study.id", "must be a study name: 1 to 64 letters, digits, '_' and '-' (its outputs "
                          f"are named after it), got {cut_repr(name)}")
    return name


def _variants(path: Path, t: Mapping[str, Any]) -> tuple[str, ...]:
    variants = t.get("variants", [])
    if not isinstance(variants, list) or not all(isinstance(v, str) and v for v in variants):
        raise study_error(path, "study.variants", f"must be a list of the entry's variant names, got {cut_repr(variants)}")
    seen: set[str] = set()
    for v in variants:
        if v in seen:
            raise study_error(path, "study.variants", f"{v!r} is listed twice")
        seen.add(v)
    return tuple(variants)


def _pairs(path: Path, raw: Any, names: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``[[study.pair]]`` tables, each ``factors = ["a", "b"]``."""
    if not isinstance(raw, list):
        raise study_error(path, "study.pair", f"must be an array of tables ([[study.pair]] with factors = [\"a\", \"b\"]), "
                   f"got {cut_repr(raw)}")
    pairs: list[tuple[str, str]] = []
    for i, p in enumerate(raw):
        where = f"study.pair[{i}]"
        if not isinstance(p, dict):
            raise study_error(path, where, f"must be a table with factors = [\"a\", \"b\"], got {cut_repr(p)}")
        unknown = set(p) - {"factors"}
        if unknown:
            raise study_error(path, f"{where}.{sorted(unknown)[0]}", "unknown field (allowed: factors)")
        fs = p.get("factors")
        if not (isinstance(fs, list) and len(fs) == 2 and all(isinstance(f, str) and f in names for f in fs)
                and fs[0] != fs[1]):
            raise study_error(path, f"{where}.factors", f"must name two different factors of the study ({', '.join(names)}), "
                       f"got {cut_repr(fs)}")
        if any({fs[0], fs[1]} == set(q) for q in pairs):
            raise study_error(path, f"{where}.factors", f"the pair {fs[0]!r}, {fs[1]!r} is listed twice")
        pairs.append((fs[0], fs[1]))
    return tuple(pairs)


def load_study(path: str | os.PathLike) -> Study:
    """Read and check one study file: every field's type and shape, each override's syntax, no
    factor on ``run.seed``, no duplicates. What needs the entry's scenario (the entry, claim
    and variants exist; the simulator accepts every level) is checked by :func:`~.planning.plan`; both
    before anything runs."""
    from ...errors import ScenarioError
    from ...scenario import read_text_file

    path = Path(path)
    try:
        text = read_text_file(path)  # a bounded read; a directory or bad bytes named
    except (OSError, ScenarioError) as exc:
        raise StudyError(f"{path}: cannot read: {str(exc).removeprefix(f'{path}: ')}") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: not TOML: {exc}") from None
    except RecursionError:
        raise StudyError(f"{path}: not TOML: arrays or tables nested too deep") from None
    t = doc.get("study")
    if not isinstance(t, dict) or set(doc) != {"study"}:
        raise study_error(path, "study", "the file must hold one [study] table and nothing else")
    allowed = {"id", "entry", "claim", "conclusion", "default_reason", "seeds", "variants", "factor", "pair", "figure"}
    unknown = set(t) - allowed
    if unknown:
        raise study_error(path, f"study.{sorted(unknown)[0]}", f"unknown field (allowed: {', '.join(sorted(allowed))})")
    entry = _entry_id(path, t)
    seeds = t.get("seeds", 10)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not MIN_SEEDS <= seeds <= 1000:
        raise study_error(path, "study.seeds", f"must be a whole number from {MIN_SEEDS} to 1000 (seeds 1..n; fewer "
                   f"leave a point's share of seeds close to a coin flip), got {cut_repr(seeds)}")
    variants = _variants(path, t)
    raw = t.get("factor")
    if not isinstance(raw, list) or not raw:
        raise study_error(path, "study.factor", "at least one [[study.factor]] is required")
    factors = tuple(_factor(path, f, i) for i, f in enumerate(raw))
    names = [f.name for f in factors]
    if len(set(names)) != len(names):
        raise study_error(path, "study.factor", "factor names must differ")
    pairs = _pairs(path, t.get("pair", []), names)
    figure, figure_label, threshold = _figure(path, t.get("figure"))
    study = Study(path, entry, _text(path, t, "claim", "study"),
                  _text(path, t, "conclusion", "study"), _text(path, t, "default_reason", "study"),
                  tuple(range(1, seeds + 1)), variants, factors, pairs,
                  figure, figure_label, threshold, _study_name(path, t, entry))
    from .planning import point_count

    m = point_count(study)
    if seeds < min_seeds(m):
        raise study_error(path, "study.seeds", f"{seeds} seeds cannot decide any of the study's {m} points: at the level "
                          f"corrected for {m} points even {seeds} of {seeds} is not decisive; give at least {min_seeds(m)}")
    return study


def _figure(path: Path, t: Any) -> tuple[str, str, float | None]:
    """The optional ``[study.figure]`` table: ``expr`` (a numeric expression of the claim
    language, checked to parse here), ``label`` and the optional ``threshold`` (a finite number,
    the figure's value where the conclusion turns)."""
    if t is None:
        return "", "", None
    if not isinstance(t, dict):
        raise study_error(path, "study.figure", "must be a table with expr and label")
    unknown = set(t) - {"expr", "label", "threshold"}
    if unknown:
        raise study_error(path, f"study.figure.{sorted(unknown)[0]}", "unknown field (allowed: expr, label, threshold)")
    threshold = t.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                  or not math.isfinite(threshold) or threshold == 0):
        raise study_error(path, "study.figure.threshold", f"must be a finite non-zero number (the figure's value where "
                          f"the conclusion turns), got {cut_repr(threshold)}")
    expr = _text(path, t, "expr", "study.figure")
    from ..claims import ClaimError, parse

    try:
        parse(expr)
    except ClaimError as exc:
        raise study_error(path, "study.figure.expr", f"not an expression of the claim language: {exc}") from None
    return expr, _text(path, t, "label", "study.figure"), None if threshold is None else float(threshold)


def one_study_per_name(studies: Sequence[Study]) -> None:
    """A :class:`StudyError` when two studies have the same name (``study.id``, else the entry):
    a study's outputs are named after it (``robustness/<id>.json``), so the second would
    replace the first."""
    seen: dict[str, Study] = {}
    for st in studies:
        first = seen.setdefault(st.name, st)
        if first is not st:
            field = "study.id" if st.name != st.entry else "study.entry"
            raise study_error(st.path, field, f"{st.name!r} is also the name of the study {first.path}; a study's "
                              "outputs are named after it (give each study of the same entry its own id)")


#: The name before studies had ids of their own (one study per entry then).
one_study_per_entry = one_study_per_name


def list_studies(directory: str | os.PathLike | None = None) -> list[Study]:
    """Every ``*.toml`` in the studies directory, by name; no two with the same name."""
    studies = [load_study(p) for p in sorted(studies_dir(directory).glob("*.toml"))]
    one_study_per_name(studies)
    return sorted(studies, key=lambda s: s.name)
