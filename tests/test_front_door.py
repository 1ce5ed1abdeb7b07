"""README.md is the front door: what vegaslab is, the two commands of its first screen (the
test command is the one CI runs), and links into docs/ that lead somewhere. Every relative link
in README.md, CHANGELOG.md, CONTRIBUTING.md and docs/*.md leads to a file, and an anchor to a
heading of it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def pages() -> list[Path]:
    return [README, ROOT / "CHANGELOG.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def _first_screen_commands() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block, "README.md: no ```sh block"
    return [line.split("#")[0].strip() for line in block[1].splitlines() if line.strip()]


def test_the_first_screen_gives_the_reproduce_and_the_test_command():
    assert _first_screen_commands() == ["make reproduce", "make test"]


def test_ci_runs_the_readmes_test_command():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [shlex.split(line) for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert shlex.split(_first_screen_commands()[1]) in commands, ".ci/run must run the README's test command"


def test_the_readme_is_a_front_door_not_a_notebook():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; details belong in docs/"


# ---------------------------------------------------------------------- links


_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    h = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", h).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    fenced, out = False, set()
    for line in path.read_text(encoding="utf-8").splitlines():
        fenced ^= line.startswith("```")
        if line.startswith("#") and not fenced:
            out.add(_slug(line.lstrip("#")))
    return out


def link_problems(pages: list[Path], root: Path = ROOT) -> list[str]:
    problems = []
    for page in pages:
        text = FENCED.sub("", page.read_text(encoding="utf-8"))
        for m in _LINK.finditer(text):
            target = m[1] or m[2]
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto: not checked here
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(root)}: ({target})"
            if not dest.exists():
                problems.append(f"{where}: {path} does not exist")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                problems.append(f"{where}: {dest.relative_to(root)} has no heading #{anchor}")
    return problems


FENCED = re.compile(r"^```.*?^```", re.S | re.M)


def test_every_relative_link_in_the_readme_changelog_contributing_and_docs_resolves():
    problems = link_problems(pages())
    assert not problems, "\n".join(problems)


def test_the_link_check_names_a_missing_file_and_a_missing_anchor(tmp_path):
    # Pages under guide/, not docs/: tests/test_docs.py reads every `docs/<page>.md` in the
    # repository as a reference to one of ours.
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "a.md").write_text("# A page\n\n## Some section\n")
    (tmp_path / "README.md").write_text("[ok](guide/a.md#some-section) [gone](guide/b.md) [bad](guide/a.md#nope)\n"
                                        "![fig](guide/fig.png) [web](https://example.org/x)\n")
    assert link_problems([tmp_path / "README.md"], tmp_path) == [
        "README.md: (guide/b.md): guide/b.md does not exist",
        "README.md: (guide/a.md#nope): guide/a.md has no heading #nope",
        "README.md: (guide/fig.png): guide/fig.png does not exist"]
