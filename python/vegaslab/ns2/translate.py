"""Scenario (TOML schema of docs/scenario-format.md) -> ns-2.35 OTcl script.

Only a subset of the schema maps onto ns-2: ``[[links]]`` and ``[dumbbell]`` with
DropTail or RED (``kind = "red"``, as ``Queue/RED`` in packet mode) queues, ``[[flows]]`` with cc reno/newreno/vegas (vegas flavour "ns2"), FTP or file
applications, the ``[flows.tcp]`` fields and ``[run] duration``. Anything else raises
``ValueError`` naming the field.  ``[meta]``, ``[monitor]``, ``run.seed`` and
``run.sample_interval`` are accepted and ignored (the ns-2 runs here are deterministic and the
bridge reports no time series).

The main entry points are :func:`load_scenario`, :func:`apply_overrides`,
:func:`build_model` (validated, normalised topology/flows) and :func:`build_script`.
"""
from __future__ import annotations

import copy
import pathlib
import re
import tomllib
from dataclasses import dataclass, field

__all__ = [
    "parse_time", "parse_bandwidth", "parse_size", "load_scenario", "apply_overrides",
    "build_model", "build_script", "Model", "LinkDir", "Flow",
]

# --------------------------------------------------------------------------- units

_NUM = r"([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_BW_UNITS = {"bps": 1.0, "kbps": 1e3, "Kbps": 1e3, "Kb": 1e3, "Mbps": 1e6, "Mb": 1e6,
             "Gbps": 1e9, "Gb": 1e9}
_SIZE_UNITS = {"B": 1, "KB": 1000, "MB": 1000 ** 2, "GB": 1000 ** 3}


def _parse_unit(value, units: dict, kind: str, where: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{where}: expected a {kind}, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*" + _NUM + r"\s*([A-Za-z]*)\s*", value)
        if m:
            num, unit = float(m.group(1)), m.group(2)
            if unit == "":
                return num
            if unit in units:
                return num * units[unit]
    raise ValueError(f"{where}: expected a {kind} ({'/'.join(units)}), got {value!r}")


def parse_time(value, where: str = "time") -> float:
    """Seconds from ``"20ms"``-style strings or bare numbers (seconds)."""
    return _parse_unit(value, _TIME_UNITS, "time", where)


def parse_bandwidth(value, where: str = "bandwidth") -> float:
    """bit/s from ``"1.5Mbps"``-style strings (decimal prefixes) or bare numbers."""
    return _parse_unit(value, _BW_UNITS, "bandwidth", where)


def parse_size(value, where: str = "size") -> int:
    """Bytes from ``"10MB"``-style strings (1 MB = 1,000,000 B) or bare numbers."""
    v = _parse_unit(value, _SIZE_UNITS, "size", where)
    if v != int(v):
        raise ValueError(f"{where}: size must be a whole number of bytes, got {value!r}")
    return int(v)


# ---------------------------------------------------------------- loading/overrides

def load_scenario(scenario) -> dict:
    """A scenario dict (deep-copied) from a dict, or a TOML file path (str/Path)."""
    if isinstance(scenario, dict):
        return copy.deepcopy(scenario)
    if isinstance(scenario, (str, pathlib.Path)):
        with open(scenario, "rb") as fh:
            return tomllib.load(fh)
    raise TypeError(f"scenario must be a dict or a TOML path, got {type(scenario).__name__}")


_KEY_TOKEN = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|(\.)")


def _parse_key(key: str) -> list:
    tokens, pos, expect_name = [], 0, True
    while pos < len(key):
        m = _KEY_TOKEN.match(key, pos)
        if not m:
            raise ValueError(f"override key {key!r}: bad syntax at {key[pos:]!r}")
        name, idx, dot = m.groups()
        if name is not None:
            if not expect_name:
                raise ValueError(f"override key {key!r}: missing '.' before {name!r}")
            tokens.append(name)
            expect_name = False
        elif idx is not None:
            if expect_name:
                raise ValueError(f"override key {key!r}: index without a name")
            tokens.append(int(idx))
        else:
            if expect_name:
                raise ValueError(f"override key {key!r}: empty path element")
            expect_name = True
        pos = m.end()
    if expect_name or not tokens:
        raise ValueError(f"override key {key!r}: incomplete")
    return tokens


def _parse_value(text: str):
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_overrides(scn: dict, overrides) -> dict:
    """Apply ``"dotted.path[0].x=value"`` overrides in place (and return the dict).

    Values are parsed as TOML scalars when possible (numbers, booleans, quoted strings,
    inline tables/arrays), otherwise taken as plain strings.  Missing tables are created;
    list indices must exist.
    """
    for ov in overrides or ():
        if "=" not in ov:
            raise ValueError(f"override {ov!r}: expected key=value")
        key, text = ov.split("=", 1)
        path = _parse_key(key.strip())
        value = _parse_value(text.strip())
        cur = scn
        for i, tok in enumerate(path):
            last = i == len(path) - 1
            where = key.strip()
            if isinstance(tok, int):
                if not isinstance(cur, list) or tok >= len(cur):
                    raise ValueError(f"override {where}: index [{tok}] out of range")
                if last:
                    cur[tok] = value
                else:
                    cur = cur[tok]
            else:
                if not isinstance(cur, dict):
                    raise ValueError(f"override {where}: {tok!r} is not inside a table")
                if last:
                    cur[tok] = value
                else:
                    nxt = path[i + 1]
                    if tok not in cur:
                        if isinstance(nxt, int):
                            raise ValueError(f"override {where}: no list {tok!r}")
                        cur[tok] = {}
                    cur = cur[tok]
    return scn


# ----------------------------------------------------------------------- the model

@dataclass
class LinkDir:
    """One direction of a link: a queue plus a delay line."""
    src: str
    dst: str
    bandwidth: float
    delay: float
    limit: int
    schedule: list = field(default_factory=list)   # [(at_s, delay_s)]
    red: dict | None = None   # Queue/RED class variables (ns-2 name -> Tcl literal), else DropTail

    @property
    def name(self) -> str:
        return f"{self.src}->{self.dst}"


@dataclass
class Flow:
    """A TCP flow: agent class, endpoints, application, ns-2 agent variables."""
    index: int
    name: str
    cc: str
    src: str
    dst: str
    start: float
    stop: float
    app: str
    file_size: int | None
    agent_vars: dict   # ns-2 variable -> Tcl literal
    packet_size: int
    header_bytes: int
    syn: bool
    ack_size: int = 40

    @property
    def agent_class(self) -> str:
        return {"reno": "Agent/TCP/Reno", "newreno": "Agent/TCP/Newreno",
                "vegas": "Agent/TCP/Vegas"}[self.cc]

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
    """Validated, normalised scenario: node order, link directions, flows, duration."""
    nodes: list
    links: list          # [LinkDir]
    flows: list          # [Flow]
    duration: float
    seed: int
    name: str = ""

    def node_id(self, name: str) -> int:
        return self.nodes.index(name)


_TOP_KEYS = {"meta", "variant", "run", "links", "dumbbell", "flows", "monitor"}
_RUN_KEYS = {"duration", "seed", "sample_interval"}
_LINK_KEYS = {"endpoints", "bandwidth", "bandwidth_forward", "bandwidth_reverse", "delay",
              "queue", "delay_schedule"}
_FLOW_KEYS = {"name", "from", "to", "cc", "start", "stop", "app", "file_size", "params", "tcp"}

# flows.tcp field -> (ns-2 variable, kind)
_TCP_FIELDS = {
    "window": ("window_", "int"),
    "window_init": ("windowInit_", "int"),
    "packet_size": ("packetSize_", "int"),
    "header_bytes": ("tcpip_base_hdr_size_", "int"),
    "syn": ("syn_", "bool"),
    "delay_growth": ("delay_growth_", "bool"),
    "max_burst": ("maxburst_", "int"),
    "dupacks": ("numdupacks_", "int"),
    "tick": ("tcpTick_", "time"),
    "min_rto": ("minrto_", "time"),
    "max_rto": ("maxrto_", "time"),
    "initial_rto": ("rtxcur_init_", "time"),
    "limited_transmit": ("singledup_", "int01"),
}
_VEGAS_PARAMS = {"alpha": "v_alpha_", "beta": "v_beta_", "gamma": "v_gamma_"}


def _check_keys(d, allowed, where):
    if not isinstance(d, dict):
        raise ValueError(f"{where}: expected a table, got {d!r}")
    extra = set(d) - set(allowed)
    if extra:
        raise ValueError(f"{where}: not supported by the ns-2 bridge: {sorted(extra)}")


_RED_KEYS = {"kind", "limit", "min", "max", "max_p", "weight", "gentle", "wait", "mean_pktsize"}


def _red_vars(q, where) -> dict:
    """ns-2 Queue/RED variables for a ``kind = "red"`` queue (packet mode, no ECN, classic
    forced drops above max: use_mark_p_ false), as the core's RED (src/queue.rs)."""
    for k in ("min", "max"):
        if k not in q:
            raise ValueError(f"{where}.{k}: required for a RED queue")
    weight = q.get("weight", 0.002)
    return {
        "thresh_": _num(q["min"]), "maxthresh_": _num(q["max"]),
        "linterm_": _num(1.0 / float(q.get("max_p", 0.1))),
        "q_weight_": "-1" if weight == "auto" else _num(weight),
        "gentle_": "true" if q.get("gentle", False) else "false",
        "wait_": "true" if q.get("wait", True) else "false",
        "mean_pktsize_": _num(q.get("mean_pktsize", 500)),
        "bytes_": "false", "queue_in_bytes_": "false", "setbit_": "false",
        "use_mark_p_": "false", "drop_tail_": "true", "drop_front_": "false",
        "drop_rand_": "false", "ns1_compat_": "false", "adaptive_": "0", "cautious_": "0",
    }


def _queue_limit(q, where) -> int:
    if q is None:
        return 50
    kind = q.get("kind", "droptail")
    _check_keys(q, _RED_KEYS if kind == "red" else {"kind", "limit"}, where)
    if kind not in ("droptail", "red"):
        raise ValueError(f"{where}.kind: only 'droptail' and 'red' are supported by the ns-2 bridge, got {kind!r}")
    limit = q.get("limit", 50)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"{where}.limit: expected a positive integer, got {limit!r}")
    return limit


def _int(v, where, minimum=None):
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{where}: expected an integer, got {v!r}")
    if minimum is not None and v < minimum:
        raise ValueError(f"{where}: must be >= {minimum}, got {v!r}")
    return v


def _num(v):
    """Tcl literal for a number (full precision)."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def _link_dirs(spec, where, default_queue=None):
    """Two LinkDir from a [[links]]-style table (endpoints given separately)."""
    bw = spec.get("bandwidth")
    bwf = spec.get("bandwidth_forward", bw)
    bwr = spec.get("bandwidth_reverse", bw)
    if bwf is None or bwr is None:
        raise ValueError(f"{where}.bandwidth: required")
    bwf = parse_bandwidth(bwf, f"{where}.bandwidth")
    bwr = parse_bandwidth(bwr, f"{where}.bandwidth")
    if "delay" not in spec:
        raise ValueError(f"{where}.delay: required")
    delay = parse_time(spec["delay"], f"{where}.delay")
    if bwf <= 0 or bwr <= 0:
        raise ValueError(f"{where}.bandwidth: must be > 0")
    if delay < 0:
        raise ValueError(f"{where}.delay: must be >= 0")
    limit = _queue_limit(spec.get("queue", default_queue), f"{where}.queue")
    sched = []
    for j, ev in enumerate(spec.get("delay_schedule", []) or []):
        _check_keys(ev, {"at", "delay"}, f"{where}.delay_schedule[{j}]")
        sched.append((parse_time(ev["at"], f"{where}.delay_schedule[{j}].at"),
                      parse_time(ev["delay"], f"{where}.delay_schedule[{j}].delay")))
    q = spec.get("queue", default_queue)
    red = _red_vars(q, f"{where}.queue") if q is not None and q.get("kind") == "red" else None
    return bwf, bwr, delay, limit, sched, red


def build_model(scn: dict) -> Model:
    """Validate the ns-2 subset and normalise it into a :class:`Model`."""
    _check_keys(scn, _TOP_KEYS, "scenario")
    run = scn.get("run")
    if run is None or "duration" not in run:
        raise ValueError("run.duration: required")
    _check_keys(run, _RUN_KEYS, "run")
    duration = parse_time(run["duration"], "run.duration")
    if duration <= 0:
        raise ValueError(f"run.duration: must be > 0, got {run['duration']!r}")
    seed = _int(run.get("seed", 1), "run.seed")

    nodes: list[str] = []
    links: list[LinkDir] = []
    seen_pairs = set()

    def node(n):
        if n not in nodes:
            nodes.append(n)

    def add_link(a, b, spec, where):
        if a == b:
            raise ValueError(f"{where}.endpoints: a link needs two different nodes")
        pair = frozenset((a, b))
        if pair in seen_pairs:
            raise ValueError(f"{where}: duplicate link between {a} and {b}")
        seen_pairs.add(pair)
        bwf, bwr, delay, limit, sched, red = _link_dirs(spec, where)
        node(a)
        node(b)
        links.append(LinkDir(a, b, bwf, delay, limit, list(sched), red))
        links.append(LinkDir(b, a, bwr, delay, limit, list(sched), red))

    db = scn.get("dumbbell")
    if db is not None:
        _check_keys(db, {"pairs", "access", "egress", "bottleneck"}, "dumbbell")
        n = _int(db.get("pairs"), "dumbbell.pairs", 1)
        access = db.get("access")
        if access is None:
            raise ValueError("dumbbell.access: required")
        egress = db.get("egress", access)
        if "bottleneck" not in db:
            raise ValueError("dumbbell.bottleneck: required")

        def per_pair(spec, what):
            if isinstance(spec, list):
                if len(spec) != n:
                    raise ValueError(f"dumbbell.{what}: expected {n} tables, got {len(spec)}")
                return [(s, f"dumbbell.{what}[{i}]") for i, s in enumerate(spec)]
            return [(spec, f"dumbbell.{what}")] * n

        lk = {"bandwidth", "bandwidth_forward", "bandwidth_reverse", "delay", "queue",
              "delay_schedule"}
        acc, egr = per_pair(access, "access"), per_pair(egress, "egress")
        for s, w in acc + egr + [(db["bottleneck"], "dumbbell.bottleneck")]:
            _check_keys(s, lk, w)
        # node order: S1..Sn, R1, R2, D1..Dn (ns-2 node ids follow this order)
        for i in range(n):
            node(f"S{i + 1}")
        node("R1")
        node("R2")
        for i in range(n):
            node(f"D{i + 1}")
        for i in range(n):
            add_link(f"S{i + 1}", "R1", acc[i][0], acc[i][1])
        add_link("R1", "R2", db["bottleneck"], "dumbbell.bottleneck")
        for i in range(n):
            add_link("R2", f"D{i + 1}", egr[i][0], egr[i][1])

    for i, spec in enumerate(scn.get("links", []) or []):
        where = f"links[{i}]"
        _check_keys(spec, _LINK_KEYS, where)
        ep = spec.get("endpoints")
        if not (isinstance(ep, list) and len(ep) == 2 and all(isinstance(x, str) for x in ep)):
            raise ValueError(f"{where}.endpoints: expected two node names, got {ep!r}")
        add_link(ep[0], ep[1], spec, where)

    if not links:
        raise ValueError("scenario: no links (give [[links]] or [dumbbell])")

    flows: list[Flow] = []
    names = set()
    for i, f in enumerate(scn.get("flows", []) or []):
        where = f"flows[{i}]"
        _check_keys(f, _FLOW_KEYS, where)
        name = f.get("name", f"flow{i}")
        if name in names:
            raise ValueError(f"{where}.name: duplicate flow name {name!r}")
        names.add(name)
        src, dst = f.get("from"), f.get("to")
        for k, v in (("from", src), ("to", dst)):
            if v not in nodes:
                raise ValueError(f"{where}.{k}: unknown node {v!r}")
        if src == dst:
            raise ValueError(f"{where}: from and to are the same node")
        cc = f.get("cc")
        if cc not in ("reno", "newreno", "vegas"):
            raise ValueError(f"{where}.cc: the ns-2 bridge supports reno, newreno, vegas; got {cc!r}")
        start = parse_time(f.get("start", 0), f"{where}.start")
        if start < 0:
            raise ValueError(f"{where}.start: must be >= 0 s, got {f.get('start')!r}")
        stop = parse_time(f["stop"], f"{where}.stop") if "stop" in f else duration
        if stop < start:
            raise ValueError(f"{where}.stop: must be >= start")
        app = f.get("app", "ftp")
        file_size = None
        if app == "file":
            if "file_size" not in f:
                raise ValueError(f"{where}.file_size: required when app = 'file'")
            file_size = parse_size(f["file_size"], f"{where}.file_size")
            if file_size <= 0:
                raise ValueError(f"{where}.file_size: must be > 0")
        elif app == "ftp":
            if "file_size" in f:
                raise ValueError(f"{where}.file_size: only valid with app = 'file'")
        else:
            raise ValueError(f"{where}.app: expected 'ftp' or 'file', got {app!r}")

        agent_vars: dict[str, str] = {}
        params = f.get("params", {}) or {}
        if not isinstance(params, dict):
            raise ValueError(f"{where}.params: expected a table")
        if cc == "vegas":
            _check_keys(params, set(_VEGAS_PARAMS) | {"flavour"}, f"{where}.params")
            flavour = params.get("flavour", "ns2")
            if flavour != "ns2":
                raise ValueError(f"{where}.params.flavour: only 'ns2' maps to ns-2, got {flavour!r}")
            for k, var in _VEGAS_PARAMS.items():
                if k in params:
                    v = params[k]
                    if isinstance(v, bool) or not isinstance(v, (int, float)):
                        raise ValueError(f"{where}.params.{k}: expected a number, got {v!r}")
                    agent_vars[var] = _num(v)
        elif params:
            raise ValueError(f"{where}.params: {cc} takes no parameters in the ns-2 bridge")

        tcp = f.get("tcp", {}) or {}
        _check_keys(tcp, set(_TCP_FIELDS) | {"vegas_headers", "ack_size"}, f"{where}.tcp")
        if tcp.get("vegas_headers", False) is not False:
            raise ValueError(f"{where}.tcp.vegas_headers: ns-2's Vegas agent always sends "
                             "packetSize_ bytes without header; only false is supported")
        ack_size = _int(tcp.get("ack_size", 40), f"{where}.tcp.ack_size", 1)
        for k, v in tcp.items():
            if k in ("vegas_headers", "ack_size"):
                continue
            var, kind = _TCP_FIELDS[k]
            w = f"{where}.tcp.{k}"
            if kind == "int":
                agent_vars[var] = str(_int(v, w, 0))
            elif kind == "bool":
                if not isinstance(v, bool):
                    raise ValueError(f"{w}: expected true/false, got {v!r}")
                agent_vars[var] = "true" if v else "false"
            elif kind == "int01":
                if isinstance(v, bool):
                    v = int(v)
                agent_vars[var] = str(_int(v, w, 0))
            else:
                agent_vars[var] = _num(parse_time(v, w))
        packet_size = int(tcp.get("packet_size", 1000))
        if packet_size < 1:
            raise ValueError(f"{where}.tcp.packet_size: must be >= 1")
        flows.append(Flow(
            index=i, name=name, cc=cc, src=src, dst=dst, start=start, stop=stop, app=app,
            file_size=file_size, agent_vars=agent_vars, packet_size=packet_size,
            header_bytes=int(tcp.get("header_bytes", 40)), syn=bool(tcp.get("syn", True)),
            ack_size=ack_size))
    if not flows:
        raise ValueError("scenario: no [[flows]]")
    meta = scn.get("meta", {}) or {}
    return Model(nodes=nodes, links=links, flows=flows, duration=duration, seed=seed,
                 name=str(meta.get("id", "")) if isinstance(meta, dict) else "")


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
proc vl_done {i} {
    global ns tcp
    puts "VLAB DONE $i [$ns now] [$tcp($i) set nrexmitpack_] [$tcp($i) set nrexmit_]"
}
"""


def build_script(model: Model, *, trace: bool = True, trace_file: str = "vl.tr",
                 seed: int | None = None) -> str:
    """OTcl text that runs ``model`` and prints ``VLAB ...`` result lines on stdout.

    Output lines: ``VLAB DONE <flow> <t> nrexmitpack nrexmit`` when a file transfer completes,
    ``VLAB FLOW <flow> ack ndatapack nrexmitpack nrexmit ndatabytes cwnd`` and (with trace)
    ``VLAB QUEUE <dir> parrivals pdrops pdepartures bdepartures sum lastx lasty`` at the end.
    With trace, drop events of every link direction and receive events of the link
    directions into flow destinations go to ``trace_file``.
    """
    L = ["# generated by vegaslab.ns2 -- ns-2.35 OTcl", "set ns [new Simulator]"]
    s = model.seed if seed is None else seed
    L.append(f"global defaultRNG\n$defaultRNG seed {int(s)}")
    L.append(_PROCS)
    for i, n in enumerate(model.nodes):
        L.append(f"set n({i}) [$ns node] ;# {n}")
    for ld in model.links:
        a, b = model.node_id(ld.src), model.node_id(ld.dst)
        for var, val in (ld.red or {}).items():
            L.append(f"Queue/RED set {var} {val}")
        L.append(f"$ns simplex-link $n({a}) $n({b}) {_num(ld.bandwidth)} {_num(ld.delay)}"
                 f" {'RED' if ld.red else 'DropTail'} ;# {ld.name}")
        L.append(f"$ns queue-limit $n({a}) $n({b}) {ld.limit}")
    for ld in model.links:
        a, b = model.node_id(ld.src), model.node_id(ld.dst)
        for at, d in ld.schedule:
            L.append(f'$ns at {_num(at)} "[[$ns link $n({a}) $n({b})] link] set delay_ {_num(d)}"'
                     f" ;# {ld.name}")
    dsts = {model.node_id(f.dst) for f in model.flows}
    if trace:
        L.append(f"set vl_tf [open {trace_file} w]")
        for k, ld in enumerate(model.links):
            a, b = model.node_id(ld.src), model.node_id(ld.dst)
            L.append(f"vl_trace_link [$ns link $n({a}) $n({b})] $vl_tf {int(b in dsts)}")
        # queue monitors after the traces (both hook the drop chain; order is irrelevant)
        for k, ld in enumerate(model.links):
            a, b = model.node_id(ld.src), model.node_id(ld.dst)
            L.append(f"set qm({k}) [$ns monitor-queue $n({a}) $n({b}) 0 0.1] ;# {ld.name}")
    for f in model.flows:
        i = f.index
        L.append(f"# flow {i}: {f.name} ({f.cc}) {f.src} -> {f.dst}")
        L.append(f"set tcp({i}) [new {f.agent_class}]")
        L.append(f"$tcp({i}) set fid_ {i}")
        for var, val in f.agent_vars.items():
            L.append(f"$tcp({i}) set {var} {val}")
        L.append(f"$ns attach-agent $n({model.node_id(f.src)}) $tcp({i})")
        L.append(f"set sink({i}) [new Agent/TCPSink]")
        L.append(f"$sink({i}) set packetSize_ {f.ack_size}")
        L.append(f"$ns attach-agent $n({model.node_id(f.dst)}) $sink({i})")
        L.append(f"$ns connect $tcp({i}) $sink({i})")
        L.append(f"set app({i}) [new Application/FTP]")
        L.append(f"$app({i}) attach-agent $tcp({i})")
        L.append(f'$tcp({i}) proc done {{}} "vl_done {i}"')
        if f.app == "file":
            L.append(f'$ns at {_num(f.start)} "$app({i}) send {f.file_size}"')
        else:
            L.append(f'$ns at {_num(f.start)} "$app({i}) start"')
            if f.stop < model.duration:
                L.append(f'$ns at {_num(f.stop)} "$app({i}) stop"')
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
    L.append("    flush stdout")
    L.append("    exit 0")
    L.append("}")
    L.append(f"$ns at {_num(model.duration)} vl_finish")
    L.append("$ns run")
    return "\n".join(L) + "\n"
