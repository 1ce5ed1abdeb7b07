"""A scenario's own BPF object (``cc = { bpf = ... }``) in the kernel: a testbed run registers
that very object, its sockets run its congestion control, and it is unregistered on exit, on
an error and after a SIGKILL; a name registered from anything else is refused and left alone.
Needs root and the BPF tools (see test_kernel.py); about 20 s.

The object is vegaslab's own ``kernel/build/vl_vegas.bpf.o`` (built by ``make -C kernel``),
registered as it is compiled, without the loader's parameters."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vegaslab import kernel
from vegaslab.testbed.network import check as network_check
from kernel_requirements import skip_unless, unavailable

REASON = unavailable(kernel.check, network_check)
pytestmark = skip_unless(REASON)

ROOT = Path(__file__).resolve().parents[1]
REROUTE_FAST = ["run.duration=3s", "links[0].bandwidth=20Mbps", "links[1].bandwidth=20Mbps",
                "links[2].bandwidth=20Mbps", "flows[0].tcp.window=100000"]


@pytest.fixture(scope="module")
def vegas_object() -> Path:
    return kernel.build() / "vl_vegas.bpf.o"


def _object(path: Path):
    from vegaslab.testbed.bpfobject import BpfObject

    return BpfObject(field="flows (f1).cc.bpf", path=path, name="vl_vegas", map="vl_vegas",
                     sha256=hashlib.sha256(path.read_bytes()).hexdigest(), hz=250)


def _live_ids() -> list[int]:
    from vegaslab.testbed import struct_ops

    return [r.id for r in struct_ops.registered_as("vl_vegas")]


def test_a_session_registers_the_object_itself_and_unregisters_it_by_its_id_on_exit(vegas_object):
    from vegaslab.testbed.session import KernelSession, allowed

    with KernelSession({}, ["vl_vegas"], [_object(vegas_object)]) as s:
        (ident,) = _live_ids()
        assert s.parameters()["vl_vegas"] == {"object": str(vegas_object), "struct_ops_id": ident,
                                              "sha256": _object(vegas_object).sha256}
        assert "vl_vegas" in allowed()
        # The object as compiled: its default parameters, not the loader's.
        assert kernel.parameters("vl_vegas")["vl_alpha"] == kernel.program_parameters("vegas")["vl_alpha"]
    assert _live_ids() == [] and "vl_vegas" not in allowed()


def test_a_name_registered_from_elsewhere_is_refused_and_left_registered(vegas_object):
    from vegaslab.testbed.session import KernelSession, TestbedError

    kernel.register("vegas", alpha=3, beta=6)  # vegaslab's loader, outside any testbed run
    try:
        (theirs,) = _live_ids()
        with pytest.raises(TestbedError, match=r"^flows \(f1\).cc.bpf: a congestion control named vl_vegas is already "
                                               rf"registered \(struct_ops map id {theirs}\) and was not registered by "
                                               r"a testbed run from this object"):
            with KernelSession({}, ["vl_vegas"], [_object(vegas_object)]):
                pass
        assert _live_ids() == [theirs] and kernel.parameters("vl_vegas")["vl_alpha"] == 3
    finally:
        kernel.unregister("vl_vegas")


def test_a_second_run_shares_the_same_objects_registration_and_is_refused_another_objects(vegas_object, tmp_path):
    from vegaslab.testbed.session import KernelSession, TestbedError

    # The same program with a byte after its ELF contents: another object (another SHA-256)
    # with the same congestion-control name, which libbpf loads alike.
    other = tmp_path / "other.bpf.o"
    other.write_bytes(vegas_object.read_bytes() + b"\0")
    with KernelSession({}, ["vl_vegas"], [_object(vegas_object)]):
        (ident,) = _live_ids()
        with KernelSession({}, ["vl_vegas"], [_object(vegas_object)]):
            assert _live_ids() == [ident]
        assert _live_ids() == [ident]  # the first run still holds it
        with pytest.raises(TestbedError, match=r"vl_vegas is registered by another testbed run \(pid \d+\) from a "
                                               r"different object"):
            with KernelSession({}, ["vl_vegas"], [_object(other)]):
                pass
        assert _live_ids() == [ident]
    assert _live_ids() == []


OWNER = textwrap.dedent("""
    import hashlib, sys, time
    from pathlib import Path
    from vegaslab.testbed.bpfobject import BpfObject
    from vegaslab.testbed.session import KernelSession
    path = Path(sys.argv[1])
    obj = BpfObject("flows (f1).cc.bpf", path, "vl_vegas", "vl_vegas", hashlib.sha256(path.read_bytes()).hexdigest(), 250)
    with KernelSession({}, ["vl_vegas"], [obj]) as s:
        print(s.tag, flush=True)
        time.sleep(60)
""")


def test_the_next_start_unregisters_the_object_a_sigkilled_run_left(vegas_object):
    from vegaslab.testbed import network

    p = subprocess.Popen([sys.executable, "-c", OWNER, str(vegas_object)], stdout=subprocess.PIPE, text=True)
    tag = p.stdout.readline().strip()
    p.kill()
    p.wait()
    state = json.loads((network.STATE_DIR / f"{tag}.json").read_text())
    (ident,) = _live_ids()  # left behind by the kill
    assert state["objects"] == [{"name": "vl_vegas", "sha256": _object(vegas_object).sha256, "id": ident}]
    network.remove_stale()  # what every Network and KernelSession start does first
    assert _live_ids() == [] and not (network.STATE_DIR / f"{tag}.json").exists()


def test_a_run_with_a_bpf_object_carries_data_on_sockets_using_that_objects_algorithm(vegas_object, tmp_path):
    from vegaslab.study.catalog import builtin_dir
    from vegaslab.testbed.run import run

    # A copy beside a scenario file, named relative to it, as a scenario would.
    shutil.copy(vegas_object, tmp_path / "mine.bpf.o")
    scenario = tmp_path / "reroute.toml"
    scenario.write_text((builtin_dir() / "va-reroute.toml").read_text())
    r = run(scenario, overrides=[*REROUTE_FAST, 'flows[0].cc={ bpf = "mine.bpf.o" }'], capture=False)
    assert r.flows.cc.iloc[0] == "bpf:vl_vegas"
    assert r.flows.goodput_bps.iloc[0] > 20e6 / 5, r.flows.goodput_bps.iloc[0]
    assert r.meta["testbed"]["socket_congestion_controls"] == {r.flows.flow.iloc[0]: "vl_vegas"}
    assert r.meta["testbed"]["kernel_parameters"]["vl_vegas"]["sha256"] == _object(vegas_object).sha256
    assert _live_ids() == []
