"""Scenario input: what :func:`vegaslab.run` and the other entry points accept as a scenario (a
path to a ``.toml`` file, a built-in catalog id, a TOML text or a ``dict``; docs/scenario-format.md),
reading scenario files safely, and writing a scenario dict back as TOML (:func:`to_toml`,
:func:`format_override`).
"""

from __future__ import annotations

import contextlib
import importlib.resources
import json
import math
import os
import re
# Python >= 3.11 only (pyproject's requires-python): the tests run on 3.11, and tomllib is the
# standard library's TOML reader there, so no tomli fallback is declared or kept.
import tomllib as _toml
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Union

from .core import call_core, load_core, max_scenario_bytes
from .errors import ScenarioError, VegaslabError, file_error
from .spelling import did_you_mean

__all__ = ["Scenario", "Overrides", "read_text_file", "load_scenario", "to_toml", "format_override",
           "normalise_overrides", "scenario_source", "is_toml_text", "builtin_dir", "builtin_entry_path",
           "builtin_ids", "builtin_id_hint", "referenced_path", "overrides_blamed", "blame_override", "override_error", "PACKAGE_DATA"]

Scenario = Union[str, os.PathLike, Mapping[str, Any]]
Overrides = Union[Sequence[str], Mapping[str, Any]]


#: The built-in catalog's directory inside the package (package data).
PACKAGE_DATA = "catalog_data"


def builtin_dir() -> Path:
    """The catalog shipped with the package (``vegaslab/catalog_data``), wherever the package
    is installed; never a path relative to a source checkout or the working directory.

    The core reads scenario files (and the delay traces they name, relative to the file) from
    the file system, so the package must be installed unpacked, as pip installs wheels; a
    zipped install is refused with a clear error rather than half working."""
    root = importlib.resources.files("vegaslab") / PACKAGE_DATA
    if not isinstance(root, Path):
        raise ScenarioError(f"{root}: the built-in catalog is not a directory on disk (vegaslab was "
                            "imported from a zip archive); install the wheel with pip, or set "
                            "VEGASLAB_CATALOG to a catalog directory")
    return root


def read_text_file(path: str | os.PathLike) -> str:
    """The text of a scenario (or catalog) file. A missing file raises FileNotFoundError; a file
    that cannot be read (permissions, a directory) or is not UTF-8 raises :class:`ScenarioError`
    naming the file and, for bad bytes, the line and byte offset, so no caller has to catch
    OSError or UnicodeDecodeError itself."""
    p = Path(path)
    limit = max_scenario_bytes()
    try:
        with open(p, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > limit:  # a regular file's size, known before a byte is read
                raise file_error(p, f"has {size:,} bytes; a scenario may have at most {limit >> 20} MiB")
            data = fh.read(limit + 1)  # a pipe's size is known only by reading it
    except FileNotFoundError:
        raise FileNotFoundError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise file_error(p, "is a directory, not a scenario file") from None
    except OSError as exc:
        raise file_error(p, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise file_error(p, f"has more than {limit:,} bytes; a scenario may have at most {limit >> 20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise file_error(p, f"not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line} "
                             f"(byte offset {exc.start}); save the file as UTF-8") from None


def load_scenario(path: str | os.PathLike) -> dict:
    """Read a scenario file as a plain dict (TOML parsed, not yet validated by the core)."""
    p = Path(path)
    text = read_text_file(p)
    try:
        core = load_core()
    except VegaslabError:
        core = None  # without the compiled core the file is only parsed
    if core is not None:  # the core's checks before a parse: a file past a count limit is refused at once
        call_core(core.precheck_scenario, text, os.fspath(p))
    try:
        return _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        raise ScenarioError(f"{p}: invalid TOML: {exc}") from None
    except RecursionError:  # Python's parser recurses per level; the core's stops near 80
        raise file_error(p, "invalid TOML: arrays or tables nested too deep") from None


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    """One TOML value, inline (arrays and tables included)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are valid TOML basic-string escapes
    if isinstance(value, os.PathLike):
        return json.dumps(os.fspath(value))
    if isinstance(value, Mapping):
        items = [f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} value {value!r} as TOML")


def _is_table_array(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _emit_table(table: Mapping[str, Any], prefix: str, out: list[str]) -> None:
    scalars, tables, arrays = [], [], []
    for key, value in table.items():
        if value is None:  # TOML has no null: leaving the key out means "use the default"
            continue
        if isinstance(value, Mapping):
            tables.append((key, value))
        elif _is_table_array(value):
            arrays.append((key, value))
        else:
            scalars.append((key, value))
    for key, value in scalars:
        out.append(f"{_toml_key(str(key))} = {_toml_value(value)}")
    for key, value in tables:
        path = f"{prefix}{_toml_key(str(key))}"
        out.extend(["", f"[{path}]"])
        _emit_table(value, path + ".", out)
    for key, value in arrays:
        path = f"{prefix}{_toml_key(str(key))}"
        for item in value:
            out.extend(["", f"[[{path}]]"])
            _emit_table(item, path + ".", out)


def to_toml(scenario: Mapping[str, Any]) -> str:
    """Serialise a scenario dict to TOML text (``None`` values are left out)."""
    out: list[str] = []
    _emit_table(scenario, "", out)
    return "\n".join(out).lstrip("\n") + "\n"


def format_override(key: str, value: Any) -> str:
    """``key=value`` for the core's override syntax (values are parsed as TOML when possible).

    Strings are written bare unless they would parse as another TOML type (``"10"``,
    ``"true"``), in which case they are quoted so that they stay strings. A
    :class:`vegaslab.Controller` subclass (for a ``cc``) is written as its
    ``py:package.module:Class`` name, and a path (:class:`os.PathLike`, for a ``cc``) as the
    compiled BPF object ``{bpf = "<absolute path>"}``: absolute, because the core resolves a
    relative one against the scenario file's directory, not the caller's.
    """
    if isinstance(value, type):
        from .controller import spec_of

        value = spec_of(value)
    if isinstance(value, os.PathLike):
        value = {"bpf": str(Path(value).resolve())}
    if isinstance(value, str):
        try:
            _toml.loads(f"v = {value}")
        except (_toml.TOMLDecodeError, RecursionError):
            return f"{key}={value}"
        return f"{key}={json.dumps(value)}"
    return f"{key}={_toml_value(value)}"


def normalise_overrides(overrides: Overrides | None) -> list[str]:
    if not overrides:
        return []
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, Mapping):
        return [format_override(str(k), v) for k, v in overrides.items()]
    return [str(o) for o in overrides]


@contextlib.contextmanager
def overrides_blamed(text: str, source: str, overrides: Sequence[str], validate=None) -> Iterator[None]:
    """Inside: a :class:`ScenarioError` an override made is raised as that override's
    (:func:`blame_override`; ``validate`` as there)."""
    try:
        yield
    except ScenarioError as exc:
        err = blame_override(exc, text, source, overrides, validate)
        if err is exc:
            raise
        raise err from exc


def blame_override(exc: ScenarioError, text: str, source: str, overrides: Sequence[str],
                   validate=None) -> ScenarioError:
    """The core's error ``exc`` about ``text`` with ``overrides``, told as the override's when an
    override made it: the last override without which the core no longer gives this error (same
    field, kind and reason), found by validating the text with fewer and fewer overrides; ``exc``
    itself when the text alone gives it, or when validating does not give it (an error found
    only while running).

    The override's error names it first, ``override tcp.windw=20: tcp: unknown field ...
    (applied to va-reroute.toml)``, and carries it as ``override`` (the command line says
    ``--set`` for one of its own); ``file``, ``field``, ``kind`` and ``reason`` stay the core's.
    Only a failed call pays for this: one validation more than there are overrides. ``validate`` is the
    core function that checks ``(text, source, overrides)`` (default ``validate_scenario``; a
    sweep passes ``expand_sweep``, which checks ``[sweep]`` too)."""
    overrides = list(overrides)
    if not overrides or exc.reason is None or exc.override is not None:
        return exc
    check = validate or load_core().validate_scenario
    same = (exc.field, exc.kind, exc.reason)

    def gives_it(k: int) -> bool:
        try:
            call_core(check, text, source, overrides[:k])
        except ScenarioError as other:
            return (other.field, other.kind, other.reason) == same
        except VegaslabError:
            return False
        return False

    if not gives_it(len(overrides)):
        return exc
    for k in range(len(overrides) - 1, -1, -1):
        if not gives_it(k):
            return override_error(exc, overrides[k])
    return exc


def override_error(exc: ScenarioError, override: str, option: str = "override") -> ScenarioError:
    """``exc`` told as the error of ``override`` (``option`` names it: ``override`` in the
    library, ``--set`` on the command line)."""
    key = override.partition("=")[0].strip()
    where = f"{exc.field}: " if exc.field and exc.field != key else ""
    err = ScenarioError(f"{option} {override}: {where}{exc.reason} (applied to {exc.file})")
    err.file, err.field, err.kind, err.reason, err.override = exc.file, exc.field, exc.kind, exc.reason, override
    return err


def is_toml_text(text: str) -> bool:
    """A string scenario is TOML text when it holds a line break, else a file path or a catalog
    id (docs/decisions.md, "A scenario string is text only when it has a line break"): a file
    name may hold ``=``, ``[`` or spaces, never a line break, and a scenario's text has one as
    soon as it has more than one key or table."""
    return "\n" in text or "\r" in text


def builtin_entry_path(name: object) -> Path | None:
    """The built-in catalog file of the entry id ``name`` ("va-reroute"), if there is one: a
    plain id only, never a path, so that a missing file is not silently replaced."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        return None
    candidate = builtin_dir() / f"{name}.toml"
    return candidate if candidate.is_file() else None


def scenario_source(scenario: Scenario) -> tuple[str, str]:
    """(toml_text, source_name) for any accepted scenario form: a dict, a TOML text (a string
    with a line break, :func:`is_toml_text`), or a path or catalog id (any other string or a
    path object). A path that is no file is looked up as a catalog id; neither is a
    ``FileNotFoundError`` naming it, with the nearest catalog id when one is close."""
    if isinstance(scenario, Mapping):
        meta = scenario.get("meta") if isinstance(scenario.get("meta"), Mapping) else {}
        name = str(meta.get("id", "<dict>")) if meta else "<dict>"
        return to_toml(scenario), name
    if isinstance(scenario, str) and is_toml_text(scenario):
        return scenario, "<string>"
    if isinstance(scenario, (str, os.PathLike)):
        path = Path(scenario)
        try:
            exists = path.exists()
        except (OSError, ValueError):  # a name too long for the file system, a NUL byte
            exists = False
        if not exists:
            builtin = builtin_entry_path(scenario)
            if builtin is None:
                raise FileNotFoundError(f"{path}: scenario file not found, nor a catalog id{builtin_id_hint(scenario)} "
                                        "(`vegaslab reproduce --list` lists them; a TOML text has a line break)")
            path, scenario = builtin, builtin
        return read_text_file(path), os.fspath(scenario)
    raise TypeError(f"scenario must be a path, a TOML text or a dict, not {type(scenario).__name__}")


def referenced_path(source: str, name: str) -> Path:
    """Where a file a scenario read from ``source`` names as ``name`` is (a trace, a BPF object:
    the normalised scenario's ``files``), as the core resolves it: an absolute ``name`` as it
    is; a relative one against the directory of ``source`` when ``source`` is an existing file,
    else against the working directory."""
    return Path(load_core().scenario_file_path(str(source), str(name)))


def builtin_ids() -> list[str]:
    """The ids of the built-in catalog's entries (its files' stems)."""
    try:
        return sorted(p.stem for p in builtin_dir().glob("*.toml"))
    except ScenarioError:
        return []


def builtin_id_hint(name: str | os.PathLike) -> str:
    """``" (did you mean 'va-reroute'?)"`` for a name near a built-in catalog id, else ``""``."""
    return did_you_mean(os.fspath(name), builtin_ids())
