"""Plot decimation (vegaslab.plots.m4_indices and the figures that use it): a dense series is
reduced to what its pixel columns show, without losing a peak, a dip or a gap."""

from __future__ import annotations

import os
import re
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import vegaslab
from vegaslab import figure_marks, plots
from scenario_text import TWO_HOP


def _column_summary(columns, y):
    """Per pixel column: first, last, lowest and highest value (what M4 must preserve)."""
    out = {}
    for c in np.unique(columns):
        v = y[columns == c]
        out[int(c)] = (v[0], v[-1], v.min(), v.max())
    return out


def test_m4_keeps_the_first_last_lowest_and_highest_sample_of_every_pixel_column():
    rng = np.random.default_rng(7)
    n, width = 100_000, 300
    y = rng.normal(10.0, 1.0, n)
    y[12_345] = 1000.0  # a one-sample spike
    y[67_890] = -500.0  # and a one-sample dip
    columns = np.floor(np.linspace(0, width, n, endpoint=False)).astype(np.int64)
    keep = plots.m4_indices(columns, y)
    assert 12_345 in keep and 67_890 in keep
    assert len(keep) <= 4 * width and np.all(np.diff(keep) > 0)  # at most 4 a column, in order
    assert _column_summary(columns[keep], y[keep]) == _column_summary(columns, y)


def test_decimate_keeps_a_spike_and_the_end_points_of_a_dense_series():
    t = np.linspace(0.0, 200.0, 200_001)
    y = np.sin(t)
    y[150_000] = 50.0
    x2, y2 = plots.decimate(t, y, t / 200.0 * 800)  # 800 pixel columns
    assert len(x2) <= 4 * 801 and y2.max() == 50.0 and x2[np.argmax(y2)] == t[150_000]
    assert (x2[0], y2[0], x2[-1], y2[-1]) == (t[0], y[0], t[-1], y[-1])


@pytest.mark.parametrize("n", [0, 1, 2, 50, 3200])
def test_decimate_leaves_series_with_at_most_four_samples_per_column_untouched(n):
    rng = np.random.default_rng(n)
    x, y = np.sort(rng.random(n)) * 10, rng.random(n)
    x2, y2 = plots.decimate(x, y, np.linspace(0.0, 799.99, n))  # spread over 800 pixel columns
    assert np.array_equal(x2, x) and np.array_equal(y2, y)


def test_m4_keeps_every_gap_and_the_samples_on_both_sides_of_it():
    n = 10_000
    y = np.cos(np.arange(n) / 100.0)
    gaps = [10, 11, 5_000, 9_999]
    y[gaps] = np.nan
    columns = np.arange(n) // 100  # 100 samples a column
    keep = set(plots.m4_indices(columns, y).tolist())
    for g in gaps:
        assert g in keep  # the line stays broken there
    assert {9, 12, 4_999, 5_001, 9_998} <= keep  # and ends/resumes at the same samples


def _dark_extent(png, box):
    """Per pixel column of ``box`` (x0, y0, x1, y1): the first and last row drawn in black
    (``10**6`` and ``-1`` where nothing is)."""
    from PIL import Image

    px = np.asarray(Image.open(png).convert("L"), dtype=int)[box[1]:box[3], box[0]:box[2]]
    dark = px < 100
    rows = np.arange(dark.shape[0])[:, None]
    return np.where(dark, rows, 10**6).min(axis=0), np.where(dark, rows, -1).max(axis=0)


def _within_a_pixel(inner, outer) -> bool:
    """Whether every column of ``inner`` is drawn within the rows ``outer`` covers in the same
    column or its neighbours (the half-width of a line spills ink sideways), give or take a
    row of anti-aliasing."""
    (top_i, bottom_i), (top_o, bottom_o) = inner, outer
    top = np.minimum.reduce([top_o, np.roll(top_o, 1), np.roll(top_o, -1)])
    bottom = np.maximum.reduce([bottom_o, np.roll(bottom_o, 1), np.roll(bottom_o, -1)])
    drawn = bottom_i >= 0
    return bool(np.all(top_i[drawn] >= top[drawn] - 1) and np.all(bottom_i[drawn] <= bottom[drawn] + 1))


def test_a_decimated_figure_draws_the_same_pixels_to_within_a_pixel_and_keeps_a_spike(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    t = np.linspace(0.0, 100.0, 60_001)
    y = np.cumsum(rng.normal(0, 1, t.size))
    y[33_333] = y.max() + 200.0  # a one-sample spike, narrower than a pixel

    def draw(path):
        fig, ax = plots._figure("dense", "value")
        ax.plot(t, y, color="black", lw=1.0)
        plots._save(fig, ax, path)
        return ax

    ax = draw(tmp_path / "decimated.png")
    (line,) = ax.get_lines()
    assert len(line.get_xdata()) <= 4 * (ax.bbox.width + 1)  # what Agg was handed
    assert y[33_333] in line.get_ydata()
    monkeypatch.setattr(plots, "_decimate_lines", lambda ax: None)
    draw(tmp_path / "full.png")

    height = ax.figure.bbox.height
    x0, y0, x1, y1 = ax.bbox.extents
    box = tuple(int(v) for v in (x0 + 2, height - y1 + 2, x1 - 2, height - y0 - 2))  # inside the frame
    decimated = _dark_extent(tmp_path / "decimated.png", box)
    full = _dark_extent(tmp_path / "full.png", box)
    assert _within_a_pixel(full, decimated) and _within_a_pixel(decimated, full)
    assert decimated[0].min() == full[0].min()  # the spike reaches the same row


# ---------------------------------------------------------------------- the figures in processes

DATA = Path(__file__).parent / "data"


def _in_time(func, seconds: float = 60.0):
    """``func()``'s result, or a test failure if it has not returned within ``seconds`` (a
    parent waiting forever for a dead child would hang the test run otherwise)."""
    box: dict = {}

    def call():
        try:
            box["value"] = func()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


def _recording_pid(func):
    """``func`` that also writes the id of the process that drew the figure beside it."""

    def draw(results, path, **kwargs):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(f"{path}.pid").write_text(str(os.getpid()))
        return func(results, path, **kwargs)

    return draw


def test_figures_drawn_in_child_processes_are_byte_identical_to_figures_drawn_in_turn(res, tmp_path, monkeypatch):
    monkeypatch.setattr(plots, "FIGURES", tuple((name, _recording_pid(f), kw) for name, f, kw in plots.FIGURES))
    in_turn = plots.plot_all(res, tmp_path / "in-turn", processes=1)
    forked = _in_time(lambda: plots.plot_all(res, tmp_path / "forked", processes=3))
    assert [p.name for p in in_turn] == [p.name for p in forked] == ["cwnd.png", "throughput.png", "queue.png"]
    for a, b in zip(in_turn, forked):
        assert a.read_bytes() == b.read_bytes()
    drawn_by = {p.name: int(Path(f"{p}.pid").read_text()) for p in forked}
    # the costliest figures first to the children; the last one here
    assert drawn_by["throughput.png"] != os.getpid() and drawn_by["cwnd.png"] != os.getpid()
    assert drawn_by["throughput.png"] != drawn_by["cwnd.png"] and drawn_by["queue.png"] == os.getpid()
    assert {int(Path(f"{p}.pid").read_text()) for p in in_turn} == {os.getpid()}


def test_two_processes_draw_the_throughput_figure_in_a_child_and_the_rest_here(res, tmp_path, monkeypatch):
    monkeypatch.setattr(plots, "FIGURES", tuple((name, _recording_pid(f), kw) for name, f, kw in plots.FIGURES))
    made = _in_time(lambda: plots.plot_all(res, tmp_path, processes=2))
    drawn_by = {p.name: int(Path(f"{p}.pid").read_text()) for p in made}
    assert drawn_by == {"cwnd.png": os.getpid(), "throughput.png": drawn_by["throughput.png"], "queue.png": os.getpid()}
    assert drawn_by["throughput.png"] != os.getpid()


def _fails(results, path, **kwargs):
    raise ValueError("no samples\nto draw")


def _exits(results, path, **kwargs):
    os._exit(3)


def _killed(results, path, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.parametrize("processes", [1, 3])
def test_a_figure_that_fails_is_one_plot_error_naming_the_file_and_the_others_are_still_drawn(
        res, tmp_path, monkeypatch, processes):
    monkeypatch.setattr(plots, "FIGURES", (("throughput", _fails, {}), *plots.FIGURES[1:]))
    with pytest.raises(plots.PlotError) as info:
        _in_time(lambda: plots.plot_all(res, tmp_path, processes=processes))
    assert str(info.value) == "throughput.png: could not draw the plot: ValueError: no samples to draw"
    assert isinstance(info.value, vegaslab.VegaslabError)
    if processes > 1:
        assert "_fails" in info.value.child_traceback  # for debugging, not for the user
    else:
        assert isinstance(info.value.__cause__, ValueError)
    assert (tmp_path / "cwnd.png").is_file() and (tmp_path / "queue.png").is_file()


@pytest.mark.parametrize("func, how", [(_exits, "ended with exit status 3"),
                                       (_killed, "was killed by signal 9 (SIGKILL)")])
def test_a_child_that_dies_without_a_report_is_a_plot_error_not_a_hang(res, tmp_path, monkeypatch, func, how):
    monkeypatch.setattr(plots, "FIGURES", (("throughput", func, {}), *plots.FIGURES[1:]))
    with pytest.raises(plots.PlotError, match="^throughput.png: could not draw the plot: its process "
                                              f"{re.escape(how)} without a report$"):
        _in_time(lambda: plots.plot_all(res, tmp_path, processes=2))


def _sleeps(results, path, **kwargs):
    Path(f"{path}.pid").write_text(str(os.getpid()))
    time.sleep(120)


def test_an_error_while_the_children_draw_stops_them_before_the_block_is_left(res, tmp_path, monkeypatch):
    monkeypatch.setattr(plots, "FIGURES", (("throughput", _sleeps, {}), *plots.FIGURES[1:]))
    started = time.monotonic()
    pid_file = tmp_path / "throughput.png.pid"
    with pytest.raises(RuntimeError, match="writing the tables failed"):
        with plots.start_plots(res, tmp_path, processes=2):
            while not pid_file.exists() and time.monotonic() - started < 30:
                time.sleep(0.01)
            raise RuntimeError("writing the tables failed")
    assert time.monotonic() - started < 30
    with pytest.raises(ProcessLookupError):  # stopped and reaped, not left running
        os.kill(int(pid_file.read_text()), 0)
    assert not (tmp_path / "throughput.png").exists()


def test_start_plots_rejects_fewer_than_one_process(res, tmp_path):
    with pytest.raises(ValueError, match="processes: must be >= 1, got 0"):
        plots.start_plots(res, tmp_path, processes=0)


def _zlib_level_flag(png: Path) -> int:
    """FLEVEL of the zlib stream in the first IDAT chunk (0: zlib levels 0-1, 1: 2-5, 2: 6,
    3: 7-9)."""
    data = png.read_bytes()
    at = 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"IDAT":
            return data[at + 9] >> 6
        at += 12 + length
    raise AssertionError(f"{png}: no IDAT chunk")


def test_figures_are_encoded_with_zlibs_fastest_level_and_the_same_pixels(res, tmp_path, monkeypatch):
    from PIL import Image

    fast = plots.plot_all(res, tmp_path / "fast", processes=1)
    assert [_zlib_level_flag(p) for p in fast] == [0, 0, 0]
    from vegaslab import figure_formats

    monkeypatch.setattr(figure_formats, "PNG_OPTIONS", {"compress_level": 9})
    small = plots.plot_all(res, tmp_path / "small", processes=1)
    for a, b in zip(fast, small):
        assert np.array_equal(np.asarray(Image.open(a)), np.asarray(Image.open(b)))


# ---------------------------------------------------------------------- `vegaslab run`


@pytest.fixture
def two_hop(tmp_path) -> Path:
    pytest.importorskip("vegaslab._core")
    path = tmp_path / "two-hop.toml"
    path.write_text('[meta]\nid = "two-hop"\n\n[run]\nduration = "3s"\n' + TWO_HOP)
    return path


def test_run_into_a_pipe_prints_its_summary_once_when_a_child_draws(two_hop, tmp_path):
    # stdout to a pipe is block-buffered: a child forked with the summary still in the buffer
    # would write it again when it exits
    out = tmp_path / "out"
    code = (f"import sys; from vegaslab import cli, plots; plots.usable_processes = lambda: 3; "
            f"sys.exit(cli.main(['run', {str(two_hop)!r}, '--out', {str(out)!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("wrote ") == 1 and proc.stdout.count("two-hop  seed 1") == 1, proc.stdout
    assert sorted(p.name for p in out.glob("*.png")) == ["cwnd.png", "queue.png", "throughput.png"]


def test_run_reports_a_figure_that_cannot_be_drawn_in_one_line_and_writes_nothing(two_hop, tmp_path, monkeypatch,
                                                                                  capsys):
    from vegaslab import cli

    monkeypatch.setattr(plots, "FIGURES", (("throughput", _fails, {}), *plots.FIGURES[1:]))
    monkeypatch.setattr(plots, "usable_processes", lambda: 2)
    out = tmp_path / "out"
    assert _in_time(lambda: cli.main(["run", str(two_hop), "--out", str(out)])) == 1
    err = capsys.readouterr().err
    assert err == "vegaslab: throughput.png: could not draw the plot: ValueError: no samples to draw\n"
    assert not out.exists()


@pytest.mark.parametrize("runnable, expected", [(1, 2), (2, 1), (7, 1)])
def test_figures_are_drawn_in_as_many_processes_as_there_are_idle_cpus_and_this_one(
        tmp_path, monkeypatch, runnable, expected):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    loadavg = tmp_path / "loadavg"
    loadavg.write_text(f"1.99 1.91 1.98 {runnable}/92 16941\n")  # runnable tasks, this one included
    assert plots.usable_processes(loadavg) == expected


def test_without_a_load_figure_every_usable_cpu_counts_as_idle(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    assert plots.usable_processes(tmp_path / "missing") == 3
    (tmp_path / "garbled").write_text("not a load average")
    assert plots.usable_processes(tmp_path / "garbled") == 3


def test_when_no_process_can_be_forked_the_figures_are_drawn_here(res, tmp_path, monkeypatch):
    import multiprocessing.process

    def refuse(self):
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)
    monkeypatch.setattr(plots, "FIGURES", tuple((name, _recording_pid(f), kw) for name, f, kw in plots.FIGURES))
    made = _in_time(lambda: plots.plot_all(res, tmp_path, processes=3))
    assert [p.name for p in made] == ["cwnd.png", "throughput.png", "queue.png"]
    assert {int(Path(f"{p}.pid").read_text()) for p in made} == {os.getpid()}


def _dumbbell(pairs: int, flows: dict[str, str]):
    """A 1 s dumbbell run of `pairs` pairs with the throughput and cwnd sampled every 50 ms;
    ``flows``: pairs ("1-4") -> algorithm."""
    text = f"""
[run]
duration = "1s"
sample_interval = "50ms"
[dumbbell]
pairs = {pairs}
access = {{ bandwidth = "10Mbps", delay = "1ms" }}
bottleneck = {{ bandwidth = "20Mbps", delay = "5ms" }}
[monitor]
throughput = true
""" + "".join(f'[[flows]]\npairs = "{which}"\ncc = "{cc}"\n' for which, cc in flows.items())
    return vegaslab.run(text, overrides=["monitor.cwnd=true"])


def _dumbbell_throughput(pairs: int):
    """A 1 s dumbbell run of `pairs` Reno flows (:func:`_dumbbell`)."""
    return _dumbbell(pairs, {f"1-{pairs}": "reno"})


@pytest.mark.parametrize("pairs, dashed", [(plots.MAX_SSTHRESH_LINES, True), (plots.MAX_SSTHRESH_LINES + 1, False)])
def test_the_cwnd_figure_leaves_out_the_ssthresh_lines_beyond_so_many_flows(pairs, dashed, tmp_path, monkeypatch):
    drawn = []
    monkeypatch.setattr(plots, "_save", lambda fig, ax, path, handles=None: drawn.extend(ax.get_lines()))
    plots.plot_cwnd(_dumbbell_throughput(pairs), tmp_path / "cwnd.png", ssthresh=True)
    styles = [line.get_linestyle() for line in drawn]
    assert styles.count("-") == pairs and styles.count("--") == (pairs if dashed else 0)


@pytest.mark.parametrize("pairs, thin", [(plots.MAX_PER_BIN_LINES, True), (plots.MAX_PER_BIN_LINES + 1, False)])
def test_the_throughput_figure_leaves_out_per_bin_lines_beyond_so_many_flows(pairs, thin):
    # Each flow's running mean (thick) always; its windowed line (thin) only up to
    # MAX_PER_BIN_LINES flows, where they do not yet cover each other.
    fig, ax, n = plots.throughput_axes(_dumbbell_throughput(pairs))
    widths = [line.get_linewidth() for line in ax.get_lines()]
    assert n == pairs
    assert widths.count(2.2) == pairs and widths.count(0.9) == (pairs if thin else 0)
    assert ("running mean per flow" in ax.get_title(loc="left")) is not thin


# ---------------------------------------------------------------------- the figures' data


def _series_labels(ax) -> list[str]:
    """The labels of the lines that draw series (event marks are labelled ``_...``)."""
    return [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]


MONITORS = ["monitor.cwnd=true", "monitor.throughput=true", "monitor.all_queues=true"]


@pytest.fixture
def two_flows(tmp_path) -> Path:
    pytest.importorskip("vegaslab._core")
    path = tmp_path / "two-flows.toml"
    path.write_text('[meta]\nid = "two-flows"\n\n[run]\nduration = "3s"\n' + TWO_HOP
                    + '\n[[flows]]\nname = "f2"\nfrom = "S1"\nto = "D1"\ncc = "reno"\nstart = "0.5s"\n')
    return path


def test_figures_drawn_from_the_cores_columns_are_byte_identical_to_figures_drawn_from_frames(two_flows, tmp_path):
    columns = vegaslab.run(two_flows, overrides=MONITORS)
    frames = vegaslab.run(two_flows, overrides=MONITORS)
    for table in ("flows", "series_flows", "series_queues"):
        getattr(frames, table)  # read: from now on the frames are the tables
    assert set(frames._frames) >= {"flows", "series_flows", "series_queues"}
    assert not {"flows", "series_flows", "series_queues"} & set(columns._frames)
    drawn = plots.plot_all(columns, tmp_path / "columns", processes=1)
    again = plots.plot_all(frames, tmp_path / "frames", processes=1)
    assert [p.name for p in drawn] == [p.name for p in again] == ["cwnd.png", "throughput.png", "queue.png"]
    for a, b in zip(drawn, again):
        assert a.read_bytes() == b.read_bytes(), a.name
        # no date (which two saves in one second would share) and no random ids
        assert b"CreationDate" not in a.read_bytes() and b"<dc:date>" not in a.read_bytes(), a.name


def test_a_figure_shows_a_series_frame_the_user_replaced(two_flows, tmp_path, monkeypatch):
    res = vegaslab.run(two_flows, overrides=MONITORS)
    s = res.series_flows
    res.series_flows = s[s["flow"] == "f2"]
    labels = []
    monkeypatch.setattr(plots, "_save", lambda fig, ax, path, handles=None: labels.extend(_series_labels(ax)))
    plots.plot_cwnd(res, tmp_path / "cwnd.png")
    assert labels == ["f2"]


def test_a_series_without_a_sample_of_its_value_draws_no_figure(two_flows, tmp_path):
    res = vegaslab.run(two_flows, overrides=["monitor.cwnd=true", "monitor.throughput=false", "monitor.all_queues=true"])
    assert plots.plot_throughput(res, tmp_path / "throughput.png") is None
    assert plots.plot_cwnd(res, tmp_path / "cwnd.png") == tmp_path / "cwnd.png"


def test_run_help_names_the_flow_count_beyond_which_lines_are_left_out(capsys):
    from vegaslab import cli

    assert cli.main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert plots.MAX_SSTHRESH_LINES == plots.MAX_PER_BIN_LINES
    assert f"With more than {plots.MAX_SSTHRESH_LINES} flows, the cwnd plot leaves out ssthresh" in text


def test_figures_keep_flows_named_by_integers_and_draw_a_results_set(two_flows, tmp_path, monkeypatch):
    res = vegaslab.run(two_flows, overrides=MONITORS)
    s = res.series_flows
    res.series_flows = s.assign(flow=s["flow"].map({"f1": 2**53, "f2": 2**53 + 1}))
    labels = []
    monkeypatch.setattr(plots, "_save", lambda fig, ax, path, handles=None: labels.append(_series_labels(ax)))
    plots.plot_cwnd(res, tmp_path / "cwnd.png")
    assert labels[-1] == [str(2**53), str(2**53 + 1)]
    both = vegaslab.concat([res, vegaslab.run(two_flows, overrides=MONITORS)], keys=["a", "b"])
    plots.plot_cwnd(both, tmp_path / "set.png")
    plots.plot_queues(both, tmp_path / "set-queue.png")
    assert labels[-2] and labels[-1]


# ---------------------------------------------------------------------- what the figures show

#: A link failure, a delay change, a flow that starts late and stops early, a RED bottleneck.
EVENTFUL = Path(__file__).resolve().parents[1] / "examples" / "figure-events.toml"


@pytest.fixture
def eventful() -> Path:
    pytest.importorskip("vegaslab._core")
    return EVENTFUL


def _drawn(monkeypatch) -> list:
    """``(figure, axes)`` of every figure saved from now on (laid out and written as usual)."""
    drawn, save = [], plots._save

    def spy(fig, ax, path, handles=None):
        out = save(fig, ax, path, handles)
        drawn.append((fig, ax))
        return out

    monkeypatch.setattr(plots, "_save", spy)
    return drawn


def _bbox(artist):
    return artist.get_window_extent(artist.figure.canvas.get_renderer())


@pytest.fixture
def eventful_figures(eventful, tmp_path, monkeypatch):
    drawn = _drawn(monkeypatch)
    res = vegaslab.run(eventful)
    made = plots.plot_all(res, tmp_path / "figures", processes=1)
    assert [p.name for p in made] == ["cwnd.png", "throughput.png", "queue.png"]
    figures = {ax.get_ylabel().split()[0]: (fig, ax) for fig, ax in drawn}
    figures["results"] = res
    return figures


def test_every_figure_is_titled_with_the_scenarios_meta_title_and_labels_its_axes_with_units(eventful_figures):
    units = {"cwnd": "cwnd (packets)", "throughput": "throughput (kbit/s)", "queue": "queue length (packets)"}
    for kind in units:
        fig, ax = eventful_figures[kind]
        assert fig.get_suptitle() == "A link failure (3-5 s), a delay change (8 s) and a late flow over RED", kind
        assert ax.get_xlabel() == "time (s)" and ax.get_ylabel() == units[kind]
        assert ax.get_title(loc="left").endswith("seed 1")


def test_a_scenario_without_a_title_is_titled_with_its_file_name(two_hop, tmp_path, monkeypatch):
    drawn = _drawn(monkeypatch)
    plots.plot_cwnd(vegaslab.run(two_hop, overrides=MONITORS), tmp_path / "cwnd.png")
    assert drawn[0][0].get_suptitle() == "two-hop"


def test_the_legend_sits_beside_the_axes_and_covers_no_data(eventful_figures):
    for kind in ("cwnd", "throughput", "queue"):
        fig, ax = eventful_figures[kind]
        legend = ax.get_legend()
        assert legend is not None and legend.get_texts(), kind
        assert _bbox(legend).x0 >= _bbox(ax).x1 - 0.5, kind  # right of the plotting area
        assert _bbox(legend).x1 <= fig.bbox.x1 + 0.5, kind  # and inside the figure


def test_legend_entries_name_each_flow_with_its_algorithm_as_the_papers_spell_it(eventful_figures):
    _fig, ax = eventful_figures["cwnd"]
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "f1 (Vegas-A)" in texts and "f2 (NewReno)" in texts


def test_a_link_failure_is_shaded_and_a_delay_change_is_a_vertical_line_on_every_figure(eventful_figures):
    for kind in ("cwnd", "throughput", "queue"):
        _fig, ax = eventful_figures[kind]
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        assert "R1-D1 down" in texts and "S1-R1 delay 60 ms at 8 s" in texts, kind
        spans = [p for p in ax.patches if p.get_label() == "R1-D1 down"]
        assert len(spans) == 1
        xs = spans[0].get_patch_transform().transform(spans[0].get_path().vertices)[:, 0]  # in data x
        assert (min(xs), max(xs)) == (3.0, 5.0)
        (delay,) = [line for line in ax.get_lines() if line.get_label() == "S1-R1 delay 60 ms at 8 s"]
        assert list(delay.get_xdata()) == [8.0, 8.0] and delay.get_linestyle() == "-."


def test_a_flows_start_and_end_are_marked_on_the_top_edge(eventful_figures):
    _fig, ax = eventful_figures["throughput"]
    marks = {line.get_label(): line for line in ax.get_lines() if line.get_label() in ("_f2 starts", "_f2 ends")}
    assert set(marks) == {"_f2 starts", "_f2 ends"}
    assert marks["_f2 starts"].get_xdata()[0] == 1.0 and marks["_f2 starts"].get_marker() == "v"
    flows = eventful_figures["results"].flows.set_index("flow")
    assert marks["_f2 ends"].get_xdata()[0] == flows.loc["f2", "end_s"] and marks["_f2 ends"].get_marker() == "^"
    assert not any(line.get_label() == "_f1 starts" for line in ax.get_lines())  # from 0: nothing to mark


def test_the_queue_figure_draws_reds_average_and_its_two_thresholds(eventful_figures):
    _fig, ax = eventful_figures["queue"]
    labels = {line.get_label(): line for line in ax.get_lines()}
    assert labels["R1->D1 RED average"].get_linestyle() == "--"
    assert list(labels["R1->D1 RED min threshold"].get_ydata()) == [5.0, 5.0]
    assert list(labels["R1->D1 RED max threshold"].get_ydata()) == [15.0, 15.0]
    assert np.nanmax(labels["R1->D1 RED average"].get_ydata()) > 0


def test_the_throughput_figure_draws_the_windowed_mean_beside_the_running_mean(eventful_figures):
    _fig, ax = eventful_figures["throughput"]
    lines = {line.get_label(): line for line in ax.get_lines()}
    windowed, running = lines["f1 (1 s mean)"], lines["f1 (running mean)"]
    assert windowed.get_linewidth() < running.get_linewidth()
    t, y = (np.asarray(v) for v in windowed.get_data())
    down = (t > 4.0) & (t <= 5.0)  # a second into the failure the 1 s window holds only the outage
    assert np.all(y[down] == 0)
    assert np.all(np.asarray(running.get_ydata())[(t > 4.0) & (t <= 5.0)] > 0)  # the running mean hides it


def test_the_windowed_mean_averages_the_trailing_window_of_bins():
    t = np.arange(1, 11) * 0.1
    y = np.array([0, 0, 0, 0, 10, 10, 10, 10, 10, 10], dtype=float)
    got = plots.windowed_mean(t, y, 0.3)  # three bins
    assert got.tolist() == pytest.approx([0, 0, 0, 0, 10 / 3, 20 / 3, 10, 10, 10, 10])
    assert plots.windowed_mean(t, y, 0.05).tolist() == y.tolist()  # shorter than a bin: the bins


def test_a_bin_without_a_value_is_left_out_of_the_windowed_mean_not_spread_to_the_rest():
    t = np.arange(1, 7) * 0.1
    got = plots.windowed_mean(t, np.array([1, np.nan, 3, 3, 3, 3], dtype=float), 0.2)
    assert got.tolist() == pytest.approx([1, 1, 3, 3, 3, 3])
    assert np.isnan(plots.windowed_mean(t[:2], np.array([np.nan, np.nan]), 0.2)).all()


@pytest.mark.parametrize("fmt, magic", [("pdf", b"%PDF-"), ("svg", b"<svg")])
def test_figures_are_written_as_pdf_or_svg_and_the_same_bytes_each_time(eventful, tmp_path, fmt, magic):
    res = vegaslab.run(eventful)
    made = plots.plot_all(res, tmp_path / "a", processes=1, format=fmt)
    again = plots.plot_all(res, tmp_path / "b", processes=1, format=fmt)
    assert [p.name for p in made] == [f"cwnd.{fmt}", f"throughput.{fmt}", f"queue.{fmt}"]
    for a, b in zip(made, again):
        head = a.read_bytes()[:400]
        assert head.startswith(magic) if fmt == "pdf" else magic in head, a.name
        assert a.read_bytes() == b.read_bytes(), a.name


def test_an_unknown_format_or_a_window_not_above_zero_is_refused(res, tmp_path):
    with pytest.raises(ValueError, match="format: must be one of png, pdf, svg, got 'jpg'"):
        plots.plot_all(res, tmp_path, format="jpg")
    with pytest.raises(ValueError, match="window_s: the throughput window must be > 0 seconds, got 0"):
        plots.plot_all(res, tmp_path, window_s=0)


def test_run_writes_its_plots_in_the_format_asked_with_the_window_asked(eventful, tmp_path, monkeypatch):
    from vegaslab import cli

    monkeypatch.setattr(plots, "usable_processes", lambda: 1)
    windows = []
    draw = plots.plot_throughput
    def throughput(results, path, **kwargs):
        windows.append(kwargs)
        return draw(results, path, **kwargs)

    monkeypatch.setattr(plots, "FIGURES", (("throughput", throughput, {}), *plots.FIGURES[1:]))
    out = tmp_path / "out"
    args = ["run", str(eventful), "--out", str(out), "--format", "svg", "--throughput-window", "2.5", "-q"]
    assert cli.main(args) == 0
    assert sorted(p.name for p in out.glob("*.svg")) == ["cwnd.svg", "queue.svg", "throughput.svg"]
    assert not list(out.glob("*.png")) and windows == [{"window_s": 2.5}]


def test_beyond_so_many_flows_the_legend_has_one_entry_per_algorithm(tmp_path, monkeypatch):
    pairs = plots.MAX_FLOW_ENTRIES + 2
    drawn = _drawn(monkeypatch)
    plots.plot_cwnd(_dumbbell(pairs, {"1-4": "reno", f"5-{pairs}": "vegas"}), tmp_path / "cwnd.png")
    _fig, ax = drawn[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Reno: 4 flows", f"Vegas: {pairs - 4} flows"]
    colors = {line.get_color() for line in ax.get_lines() if not line.get_label().startswith("_")}
    assert len(colors) == 2


def test_events_after_the_runs_end_are_not_marked(eventful, tmp_path, monkeypatch):
    drawn = _drawn(monkeypatch)
    plots.plot_cwnd(vegaslab.run(eventful, overrides=["run.duration=4s"]), tmp_path / "cwnd.png")
    _fig, ax = drawn[0]
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "R1-D1 down" in texts and not any("delay" in t for t in texts)  # the change at 8 s is after 4 s
    (span,) = [p for p in ax.patches if p.get_label() == "R1-D1 down"]
    xs = span.get_patch_transform().transform(span.get_path().vertices)[:, 0]
    assert (min(xs), max(xs)) == (3.0, 4.0)  # down from 3 s to the run's end


def test_a_delay_trace_is_named_in_the_legend_not_drawn_as_a_comb_of_lines(tmp_path, monkeypatch):
    many = figure_marks.MAX_DELAY_MARKS + 1
    changes = ", ".join(f'{{ at = "{t}s", delay = "{10 + t}ms" }}' for t in range(1, many + 1))
    text = TWO_HOP.replace('delay = "10ms"\n', f'delay = "10ms"\ndelay_schedule = [{changes}]\n', 1)
    drawn = _drawn(monkeypatch)
    plots.plot_cwnd(vegaslab.run('[run]\nduration = "15s"\n' + text, overrides=["monitor.cwnd=true"]), tmp_path / "c.png")
    _fig, ax = drawn[0]
    assert f"S1-R1: delay varies ({many} changes, not marked)" in [
        t.get_text() for t in ax.get_legend().get_texts()]
    assert not [line for line in ax.get_lines() if line.get_linestyle() == "-."]
