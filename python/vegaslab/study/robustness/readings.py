"""Algorithm readings: a factor that reads an algorithm's text one way or another (Vegas-A's
rule when the throughput stays equal, say) is not a set-up of one experiment but of the
algorithm, so a study may vary it only together with every entry that runs that algorithm.

A *reading factor* (``reading = "<cc>"`` in the study file, docs/robustness-format.md) gives
its levels as overrides relative to a flow (``params.equal_throughput=hold``). Each applies to
every flow whose algorithm is ``<cc>`` (the core's normalised scenario says which flows those
are), in the study's runs and in every catalog entry with such a flow, except a flow whose
scenario sets that parameter away from its default: a variant that runs the other reading on
purpose (va-geo's ``vegas-a-hold-per0``) keeps it. :func:`reading_costs`
runs those entries at each level, with the entries' own variants and seeds as ``reproduce``
runs them, and names the claims whose verdict the level changes: what the reading costs, or
gains, elsewhere. The study's verdict sentence carries it."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from .model import Study


@dataclass(frozen=True)
class FlowAlgorithm:
    """A flow's algorithm as the core resolved it: its ``cc`` name, and the parameters the
    scenario sets away from the registry's default (a variant that runs the other reading on
    purpose, such as va-geo's ``vegas-a-hold-per0``)."""

    cc: str
    set_params: frozenset[str] = frozenset()


def flow_algorithms(text: str, source: str, overrides: Sequence[str]) -> list[FlowAlgorithm]:
    """Each flow of a scenario after ``overrides``, as the core resolves it: the registry's
    algorithm whose tag its normalised algorithm carries, and which of its parameters differ
    from the registry's defaults."""
    from ... import registry
    from ...core import call_core, load_core

    normalised = json.loads(call_core(load_core().normalize_scenario, text, source, None, list(overrides)))
    by_tag = {a.tag: a for a in registry.algorithms()}
    out = []
    for flow in normalised["flows"]:
        algo = flow["algorithm"]
        tag, params = (algo, {}) if isinstance(algo, str) else next(iter(algo.items()))
        a = by_tag.get(tag)
        if a is None:
            out.append(FlowAlgorithm(""))
            continue
        flavour = params.get("flavour", "ns2")
        defaults = {p.name: (p.default_by_flavour or {}).get(flavour, p.default) for p in a.params}
        out.append(FlowAlgorithm(a.name, frozenset(k for k, v in params.items()
                                                   if k in defaults and defaults[k] is not None and v != defaults[k])))
    return out


def _sets(override: str) -> str:
    """The parameter a flow-relative override sets (``params.equal_throughput=hold`` ->
    ``equal_throughput``), or "" for any other key."""
    key = override.partition("=")[0].strip()
    return key.removeprefix("params.") if key.startswith("params.") else ""


def applied(flow_overrides: Iterable[tuple[str, str]], flows: Sequence[FlowAlgorithm]) -> tuple[str, ...]:
    """Each (cc, flow-relative override) as ``flows[i].<override>`` for every flow ``i`` whose
    algorithm is that cc, except where the scenario itself sets that parameter away from its
    default: a variant that runs the other reading on purpose keeps it."""
    return tuple(f"flows[{i}].{o}" for cc, o in flow_overrides for i, f in enumerate(flows)
                 if f.cc == cc and _sets(o) not in f.set_params)


@dataclass(frozen=True)
class ReadingCost:
    """What one level of a reading factor does to the claims of every entry that runs its
    algorithm, against the factor's default level: the entries, how many claims were compared,
    and each claim whose verdict differs (``entry#id``, its kind, the verdict at the default
    and at this level)."""

    factor: str
    cc: str
    level: str
    default: str
    entries: tuple[str, ...]
    claims: int
    changed: tuple[tuple[str, str, str, str], ...]
    errors: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"factor": self.factor, "cc": self.cc, "level": self.level, "default": self.default,
                "entries": list(self.entries), "claims": self.claims,
                "changed": [{"claim": c, "kind": k, "at_default": a, "at_level": b} for c, k, a, b in self.changed],
                "errors": list(self.errors)}

    def text(self) -> str:
        """One sentence: where the level applies and which claims it turns."""
        where = (f"The reading {self.factor} = {self.level} (instead of {self.default}), applied to every {self.cc} "
                 f"flow of the {len(self.entries)} entries that run one, ")
        if self.errors:
            return where + f"could not be judged everywhere: {'; '.join(self.errors[:3])}."
        if not self.changed:
            return where + f"changes none of their {self.claims} claims."
        turns = "; ".join(f"{c} {a} -> {b}" + (" (supplementary)" if k == "supplementary" else "")
                          for c, k, a, b in self.changed)
        return where + f"changes {len(self.changed)} of their {self.claims} claims: {turns}."


def _variant_flows(entries: Iterable[Any], quick: bool) -> dict[tuple[str, str], list[FlowAlgorithm]]:
    """Each entry variant's flows as the core resolves them, by (entry id, variant name): read
    once, for finding the entries that run an algorithm and for applying every level."""
    from ...scenario import read_text_file

    out = {}
    for entry in entries:
        for spec in entry.runs(quick=quick):
            path = os.fspath(spec.scenario_path)
            out[(entry.id, spec.name)] = flow_algorithms(read_text_file(path), path, spec.overrides)
    return out


class _AtLevel:
    """An entry whose every variant carries a reading factor's level on its ``cc`` flows: what
    :func:`vegaslab.study.runner.plan` needs of an entry (its id, runs and seeds)."""

    def __init__(self, entry: Any, flow_overrides: Sequence[tuple[str, str]],
                 flows: Mapping[tuple[str, str], list[FlowAlgorithm]]):
        self.entry, self.flow_overrides, self.flows = entry, tuple(flow_overrides), flows
        self.id = entry.id

    def seeds(self, quick: bool = False) -> list[int]:
        return self.entry.seeds(quick=quick)

    def runs(self, quick: bool = False) -> list[Any]:
        import dataclasses

        return [dataclasses.replace(spec, overrides=tuple(spec.overrides) + applied(
                    self.flow_overrides, self.flows[(self.id, spec.name)]))
                for spec in self.entry.runs(quick=quick)]


def reading_costs(study: Study, store_dir: str | os.PathLike, *, catalog: str | os.PathLike | None = None,
                  n_jobs: int | None = None, scheduler: Any = None, progress: bool = False,
                  quick: bool = False, run_fn: Any = None) -> list[ReadingCost]:
    """For each reading factor of ``study`` and each of its non-default levels, the claims of
    every catalog entry running its algorithm whose verdict the level changes (see the module's
    docstring). Every level, the default included, is applied explicitly, so the comparison
    does not depend on what the entries' scenario files hold. Runs go to ``store_dir`` (shared
    with ``reproduce``); a run that fails makes that level's cost an error, never "no change"."""
    from ..catalog import list_entries
    from ..claims import RunSet, evaluate_all
    from ..runner import execute, load, plan

    costs: list[ReadingCost] = []
    readings = [f for f in study.factors if f.reading]
    if not readings:
        return costs
    catalog_entries = list_entries(catalog)
    flows = _variant_flows(catalog_entries, quick)
    for f in readings:
        entries = [e for e in catalog_entries
                   if any(a.cc == f.reading for (eid, _), fs in flows.items() if eid == e.id for a in fs)]
        by_level = {label: [_AtLevel(e, [(f.reading, o) for o in f.levels[label]], flows) for e in entries]
                    for label in f.levels}
        jobs = {label: plan(wrapped, quick=quick) for label, wrapped in by_level.items()}
        ex = execute([j for js in jobs.values() for j in js], store_dir, n_jobs=n_jobs, scheduler=scheduler,
                     progress=progress, run_fn=run_fn)
        if ex.interrupted:
            raise KeyboardInterrupt
        verdicts: dict[str, dict[str, tuple[str, str]]] = {}
        errors: dict[str, list[str]] = {}
        for label, js in jobs.items():
            for e in entries:
                mine = [j for j in js if j.entry_id == e.id]
                ok = [j for j in mine if ex.outcomes.get(j.key) is not None and ex.outcomes[j.key].status != "failed"]
                for j in mine:
                    if j not in ok:
                        o = ex.outcomes.get(j.key)
                        errors.setdefault(label, []).append(f"{e.id}/{j.variant} seed {j.seed}: "
                                                            f"{o.error if o else j.error or 'not run'}")
                results = load(store_dir, [j.key for j in ok])
                runs: dict[str, list[Any]] = {}
                for j in ok:
                    if j.key in results:
                        runs.setdefault(j.variant, []).append(results[j.key])
                    else:  # missing data is an error, never a smaller sample
                        errors.setdefault(label, []).append(f"{e.id}/{j.variant} seed {j.seed}: the run is not "
                                                            "readable from the store")
                for claim, v in zip(e.claims, evaluate_all(e.claims, RunSet(runs=runs))):
                    verdicts.setdefault(label, {})[f"{e.id}#{claim['id']}"] = (v.status, claim.get("kind", "paper"))
        base = verdicts.get(f.default, {})
        for label in f.levels:
            if label == f.default:
                continue
            here = verdicts.get(label, {})
            changed = tuple((c, kind, base[c][0], here[c][0]) for c, (_, kind) in base.items()
                            if c in here and here[c][0] != base[c][0])
            errs = tuple(errors.get(label, []) + errors.get(f.default, []))
            costs.append(ReadingCost(f.name, f.reading, label, f.default, tuple(e.id for e in entries),
                                     len(base), changed, errs))
    return costs
