"""Module paths the docs used to give keep working for one release: each old path is the new
module itself, and importing it warns ``DeprecationWarning`` naming the new path; the package
never uses them, so importing it (and its command line) warns nothing."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

#: old path -> new path
MOVED = {
    "vegaslab.catalog": "vegaslab.study.catalog",
    "vegaslab.metrics": "vegaslab.study.metrics",
    "vegaslab.robustness": "vegaslab.study.robustness",
    "vegaslab.robustness_ns2": "vegaslab.study.ns2_check",
    "vegaslab.engine": "vegaslab.sweeps.engine",
    "vegaslab.store": "vegaslab.sweeps.store",
    "vegaslab.sweep_results": "vegaslab.sweeps.results",
    "vegaslab.report_model": "vegaslab.report.model",
}

ROOT = Path(__file__).resolve().parents[1]


def _fresh_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_is_the_new_module_and_warns_naming_it(old):
    # In a fresh interpreter: the warning is given once, when the old path is first imported.
    code = (f"import warnings, importlib\n"
            f"with warnings.catch_warnings(record=True) as w:\n"
            f"    warnings.simplefilter('always')\n"
            f"    old = importlib.import_module({old!r})\n"
            f"new = importlib.import_module({MOVED[old]!r})\n"
            f"assert old is new, (old, new)\n"
            f"print([(c.category.__name__, str(c.message)) for c in w])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    warned = eval(proc.stdout.strip().splitlines()[-1])  # noqa: S307 - our own repr of a list of tuples
    assert any(cat == "DeprecationWarning" and old in msg and MOVED[old] in msg for cat, msg in warned), warned


def test_the_warning_points_at_the_line_that_imported_the_old_path(tmp_path):
    script = tmp_path / "user.py"
    script.write_text("import vegaslab.store\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # Python's default filters show a DeprecationWarning raised in __main__: attributed to the
    # user's line, not to the import machinery, it is seen.
    assert f"{script}:1: DeprecationWarning: vegaslab.store is deprecated" in proc.stderr


def test_the_old_sweeps_plan_names_warn_and_are_the_planning_modules():
    from vegaslab.sweeps import planning

    for name in ("plan", "SweepPlan", "SweepAxis", "SweepParam", "SweepPoint", "FORMAT"):
        with pytest.warns(DeprecationWarning, match=f"vegaslab.sweeps.planning.{name}"):
            got = getattr(importlib.import_module("vegaslab.sweeps"), name)
        assert got is getattr(planning, name)


def test_the_catalogs_old_runspec_is_variant():
    from vegaslab.study import catalog

    with pytest.warns(DeprecationWarning, match="vegaslab.study.catalog.Variant"):
        assert catalog.RunSpec is catalog.Variant


#: old module -> names that moved up a layer -> the module that owns them now
MOVED_NAMES = {
    "vegaslab.study.catalog": (("format_comparison", "summary_markdown"), "vegaslab.report.tables"),
    "vegaslab.study.robustness": (("fmt", "default_cell", "study_cell", "ns2_cell", "default_status", "markdown",
                                   "set_aside_name"), "vegaslab.report.robustness_text"),
}


@pytest.mark.parametrize("old", sorted(MOVED_NAMES))
def test_a_name_that_moved_up_a_layer_is_still_read_from_its_old_module_with_a_warning(old):
    names, new = MOVED_NAMES[old]
    for name in names:
        with pytest.warns(DeprecationWarning, match=f"{old}.{name} is deprecated.*import {new}.{name} instead"):
            got = getattr(importlib.import_module(old), name)
        assert got is getattr(importlib.import_module(new), name)


def test_a_name_that_never_was_in_the_old_module_is_still_an_attribute_error():
    from vegaslab.study import catalog, robustness

    for module in (catalog, robustness):
        with pytest.raises(AttributeError, match="no_such_name"):
            module.no_such_name  # noqa: B018 - the attribute read is the test


def test_importing_the_package_and_its_command_line_warns_nothing():
    proc = _fresh_python("import vegaslab, vegaslab.cli, vegaslab.reproduction, vegaslab.bench")
    assert proc.returncode == 0, proc.stderr


def test_every_module_of_the_package_imports_without_a_deprecation_warning():
    # Each new module, in a fresh interpreter under -W error: none uses an old path.
    import pkgutil

    import vegaslab

    modules = sorted(m.name for m in pkgutil.walk_packages(vegaslab.__path__, "vegaslab.")
                     if m.name not in MOVED and m.name != "vegaslab.__main__")
    code = ("import importlib, sys\n"
            f"for m in {modules!r}:\n"
            "    try:\n"
            "        importlib.import_module(m)\n"
            "    except ImportError as exc:\n"
            "        if '_core' not in str(exc): raise\n")
    proc = _fresh_python(code)
    assert proc.returncode == 0, proc.stderr
