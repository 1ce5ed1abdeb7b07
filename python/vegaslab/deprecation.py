"""Deprecated module paths: a module that moved stays importable under its old path for one
release, as an alias that warns (``DeprecationWarning``) naming the new path.

An alias module is the new module itself (``sys.modules`` maps the old name to it), so every
name, private ones and monkeypatching included, behaves as it did. The warning is attributed to
the code that imported the old path, not to Python's import machinery, so Python's default
filters show it when that code is ``__main__`` and test runners show it everywhere.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType
from typing import Any, Callable, Mapping

__all__ = ["alias_module", "moved_names", "warn_moved"]


def _outside_import_machinery() -> int:
    """The ``stacklevel`` of the first frame that is neither this module's, an alias module's
    (one that sets ``__alias_of__``), a module ``__getattr__`` nor the import machinery's.
    :func:`warnings.warn` itself passes over importlib's bootstrap frames when it counts, so
    they are not counted here either."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None:
        filename = frame.f_code.co_filename
        if "importlib" in filename and "_bootstrap" in filename:
            frame = frame.f_back
            continue
        g = frame.f_globals
        if not (g.get("__name__") == __name__ or g.get("__alias_of__") or frame.f_code.co_name == "__getattr__"
                or g.get("__name__") == "importlib"):
            return level
        frame = frame.f_back
        level += 1
    return 1


def warn_moved(old: str, new: str) -> None:
    """Warn that the module ``old`` is now ``new``."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; import {new} instead",
                  DeprecationWarning, stacklevel=_outside_import_machinery())


def alias_module(old: str, new_module: ModuleType) -> None:
    """Make the module being imported as ``old`` an alias of ``new_module``, with a warning."""
    warn_moved(old, new_module.__name__)
    sys.modules[old] = new_module


def moved_names(old_module: str, moved: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the names that moved out of ``old_module``: ``moved`` maps
    each old name to the dotted path of the module it lives in now. Reading one warns naming
    the new path and returns the new module's object itself.

    The new module is found by its path when the old name is read, never imported by
    ``old_module``: a name that moved up a layer (docs/architecture.md) stays readable from its
    old place without the lower layer importing the higher one."""

    def __getattr__(name: str) -> Any:
        new = moved.get(name)
        if new is None:
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        warn_moved(f"{old_module}.{name}", f"{new}.{name}")
        return getattr(importlib.import_module(new), name)

    return __getattr__
