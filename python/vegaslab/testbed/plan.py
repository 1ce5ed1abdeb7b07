"""From a normalised scenario to what the testbed builds: hosts, one shared bottleneck, the
propagation delay of every (source, destination) pair, and the flows.

The testbed emulates scenarios whose flows all cross one shared bottleneck: a dumbbell or a
chain (and anything else where that holds). The bottleneck's rate and packet buffer become
``htb`` + ``pfifo`` in the router namespace (both directions); every other link contributes
only its propagation delay, summed along each flow's path by the delay line (its rate must be
at least the bottleneck's, so it never queues). What is refused, with the reason: flows with no
common bottleneck, RED or other non-DropTail bottleneck queues (no ``red`` qdisc on these
machines), packet errors, UDP sources, applications other than bulk and file transfers, a host
that both sends and receives, and algorithms without a kernel version.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .. import VegaslabError
from ..kernel import ALGORITHMS as KERNEL_ALGORITHMS
from .flows import FlowSpec

#: Simulator ``cc`` -> kernel congestion control. Linux's ``reno`` is NewReno with SACK, the
#: baseline for both; ``cubic`` is built in; the Vegas family is vegaslab's BPF (Linux flavour).
BUILT_IN = {"reno": "reno", "newreno": "reno", "cubic": "cubic"}


class PlanError(VegaslabError, ValueError):
    """The scenario cannot be built on the testbed; the message says what and why."""


@dataclass(frozen=True)
class Plan:
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


def _params(algorithm) -> dict:
    """The parameters of a normalised ``algorithm`` entry (``"Reno"`` or ``{"<tag>": params}``)."""
    return {} if isinstance(algorithm, str) else dict(next(iter(algorithm.values())))


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


def plan(doc: dict, cc_names: dict[str, str]) -> Plan:
    """The testbed plan of a normalised scenario (``vegaslab.normalize``'s document);
    ``cc_names`` maps each flow to its ``cc`` name as the core reports it (``vegaslab.validate``'s
    ``flows``), so this module restates no algorithm names."""
    if doc.get("udp"):
        raise PlanError("udp: the testbed runs TCP flows only")
    nodes, links = doc["nodes"], doc["links"]
    flows = doc["flows"]
    if not flows:
        raise PlanError("flows: the testbed needs at least one TCP flow")
    senders = sorted({nodes[f["from"]] for f in flows})
    receivers = sorted({nodes[f["to"]] for f in flows})
    both = set(senders) & set(receivers)
    if both:
        raise PlanError(f"flows: {sorted(both)[0]} both sends and receives (two-way traffic); the "
                        f"testbed has one sending and one receiving side")
    paths = {f["name"]: _path(links, f["from"], f["to"]) for f in flows}
    rate = lambda hop: links[hop[0]][hop[1]]["bandwidth_bps"]  # noqa: E731
    bottlenecks = {name: min(hops, key=rate) for name, hops in paths.items()}
    common = set.intersection(*(set(h) for h in paths.values()))
    slowest = min(bottlenecks.values(), key=rate)
    if slowest not in common or any(rate(b) < rate(slowest) for b in bottlenecks.values()):
        raise PlanError("links: the testbed builds scenarios whose flows all cross one bottleneck "
                        "(a dumbbell or a chain); these flows have different bottlenecks")
    for name, hops in paths.items():
        slower = [h for h in hops if h != slowest and rate(h) < rate(slowest)]
        if slower:
            raise PlanError(f"links: flow {name} crosses a link slower than the shared bottleneck")
    i, d = slowest
    fwd, rev = links[i][d], links[i][_flip(d)]
    for where, q in ((d, fwd["queue"]), (_flip(d), rev["queue"])):
        if q.get("kind") != "droptail":
            raise PlanError(f"links[{i}].{where}.queue: the testbed has DropTail bottlenecks only "
                            f"(no RED qdisc on these machines), got {q.get('kind')!r}")
    for hops in paths.values():
        for j, dd in hops:
            for direction in (dd, _flip(dd)):
                if links[j][direction].get("error_rate", 0):
                    raise PlanError(f"links[{j}].{direction}.error_rate: the testbed has no packet errors")
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
    specs, kernel_algs = [], {}
    for f in flows:
        src, dst, hops = nodes[f["from"]], nodes[f["to"]], paths[f["name"]]
        pair_delays[(src, dst)] = delay_at(hops, 0, False)
        pair_delays[(dst, src)] = delay_at(hops, 0, True)
        for t in change_times:
            for key, rev_ in (((src, dst), False), ((dst, src), True)):
                changes.append((t, key[0], key[1], delay_at(hops, t, rev_)))
        app = f["app"]
        if app.get("kind") not in ("ftp", "file"):
            raise PlanError(f"flows ({f['name']}).app: the testbed runs bulk (ftp) and file transfers, "
                            f"got {app.get('kind')!r}")
        cc, params = cc_names[f["name"]], _params(f["algorithm"])
        if cc in BUILT_IN:
            kernel = BUILT_IN[cc]
        elif cc in KERNEL_ALGORITHMS:
            kernel = KERNEL_ALGORITHMS[cc]
            params = {k: v for k, v in params.items() if k != "flavour"}
            kernel_algs[f["name"]] = (cc, params)
        else:
            raise PlanError(f"flows ({f['name']}).cc: no kernel version of {cc!r} (the testbed runs "
                            f"reno, newreno, cubic, {', '.join(KERNEL_ALGORITHMS)})")
        stop = f.get("stop_ns")
        specs.append(FlowSpec(name=f["name"], src=src, dst=dst, cc=kernel, start_s=f["start_ns"] / 1e9,
                              stop_s=None if stop is None else stop / 1e9,
                              size_bytes=app.get("bytes") if app.get("kind") == "file" else None))
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
        kernel_algorithms=kernel_algs, duration_s=doc["duration_ns"] / 1e9,
    )
