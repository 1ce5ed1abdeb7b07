"""The core's normalised scenario -> ns-2.35 OTcl script.

The bridge does not read scenario files. The Rust core is the one owner of the schema (units,
overrides, topology builders such as ``[dumbbell]``, defaults): :func:`normalize` asks it for
the normalised scenario (``vegaslab.normalize``: every default filled in, times in integer
nanoseconds, bandwidths in bit/s, nodes by index, delay traces expanded into
``delay_schedule_ns``), and :func:`build_model` maps that JSON, and nothing else, onto ns-2.

What maps: links whose two directions each have DropTail or classic RED (``Queue/RED`` in
packet mode) queues (each direction its own: every direction is an ns-2 ``simplex-link``), no
packet errors, deterministic loss patterns (``ErrorModel/List`` and ``/Periodic``: see
:mod:`vegaslab.ns2.script`), and any delay schedule; links going down and up (``down_ns``: ``$ns
rtmodel-at`` under ``$ns rtproto Session``, see :func:`vegaslab.ns2.links.link_changes`); TCP
flows with Reno, NewReno or Vegas (flavour ``ns2``) and an FTP or file application (bytes, or a
packet count as ``$app produce N``), with every ``tcp`` field, including
the tick clock's phase (``tick_phase``, ns-2's ``boot_time_``: see :func:`build_script`, "Tick
phases").  Anything
else raises ``ValueError`` naming the field of the normalised scenario (and, for links and
flows, which link or flow it is).  ``monitor``, ``sample_interval_ns`` and ``files`` are
ignored: the bridge reports no time series, and a referenced file's content is already in the
document.

Safety: no string from the scenario is ever written into a code position
of the script.  Nodes, links, agents and applications are referred to by generated indices
(``$n(3)``, ``$tcp(0)``); every value is a number that :func:`~vegaslab.ns2.tcl.tcl_num` has
type-checked and printed itself, or a word chosen from a fixed table (``DropTail``,
``Agent/TCP/Vegas``, ``true``).  Node and flow names appear only in ``#`` comments, reduced by
:func:`~vegaslab.ns2.tcl.comment_text` to a character set that cannot end a comment or open a
substitution. The names themselves stay on the Python side (:class:`Model`) and label the
results.

This module maps the whole document (:func:`build_model`) and re-exports the bridge's
translation API; one job a module beside it: :mod:`~vegaslab.ns2.links` (links, queues, loss
patterns, link changes), :mod:`~vegaslab.ns2.flows` (flows as ns-2 agents and applications),
:mod:`~vegaslab.ns2.model` (what ns-2 runs), :mod:`~vegaslab.ns2.tcl` (checked values and Tcl
literals), :mod:`~vegaslab.ns2.rng` (ns-2's seeds and the tick-phase draw),
:mod:`~vegaslab.ns2.script` (the OTcl script).
"""
from __future__ import annotations

import pathlib

from .. import schema as layout
from .flows import build_flow
from .links import link_changes, link_direction
from .model import Flow, LinkDir, Model
from .rng import ns2_seed, phase_reset
from .script import build_script
from .tcl import check_int, check_keys, check_list

__all__ = ["normalize", "build_model", "build_script", "Model", "LinkDir", "Flow", "FORMAT",
           "ns2_seed", "phase_reset"]

#: The layout version of the normalised scenario this module reads (its ``format`` key).
FORMAT = 1


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


# ------------------------------------------------------------------- the mapping

# The layout of the normalised scenario (which keys each object has) is the core's schema
# (:mod:`vegaslab.schema`); the bridge lists only what it does not translate. Top-level keys
# ignored because they do not change what ns-2 simulates: ``clock`` (``run.clock``) is
# vegaslab's choice of what its senders read as the time; ns-2 has one clock, its own
# double-precision one (``"ns2"`` emulates it), so either value runs ns-2 as it is; ``trace``
# is the core's own packet trace ([trace]), and the bridge writes ns-2's trace itself.
# ``tie_order`` is refused by name in :func:`build_model`. In ``tcp``, ``boot_time`` is not a
# setting (always 0 in the document: the core fills in the phase when it creates a sender);
# ``linux`` comes only with ``stack = "linux"``, which :mod:`vegaslab.ns2.flows` refuses.
# tests/test_ns2_bridge.py checks that every key of the layout the bridge reads is translated
# (here, in :mod:`vegaslab.ns2.links` or :mod:`vegaslab.ns2.flows`) or listed as ignored.
_IGNORED = {"Scenario": {"sample_interval_ns", "monitor", "files", "clock", "trace"},
            "TcpConfig": {"boot_time", "linux"}}


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
    check_keys(doc, layout.keys(layout.ROOT), "scenario")
    duration_ns = check_int(doc.get("duration_ns"), "duration_ns", 1, 2**63 - 1)
    seed = check_int(doc.get("seed"), "seed", 0, 2**64 - 1)
    if check_list(doc.get("udp", []), "udp"):
        raise ValueError("udp: UDP sources are not supported by the ns-2 bridge")
    if check_list(doc.get("aqt_routers", []), "aqt_routers"):
        raise ValueError("aqt_routers: AQT routers (RoVegas) are not supported by the ns-2 bridge")
    nodes = check_list(doc.get("nodes"), "nodes")
    for i, n in enumerate(nodes):
        if not isinstance(n, str):
            raise ValueError(f"nodes[{i}]: expected a string, got {n!r}")

    links: list[LinkDir] = []
    pairs = set()
    changes: list = []
    for i, link in enumerate(check_list(doc.get("links"), "links")):
        where = f"links[{i}]"
        check_keys(link, layout.keys("LinkSpec"), where)
        a = check_int(link.get("a"), f"{where}.a", 0, len(nodes) - 1)
        b = check_int(link.get("b"), f"{where}.b", 0, len(nodes) - 1)
        where = f"links[{i}] ({nodes[a]!r} - {nodes[b]!r})"
        if a == b or frozenset((a, b)) in pairs:
            # ns-2 knows one simplex link per ordered node pair ($ns link $a $b).
            raise ValueError(f"{where}: a second link between the same nodes, or a loop, "
                             "has no ns-2 counterpart")
        pairs.add(frozenset((a, b)))
        links.append(link_direction(link.get("forward"), a, b, nodes, f"{where}.forward"))
        links.append(link_direction(link.get("reverse"), b, a, nodes, f"{where}.reverse"))
        changes.extend(link_changes(link.get("down_ns", []), links[-2:], a, b, where))
    if not links:
        raise ValueError("links: the scenario has no links")

    flows = [build_flow(i, f, nodes, duration_ns, seed) for i, f in enumerate(check_list(doc.get("flows"), "flows"))]
    if not flows:
        raise ValueError("flows: the scenario has no TCP flows")
    name = doc.get("id")
    changes.sort(key=lambda c: c[0])   # stable: links in scenario order at one instant
    return Model(nodes=list(nodes), links=links, flows=flows, duration=duration_ns / 1e9,
                 seed=seed, name=name if isinstance(name, str) else "", normalized=doc,
                 link_changes=changes)
