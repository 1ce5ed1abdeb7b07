"""pyproject.toml declares only what is true (issue 7): the Python versions it claims must be
able to import the package, and the test extra must hold what the tests import."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def test_the_interpreter_running_the_tests_is_a_declared_python_version():
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in SpecifierSet(PROJECT["requires-python"])


def test_every_declared_python_version_has_a_toml_reader():
    """tomllib is in the standard library from 3.11; an older declared version needs tomli."""
    declared = SpecifierSet(PROJECT["requires-python"])
    older = [v for v in ("3.8", "3.9", "3.10") if v in declared]
    if older:
        tomli = [Requirement(d) for d in PROJECT["dependencies"] if Requirement(d).name == "tomli"]
        assert tomli, f"requires-python admits {', '.join(older)} but tomli is not a dependency"
        for v in older:
            assert tomli[0].marker is None or tomli[0].marker.evaluate({"python_version": v})


def test_the_test_extra_has_what_the_tests_import():
    names = {Requirement(r).name for r in PROJECT["optional-dependencies"]["test"]}
    assert {"pytest", "hypothesis"} <= names
