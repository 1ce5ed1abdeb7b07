"""The TCP flows of the normalised scenario mapped onto ns-2 agents (:func:`build_flow`): the
agent class of the congestion control (Reno, NewReno, Vegas of flavour ``ns2``), every ``tcp``
field as the agent variable ns-2 names it, the tick clock's phase, and the FTP or file
application. Anything else raises ``ValueError`` naming the field and which flow it is.
"""
from __future__ import annotations

from .. import schema as layout
from .model import Flow
from .tcl import INT_MAX, check_bool, check_float, check_int, check_keys, tcl_bool, tcl_num

# Vegas parameter -> Agent/TCP/Vegas variable.
_VEGAS_PARAMS = {"alpha": "v_alpha_", "beta": "v_beta_", "gamma": "v_gamma_"}

# tcp field -> (ns-2 agent variable, kind).  ``ack_size`` goes to the sink,
# ``vegas_headers`` is checked, ``tick_phase`` becomes ns-2's ``boot_time_`` (which is no Tcl
# variable: see :func:`vegaslab.ns2.script.build_script`), and ``boot_time`` is not a setting (always 0 in the document:
# the core fills in the phase when it creates a sender).
_TCP_FIELDS = {
    "window": ("window_", "int"),
    "window_init": ("windowInit_", "int"),
    "packet_size": ("packetSize_", "int"),
    "header_bytes": ("tcpip_base_hdr_size_", "int"),
    "syn": ("syn_", "bool"),
    "delay_growth": ("delay_growth_", "bool"),
    "max_burst": ("maxburst_", "int"),
    "dupacks": ("numdupacks_", "int"),
    "tick": ("tcpTick_", "secs"),
    "min_rto": ("minrto_", "secs"),
    "max_rto": ("maxrto_", "secs"),
    "initial_rto": ("rtxcur_init_", "secs"),
    "limited_transmit": ("singledup_", "int01"),
}
# ``partial_ack_timer`` (left out of the normalised scenario at its default, "first") is
# Agent/TCP/Newreno's ``newreno_changes1_``: 1 restarts the timer on a recovery's first
# partial ACK only, 0 on every one. Other agents have no partial ACKs.
_PARTIAL_ACK_TIMER = {"first": "1", "every": "0"}
# ``slow_start_restart`` (left out of the normalised scenario when true, ns-2's default) is
# every agent's ``slow_start_restart_``.

#: Every agent variable the bridge sets: what a hand-built :class:`Flow` may carry.
AGENT_VARS = ({var for var, _ in _TCP_FIELDS.values()} | set(_VEGAS_PARAMS.values())
              | {"newreno_changes1_", "slow_start_restart_"})


def _algorithm(alg, where: str) -> tuple[str, dict]:
    """(cc, agent variables) of a flow's ``algorithm``."""
    if alg == "Reno":
        return "reno", {}
    if alg == "NewReno":
        return "newreno", {}
    if isinstance(alg, dict) and set(alg) == {"Vegas"}:
        p = alg["Vegas"]
        check_keys(p, layout.keys("VegasParams"), f"{where}.Vegas")
        if p.get("flavour") != "ns2":
            raise ValueError(f"{where}.Vegas.flavour: only Vegas flavour \"ns2\" maps to ns-2's "
                             f"Agent/TCP/Vegas, got {p.get('flavour')!r}")
        return "vegas", {var: tcl_num(p.get(k), f"{where}.Vegas.{k}")
                         for k, var in _VEGAS_PARAMS.items()}
    name = next(iter(alg)) if isinstance(alg, dict) and alg else alg
    if name == "Python":
        raise ValueError(f"{where}: a Python controller runs only in vegaslab's own simulator; ns-2 cannot "
                         "host it")
    if name == "Bpf":
        raise ValueError(f"{where}: a BPF object runs in vegaslab's own simulator and in the Linux kernel; "
                         "ns-2 cannot load it")
    raise ValueError(f"{where}: the ns-2 bridge supports Reno, NewReno and Vegas (flavour "
                     f"\"ns2\"), got {name!r}")


def _tick_phase(tcp: dict, seed: int, i: int, where: str) -> tuple[float, bool]:
    """(phase in seconds, seeded?) of flow ``i``: the document's ``tick_phase`` when set, else
    the phase the core draws for a seeded flow, asked of the core itself so that both
    simulators run with the same value."""
    tick = check_float(tcp.get("tick"), f"{where}.tick")
    if tick <= 0:
        raise ValueError(f"{where}.tick: must be > 0, got {tick!r}")
    if "tick_phase" not in tcp:
        from ..core import load_core

        return load_core().seeded_tick_phase(seed, i, tick), True
    phase = check_float(tcp["tick_phase"], f"{where}.tick_phase")
    if not phase < tick:
        raise ValueError(f"{where}.tick_phase: must be < tick ({tick!r} s), got {phase!r}")
    return phase, False


def build_flow(i: int, f, nodes: list, duration_ns: int, seed: int) -> Flow:
    """Flow ``i`` of the document (``f``) as a :class:`Flow` (``nodes``: the node names; a stop
    at or after ``duration_ns`` is no stop; ``seed``: the run's, from which a seeded tick phase
    is drawn)."""
    where = f"flows[{i}]"
    check_keys(f, layout.keys("FlowSpec"), where)
    name = f.get("name")
    if not isinstance(name, str):
        raise ValueError(f"{where}.name: expected a string, got {name!r}")
    where = f"flows[{i}] ({name!r})"
    src = check_int(f.get("from"), f"{where}.from", 0, len(nodes) - 1)
    dst = check_int(f.get("to"), f"{where}.to", 0, len(nodes) - 1)
    if src == dst:
        raise ValueError(f"{where}.to: must differ from 'from'")
    cc, agent_vars = _algorithm(f.get("algorithm"), f"{where}.algorithm")

    tcp = f.get("tcp")
    check_keys(tcp, layout.keys("TcpConfig"), f"{where}.tcp")
    if tcp.get("stack", "ns2") != "ns2":
        raise ValueError(f"{where}.tcp.stack: ns-2 runs its own agents; only \"ns2\" (the default) is "
                         f"supported, got {tcp.get('stack')!r}")
    if cc == "vegas" and tcp.get("vegas_headers") is not False:
        raise ValueError(f"{where}.tcp.vegas_headers: ns-2's Vegas agent always sends "
                         "packetSize_ bytes without header; only false is supported")
    for k, (var, kind) in _TCP_FIELDS.items():
        w = f"{where}.tcp.{k}"
        v = tcp.get(k)
        if kind == "int":
            agent_vars[var] = tcl_num(check_int(v, w), w)
        elif kind == "bool":
            agent_vars[var] = tcl_bool(check_bool(v, w))
        elif kind == "int01":
            agent_vars[var] = "1" if check_bool(v, w) else "0"
        else:
            agent_vars[var] = tcl_num(check_float(v, w), w)
    timer = tcp.get("partial_ack_timer", "first")
    if timer not in _PARTIAL_ACK_TIMER:
        raise ValueError(f"{where}.tcp.partial_ack_timer: must be one of first, every, got {timer!r}")
    if cc == "newreno":
        agent_vars["newreno_changes1_"] = _PARTIAL_ACK_TIMER[timer]
    if not check_bool(tcp.get("slow_start_restart", True), f"{where}.tcp.slow_start_restart"):
        agent_vars["slow_start_restart_"] = tcl_bool(False)
    packet_size = check_int(tcp.get("packet_size"), f"{where}.tcp.packet_size", 1)
    phase, seeded = _tick_phase(tcp, seed, i, f"{where}.tcp")

    start_ns = check_int(f.get("start_ns"), f"{where}.start_ns", 0, 2**63 - 1)
    stop_ns = f.get("stop_ns")
    if stop_ns is not None:
        stop_ns = check_int(stop_ns, f"{where}.stop_ns", 0, 2**63 - 1)
    app = f.get("app")
    kind = app.get("kind") if isinstance(app, dict) else None
    file_size = file_packets = None
    if kind == "ftp":
        check_keys(app, layout.keys("AppSpec", "ftp"), f"{where}.app")
    elif kind == "file":
        check_keys(app, layout.keys("AppSpec", "file"), f"{where}.app")
        # ns-2's Application send takes a C int of bytes.
        file_size = check_int(app.get("bytes"), f"{where}.app.bytes", 1)
    elif kind == "file-packets":
        file_packets = _file_packets(app, f"{where}.app")
    else:
        raise ValueError(f"{where}.app.kind: the ns-2 bridge supports ftp and file "
                         f"applications, got {kind!r}")
    return Flow(index=i, name=name, cc=cc, src=src, dst=dst, src_name=nodes[src],
                dst_name=nodes[dst], start=start_ns / 1e9,
                stop=None if stop_ns is None or stop_ns >= duration_ns else stop_ns / 1e9,
                app=kind, file_size=file_size, agent_vars=agent_vars, packet_size=packet_size,
                header_bytes=check_int(tcp.get("header_bytes"), f"{where}.tcp.header_bytes"),
                syn=check_bool(tcp.get("syn"), f"{where}.tcp.syn"),
                ack_size=check_int(tcp.get("ack_size"), f"{where}.tcp.ack_size", 1),
                tick_phase=phase, tick_phase_seeded=seeded, file_packets=file_packets)


def _file_packets(app: dict, where: str) -> int:
    """The packet count of a file given in packets (the core's ``file-packets``).

    ns-2 reads it with ``atoi`` into ``curseq_`` (a C ``int``), hence the bound.  With the SYN
    of Reno/NewReno, ns-2 numbers the SYN 0 and raises ``curseq_`` by one when it sends it, so
    ``produce N`` still sends N data packets, as the core does; that raise must not overflow,
    so N stays below the largest ``int``.
    """
    check_keys(app, layout.keys("AppSpec", "file-packets"), where)
    return check_int(app.get("packets"), f"{where}.packets", 1, INT_MAX - 1)
