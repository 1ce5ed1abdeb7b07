"""A study's figures: one PNG per factor (the share of seeds for which the conclusion holds at
each level), their names, and reading one back from a directory vegaslab does not own."""

from __future__ import annotations

import io
import math
import os
import re
import textwrap
from pathlib import Path

from ... import safe_io
from .model import StudyResult

#: The largest figure embedded in a report; the figures :func:`figure` draws are 20-80 KB.
MAX_FIGURE_BYTES = 8 << 20
#: The first bytes of every PNG file (PNG specification, section 5.2, "PNG signature").
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def figure_name(study: str, n: int) -> str:
    """The file name of the ``n``-th figure (one per factor, in factor order) of the study
    named ``study`` (its ``id``)."""
    return f"{study}-{n}.png"


def figure_pattern(study: str) -> re.Pattern:
    return re.compile(re.escape(study) + r"-(?:0|[1-9][0-9]{0,5})\.png")


def figure(result: StudyResult, out: str | os.PathLike) -> list[Path]:
    """One PNG per factor, ``out/<id>-<n>.png``: the share of seeds for which the
    conclusion holds at each level, with its interval (at the study's corrected level), the
    default level marked and the level the paper states labelled "(paper)"; returns
    the files written. ``out`` is made when absent; each file is written under the rule for
    files vegaslab writes (:func:`vegaslab.safe_io.write_file`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for n, f in enumerate(result.study.factors):
        labels = list(f.levels)
        prs = [result.default if lab == f.default else result.at({f.name: lab}) for lab in labels]
        share = [pr.holds / pr.seeds if pr.seeds else math.nan for pr in prs]
        # Clamped at 0: at k = 0 or k = n an interval end equals the share up to rounding.
        lo = [max(0.0, s - pr.interval[0]) if pr.seeds else 0.0 for s, pr in zip(share, prs)]
        hi = [max(0.0, pr.interval[1] - s) if pr.seeds else 0.0 for s, pr in zip(share, prs)]
        fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(labels) + 2), 3.2))
        try:
            x = range(len(labels))
            ax.errorbar(x, share, yerr=[lo, hi], fmt="o", color="#1f4e9c", capsize=4)
            d = labels.index(f.default)
            ax.plot([d], [share[d]], marker="*", markersize=16, color="#c0392b", linestyle="none", label="our default")
            ax.axhline(0.5, color="#888", linewidth=0.8, linestyle="--")
            shown = [f"{lab} (paper)" if f.provenance(lab) == "stated" else lab for lab in labels]
            ax.set_xticks(list(x), shown, rotation=20 if len(labels) > 4 else 0)
            ax.set_ylim(-0.05, 1.05)
            ax.set_xlabel(f.name)
            ax.set_ylabel("share of seeds where it holds")
            ax.set_title("\n".join(textwrap.wrap(result.study.conclusion, 60)), fontsize=9)
            ax.legend(loc="best", fontsize=8)
            fig.tight_layout()
            png = io.BytesIO()
            fig.savefig(png, format="png", dpi=100)
        finally:
            plt.close(fig)
        files.append(safe_io.write_file(out, figure_name(result.study.name, n), png.getvalue()))
    return files


def read_figure(directory_fd: int, name: str, study: str) -> bytes:
    """The bytes of the figure ``name`` of the study named ``study``, from the directory open as
    ``directory_fd`` (:func:`vegaslab.safe_io.open_dir`). ``name`` is a figure entry of the
    summary: ``<id>-<n>.png``, or ``robustness/<id>-<n>.png`` as vegaslab 0.4.0 wrote it
    (relative to the report's directory). Anything else (a ``/``, ``..``, an absolute path,
    another study's figure) is refused, as are a link, a FIFO, a file larger than
    :data:`MAX_FIGURE_BYTES` and one without the PNG signature: :class:`~vegaslab.safe_io.ForeignFileError`
    naming the figure as the summary gives it."""
    plain = name.removeprefix("robustness/")
    if not figure_pattern(study).fullmatch(plain):
        raise safe_io.ForeignFileError(name, f"not a figure of this study: a summary names its figures "
                                             f"{figure_name(study, 0)}, ..., inside its own directory")
    try:
        data = safe_io.read_bytes(plain, max_bytes=MAX_FIGURE_BYTES, dir_fd=directory_fd)
    except FileNotFoundError:
        raise safe_io.ForeignFileError(name, "no such file") from None
    except safe_io.ForeignFileError as exc:
        raise safe_io.ForeignFileError(name, exc.reason) from None
    if not data.startswith(PNG_SIGNATURE):
        raise safe_io.ForeignFileError(name, "not a PNG image (no PNG signature); only PNG figures are embedded")
    return data
