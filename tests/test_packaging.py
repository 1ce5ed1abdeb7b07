"""pyproject.toml declares only what is true: the Python versions it claims must be
able to import the package, and the test extra must hold what the tests import. The wheel's
metadata and contents: README, license, URLs or their stated absence, classifiers,
a manylinux tag, a release profile without debug info, the catalog and the docs inside."""

from __future__ import annotations

import fnmatch
import sys
import tomllib
from pathlib import Path, PurePosixPath

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from test_package_data import _gitignore_patterns, _ignored, _targets_wheel
from vegaslab.study import catalog

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT_TEXT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
PYPROJECT = tomllib.loads(PYPROJECT_TEXT)
PROJECT = PYPROJECT["project"]
MATURIN = PYPROJECT["tool"]["maturin"]
CARGO = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))
PACKAGE = ROOT / MATURIN["python-source"] / "vegaslab"


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


# ---------------------------------------------------------------------- the wheel
# The wheel itself is built, installed without Rust and run by scripts/check-wheel.sh (`make
# wheel-check`, part of `make test`; minutes). These tests check the settings it relies on.

#: Hosts and words that mark a made-up address.
PLACEHOLDERS = ("example.", "localhost", "todo", "tbd", "xxx", "your-", "yourname", "username", "changeme",
                "placeholder")


def test_the_metadata_has_the_readme_as_its_long_description():
    assert PROJECT.get("readme") == "README.md", "project.readme must be README.md (the long description)"
    assert (ROOT / "README.md").is_file()


def test_the_license_is_the_cargo_workspace_license_with_its_file():
    """One license for the Rust crates and the Python package: the SPDX expression of
    pyproject.toml is the workspace's, and the license file it names exists and says so."""
    cargo_license = CARGO["workspace"]["package"]["license"]
    assert PROJECT.get("license") == cargo_license, (
        f"project.license is {PROJECT.get('license')!r}, the Cargo workspace's is {cargo_license!r}")
    files = PROJECT.get("license-files")
    assert files, "project.license-files is missing: the wheel would carry no license text"
    for pattern in files:
        matched = sorted(ROOT.glob(pattern))
        assert matched, f"license-files entry {pattern!r} matches no file"
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith(f"{cargo_license} License"), "LICENSE is not the text of the declared license"


def test_project_urls_are_real_addresses_or_their_absence_is_stated():
    """No made-up URL: either every project URL is an https address without a placeholder,
    or pyproject.toml says there is no public URL yet."""
    urls = PROJECT.get("urls")
    if not urls:
        assert "no public URL" in PYPROJECT_TEXT, (
            "pyproject.toml has no [project.urls] and does not say that the project has no public URL yet")
        return
    for label, url in urls.items():
        assert url.startswith("https://"), f"project.urls.{label} = {url!r} is not an https address"
        assert not any(p in url.lower() for p in PLACEHOLDERS), f"project.urls.{label} = {url!r} is a placeholder"


def test_classifiers_and_keywords_describe_the_package():
    classifiers = PROJECT.get("classifiers", [])
    assert classifiers, "project.classifiers is empty"
    for c in classifiers:
        parts = c.split(" :: ")
        assert len(parts) >= 2 and all(p.strip() == p and p for p in parts), f"malformed classifier {c!r}"
    assert not [c for c in classifiers if c.startswith("License ::")], (
        "a License :: classifier beside the SPDX project.license (PEP 639 forbids both)")
    declared = SpecifierSet(PROJECT["requires-python"])
    for c in classifiers:
        version = c.removeprefix("Programming Language :: Python :: ")
        if version != c and version[:1].isdigit() and "." in version:
            assert version in declared, f"classifier {c!r} is outside requires-python {declared}"
    assert ("Typing :: Typed" in classifiers) == (PACKAGE / "py.typed").is_file(), (
        "'Typing :: Typed' and python/vegaslab/py.typed go together")
    assert len(PROJECT.get("keywords", [])) >= 3, "project.keywords has fewer than 3 words"


def test_the_package_ships_its_type_information():
    """The stub of the compiled core and the PEP 561 marker sit in the package directory,
    which maturin copies into the wheel (and .gitignore does not hide them)."""
    for name in ("_core.pyi", "py.typed"):
        path = PACKAGE / name
        assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
        rel = PurePosixPath(path.relative_to(ROOT).as_posix())
        assert not any(_ignored(rel, p) for p in _gitignore_patterns()), f"{rel} is ignored by .gitignore"


def _release_profiles() -> tuple[dict, dict]:
    profiles = CARGO.get("profile", {})
    return profiles.get("release", {}), profiles.get("profiling", {})


def test_the_release_profile_that_builds_the_wheel_has_no_debug_info():
    release, _ = _release_profiles()
    profile = MATURIN.get("profile", "release")
    assert profile == "release", f"tool.maturin.profile is {profile!r}: this test checks 'release'"
    assert release.get("debug", False) in (False, 0, "none"), (
        f"[profile.release] debug = {release['debug']!r}: the wheel's extension would carry debug info")
    assert release.get("strip") in (True, "symbols"), "[profile.release] must strip the symbol table (strip = true)"


def test_a_profiling_profile_keeps_the_release_code_with_debug_info():
    release, profiling = _release_profiles()
    assert profiling.get("inherits") == "release", "[profile.profiling] must inherit release (the same code)"
    assert profiling.get("debug") not in (None, False, 0, "none"), "[profile.profiling] has no debug info"
    assert profiling.get("strip", "none") in (False, "none"), "[profile.profiling] strips the symbols perf needs"
    for key in ("lto", "codegen-units", "opt-level", "panic"):
        assert key not in profiling or profiling[key] == release.get(key), f"[profile.profiling] changes {key}"


def test_the_wheel_gets_a_manylinux_tag_checked_by_maturins_audit():
    tag = MATURIN.get("compatibility", "")
    assert tag.startswith("manylinux_2_") or tag.startswith("manylinux20"), (
        f"tool.maturin.compatibility = {tag!r}: the wheel would carry the native linux tag PyPI rejects")
    assert MATURIN.get("auditwheel") == "check", (
        "tool.maturin.auditwheel must be 'check': fail on a too-new symbol, never bundle a library")


def _wheel_includes() -> list[str]:
    return [g for g in map(_targets_wheel, MATURIN.get("include", [])) if g]


def test_the_wheel_includes_every_doc_inside_the_package():
    """docs/ reaches the wheel as vegaslab/docs/: python/vegaslab/docs links to the
    repository's docs/ (one copy), and maturin's include globs, which keep a path under
    python-source relative to it, name every Markdown file and figure."""
    link = PACKAGE / "docs"
    assert link.is_dir() and link.resolve() == (ROOT / "docs").resolve(), (
        "python/vegaslab/docs must lead to the repository's docs/")
    source = ROOT / MATURIN["python-source"]
    includes = _wheel_includes()
    docs = sorted(p for p in (ROOT / "docs").rglob("*") if p.is_file() and p.suffix in (".md", ".png"))
    assert [p for p in docs if p.suffix == ".md"], "docs/ has no Markdown file"
    for doc in docs:
        in_package = PurePosixPath((link / doc.relative_to(ROOT / "docs")).relative_to(ROOT).as_posix())
        # A glob's * stops at "/", as in maturin: same number of parts, each matched.
        assert any(len(in_package.parts) == len(PurePosixPath(g).parts) and in_package.match(g) for g in includes), (
            f"{doc.relative_to(ROOT)} is not in the wheel: no include glob matches {in_package}")
    for g in includes:
        assert PurePosixPath(g).is_relative_to(PurePosixPath(source.relative_to(ROOT).as_posix())), (
            f"include {g!r} is outside python-source: it would land at the top of site-packages")


def test_the_wheel_contents_include_the_catalogs_studies_and_benchmark():
    """The catalog directory, with its studies/ and bench/ subdirectories, is inside the
    package directory maturin copies, and neither .gitignore nor tool.maturin.exclude drops it."""
    data = PACKAGE / catalog.PACKAGE_DATA
    excludes = [g for g in map(_targets_wheel, MATURIN.get("exclude", [])) if g]
    for sub in ("studies", "bench"):
        files = sorted((data / sub).glob("*.toml"))
        assert files, f"{data.relative_to(ROOT)}/{sub} has no scenario"
        for path in files:
            rel = PurePosixPath(path.relative_to(ROOT).as_posix())
            assert not any(fnmatch.fnmatch(str(rel), g) for g in excludes), f"{rel} is excluded from the wheel"
            assert not any(_ignored(rel, p) for p in _gitignore_patterns()), f"{rel} is ignored by .gitignore"


def test_make_test_builds_installs_and_runs_the_wheel():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    test_line = next(ln for ln in makefile.splitlines() if ln.startswith("test:"))
    assert "wheel-check" in test_line.split(), "`make test` does not run wheel-check"
    assert "scripts/check-wheel.sh" in makefile.split("\nwheel-check:", 1)[1].split("\n\n", 1)[0]
    script = ROOT / "scripts" / "check-wheel.sh"
    assert script.is_file()
    text = script.read_text(encoding="utf-8")
    for what in ("env -i", "--only-binary=:all:", "reproduce va-reroute", "index.html", "docs"):
        assert what in text, f"scripts/check-wheel.sh no longer does {what!r}"
