"""python/vegaslab/_core.pyi describes the compiled module exactly: every public function and
exception the module has, and nothing it does not."""
from __future__ import annotations

import ast
from pathlib import Path

from vegaslab import _core

STUB = Path(__file__).resolve().parents[1] / "python" / "vegaslab" / "_core.pyi"


def test_the_stub_names_exactly_the_compiled_modules_functions_and_exceptions():
    tree = ast.parse(STUB.read_text())
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    public = {name for name in dir(_core) if not name.startswith("_")}
    assert functions == {n for n in public if callable(getattr(_core, n)) and not isinstance(getattr(_core, n), type)}
    assert {n for n in public if isinstance(getattr(_core, n), type)} <= classes
