"""``vegaslab new-cc NAME --bpf``: the skeleton is written whether or not clang is installed, and
the build step (``new-cc`` itself, then ``make``) says clearly when clang is missing; names Linux
or C cannot take are refused before anything is written; the C source compiles with clang alone
(no header of any kind) and Linux's verifier accepts the object (root, bpftool, BTF). The
skeleton in the simulator is run by docs/your-algorithm.md's BPF part (tests/test_your_algorithm.py).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_requirements import skip_unless, unavailable
import vegaslab
from vegaslab import cli, kernel
from vegaslab.cli import new_cc_bpf

FILES = {"my_cc.bpf.c", "Makefile", "scenario.toml", "test_my_cc.py"}


def _clang() -> None:
    if shutil.which("clang") is None:
        raise RuntimeError("clang is not installed (scripts/install-bpf.sh installs it)")


def test_without_clang_the_skeleton_is_written_and_the_build_step_names_what_to_install(tmp_path, monkeypatch,
                                                                                          capsys):
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    out = tmp_path / "my_cc"
    assert cli.main(["new-cc", "my_cc", "--bpf", "--out", str(out)]) == 1
    assert {p.name for p in out.iterdir()} == FILES
    err = capsys.readouterr().err
    assert "clang is not on PATH" in err and "my_cc.bpf.o was not built" in err and "apt-get install clang" in err
    assert err.count("\n") == 1


def test_without_clang_make_refuses_in_one_sentence_naming_what_to_install(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    for name, text in new_cc_bpf.skeleton("my_cc").items():
        (tmp_path / name).write_text(text)
    p = subprocess.run(["make", "CLANG=no-such-clang"], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode != 0
    assert "no-such-clang is not on PATH: install clang" in p.stderr
    assert not (tmp_path / "my_cc.bpf.o").exists()


@pytest.mark.parametrize("name, says", [
    ("a_name_of_sixteen", "at most 15 characters"),
    ("int", "C keyword"),
    ("My-Reno", "Python module name"),
])
def test_a_name_linux_or_c_cannot_take_is_refused_before_anything_is_written(tmp_path, capsys, name, says):
    out = tmp_path / "skeleton"
    assert cli.main(["new-cc", name, "--bpf", "--out", str(out)]) == 2
    assert says in capsys.readouterr().err
    assert not out.exists()


def test_the_same_names_are_fine_for_a_python_skeleton(tmp_path):
    assert cli.main(["new-cc", "a_name_of_sixteen", "--python", "--out", str(tmp_path / "py")]) == 0


def test_an_existing_file_is_never_replaced(tmp_path, capsys):
    (tmp_path / "Makefile").write_text("mine\n")
    assert cli.main(["new-cc", "my_cc", "--bpf", "--out", str(tmp_path)]) == 2
    assert "Makefile: exists" in capsys.readouterr().err
    assert (tmp_path / "Makefile").read_text() == "mine\n"
    assert not (tmp_path / "my_cc.bpf.c").exists()


@skip_unless(unavailable(_clang))
def test_the_source_compiles_with_clang_alone_without_any_header(tmp_path):
    assert cli.main(["new-cc", "my_cc", "--bpf", "--out", str(tmp_path)]) == 0
    source = (tmp_path / "my_cc.bpf.c").read_text()
    assert "#include" not in source
    argv = new_cc_bpf.clang_argv("my_cc")
    p = subprocess.run([*argv[:-2], "-nostdinc", "-Werror", "-o", str(tmp_path / "bare.o")], cwd=tmp_path,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "my_cc.bpf.o").read_bytes()[:4] == b"\x7fELF"


@skip_unless(unavailable(kernel.check))
def test_linux_registers_the_object_and_a_loopback_connection_uses_it(tmp_path):
    """The skeleton's own kernel test, run for real: it must pass, not skip."""
    assert cli.main(["new-cc", "newcc_probe", "--bpf", "--out", str(tmp_path)]) == 0
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                        "test_newcc_probe.py", "-k", "linux_registers"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "1 passed" in p.stdout, p.stdout + p.stderr
    listed = subprocess.run(["bpftool", "struct_ops", "list"], capture_output=True, text=True).stdout
    assert "newcc_probe" not in listed


@skip_unless(unavailable(_clang))
def test_a_field_the_simulator_lacks_is_refused_listing_the_offered_fields(tmp_path):
    """An object that reads a field Linux has and the simulator does not (``rcv_nxt``) is
    refused with the list of what the simulator offers: the registry's, which
    docs/bpf-objects.md shows."""
    pytest.importorskip("vegaslab._core")
    assert cli.main(["new-cc", "my_cc", "--bpf", "--out", str(tmp_path)]) == 0
    source = (tmp_path / "my_cc.bpf.c").read_text()
    source = source.replace("\t__u32 prior_cwnd; ", "\t__u32 rcv_nxt;\n\t__u32 prior_cwnd; ", 1)
    source = source.replace("return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;", "return tp->rcv_nxt;")
    (tmp_path / "reads_rcv_nxt.bpf.c").write_text(source)
    subprocess.run(new_cc_bpf.clang_argv("reads_rcv_nxt"), cwd=tmp_path, check=True)
    with pytest.raises(vegaslab.ScenarioError) as refused:
        vegaslab.run(tmp_path / "scenario.toml", overrides={"flows[0].cc": {"bpf": "reads_rcv_nxt.bpf.o"}})
    message = str(refused.value)
    assert "tcp_sock.rcv_nxt in undo_cwnd" in message
    offered = re.search(r"it offers: ([\w., ]+)\)", message)
    assert offered, message
    from vegaslab import registry

    assert set(offered[1].split(", ")) == {f"{f.struct}.{f.member}" for f in registry.bpf().fields}
