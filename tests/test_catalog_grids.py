"""Grids of variants in the catalog (a ``[[variant]]`` with ``[[variant.axis]]`` tables,
docs/catalog-format.md): the built-in catalog expands to exactly the runs it made when every
variant was written by hand, and a bad grid is an error naming the file and the field.

``tests/data/catalog_variants.json`` was frozen from the hand-written catalog before any entry
was converted (names, overrides and published numbers of ``catalog.expand``, in order, plus the
seeds and the quick overrides). Overrides are compared through the core's normalised scenario,
so ``flows[0].params={ alpha = 1 }`` and ``flows[0].params.alpha=1`` count as the same run when,
and only when, they resolve to the same scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vegaslab
from vegaslab.study import catalog

FROZEN_PATH = Path(__file__).parent / "data" / "catalog_variants.json"
FROZEN = {k: v for k, v in json.loads(FROZEN_PATH.read_text()).items() if not k.startswith("_")}


# ---------------------------------------------------------------- nothing moved


def test_every_frozen_entry_is_still_in_the_catalog():
    ids = {e.id: e.path.name for e in catalog.list_entries(catalog.builtin_dir())}
    assert {k: v["file"] for k, v in FROZEN.items()} == {k: ids.get(k) for k in FROZEN}


@pytest.mark.parametrize("entry_id", sorted(FROZEN))
def test_entry_expands_to_the_frozen_runs_names_order_seeds_published_and_scenarios(entry_id):
    frozen = FROZEN[entry_id]
    entry = catalog.load_entry(entry_id, catalog.builtin_dir())
    specs = catalog.expand(entry)
    assert [s.name for s in specs] == [v["name"] for v in frozen["variants"]]
    assert [dict(s.published) for s in specs] == [v["published"] for v in frozen["variants"]]
    assert entry.seeds() == frozen["seeds"] and entry.seeds(quick=True) == frozen["quick_seeds"]
    assert list(entry.quick_overrides()) == frozen["quick_overrides"]
    quick = catalog.expand(entry, quick=True)
    assert [s.name for s in quick] == [s.name for s in specs]
    for spec, q, old in zip(specs, quick, frozen["variants"]):
        assert q.overrides == spec.overrides + tuple(frozen["quick_overrides"])
        ours = vegaslab.normalize(entry.path, overrides=list(spec.overrides))
        before = vegaslab.normalize(entry.path, overrides=old["overrides"])
        assert ours == before, (f"{entry_id}/{spec.name}: the scenario changed: now {list(spec.overrides)}, "
                                f"frozen {old['overrides']}")


def test_the_snapshot_check_notices_an_override_that_changes_the_scenario():
    """The comparison above is not vacuous: one queue limit off by one gives another scenario,
    while a differently spelled equal value does not."""
    path = catalog.builtin_dir() / "va-buffer.toml"
    base = vegaslab.normalize(path, overrides=["links[1].queue.limit=10"])
    assert vegaslab.normalize(path, overrides=["links[1].queue.limit=11"]) != base
    assert vegaslab.normalize(path, overrides=["links[1].queue={ kind = \"droptail\", limit = 10 }"]) == base


def test_the_catalog_uses_grids():
    grids = {e.id for e in catalog.list_entries(catalog.builtin_dir())
             if any("grid" in v for v in e.variants)}
    assert {"va-buffer", "va-geo", "av-onoff-10", "av-onoff-150", "av-two-users", "av-hetero-rtt",
            "rv-load", "rv-parking", "wf-net1-queue", "wf-net1-red", "lte-alpha-beta", "wf-net2", "wf-net3",
            "wf-net4"} <= grids


# ---------------------------------------------------------------- the form

BASE = """
[meta]
id = "t-grid"

[run]
duration = "2s"

[[links]]
endpoints = ["S1", "R1"]
bandwidth = "10Mbps"
delay = "5ms"

[[links]]
endpoints = ["R1", "D1"]
bandwidth = "1Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = 20 }

[[flows]]
name = "f1"
from = "S1"
to = "D1"
cc = "vegas"
"""

GRID = BASE + """
[[variant]]
name = "first"
set = { "flows[0].cc" = "reno" }

[[variant]]
name = "{cc}-q{limit}"
set = { "flows[0].tcp.window" = 30 }

[variant.published]
"vegas-a-q10" = { "f1.throughput_bps" = 1000 }

[[variant.axis]]
name = "cc"
path = "flows[0].cc"
values = ["vegas", "vegas-a"]

[[variant.axis]]
name = "limit"
path = "links[1].queue.limit"
range = { start = 10, stop = 20, step = 5 }

[[variant]]
name = "last"
"""


def _entry(tmp_path: Path, text: str) -> catalog.Entry:
    path = tmp_path / "t-grid.toml"
    path.write_text(text)
    return catalog.load_entry(path)


def _error(tmp_path: Path, text: str) -> vegaslab.ScenarioError:
    with pytest.raises(vegaslab.ScenarioError) as info:
        _entry(tmp_path, text)
    return info.value


def test_a_grid_expands_in_row_major_order_between_the_hand_written_variants_in_file_order(tmp_path):
    specs = catalog.expand(_entry(tmp_path, GRID))
    assert [s.name for s in specs] == ["first", "vegas-q10", "vegas-q15", "vegas-q20",
                                       "vegas-a-q10", "vegas-a-q15", "vegas-a-q20", "last"]
    assert specs[4].overrides == ("flows[0].tcp.window=30", "flows[0].cc=vegas-a", "links[1].queue.limit=10")
    assert specs[4].published == {"f1.throughput_bps": 1000} and specs[1].published == {}
    assert specs[0].overrides == ("flows[0].cc=reno",) and specs[-1].overrides == ()


def test_a_grid_point_is_the_same_run_as_the_hand_written_variant(tmp_path):
    entry = _entry(tmp_path, GRID)
    spec = next(s for s in catalog.expand(entry) if s.name == "vegas-a-q15")
    by_hand = ["flows[0].cc=vegas-a", "links[1].queue.limit=15", "flows[0].tcp.window=30"]
    assert vegaslab.normalize(entry.path, overrides=list(spec.overrides)) == vegaslab.normalize(
        entry.path, overrides=by_hand)


def test_a_grid_counts_its_points_as_runs(tmp_path):
    entry = _entry(tmp_path, GRID.replace('id = "t-grid"', 'id = "t-grid"\nseeds = [1, 2]'))
    assert len(entry.variants) == 8 and entry.run_count() == 16


def test_zip_axes_and_labels_name_the_points(tmp_path):
    text = BASE + """
[[variant]]
name = "w{window}-{size}"

[[variant.axis]]
name = "size"
zip = [{ name = "limit", path = "links[1].queue.limit", values = [5, 50] },
       { name = "window", path = "flows[0].tcp.window", values = [8, 80] }]
labels = ["small", "big"]

[[variant]]
name = "per{per}"
[[variant.axis]]
name = "per"
path = "links[1].error_rate"
values = [0.0, 5e-4]
labels = ["0", "5e-4"]
"""
    specs = catalog.expand(_entry(tmp_path, text))
    assert [s.name for s in specs] == ["w8-small", "w80-big", "per0", "per5e-4"]
    assert specs[1].overrides == ("links[1].queue.limit=50", "flows[0].tcp.window=80")
    assert specs[3].overrides == ("links[1].error_rate=0.0005",)


def test_a_bad_axis_value_is_blamed_on_the_grid_field_with_the_file(tmp_path):
    err = _error(tmp_path, GRID.replace('range = { start = 10, stop = 20, step = 5 }', 'values = [10, 15, 0]'))
    assert "t-grid.toml: variant[1].axis[1].values[2]: must be between 2 and" in str(err)
    assert err.field == "variant[1].axis[1].values[2]" and err.kind == "out-of-range"


def test_an_unknown_axis_key_lists_labels_beside_the_sweep_keys(tmp_path):
    err = _error(tmp_path, GRID.replace('range = {', 'label = ["a"]\nrange = {'))
    assert "variant[1].axis[1].label: unknown field" in str(err) and "also takes labels" in str(err)


def test_a_zip_of_unequal_lengths_names_the_grid_not_the_sweep(tmp_path):
    text = BASE + """
[[variant]]
name = "z{limit}"
[[variant.axis]]
zip = [{ name = "limit", path = "links[1].queue.limit", values = [5, 50] },
       { name = "window", path = "flows[0].tcp.window", values = [8, 80, 90] }]
"""
    err = _error(tmp_path, text)
    assert "variant[0].axis[0].zip[1]: has 3 values but variant[0].axis[0].zip[0] has 2" in str(err)
    assert "sweep" not in str(err)


def test_a_bad_common_set_override_is_blamed_on_the_grid_set(tmp_path):
    err = _error(tmp_path, GRID.replace('"flows[0].tcp.window" = 30', '"flows[0].tcp.window" = 0'))
    assert 't-grid.toml: variant[1].set."flows[0].tcp.window"' in str(err)


def test_a_name_template_that_repeats_a_name_is_an_error(tmp_path):
    err = _error(tmp_path, GRID.replace('name = "{cc}-q{limit}"', 'name = "q{limit}"'))
    assert "variant[1].name: 'q{limit}' gives 'q10' for point 0 and for point 3" in str(err)


def test_a_grid_name_that_collides_with_a_hand_written_variant_is_an_error(tmp_path):
    err = _error(tmp_path, GRID.replace('name = "last"', 'name = "vegas-q15"'))
    assert "variant[2].name: duplicate variant name 'vegas-q15'; already the name of variant[1] (point 1)" in str(err)
    err = _error(tmp_path, GRID.replace('name = "first"', 'name = "vegas-a-q20"'))
    assert "variant[1].name: duplicate variant name 'vegas-a-q20', made by variant[1] (point 5)" in str(err)


def test_a_template_field_that_is_not_an_axis_is_an_error_listing_the_axes(tmp_path):
    err = _error(tmp_path, GRID.replace('name = "{cc}-q{limit}"', 'name = "{cc}-q{buffer}"'))
    assert "variant[1].name: {buffer} is not an axis of this grid; the template can fill in {cc}, {limit}" in str(err)


def test_a_template_is_filled_strictly_never_with_str_format(tmp_path):
    err = _error(tmp_path, GRID.replace('name = "{cc}-q{limit}"', 'name = "{cc.__class__}-q{limit}"'))
    assert "variant[1].name" in str(err) and "only {name}" in str(err)


def test_published_numbers_of_a_name_the_grid_does_not_make_are_an_error(tmp_path):
    err = _error(tmp_path, GRID.replace('"vegas-a-q10" = {', '"vegas-a-q11" = {'))
    assert 'variant[1].published."vegas-a-q11": not a variant of this grid (it makes vegas-q10,' in str(err)


def test_labels_must_match_the_axis_length(tmp_path):
    err = _error(tmp_path, GRID.replace('values = ["vegas", "vegas-a"]', 'values = ["vegas", "vegas-a"]\nlabels = ["v"]'))
    assert "variant[1].axis[0].labels: has 1 labels but the axis has 2 values" in str(err)


def test_an_unknown_key_in_a_grid_or_a_variant_is_an_error(tmp_path):
    err = _error(tmp_path, GRID.replace('name = "{cc}-q{limit}"', 'name = "{cc}-q{limit}"\nseeds = 3'))
    assert "variant[1].seeds: unknown field; a grid (a [[variant]] with axis) takes name, set, published, axis" in str(err)
    err = _error(tmp_path, GRID.replace('name = "last"', 'name = "last"\naxes = []'))
    assert "variant[2].axes: unknown field; a variant takes name, set, published (and axis, for a grid)" in str(err)


def test_a_template_name_without_axes_is_an_error(tmp_path):
    err = _error(tmp_path, GRID.replace('name = "last"', 'name = "last-{x}"'))
    assert "variant[2].name: 'last-{x}' is a name template but the variant has no [[variant.axis]]" in str(err)
