"""Deprecated alias of :mod:`vegaslab.sweeps.store` (the module moved there); removed in the next
release."""

from .deprecation import alias_module
from .sweeps import store as _new_module

__alias_of__ = _new_module.__name__
alias_module(__name__, _new_module)
