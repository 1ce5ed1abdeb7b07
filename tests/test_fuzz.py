"""Fuzzing the scenario reader and the simulator: mutated catalog and
hand-written scenarios must never crash, hang or panic, and an accepted one must never give an
impossible result. The machinery (case generation, sandboxed worker, result checks) is in
``tests/fuzzer.py``; the long run is ``make fuzz`` (scripts/fuzz.py).

The quick property test is derandomised (the same cases every run) and sized to stay well
under a minute on two cores; hypothesis does not shrink here (each try is a subprocess round
trip, and a hang costs the whole timeout), so a failure reports the first failing case as it
was generated, with its TOML and overrides. Explicit examples pin inputs known to have broken it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("vegaslab._core")
from hypothesis import HealthCheck, Phase, example, given, settings  # noqa: E402

import fuzzer as fuzz  # noqa: E402 - tests/fuzzer.py, the fuzzing tool
from fuzzer import Case  # noqa: E402

QUICK_EXAMPLES = 500
#: No answer within this is a hang. A hang never answers; the slowest case answers in about
#: 1.6 s on an idle machine (its 1.5 s budget, then the worker stops the run), several times
#: that on a busy one, so a minute tells the two apart on any host (and costs nothing until a
#: case hangs).
QUICK_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def worker():
    with fuzz.Worker(timeout_s=QUICK_TIMEOUT_S, budget_s=1.5) as w:
        yield w


def _assert_passes(worker, case: Case) -> fuzz.Outcome:
    outcome = worker.run(case)
    assert not outcome.failed, "\n" + fuzz.describe(case, outcome, limit=3000)
    return outcome


@pytest.mark.parametrize("name", sorted(fuzz.bases()))
def test_every_unmutated_base_scenario_runs_and_passes_the_result_checks(worker, name):
    # The fuzzer's starting points must themselves be valid and pass every check, or the
    # mutants would only ever test the reader (and the checks would be shown too strict).
    outcome = _assert_passes(worker, Case(base=name))
    assert outcome.category == "ok", outcome.detail


@settings(max_examples=QUICK_EXAMPLES, derandomize=True, database=None, deadline=None,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])
@given(case=fuzz.cases())
# Inputs that broke it once, so the quick run always covers them:
@example(case=Case("min-two-hop", overrides=["a." * 50_000 + "b=1"]))                   # SIGSEGV in overrides
@example(case=Case("min-two-hop", ops=[["set", ["run", "sample_interval"], "1ns"],
                                       ["set", ["monitor"], {"cwnd": True, "throughput": True}]]))  # abort
@example(case=Case("min-two-hop", ops=[["set", ["links", 1, "bandwidth"], "1e-300bps"]]))  # utilisation 4.5e11
@example(case=Case("min-two-hop", ops=[["set", ["links", 0, "delay_trace"], "/dev/zero"]]))
@example(case=Case("min-two-hop", ops=[["set", ["links", 0, "delay_trace"], "fifo.csv"]],
                   files={"fifo.csv": {"fifo": True}}))
@example(case=Case("min-two-hop", ops=[["set", ["links", 0, "delay_trace"], "trace.csv"]],
                   files={"trace.csv": {"text": "0 18446744073709551616s\n"}}))
@example(case=Case("min-two-hop", ops=[["set", ["links", 0, "bandwidth"], "100Gbps"],
                                       ["set", ["links", 0, "delay"], "0ms"],
                                       ["set", ["flows", 0, "tcp"], {"packet_size": 1}]]))  # livelock
@example(case=Case("min-two-hop", ops=[["chain", 20_000]]))                                # express-hop recursion
@example(case=Case("min-dumbbell", ops=[["set", ["dumbbell", "pairs"], 30_000]]))          # 14 GB routing table
@example(case=Case("min-two-hop", ops=[["set", ["flows", 0, "name"], "a\nputs [exec id]\n#"]], api="validate"))
@example(case=Case("min-two-hop", ops=[["set", ["run", "duration"], "1e9s"],
                                       ["set", ["monitor"], {"throughput": True}]]))
# Found by `make fuzz` (10,000 cases, seed 0) on the code of this commit:
@example(case=Case("av-two-users", ops=[["set", ["run", "sample_interval"], "1us"]]))      # 4M samples: MemoryError
@example(case=Case("min-two-hop", ops=[["rename", ["run"], ""]]))                         # key "" not named
def test_mutated_scenarios_never_crash_hang_panic_or_give_impossible_results(worker, case):
    _assert_passes(worker, case)


# ---------------------------------------------------------------------- the fuzzer's own parts
# These check that the harness can see each kind of failure (a property test whose oracle is
# blind would pass forever).


def test_a_worker_killed_by_a_signal_is_reported_as_a_crash_and_the_worker_restarts(tmp_path):
    with fuzz.Worker(tmp_path, timeout_s=30) as w:
        w.start()
        w.proc.send_signal(__import__("signal").SIGSEGV)
        w.proc.wait()
        # The next case finds the worker dead and restarts it.
        assert w.run(Case("min-two-hop")).category == "ok"
        assert w.restarts == 2


def test_a_case_that_does_not_answer_in_time_is_a_hang(tmp_path):
    with fuzz.Worker(tmp_path, timeout_s=0.01) as w:
        outcome = w.run(Case("wf-net3"))
        assert outcome.category == "hang"
        assert w.proc is None  # killed, restarted on the next case


def test_panic_text_on_stderr_fails_even_when_the_call_returned():
    outcome = fuzz.classify({"status": "ok", "violations": []},
                            "thread 'main' panicked at src/sim.rs:1:1:\nboom\n", 0.1)
    assert outcome.category == "panic"


def test_check_results_flags_utilisation_above_one_throughput_above_the_link_and_lost_packets(tmp_path):
    import vegaslab

    scenario = fuzz.write_case_dir(Case("min-udp-red"), tmp_path)
    res = vegaslab.run(scenario)
    assert fuzz.check_results(res) == []
    res.links.loc[0, "utilisation_ratio"] = 4.5e11
    res.flows.loc[0, "throughput_bps"] = 1e12
    res.flows.loc[0, "sent_pkts"] += 1
    res.udp.loc[0, "received_bytes"] = float("nan")
    problems = "\n".join(fuzz.check_results(res))
    for expected in ("utilisation_ratio", "throughput_bps", "conservation", "received_bytes is NaN"):
        assert expected in problems


def test_a_scenario_error_must_name_the_file_and_a_field():
    import vegaslab

    good = vegaslab.ScenarioError("/x/s.toml: flows[0].start: must be >= 0 s")
    good.field, good.kind = "flows[0].start", "out-of-range"
    assert fuzz._bad_scenario_error(good, "/x/s.toml") is None
    nameless = vegaslab.ScenarioError("/x/s.toml: must be >= 0 s")
    nameless.field, nameless.kind = "", "out-of-range"
    assert "no field" in fuzz._bad_scenario_error(nameless, "/x/s.toml")
    assert "file" in fuzz._bad_scenario_error(good, "/y/other.toml")


def test_cases_replay_to_the_same_bytes_so_failures_can_be_written_and_minimised():
    case = Case("min-udp-red", ops=[["del", ["links", 0, "delay_schedule"]], ["text", "dup_line", 3]],
                overrides=["run.duration=1s"])
    again = Case.from_json(case.to_json())
    assert fuzz.build_toml(case) == fuzz.build_toml(again)
    assert b"delay_schedule" not in fuzz.build_toml(case)


# ---------------------------------------------------------------------- files around a run
# The output directories of run, sweep and reproduce with things planted in them (links to
# files outside, FIFOs, huge and deep JSON): never a crash, hang or traceback, and nothing
# written or read outside the named directories (checked on every case: see tests/fuzzer.py).

QUICK_FS_EXAMPLES = 40
_SUMMARY = fuzz._SUMMARY_LIKE


@settings(max_examples=QUICK_FS_EXAMPLES, derandomize=True, database=None, deadline=None,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=fuzz.fs_cases())
# The audit's findings, each a case the quick run always covers:
@example(case=fuzz.FsCase("run", trace_file="../outside/victim.txt"))                          # 1
@example(case=fuzz.FsCase("run", trace_file="@outside/trace.tr"))                              # 1
@example(case=fuzz.FsCase("reproduce", {"robustness/tiny.json": {"json": {**_SUMMARY, "figures": ["/etc/passwd"]}}}))
@example(case=fuzz.FsCase("reproduce", {"robustness/tiny.json": {"json": {**_SUMMARY, "figures": ["tiny-0.png"]}},
                                        "robustness/tiny-0.png": {"link": "@secret"}}))        # 2
@example(case=fuzz.FsCase("sweep", {".lock": {"link": "@victim"}}, fresh=True))               # 3
@example(case=fuzz.FsCase("reproduce", {"summary.md": {"link": "@victim"}}))                   # 4
@example(case=fuzz.FsCase("sweep", {"data/{commit}/_commit.json": {"deep": 100_000}}, fresh=True))  # 5
@example(case=fuzz.FsCase("status", {"data/{commit}/_commit.json": {"link": "/dev/zero"}}))    # 5
@example(case=fuzz.FsCase("status", {"data/{commit}/_commit.json": {"fifo": True}}))           # 5
@example(case=fuzz.FsCase("reproduce", {"robustness/tiny.json": {"json": {"entry": "tiny"}}}))  # 7
@example(case=fuzz.FsCase("reproduce", {"results": {"link": "@dir"}}))
@example(case=fuzz.FsCase("reproduce", {"store": {"link": "@dir"}}, fresh=True))
# Found by `make fuzz` with planted directories (exit 1 before: unlink of a directory, a commit
# into a data/ that had gone):
@example(case=fuzz.FsCase("sweep", {"sweep-failures.json": {"dir": True}}))
@example(case=fuzz.FsCase("reproduce", {"store/data": {"remove": True}}, fresh=True))
@example(case=fuzz.FsCase("reproduce", {"robustness/tiny.json": {"json": {**fuzz._SUMMARY, "compute_s": 10**400}}}))
@example(case=fuzz.FsCase("sweep", {"_tmp": {"link": "@dir"}, "data/planted": {"link": "@dir"}}, fresh=True))
def test_planted_files_in_output_directories_are_never_followed_and_never_crash(worker, case):
    _assert_passes(worker, case)


def test_the_file_system_oracle_sees_a_write_through_a_planted_link(tmp_path, monkeypatch):
    # A blind oracle would pass forever: with the one rule switched off for summary.md (a
    # plain write that follows links), the case must fail as unsafe.
    import vegaslab.report.write as report

    def follows_links(directory, name, data, **_):
        path = Path(directory) / name
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
        return path

    monkeypatch.setattr(report, "write_file", follows_links)
    monkeypatch.setattr(fuzz, "_FS_TEMPLATES", {})
    home = tmp_path / "case"
    home.mkdir()
    verdict = fuzz._run_fs_case({"fs": fuzz.FsCase("reproduce", {"summary.md": {"link": "@victim"}}).to_json(),
                                 "home": str(home), "root": str(tmp_path), "scenario": str(home / "scenario.toml")})
    assert any("sentinel directory outside the output changed" in v for v in verdict["violations"]), verdict
