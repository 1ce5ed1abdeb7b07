"""The output gallery: one HTML page with every kind of figure vegaslab draws, to be looked at
in a browser (docs/cli.md, "What `vegaslab run` writes"; docs/catalog-format.md, "Figures").

- run figures (:mod:`vegaslab.plots`): cwnd, throughput and queue of va-reroute (a delay change),
  of a scenario with a link failure and a flow that starts late and stops early, a RED queue
  (wf-net1-red, its average and thresholds), ten flows of two algorithms (one legend entry per
  algorithm), and one figure as SVG;
- report figures (:mod:`vegaslab.report.figures`): a time-series figure (va-reroute's
  throughput, with the paper's levels), a bar figure (va-file's completion time) and a line
  figure (va-buffer's completion time against the buffer);
- sweep figures: :meth:`vegaslab.sweeps.results.SweepResults.plot` of a small sweep.

Usage: ``python scripts/gallery.py [OUT_DIR]`` (default ``out/gallery``; ``make gallery``) writes
``OUT_DIR/index.html`` with its figures beside it and, where Chromium is installed, a screenshot
of the page, ``OUT_DIR/gallery.png``. ``tests/test_gallery.py`` builds it and loads it in
Chromium.
"""

from __future__ import annotations

import base64
import html
import shutil
import subprocess
import sys
from pathlib import Path

import vegaslab
from vegaslab import plots
from vegaslab.report.figures import render_figures
from vegaslab.study import catalog
from vegaslab.study.claims import RunSet

#: A link failure, a delay change, a flow that starts late and stops early, a RED bottleneck.
EVENTFUL = Path(__file__).resolve().parents[1] / "examples" / "figure-events.toml"

#: Ten flows of two algorithms: the legend has one entry per algorithm.
MANY_FLOWS = """
[meta]
title = "Gallery: ten flows, Reno and Vegas, on a dumbbell"

[run]
duration = "20s"

[dumbbell]
pairs = 10
access = { bandwidth = "10Mbps", delay = "2ms" }
bottleneck = { bandwidth = "5Mbps", delay = "20ms" }

[[flows]]
pairs = "1-5"
cc = "reno"

[[flows]]
pairs = "6-10"
cc = "vegas"
start = "5s"

[monitor]
cwnd = true
throughput = true
"""

#: A small sweep: two flows over a buffer range, three seeds (random packet errors, so the seeds
#: differ).
SWEEP = """
[meta]
id = "gallery-sweep"
title = "Gallery sweep: Vegas against Reno over the bottleneck buffer"

[run]
duration = "8s"

[[links]]
endpoints = ["S1", "R1"]
bandwidth = "10Mbps"
delay = "2ms"

[[links]]
endpoints = ["R1", "D1"]
bandwidth = "1Mbps"
delay = "20ms"
error_rate = 0.002
queue = { kind = "droptail", limit = 10 }

[[flows]]
name = "vegas"
from = "S1"
to = "D1"
cc = "vegas"

[[flows]]
name = "reno"
from = "S1"
to = "D1"
cc = "reno"

[sweep]
seeds = 3

[[sweep.axis]]
name = "buffer"
path = "links[1].queue.limit"
values = [5, 10, 20, 40]
"""

#: The catalog entries and figure kinds the report part shows: (entry, figure kind, metric or None).
REPORT_FIGURES = (("va-reroute", "throughput", None), ("va-file", "bar", "f1.completion_time_s"),
                  ("va-buffer", "line", "f1.completion_time_s"))


def _scenario_file(out: Path, name: str, text: str) -> Path:
    """``text`` as ``out/scenarios/<name>.toml``: run from a file, as ``vegaslab run`` does, so the
    figures carry its ``[meta] title``."""
    path = out / "scenarios" / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _run_figures(out: Path) -> list[tuple[str, str, str]]:
    """(section, caption, file) of the run figures."""
    shown: list[tuple[str, str, str]] = []
    reroute = vegaslab.run("va-reroute")
    for path in plots.plot_all(reroute, out / "run-va-reroute", processes=1):
        shown.append(("run", f"va-reroute: {path.stem} (a delay change at 20 s)", path.relative_to(out).as_posix()))
    eventful = vegaslab.run(EVENTFUL)
    for path in plots.plot_all(eventful, out / "run-events", processes=1):
        shown.append(("run", f"link failure, delay change, late flow, RED: {path.stem}",
                      path.relative_to(out).as_posix()))
    red = vegaslab.run("wf-net1-red", overrides=["run.duration=30s", 'monitor.queues=["R1->R2"]'])
    path = plots.plot_queues(red, out / "run-red" / "queue.png")
    shown.append(("run", "wf-net1-red (30 s): RED queue, its average and thresholds", path.relative_to(out).as_posix()))
    many = vegaslab.run(_scenario_file(out, "many-flows", MANY_FLOWS))
    for path in plots.plot_all(many, out / "run-many", processes=1, format="svg")[:2]:
        shown.append(("run", f"ten flows, two algorithms (SVG): {path.stem}", path.relative_to(out).as_posix()))
    return shown


def _entry_runs(entry) -> RunSet:
    """Every run of ``entry`` with its first seed, in-process."""
    seed = entry.seeds()[0]
    runs = {v.name: [vegaslab.run(v.scenario_path, overrides=list(v.overrides), seed=seed)] for v in entry.runs()}
    return RunSet(runs=runs)


def _report_figures(out: Path) -> list[tuple[str, str, str]]:
    shown: list[tuple[str, str, str]] = []
    for entry_id, kind, metric in REPORT_FIGURES:
        entry = catalog.load_entry(entry_id)
        for fig in render_figures(entry, _entry_runs(entry)):
            if fig.get("kind") != kind or (metric and metric not in str(fig.get("title", "")) and
                                           metric != _spec_metric(entry, fig)):
                continue
            if "error" in fig:
                raise RuntimeError(f"{entry_id}: {fig['title']}: {fig['error']}")
            name = f"report-{entry_id}-{kind}.png"
            (out / name).write_bytes(base64.b64decode(fig["png"]))
            shown.append(("report", f"{entry_id}: {fig['title']} ({kind})", name, kind == "throughput"))
            break
    return shown


def _spec_metric(entry, fig: dict) -> str | None:
    for spec in entry.figures:
        if (spec.get("title") or "") == fig.get("title"):
            return spec.get("metric")
    return None


def _sweep_figures(out: Path) -> list[tuple[str, str, str]]:
    store = out / "sweep-store"
    res = vegaslab.sweep(_scenario_file(out, "sweep", SWEEP), out=store, scheduler="synchronous")
    shown = []
    for metric, flow in (("throughput_bps", "vegas"), ("jain_throughput", None)):
        try:
            ax = res.plot(metric, "buffer", flow=flow)
        except Exception as exc:  # noqa: BLE001 - a metric the sweep's plot does not know: say so on the page
            shown.append(("sweep", f"SweepResults.plot({metric!r}, 'buffer'): {type(exc).__name__}: {exc}", ""))
            continue
        name = f"sweep-{metric}-vs-buffer.png"
        ax.figure.savefig(out / name)
        call = f"SweepResults.plot({metric!r}, 'buffer'{', flow=' + repr(flow) if flow else ''})"
        shown.append(("sweep", call, name))
    return shown


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>vegaslab figure gallery</title>
<style>
body {{ font-family: sans-serif; margin: 16px; background: #fff; }}
h2 {{ border-bottom: 1px solid #ccc; margin-top: 24px; }}
.grid {{ display: grid; grid-template-columns: repeat(2, 1fr); gap: 14px; }}
figure {{ margin: 0; border: 1px solid #ddd; padding: 6px; }}
figure.wide {{ grid-column: 1 / -1; }}
figure img {{ width: 100%; height: auto; display: block; }}
figcaption {{ font-size: 13px; color: #333; margin-top: 4px; }}
.error {{ color: #b00; }}
</style></head>
<body>
<h1>vegaslab figure gallery</h1>
{sections}
<script>
window.addEventListener("load", () => {{
  const imgs = [...document.images];
  document.body.dataset.imagesTotal = imgs.length;
  document.body.dataset.imagesLoaded = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
  document.body.dataset.ready = "1";
}});
</script>
</body></html>
"""

TITLES = {"run": "Run figures (vegaslab run, vegaslab.plots)", "report": "Report figures (vegaslab reproduce)",
          "sweep": "Sweep figures (SweepResults.plot, vegaslab sweep --plot)"}


def build(out: str | Path) -> Path:
    """Draw every figure kind into ``out`` and write ``out/index.html``; returns its path."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shown = _run_figures(out) + _report_figures(out) + _sweep_figures(out)
    sections = []
    for key, title in TITLES.items():
        items = []
        for _k, caption, src, *wide in (s for s in shown if s[0] == key):
            body = (f'<img src="{html.escape(src)}" alt="{html.escape(caption)}">' if src
                    else '<p class="error">not drawn</p>')
            cls = ' class="wide"' if wide and wide[0] else ""
            items.append(f'<figure data-kind="{key}"{cls}>{body}'
                         f'<figcaption>{html.escape(caption)}</figcaption></figure>')
        sections.append(f'<section id="{key}"><h2>{html.escape(title)}</h2><div class="grid">{"".join(items)}</div>'
                        "</section>")
    page = out / "index.html"
    page.write_text(PAGE.format(sections="\n".join(sections)), encoding="utf-8")
    return page


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def browser(exe: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    """Headless Chromium with ``args`` (as tests/test_report_browser.py runs it)."""
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
           "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def screenshot(page: Path, png: Path, *, width: int = 1400, height: int = 4200) -> Path:
    """A screenshot of ``page`` in headless Chromium, ``width`` x ``height`` pixels."""
    exe = chromium()
    if exe is None:
        raise RuntimeError("chromium is not installed (scripts/install-chromium.sh)")
    proc = browser(exe, png.parent / "chromium-profile", f"--window-size={width},{height}",
                   "--virtual-time-budget=10000", f"--screenshot={png}", page.resolve().as_uri())
    if proc.returncode != 0 or not png.exists():
        raise RuntimeError(f"chromium could not take the screenshot: {proc.stderr[-1000:]}")
    shutil.rmtree(png.parent / "chromium-profile", ignore_errors=True)
    _trim_bottom(png)
    return png


def _trim_bottom(png: Path, margin: int = 16) -> None:
    """Cut the white below the page's last content off the screenshot."""
    import numpy as np
    from PIL import Image

    image = Image.open(png)
    ink = np.flatnonzero((np.asarray(image.convert("L")) < 250).any(axis=1))
    if len(ink) and ink[-1] + margin < image.height:
        image.crop((0, 0, image.width, int(ink[-1]) + margin)).save(png)


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path("out/gallery")
    page = build(out)
    print(f"gallery: {page}")
    if chromium():
        print(f"screenshot: {screenshot(page, out / 'gallery.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
