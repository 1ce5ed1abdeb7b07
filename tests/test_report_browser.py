"""The HTML report in a real browser: headless Chromium (Debian's `chromium`) loads index.html,
the page's own script counts the images that decoded, and the dumped DOM must show every image
loaded and, for every experiment, its published-vs-ours table and its verdict list. A screenshot
is saved as tests/artifacts/report.png.

Without Chromium the test is skipped, unless VEGASLAB_REQUIRE_CHROMIUM=1 (set by `make test`,
which installs it with scripts/install-chromium.sh first): then it fails."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(__file__).parent / "artifacts"
ENTRIES = ["va-reroute", "va-file"]


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("VEGASLAB_REQUIRE_CHROMIUM") == "1":
        pytest.fail("chromium is not installed and VEGASLAB_REQUIRE_CHROMIUM=1: run scripts/install-chromium.sh")
    pytest.skip("chromium is not installed (scripts/install-chromium.sh); set VEGASLAB_REQUIRE_CHROMIUM=1 to require it")


def _browser(exe: str, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
           "--disable-dev-shm-usage", f"--user-data-dir={tmp / 'chromium-profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


class _Dom(HTMLParser):
    """Just enough of the DOM: body attributes, images, and per experiment section its tables
    and verdict items."""

    def __init__(self) -> None:
        super().__init__()
        self.body: dict[str, str] = {}
        self.imgs: list[dict[str, str]] = []
        self.sections: dict[str, dict[str, int]] = {}
        self.external: list[str] = []
        self._section: str | None = None
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        for key in ("src", "href"):
            if a.get(key, "").startswith(("http:", "https:", "//")):
                self.external.append(a[key])
        if tag == "body":
            self.body = a
        if tag == "section":
            if "experiment" in a.get("class", "").split():
                self._section = a.get("data-entry", "?")
                self._depth = 0
                self.sections[self._section] = {"comparison": 0, "verdicts": 0, "verdict": 0, "img": 0}
            elif self._section:
                self._depth += 1
        if tag == "img":
            self.imgs.append(a)
        if self._section:
            s = self.sections[self._section]
            classes = a.get("class", "").split()
            if tag == "table" and "comparison" in classes:
                s["comparison"] += 1
            if tag == "ul" and "verdicts" in classes:
                s["verdicts"] += 1
            if tag == "li" and "verdict" in classes:
                s["verdict"] += 1
            if tag == "img":
                s["img"] += 1

    def handle_endtag(self, tag):
        if tag == "section" and self._section:
            if self._depth:
                self._depth -= 1
            else:
                self._section = None


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    pytest.importorskip("vegaslab._core")
    from vegaslab import catalog

    out = tmp_path_factory.mktemp("report")
    catalog.reproduce(ENTRIES, out, directory=catalog.builtin_dir(), quick=True, jobs=2, echo=None)
    return out


def test_report_loads_in_chromium_with_every_image_table_and_verdict(report_dir, tmp_path):
    exe = _chromium()
    page = report_dir / "index.html"
    url = page.resolve().as_uri()

    proc = _browser(exe, tmp_path, "--virtual-time-budget=10000", "--dump-dom", url)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = _Dom()
    dom.feed(proc.stdout)

    # the page loaded and its script ran after the load event
    assert dom.body.get("data-report-ready") == "1", proc.stdout[:500]
    n_img = len(dom.imgs)
    assert n_img >= 4
    assert dom.body.get("data-images-total") == str(n_img)
    assert dom.body.get("data-images-loaded") == str(n_img), "some images did not decode in the browser"
    assert dom.body.get("data-images-broken") == "0"
    assert not dom.external, f"the report must not load anything from the network: {dom.external}"

    # every image is an embedded PNG that decodes
    for img in dom.imgs:
        src = img["src"]
        assert src.startswith("data:image/png;base64,"), src[:60]
        data = base64.b64decode(src.split(",", 1)[1], validate=True)
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000

    # every experiment has its table and its verdicts
    assert set(dom.sections) == set(ENTRIES)
    for entry, s in dom.sections.items():
        assert s["comparison"] == 1, (entry, s)
        assert s["verdicts"] == 1 and s["verdict"] >= 1, (entry, s)
        assert s["img"] >= 1, (entry, s)

    # the screenshot, kept as an artefact to look at
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    if shot.exists():
        shot.unlink()
    proc = _browser(exe, tmp_path, "--virtual-time-budget=10000", "--hide-scrollbars", f"--screenshot={shot}",
                    "--window-size=1280,4000", url)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
