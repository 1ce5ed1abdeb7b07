"""Robustness study files and study outputs under the one rule for files (vegaslab.safe_io):
study files are checked completely before any run, a study writes only plain names inside
``--out/robustness/``, and ``reproduce`` reads a study's summaries and figures back as files
from a directory it does not own: a bad one is set aside and named, nothing outside
``robustness/`` is ever read because a summary says so, and the run finishes.

Studies here are tiny (one two-second Reno run per point and seed) or not run at all: the
summaries the report reads are made by :func:`vegaslab.study.robustness.summary` from results put
together by hand."""
from __future__ import annotations

import base64
import io
import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_robustness import ENTRY, STUDY

from vegaslab.report import robustness_text as rt
from vegaslab.study import robustness as rb
from vegaslab import safe_io
from vegaslab.report.robustness import END, START

#: A study of one factor with two levels, ten seeds: twenty runs.
SMALL_STUDY = """
[study]
entry = "tiny"
claim = "the flow gets more than 600 kbit/s"
conclusion = "the flow gets more than 600 kbit/s"
default_reason = "it is a test."
seeds = 10

[[study.factor]]
name = "delay"
levels = { short = ["links[0].delay=5ms"], long = ["links[0].delay=50ms"] }
default = "short"
reason = "not given"
"""

#: Bytes no report may hold: a file outside the output directory.
SECRET = b"\x89PNG\r\n\x1a\nSECRET-0d1f-not-for-the-report"


@pytest.fixture
def catalog(tmp_path) -> Path:
    d = tmp_path / "catalog"
    d.mkdir()
    (d / "tiny.toml").write_text(ENTRY)
    (d / "tiny2.toml").write_text(ENTRY.replace('id = "tiny"', 'id = "tiny2"').replace("tiny:f1", "tiny2:f1"))
    return d


def _study_file(tmp_path: Path, text: str, name: str = "tiny.toml") -> Path:
    d = tmp_path / "studies"
    d.mkdir(exist_ok=True)
    path = d / name
    path.write_text(text)
    return path


def _png(text: str = "") -> bytes:
    """A real PNG, drawn by matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1, 1))
    ax.set_title(text)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=20)
    plt.close(fig)
    return buf.getvalue()


def _result(study: rb.Study, holds: int = 4, errors: tuple[str, ...] = (), values: tuple[float, ...] = (700.0,) * 4,
            ns2=None) -> rb.StudyResult:
    """A StudyResult put together by hand (no run): every point with the same counts."""
    points = [rb.PointResult(pt, holds=holds, seeds=4, errors=list(errors), values=list(values))
              for pt in rb.points(study)]
    return rb.StudyResult(study, points, runs=len(points) * 4, computed=0, wall_s=0.5, compute_s=1.25, ns2=ns2)


def _planted_summary(tmp_path: Path, entry: str, figures: list[str]) -> dict:
    """A summary as vegaslab writes it (summary() of a hand-made result), for ``entry``, whose
    ``figures`` are then replaced by ``figures``."""
    study = rb.load_study(_study_file(tmp_path, SMALL_STUDY.replace('entry = "tiny"', f'entry = "{entry}"'),
                                      f"{entry}-source.toml"))
    s = rb.summary(_result(study))
    s["figures"] = figures
    return s


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory) -> Path:
    """``reproduce tiny`` once; each test copies the output directory (its store holds the run)."""
    from vegaslab.cli import main

    root = tmp_path_factory.mktemp("reproduced")
    cat = root / "catalog"
    cat.mkdir()
    (cat / "tiny.toml").write_text(ENTRY)
    out = root / "out"
    mp = pytest.MonkeyPatch()
    mp.setenv("VEGASLAB_CATALOG", str(cat))
    try:
        assert main(["reproduce", "tiny", "--out", str(out), "--scheduler", "synchronous", "--no-progress"]) == 0
    finally:
        mp.undo()
    return root


def _reproduce_again(reproduced: Path, tmp_path: Path, monkeypatch, capsys, plant) -> tuple[int, str, str]:
    """Copy the reproduced directory to ``tmp_path/a/out``, call ``plant(out)``, run
    ``reproduce`` again; returns (exit status, index.html's robustness section, stderr)."""
    import shutil

    from vegaslab.cli import main

    out = tmp_path / "a" / "out"
    out.parent.mkdir()
    shutil.copytree(reproduced / "out", out, symlinks=True)
    (out / "robustness").mkdir(exist_ok=True)
    plant(out)
    monkeypatch.setenv("VEGASLAB_CATALOG", str(reproduced / "catalog"))
    capsys.readouterr()
    code = main(["reproduce", "tiny", "--out", str(out), "--scheduler", "synchronous", "--no-progress"])
    err = capsys.readouterr().err
    page = (out / "index.html").read_text(encoding="utf-8")
    return code, page[page.index(START):page.index(END)], err


# ------------------------------------------------------------------ figures named by a summary


def _write_fifo_when_read(path: Path, data: bytes, stop: threading.Event) -> threading.Thread:
    """Feed ``data`` to the FIFO ``path`` whenever a reader opens it, until ``stop``: a reader
    that follows the summary gets the bytes (and does not hang); one that refuses never
    opens it for a blocking read."""
    def feed():
        while not stop.is_set():
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet (ENXIO)
                stop.wait(0.01)
                continue
            try:
                os.write(fd, data)
            except OSError:
                pass
            finally:
                os.close(fd)
            stop.wait(0.05)

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    return t


def _plant_absolute(out: Path) -> bytes:
    (out / "robustness" / "evil.json").write_text(json.dumps(_planted_summary(out.parent, "evil", ["/etc/passwd"])))
    return Path("/etc/passwd").read_bytes()


def _plant_dotdot(out: Path) -> bytes:
    (out.parent.parent / "secret").write_bytes(SECRET)   # out/../../secret
    (out / "robustness" / "evil.json").write_text(json.dumps(
        _planted_summary(out.parent, "evil", ["../../secret", "robustness/../../../secret"])))
    return SECRET


def _plant_symlink(out: Path) -> bytes:
    (out.parent / "secret.png").write_bytes(SECRET)
    os.symlink(out.parent / "secret.png", out / "robustness" / "evil-0.png")
    (out / "robustness" / "evil.json").write_text(json.dumps(
        _planted_summary(out.parent, "evil", ["robustness/evil-0.png"])))
    return SECRET


def _plant_symlinked_directory(out: Path) -> bytes:
    """``robustness/`` itself a link to a directory elsewhere holding a summary and figure."""
    elsewhere = out.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "evil-0.png").write_bytes(SECRET)
    (elsewhere / "evil.json").write_text(json.dumps(
        _planted_summary(out.parent, "evil", ["robustness/evil-0.png"])))
    (out / "robustness").rmdir()
    os.symlink(elsewhere, out / "robustness")
    return SECRET


@pytest.mark.parametrize("plant, refused", [
    (_plant_absolute, "/etc/passwd"),
    (_plant_dotdot, "../../secret"),
    (_plant_symlink, "evil-0.png"),
    (_plant_symlinked_directory, "robustness: is a symbolic link"),
], ids=["absolute-path", "dotdot", "symlink", "symlinked-robustness-dir"])
def test_a_summary_cannot_bring_a_file_from_outside_robustness_into_the_report(
        reproduced, tmp_path, monkeypatch, capsys, plant, refused):
    secret: list[bytes] = []
    code, section, err = _reproduce_again(reproduced, tmp_path, monkeypatch, capsys,
                                          lambda out: secret.append(plant(out)))
    assert code == 0
    assert base64.b64encode(secret[0]).decode() not in section
    assert "SECRET-0d1f" not in section
    assert "data:image/png;base64," not in section
    assert refused in err and "warning" in err


def test_a_fifo_named_as_a_figure_is_refused_without_blocking(reproduced, tmp_path, monkeypatch, capsys):
    stop = threading.Event()

    def plant(out: Path) -> None:
        os.mkfifo(out / "robustness" / "evil-0.png")
        (out / "robustness" / "evil.json").write_text(json.dumps(
            _planted_summary(out.parent, "evil", ["robustness/evil-0.png"])))
        _write_fifo_when_read(out / "robustness" / "evil-0.png", SECRET, stop)

    try:
        code, section, err = _reproduce_again(reproduced, tmp_path, monkeypatch, capsys, plant)
    finally:
        stop.set()
    assert code == 0
    assert "SECRET-0d1f" not in section and base64.b64encode(SECRET).decode() not in section
    assert "evil-0.png" in err and "FIFO" in err


def test_a_figure_that_is_not_a_png_is_refused_and_a_real_one_beside_it_is_embedded(
        reproduced, tmp_path, monkeypatch, capsys):
    good = _png("ok")

    def plant(out: Path) -> None:
        r = out / "robustness"
        (r / "evil-0.png").write_bytes(b"SECRET-0d1f plain text")
        (r / "evil-1.png").write_bytes(good)
        (r / "evil.json").write_text(json.dumps(_planted_summary(out.parent, "evil", ["robustness/evil-0.png", "robustness/evil-1.png"])))

    code, section, err = _reproduce_again(reproduced, tmp_path, monkeypatch, capsys, plant)
    assert code == 0
    assert "SECRET-0d1f" not in section
    assert section.count("data:image/png;base64,") == 1
    assert base64.b64encode(good).decode() in section
    assert "evil-0.png" in err and "PNG" in err and "evil-1.png" not in err


def test_a_summary_written_by_0_4_0_still_shows_with_its_figures(reproduced, tmp_path, monkeypatch, capsys):
    good = _png("old")

    def plant(out: Path) -> None:
        (out / "robustness" / "old-0.png").write_bytes(good)
        # 0.4.0 named its figures relative to the report's directory.
        (out / "robustness" / "old.json").write_text(json.dumps(
            _planted_summary(out.parent, "old", ["robustness/old-0.png"]), indent=1))

    code, section, err = _reproduce_again(reproduced, tmp_path, monkeypatch, capsys, plant)
    assert code == 0 and "warning" not in err
    assert base64.b64encode(good).decode() in section
    assert "the flow gets more than 600 kbit/s" in section


# ------------------------------------------------------------------ summaries of the wrong shape


def _valid(tmp_path: Path) -> dict:
    return _planted_summary(tmp_path, "bad", [])


@pytest.mark.parametrize("make, why", [
    (lambda s: [], "not a file vegaslab wrote"),
    (lambda s: {"entry": "bad"}, "not a file vegaslab wrote"),
    (lambda s: {**s, "verdict": ""}, "verdict"),
    (lambda s: {**s, "points": [{"label": "x"}]}, "points[0]"),
    (lambda s: {**s, "points": [{**s["points"][0], "interval": "ab"}]}, "points[0].interval"),
    (lambda s: {**s, "ns2": {"status": 5}}, "ns2"),
    (lambda s: {**s, "figures": "bad-0.png"}, "figures"),
    (lambda s: {**s, "id": "other"}, "its study 'other' is not its file's name"),
    (lambda s: {**{k: v for k, v in s.items() if k != "id"}, "entry": "other"}, "its study 'other' is not its file's name"),
], ids=["a-list", "no-verdict", "empty-verdict", "point-without-counts", "interval-a-string", "ns2-wrong",
        "figures-a-string", "id-not-its-name", "entry-not-its-name-without-id"])
def test_a_summary_of_the_wrong_shape_is_set_aside_and_named_and_reproduce_finishes(
        reproduced, tmp_path, monkeypatch, capsys, make, why):
    def plant(out: Path) -> None:
        (out / "robustness" / "bad.json").write_text(json.dumps(make(_valid(out.parent))))
        (out / "robustness" / "good.json").write_text(json.dumps(_planted_summary(out.parent, "good", [])))

    code, section, err = _reproduce_again(reproduced, tmp_path, monkeypatch, capsys, plant)
    assert code == 0
    assert "bad.json" in err and "warning" in err and why in err
    assert "robustness/bad.json" in section and "set aside" in section
    assert 'id="robustness-good"' in section  # the good study beside it still shows


@pytest.mark.parametrize("number", ["1" + "0" * 400, "1e999", "-1e999"])
def test_a_summary_with_a_number_no_double_holds_is_set_aside_and_reproduce_finishes(
        reproduced, tmp_path, monkeypatch, capsys, number):
    def plant(out: Path) -> None:
        text = json.dumps({**_valid(out.parent), "compute_s": 1.0}).replace('"compute_s": 1.0', f'"compute_s": {number}')
        (out / "robustness" / "bad.json").write_text(text)

    code, section, err = _reproduce_again(reproduced, tmp_path, monkeypatch, capsys, plant)
    assert code == 0 and "internal error" not in err, err
    assert "bad.json" in err and "set aside" in section


def test_a_summary_nested_too_deep_or_not_json_is_set_aside(reproduced, tmp_path, monkeypatch, capsys):
    def plant(out: Path) -> None:
        (out / "robustness" / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
        (out / "robustness" / "text.json").write_text("{not json")
        (out / "robustness" / "dir.json").mkdir()
        (out / "robustness" / "back\\slash.json").write_text("{}")

    code, section, err = _reproduce_again(reproduced, tmp_path, monkeypatch, capsys, plant)
    assert code == 0
    for name in ("deep.json", "text.json", "dir.json", "back\\slash.json"):
        assert name in err and f"robustness/{name}" in section


# ------------------------------------------------------------------ the summary's schema


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(holds=st.integers(0, 4),
       errors=st.lists(st.text(max_size=2000), max_size=25),
       values=st.lists(st.floats(-1e15, 1e15), max_size=6),
       ns2=st.booleans(), figure=st.booleans())
def test_every_summary_vegaslab_writes_matches_the_summary_schema(tmp_path, holds, errors, values, ns2, figure):
    from vegaslab.study.ns2_check import Ns2Check

    text = SMALL_STUDY if not figure else SMALL_STUDY + '\n[study.figure]\nexpr = "tiny:f1.throughput_bps"\nlabel = "x"\n'
    study = rb.load_study(_study_file(tmp_path, text, "schema.toml"))
    check = Ns2Check(status="same conclusion", seed=1, ns2_figure=1.0, our_figure=2.0, ns2_claim="holds",
                     our_claim="holds", variants={"tiny": "ran"}, flow_diff=0.01, flow_diff_at="tiny:f1",
                     flows_compared=1) if ns2 else None
    s = rb.summary(_result(study, holds=holds, errors=tuple(errors), values=tuple(values), ns2=check),
                   [f"tiny-{n}.png" for n in range(len(study.factors))])
    safe_io.check_schema(json.loads(json.dumps(s, allow_nan=False)), rb.SUMMARY_SCHEMA, "summary")
    assert len(json.dumps(s)) < rb.MAX_SUMMARY_BYTES


def test_a_summary_round_trips_through_save_and_load(tmp_path):
    study = rb.load_study(_study_file(tmp_path, SMALL_STUDY))
    s = rb.summary(_result(study), ["tiny-0.png"])
    d = tmp_path / "robustness"
    d.mkdir()
    (d / "tiny-0.png").write_bytes(_png())
    assert rb.save_summary(s, d) == d / "tiny.json"
    assert rb.load_summaries(d) == [s]


def test_saving_a_summary_replaces_a_planted_symlink_and_leaves_its_target_alone(tmp_path):
    study = rb.load_study(_study_file(tmp_path, SMALL_STUDY))
    d = tmp_path / "robustness"
    d.mkdir()
    target = tmp_path / "target"
    target.write_text("untouched")
    os.symlink(target, d / "tiny.json")
    os.symlink(target, d / "tiny.json.tmp")   # where a temporary file might go
    rb.save_summary(rb.summary(_result(study)), d)
    assert target.read_text() == "untouched"
    assert not (d / "tiny.json").is_symlink()


# ------------------------------------------------------------------ study files checked before any run


def _edit(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    return text


WINDOW = ('name = "bandwidth"\npath = "links[0].bandwidth"\nvalues = ["1Mbps", "500kbps", "2Mbps"]\ndefault = "1Mbps"',
          'name = "bandwidth"\npath = "flows[0].tcp.window"\nvalues = [20, 0, 100]\ndefault = 20')


@pytest.mark.parametrize("edit, field", [
    (lambda s: _edit(s, ('default = "short"', "default = []")), r"study\.factor\[1\]\.default: must name one of the levels"),
    (lambda s: _edit(s, ('[[study.pair]]\nfactors = ["bandwidth", "delay"]', "")).replace("seeds = 10", "seeds = 10\npair = 5"),
     r"study\.pair: must be an array of tables"),
    (lambda s: _edit(s, ('factors = ["bandwidth", "delay"]', 'factors = ["bandwidth", "delay"]\nweight = 2')),
     r"study\.pair\[0\]\.weight: unknown field"),
    (lambda s: _edit(s, ('long = ["links[0].delay=50ms"]', 'long = 5')), r"study\.factor\[1\]\.levels\.long: must be a list"),
    (lambda s: _edit(s, ('long = ["links[0].delay=50ms"]', 'long = ["=50ms"]')), r"study\.factor\[1\]\.levels\.long: .*no path"),
    (lambda s: _edit(s, ('short = ["links[0].delay=5ms"], long = ["links[0].delay=50ms"]',
                         'short = ["run.seed=1"], long = ["run.seed=2"]')),
     r"study\.factor\[1\]\.levels\.short: .*run\.seed.*seeds are the study's own"),
    (lambda s: _edit(s, ('path = "links[0].bandwidth"', 'path = "run.seed"'), ('["1Mbps", "500kbps", "2Mbps"]', "[1, 2, 3]"),
                     ('default = "1Mbps"', "default = 1")), r"study\.factor\[0\]\.path: .*run\.seed"),
    (lambda s: _edit(s, ('"1Mbps", "500kbps", "2Mbps"', '"1Mbps", "500kbps", nan')), r"study\.factor\[0\]\.values: .*finite"),
    (lambda s: _edit(s, ("seeds = 10", 'seeds = 10\nvariants = ["tiny", "tiny"]')), r"study\.variants: 'tiny' is listed twice"),
    (lambda s: _edit(s, ('entry = "tiny"', 'entry = "/etc/passwd"')), r"study\.entry: must be a catalog entry id"),
    (lambda s: _edit(s, ('entry = "tiny"', 'entry = "../catalog/tiny"')), r"study\.entry: must be a catalog entry id"),
    (lambda s: _edit(s, ('entry = "tiny"', "entry = 5")), r"study\.entry: must be a catalog entry id"),
], ids=["default-a-list", "pair-a-number", "pair-unknown-key", "level-not-a-list", "override-without-path",
        "run-seed-level", "run-seed-path", "nan-level", "duplicate-variants", "entry-absolute-path",
        "entry-relative-path", "entry-a-number"])
def test_a_bad_study_file_is_a_study_error_naming_the_field_when_loaded(tmp_path, edit, field):
    path = _study_file(tmp_path, edit(STUDY))
    with pytest.raises(rb.StudyError, match=field) as exc:
        rb.load_study(path)
    assert str(exc.value).startswith(str(path))


@pytest.mark.parametrize("edit, field", [
    (lambda s: _edit(s, ('path = "links[0].bandwidth"', 'path = "links[0].bandwdth"')),
     r"study\.factor\[0\]\.values: level '1Mbps' of factor 'bandwidth' \(its default\) is refused by the simulator "
     r"for variant tiny: .*links\[0\]\.bandwdth: unknown field"),
    (lambda s: _edit(s, WINDOW),
     r"study\.factor\[0\]\.values: level '0' of factor 'bandwidth' is refused by the simulator for variant tiny: "
     r".*flows\[0\]\.tcp\.window: must be between 1"),
    (lambda s: _edit(s, ('long = ["links[0].delay=50ms"]', 'long = ["links[0.delay=50ms"]')),
     r"study\.factor\[1\]\.levels\.long: level 'long' of factor 'delay' is refused by the simulator for variant tiny: "
     r".*missing '\]' in override path"),
    (lambda s: _edit(s, ('long = ["links[0].delay=50ms"]', 'long = ["links[0].delay=5ms"]')),
     r"study\.factor\[1\]\.levels: levels 'short' and 'long' of factor 'delay' give the same runs"),
    (lambda s: _edit(s, ('long = ["links[0].delay=50ms"]', 'long = ["links[0].delay=0.005s"]')),
     r"study\.factor\[1\]\.levels: levels 'short' and 'long' of factor 'delay' give the same runs"),
], ids=["bad-path", "window-0", "malformed-override", "identical-levels", "equal-levels"])
def test_a_level_the_simulator_refuses_is_a_study_error_naming_the_factor_and_level_when_planned(
        tmp_path, catalog, edit, field):
    path = _study_file(tmp_path, edit(STUDY))
    study = rb.load_study(path)
    with pytest.raises(rb.StudyError, match=field) as exc:
        rb.plan(study, catalog)
    assert str(exc.value).startswith(str(path))


def test_a_study_entry_is_looked_up_in_the_catalog_never_in_the_working_directory(tmp_path, catalog, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nosuch").write_text(ENTRY)   # a file named like the id, where a path would find it
    study = rb.load_study(_study_file(tmp_path, _edit(SMALL_STUDY, ('entry = "tiny"', 'entry = "nosuch"'))))
    with pytest.raises(rb.StudyError, match=r"study\.entry: no catalog entry 'nosuch'"):
        rb.plan(study, catalog)


def test_a_bad_study_file_given_on_the_command_line_exits_2_and_runs_nothing(tmp_path, catalog, monkeypatch, capsys):
    from vegaslab.cli import main

    monkeypatch.setenv("VEGASLAB_CATALOG", str(catalog))
    path = _study_file(tmp_path, _edit(STUDY, WINDOW), "window.toml")
    out = tmp_path / "out"
    assert main(["robustness", str(path), "--out", str(out), "--scheduler", "synchronous", "--no-progress",
                 "--no-ns2"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: study.factor[0].values: level '0'" in err
    assert not (out / "store").exists() and not (out / "robustness").exists()


def test_a_study_refused_when_planned_stops_the_command_before_any_study_runs(tmp_path, catalog, monkeypatch, capsys):
    from vegaslab.cli import main

    monkeypatch.setenv("VEGASLAB_CATALOG", str(catalog))
    _study_file(tmp_path, SMALL_STUDY, "a-good.toml")      # runs first, alphabetically
    _study_file(tmp_path, _edit(STUDY, WINDOW, ('entry = "tiny"', 'entry = "tiny2"'), ("tiny:f1", "tiny2:f1")),
                "b-bad.toml")
    out = tmp_path / "out"
    assert main(["robustness", "--studies", str(tmp_path / "studies"), "--out", str(out), "--scheduler",
                 "synchronous", "--no-progress", "--no-ns2"]) == 2
    assert "b-bad.toml: study.factor[0].values: level '0'" in capsys.readouterr().err
    assert not (out / "store").exists() and not (out / "robustness").exists()


def test_a_study_whose_entry_is_a_path_writes_nothing_outside_out(tmp_path, catalog, monkeypatch, capsys):
    from vegaslab.cli import main

    monkeypatch.setenv("VEGASLAB_CATALOG", str(catalog))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "tiny.toml").write_text(ENTRY)
    _study_file(tmp_path, _edit(SMALL_STUDY, ('entry = "tiny"', f'entry = "{elsewhere / "tiny.toml"}"')))
    out = tmp_path / "out"
    before = sorted(p.name for p in elsewhere.iterdir())
    code = main(["robustness", "--studies", str(tmp_path / "studies"), "--out", str(out), "--scheduler",
                 "synchronous", "--no-progress", "--no-ns2"])
    assert sorted(p.name for p in elsewhere.iterdir()) == before
    assert code == 2 and "study.entry: must be a catalog entry id" in capsys.readouterr().err


def test_two_studies_with_one_name_are_refused_before_either_runs(tmp_path, catalog):
    _study_file(tmp_path, SMALL_STUDY, "a.toml")
    _study_file(tmp_path, SMALL_STUDY, "b.toml")
    with pytest.raises(rb.StudyError, match=r"b\.toml: study\.entry: .*tiny.*a\.toml"):
        rb.list_studies(tmp_path / "studies")
    _study_file(tmp_path, SMALL_STUDY.replace("[study]", '[study]\nid = "same"'), "a.toml")
    _study_file(tmp_path, SMALL_STUDY.replace("[study]", '[study]\nid = "same"'), "b.toml")
    with pytest.raises(rb.StudyError, match=r"b\.toml: study\.id: 'same' is also the name of the study .*a\.toml"):
        rb.list_studies(tmp_path / "studies")


def test_two_studies_of_one_entry_with_their_own_ids_run_side_by_side(tmp_path, catalog, monkeypatch):
    from vegaslab.cli import main

    monkeypatch.setenv("VEGASLAB_CATALOG", str(catalog))
    _study_file(tmp_path, SMALL_STUDY.replace("[study]", '[study]\nid = "tiny-fast"'), "tiny-fast.toml")
    _study_file(tmp_path, SMALL_STUDY.replace("[study]", '[study]\nid = "tiny-slow"').replace(
        'conclusion = "', 'conclusion = "over a slow link, '), "tiny-slow.toml")
    assert [s.name for s in rb.list_studies(tmp_path / "studies")] == ["tiny-fast", "tiny-slow"]
    out = tmp_path / "out"
    assert main(["robustness", "tiny", "--studies", str(tmp_path / "studies"), "--out", str(out), "--scheduler",
                 "synchronous", "--no-progress", "--no-ns2"]) == 0
    saved = {s["id"]: s for s in rb.load_summaries(out / "robustness")}
    assert set(saved) == {"tiny-fast", "tiny-slow"} and {s["entry"] for s in saved.values()} == {"tiny"}
    assert saved["tiny-fast"]["figures"] == ["tiny-fast-0.png"]
    text = (out / "robustness.md").read_text()
    assert "## tiny-fast:" in text and "## tiny-slow:" in text
    from vegaslab.report.robustness import section_html

    html = section_html(rb.load_summaries(out / "robustness"), out)
    # Each study's row is named after the study and links to its entry's experiment section.
    assert html.count('<a href="#exp-tiny">tiny-fast</a>') == 1 and html.count('<a href="#exp-tiny">tiny-slow</a>') == 1
    assert main(["robustness", "tiny-slow", "--studies", str(tmp_path / "studies"), "--out", str(out / "one"),
                 "--scheduler", "synchronous", "--no-progress", "--no-ns2"]) == 0
    assert [p.name for p in (out / "one" / "robustness").glob("*.json")] == ["tiny-slow.json"]


def test_the_command_writes_only_plain_names_inside_out_robustness(tmp_path, catalog, monkeypatch):
    from vegaslab.cli import main

    monkeypatch.setenv("VEGASLAB_CATALOG", str(catalog))
    _study_file(tmp_path, SMALL_STUDY)
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "target"
    target.write_text("untouched")
    (out / "robustness").mkdir()
    os.symlink(target, out / "robustness" / "tiny-0.png")
    os.symlink(target, out / "robustness.md")
    assert main(["robustness", "--studies", str(tmp_path / "studies"), "--out", str(out), "--scheduler",
                 "synchronous", "--no-progress", "--no-ns2"]) == 0
    assert target.read_text() == "untouched"
    assert sorted(p.name for p in (out / "robustness").iterdir()) == ["tiny-0.png", "tiny.json"]
    assert not (out / "robustness" / "tiny-0.png").is_symlink()
    assert (out / "robustness" / "tiny-0.png").read_bytes().startswith(b"\x89PNG")
    assert json.loads((out / "robustness" / "tiny.json").read_text())["figures"] == ["tiny-0.png"]
    assert "![tiny](robustness/tiny-0.png)" in (out / "robustness.md").read_text()


def test_a_planted_symlink_in_place_of_robustness_stops_the_command_before_it_runs(tmp_path, catalog, monkeypatch,
                                                                                      capsys):
    from vegaslab.cli import main

    monkeypatch.setenv("VEGASLAB_CATALOG", str(catalog))
    _study_file(tmp_path, SMALL_STUDY)
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, out / "robustness")
    assert main(["robustness", "--studies", str(tmp_path / "studies"), "--out", str(out), "--scheduler",
                 "synchronous", "--no-progress", "--no-ns2"]) == 2
    assert "robustness: is a symbolic link" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == [] and not (out / "store").exists()


# ------------------------------------------------------------------ ns-2's cache in the store

needs_ns = pytest.mark.skipif(__import__("shutil").which("ns") is None and os.environ.get("VEGASLAB_REQUIRE_NS2") != "1",
                              reason="ns-2 ('ns') not on PATH")


@needs_ns
def test_a_link_planted_in_ns2s_cache_is_not_read_and_its_target_is_untouched(tmp_path, catalog):
    study = rb.load_study(_study_file(tmp_path, SMALL_STUDY))
    r = rb.run_study(study, tmp_path / "store", catalog=catalog, scheduler="synchronous")
    rb.check_ns2(r, tmp_path / "store")
    first = r.ns2.to_dict()
    [cached] = (tmp_path / "store" / "ns2").iterdir()
    forged = json.loads(cached.read_text())
    forged["flows"][0]["delivered_pkts"] = forged["flows"][0]["sink_delivered_pkts"] = 1
    elsewhere = tmp_path / "forged.json"
    elsewhere.write_text(json.dumps(forged))
    cached.unlink()
    os.symlink(elsewhere, cached)
    rb.check_ns2(r, tmp_path / "store")
    assert r.ns2.to_dict() == first                      # ns-2 ran again; the forged numbers were not read
    assert json.loads(elsewhere.read_text()) == forged   # and the link's target was not written
    assert not cached.is_symlink() and json.loads(cached.read_text())["flows"][0]["delivered_pkts"] != 1


# ------------------------------------------------------------------ fuzzing study files

from hypothesis import Phase, example  # noqa: E402

import fuzzer as fuzz  # noqa: E402 - tests/fuzzer.py, the fuzzing tool
from fuzzer import StudyCase  # noqa: E402


@settings(max_examples=300, derandomize=True, database=None, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=fuzz.study_cases())
# The audit's study files, so the quick run always covers them:
@example(case=StudyCase([["set", ["study", "factor", 1, "default"], []]]))
@example(case=StudyCase([["set", ["study", "pair"], 5]]))
@example(case=StudyCase([["set", ["study", "factor", 0, "path"], "links[1].bandwdth"]]))
@example(case=StudyCase([["set", ["study", "factor", 0, "path"], "run.seed"]]))
@example(case=StudyCase([["set", ["study", "factor", 0, "values", 1], "0bps"]]))
@example(case=StudyCase([["set", ["study", "factor", 1, "levels", "long"], ["links[0.delay=50ms"]]]))
@example(case=StudyCase([["set", ["study", "variants"], ["fuzz", "fuzz"]]]))
@example(case=StudyCase([["set", ["study", "entry"], "/etc/passwd"]]))
def test_mutated_study_files_are_planned_or_refused_naming_their_field(tmp_path_factory, case):
    outcome = fuzz.check_study_case(case, tmp_path_factory.mktemp("study"))
    assert not outcome.failed, f"{outcome.category}: {outcome.detail}\n{fuzz.build_study_toml(case).decode()}"


def test_robustness_md_quotes_study_text_and_file_names_as_text():
    from vegaslab.study import robustness as rb

    study = {"entry": "tiny", "claim": "c", "conclusion": "<script>alert(1)</script> | [x](javascript:alert(1))",
             "verdict": "holds", "sentence": "<img src=x onerror=alert(1)>", "points": [], "factors": [], "runs": 1,
             "figures": []}
    set_aside = {"file": "<img src=x onerror=alert(2)>|x.json", "set_aside": "not JSON <b>"}
    text = rt.markdown([study, set_aside])
    assert "<script" not in text and "<img" not in text and "<b>" not in text
    assert "\\[x\\](javascript:alert(1))" in text and "&lt;img src=x onerror=alert(2)>\\|x.json" in text


def test_a_study_file_nested_too_deep_is_a_study_error(tmp_path, catalog, monkeypatch, capsys):
    from vegaslab.cli import main

    deep = tmp_path / "deep.toml"
    deep.write_text("[study]\nentry = " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["robustness", str(deep), "--out", str(tmp_path / "o"), "--no-ns2"]) == 2
    err = capsys.readouterr().err
    assert "deep.toml: not TOML: arrays or tables nested too deep" in err and "internal error" not in err


def test_robustness_refuses_a_link_planted_as_its_store_and_a_locked_store_exits_2(tmp_path, catalog, monkeypatch,
                                                                                   capsys):
    from vegaslab.cli import main
    from vegaslab.sweeps.store import Store

    monkeypatch.setenv("VEGASLAB_CATALOG", str(catalog))
    study = _study_file(tmp_path, SMALL_STUDY)
    out = tmp_path / "o"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, out / "store")
    args = ["robustness", str(study), "--out", str(out), "--scheduler", "synchronous", "--no-progress", "--no-ns2"]
    assert main(args) == 2
    assert "store: is a symbolic link" in capsys.readouterr().err and list(elsewhere.iterdir()) == []
    os.unlink(out / "store")
    with Store(out / "store").writer():
        assert main(args) == 2
    assert "another process is writing to this store" in capsys.readouterr().err
