"""A scenario's own BPF congestion control (``cc = { bpf = "algo.bpf.o" }``) on the testbed,
without root: the plan finds the object as the core does, refuses a missing or changed one and
names that would clash in the kernel; the object checks (one struct_ops map, the kernel's
CONFIG_HZ); what a crashed run's clean-up unregisters; and the kernel's registrations read by
the congestion control's own name.

The normalised documents here are the simulator's for the example scenarios with a flow's
algorithm replaced by the ``{"Bpf": ...}`` record the core writes for ``cc = { bpf = ... }``
(its form: docs/testbed.md), so the plan is checked on exactly what it reads."""
from __future__ import annotations

import gzip
import hashlib
import shutil
from pathlib import Path

import pytest

from vegaslab import kernel
from vegaslab.simulation import normalize, validate
from vegaslab.testbed import bpfobject, kernelstate, struct_ops
from vegaslab.testbed.bpfobject import kernel_hz, refuse_other_hz, refuse_unless_one_map, struct_ops_maps
from vegaslab.testbed.errors import TestbedError
from vegaslab.testbed.plan import PlanError, plan
from vegaslab.scenario import referenced_path

ROOT = Path(__file__).resolve().parents[1]
TWO_FLOWS = ROOT / "examples" / "kernel" / "b-vegas-reno.toml"  # flows vegas1 and reno2
BUILT_VEGAS = ROOT / "kernel" / "build" / "vl_vegas.bpf.o"


def _object(directory: Path, name: str = "algo.bpf.o", content: bytes = b"\x7fELF an object") -> Path:
    path = directory / name
    path.write_bytes(content)
    return path


def _record(written: str, data: bytes, name: str = "my_cc", hz: int = 250) -> dict:
    return {"Bpf": {"path": written, "name": name, "map": name, "hz": hz, "sha256": hashlib.sha256(data).hexdigest()}}


def _doc(**algorithms) -> tuple[dict, dict[str, str]]:
    """The normalised two-flow scenario with the named flows' algorithms replaced, and each
    flow's cc name as the core reports it (``bpf:<name>`` for an object)."""
    doc = normalize(TWO_FLOWS)
    ccs = {f["name"]: f["cc"] for f in validate(TWO_FLOWS)["flows"]}
    for flow in doc["flows"]:
        if flow["name"] in algorithms:
            flow["algorithm"] = algorithms[flow["name"]]
            ccs[flow["name"]] = f"bpf:{flow['algorithm']['Bpf']['name']}"
    return doc, ccs


@pytest.fixture
def scenario_dir(tmp_path):
    """A directory holding a scenario file, against which relative object paths are read."""
    (tmp_path / "scenario.toml").write_text("# the scenario's file\n")
    return tmp_path


def test_a_bpf_flow_runs_its_own_object_under_the_objects_congestion_control_name(scenario_dir):
    obj = _object(scenario_dir)
    p = plan(*_doc(vegas1=_record("algo.bpf.o", obj.read_bytes())), source=str(scenario_dir / "scenario.toml"))
    assert [(f.name, f.cc) for f in p.flows] == [("vegas1", "my_cc"), ("reno2", "reno")]
    assert p.kernel_algorithms == {}  # nothing of vegaslab's own to register
    (only,) = p.bpf_objects.values()
    assert (only.path, only.name, only.field) == (scenario_dir / "algo.bpf.o", "my_cc", "flows (vegas1).cc.bpf")


def test_a_relative_object_path_is_read_from_the_scenario_files_directory_as_the_core_does(scenario_dir, tmp_path,
                                                                                          monkeypatch):
    source = str(scenario_dir / "scenario.toml")
    assert referenced_path(source, "sub/a.o") == scenario_dir / "sub" / "a.o"
    assert referenced_path(source, "/abs/a.o") == Path("/abs/a.o")
    # A scenario that is no file (a TOML text): the working directory, as in the core.
    assert referenced_path("<string>", "a.o") == Path("a.o")
    obj = _object(scenario_dir)
    record = _record("algo.bpf.o", obj.read_bytes())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with pytest.raises(PlanError, match=r"flows \(vegas1\).cc.bpf: algo.bpf.o cannot be read"):
        plan(*_doc(vegas1=record), source="<string>")
    assert plan(*_doc(vegas1=record), source=source).flows[0].cc == "my_cc"


def test_a_missing_object_is_refused_in_one_sentence_naming_the_field_and_the_file(scenario_dir):
    with pytest.raises(PlanError, match=r"^flows \(reno2\).cc.bpf: .*/gone.bpf.o cannot be read \(No such file or "
                                        r"directory\); a relative path is read from the scenario file's directory$"):
        plan(*_doc(reno2=_record("gone.bpf.o", b"")), source=str(scenario_dir / "scenario.toml"))


def test_an_object_whose_bytes_are_not_the_ones_the_scenario_was_read_with_is_refused(scenario_dir):
    obj = _object(scenario_dir)
    record = _record("algo.bpf.o", obj.read_bytes())
    obj.write_bytes(b"\x7fELF another object")
    with pytest.raises(PlanError, match=r"flows \(vegas1\).cc.bpf: .*algo.bpf.o is not the object the scenario was read "
                                        r"with \(its SHA-256 is [0-9a-f]{16}\.\.\., the normalised scenario records"):
        plan(*_doc(vegas1=record), source=str(scenario_dir / "scenario.toml"))


def test_flows_may_share_an_object_but_two_objects_may_not_share_a_name(scenario_dir):
    source = str(scenario_dir / "scenario.toml")
    one = _object(scenario_dir, "one.bpf.o", b"one")
    two = _object(scenario_dir, "two.bpf.o", b"two")
    shared = plan(*_doc(vegas1=_record("one.bpf.o", one.read_bytes()), reno2=_record(str(one), one.read_bytes())),
                  source=source)
    assert [f.cc for f in shared.flows] == ["my_cc", "my_cc"] and len(shared.bpf_objects) == 2
    with pytest.raises(PlanError, match=r"flows \(reno2\).cc.bpf: .*two.bpf.o and flows \(vegas1\).cc.bpf's .*one.bpf.o are "
                                        r"different objects with the same congestion-control name my_cc"):
        plan(*_doc(vegas1=_record("one.bpf.o", b"one"), reno2=_record("two.bpf.o", two.read_bytes())), source=source)


@pytest.mark.parametrize("name, message", [
    ("reno", r"flows \(vegas1\).cc.bpf: the object's congestion control is named reno, as one the kernel has built in"),
    # The other flow runs vegaslab's Vegas, which registers vl_vegas.
    ("vl_vegas", r"flows \(reno2\).cc.bpf: the object's congestion control is named vl_vegas, as flow vegas1's "
                 r"algorithm in the kernel is"),
])
def test_an_object_may_not_take_the_name_of_a_built_in_or_of_another_flows_kernel_algorithm(scenario_dir, name,
                                                                                             message):
    obj = _object(scenario_dir)
    flow = "vegas1" if name == "reno" else "reno2"
    with pytest.raises(PlanError, match=message):
        plan(*_doc(**{flow: _record("algo.bpf.o", obj.read_bytes(), name=name)}),
             source=str(scenario_dir / "scenario.toml"))


def _bpf(tmp_path, name="bpf_cubic", hz=250) -> bpfobject.BpfObject:
    return bpfobject.BpfObject(field="flows (f1).cc.bpf", path=tmp_path / "x.bpf.o", name=name, map="cubic",
                               sha256="0" * 64, hz=hz)


def test_an_object_with_several_struct_ops_maps_is_refused_as_bpftool_registers_them_all(tmp_path):
    obj = _bpf(tmp_path)
    refuse_unless_one_map(obj, ["cubic"])
    with pytest.raises(TestbedError, match=r"^flows \(f1\).cc.bpf: .*x.bpf.o declares 2 struct_ops maps \(dctcp, "
                                           r"dctcp_nouse\) and bpftool registers every one of them, with no way to "
                                           r"register only 'cubic'; the testbed runs objects with a single struct_ops map$"):
        refuse_unless_one_map(obj, ["dctcp", "dctcp_nouse"])
    with pytest.raises(TestbedError, match=r"declares no struct_ops map"):
        refuse_unless_one_map(obj, [])


def test_an_object_the_simulator_runs_at_another_hz_than_the_kernels_is_refused(tmp_path):
    refuse_other_hz(_bpf(tmp_path, hz=250), 250)
    refuse_other_hz(_bpf(tmp_path, hz=1000), None)  # the kernel's is unknown: nothing to compare
    with pytest.raises(TestbedError, match=r"^flows \(f1\).cc.hz: the simulator runs x.bpf.o with CONFIG_HZ 1000, "
                                           r"but this kernel's is 250 .*; set hz = 250$"):
        refuse_other_hz(_bpf(tmp_path, hz=1000), 250)


def test_the_kernels_hz_is_read_from_its_gzipped_or_plain_configuration(tmp_path):
    gz, plain = tmp_path / "config.gz", tmp_path / "config-6.18"
    gz.write_bytes(gzip.compress(b"# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"))
    plain.write_text("CONFIG_HZ=1000\n")
    assert kernel_hz((tmp_path / "absent", gz, plain)) == 250
    assert kernel_hz((plain, gz)) == 1000
    assert kernel_hz((tmp_path / "absent",)) is None


needs_built_object = pytest.mark.skipif(shutil.which("bpftool") is None or not BUILT_VEGAS.is_file(),
                                        reason="needs bpftool and kernel/build/vl_vegas.bpf.o (make bpf)")


@needs_built_object
def test_the_struct_ops_maps_of_an_object_are_read_from_its_btf_without_privileges():
    assert struct_ops_maps(BUILT_VEGAS) == ["vl_vegas"]


@needs_built_object
def test_compare_refuses_what_the_testbed_cannot_run_before_the_simulator_runs(tmp_path, monkeypatch):
    from vegaslab.testbed import compare as compare_module

    monkeypatch.setattr(compare_module, "simulate", lambda *a, **k: pytest.fail("the simulator ran"))
    monkeypatch.setattr(bpfobject, "kernel_hz", lambda: 250)
    shutil.copy(BUILT_VEGAS, tmp_path / "mine.bpf.o")
    scenario = tmp_path / "two.toml"
    scenario.write_text(TWO_FLOWS.read_text().replace('params = { flavour = "linux" }\n', ""))  # an object has none
    with pytest.raises(TestbedError, match=r"^flows \(vegas1\).cc.hz: the simulator runs mine.bpf.o with CONFIG_HZ "
                                           r"1000, but this kernel's is 250"):
        compare_module.compare(scenario, overrides=['flows[0].cc={ bpf = "mine.bpf.o", hz = 1000 }'],
                               out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


# `bpftool -j struct_ops dump` as this kernel prints it for the selftests' bpf_cubic (its map is
# the variable `cubic`; the congestion control is `bpf_cubic`), trimmed to the keys read.
_DUMP = ('[{"bpf_map_info":{"id":12490,"name":"cubic"}},{"bpf_struct_ops_tcp_congestion_ops":{"common":{"state":'
         '"BPF_STRUCT_OPS_STATE_INUSE"},"data":{"name":"bpf_cubic"}}},{"bpf_map_info":{"id":7,"name":"vl_vegas"}},'
         '{"bpf_struct_ops_tcp_congestion_ops":{"common":{"state":"BPF_STRUCT_OPS_STATE_TOBEFREE"},"data":'
         '{"name":"vl_vegas"}}}]')


def test_registrations_are_named_by_the_congestion_control_not_the_map(monkeypatch):
    class Done:
        stdout = _DUMP

    monkeypatch.setattr(kernel, "run_command", lambda *a, **k: Done())
    assert struct_ops.registrations() == [struct_ops.Registration(12490, "cubic", "bpf_cubic", False),
                                          struct_ops.Registration(7, "vl_vegas", "vl_vegas", True)]
    assert [r.id for r in struct_ops.registered_as("bpf_cubic")] == [12490]
    assert struct_ops.registered_as("cubic") == [] and struct_ops.registered_as("vl_vegas") == []  # draining


def test_the_kernel_lists_a_registration_by_its_congestion_controls_name(monkeypatch):
    """``vegaslab kernel list`` names bpf_cubic, not its map ``cubic`` (a built-in's name)."""
    class Done:
        stdout = _DUMP

    monkeypatch.setattr(kernel, "run_command", lambda *a, **k: Done())
    monkeypatch.setattr(kernel, "check", lambda: None)
    monkeypatch.setattr(kernel.Path, "read_text", lambda self, *a, **k: "reno cubic bpf_cubic vl_vegas")
    assert kernel.registered() == ["bpf_cubic"]  # vl_vegas is draining


def test_a_dead_runs_objects_are_unregistered_by_id_except_what_a_live_run_shares(monkeypatch):
    gone = []
    monkeypatch.setattr(struct_ops, "unregister", lambda reg_id, name: gone.append((reg_id, name)))
    live = {"tag": "k-live", "objects": [{"name": "shared_cc", "sha256": "a", "id": 5}]}
    monkeypatch.setattr(kernelstate, "live_states", lambda: [live])
    dead = {"tag": "k-dead", "registrations": [], "allowed_added": [], "objects": [
        {"name": "bpf_cubic", "sha256": "b", "id": 12490},
        {"name": "shared_cc", "sha256": "a", "id": 5},
        # Stopped while registering: no id, so every live registration of the name.
        {"name": "half_done", "sha256": "c", "id": None},
    ]}
    assert kernelstate.undo(dead) == []
    assert gone == [(12490, "bpf_cubic"), (None, "half_done")]
