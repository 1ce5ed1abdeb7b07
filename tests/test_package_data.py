"""The catalog ships inside the package: after `pip install`
of a wheel, catalog ids work from any directory, without a source checkout.

Building a wheel takes minutes (it compiles the Rust core), too slow for the suite. Instead:
the package finds its catalog through importlib.resources, inside the package; a copy of the
package directory alone (what a wheel installs), run from an empty directory, resolves and runs
catalog ids; pyproject.toml's maturin settings put the package directory, data included, into
the wheel; and the repository holds one copy of each scenario file."""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.resources
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path, PurePosixPath

import pytest

import vegaslab
from vegaslab.study import catalog

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
MATURIN = PYPROJECT["tool"]["maturin"]
#: Directories of the checkout that hold build products, environments or outputs, not sources.
NOT_SOURCES = {".git", ".venv", "target", "out", "report", "__pycache__", ".pytest_cache", "artifacts",
               ".hypothesis", "node_modules"}


def _env_without_catalog(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VEGASLAB_CATALOG", "PYTHONPATH")}
    return {**env, **extra}


def _catalog_files() -> list[Path]:
    return sorted(p for p in catalog.builtin_dir().rglob("*") if p.is_file() and "__pycache__" not in p.parts)


# ---------------------------------------------------------------------- where the catalog is


def test_the_catalog_is_package_data_found_through_importlib_resources(monkeypatch, tmp_path):
    monkeypatch.delenv("VEGASLAB_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    package = Path(vegaslab.__file__).resolve().parent
    expected = importlib.resources.files("vegaslab") / catalog.PACKAGE_DATA
    assert catalog.builtin_dir() == expected
    assert catalog.catalog_dir() == expected
    assert catalog.builtin_dir().resolve().is_relative_to(package)
    ids = {e.id for e in catalog.list_entries()}
    assert set(catalog.DEFAULT_IDS) <= ids and len(ids) >= 27
    assert (catalog.builtin_dir() / "bench" / "grids-net2.toml").is_file()


def test_the_repository_holds_one_copy_of_each_catalog_file():
    """No second catalog directory (the old top-level catalog/) and no file elsewhere in the
    checkout with the same content as a catalog file."""
    assert not (ROOT / "catalog").exists(), "catalog/ is back at the top level: the catalog lives in the package"
    digests = {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in _catalog_files()}
    assert len(digests) == len(_catalog_files())
    data_dir = catalog.builtin_dir().resolve()
    copies = []
    for base, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in NOT_SOURCES]
        if Path(base).resolve().is_relative_to(data_dir):
            continue
        for name in files:
            path = Path(base) / name
            if path.suffix == ".toml" and path.stat().st_size < (1 << 20):
                original = digests.get(hashlib.sha256(path.read_bytes()).hexdigest())
                if original is not None:
                    copies.append(f"{path.relative_to(ROOT)} duplicates {original.relative_to(ROOT)}")
    assert not copies, copies


# ---------------------------------------------------------------------- the wheel's contents


def _gitignore_patterns() -> list[str]:
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def _ignored(rel: PurePosixPath, pattern: str) -> bool:
    """Whether a .gitignore pattern (the simple forms this repository uses: a name or a glob,
    optionally anchored with / or limited to directories with a trailing /) matches ``rel`` or
    one of its parent directories. maturin leaves ignored files out of the wheel."""
    anchored, dir_only = pattern.startswith("/"), pattern.endswith("/")
    pat = pattern.strip("/")
    parts = rel.parts
    candidates = range(len(parts) - 1) if dir_only else range(len(parts))
    for i in candidates:
        if anchored:
            if fnmatch.fnmatch("/".join(parts[: i + 1]), pat):
                return True
        elif fnmatch.fnmatch(parts[i], pat) or fnmatch.fnmatch("/".join(parts[: i + 1]), pat):
            return True
    return False


def _targets_wheel(pattern) -> str | None:
    """The glob of a maturin include/exclude entry when it applies to wheels."""
    if isinstance(pattern, str):
        return pattern
    formats = pattern.get("format", ["sdist", "wheel"])
    formats = [formats] if isinstance(formats, str) else formats
    return pattern["path"] if "wheel" in formats else None


def test_the_maturin_settings_put_every_catalog_file_into_the_wheel():
    """maturin copies the python-source package directory into the wheel, less files that
    .gitignore or tool.maturin.exclude leave out; the catalog must be in that directory and in
    neither list."""
    source = ROOT / MATURIN["python-source"]
    assert MATURIN["module-name"].split(".")[0] == "vegaslab"
    package = source / "vegaslab"
    assert catalog.builtin_dir().resolve().is_relative_to(package.resolve())
    files = _catalog_files()
    assert len([p for p in files if p.suffix == ".toml"]) >= 28
    excludes = [g for g in map(_targets_wheel, MATURIN.get("exclude", [])) if g]
    ignores = _gitignore_patterns()
    for path in files:
        rel = PurePosixPath(path.resolve().relative_to(ROOT.resolve()).as_posix())
        assert not any(fnmatch.fnmatch(str(rel), g) for g in excludes), f"{rel} is excluded from the wheel"
        assert not any(_ignored(rel, p) for p in ignores), f"{rel} is ignored by .gitignore, so not packaged"


def test_the_gitignore_check_would_catch_an_ignored_catalog_file():
    rel = PurePosixPath("python/vegaslab/catalog_data/va-reroute.toml")
    assert _ignored(rel, "*.toml") and _ignored(rel, "catalog_data/") and _ignored(rel, "/python/")
    assert not _ignored(rel, "/catalog_data/") and not _ignored(rel, "*.so") and not _ignored(rel, "target/")


# ---------------------------------------------------------------------- an installed copy


@pytest.fixture(scope="module")
def installed_copy(tmp_path_factory) -> Path:
    """The package directory alone in a fresh site directory, as a wheel installs it: no
    checkout around it. Needs the compiled core."""
    package = Path(vegaslab.__file__).resolve().parent
    if not any(package.glob("_core*")):
        pytest.skip("the compiled core is not built")
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(package, site / "vegaslab", ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _python_in(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=_env_without_catalog(PYTHONPATH=str(site)),
                          capture_output=True, text=True, timeout=120)


def test_an_installed_copy_resolves_catalog_entries_from_itself_not_the_checkout(installed_copy, tmp_path):
    code = ("import json, vegaslab\nfrom vegaslab.study import catalog, runner\n"
            "jobs = runner.plan(catalog.resolve(['va-reroute']))\n"
            "print(json.dumps({'package': vegaslab.__file__, 'catalog': str(catalog.catalog_dir()),"
            " 'scenario': jobs[0].scenario_path, 'jobs': len(jobs)}))")
    proc = _python_in(installed_copy, tmp_path, "-c", code)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    copy = installed_copy / "vegaslab"
    assert Path(got["package"]).resolve().is_relative_to(copy)
    assert Path(got["catalog"]).resolve() == copy / catalog.PACKAGE_DATA
    assert Path(got["scenario"]).resolve() == copy / catalog.PACKAGE_DATA / "va-reroute.toml"
    assert got["jobs"] == catalog.load_entry("va-reroute").run_count()


def test_core_an_installed_copy_runs_a_catalog_id_from_an_empty_directory(installed_copy, tmp_path):
    proc = _python_in(installed_copy, tmp_path, "-m", "vegaslab", "run", "va-reroute",
                      "--set", "run.duration=2s", "--no-plots", "--out", "out")
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["duration_s"] == pytest.approx(2.0)
    source = Path(meta["provenance"]["source"]).resolve()
    assert source == installed_copy / "vegaslab" / catalog.PACKAGE_DATA / "va-reroute.toml"


# ---------------------------------------------------------------------- the report's templates


def _template_files() -> list[Path]:
    root = importlib.resources.files("vegaslab.report") / "templates"
    return sorted(p for p in Path(str(root)).rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def test_the_maturin_settings_put_the_report_templates_and_the_papers_file_into_the_wheel():
    """The report is rendered from Jinja2 templates in vegaslab/report/templates/ and cites from
    catalog_data/papers/papers.toml: both must be package data like the catalog."""
    package = (ROOT / MATURIN["python-source"] / "vegaslab").resolve()
    files = _template_files() + [catalog.builtin_dir() / "papers" / "papers.toml"]
    assert len(files) >= 6 and all(p.is_file() for p in files)
    excludes = [g for g in map(_targets_wheel, MATURIN.get("exclude", [])) if g]
    ignores = _gitignore_patterns()
    for path in files:
        assert path.resolve().is_relative_to(package), path
        rel = PurePosixPath(path.resolve().relative_to(ROOT.resolve()).as_posix())
        assert not any(fnmatch.fnmatch(str(rel), g) for g in excludes), f"{rel} is excluded from the wheel"
        assert not any(_ignored(rel, p) for p in ignores), f"{rel} is ignored by .gitignore, so not packaged"


def test_an_installed_copy_renders_the_report_from_its_own_templates(installed_copy, tmp_path):
    code = ("import json\nfrom vegaslab.report.render import environment, render\n"
            "from vegaslab.report.model import load_papers\n"
            "t = environment().get_template('report.html.j2')\n"
            "print(json.dumps({'template': t.filename, 'papers': sorted(load_papers()),"
            " 'section': render('robustness.html.j2', start='', end='', anchor_id='r', title='T', studies=[],"
            " ns2=False)}))")
    proc = _python_in(installed_copy, tmp_path, "-c", code)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(got["template"]).resolve().is_relative_to(installed_copy / "vegaslab" / "report" / "templates")
    assert got["papers"] == sorted(["vegas-a", "adavegas", "vegas-grids", "vegas-lte", "rovegas"])
    assert "No robustness study has been run" in got["section"]
