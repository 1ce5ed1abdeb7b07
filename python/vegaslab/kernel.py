"""vegaslab's congestion controls in the Linux kernel, as BPF struct_ops.

The same algorithms as the simulator's Linux flavour (``flavour = "linux"``): Vegas, Vegas-A,
AdaVegas, the Vegas_1 / Vegas_8 presets and RoVegas. Their decisions live in one C header,
``kernel/vegaslab_cc.h``, that the BPF programs include and that ``kernel/replay.c`` checks
against the Rust controllers' decision vectors, so a kernel run and a simulated run decide
alike on the same inputs.

>>> from vegaslab import kernel
>>> kernel.register("vegas-a", alpha=2, beta=4)   # doctest: +SKIP
'vl_vegas_a'
>>> kernel.registered()                            # doctest: +SKIP
['vl_vegas_a']
>>> kernel.unregister("vl_vegas_a")                # doctest: +SKIP

Parameters have the names, units and ranges of a scenario file's ``params`` table, and the
simulator's own reader checks them (one owner of every default and range), then the integer
thresholds of the Linux form are passed to the program: ``ceil(alpha)``, ``floor(beta)``,
``floor(gamma)``. Registering a name that is registered replaces it (the kernel refuses a
second registration; sockets already using the old one keep it until they close).

RoVegas (``vl_rovegas``) also needs router-stamped queueing times: its sockets must be in the
cgroup of a :class:`vegaslab.testbed.aqt.AqtPath`, whose sock_ops program writes and parses the
AQT option, and the router hops must carry that path's tc programs; without stamps it decides
as classic Vegas. The kernel stamps every segment, so ``probe_every`` must be 1 and
``option_bytes`` 12 (the option's size, ``kernel/aqt.h``); other values are refused.

Everything needs root, the kernel's BTF (``/sys/kernel/btf/vmlinux``), ``bpftool`` and
``clang``; without them :func:`check` raises :class:`KernelError` with one sentence saying what
is missing (``make test`` installs the tools with ``scripts/install-bpf.sh``).
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import VegaslabError
from . import _core, registry

__all__ = ["ALGORITHMS", "KernelError", "Registration", "check", "build", "register", "unregister", "registered", "registrations",
           "parameters", "module_parameters", "program_parameters", "kernel_name", "rovegas_counters",
           "unregister_struct_ops"]

#: Scenario ``cc`` name -> the kernel's congestion-control name (at most 15 characters, all
#: with the ``vl_`` prefix): every registered algorithm with a Linux flavour
#: (:mod:`vegaslab.registry`) has a BPF form built from ``kernel/vegaslab.bpf.c``.
ALGORITHMS = {a.name: a.kernel_name for a in registry.algorithms() if a.linux_form == "flavour"}

#: RoVegas parameters the kernel version cannot vary: every segment carries the 12-byte AQT
#: option (kernel/aqt.h; the TCP stack's GSO copies a segment's options into every packet cut
#: from it, so "every n-th packet" cannot be honoured exactly).
_ROVEGAS_FIXED = {"probe_every": 1, "option_bytes": 12}

#: Where the C sources and the Makefile are (the repository's ``kernel/``).
KERNEL_DIR = Path(__file__).resolve().parents[2] / "kernel"
BUILD_DIR = KERNEL_DIR / "build"


class KernelError(VegaslabError, RuntimeError):
    """The kernel side cannot be used here, or refused an operation; the message says why."""


def check() -> None:
    """Raise :class:`KernelError` (one sentence) unless BPF congestion control can work here."""
    if not (KERNEL_DIR / "Makefile").is_file():
        raise KernelError(f"the kernel sources are not here ({KERNEL_DIR}): use a checkout of the repository")
    if os.geteuid() != 0:
        raise KernelError("registering BPF congestion controls needs root")
    if not Path("/sys/kernel/btf/vmlinux").exists():
        raise KernelError("this kernel has no BTF (/sys/kernel/btf/vmlinux), which BPF struct_ops needs")
    for tool in ("bpftool", "clang", "make"):
        if shutil.which(tool) is None:
            raise KernelError(f"{tool} is not installed (scripts/install-bpf.sh installs it)")


def run_command(cmd: list[str], what: str, error: type[Exception] = KernelError) -> subprocess.CompletedProcess:
    """Run a tool (make, bpftool, tc, ip, ...); on failure raise ``error`` with one sentence:
    ``what`` and the tool's last line of output. Shared by the kernel and testbed modules."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        detail = (p.stderr.strip() or p.stdout.strip()).splitlines()
        raise error(f"{what}: {detail[-1] if detail else f'exit status {p.returncode}'}")
    return p


def build() -> Path:
    """Build the BPF objects, the loader and the replay test (``make -C kernel``); returns the
    build directory."""
    check()
    run_command(["make", "-s", "-C", str(KERNEL_DIR), f"PYTHON={sys.executable}"], "building the BPF congestion controls failed")
    return BUILD_DIR


def kernel_name(cc: str) -> str:
    """The kernel name of the scenario algorithm ``cc``."""
    try:
        return ALGORITHMS[cc]
    except KeyError:
        raise KernelError(f"no kernel version of {cc!r} (allowed: {', '.join(ALGORITHMS)})") from None


def _params_toml(params: dict) -> str:
    def value(v):
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise KernelError(f"parameter values must be numbers or strings, got {v!r}")
        return json.dumps(v)
    return ", ".join(f"{k} = {value(v)}" for k, v in params.items())


def program_parameters(cc: str, **params) -> dict[str, int]:
    """The program's read-only globals for ``cc`` with scenario-style ``params``, checked by the
    simulator's own scenario reader (errors name ``flows[0].params.<key>``)."""
    kernel_name(cc)
    if "flavour" in params:
        raise KernelError("flavour: the kernel versions are the Linux flavour; leave it out")
    text = (
        '[run]\nduration = "1s"\n[[links]]\nendpoints = ["S", "D"]\nbandwidth = "1Mbps"\ndelay = "1ms"\n'
        f'[[flows]]\nfrom = "S"\nto = "D"\ncc = "{cc}"\n'
        f'params = {{ {_params_toml({**params, "flavour": "linux"})} }}\n'
    )
    try:
        doc = json.loads(_core.normalize_scenario(text, "params"))
    except ValueError as e:
        raise KernelError(str(e).replace("params: ", "", 1)) from None
    (p,) = doc["flows"][0]["algorithm"].values()
    if cc == "rovegas":
        for key, fixed in _ROVEGAS_FIXED.items():
            if p.get(key, fixed) != fixed:
                raise KernelError(f"flows[0].params.{key}: the kernel version of rovegas stamps every segment "
                                  f"with the 12-byte AQT option, so {key} must be {fixed}, got {p[key]!r}")
    # A key the algorithm's normalised parameters lack takes the value its C rule is written
    # for (kernel/vegaslab_cc.h): AdaVegas' alpha and beta come from its own table (0 unused),
    # classic Vegas grows by one packet (inc 1), and only Vegas-A reads its two tie rules. The
    # C replay (kernel/replay.c, built with these values through scripts/kernel_algorithms.py)
    # checks every algorithm's decisions against the Rust controller's, so a wrong fill-in
    # fails tests/test_kernel.py's replay of every algorithm's vectors.
    return {
        "vl_alpha": math.ceil(p.get("alpha", 0)),
        "vl_beta": math.floor(p.get("beta", 0)),
        "vl_gamma": math.floor(p["gamma"]),
        "vl_inc": int(p.get("inc", 1)),
        "vl_equal_throughput": 1 if p.get("equal_throughput") == "hold" else 0,
        "vl_at_beta": 1 if p.get("at_beta") == "hold" else 0,
    }


@dataclass(frozen=True)
class Registration:
    """One struct_ops congestion control in the kernel."""

    id: int          # the struct_ops map's id
    map: str         # the map's name (the object's variable, at most 15 characters)
    name: str        # the congestion control's name, what sockets select
    draining: bool   # unregistered, kept until the last socket using it closes


def registrations(error: type[Exception] = None) -> list[Registration]:
    """Every struct_ops congestion control in the kernel (``bpftool struct_ops dump``, whose
    JSON lists each map's info followed by its struct_ops value), named by the congestion
    control's own name: bpftool names a registration by its map variable (``cubic`` for the
    kernel selftests' ``bpf_cubic``), which may even be a built-in algorithm's name. A failing
    bpftool raises ``error`` (default :class:`KernelError`)."""
    dump = json.loads(run_command(["bpftool", "-j", "struct_ops", "dump"], "listing struct_ops failed",
                                  error or KernelError).stdout or "[]")
    out, info = [], None
    for entry in dump:
        if "bpf_map_info" in entry:
            info = entry["bpf_map_info"]
            continue
        ops = entry.get("bpf_struct_ops_tcp_congestion_ops")
        if ops is not None and info is not None:
            out.append(Registration(id=int(info["id"]), map=info["name"], name=ops["data"]["name"],
                                    draining=ops["common"]["state"] == "BPF_STRUCT_OPS_STATE_TOBEFREE"))
        info = None
    return out


def registered() -> list[str]:
    """Names of the struct_ops congestion controls registered now (vegaslab's and others), as
    sockets select them.

    The kernel also keeps an unregistered one that sockets still hold (state TOBEFREE, until
    its last socket closes); only names the kernel offers
    (``tcp_available_congestion_control``) count, so a new registration of that name is not
    blocked by the old one draining."""
    check()
    available = set(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())
    return sorted({r.name for r in registrations() if not r.draining and r.name in available})


def _bpftool_json(*args: str, what: str):
    return json.loads(run_command(["bpftool", "-j", *args], what).stdout or "null")


def _globals(name: str, section: str) -> dict[str, int]:
    """The registered congestion control ``name``'s globals in ``section`` (".rodata", ".bss")."""
    check()
    if name not in registered():
        raise KernelError(f"{name} is not registered")
    dump = _bpftool_json("struct_ops", "dump", "name", name, what=f"reading {name} failed")
    # The registered one (INUSE), not an older one of the same name still draining (TOBEFREE).
    ops = next(d["bpf_struct_ops_tcp_congestion_ops"] for d in dump if "bpf_struct_ops_tcp_congestion_ops" in d
               and d["bpf_struct_ops_tcp_congestion_ops"]["common"]["state"] != "BPF_STRUCT_OPS_STATE_TOBEFREE")
    # The hooks that use the section reference its map: init the parameters, pkts_acked all.
    for hook in ("init", "pkts_acked"):
        prog_id = ops["data"][hook].rsplit("prog_id:", 1)[1]
        prog = _bpftool_json("prog", "show", "id", prog_id, what=f"reading {name}'s program failed")
        for map_id in prog.get("map_ids", []):
            info = _bpftool_json("map", "show", "id", str(map_id), what="reading a map failed")
            if info.get("name", "").endswith(section):
                (entry,) = _bpftool_json("map", "dump", "id", str(map_id), what=f"reading {name}'s {section} failed")
                return {k: v for item in entry["formatted"]["value"][section] for k, v in item.items()}
    raise KernelError(f"{name} has no {section} globals")


def parameters(name: str) -> dict[str, int]:
    """The parameters the registered congestion control ``name`` runs with, read back from the
    kernel (its programs' read-only globals)."""
    return _globals(name, ".rodata")


#: Where the kernel shows a built-in congestion control's parameters (``tcp_cubic`` for cubic).
MODULE_PARAMETERS = Path("/sys/module")


def module_parameters(name: str) -> dict[str, int | str]:
    """The parameters of the kernel's own congestion control ``name`` (``cubic``: ``beta``,
    ``hystart``, ...) as ``/sys/module/tcp_<name>/parameters`` shows them, whole numbers as
    ints (``Y``/``N`` as 1/0); empty for one without parameters (reno) or not built in."""
    folder = MODULE_PARAMETERS / f"tcp_{name}" / "parameters"
    out: dict[str, int | str] = {}
    if not folder.is_dir():
        return out
    for f in sorted(folder.iterdir()):
        try:
            text = f.read_text().strip()
        except OSError:  # a write-only parameter
            continue
        out[f.name] = {"Y": 1, "N": 0}.get(text, int(text) if text.lstrip("-").isdigit() else text)
    return out


def rovegas_counters() -> dict[str, int]:
    """Since ``vl_rovegas`` was registered, over all its sockets: ``samples`` (RTT samples),
    ``stamped`` (those whose ACK carried a fresh AQT stamp, i.e. reached the rule with
    queueing times), ``min_rtt_us`` (the smallest sample), ``min_candidate_us`` (the smallest
    baseRTT candidate of a stamped sample: its RTT minus its stamps) and
    ``max_queueing_us`` (the largest stamped queueing time); the last three are 0 while there
    was none."""
    g = _globals(ALGORITHMS["rovegas"], ".bss")
    return {"samples": int(g["vl_ro_samples"]), "stamped": int(g["vl_ro_stamped"]),
            "min_rtt_us": int(g["vl_ro_min_rtt_us"]), "min_candidate_us": int(g["vl_ro_min_candidate_us"]),
            "max_queueing_us": int(g["vl_ro_max_queueing_us"])}


#: How long :func:`unregister` waits for sockets still using the algorithm to go away.
UNREGISTER_WAIT_S = 15.0


def unregister(name: str, *, wait_s: float = UNREGISTER_WAIT_S) -> None:
    """Unregister the congestion control ``name`` (a kernel name such as ``vl_vegas``).

    The kernel refuses while sockets still use it ("Operation now in progress"): closing
    connections and namespaces being removed release theirs a little later, so this retries
    for up to ``wait_s`` seconds before giving up."""
    check()
    if name not in registered():
        raise KernelError(f"{name} is not registered")
    # By map id: bpftool's names are the maps' (another algorithm's name, for bpf_cubic), and
    # an older registration of the name, still held by closing sockets, is left to drain.
    for r in registrations():
        if r.name == name and not r.draining:
            unregister_struct_ops(["id", str(r.id)], name, gone=lambda: name not in registered(), wait_s=wait_s)


def unregister_struct_ops(selector: list[str], label: str, *, gone, wait_s: float = UNREGISTER_WAIT_S) -> None:
    """``bpftool struct_ops unregister SELECTOR`` (``["name", X]`` or ``["id", N]``), retried
    for up to ``wait_s`` seconds while the kernel answers "in progress" (sockets still hold
    it) and ``gone()`` is false; :class:`KernelError` naming ``label`` otherwise."""
    deadline = time.monotonic() + wait_s
    while True:
        p = subprocess.run(["bpftool", "struct_ops", "unregister", *selector], capture_output=True, text=True)
        if p.returncode == 0 or "no struct_ops found" in (p.stderr + p.stdout):
            return  # (gone meanwhile: the kernel freed it once its last socket closed)
        if gone():
            return
        lines = (p.stderr.strip() or p.stdout.strip()).splitlines()
        # Several registrations of one name (an old one still draining): report the refusal.
        message = [ln for ln in lines if ln.startswith("Error")][-1:] or lines[-1:] or [f"exit status {p.returncode}"]
        if "in progress" not in message[0] or time.monotonic() > deadline:
            raise KernelError(f"unregistering {label} failed: {message[0]}")
        time.sleep(0.1)


def ensure_bpffs() -> None:
    """A bpf filesystem on /sys/fs/bpf (libbpf pins vl_rovegas' shared AQT map under
    /sys/fs/bpf/vegaslab): mount one if there is none."""
    if subprocess.run(["mountpoint", "-q", "/sys/fs/bpf"]).returncode != 0:
        run_command(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"], "mounting the bpf filesystem on /sys/fs/bpf failed")


def register(cc: str, **params) -> str:
    """Register the kernel version of ``cc`` with ``params`` (as in a scenario's ``params``
    table); replaces a registration of the same name. Returns the kernel name."""
    name = kernel_name(cc)
    values = program_parameters(cc, **params)
    build()
    if cc == "rovegas":
        ensure_bpffs()
    if name in registered():
        unregister(name)
    sets = [f"{k}={v}" for k, v in values.items()]
    run_command([str(BUILD_DIR / "vl-loader"), "register", str(BUILD_DIR / f"{name}.bpf.o"), *sets],
         f"registering {name} failed")
    return name
