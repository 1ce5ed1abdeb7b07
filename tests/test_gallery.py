"""The output gallery (scripts/gallery.py): every kind of figure on one page, loaded in headless
Chromium as a reader would see it. The page and its screenshot stay in tests/artifacts/gallery/
for a person to look at (`make gallery` writes the same into out/gallery/).

Without Chromium the browser test is skipped, unless VEGASLAB_REQUIRE_CHROMIUM=1."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts" / "gallery"


def _load_gallery():
    spec = importlib.util.spec_from_file_location("gallery", ROOT / "scripts" / "gallery.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gallery():
    pytest.importorskip("vegaslab._core")
    module = _load_gallery()
    return module, module.build(ARTIFACTS)


def _chromium(module) -> str:
    exe = module.chromium()
    if exe:
        return exe
    if os.environ.get("VEGASLAB_REQUIRE_CHROMIUM") == "1":
        pytest.fail("chromium is not installed and VEGASLAB_REQUIRE_CHROMIUM=1: run scripts/install-chromium.sh")
    pytest.skip("chromium is not installed (scripts/install-chromium.sh)")


def test_the_gallery_shows_every_kind_of_figure(gallery):
    _module, page = gallery
    text = page.read_text(encoding="utf-8")
    kinds = re.findall(r'<figure data-kind="(\w+)"', text)
    assert kinds.count("run") >= 8 and kinds.count("report") == 3 and kinds.count("sweep") == 2
    assert "not drawn" not in text
    assert "(throughput)" in text and "(bar)" in text and "(line)" in text
    assert any(src.endswith(".svg") for src in re.findall(r'<img src="([^"]+)"', text))


def test_every_figure_of_the_gallery_decodes_in_chromium_and_the_page_is_screenshot(gallery):
    module, page = gallery
    exe = _chromium(module)
    proc = module.browser(exe, ARTIFACTS / "chromium-profile", "--virtual-time-budget=10000", "--dump-dom",
                          page.resolve().as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", proc.stdout).group(1)
    total = int(re.search(r'data-images-total="(\d+)"', body).group(1))
    loaded = int(re.search(r'data-images-loaded="(\d+)"', body).group(1))
    assert total >= 13 and loaded == total
    shot = module.screenshot(page, ARTIFACTS / "gallery.png")
    from PIL import Image

    width, height = Image.open(shot).size
    assert width == 1400 and 2000 < height < 20000  # the whole page, trimmed of the white below
