"""What ns-2 runs, as the bridge hands it from the mapping (:mod:`vegaslab.ns2.translate`) to the
script (:mod:`vegaslab.ns2.script`): node names, link directions (:class:`LinkDir`), TCP flows
(:class:`Flow`) and link changes (:class:`Model`). Nodes are indices; the names stay here, on the
Python side, to label the results.
"""
from __future__ import annotations

from dataclasses import dataclass, field

#: ns-2's agent class of each congestion control the bridge maps.
AGENT_CLASS = {"reno": "Agent/TCP/Reno", "newreno": "Agent/TCP/Newreno",
               "vegas": "Agent/TCP/Vegas"}


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
    #: A deterministic loss pattern (see :func:`~vegaslab.ns2.links.loss_pattern`): ``("list", [indices])`` or
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
    #: ``$app produce N`` (see :func:`~vegaslab.ns2.script.build_script`).
    file_packets: int | None = None

    @property
    def agent_class(self) -> str:
        return AGENT_CLASS[self.cc]

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
    #: ``$ns rtmodel-at`` under ``$ns rtproto Session`` (see :func:`~vegaslab.ns2.links.link_changes`).
    link_changes: list = field(default_factory=list)

    def node_id(self, name: str) -> int:
        return self.nodes.index(name)
