"""What a run is and its key: a :class:`RunSpec` (a scenario's text, overrides, seed and swept
parameters) resolved by the core on the client into a :class:`PreparedRun`, whose key is the
SHA-256 of exactly what was simulated (:func:`run_key`). The key decides whether a run is
stored already, so it takes the store format, the core's semantic version, the seed and the
normalised scenario, and nothing of the machine, the path or the moment.

The specs are resolved before anything runs, so a bad point is an error naming its file and
field at once, and the files a scenario references travel to the workers as content, never as
paths.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ...errors import VegaslabError
from ...scenario import referenced_path
from .errors import StoreError
from .format import STORE_FORMAT


@dataclass(frozen=True, eq=False)
class RunSpec:
    """One run to compute: a scenario's TOML ``text`` and its ``source`` name, the
    ``overrides`` (``path=value`` strings, as ``--set`` takes) applied in order, the ``seed``
    (``None``: the scenario's ``run.seed``) and the swept ``params`` (column name -> value,
    labels for the tables; they do not change what runs).

    ``source`` is the file the text was read from: it names the file in error messages, gives
    the scenario its id when ``meta.id`` is not set (the file stem), and is the directory that
    referenced files (``delay_trace``) are read from, on the client only: workers receive the
    files' content, never a path. ``"<string>"`` for a text that came from no file."""

    text: str
    source: str = "<string>"
    overrides: tuple[str, ...] = ()
    seed: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "overrides", tuple(str(o) for o in self.overrides))
        object.__setattr__(self, "params", dict(self.params))

    @classmethod
    def from_scenario(cls, scenario: Any, *, seed: int | None = None, overrides: Any = (),
                      params: Mapping[str, Any] | None = None) -> "RunSpec":
        """A spec from anything :func:`vegaslab.run` accepts (a path, a catalog id, TOML text
        or a dict) and overrides as a list or a mapping."""
        from ...scenario import normalise_overrides, scenario_source

        text, source = scenario_source(scenario)
        return cls(text, source, tuple(normalise_overrides(overrides)), seed, dict(params or {}))

    @property
    def label(self) -> str:
        """``source seed=N --set a=b ...`` for messages."""
        parts = [self.source, f"seed={self.seed if self.seed is not None else 'default'}"]
        parts += [f"--set {shlex.quote(o)}" for o in self.overrides]  # quoted: flows[0] would glob
        return " ".join(parts)


def run_key(normalized_text: str, seed: int, core_version: str) -> str:
    """The key of a run: SHA-256 (hex) of the store format, the core's semantic version, the
    seed and the core's normalised scenario text (canonical JSON: sorted keys, shortest
    round-trip numbers, referenced files' content included, no paths). See the package's
    docstring (:mod:`vegaslab.sweeps.store`) for what is deliberately left out."""
    h = hashlib.sha256()
    h.update(f"vegaslab-store-run\n{STORE_FORMAT}\n{core_version}\n{int(seed)}\n".encode("utf-8"))
    h.update(normalized_text.encode("utf-8"))
    return h.hexdigest()


@dataclass(frozen=True, eq=False)
class PreparedRun:
    """A spec resolved by the core on the client: its ``key``, the ``normalized`` scenario
    text, the effective ``seed``, the ``files`` it references (name as written -> content,
    shipped to the worker) and the ``core_version`` the key was made with. ``error`` is set
    (and ``key`` is empty) when the core rejects the spec."""

    spec: RunSpec
    key: str
    normalized: str = ""
    seed: int = 0
    files: Mapping[str, bytes] = field(default_factory=dict)
    core_version: str = ""
    error: str = ""
    #: SHA-256 of ``normalized`` (what a worker checks its own normalisation against).
    normalized_sha256: str = ""

    def light(self) -> "PreparedRun":
        """This run without the scenario text and the normalised scenario (what is sent to a
        worker, with the text sent once per distinct text beside it)."""
        import dataclasses

        return dataclasses.replace(self, spec=dataclasses.replace(self.spec, text=""), normalized="")


def _referenced_files(normalized: str, source: str) -> dict[str, bytes]:
    """The content of each file the normalised scenario lists in ``files``, read relative to
    the source file's directory and checked against the SHA-256 the core recorded."""
    if '"files":[]' in normalized:  # the common case: nothing to read (canonical JSON, no spaces)
        return {}
    refs = json.loads(normalized).get("files") or []
    out: dict[str, bytes] = {}
    for ref in refs:
        name = str(ref["name"])
        path = referenced_path(source, name)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise StoreError(f"{source}: {ref.get('field', 'a field')}: cannot read {name}: "
                             f"{exc.strerror or exc}") from None
        if hashlib.sha256(data).hexdigest() != ref["sha256"]:
            raise StoreError(f"{source}: {ref.get('field', 'a field')}: {name} changed while the runs were planned; "
                             "plan again")
        out[name] = data
    return out


def prepare(specs: Iterable[RunSpec]) -> list[PreparedRun]:
    """Resolve every spec with the core (on this machine): its key, normalised text and
    referenced files. A spec the core rejects gets ``error`` (the core's message, naming the
    file and field) instead of raising, so one bad point does not hide the others."""
    from ...errors import ScenarioError
    from ...core import load_core

    core = load_core()
    version = str(core.version())
    specs = list(specs)
    for spec in specs:
        if not isinstance(spec, RunSpec):
            raise TypeError(f"expected a RunSpec, got {type(spec).__name__}")
    texts = _normalized_texts(core, specs)
    _warn_of_traces(specs, texts)
    out: list[PreparedRun] = []
    for spec, normalized in zip(specs, texts):
        try:
            if isinstance(normalized, BaseException):
                raise normalized
            seed = spec.seed if spec.seed is not None else int(json.loads(normalized)["seed"])
            files = _referenced_files(normalized, spec.source)
        except (ScenarioError, VegaslabError, FileNotFoundError) as exc:
            out.append(PreparedRun(spec, "", error=str(exc)))
            continue
        out.append(PreparedRun(spec, run_key(normalized, seed, version), normalized, seed, files, version,
                               normalized_sha256=hashlib.sha256(normalized.encode("utf-8")).hexdigest()))
    return out


def _warn_of_traces(specs: Sequence[RunSpec], texts: Sequence[str | BaseException]) -> None:
    """A ``UserWarning`` per scenario with a ``[trace]``: the runs of a store (sweeps,
    ``reproduce``, ``robustness``) write tables only, so its trace is not written; said once,
    not silently dropped. (A normalised scenario has a top-level ``"trace"`` key only then.)"""
    import warnings

    named: set[str] = set()
    for spec, text in zip(specs, texts):
        if isinstance(text, str) and '"trace":{' in text and spec.source not in named:
            named.add(spec.source)
            warnings.warn(f"{spec.source}: [trace] is not written by the runs of a sweep, reproduce or robustness "
                          "(they write tables to a results store); trace one run with `vegaslab run --trace`",
                          stacklevel=3)


def _normalized_texts(core: Any, specs: Sequence[RunSpec]) -> list[str | BaseException]:
    """Each spec's normalised scenario (or the error the core gave), the specs that differ only
    in their seed resolved by one call (``normalize_scenario_seeds``: one parse for a sweep
    point's seeds, not one per seed). A Python controller's entry records its module's hash
    (:func:`vegaslab.controller.load`), so an edited class makes new keys."""
    from ...controller import load as load_controller
    from ...core import call_core
    from ...simulation import check_seed

    groups: dict[tuple, list[int]] = {}
    texts: list[str | BaseException] = [""] * len(specs)
    for i, spec in enumerate(specs):
        try:
            check_seed(spec.seed, spec.source)
        except VegaslabError as exc:
            texts[i] = exc
            continue
        if spec.seed is None:  # the scenario's own seed: resolved alone
            groups.setdefault((i,), []).append(i)
        else:
            groups.setdefault((id(spec.text), spec.text, spec.source, tuple(spec.overrides)), []).append(i)
    for members in groups.values():
        first = specs[members[0]]
        try:
            if len(members) == 1:
                texts[members[0]] = call_core(core.normalize_scenario, first.text, first.source, first.seed,
                                               list(first.overrides), load_controller)
                continue
            done = call_core(core.normalize_scenario_seeds, first.text, first.source,
                              [specs[i].seed for i in members], list(first.overrides), load_controller)
        except (VegaslabError, FileNotFoundError) as exc:
            for i in members:
                texts[i] = exc
            continue
        for i, text in zip(members, done):
            texts[i] = text
    return texts


def prepared_runs(specs: Iterable[RunSpec | PreparedRun]) -> list[PreparedRun]:
    """``specs`` resolved in order: each :class:`RunSpec` by :func:`prepare` (in one call), each
    :class:`PreparedRun` as it is."""
    specs = list(specs)
    todo = [s for s in specs if not isinstance(s, PreparedRun)]
    done = iter(prepare(todo))
    return [s if isinstance(s, PreparedRun) else next(done) for s in specs]

