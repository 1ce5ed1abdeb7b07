"""Deprecated alias of :mod:`vegaslab.sweeps.engine` (the module moved there); removed in the next
release."""

from .deprecation import alias_module
from .sweeps import engine as _new_module

__alias_of__ = _new_module.__name__
alias_module(__name__, _new_module)
