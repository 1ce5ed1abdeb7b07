"""From a normalised scenario to what the testbed builds: hosts, one shared bottleneck, the
propagation delay of every (source, destination) pair, and the flows.

The testbed emulates scenarios whose flows all cross one shared bottleneck link: a dumbbell or a
chain (and anything else where that holds), in one direction or in both (two-way traffic: the
"forward" direction is the first flow's, the hosts on its upstream side live in the sender
namespace, the others in the receiver namespace, and a host may both send and receive). The
bottleneck's rate and packet buffer, each direction's as the scenario's link says, become
``htb`` + ``pfifo`` in the router namespace (both directions); every other link contributes
only its propagation delay, summed along each flow's path by the delay line (its rate must be
at least the bottleneck's, so it never queues). A flow's ``packet_size`` and ``window_init``
become the route to its receiver from the other side's namespace (MTU = packet_size + 52, so the
kernel's segments carry packet_size bytes of payload with IPv4, TCP and timestamp headers;
``initcwnd``), so flows to one receiver must agree on them, and a host that both sends and
receives may not send larger segments than it receives (its peer advertises the MSS of the
route back to it). A ``window`` small enough to limit a flow is
refused (:func:`_check_window` says why). ``partial_ack_timer`` is not the testbed's to set:
Linux re-arms the RTO on every partial ACK (``"every"``). RoVegas flows run with the AQT
option (:mod:`.aqt`); the bottleneck queue stamps queueing time in each direction whose router
the scenario's ``[aqt] routers`` names (the other links have no queue).

A flow whose ``cc`` is a BPF struct_ops object (``cc = { bpf = "algo.bpf.o" }``; the normalised
``{"Bpf": ...}`` record) runs that very object in the kernel (:mod:`.bpfobject`): the plan finds
the file as the core did, checks its bytes against the record's SHA-256, and its sockets select
the object's own congestion-control name. Flows may share an object; two different objects, or
an object and a vegaslab algorithm, may not share a name (the kernel has one algorithm per name).

What is refused, with the reason: flows with no common bottleneck, RED or other non-DropTail
bottleneck queues (no ``red`` or ``codel`` qdisc in these machines' kernels), packet errors, UDP sources,
applications other than bulk and file transfers, and algorithms without a kernel version.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .. import registry
from ..errors import VegaslabError
from ..kernel import ALGORITHMS as KERNEL_ALGORITHMS
from ..kernel import KernelError, program_parameters
from .bpfobject import BpfObject, bpf_object
from .flows import FlowSpec
from .spec import ROUTE_MTU, Route

#: Scenario ``cc`` name -> the kernel's own congestion control the testbed runs for it (the
#: registry's Linux-native algorithms and ns-2's agents: Linux's ``reno`` is NewReno with SACK,
#: the baseline for both). The Vegas family is vegaslab's BPF (``KERNEL_ALGORITHMS``).
BUILT_IN = {a.name: a.kernel_name for a in registry.algorithms() if a.linux_form in ("native", "kernel")}


#: Keys of the normalised scenario (its layout: :mod:`vegaslab.schema`) that do not change what
#: the testbed builds: what the simulator records or how it breaks ties, and ns-2's TCP agent
#: settings, as the kernel's own TCP sends. Every other key of the objects the testbed reads
#: is used or refused here (tests/test_testbed_plan.py checks it against the schema).
IGNORED = {
    "Scenario": {"clock", "files", "format", "id", "monitor", "sample_interval_ns", "seed", "tie_order",
                 "trace"},
    "TcpConfig": {"ack_size", "boot_time", "delay_growth", "dupacks", "initial_rto", "limited_transmit",
                  "max_burst", "max_rto", "min_rto", "partial_ack_timer", "slow_start_restart", "syn", "tick", "tick_phase",
                  "vegas_headers", "stack", "linux"},
}

#: Bytes of header on each of the kernel's data segments: IPv4 20 + TCP 20 + timestamps 12.
KERNEL_HEADER_BYTES = 52


class PlanError(VegaslabError, ValueError):
    """The scenario cannot be built on the testbed; the message says what and why."""


@dataclass(frozen=True)
class Plan:
    #: The hosts on the forward direction's upstream side (the sender namespace) and on its
    #: downstream side (the receiver namespace); with two-way traffic hosts of either side send.
    senders: list[str]
    receivers: list[str]
    #: (rate bit/s, buffer packets) of the bottleneck, forward (towards the receivers) and reverse.
    forward: tuple[float, int]
    reverse: tuple[float, int]
    bottleneck_name: str                       # "A->B", as the simulator names the queue
    pair_delays_ns: dict[tuple[str, str], int]
    delay_changes: list[tuple[int, str, str, int]]
    flows: list[FlowSpec]
    #: flow name -> (simulator cc, params) of the Vegas-family flows, to register in the kernel.
    kernel_algorithms: dict[str, tuple[str, dict]]
    duration_s: float
    #: receiver host -> the sender's route to it (packet size, initial window).
    routes: dict[str, Route]
    #: None unless a flow runs RoVegas; then whether the bottleneck's forward and reverse
    #: queues stamp queueing time (AQT): their routers are in the scenario's ``[aqt] routers``.
    aqt: tuple[bool, bool] | None = None
    #: flow name -> "forward" or "reverse": which direction of the bottleneck it crosses.
    directions: dict[str, str] = field(default_factory=dict)
    #: The reverse queue's name, "B->A", as the simulator names it.
    reverse_name: str = ""
    #: flow name -> the BPF object it runs (``cc = { bpf = ... }``), to register in the kernel.
    bpf_objects: dict[str, BpfObject] = field(default_factory=dict)

    @property
    def two_way(self) -> bool:
        """Whether flows cross the bottleneck in both directions."""
        return "reverse" in self.directions.values()


def _params(algorithm) -> dict:
    """The parameters of a normalised ``algorithm`` entry (``"Reno"`` or ``{"<tag>": params}``)."""
    return {} if isinstance(algorithm, str) else dict(next(iter(algorithm.values())))


def _route(flow: dict) -> Route:
    """The sender's route to the flow's receiver: its MTU makes the kernel's segments carry
    ``packet_size`` bytes of payload, its initial window is the flow's ``window_init``."""
    tcp, where = flow["tcp"], f"flows ({flow['name']}).tcp"
    lo, hi = (m - KERNEL_HEADER_BYTES for m in ROUTE_MTU)
    if tcp["packet_size"] != int(tcp["packet_size"]) or not lo <= tcp["packet_size"] <= hi:
        raise PlanError(f"{where}.packet_size: the testbed sends whole payloads of {lo} to {hi} bytes, "
                        f"got {tcp['packet_size']}")
    if tcp["window_init"] != int(tcp["window_init"]) or tcp["window_init"] < 1:
        raise PlanError(f"{where}.window_init: the kernel's initial window is a whole number of packets "
                        f"(at least 1), got {tcp['window_init']}")
    return Route(mtu=int(tcp["packet_size"]) + KERNEL_HEADER_BYTES, initcwnd=int(tcp["window_init"]))


def _check_window(flow: dict, rtts_ns: list[int], rate_bps: float, buffer_pkts: int) -> None:
    """Refuse a flow whose ``window`` could limit it: the testbed cannot cap a kernel flow's
    window as the simulator does (a locked ``cwnd`` route metric reaches only connections to a
    destination already in the kernel's TCP metrics cache, and the receiver's window clamp is
    raised again by buffer autotuning), so a binding window would make the two runs differ
    silently. A window of at least what the path holds (the bottleneck's rate times the
    longest round-trip propagation delay, plus its buffer) never binds."""
    tcp = flow["tcp"]
    holds = rate_bps * max(rtts_ns) / 1e9 / (8 * (tcp["packet_size"] + tcp["header_bytes"])) + buffer_pkts
    if tcp["window"] < holds:
        raise PlanError(f"flows ({flow['name']}).tcp.window: {tcp['window']:g} packets would limit this flow "
                        f"below what the path holds ({holds:.0f} packets: {rate_bps / 1e6:g} Mbit/s x "
                        f"{max(rtts_ns) / 1e6:g} ms plus a {buffer_pkts}-packet buffer), and the testbed cannot "
                        f"cap a kernel flow's window; set it to at least {holds:.0f} (e.g. --set "
                        f"'flows[...].tcp.window=100000')")


def _path(links: list[dict], a: int, b: int) -> list[tuple[int, str]]:
    """Shortest path a -> b as (link index, "forward" | "reverse") hops (breadth first)."""
    adj: dict[int, list[tuple[int, int, str]]] = {}
    for i, link in enumerate(links):
        adj.setdefault(link["a"], []).append((link["b"], i, "forward"))
        adj.setdefault(link["b"], []).append((link["a"], i, "reverse"))
    prev: dict[int, tuple[int, int, str]] = {a: (-1, -1, "")}
    todo = deque([a])
    while todo:
        n = todo.popleft()
        for m, i, d in adj.get(n, []):
            if m not in prev:
                prev[m] = (n, i, d)
                todo.append(m)
    if b not in prev:
        raise PlanError("a flow has no path between its endpoints")
    hops = []
    while b != a:
        n, i, d = prev[b]
        hops.append((i, d))
        b = n
    return hops[::-1]


def _flip(d: str) -> str:
    return "reverse" if d == "forward" else "forward"


def _bpf_objects(doc: dict, source: str) -> dict[str, BpfObject]:
    """Flow name -> the BPF object of each flow whose algorithm is one (``{"Bpf": record}``),
    its file checked to be the object the core read; refused when two different objects would
    register one name, or an object would take a built-in algorithm's."""
    objects: dict[str, BpfObject] = {}
    by_name: dict[str, BpfObject] = {}
    for f in doc["flows"]:
        algorithm = f["algorithm"]
        if not (isinstance(algorithm, dict) and "Bpf" in algorithm):
            continue
        obj = bpf_object(f["name"], algorithm["Bpf"], source)
        obj.read(PlanError)
        if obj.name in BUILT_IN.values():
            raise PlanError(f"{obj.field}: the object's congestion control is named {obj.name}, as one the kernel "
                            "has built in; the kernel has one algorithm per name")
        first = by_name.setdefault(obj.name, obj)
        if first.sha256 != obj.sha256:
            raise PlanError(f"{obj.field}: {obj.path} and {first.field}'s {first.path} are different objects with "
                            f"the same congestion-control name {obj.name}; the kernel has one algorithm per name")
        objects[f["name"]] = obj
    return objects


def plan(doc: dict, cc_names: dict[str, str], source: str = "<string>") -> Plan:
    """The testbed plan of a normalised scenario (``vegaslab.normalize``'s document);
    ``cc_names`` maps each flow to its ``cc`` name as the core reports it (``vegaslab.validate``'s
    ``flows``), so this module restates no algorithm names. ``source`` is the scenario's file
    (or ``<string>``), against whose directory a BPF object's relative path is read."""
    if doc.get("udp"):
        raise PlanError("udp: the testbed runs TCP flows only")
    nodes, links = doc["nodes"], doc["links"]
    flows = doc["flows"]
    if not flows:
        raise PlanError("flows: the testbed needs at least one TCP flow")
    paths = {f["name"]: _path(links, f["from"], f["to"]) for f in flows}
    rate = lambda hop: links[hop[0]][hop[1]]["bandwidth_bps"]  # noqa: E731
    # The shared bottleneck is the slowest link direction any flow crosses (the first such, in
    # flow and path order); every flow must cross that link, in either direction, and nothing
    # slower on its way.
    i = min((h for f in flows for h in paths[f["name"]]), key=rate)[0]
    crossing = {}
    for name, hops in paths.items():
        on = [h for h in hops if h[0] == i]
        if not on:
            raise PlanError("links: the testbed builds scenarios whose flows all cross one bottleneck "
                            "(a dumbbell or a chain); these flows have different bottlenecks")
        crossing[name] = on[0]
        if any(rate(h) < rate(on[0]) for h in hops):
            raise PlanError(f"links: flow {name} crosses a link slower than the shared bottleneck")
    d = crossing[flows[0]["name"]][1]  # forward: the first flow's direction
    slowest = (i, d)
    directions = {name: "forward" if h == slowest else "reverse" for name, h in crossing.items()}
    side: dict[str, str] = {}
    for f in flows:
        up, down = (f["from"], f["to"]) if directions[f["name"]] == "forward" else (f["to"], f["from"])
        for node, s in ((up, "sender"), (down, "receiver")):
            if side.setdefault(nodes[node], s) != s:
                raise PlanError(f"flows ({f['name']}): {nodes[node]} would be on both sides of the bottleneck")
    senders = sorted(h for h, s in side.items() if s == "sender")
    receivers = sorted(h for h, s in side.items() if s == "receiver")
    fwd, rev = links[i][d], links[i][_flip(d)]
    for where, q in ((d, fwd["queue"]), (_flip(d), rev["queue"])):
        if q.get("kind") != "droptail":
            raise PlanError(f"links[{i}].{where}.queue: the testbed has DropTail bottlenecks only "
                            f"(these machines' kernels have no RED or CoDel qdisc), got {q.get('kind')!r}")
    for hops in paths.values():
        for j, dd in hops:
            if links[j].get("down_ns"):
                raise PlanError(f"links[{j}].down: the testbed does not take links down")
            for direction in (dd, _flip(dd)):
                if links[j][direction].get("error_rate", 0):
                    raise PlanError(f"links[{j}].{direction}.error_rate: the testbed has no packet errors")
                if links[j][direction].get("loss"):
                    raise PlanError(f"links[{j}].{direction}.loss: the testbed has no loss patterns")
    a, b = (links[i]["a"], links[i]["b"]) if d == "forward" else (links[i]["b"], links[i]["a"])


    def delay_at(hops, t_ns: int | None, reverse: bool) -> int:
        total = 0
        for j, dd in hops:
            side = links[j][_flip(dd) if reverse else dd]
            delay = side["delay_ns"]
            for at, value in side.get("delay_schedule_ns", []):
                if t_ns is not None and at <= t_ns:
                    delay = value
            total += delay
        return total

    pair_delays, changes = {}, []
    change_times = sorted({at for hops in paths.values() for j, dd in hops
                           for direction in (dd, _flip(dd))
                           for at, _ in links[j][direction].get("delay_schedule_ns", [])})
    specs, kernel_algs, routes = [], {}, {}
    bpf = _bpf_objects(doc, source)
    for f in flows:
        src, dst, hops = nodes[f["from"]], nodes[f["to"]], paths[f["name"]]
        route = _route(f)
        if routes.setdefault(dst, route) != route:
            raise PlanError(f"flows ({f['name']}).tcp: every flow to {dst} must have the same packet_size "
                            f"and window_init on the testbed (the kernel takes them from the route to "
                            f"{dst}), got {route} and {routes[dst]}")
        pair_delays[(src, dst)] = delay_at(hops, 0, False)
        pair_delays[(dst, src)] = delay_at(hops, 0, True)
        for t in change_times:
            for key, rev_ in (((src, dst), False), ((dst, src), True)):
                changes.append((t, key[0], key[1], delay_at(hops, t, rev_)))
        mine = fwd if directions[f["name"]] == "forward" else rev
        _check_window(f, [delay_at(hops, t, False) + delay_at(hops, t, True) for t in [0, *change_times]],
                      mine["bandwidth_bps"], mine["queue"]["limit"])
        app = f["app"]
        if app.get("kind") not in ("ftp", "file"):
            raise PlanError(f"flows ({f['name']}).app: the testbed runs bulk (ftp) and file transfers, "
                            f"got {app.get('kind')!r}")
        cc, params = cc_names[f["name"]], _params(f["algorithm"])
        if f["name"] in bpf:
            kernel = bpf[f["name"]].name
        elif cc in BUILT_IN:
            kernel = BUILT_IN[cc]
        elif cc in KERNEL_ALGORITHMS:
            kernel = KERNEL_ALGORITHMS[cc]
            params = {k: v for k, v in params.items() if k != "flavour"}
            try:  # the kernel version's own limits (e.g. RoVegas stamps every segment)
                program_parameters(cc, **params)
            except KernelError as e:
                raise PlanError(f"flows ({f['name']}): {e}") from None
            kernel_algs[f["name"]] = (cc, params)
        elif cc.startswith("py:"):
            raise PlanError(f"flows ({f['name']}).cc: {cc!r} is a Python controller, which runs only in vegaslab's "
                            "own simulator; the kernel testbed cannot host it")
        else:
            raise PlanError(f"flows ({f['name']}).cc: no kernel version of {cc!r} (the testbed runs "
                            f"{', '.join([*BUILT_IN, *KERNEL_ALGORITHMS])})")
        stop = f.get("stop_ns")
        specs.append(FlowSpec(name=f["name"], src=src, dst=dst, cc=kernel, start_s=f["start_ns"] / 1e9,
                              stop_s=None if stop is None else stop / 1e9,
                              size_bytes=app.get("bytes") if app.get("kind") == "file" else None))
    by_name = {o.name: o for o in bpf.values()}
    for spec in specs:
        obj = by_name.get(spec.cc)
        if obj is not None and spec.name not in bpf:
            raise PlanError(f"{obj.field}: the object's congestion control is named {obj.name}, as flow "
                            f"{spec.name}'s algorithm in the kernel is; the kernel has one algorithm per name")
    for f in flows:
        src, dst = nodes[f["from"]], nodes[f["to"]]
        if src in routes and routes[src].mtu < routes[dst].mtu:
            raise PlanError(f"flows ({f['name']}).tcp.packet_size: {src} receives {routes[src].mtu - KERNEL_HEADER_BYTES}"
                            f"-byte segments and cannot send larger ones on the testbed ({dst} advertises the "
                            f"MSS of its route back to {src}), got {routes[dst].mtu - KERNEL_HEADER_BYTES}")
    by_cc: dict[str, dict] = {}
    for name, (cc, params) in kernel_algs.items():
        if by_cc.setdefault(cc, params) != params:
            raise PlanError(f"flows ({name}).params: every {cc} flow on the testbed must have the same "
                            f"parameters (one kernel registration per algorithm)")
    # Keep only the changes that change a pair's delay.
    current, kept = dict(pair_delays), []
    for t, x, y, delay in sorted(changes):
        if current[(x, y)] != delay:
            current[(x, y)] = delay
            kept.append((t, x, y, delay))
    changes = kept
    return Plan(
        senders=senders, receivers=receivers,
        forward=(fwd["bandwidth_bps"], fwd["queue"]["limit"]),
        reverse=(rev["bandwidth_bps"], rev["queue"]["limit"]),
        bottleneck_name=f"{nodes[a]}->{nodes[b]}",
        pair_delays_ns=pair_delays, delay_changes=changes, flows=specs,
        kernel_algorithms=kernel_algs, duration_s=doc["duration_ns"] / 1e9, routes=routes,
        aqt=((a in doc.get("aqt_routers", []), b in doc.get("aqt_routers", []))
             if any(cc == "rovegas" for cc, _ in kernel_algs.values()) else None),
        directions=directions, reverse_name=f"{nodes[b]}->{nodes[a]}", bpf_objects=bpf,
    )
