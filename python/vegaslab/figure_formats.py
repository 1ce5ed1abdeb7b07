"""The file formats figures are written in, and how to write each so that the same figure gives
the same bytes: PNG with fixed compression options, PDF and SVG without their creation date,
SVG's element ids from a fixed salt instead of random ones. Imports no matplotlib, so the
command line can list the formats without loading it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FORMATS", "PNG_OPTIONS", "check_format", "figure_bytes"]

#: The formats a figure may be written in (matplotlib's backends for them).
FORMATS = ("png", "pdf", "svg")
#: Options for PIL's PNG encoder: zlib level 1 instead of PIL's 6 encodes about twice as fast
#: for files 8-20 % larger. The pixels are the same: PNG is lossless at every level.
PNG_OPTIONS = {"compress_level": 1}


def check_format(fmt: str, what: str = "format") -> str:
    """``fmt`` when it is one of :data:`FORMATS`, else ``ValueError`` naming ``what``."""
    if fmt not in FORMATS:
        raise ValueError(f"{what}: must be one of {', '.join(FORMATS)}, got {fmt!r}")
    return fmt


def _save_options(fmt: str) -> dict[str, Any]:
    if fmt == "png":
        return {"pil_kwargs": dict(PNG_OPTIONS)}
    return {"metadata": {"CreationDate": None} if fmt == "pdf" else {"Date": None}}


def figure_bytes(fig: Any, fmt: str) -> bytes:
    """``fig`` (a matplotlib Figure) written in ``fmt``, the same bytes for the same figure."""
    import io

    import matplotlib

    data = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "vegaslab"}):
        fig.savefig(data, format=check_format(fmt), **_save_options(fmt))
    return data.getvalue()
