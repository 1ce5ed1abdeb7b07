"""Simulator or set-up? A study's default point in ns-2.35: the claim and the
figure judged on ns-2's runs as on ours, variants the bridge cannot express named, the runs
cached. On a tiny catalog of two-second runs; ns-2 tests skip when ``ns`` is not on PATH
(unless VEGASLAB_REQUIRE_NS2=1)."""
from __future__ import annotations

import os
import shutil

import pytest
from scenario_text import ONE_LINK

from vegaslab.study import robustness as rb
from vegaslab.study import ns2_check as robustness_ns2

needs_ns = pytest.mark.skipif(shutil.which("ns") is None and os.environ.get("VEGASLAB_REQUIRE_NS2") != "1",
                              reason="ns-2 ('ns') not on PATH")

ENTRY = """
[meta]
id = "tiny"
title = "two flows over one link"
paper = "test"

[[meta.claim]]
text = "Vegas gets less than Reno"
expr = "vegas:f1.delivered_pkts < reno:f1.delivered_pkts * 2"

[[meta.claim]]
text = "Reno's mean window is above 1"
expr = "reno:f1.mean_cwnd_pkts > 1"

[run]
duration = "2s"

""" + ONE_LINK + """
[monitor]
cwnd = true

[[variant]]
name = "reno"
set = { "flows[0].cc" = "reno" }

[[variant]]
name = "vegas"
set = { "flows[0].cc" = "vegas" }

[[variant]]
name = "vegas-a"
set = { "flows[0].cc" = "vegas-a" }
"""

STUDY = """
[study]
entry = "tiny"
claim = "{claim}"
conclusion = "a test conclusion"
default_reason = "it is a test."
seeds = 10
variants = {variants}

[study.figure]
expr = "{figure}"
label = "a test figure"

[[study.factor]]
name = "bandwidth"
path = "links[0].bandwidth"
values = ["1Mbps", "2Mbps"]
default = "1Mbps"
reason = "not given"
"""


def _study(tmp_path, *, claim="Vegas gets less than Reno", variants='["reno", "vegas"]',
           figure="vegas:f1.delivered_pkts / reno:f1.delivered_pkts"):
    catalog, studies = tmp_path / "catalog", tmp_path / "studies"
    catalog.mkdir(exist_ok=True)
    studies.mkdir(exist_ok=True)
    (catalog / "tiny.toml").write_text(ENTRY)
    (studies / "tiny.toml").write_text(STUDY.format(claim=claim, variants=variants, figure=figure))
    st = rb.load_study(studies / "tiny.toml")
    return rb.run_study(st, tmp_path / "store", catalog=catalog, scheduler="synchronous")


@needs_ns
def test_ns2_judges_the_claim_and_measures_the_figure_on_its_own_runs(tmp_path):
    r = _study(tmp_path)
    rb.check_ns2(r, tmp_path / "store")
    c = r.ns2
    assert c.status == "same conclusion", c
    assert c.variants == {"reno": "ran", "vegas": "ran"}
    assert c.our_figure == r.default.values[0]       # our figure at the same (first) seed
    assert c.ns2_figure is not None and c.flows_compared == 2
    # Reno and Vegas on a clean link: the bridge's differential tests hold these to the packet.
    assert c.flow_diff == 0 and c.ns2_figure == c.our_figure
    assert "same conclusion" in robustness_ns2.describe(c)


@needs_ns
def test_a_second_check_reads_ns2s_runs_from_the_cache(tmp_path, monkeypatch):
    r = _study(tmp_path)
    rb.check_ns2(r, tmp_path / "store")
    first = r.ns2.to_dict()

    def no_ns(*a, **k):
        raise AssertionError("ns-2 ran again")

    monkeypatch.setattr("vegaslab.ns2.run_normalized", no_ns)
    rb.check_ns2(r, tmp_path / "store")
    assert r.ns2.to_dict() == first


@needs_ns
def test_a_variant_ns2_cannot_express_is_named_and_the_others_still_compared(tmp_path):
    r = _study(tmp_path, variants='["reno", "vegas-a"]',
               figure="vegas-a:f1.delivered_pkts / reno:f1.delivered_pkts")
    rb.check_ns2(r, tmp_path / "store")
    c = r.ns2
    assert c.status == "not expressible"
    assert c.variants["reno"] == "ran" and c.variants["vegas-a"].startswith("not expressible:")
    assert "vegas-a" in c.detail and c.flows_compared == 1
    assert c.ns2_figure is None and c.ns2_claim is None   # never judged on part of the data


@needs_ns
def test_a_claim_on_the_mean_window_reads_ns2s_traced_cwnd(tmp_path):
    r = _study(tmp_path, claim="Reno's mean window is above 1", variants='["reno"]', figure="reno:f1.mean_cwnd_pkts")
    rb.check_ns2(r, tmp_path / "store")
    assert r.ns2.status == "same conclusion", r.ns2
    # ns-2's trace has 10 us and 0.001-packet precision: the same mean to about 1e-5.
    assert r.ns2.ns2_figure == pytest.approx(r.ns2.our_figure, rel=1e-4)


@needs_ns
def test_a_claim_on_data_ns2_does_not_record_is_not_measurable_never_a_verdict(tmp_path):
    r = _study(tmp_path, claim="Reno's mean window is above 1", variants='["reno"]', figure="reno:f1.slow_start_entries")
    rb.check_ns2(r, tmp_path / "store")
    assert r.default.status == "holds"                    # ours counts slow starts
    assert r.ns2.status == "not measurable" and "slow_start_entries" in r.ns2.detail
    assert r.ns2.ns2_figure is None


def test_without_ns2_the_check_says_so(tmp_path, monkeypatch):
    r = _study(tmp_path)
    monkeypatch.setattr("vegaslab.ns2.ns_available", lambda: False)
    rb.check_ns2(r, tmp_path / "store")
    assert r.ns2.status == "ns-2 not installed"
    assert "install-ns2" in robustness_ns2.describe(r.ns2)


def test_ns2_output_reads_as_results_with_the_cores_delivered_meaning():
    out = {"meta": {"scenario": "x", "simulator": "ns-2", "ns_version": "2.35", "seed": 1, "duration_s": 2.0,
                    "script": "..."},
           "flows": [{"flow": "f1", "cc": "reno", "delivered_pkts": 90, "delivered_bytes": 90000,
                      "sink_delivered_pkts": 93, "sink_delivered_bytes": 93000, "throughput_bps": 1.0}],
           "queues": [], "links": []}
    r = robustness_ns2.as_results(out)
    assert list(r.flows["delivered_pkts"]) == [93] and list(r.flows["delivered_bytes"]) == [93000]
    assert r.meta["duration_s"] == 2.0 and "script" not in r.meta


@needs_ns
def test_an_ns2_run_that_fails_is_an_error_not_a_missing_feature(tmp_path, monkeypatch):
    from vegaslab.ns2 import NS2Error

    r = _study(tmp_path)

    def crash(*a, **k):
        raise NS2Error("ns failed (exit 1) in /tmp/x:\nsegfault")

    monkeypatch.setattr("vegaslab.ns2.run_normalized", crash)
    rb.check_ns2(r, tmp_path / "store")
    assert r.ns2.status == "error" and "failed in ns-2" in r.ns2.detail
    assert r.ns2.ns2_claim is None
