"""Deprecated alias of :mod:`vegaslab.study.catalog` (the module moved there); removed in the next
release."""

from .deprecation import alias_module
from .study import catalog as _new_module

__alias_of__ = _new_module.__name__
alias_module(__name__, _new_module)
