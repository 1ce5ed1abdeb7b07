"""The kernel side of a testbed run: the run's BPF algorithms are registered
and every algorithm it uses is in the allowed-congestion-control list while it runs; both are
undone on exit, on an error and, after a SIGKILL, at the next start. Needs root and the BPF
tools (see test_kernel.py); about 10 s."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from vegaslab import kernel
from kernel_requirements import skip_unless, unavailable

REASON = unavailable(kernel.check)
pytestmark = skip_unless(REASON)

FLOWS = {"f1": ("vegas", {"alpha": 2, "beta": 4}), "f2": ("vegas", {"alpha": 2, "beta": 4})}
NAMES = ["vl_vegas", "cubic", "reno"]


def _session():
    from vegaslab.testbed.session import KernelSession

    return KernelSession(FLOWS, NAMES)


def _struct_ops_id(name: str) -> int:
    out = subprocess.run(["bpftool", "-j", "struct_ops", "show", "name", name], capture_output=True, text=True)
    (entry,) = json.loads(out.stdout)  # bpftool -j gives a list
    return entry["id"]


def test_a_session_registers_and_allows_its_algorithms_and_restores_the_list_on_exit():
    from vegaslab.testbed.session import allowed

    before = allowed()
    assert "vl_vegas" not in before and "cubic" not in before, before  # a precondition of the test
    with _session():
        now = allowed()
        assert "vl_vegas" in kernel.registered()
        assert kernel.parameters("vl_vegas")["vl_alpha"] == 2
        assert set(now) == set(before) | {"vl_vegas", "cubic"} and now[: len(before)] == before
    assert allowed() == before
    assert "vl_vegas" not in kernel.registered()


def test_a_session_is_undone_when_the_run_inside_it_fails():
    from vegaslab.testbed.session import allowed

    before = allowed()
    with pytest.raises(ZeroDivisionError):
        with _session():
            1 / 0  # noqa: B018
    assert allowed() == before and "vl_vegas" not in kernel.registered()


OWNER = textwrap.dedent("""
    import time
    from vegaslab.testbed.session import KernelSession
    with KernelSession({"f": ("vegas", {"alpha": 2, "beta": 4})}, ["vl_vegas", "cubic"]) as s:
        print(s.tag, flush=True)
        time.sleep(60)
""")


def test_the_next_start_undoes_what_a_sigkilled_run_left_registered_and_allowed():
    from vegaslab.testbed import network
    from vegaslab.testbed.session import allowed

    before = allowed()
    p = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True)
    tag = p.stdout.readline().strip()
    p.kill()
    p.wait()
    state = json.loads((network.STATE_DIR / f"{tag}.json").read_text())
    assert state["registrations"] == ["vl_vegas"] and set(state["allowed_added"]) == {"vl_vegas", "cubic"}
    assert "vl_vegas" in kernel.registered() and "vl_vegas" in allowed()  # left behind by the kill
    network.remove_stale()  # what every Network and KernelSession start does first
    assert allowed() == before and "vl_vegas" not in kernel.registered()
    assert not (network.STATE_DIR / f"{tag}.json").exists()


def test_a_stale_session_leaves_alone_what_a_live_session_still_uses():
    from vegaslab.testbed import network
    from vegaslab.testbed.session import allowed

    before = allowed()
    with _session():
        # A second run with the same algorithm starts while this one is live, and is SIGKILLed.
        p = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True)
        tag = p.stdout.readline().strip()
        p.kill()
        p.wait()
        network.remove_stale()
        assert not (network.STATE_DIR / f"{tag}.json").exists()
        # Its cleanup must not take away what this live run holds.
        assert "vl_vegas" in kernel.registered() and {"vl_vegas", "cubic"} <= set(allowed())
    assert allowed() == before and "vl_vegas" not in kernel.registered()


def test_a_second_run_shares_a_registration_with_the_same_parameters_and_is_refused_with_others():
    from vegaslab.testbed.session import KernelSession, TestbedError

    with _session():
        ident = _struct_ops_id("vl_vegas")
        with KernelSession({"f": ("vegas", {"alpha": 2, "beta": 4})}, ["vl_vegas"]):
            assert _struct_ops_id("vl_vegas") == ident  # used as it is, not registered again
        assert "vl_vegas" in kernel.registered()  # the first run still holds it
        with pytest.raises(TestbedError, match=r"vl_vegas is registered by another testbed run \(pid \d+\)"):
            with KernelSession({"f": ("vegas", {"alpha": 3, "beta": 4})}, ["vl_vegas"]):
                pass
        assert kernel.parameters("vl_vegas")["vl_alpha"] == 2
    assert "vl_vegas" not in kernel.registered()
