"""The BPF congestion controls in the running kernel: every algorithm registers,
lists, carries a real TCP transfer between two network namespaces and unregisters; parameters
are checked by the simulator's reader; the shared C decisions replay the Rust controllers'
decision vectors exactly where the simulator cannot replay them through the object itself.

These need root, BTF, clang and bpftool. Elsewhere they skip with the reason; ``make test``
sets VEGASLAB_REQUIRE_BPF=1 (and installs the tools), so there a missing piece is a failure.
"""
from __future__ import annotations

import gzip
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vegaslab import kernel
from kernel_requirements import simulator_loads, skip_unless, unavailable

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "crates" / "vegaslab-cc" / "tests" / "vectors"


REASON = unavailable(kernel.check)
pytestmark = skip_unless(REASON)


@pytest.fixture(scope="module")
def built():
    return kernel.build()


@pytest.fixture
def clean_registrations(built):
    """Leave no vegaslab registration behind, whatever the test did."""
    yield
    for name in kernel.registered():
        if name in kernel.ALGORITHMS.values():
            kernel.unregister(name)


def _available_ccs() -> set[str]:
    return set(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())


@pytest.mark.parametrize("cc", sorted(kernel.ALGORITHMS))
def test_each_algorithm_registers_lists_and_unregisters(cc, clean_registrations):
    name = kernel.register(cc)
    assert name == kernel.ALGORITHMS[cc] and len(name) <= 15
    assert name in kernel.registered()
    assert name in _available_ccs()
    kernel.unregister(name)
    assert name not in kernel.registered()
    assert name not in _available_ccs()


def test_registering_again_with_changed_parameters_replaces_the_registration(clean_registrations):
    kernel.register("vegas", alpha=2, beta=4)
    assert kernel.parameters("vl_vegas")["vl_alpha"] == 2
    kernel.register("vegas", alpha=3, beta=6.5)  # the kernel refuses a second registration: replaced
    assert kernel.registered().count("vl_vegas") == 1
    got = kernel.parameters("vl_vegas")
    assert (got["vl_alpha"], got["vl_beta"], got["vl_gamma"]) == (3, 6, 1)


def test_each_algorithm_runs_with_the_simulators_default_parameters(clean_registrations):
    for cc in sorted(kernel.ALGORITHMS):
        got = kernel.parameters(kernel.register(cc))
        assert {k: got[k] for k in kernel.program_parameters(cc)} == kernel.program_parameters(cc), cc
    # Linux's Vegas defaults and the Vegas_8 preset, as the registry gives them.
    assert (kernel.program_parameters("vegas")["vl_alpha"], kernel.program_parameters("vegas")["vl_beta"]) == (2, 4)
    assert kernel.program_parameters("vegas_8")["vl_inc"] == 8


def test_parameters_use_the_scenario_names_and_are_checked_by_the_simulators_reader():
    assert kernel.program_parameters("vegas", alpha=1.5, beta=3.5) == {
        "vl_alpha": 2, "vl_beta": 3, "vl_gamma": 1, "vl_inc": 1, "vl_equal_throughput": 0, "vl_at_beta": 0}
    assert kernel.program_parameters("vegas_8")["vl_inc"] == 8
    assert kernel.program_parameters("vegas-a", equal_throughput="hold")["vl_equal_throughput"] == 1
    with pytest.raises(kernel.KernelError, match=r"flows\[0\]\.params\.beta: must be >= alpha"):
        kernel.program_parameters("vegas", alpha=5, beta=3)
    with pytest.raises(kernel.KernelError, match=r"flows\[0\]\.params\.inc: cannot be set"):
        kernel.program_parameters("vegas_8", inc=4)
    with pytest.raises(kernel.KernelError, match="no kernel version of 'cubic'"):
        kernel.program_parameters("cubic")


def test_the_loader_refuses_an_unknown_parameter_naming_it(built):
    p = subprocess.run([str(built / "vl-loader"), "register", str(built / "vl_vegas.bpf.o"), "vl_delta=1"],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert p.stderr.strip() == "vl-loader: the object has no parameter vl_delta"
    assert "vl_vegas" not in kernel.registered()


@pytest.mark.parametrize("cc", sorted(kernel.ALGORITHMS))
def test_the_shared_c_decisions_replay_the_vectors_of_objects_the_simulator_refuses(built, cc):
    # Where the simulator loads the object, crates/vegaslab-bpf/tests/decision_vectors.rs
    # replays the vectors through the object itself, which retires this C twin for it.
    if simulator_loads(built / f"{kernel.ALGORITHMS[cc]}.bpf.o"):
        pytest.skip(f"{cc}: replayed through its own BPF object by crates/vegaslab-bpf/tests/decision_vectors.rs")
    path = VECTORS / f"{cc}-linux.csv.gz"
    p = subprocess.run([str(built / "replay"), cc, str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "all equal" in p.stdout


VECTOR_HEADER = ("hook,now_us,rtt_us,qb_us,qf_us,seqno,acked,arg,next_seq,last_ack,clamp,cwnd_limited,cwnd,"
                 "ssthresh,cwnd_out,ssthresh_out")


def _replay_rows(built, tmp_path, rows):
    path = tmp_path / "rows.csv.gz"
    with gzip.open(path, "wt") as f:
        f.write("\n".join([VECTOR_HEADER, *rows]) + "\n")
    return subprocess.run([str(built / "replay"), "vegas", str(path)], capture_output=True, text=True)


def test_the_c_reno_fallback_grows_only_when_cwnd_limited_and_undo_restores_the_window(built, tmp_path):
    # A fast retransmit at cwnd 20 (ssthresh 10, cwnd 10; the replay does the kernel's part:
    # prior_cwnd 20, Reno's counter 0); in recovery Vegas is off and Reno rules: 10 packets
    # acknowledged while not cwnd-limited grow nothing, the same 10 while cwnd-limited make
    # +1 (tcp_cong_avoid_ai, w = 10); undo restores max(11, prior_cwnd 20) = 20.
    rows = ["init,0,,,,,,,0,-1,40,1,20,2147483647,20,2147483647",
            "ssthresh,1,,,,,,fast_retransmit,20,-1,40,1,20,2147483647,10,10",
            "set_state,1,,,,,,recovery,20,-1,40,1,10,10,10,10",
            "cong_avoid,2,,,,9,10,,20,-1,40,0,10,10,10,10",
            "cong_avoid,3,,,,19,10,,20,9,40,1,10,10,11,10",
            "undo_cwnd,4,,,,,,,20,19,40,1,11,10,20,10"]
    p = _replay_rows(built, tmp_path, rows)
    assert p.returncode == 0, p.stdout + p.stderr
    # The same rows, but growth claimed while not cwnd-limited: the replay names the row.
    rows[3] = "cong_avoid,2,,,,9,10,,20,-1,40,0,10,10,11,10"
    p = _replay_rows(built, tmp_path, rows)
    assert p.returncode == 1 and ":5: cwnd differs" in p.stdout and "got:      cwnd 10," in p.stdout, p.stdout


def test_the_replay_refuses_a_cwnd_limited_flag_other_than_0_or_1_naming_it(built, tmp_path):
    p = _replay_rows(built, tmp_path, ["init,0,,,,,,,0,-1,40,2,2,2147483647,2,2147483647"])
    assert p.returncode == 2
    assert p.stderr.strip().endswith(":2: column cwnd_limited: 2 is outside [0, 1]")


# ---- a real TCP transfer per algorithm, between two network namespaces ----

SERVER = textwrap.dedent("""
    import socket, sys
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[1], 5001)); s.listen(8); print("ready", flush=True)
    for _ in range(int(sys.argv[2])):
        c, _ = s.accept(); n = 0
        while True:
            b = c.recv(1 << 16)
            if not b: break
            n += len(b)
        c.sendall(str(n).encode()); c.close()
""")

CLIENT = textwrap.dedent("""
    import socket, sys
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, sys.argv[2].encode())
    s.connect((sys.argv[1], 5001))
    used = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\\0").decode()
    s.sendall(b"x" * int(sys.argv[3])); s.shutdown(socket.SHUT_WR)
    print(used, s.recv(64).decode())
""")


def _sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


@pytest.fixture
def two_namespaces():
    """Sender and receiver namespaces joined by a veth pair, 10 Mbit/s htb bottleneck on the
    sender's side so that the transfer spends time in congestion avoidance."""
    tag = f"vlt{os.getpid() % 100000}"
    a, b = f"{tag}a", f"{tag}b"
    for ns in (a, b):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    try:
        _sh("ip", "netns", "add", a)
        _sh("ip", "netns", "add", b)
        _sh("ip", "link", "add", f"{tag}x", "netns", a, "type", "veth", "peer", "name", f"{tag}y", "netns", b)
        _sh("ip", "-n", a, "addr", "add", "10.213.0.1/24", "dev", f"{tag}x")
        _sh("ip", "-n", b, "addr", "add", "10.213.0.2/24", "dev", f"{tag}y")
        for ns, dev in ((a, f"{tag}x"), (b, f"{tag}y")):
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
            _sh("ip", "-n", ns, "link", "set", dev, "up")
        _sh("ip", "netns", "exec", a, "tc", "qdisc", "add", "dev", f"{tag}x", "root", "handle", "1:", "htb",
            "default", "1")
        _sh("ip", "netns", "exec", a, "tc", "class", "add", "dev", f"{tag}x", "parent", "1:", "classid", "1:1",
            "htb", "rate", "10mbit")
        yield a, b
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_a_tcp_transfer_runs_with_each_algorithm_between_namespaces(two_namespaces, clean_registrations):
    a, b = two_namespaces
    names = [kernel.register(cc) for cc in sorted(kernel.ALGORITHMS)]
    size = 2_000_000
    server = subprocess.Popen(["ip", "netns", "exec", b, sys.executable, "-c", SERVER, "10.213.0.2",
                               str(len(names))], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().strip() == "ready"
        for name in names:
            out = subprocess.run(["ip", "netns", "exec", a, sys.executable, "-c", CLIENT, "10.213.0.2", name,
                                  str(size)], capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, out.stderr
            assert out.stdout.split() == [name, str(size)], out.stdout
    finally:
        server.kill()
        server.wait()
