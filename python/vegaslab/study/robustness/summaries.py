"""A study's summary (``robustness/<id>.json``): everything a report shows of it as plain
data, its JSON Schema, writing it, and reading the summaries of a report's directory back under
the rule for files vegaslab does not own (a bad one set aside and named)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from ... import safe_io
from ...errors import VegaslabError
from ..ns2_check import STATUSES as NS2_STATUSES
from .figures import figure_name, figure_pattern, read_figure
from .model import ENTRY_ID, FAMILY_ALPHA, POINT_STATUSES, PROVENANCES, VERDICTS, StudyResult, cut_repr

#: The largest summary file read back (``robustness/<id>.json``). A summary keeps at most
#: :data:`MAX_POINT_ERRORS` errors per point, so even a study of :data:`~.model.MAX_STUDY_RUNS` runs
#: stays far below it; :func:`save_summary` refuses to write a larger one.
MAX_SUMMARY_BYTES = 64 << 20
#: Errors a summary keeps per point (the report shows three), and the characters of each.
MAX_POINT_ERRORS = 10
MAX_ERROR_CHARS = 500


def _kept_errors(errors: Sequence[str]) -> list[str]:
    """A point's errors as a summary keeps them: the first :data:`MAX_POINT_ERRORS`, each cut
    to :data:`MAX_ERROR_CHARS`, and a last line counting the rest (the runs' own errors stay in
    the store)."""
    kept = [e if len(e) <= MAX_ERROR_CHARS else e[:MAX_ERROR_CHARS] + "..." for e in errors[:MAX_POINT_ERRORS]]
    if len(errors) > MAX_POINT_ERRORS:
        kept.append(f"... and {len(errors) - MAX_POINT_ERRORS} more")
    return kept


def summary(result: StudyResult, figures: Sequence[str | os.PathLike] = ()) -> dict:
    """Everything a report shows of one study, as plain data (``robustness/<id>.json``;
    :func:`vegaslab.report.robustness_text.markdown` and the HTML report both render from it). ``figures`` are the files
    :func:`~.figures.figure` wrote; the summary keeps their names (``<id>-<n>.png``), which a reader
    looks up in the summary's own directory. It matches :data:`SUMMARY_SCHEMA`."""
    st = result.study
    points = []
    for pr in result.points:
        lo, hi = pr.interval
        points.append({"label": pr.point.label(), "levels": dict(pr.point.levels), "holds": pr.holds,
                       "seeds": pr.seeds, "interval": [lo, hi], "status": pr.status,
                       "values": list(pr.values), "errors": _kept_errors(pr.errors),
                       "distinct": pr.distinct, "single_run": pr.single_run, "margin": pr.margin,
                       "departures": [{"factor": f, "level": lv, "stated": st} for f, lv, st in pr.departures]})
    means = [p.value_range[0] for p in result.points if p.value_range]
    names = [Path(f).name for f in figures]
    for name in names:
        if not figure_pattern(st.name).fullmatch(name):
            raise ValueError(f"{name}: not a figure of study {st.name} ({figure_name(st.name, 0)}, ..., as figure() "
                             "writes them)")
    return {
        "id": st.name, "entry": st.entry, "claim": st.claim, "conclusion": st.conclusion,
        "default_reason": st.default_reason, "figure_expr": st.figure, "figure_label": st.figure_label,
        "factors": [{"name": f.name, "levels": list(f.levels), "default": f.default, "reason": f.reason,
                     "provenance": {label: f.provenance(label) for label in f.levels}, "reading": f.reading,
                     "stated": None if f.stated is None else {"level": f.stated.level, "where": f.stated.where,
                                                              "quote": f.stated.quote}}
                    for f in st.factors],
        "verdict": result.verdict, "sentence": result.sentence(), "points": points,
        "rule": {"family_alpha": FAMILY_ALPHA, "points": len(result.points),
                 "point_alpha": result.points[0].alpha if result.points else None,
                 "stated_points": len(result.stated_points),
                 "stated_holds": sum(p.status == "holds" for p in result.stated_points),
                 "stated_fails": sum(p.status == "fails" for p in result.stated_points),
                 "stated_mixed": sum(p.status == "mixed" for p in result.stated_points),
                 "single_runs": sum(p.single_run for p in result.stated_points)},
        "figure_threshold": st.figure_threshold, "quick": result.quick,
        "study_range": [min(means), max(means)] if means else None,
        "runs": result.runs, "computed": result.computed, "wall_s": result.wall_s, "compute_s": result.compute_s,
        "ns2": result.ns2.to_dict() if result.ns2 is not None else None,
        "figures": names,
        "readings": [cost.to_dict() for cost in result.readings],
    }


_NUMBER = {"type": "number"}
_TEXT = {"type": "string"}
_COUNT = {"type": "integer", "minimum": 0}
_TWO_NUMBERS = {"type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 2}
_NS2_CHECK = {
    "type": "object", "additionalProperties": False, "required": ["status", "seed"],
    "properties": {
        "status": {"enum": list(NS2_STATUSES)}, "seed": {"type": "integer"}, "detail": _TEXT,
        "ns2_figure": {"type": ["number", "null"]}, "our_figure": {"type": ["number", "null"]},
        "ns2_claim": {"type": ["string", "null"]}, "our_claim": {"type": ["string", "null"]},
        "variants": {"type": "object", "additionalProperties": _TEXT},
        "flow_diff": {"type": ["number", "null"]}, "flow_diff_at": _TEXT, "flows_compared": _COUNT,
    },
}
_OPTIONAL_NUMBER = {"type": ["number", "null"]}
_DEPARTURE = {"type": "object", "additionalProperties": False, "required": ["factor", "level", "stated"],
              "properties": {"factor": _TEXT, "level": _TEXT, "stated": _TEXT}}
# The fields vegaslab 0.4.0 did not write (the study's id and its readings' costs, a point's
# distinct runs, margin and departures, a factor's provenance, stated value and reading, the
# rule's counts, the figure's threshold) are optional, so that its summaries are still read
# (shown without provenance or margins).
_POINT = {
    "type": "object", "additionalProperties": False,
    "required": ["label", "levels", "holds", "seeds", "interval", "status", "values", "errors"],
    "properties": {
        "label": _TEXT, "levels": {"type": "object", "additionalProperties": _TEXT},
        "holds": _COUNT, "seeds": _COUNT, "interval": _TWO_NUMBERS, "status": {"enum": list(POINT_STATUSES)},
        "values": {"type": "array", "items": _NUMBER}, "errors": {"type": "array", "items": _TEXT},
        "distinct": _COUNT, "single_run": {"type": "boolean"}, "margin": _OPTIONAL_NUMBER,
        "departures": {"type": "array", "items": _DEPARTURE},
    },
}
_CHANGED_CLAIM = {"type": "object", "additionalProperties": False, "required": ["claim", "kind", "at_default", "at_level"],
                  "properties": {"claim": _TEXT, "kind": _TEXT, "at_default": _TEXT, "at_level": _TEXT}}
_READING = {
    "type": "object", "additionalProperties": False,
    "required": ["factor", "cc", "level", "default", "entries", "claims", "changed", "errors"],
    "properties": {"factor": _TEXT, "cc": _TEXT, "level": _TEXT, "default": _TEXT,
                   "entries": {"type": "array", "items": _TEXT}, "claims": _COUNT,
                   "changed": {"type": "array", "items": _CHANGED_CLAIM}, "errors": {"type": "array", "items": _TEXT}},
}
_STATED = {"type": "object", "additionalProperties": False, "required": ["level", "where", "quote"],
           "properties": {"level": _TEXT, "where": _TEXT, "quote": _TEXT}}
_FACTOR = {
    "type": "object", "additionalProperties": False, "required": ["name", "levels", "default", "reason"],
    "properties": {"name": _TEXT, "levels": {"type": "array", "items": _TEXT}, "default": _TEXT, "reason": _TEXT,
                   "provenance": {"type": "object", "additionalProperties": {"enum": list(PROVENANCES)}},
                   "reading": _TEXT,
                   "stated": {"anyOf": [{"type": "null"}, _STATED]}},
}
_RULE = {
    "type": "object", "additionalProperties": False,
    "required": ["family_alpha", "points", "point_alpha", "stated_points", "stated_holds", "stated_fails",
                 "stated_mixed", "single_runs"],
    "properties": {"family_alpha": _NUMBER, "points": _COUNT, "point_alpha": _OPTIONAL_NUMBER, "stated_points": _COUNT,
                   "stated_holds": _COUNT, "stated_fails": _COUNT, "stated_mixed": _COUNT, "single_runs": _COUNT},
}
#: The JSON Schema of a study summary (:func:`summary`, ``robustness/<id>.json``), the one
#: vegaslab 0.4.0 wrote too. A file read back from a report's directory is used only when it
#: matches (:func:`load_summaries`). ``figures`` are checked one by one there: a figure that
#: cannot be embedded is refused alone, and the study is still shown.
SUMMARY_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "vegaslab robustness study summary",
    "type": "object", "additionalProperties": False,
    "required": ["entry", "claim", "conclusion", "default_reason", "figure_expr", "figure_label", "factors",
                 "verdict", "sentence", "points", "study_range", "runs", "computed", "wall_s", "compute_s", "ns2",
                 "figures"],
    "properties": {
        "id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
        "entry": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
        "claim": _TEXT, "conclusion": _TEXT, "default_reason": _TEXT, "figure_expr": _TEXT, "figure_label": _TEXT,
        "factors": {"type": "array", "items": _FACTOR},
        "verdict": {"enum": list(VERDICTS)},
        "sentence": _TEXT,
        "points": {"type": "array", "items": _POINT},
        "study_range": {"anyOf": [{"type": "null"}, _TWO_NUMBERS]},
        "runs": _COUNT, "computed": _COUNT,
        "wall_s": {"type": "number", "minimum": 0}, "compute_s": {"type": "number", "minimum": 0},
        "ns2": {"anyOf": [{"type": "null"}, _NS2_CHECK]},
        "figures": {"type": "array", "items": _TEXT},
        "rule": _RULE, "figure_threshold": _OPTIONAL_NUMBER, "quick": {"type": "boolean"},
        "readings": {"type": "array", "items": _READING},
    },
}


def study_name(s: Mapping[str, Any]) -> str:
    """A summary's study name: its ``id``, or its entry in a summary written before studies had
    names of their own (one study per entry then)."""
    return s.get("id") or s["entry"]


def save_summary(summary_: Mapping[str, Any], directory: str | os.PathLike) -> Path:
    """Write ``directory/<id>.json`` (made when absent) under the rule for files vegaslab
    writes (atomically, never through a link: :func:`vegaslab.safe_io.write_file`) and return
    its path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{study_name(summary_)}.json"
    data = json.dumps(summary_, indent=1, allow_nan=False).encode("utf-8")
    if len(data) > MAX_SUMMARY_BYTES:
        raise VegaslabError(f"{directory / name}: the summary has {len(data):,} bytes, more than the "
                            f"{MAX_SUMMARY_BYTES:,} a report reads back; not written")
    return safe_io.write_file(directory, name, data)


def _set_aside(name: str, reason: str) -> dict:
    """What :func:`load_summaries` gives for a file it does not use: its name and why."""
    return {"file": name, "set_aside": reason}


def _load_summary(directory_fd: int, name: str) -> dict:
    """One summary file of the directory open as ``directory_fd``: read under the rule for
    files read back, checked against :data:`SUMMARY_SCHEMA`, its entry its file's name, and
    each figure checked (:func:`read_figure`); or a set-aside record saying why not."""
    try:
        s = safe_io.read_json(name, max_bytes=MAX_SUMMARY_BYTES, schema=SUMMARY_SCHEMA, dir_fd=directory_fd)
    except FileNotFoundError:
        return _set_aside(name, "removed while it was read")
    except safe_io.ForeignFileError as exc:
        return _set_aside(name, exc.reason)
    except safe_io.UnsafePathError:
        return _set_aside(name, "not a plain file name")
    stem = name.removesuffix(".json")
    if study_name(s) != stem or not ENTRY_ID.fullmatch(stem):
        return _set_aside(name, f"its study {cut_repr(study_name(s))} is not its file's name (a study saves <id>.json, "
                                "its id a name of letters, digits, '_' and '-')")
    figures, refused = [], []
    for f in s["figures"]:
        try:
            read_figure(directory_fd, f, stem)
        except safe_io.ForeignFileError as exc:
            refused.append({"name": f, "reason": exc.reason})
            continue
        plain = f.removeprefix("robustness/")
        if plain not in figures:
            figures.append(plain)
    s["figures"] = figures
    if refused:
        s["refused_figures"] = refused
    return s


def load_summaries(directory: str | os.PathLike) -> list[dict]:
    """Every study summary saved in ``directory`` (``robustness/`` beside a report), by file
    name; [] when there is none. The directory is not vegaslab's own (it may have been copied
    or shared), so it is read under the rule for files read back (:mod:`vegaslab.safe_io`):
    nothing is followed out of it (a link in its place, or in place of a file, is refused),
    every ``*.json`` is checked against :data:`SUMMARY_SCHEMA`, and each figure a summary names
    must be a PNG of that study in the same directory (:func:`read_figure`; the names are
    given as ``<id>-<n>.png``). A file that fails is *set aside*: ``{"file", "set_aside"}``
    in its place, saying why, so the report names it instead of a result; a refused figure is
    listed in its summary's ``refused_figures``. :func:`problems` words both as warnings."""
    directory = Path(directory)
    try:
        fd = safe_io.open_dir(directory)
    except FileNotFoundError:
        return []
    except safe_io.ForeignFileError as exc:
        return [_set_aside("", exc.reason)]
    try:
        names = sorted(n for n in os.listdir(fd) if n.endswith(".json") and not n.startswith("."))
        return [_load_summary(fd, n) for n in names]
    finally:
        os.close(fd)


def problems(summaries: Sequence[Mapping[str, Any]], directory: str | os.PathLike) -> list[str]:
    """One line per file :func:`load_summaries` set aside and per figure it refused, naming
    the file (``directory`` is where the summaries were read from)."""
    directory = Path(directory)
    out = []
    for s in summaries:
        if "set_aside" in s and not s["file"]:
            out.append(f"{directory}: {s['set_aside']}; no study is shown in the report")
        elif "set_aside" in s:
            name = s["file"] if s["file"].isprintable() else repr(s["file"])
            out.append(f"{directory / name}: set aside, not shown in the report: {s['set_aside']}")
        for f in s.get("refused_figures", []):
            out.append(f"{directory / (study_name(s) + '.json')}: figure {f['name']!r} not embedded: {f['reason']}")
    return out
