"""The data a claim reads: an entry's runs by variant (:class:`RunSet`), and the value
``run("variant")`` stands for in an expression (:class:`RunRef`)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .errors import ClaimError, missing_data


@dataclass
class RunSet:
    """The runs of one entry: variant name -> the Results of its seeds (successful ones), in
    catalog order, and variant name -> error message for variants with failed seeds (any
    failed seed: a claim that refers to the variant is then ``error: missing data``, never
    judged on the survivors)."""

    runs: Mapping[str, Sequence[Any]]
    failed: Mapping[str, str] = field(default_factory=dict)
    order: Sequence[str] = ()

    def names(self) -> list[str]:
        names = list(self.order) or list(self.runs)
        return names + [n for n in list(self.runs) + list(self.failed) if n not in names]

    def results(self, variant: str) -> Sequence[Any]:
        """The Results of every seed of ``variant``. Raises :class:`~.errors.ClaimMissingData` when any
        seed failed and :class:`ClaimError` when there is no such variant."""
        got = self.runs.get(variant) or ()
        if variant in self.failed:
            if got:
                raise missing_data(f"variant {variant!r} has failed runs ({self.failed[variant]}); it is not "
                               f"judged on its {len(got)} surviving seed{'s' if len(got) != 1 else ''}")
            raise missing_data(f"variant {variant!r} has no results: its runs failed ({self.failed[variant]})")
        if got:
            return got
        if variant in self.runs:
            raise missing_data(f"variant {variant!r} has no runs")
        raise ClaimError(f"no variant {variant!r} (known: {', '.join(self.names())})")

    def match(self, pattern: str) -> list[str]:
        found = [n for n in self.names() if fnmatch.fnmatchcase(n, pattern)]
        if not found:
            raise ClaimError(f"no variant matches {pattern!r} (known: {', '.join(self.names())})")
        return found


def seed_of(res: Any) -> str:
    """`` in seed N`` for a Results whose meta names its seed, else ``""``."""
    try:
        seed = res.meta.get("seed")
    except Exception:  # noqa: BLE001 - a Results without meta simply has no seed to name
        return ""
    return "" if seed is None else f" in seed {seed}"


@dataclass(frozen=True)
class RunRef:
    variant: str
