"""The core's normalised scenario -> ns-2.35 OTcl script.

The bridge does not read scenario files. The Rust core is the one owner of the schema (units,
overrides, topology builders such as ``[dumbbell]``, defaults): :func:`normalize` asks it for
the normalised scenario (``vegaslab.normalize``: every default filled in, times in integer
nanoseconds, bandwidths in bit/s, nodes by index, delay traces expanded into
``delay_schedule_ns``), and :func:`build_model` maps that JSON, and nothing else, onto ns-2.

What maps: links whose two directions each have DropTail or classic RED (``Queue/RED`` in
packet mode) queues (each direction its own: every direction is an ns-2 ``simplex-link``), no
packet errors, deterministic loss patterns (``ErrorModel/List`` and ``/Periodic``: see
:func:`_loss_lines`), and any delay schedule; links going down and up (``down_ns``: ``$ns
rtmodel-at`` under ``$ns rtproto Session``, see :func:`_link_changes`); TCP flows with Reno,
NewReno or Vegas (flavour ``ns2``) and an FTP or file application (bytes, or a packet count as
``$app produce N``), with every ``tcp`` field, including
the tick clock's phase (``tick_phase``, ns-2's ``boot_time_``: see :func:`build_script`, "Tick
phases").  Anything
else raises ``ValueError`` naming the field of the normalised scenario (and, for links and
flows, which link or flow it is).  ``monitor``, ``sample_interval_ns`` and ``files`` are
ignored: the bridge reports no time series, and a referenced file's content is already in the
document.

Safety: no string from the scenario is ever written into a code position
of the script.  Nodes, links, agents and applications are referred to by generated indices
(``$n(3)``, ``$tcp(0)``); every value is a number that :func:`_tcl_num` has type-checked and
printed itself, or a word chosen from a fixed table (``DropTail``, ``Agent/TCP/Vegas``,
``true``).  Node and flow names appear only in ``#`` comments, reduced by
:func:`_comment_text` to a character set that cannot end a comment or open a substitution.
The names themselves stay on the Python side (:class:`Model`) and label the results.
"""
from __future__ import annotations

import hashlib
import math
import pathlib
import re
from dataclasses import dataclass, field

from .. import schema as layout

__all__ = ["normalize", "build_model", "build_script", "Model", "LinkDir", "Flow", "FORMAT",
           "ns2_seed", "phase_reset"]

#: The layout version of the normalised scenario this module reads (its ``format`` key).
FORMAT = 1

#: ns-2 binds these agent, queue and application values to C ``int``.
_INT_MAX = 2**31 - 1


# ---------------------------------------------------------------- the normalised scenario

def normalize(scenario, *, overrides=(), seed=None) -> dict:
    """The core's normalised scenario for a scenario dict or a TOML file path (str or Path).

    ``overrides`` (``"flows[0].cc=reno"`` strings or a mapping) and ``seed`` are applied by
    the core exactly as for a vegaslab run.  Invalid scenarios raise
    ``vegaslab.ScenarioError`` (a ``ValueError``) naming the file and field.
    """
    from ..simulation import normalize as core_normalize

    if isinstance(scenario, (str, pathlib.PurePath)):
        # A str is a path, never TOML text, as the bridge always had it.
        scenario = pathlib.Path(scenario)
    elif not isinstance(scenario, dict):
        raise TypeError(f"scenario must be a dict or a TOML path, got {type(scenario).__name__}")
    return core_normalize(scenario, seed=seed, overrides=overrides)


# ----------------------------------------------------------------------- the model

@dataclass
class LinkDir:
    """One direction of a link: a queue plus a delay line.  ``src``/``dst`` are node indices."""
    src: int
    dst: int
    src_name: str
    dst_name: str
    bandwidth: float                                # bit/s
    delay: float                                    # s
    limit: int                                      # packets
    schedule: list = field(default_factory=list)    # [(at_s, delay_s)]
    red: dict | None = None   # Queue/RED class variables (ns-2 name -> Tcl literal), else DropTail
    #: A deterministic loss pattern (see :func:`_loss`): ``("list", [indices])`` or
    #: ``("periodic", every, first, burst)``; None: no losses.
    loss: tuple | None = None

    @property
    def name(self) -> str:
        return f"{self.src_name}->{self.dst_name}"

    @property
    def kind(self) -> str:
        return "red" if self.red is not None else "droptail"


@dataclass
class Flow:
    """A TCP flow: agent class, endpoints (node indices), application, ns-2 agent variables."""
    index: int
    name: str
    cc: str
    src: int
    dst: int
    src_name: str
    dst_name: str
    start: float                  # s
    stop: float | None            # s, None: runs to the end
    app: str                      # "ftp", "file" or "file-packets"
    file_size: int | None         # bytes, for app "file"
    agent_vars: dict              # ns-2 variable -> Tcl literal
    packet_size: int
    header_bytes: int
    syn: bool
    ack_size: int = 40
    #: The phase of the sender's tick clock in seconds (ns-2 ``boot_time_``), 0 <= phase < the
    #: flow's ``tcpTick_``: the scenario's ``tcp.tick_phase``, or for "seeded" the phase the core
    #: draws for this flow from the run seed (``vegaslab._core.seeded_tick_phase``).
    tick_phase: float = 0.0
    #: Whether ``tick_phase`` was drawn from the seed (the scenario said "seeded").
    tick_phase_seeded: bool = False
    #: Packets, for app "file-packets" (``app = { kind = "file", packets = N }``): written as
    #: ``$app produce N`` (see :func:`build_script`).
    file_packets: int | None = None

    @property
    def agent_class(self) -> str:
        return _AGENT_CLASS[self.cc]

    @property
    def sends_syn(self) -> bool:
        """ns-2's Vegas agent overrides output() and never sends a SYN."""
        return self.syn and self.cc in ("reno", "newreno")

    @property
    def wire_size(self) -> int:
        """Bytes on the wire of a full data packet (Vegas adds no header in ns-2)."""
        return self.packet_size + (0 if self.cc == "vegas" else self.header_bytes)


@dataclass
class Model:
    """What ns-2 runs: node names (ns-2 node i is ``nodes[i]``), link directions, flows."""
    nodes: list
    links: list          # [LinkDir]
    flows: list          # [Flow]
    duration: float      # s
    seed: int
    name: str = ""
    normalized: dict | None = None   # the document it came from
    #: Link changes ``(at_s, "down" | "up", node a, node b)`` in time order (``links[].down``):
    #: ``$ns rtmodel-at`` under ``$ns rtproto Session`` (see :func:`_link_changes`).
    link_changes: list = field(default_factory=list)

    def node_id(self, name: str) -> int:
        return self.nodes.index(name)


# ------------------------------------------------------------- checked Tcl literals

_NUMBER_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?")


def _tcl_num(value, where: str) -> str:
    """A Tcl literal for a finite number from the document (full precision).

    Only ints and floats pass (bools, strings and everything else raise), and the text is
    checked once more to be a plain decimal number, so nothing else can reach the script.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where}: expected a number, got {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: expected a finite number, got {value!r}")
        text = str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    else:
        text = str(value)
    if not _NUMBER_TEXT.fullmatch(text):   # pragma: no cover - a guard, not a code path
        raise ValueError(f"{where}: cannot write {value!r} as a Tcl number")
    return text


def _int(value, where: str, lo: int = 0, hi: int = _INT_MAX) -> int:
    """A whole number in [lo, hi] (a float that is whole counts: the core stores windows as
    floats, ns-2 binds them to ``int``)."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: ns-2 needs a whole number here, got {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{where}: ns-2 takes {lo}..{hi} here, got {value!r}")
    return value


def _float(value, where: str, lo: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where}: expected a finite number, got {value!r}")
    if value < lo:
        raise ValueError(f"{where}: must be >= {lo}, got {value!r}")
    return float(value)


def _bool(value, where: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{where}: expected true or false, got {value!r}")
    return value


def _tcl_bool(value: bool) -> str:
    return "true" if value else "false"


def _secs(ns, where: str) -> float:
    """Seconds from the document's integer nanoseconds."""
    return _int(ns, where, 0, 2**63 - 1) / 1e9


_COMMENT_SAFE = re.compile(r"[^A-Za-z0-9_.:>+-]")


def _comment_text(name: str) -> str:
    """A name reduced to characters that are inert in a Tcl comment (no newline, backslash,
    brace, bracket, quote, ``$`` or ``;``); anything else becomes ``?``.  For people reading
    the script only: the results use the real names, kept in Python."""
    return _COMMENT_SAFE.sub("?", str(name))[:80]


def _check_keys(obj, known, where: str) -> None:
    """Every key of ``obj`` must be one the bridge knows how to map (or knows to ignore): a
    field the core adds later must not be dropped silently."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected an object, got {obj!r}")
    extra = sorted(set(obj) - set(known))
    if extra:
        raise ValueError(f"{where}.{extra[0]}: not supported by the ns-2 bridge "
                         f"(it knows {', '.join(sorted(known))})")


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{where}: expected a list, got {value!r}")
    return value


# ------------------------------------------------------------------- the mapping

# The layout of the normalised scenario (which keys each object has) is the core's schema
# (:mod:`vegaslab.schema`); the bridge lists only what it does not translate. Top-level keys
# ignored because they do not change what ns-2 simulates: ``clock`` (``run.clock``) is
# vegaslab's choice of what its senders read as the time; ns-2 has one clock, its own
# double-precision one (``"ns2"`` emulates it), so either value runs ns-2 as it is; ``trace``
# is the core's own packet trace ([trace]), and the bridge writes ns-2's trace itself.
# ``tie_order`` is refused by name in :func:`build_model`. In ``tcp``, ``boot_time`` is not a
# setting (always 0 in the document: the core fills in the phase when it creates a sender).
# tests/test_ns2_bridge.py checks that every key of the layout the bridge reads is translated
# here or listed as ignored.
_IGNORED = {"Scenario": {"sample_interval_ns", "monitor", "files", "clock", "trace"},
            "TcpConfig": {"boot_time"}}

_AGENT_CLASS = {"reno": "Agent/TCP/Reno", "newreno": "Agent/TCP/Newreno",
                "vegas": "Agent/TCP/Vegas"}
_VEGAS_PARAMS = {"alpha": "v_alpha_", "beta": "v_beta_", "gamma": "v_gamma_"}

# tcp field -> (ns-2 agent variable, kind).  ``ack_size`` goes to the sink,
# ``vegas_headers`` is checked, ``tick_phase`` becomes ns-2's ``boot_time_`` (which is no Tcl
# variable: see build_script), and ``boot_time`` is not a setting (always 0 in the document:
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


def _queue(q, where: str) -> tuple[int, dict | None]:
    """(limit, Queue/RED variables or None for DropTail) of one direction's queue."""
    if not isinstance(q, dict):
        raise ValueError(f"{where}: expected an object, got {q!r}")
    kind = q.get("kind")
    if kind == "droptail":
        _check_keys(q, layout.keys("QueueSpec", "droptail"), where)
        return _int(q.get("limit"), f"{where}.limit", 1), None
    if kind == "codel":
        # ns-2.35, the release the bridge targets, has no CoDel (no Queue/CoDel class: it came
        # to ns-2 only in later development trees), so there is nothing to compare with.
        raise ValueError(f"{where}.kind: ns-2.35 has no CoDel queue (no Queue/CoDel), so the "
                         f"ns-2 bridge cannot run a codel link; it supports droptail and red queues")
    if kind != "red":
        raise ValueError(f"{where}.kind: the ns-2 bridge supports droptail and red queues, "
                         f"got {kind!r}")
    _check_keys(q, layout.keys("QueueSpec", "red"), where)
    if q.get("variant") != "classic":
        raise ValueError(f"{where}.variant: only classic RED (kind = \"red\") maps to ns-2's "
                         f"Queue/RED, got {q.get('variant')!r}")
    max_p = _float(q.get("max_p"), f"{where}.max_p")
    if max_p <= 0:
        raise ValueError(f"{where}.max_p: must be > 0, got {max_p!r}")
    weight = q.get("weight")
    if weight == "auto":
        q_weight = "-1"    # ns-2: computed from the link's bandwidth and delay
    elif isinstance(weight, dict) and set(weight) == {"fixed"}:
        q_weight = _tcl_num(_float(weight["fixed"], f"{where}.weight.fixed"),
                            f"{where}.weight.fixed")
    else:
        raise ValueError(f"{where}.weight: expected \"auto\" or {{\"fixed\": w}}, got {weight!r}")
    # Packet mode, no ECN, classic forced drops above max (use_mark_p_ false), as the core's
    # RED (crates/vegaslab-sim/src/queue/red.rs).
    red = {
        "thresh_": _tcl_num(_float(q.get("min_th"), f"{where}.min_th"), f"{where}.min_th"),
        "maxthresh_": _tcl_num(_float(q.get("max_th"), f"{where}.max_th"), f"{where}.max_th"),
        "linterm_": _tcl_num(1.0 / max_p, f"{where}.max_p"),
        "q_weight_": q_weight,
        "gentle_": _tcl_bool(_bool(q.get("gentle"), f"{where}.gentle")),
        "wait_": _tcl_bool(_bool(q.get("wait"), f"{where}.wait")),
        "mean_pktsize_": _tcl_num(_int(q.get("mean_pktsize"), f"{where}.mean_pktsize", 1),
                                  f"{where}.mean_pktsize"),
        "bytes_": "false", "queue_in_bytes_": "false", "setbit_": "false",
        "use_mark_p_": "false", "drop_tail_": "true", "drop_front_": "false",
        "drop_rand_": "false", "ns1_compat_": "false", "adaptive_": "0", "cautious_": "0",
    }
    return _int(q.get("limit"), f"{where}.limit", 1), red


def _direction(d, src: int, dst: int, nodes: list, where: str) -> LinkDir:
    _check_keys(d, layout.keys("DirectionSpec"), where)
    bw = _float(d.get("bandwidth_bps"), f"{where}.bandwidth_bps")
    if bw <= 0:
        raise ValueError(f"{where}.bandwidth_bps: must be > 0, got {bw!r}")
    rate = d.get("error_rate")
    if rate != 0:
        raise ValueError(f"{where}.error_rate: the ns-2 bridge has no packet errors "
                         f"(only 0), got {rate!r}")
    sched = []
    for j, ev in enumerate(_list(d.get("delay_schedule_ns"), f"{where}.delay_schedule_ns")):
        w = f"{where}.delay_schedule_ns[{j}]"
        if not (isinstance(ev, list) and len(ev) == 2):
            raise ValueError(f"{w}: expected [at_ns, delay_ns], got {ev!r}")
        sched.append((_secs(ev[0], w + "[0]"), _secs(ev[1], w + "[1]")))
    limit, red = _queue(d.get("queue"), f"{where}.queue")
    return LinkDir(src, dst, nodes[src], nodes[dst], bw, _secs(d.get("delay_ns"), f"{where}.delay_ns"),
                   limit, sched, red, _loss(d.get("loss"), f"{where}.loss"))


def _loss(loss, where: str) -> tuple | None:
    """One direction's loss pattern (``None`` when the document has none) for
    :func:`build_script`: ``("list", sorted indices)`` or ``("periodic", every, first, burst)``.

    ns-2 counts the packets passing its error model in a C ``int`` (and ``offset_ = first + 1``
    must fit one), so larger indices are refused here, naming the field.
    """
    if loss is None:
        return None
    if not isinstance(loss, dict):
        raise ValueError(f"{where}: expected an object, got {loss!r}")
    kind = loss.get("kind")
    if kind == "list":
        _check_keys(loss, layout.keys("LossPattern", "list"), where)
        packets = [_int(p, f"{where}.packets[{j}]", 0, _INT_MAX - 1)
                   for j, p in enumerate(_list(loss.get("packets"), f"{where}.packets"))]
        if packets != sorted(set(packets)):
            raise ValueError(f"{where}.packets: expected distinct indices in increasing order")
        return ("list", packets)
    if kind == "periodic":
        _check_keys(loss, layout.keys("LossPattern", "periodic"), where)
        every = _int(loss.get("every"), f"{where}.every", 1)
        first = _int(loss.get("first"), f"{where}.first", 0, _INT_MAX - 1)
        burst = _int(loss.get("burst"), f"{where}.burst", 1, every)
        return ("periodic", every, first, burst)
    raise ValueError(f"{where}.kind: expected \"list\" or \"periodic\", got {kind!r}")


def _algorithm(alg, where: str) -> tuple[str, dict]:
    """(cc, agent variables) of a flow's ``algorithm``."""
    if alg == "Reno":
        return "reno", {}
    if alg == "NewReno":
        return "newreno", {}
    if isinstance(alg, dict) and set(alg) == {"Vegas"}:
        p = alg["Vegas"]
        _check_keys(p, layout.keys("VegasParams"), f"{where}.Vegas")
        if p.get("flavour") != "ns2":
            raise ValueError(f"{where}.Vegas.flavour: only Vegas flavour \"ns2\" maps to ns-2's "
                             f"Agent/TCP/Vegas, got {p.get('flavour')!r}")
        return "vegas", {var: _tcl_num(p.get(k), f"{where}.Vegas.{k}")
                         for k, var in _VEGAS_PARAMS.items()}
    name = next(iter(alg)) if isinstance(alg, dict) and alg else alg
    raise ValueError(f"{where}: the ns-2 bridge supports Reno, NewReno and Vegas (flavour "
                     f"\"ns2\"), got {name!r}")


def _tick_phase(tcp: dict, seed: int, i: int, where: str) -> tuple[float, bool]:
    """(phase in seconds, seeded?) of flow ``i``: the document's ``tick_phase`` when set, else
    the phase the core draws for a seeded flow, asked of the core itself so that both
    simulators run with the same value."""
    tick = _float(tcp.get("tick"), f"{where}.tick")
    if tick <= 0:
        raise ValueError(f"{where}.tick: must be > 0, got {tick!r}")
    if "tick_phase" not in tcp:
        from ..core import load_core

        return load_core().seeded_tick_phase(seed, i, tick), True
    phase = _float(tcp["tick_phase"], f"{where}.tick_phase")
    if not phase < tick:
        raise ValueError(f"{where}.tick_phase: must be < tick ({tick!r} s), got {phase!r}")
    return phase, False


def _flow(i: int, f, nodes: list, duration_ns: int, seed: int) -> Flow:
    where = f"flows[{i}]"
    _check_keys(f, layout.keys("FlowSpec"), where)
    name = f.get("name")
    if not isinstance(name, str):
        raise ValueError(f"{where}.name: expected a string, got {name!r}")
    where = f"flows[{i}] ({name!r})"
    src = _int(f.get("from"), f"{where}.from", 0, len(nodes) - 1)
    dst = _int(f.get("to"), f"{where}.to", 0, len(nodes) - 1)
    if src == dst:
        raise ValueError(f"{where}.to: must differ from 'from'")
    cc, agent_vars = _algorithm(f.get("algorithm"), f"{where}.algorithm")

    tcp = f.get("tcp")
    _check_keys(tcp, layout.keys("TcpConfig"), f"{where}.tcp")
    if cc == "vegas" and tcp.get("vegas_headers") is not False:
        raise ValueError(f"{where}.tcp.vegas_headers: ns-2's Vegas agent always sends "
                         "packetSize_ bytes without header; only false is supported")
    for k, (var, kind) in _TCP_FIELDS.items():
        w = f"{where}.tcp.{k}"
        v = tcp.get(k)
        if kind == "int":
            agent_vars[var] = _tcl_num(_int(v, w), w)
        elif kind == "bool":
            agent_vars[var] = _tcl_bool(_bool(v, w))
        elif kind == "int01":
            agent_vars[var] = "1" if _bool(v, w) else "0"
        else:
            agent_vars[var] = _tcl_num(_float(v, w), w)
    timer = tcp.get("partial_ack_timer", "first")
    if timer not in _PARTIAL_ACK_TIMER:
        raise ValueError(f"{where}.tcp.partial_ack_timer: must be one of first, every, got {timer!r}")
    if cc == "newreno":
        agent_vars["newreno_changes1_"] = _PARTIAL_ACK_TIMER[timer]
    packet_size = _int(tcp.get("packet_size"), f"{where}.tcp.packet_size", 1)
    phase, seeded = _tick_phase(tcp, seed, i, f"{where}.tcp")

    start_ns = _int(f.get("start_ns"), f"{where}.start_ns", 0, 2**63 - 1)
    stop_ns = f.get("stop_ns")
    if stop_ns is not None:
        stop_ns = _int(stop_ns, f"{where}.stop_ns", 0, 2**63 - 1)
    app = f.get("app")
    kind = app.get("kind") if isinstance(app, dict) else None
    file_size = file_packets = None
    if kind == "ftp":
        _check_keys(app, layout.keys("AppSpec", "ftp"), f"{where}.app")
    elif kind == "file":
        _check_keys(app, layout.keys("AppSpec", "file"), f"{where}.app")
        # ns-2's Application send takes a C int of bytes.
        file_size = _int(app.get("bytes"), f"{where}.app.bytes", 1)
    elif kind == "file-packets":
        file_packets = _file_packets(app, f"{where}.app")
    else:
        raise ValueError(f"{where}.app.kind: the ns-2 bridge supports ftp and file "
                         f"applications, got {kind!r}")
    return Flow(index=i, name=name, cc=cc, src=src, dst=dst, src_name=nodes[src],
                dst_name=nodes[dst], start=start_ns / 1e9,
                stop=None if stop_ns is None or stop_ns >= duration_ns else stop_ns / 1e9,
                app=kind, file_size=file_size, agent_vars=agent_vars, packet_size=packet_size,
                header_bytes=_int(tcp.get("header_bytes"), f"{where}.tcp.header_bytes"),
                syn=_bool(tcp.get("syn"), f"{where}.tcp.syn"),
                ack_size=_int(tcp.get("ack_size"), f"{where}.tcp.ack_size", 1),
                tick_phase=phase, tick_phase_seeded=seeded, file_packets=file_packets)


def _file_packets(app: dict, where: str) -> int:
    """The packet count of a file given in packets (the core's ``file-packets``).

    ns-2 reads it with ``atoi`` into ``curseq_`` (a C ``int``), hence the bound.  With the SYN
    of Reno/NewReno, ns-2 numbers the SYN 0 and raises ``curseq_`` by one when it sends it, so
    ``produce N`` still sends N data packets, as the core does; that raise must not overflow,
    so N stays below the largest ``int``.
    """
    _check_keys(app, layout.keys("AppSpec", "file-packets"), where)
    return _int(app.get("packets"), f"{where}.packets", 1, _INT_MAX - 1)


def build_model(doc: dict) -> Model:
    """Map a normalised scenario (the dict of ``vegaslab.normalize``) onto ns-2's subset.

    Raises ``ValueError`` naming the field for anything ns-2 cannot express.
    """
    if not isinstance(doc, dict):
        raise TypeError(f"expected the normalised scenario (a dict), got {type(doc).__name__}")
    if doc.get("format") != FORMAT:
        raise ValueError(f"format: the ns-2 bridge reads normalised scenarios of format "
                         f"{FORMAT}, got {doc.get('format')!r}")
    if "tie_order" in doc:  # the core writes it only when it is not the default
        raise ValueError(f"run.tie_order = {doc['tie_order']!r}: ties ordered by a hash drawn from the "
                         "seed have no ns-2 counterpart (ns-2 runs them in its scheduler's order); "
                         "leave run.tie_order at its default to run in ns-2")
    _check_keys(doc, layout.keys(layout.ROOT), "scenario")
    duration_ns = _int(doc.get("duration_ns"), "duration_ns", 1, 2**63 - 1)
    seed = _int(doc.get("seed"), "seed", 0, 2**64 - 1)
    if _list(doc.get("udp", []), "udp"):
        raise ValueError("udp: UDP sources are not supported by the ns-2 bridge")
    if _list(doc.get("aqt_routers", []), "aqt_routers"):
        raise ValueError("aqt_routers: AQT routers (RoVegas) are not supported by the ns-2 bridge")
    nodes = _list(doc.get("nodes"), "nodes")
    for i, n in enumerate(nodes):
        if not isinstance(n, str):
            raise ValueError(f"nodes[{i}]: expected a string, got {n!r}")

    links: list[LinkDir] = []
    pairs = set()
    changes: list = []
    for i, link in enumerate(_list(doc.get("links"), "links")):
        where = f"links[{i}]"
        _check_keys(link, layout.keys("LinkSpec"), where)
        a = _int(link.get("a"), f"{where}.a", 0, len(nodes) - 1)
        b = _int(link.get("b"), f"{where}.b", 0, len(nodes) - 1)
        where = f"links[{i}] ({nodes[a]!r} - {nodes[b]!r})"
        if a == b or frozenset((a, b)) in pairs:
            # ns-2 knows one simplex link per ordered node pair ($ns link $a $b).
            raise ValueError(f"{where}: a second link between the same nodes, or a loop, "
                             "has no ns-2 counterpart")
        pairs.add(frozenset((a, b)))
        links.append(_direction(link.get("forward"), a, b, nodes, f"{where}.forward"))
        links.append(_direction(link.get("reverse"), b, a, nodes, f"{where}.reverse"))
        changes.extend(_link_changes(link.get("down_ns", []), links[-2:], a, b, where))
    if not links:
        raise ValueError("links: the scenario has no links")

    flows = [_flow(i, f, nodes, duration_ns, seed) for i, f in enumerate(_list(doc.get("flows"), "flows"))]
    if not flows:
        raise ValueError("flows: the scenario has no TCP flows")
    name = doc.get("id")
    changes.sort(key=lambda c: c[0])   # stable: links in scenario order at one instant
    return Model(nodes=list(nodes), links=links, flows=flows, duration=duration_ns / 1e9,
                 seed=seed, name=name if isinstance(name, str) else "", normalized=doc,
                 link_changes=changes)


def _link_changes(down, dirs, a: int, b: int, where: str) -> list:
    """``(at_s, op, a, b)`` of a link's ``down_ns`` intervals: ``$ns rtmodel-at`` events.

    The core models ns-2's ``rtproto Session`` (routes recomputed at the instant of a change,
    no routing packets), so the script asks for it. Three set-ups are
    refused on a link that fails, as ns-2 would not run them like the core: a RED queue (ns-2's
    ``REDQueue::reset`` clears the average at the failure; the core keeps it) and a delay
    schedule (a dynamic ``LinkDelay`` assumes packets leave in arrival order and aborts when a
    lower delay lets one overtake); and a loss pattern (the core counts a packet when its
    queue accepts it, ns-2's ``link-lossmodel`` after the link, so the packets a failure
    discards shift the core's pattern only).
    """
    out = []
    for j, iv in enumerate(_list(down, f"{where}.down_ns")):
        w = f"{where}.down_ns[{j}]"
        if not (isinstance(iv, list) and len(iv) == 2):
            raise ValueError(f"{w}: expected [from_ns, to_ns], got {iv!r}")
        frm, to = _secs(iv[0], w + "[0]"), _secs(iv[1], w + "[1]")
        if not 0 < frm < to:
            raise ValueError(f"{w}: expected 0 < from < to, got {iv!r}")
        out += [(frm, "down", a, b), (to, "up", a, b)]
    if out:
        for ld in dirs:
            side = "forward" if ld.src == a else "reverse"
            if ld.red is not None:
                raise ValueError(f"{where}.{side}.queue: a RED queue on a link that goes down has "
                                 "no ns-2 counterpart in the bridge (ns-2 resets RED's average "
                                 "at the failure)")
            if ld.schedule:
                raise ValueError(f"{where}.{side}.delay_schedule_ns: a delay schedule on a link "
                                 "that goes down is not supported by ns-2 (its dynamic links "
                                 "assume packets keep their order)")
            if ld.loss is not None:
                raise ValueError(f"{where}.{side}.loss: a loss pattern on a link that goes down "
                                 "has no ns-2 counterpart in the bridge (ns-2's error model, after "
                                 "the link, never sees the packets a failure discards; the core's "
                                 "pattern has counted them)")
    return out


def ns2_seed(seed: int) -> int:
    """The seed given to ns-2's default RNG (``$defaultRNG seed``) for a scenario seed: the
    first 8 bytes of SHA-256 of ``"vegaslab ns-2 seed <seed>"``, spread over 1..2**31-2 (the
    seeds ns-2 takes; 0 would ask for one from the clock).

    Why a hash (from ns-2.35's tools/rng.cc): the scenario seed itself is a biased choice:
    ``seed s`` sets all six words of MRG32k3a's state to ``s``, and the generator is linear, so
    the stream of seed ``s`` is ``s`` times the stream of seed 1 word by word: the first draw is
    about 0.00034 * s (a 1 % loss draw comes out "lose" for every seed up to 29), and the
    streams of seeds 1 and 2 agree draw after draw as ``u2 = 2 * u1 mod 1`` within 6e-6.  Hashed
    seeds start anywhere in (0, 1) and relate to each other only through large, unrelated
    multipliers.  Substreams (``next-substream`` k times from one seed, ns-2's own method for
    replications) would be independent by construction, but each jump is one Tcl call (about 6
    us) and scenario seeds are 64-bit, so seed k would cost k calls.
    """
    digest = hashlib.sha256(f"vegaslab ns-2 seed {int(seed)}".encode()).digest()
    return 1 + int.from_bytes(digest[:8], "big") % (2**31 - 2)


# ns-2.35's MRG32k3a (tools/rng.cc, ``RNG::U01``), as far as the tick-phase rule needs it:
# the first draw of a generator whose state ``$rng seed s`` set to six times ``s``.  Every
# step is exact in doubles (products below 2**53), so this equals ns-2's draw bit for bit.
_MRG_M1 = 4294967087.0
_MRG_M2 = 4294944443.0
_MRG_NORM = 1.0 / (_MRG_M1 + 1.0)


def _mrg_first_draw(s: int) -> float:
    x = float(s)
    p1 = 1403580.0 * x - 810728.0 * x
    p1 -= int(p1 / _MRG_M1) * _MRG_M1     # C's static_cast<long> truncates, as int() does
    if p1 < 0.0:
        p1 += _MRG_M1
    p2 = 527612.0 * x - 1370589.0 * x
    p2 -= int(p2 / _MRG_M2) * _MRG_M2
    if p2 < 0.0:
        p2 += _MRG_M2
    return (p1 - p2) * _MRG_NORM if p1 > p2 else (p1 - p2 + _MRG_M1) * _MRG_NORM


#: The smallest positive double: the tick used to make a phase of exactly 0 (see below).
_TINY = 5e-324


def phase_reset(phase: float) -> tuple[int, float]:
    """(seed of the bridge's phase RNG, ``tcpTick_`` during the phase reset) with which
    ns-2's ``boot_time_ = Random::uniform(tcp_tick_)``, i.e. ``tcpTick_ * u``, comes out as
    exactly ``phase``: ``u`` is the first draw after ``$rng seed s`` (:func:`_mrg_first_draw`).

    The tick is ``phase / u`` or one of its neighbouring doubles; for ``phase = 0`` the
    smallest double, whose product with a draw below 1/2 rounds to 0.  Seeds 1, 2, ... are
    tried in turn; one of the first few always works (the products of neighbouring ticks
    are spaced by at most about one unit in the last place of ``phase``).
    """
    phase = float(phase)
    if not (math.isfinite(phase) and phase >= 0.0):
        raise ValueError(f"tick phase: must be a finite number >= 0, got {phase!r}")
    for s in range(1, 1000):
        u = _mrg_first_draw(s)
        if phase == 0.0:
            if _TINY * u == 0.0:
                return s, _TINY
            continue
        t = phase / u
        candidates = [t]
        for direction in (0.0, math.inf):
            c = t
            for _ in range(3):
                c = math.nextafter(c, direction)
                candidates.append(c)
        for c in candidates:
            if c > 0.0 and math.isfinite(c) and c * u == phase:
                return s, c
    raise ValueError(f"tick phase {phase!r}: no ns-2 seed reproduces it")  # pragma: no cover


# ----------------------------------------------------------------------- the script

_PROCS = r"""
# Drop trace (and optionally receive trace) on one link direction, without the
# enqueue/dequeue traces that $ns trace-queue would add.
proc vl_trace_link {link f want_recv} {
    global ns
    $link instvar drpT_ drophead_ rcvT_ ttl_ fromNode_ toNode_ queue_
    set drpT_ [$ns create-trace Drop $f $fromNode_ $toNode_ ""]
    set nxt [$drophead_ target]
    $drophead_ target $drpT_
    $drpT_ target $nxt
    $queue_ drop-target $drophead_
    if {$want_recv} {
        set rcvT_ [$ns create-trace Recv $f $fromNode_ $toNode_ ""]
        $rcvT_ target [$ttl_ target]
        $ttl_ target $rcvT_
    }
}
# The tick clock's phase, ns-2's boot_time_, is no Tcl variable: TcpAgent::reset() draws it as
# tcpTick_ times a draw of the default RNG (at $ns run, which resets every agent). Each agent's
# reset runs this instead: ns-2's own reset first (its draw from defaultRNG included, so the
# generator's later draws are what ns-2 alone would make), then a second reset with the bridge's
# RNG as the default, seeded so that its first draw is known, and tcpTick_ set so that the
# product is exactly the phase (vegaslab.ns2.translate.phase_reset); then tcpTick_ and the RTT
# estimator's starting values (computed from the stand-in tick) are put back.
proc vl_phase_reset {i seed tick_for_phase} {
    global tcp defaultRNG vl_phase_rng
    set t $tcp($i)
    $t cmd reset
    set saved {}
    foreach var {tcpTick_ srtt_ rttvar_ srtt_init_ rttvar_init_} {
        lappend saved $var [$t set $var]
    }
    $t set srtt_init_ 0
    $t set rttvar_init_ 0
    $vl_phase_rng seed $seed
    $vl_phase_rng default
    $t set tcpTick_ $tick_for_phase
    $t cmd reset
    $defaultRNG default
    foreach {var value} $saved {
        $t set $var $value
    }
}
proc vl_done {i} {
    global ns tcp
    puts "VLAB DONE $i [$ns now] [$tcp($i) set nrexmitpack_] [$tcp($i) set nrexmit_]"
}
"""

def _link_change_script(model: Model) -> list:
    """Tcl for the model's link changes: Session routing (routes recomputed at each change, as
    the core does), each failing link made dynamic now, with the packets its head refuses
    while down traced as drops (ns-2 frees them silently otherwise; before the queue monitors,
    which then count them as arrivals and drops, as the core does), and the changes."""
    L = ["$ns rtproto Session"]
    ends = []
    for _, _, a, b in model.link_changes:
        for x, y in ((a, b), (b, a)):
            if (x, y) not in ends:
                ends.append((x, y))
    for x, y in ends:
        x, y = _int(x, "link_changes"), _int(y, "link_changes")
        L.append(f"[$ns link $n({x}) $n({y})] dynamic")
        L.append(f"[$ns link $n({x}) $n({y})] linkfail-drop-trace")
    for at, op, a, b in model.link_changes:
        if op not in ("down", "up"):
            raise ValueError(f"link_changes: op must be down or up, got {op!r}")
        L.append(f"$ns rtmodel-at {_tcl_num(at, 'link_changes')} {op} "
                 f"$n({_int(a, 'link_changes')}) $n({_int(b, 'link_changes')})")
    return L


_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_AGENT_VARS = {var for var, _ in _TCP_FIELDS.values()} | set(_VEGAS_PARAMS.values()) | {"newreno_changes1_"}


def _check_model(model: Model) -> None:
    """A :class:`Model` can also be built by hand: check that what :func:`build_script` writes
    verbatim (agent and RED variables, indices) is still a fixed name and a plain literal."""
    def literal(v, where):
        if not (isinstance(v, str) and (v in ("true", "false") or _NUMBER_TEXT.fullmatch(v))):
            raise ValueError(f"{where}: not a Tcl number or boolean: {v!r}")
    n = len(model.nodes)
    for k, ld in enumerate(model.links):
        _int(ld.src, f"links/{k}.src", 0, n - 1)
        _int(ld.dst, f"links/{k}.dst", 0, n - 1)
        for var, val in (ld.red or {}).items():
            if not (isinstance(var, str) and re.fullmatch(r"[a-z_0-9]+_", var)):
                raise ValueError(f"links/{k}.red: not a Queue/RED variable: {var!r}")
            literal(val, f"links/{k}.red.{var}")
        _check_loss(ld.loss, f"links/{k}.loss")
    for i, f in enumerate(model.flows):
        if f.index != i or f.cc not in _AGENT_CLASS or f.app not in ("ftp", "file", "file-packets"):
            raise ValueError(f"flows/{i}: index, cc or app is not one the bridge made")
        _int(f.src, f"flows/{i}.src", 0, n - 1)
        _int(f.dst, f"flows/{i}.dst", 0, n - 1)
        for var, val in f.agent_vars.items():
            if var not in _AGENT_VARS:
                raise ValueError(f"flows/{i}.agent_vars: not an agent variable: {var!r}")
            literal(val, f"flows/{i}.agent_vars.{var}")
        phase = f.tick_phase
        if (isinstance(phase, bool) or not isinstance(phase, (int, float))
                or not (math.isfinite(phase) and phase >= 0)):
            raise ValueError(f"flows/{i}.tick_phase: expected seconds >= 0, got {phase!r}")


def _check_loss(loss, where: str) -> None:
    """A hand-built :attr:`LinkDir.loss` must be what :func:`_loss` makes."""
    if loss is None:
        return
    if isinstance(loss, tuple) and len(loss) == 2 and loss[0] == "list":
        _loss({"kind": "list", "packets": loss[1]}, where)
    elif isinstance(loss, tuple) and len(loss) == 4 and loss[0] == "periodic":
        _loss({"kind": "periodic", "every": loss[1], "first": loss[2], "burst": loss[3]}, where)
    else:
        raise ValueError(f"{where}: not a loss pattern: {loss!r}")


def _loss_lines(k: int, ld: LinkDir, trace: bool) -> list[str]:
    """OTcl putting link direction ``k``'s loss pattern where the core applies it.

    ``$ns link-lossmodel`` (SimpleLink ``insert-linkloss``), which puts the error model
    between the link's delay line and the far node: a lost packet has occupied the queue and the
    transmitter, and the model counts every packet the queue let through, in order (data and
    ACKs alike), as the core's pattern does.  (``$ns lossmodel`` would put it before the queue,
    counting packets the queue then drops.)  ns-2 ``unit pkt`` models: ``ErrorModel/List``
    counts from 0 like the scenario; ``ErrorModel/Periodic`` counts from 1 and loses the packet
    whose count reaches ``offset_``, then every ``period_``-th, each with the ``burstlen_ - 1``
    after it, so ``offset_ = first + 1``.  The lost packets go to a drop trace of their own
    (so they appear as ``d`` events of the flow) that ends in the null agent, not through the
    link's drop head, where the queue monitor would count them as queue drops: the core counts
    them as ``errors``, which are part of ``departures``.  An empty list loses nothing and
    inserts no model (ns-2's List model warns on every packet when its list is empty).
    """
    loss = ld.loss
    if loss is None or (loss[0] == "list" and not loss[1]):
        return []
    a, b = ld.src, ld.dst
    w = f"links/{k}.loss"
    if loss[0] == "list":
        L = [f"set em({k}) [new ErrorModel/List]",
             f"$em({k}) unit pkt",
             f"$em({k}) droplist {{{' '.join(_tcl_num(p, w) for p in loss[1])}}}"]
    else:
        _, every, first, burst = loss
        L = [f"set em({k}) [new ErrorModel/Periodic]",
             f"$em({k}) unit pkt",
             f"$em({k}) set period_ {_tcl_num(every, w)}",
             f"$em({k}) set offset_ {_tcl_num(first + 1, w)}",
             f"$em({k}) set burstlen_ {_tcl_num(burst, w)}",
             f"$em({k}) set default_drop_ 0"]
    L.append(f"$ns link-lossmodel $em({k}) $n({a}) $n({b})")
    if trace:
        L.append(f'set emT({k}) [$ns create-trace Drop $vl_tf $n({a}) $n({b}) ""]')
        L.append(f"$emT({k}) target [$ns set nullAgent_]")
        L.append(f"$em({k}) drop-target $emT({k})")
    else:
        L.append(f"$em({k}) drop-target [$ns set nullAgent_]")
    return L


def build_script(model: Model, *, trace: bool = True, trace_file: str = "vl.tr",
                 seed: int | None = None, cwnd_trace: bool = False,
                 trace_all: str | None = None) -> str:
    """OTcl text that runs ``model`` and prints ``VLAB ...`` result lines on stdout.

    Output lines: ``VLAB DONE <flow> <t> nrexmitpack nrexmit`` when a file transfer completes,
    ``VLAB FLOW <flow> ack ndatapack nrexmitpack nrexmit ndatabytes cwnd`` and (with trace)
    ``VLAB QUEUE <dir> parrivals pdrops pdepartures bdepartures sum lastx lasty`` at the end.
    With trace, drop events of every link direction and receive events of the link
    directions into flow destinations go to ``trace_file`` (a plain file name, relative to
    ns-2's working directory).  ``<flow>`` and ``<dir>`` are indices into ``model.flows``
    and ``model.links``.

    ``seed`` (default ``model.seed``) seeds ns-2's default RNG through :func:`ns2_seed`; the
    tick phases are the model's (``Flow.tick_phase``) whatever it is.

    ``cwnd_trace``: every sender also traces ``cwnd_`` (ns-2's traced variable: a line per
    change, time to 10 us and the value to 0.001 packet) into ``vl_cwnd_<flow>.tr``, from
    which :func:`vegaslab.ns2.runner.mean_cwnd` gives the time-weighted mean window. Off by
    default: a line per ACK.

    Tick phases: every sender runs with ``Flow.tick_phase`` as its ``boot_time_``, exactly
    (bit for bit) the phase the core uses, for set and seeded phases alike: decided so that
    a single run, not only a mean over seeds, can be compared packet for packet.  ns-2 binds
    no Tcl variable to ``boot_time_`` and draws it in ``TcpAgent::reset()`` as ``tcpTick_``
    times a draw of the default RNG, so each agent gets a per-object ``reset`` (the Tcl
    ``vl_phase_reset``): ns-2's own reset, then a second one with the bridge's RNG (seeded so
    that its first draw ``u`` is known) as the default and ``tcpTick_`` temporarily
    ``phase / u`` (:func:`phase_reset` picks a seed and tick whose product is exactly the
    phase), after which ``tcpTick_`` and the RTT estimator's starting values are put back.
    The default RNG makes the same draws as without this (its ``boot_time_`` draw is made and
    discarded).  ``$rng seed`` also sets MRG32k3a's package seed, which only an ``RNG``
    created after ``$ns run`` would start from; the scripts create none.

    ``trace_all``: a plain file name; ns-2's ``$ns trace-all`` writes every link's ``+ - r d``
    lines there (to compare with the core's ``[trace]``, tests/test_trace_ns2.py).
    """
    if trace_all is not None and not (isinstance(trace_all, str) and _FILE_NAME.fullmatch(trace_all)):
        raise ValueError(f"trace_all: expected a plain file name ({_FILE_NAME.pattern}), got {trace_all!r}")
    if not (isinstance(trace_file, str) and _FILE_NAME.fullmatch(trace_file)):
        raise ValueError(f"trace_file: expected a plain file name ({_FILE_NAME.pattern}), "
                         f"got {trace_file!r}")
    _check_model(model)
    s = ns2_seed(_int(model.seed if seed is None else seed, "seed", 0, 2**64 - 1))
    L = ["# generated by vegaslab.ns2 -- ns-2.35 OTcl",
         f"# scenario: {_comment_text(model.name)}",
         "set ns [new Simulator]",
         *([f"set vl_all [open {trace_all} w]", "$ns trace-all $vl_all"] if trace_all else []),
         f"global defaultRNG\n$defaultRNG seed {_tcl_num(s, 'seed')}",
         "set vl_phase_rng [new RNG]",
         _PROCS]
    for i, n in enumerate(model.nodes):
        L.append(f"set n({i}) [$ns node] ;# {_comment_text(n)}")
    for k, ld in enumerate(model.links):
        a, b = ld.src, ld.dst
        for var, val in (ld.red or {}).items():
            L.append(f"Queue/RED set {var} {val}")
        L.append(f"$ns simplex-link $n({a}) $n({b}) {_tcl_num(ld.bandwidth, f'links/{k}')}"
                 f" {_tcl_num(ld.delay, f'links/{k}')} {'RED' if ld.red else 'DropTail'}"
                 f" ;# {_comment_text(ld.name)}")
        L.append(f"$ns queue-limit $n({a}) $n({b}) {_tcl_num(ld.limit, f'links/{k}')}")
    for k, ld in enumerate(model.links):
        a, b = ld.src, ld.dst
        for at, d in ld.schedule:
            L.append(f'$ns at {_tcl_num(at, "at")} "[[$ns link $n({a}) $n({b})] link] set delay_'
                     f' {_tcl_num(d, "delay")}"')
    dsts = {f.dst for f in model.flows}
    if trace:
        L.append(f"set vl_tf [open {trace_file} w]")
        for ld in model.links:
            L.append(f"vl_trace_link [$ns link $n({ld.src}) $n({ld.dst})] $vl_tf "
                     f"{int(ld.dst in dsts)}")
    if model.link_changes:
        L.extend(_link_change_script(model))
    if trace:
        # queue monitors after the traces (both hook the drop chain; order is irrelevant)
        for k, ld in enumerate(model.links):
            L.append(f"set qm({k}) [$ns monitor-queue $n({ld.src}) $n({ld.dst}) 0 0.1]")
    for k, ld in enumerate(model.links):
        L.extend(_loss_lines(k, ld, trace))
    for f in model.flows:
        i = f.index
        L.append(f"# flow {i}: {_comment_text(f.name)} ({f.cc}) "
                 f"{_comment_text(f.src_name)} -> {_comment_text(f.dst_name)}")
        L.append(f"set tcp({i}) [new {_AGENT_CLASS[f.cc]}]")
        L.append(f"$tcp({i}) set fid_ {i}")
        for var, val in f.agent_vars.items():
            L.append(f"$tcp({i}) set {var} {val}")
        phase_seed, phase_tick = phase_reset(f.tick_phase)
        L.append(f"# tick phase {_tcl_num(f.tick_phase, 'tick_phase')} s "
                 f"({'drawn from the seed' if f.tick_phase_seeded else 'set'})")
        L.append(f'$tcp({i}) proc reset {{}} "vl_phase_reset {i} {_tcl_num(phase_seed, "phase")}'
                 f' {_tcl_num(phase_tick, "phase")}"')
        L.append(f"$ns attach-agent $n({f.src}) $tcp({i})")
        L.append(f"set sink({i}) [new Agent/TCPSink]")
        L.append(f"$sink({i}) set packetSize_ {_tcl_num(f.ack_size, 'ack_size')}")
        L.append(f"$ns attach-agent $n({f.dst}) $sink({i})")
        L.append(f"$ns connect $tcp({i}) $sink({i})")
        L.append(f"set app({i}) [new Application/FTP]")
        L.append(f"$app({i}) attach-agent $tcp({i})")
        L.append(f'$tcp({i}) proc done {{}} "vl_done {i}"')
        if cwnd_trace:
            L.append(f"set vl_cw({i}) [open vl_cwnd_{i}.tr w]")
            L.append(f"$tcp({i}) attach $vl_cw({i})")
            L.append(f"$tcp({i}) trace cwnd_")
        if f.app == "file":
            L.append(f'$ns at {_tcl_num(f.start, "start")} "$app({i}) send '
                     f'{_tcl_num(f.file_size, "file_size")}"')
        elif f.app == "file-packets":
            # ns-2's packet-count idiom (Application/FTP produce -> the agent's advance): it
            # sets curseq_ to N, as sendmsg of N x packetSize_ bytes would (ns-2 rounds bytes
            # up to whole packets); at the start, where nothing was sent, the two are the same.
            L.append(f'$ns at {_tcl_num(f.start, "start")} "$app({i}) produce '
                     f'{_tcl_num(_int(f.file_packets, f"flows/{i}.file_packets", 1), "file_packets")}"')
        else:
            L.append(f'$ns at {_tcl_num(f.start, "start")} "$app({i}) start"')
        if f.stop is not None and f.stop < model.duration:
            L.append(f'$ns at {_tcl_num(f.stop, "stop")} "$app({i}) stop"')
    L.append("proc vl_finish {} {")
    L.append("    global tcp qm")
    for f in model.flows:
        i = f.index
        L.append(f'    puts "VLAB FLOW {i} [$tcp({i}) set ack_] [$tcp({i}) set ndatapack_]'
                 f' [$tcp({i}) set nrexmitpack_] [$tcp({i}) set nrexmit_]'
                 f' [$tcp({i}) set ndatabytes_] [$tcp({i}) set cwnd_]"')
    if trace:
        L.append("    global vl_tf")
        for k in range(len(model.links)):
            L.append(f"    set int [$qm({k}) get-pkts-integrator]")
            L.append(f'    puts "VLAB QUEUE {k} [$qm({k}) set parrivals_] [$qm({k}) set pdrops_]'
                     f' [$qm({k}) set pdepartures_] [$qm({k}) set bdepartures_]'
                     f' [$int set sum_] [$int set lastx_] [$int set lasty_]"')
        L.append("    close $vl_tf")
    if cwnd_trace:
        L.append("    global vl_cw")
        L.extend(f"    close $vl_cw({f.index})" for f in model.flows)
    if trace_all:
        L.append("    global vl_all")
        L.append("    close $vl_all")
    L.append("    flush stdout")
    L.append("    exit 0")
    L.append("}")
    L.append(f"$ns at {_tcl_num(model.duration, 'duration')} vl_finish")
    L.append("$ns run")
    return "\n".join(L) + "\n"
