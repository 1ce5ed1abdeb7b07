"""The map from each TOML key to where the normalised document puts its value: the one part of
the generated tables written by hand, and checked against the core (:mod:`.probe`) each time
they are generated.

:func:`tables` gives each generated block of docs/scenario-format.md its tables: which scenario
exercises a table, and for each key its :class:`Row` (where its value lands, its unit kind,
whether it is required, which other key its default follows). The queue kinds' tables come from
the core's registry (:func:`queue_tables`): each kind declares its keys there once."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .scenarios import app_scenario, base_scenario, with_value


class SchemaMapError(AssertionError):
    """The map no longer matches the core (a key moved or changed meaning)."""


@dataclass
class Row:
    """One TOML key of a table.

    read:      where the normalised document holds its value (a dotted path, or a function of
               the document); None for keys that only select (e.g. a union's ``kind``).
    unit:      ``time`` (``*_ns`` integers or float seconds in the document), ``bandwidth``
               (bit/s), ``bytes``, ``packets``, ``count``, ``probability``, ``enum``, ``bool``
               or ``""``.
    required:  the core rejects the table without it (checked).
    follows:   the default is the value of this other key of the same table (checked).
    none:      how to show a default that the document leaves null (e.g. "the run's end").
    probe:     a non-default value for the mapping check (else derived from the unit).
    """

    key: str
    read: str | Callable[[dict], Any] | None = None
    unit: str = ""
    required: bool = False
    follows: str | None = None
    none: str | None = None
    probe: Any = None
    shown: str | None = None  # a text for the default column instead of the value
    #: The default is a name built from the entry's index: ``"flow{i}"`` (checked for index 0).
    template: str | None = None
    #: Whether the mapping check can probe this key alone (False where any other value needs
    #: companion keys, e.g. a queue kind).
    checked: bool = True
    #: Invalid values whose error message states what is allowed (instead of the absurd
    #: numbers tried for numeric units), e.g. a name with a space.
    bad: list | None = None
    #: What it sets and where that comes from, for keys the core's registry declares.
    doc: str = ""
    cite: str = ""


@dataclass
class Table:
    """One TOML table in one scenario: ``path`` is where its keys live in ``scenario``."""

    title: str
    path: str
    scenario: dict
    rows: list[Row]
    #: Keys the core allows here that this table does not list, with where they are described.
    elsewhere: dict[str, str] = field(default_factory=dict)
    #: The displayed path prefix (``links[0]`` shows as ``[[links]]``).
    shown_as: str | None = None
    #: What the table is, shown after its title.
    about: str = ""


_LINK0 = "links[0].forward"
_FLOW0 = "flows[0]"


def _udp_scenario(model: dict) -> dict:
    udp = {"from": "S", "to": "D", "packet_size": 1000, **model}
    return with_value("udp", [udp])


def _lte_count(prefix: str) -> Callable[[dict], int]:
    def count(doc: dict) -> int:
        return sum(1 for n in doc["nodes"] if re.fullmatch(prefix + r"\d+", n))
    return count


def _ues_per_enb(doc: dict) -> int:
    return _lte_count("UE")(doc) // _lte_count("eNB")(doc)


def _link_between(doc: dict, a: str, b: str) -> dict:
    i, j = doc["nodes"].index(a), doc["nodes"].index(b)
    for link in doc["links"]:
        if (link["a"], link["b"]) == (i, j):
            return link["forward"]
    raise KeyError(f"no link {a} - {b}")


_ACCESS = {"bandwidth": "10Mbps", "delay": "1ms"}


#: A declared key's unit as a row's unit kind (a time is a ``ParamKind`` of its own).
_DECLARED_UNITS = {"packets": "packets", "bytes": "bytes", "probability": "probability"}


def _declared_unit(key: Any) -> str:
    if key.kind["type"] == "time":
        return "time"
    if key.kind["type"] == "boolean":
        return "bool"
    return _DECLARED_UNITS.get(key.unit, "")


def _declared_probe(key: Any) -> Any:
    """A value of a declared key other than its default, inside its range (a time 1.4 times
    its default, a number 1.25 times; the unit's own probe otherwise)."""
    default = key.default["fixed"] if isinstance(key.default, dict) and set(key.default) == {"fixed"} else key.default
    if key.kind["type"] == "time" and isinstance(default, int):
        return f"{default * 7 // 5}ns"
    if key.kind["type"] == "number" and isinstance(default, float):
        return default * 1.25
    return None


def queue_tables() -> list[Table]:
    """One table per queue kind of the core's registry (:func:`vegaslab.registry.queues`), its
    rows the kind's declared keys; the first kind's table (the default kind's) also shows
    ``kind``."""
    import tomllib

    from vegaslab import registry

    kinds = registry.queues()
    out = []
    for i, kind in enumerate(kinds):
        minimal = tomllib.loads(f"q = {kind.minimal}")["q"]
        if i == 0:  # the default kind: its table leaves `kind` out, and shows its default
            minimal.pop("kind")
        rows = [Row("kind", f"{_LINK0}.queue.kind", "enum", checked=False)] if i == 0 else []
        for key in kind.keys:
            unit = _declared_unit(key)
            numeric = key.kind["type"] in ("number", "integer")
            rows.append(Row(key.name, f"{_LINK0}.queue.{key.field}", unit, required=key.required,
                            probe=_declared_probe(key), bad=[-10**18, 10**18] if numeric and not unit else None,
                            doc=key.doc, cite=key.cite))
        elsewhere = {} if i == 0 else {"kind": f"the {kinds[0].name} table"}
        out.append(Table(f'queue = {{ kind = "{kind.name}" }}', "links[0].queue", with_value("links[0].queue", minimal),
                         rows, elsewhere=elsewhere, shown_as="queue", about=f"{kind.about} ({kind.cite})"))
    return out


def tables() -> dict[str, list[Table]]:
    """Generated block name -> the tables it shows, in order."""
    link = base_scenario()
    return {
        "run": [Table("[run]", "run", base_scenario(), [
            Row("duration", "duration_ns", "time", required=True),
            Row("seed", "seed", "count"),
            Row("sample_interval", "sample_interval_ns", "time"),
            Row("clock", "clock", "enum", probe="exact"),
            # Absent from the normalised document at its default (so stored keys stay as they were).
            Row("tie_order", lambda doc: doc.get("tie_order"), "enum", none="`\"ns2\"`", probe="shuffled"),
        ])],
        "link": [Table("every link table", "links[0]", link, [
            Row("endpoints", None, "", required=True, bad=[["a b", "D"]]),
            Row("bandwidth", f"{_LINK0}.bandwidth_bps", "bandwidth", required=True),
            Row("bandwidth_forward", f"{_LINK0}.bandwidth_bps", "bandwidth", follows="bandwidth"),
            Row("bandwidth_reverse", "links[0].reverse.bandwidth_bps", "bandwidth", follows="bandwidth"),
            Row("delay", f"{_LINK0}.delay_ns", "time", required=True),
            Row("delay_schedule", f"{_LINK0}.delay_schedule_ns", "", probe=[{"at": "1s", "delay": "5ms"}]),
            Row("delay_trace", f"{_LINK0}.delay_schedule_ns", "", none="none", probe=None),
            Row("queue", f"{_LINK0}.queue", "", probe={"kind": "droptail", "limit": 7}),
            Row("error_rate", f"{_LINK0}.error_rate", "probability"),
            Row("error_rate_forward", f"{_LINK0}.error_rate", "probability", follows="error_rate"),
            Row("error_rate_reverse", "links[0].reverse.error_rate", "probability", follows="error_rate"),
            Row("queue_forward", f"{_LINK0}.queue", "", probe={"kind": "droptail", "limit": 7}, follows="queue"),
            Row("queue_reverse", "links[0].reverse.queue", "", probe={"kind": "droptail", "limit": 7}, follows="queue"),
            Row("loss", lambda d: d["links"][0]["forward"].get("loss"), "", probe={"every": 5}),
            Row("loss_forward", lambda d: d["links"][0]["forward"].get("loss"), "", probe={"every": 5}, follows="loss"),
            Row("loss_reverse", lambda d: d["links"][0]["reverse"].get("loss"), "", probe={"every": 5}, follows="loss"),
            Row("down", lambda d: d["links"][0].get("down_ns"), "", none="none", probe=[["1s", "2s"]]),
        ], elsewhere={"at": '"Links by name and in groups" below', "range": '"Links by name and in groups" below'},
            shown_as="[[links]]")],
        "loss": [
            Table("loss = { packets = [...] }", "links[0].loss", with_value("links[0].loss", {"packets": [3]}), [
                Row("packets", f"{_LINK0}.loss.packets", "", required=True, probe=[1, 2], bad=[[-1], [1.5]]),
            ], elsewhere={k: "the periodic table" for k in ("every", "first", "burst")}, shown_as="loss"),
            Table("loss = { every = n }", "links[0].loss", with_value("links[0].loss", {"every": 10}), [
                Row("every", f"{_LINK0}.loss.every", "packets", required=True),
                # shown: the generic "first" row of the flow tables is an on/off flag.
                Row("first", f"{_LINK0}.loss.first", "packets", shown="`0`"),
                Row("burst", f"{_LINK0}.loss.burst", "packets", bad=[0, 11]),
            ], elsewhere={"packets": "the list table"}, shown_as="loss"),
        ],
        "queue": queue_tables(),
        "flow": [Table("[[flows]]", _FLOW0, base_scenario(), [
            Row("name", f"{_FLOW0}.name", "", probe="x", template="flow{i}", bad=["a b"]),
            Row("from", None, "", required=True),
            Row("to", None, "", required=True),
            Row("cc", None, "enum", required=True),
            Row("start", f"{_FLOW0}.start_ns", "time"),
            Row("stop", f"{_FLOW0}.stop_ns", "time", none="the run's end"),
            Row("app", f"{_FLOW0}.app.kind", "enum", probe={"kind": "file", "size": "1MB"}),
        ], elsewhere={
            "file_size": 'required with app = "file"', "params": "the params tables",
            "tcp": "the tcp table", "pairs": "Many flows from one entry", "range": "Many flows from one entry",
            "members": "Many flows from one entry",
        }, shown_as="[[flows]]")],
        "tcp": [Table("[flows.tcp]", "flows[0].tcp", base_scenario(), [
            Row("window", f"{_FLOW0}.tcp.window", "packets"),
            Row("window_init", f"{_FLOW0}.tcp.window_init", "packets"),
            Row("packet_size", f"{_FLOW0}.tcp.packet_size", "bytes"),
            Row("header_bytes", f"{_FLOW0}.tcp.header_bytes", "bytes"),
            Row("ack_size", f"{_FLOW0}.tcp.ack_size", "bytes"),
            Row("syn", f"{_FLOW0}.tcp.syn", "bool"),
            Row("delay_growth", f"{_FLOW0}.tcp.delay_growth", "bool"),
            Row("max_burst", f"{_FLOW0}.tcp.max_burst", "packets"),
            Row("dupacks", f"{_FLOW0}.tcp.dupacks", "count"),
            Row("tick", f"{_FLOW0}.tcp.tick", "time"),
            # "seeded" is the default and is left out of the document.
            Row("tick_phase", lambda doc: doc["flows"][0]["tcp"].get("tick_phase", "seeded"), "time",
                probe="3ms", shown='`"seeded"`'),
            Row("min_rto", f"{_FLOW0}.tcp.min_rto", "time"),
            Row("max_rto", f"{_FLOW0}.tcp.max_rto", "time"),
            Row("initial_rto", f"{_FLOW0}.tcp.initial_rto", "time"),
            Row("limited_transmit", f"{_FLOW0}.tcp.limited_transmit", "bool"),
            Row("vegas_headers", f"{_FLOW0}.tcp.vegas_headers", "bool"),
            # "first" is the default and is left out of the document.
            Row("partial_ack_timer", lambda doc: doc["flows"][0]["tcp"].get("partial_ack_timer", "first"), "enum",
                probe="every"),
            # true is the default and is left out of the document.
            Row("slow_start_restart", lambda doc: doc["flows"][0]["tcp"].get("slow_start_restart", True), "bool"),
        ], elsewhere={"stack": "Linux's TCP stack", "linux": "Linux's TCP stack"}, shown_as="flows[].tcp")],
        "app": [
            Table('app = { kind = "file" }', "flows[0].app", app_scenario({"kind": "file", "size": "1MB"}), [
                Row("size", f"{_FLOW0}.app.bytes", "bytes", required=True),
            ], elsewhere={"kind": "[[flows]]", "packets": 'app = { kind = "file", packets = N }'}, shown_as="app"),
            Table('app = { kind = "file", packets = N }', "flows[0].app",
                  app_scenario({"kind": "file", "packets": 1000}), [
                Row("packets", f"{_FLOW0}.app.packets", "packets", required=True, probe=317),
            ], elsewhere={"kind": "[[flows]]", "size": 'app = { kind = "file" }'}, shown_as="app"),
            Table('app = { kind = "onoff" }', "flows[0].app",
                  app_scenario({"kind": "onoff", "mean_on": "1s", "mean_off": "2s"}), [
                Row("mean_on", f"{_FLOW0}.app.mean_on", "time", required=True),
                Row("mean_off", f"{_FLOW0}.app.mean_off", "time", required=True),
                Row("shape", f"{_FLOW0}.app.shape", "count"),
                Row("first", f"{_FLOW0}.app.first_on", "enum", probe="off",
                    shown=None),
            ], elsewhere={"kind": "[[flows]]"}, shown_as="app"),
            Table('app = { kind = "nps" }', "flows[0].app",
                  app_scenario({"kind": "nps", "mean_interarrival": "1s", "mean_flow_size": "1MB"}), [
                Row("mean_interarrival", f"{_FLOW0}.app.mean_interarrival", "time", required=True),
                Row("mean_flow_size", f"{_FLOW0}.app.mean_size", "bytes", required=True),
                Row("flow_shape", f"{_FLOW0}.app.size_shape", "count"),
                Row("connection", f"{_FLOW0}.app.per_flow", "enum", probe="per-flow"),
            ], elsewhere={"kind": "[[flows]]"}, shown_as="app"),
            Table('app = { kind = "pareto-paced" }', "flows[0].app",
                  app_scenario({"kind": "pareto-paced", "mean_interarrival": "1s", "mean_flow_size": "1MB",
                                 "rate": "1Mbps", "mean_on": "1s", "mean_off": "2s"}), [
                Row("mean_interarrival", f"{_FLOW0}.app.arrivals.mean_interarrival", "time", required=True),
                Row("mean_flow_size", f"{_FLOW0}.app.arrivals.mean_size", "bytes", required=True),
                Row("flow_shape", f"{_FLOW0}.app.arrivals.size_shape", "count"),
                Row("connection", f"{_FLOW0}.app.arrivals.per_flow", "enum", probe="per-flow"),
                Row("rate", f"{_FLOW0}.app.rate_bps", "bandwidth", required=True),
                Row("mean_on", f"{_FLOW0}.app.mean_on", "time", required=True),
                Row("mean_off", f"{_FLOW0}.app.mean_off", "time", required=True),
                Row("shape", f"{_FLOW0}.app.shape", "count"),
            ], elsewhere={"kind": "[[flows]]"}, shown_as="app"),
        ],
        "udp": [
            Table('[[udp]] (every model)', "udp[0]", _udp_scenario({"model": "cbr", "rate": "1Mbps"}), [
                Row("name", "udp[0].name", "", probe="x", template="udp{i}", bad=["a b"]),
                Row("from", None, "", required=True),
                Row("to", None, "", required=True),
                Row("start", "udp[0].start_ns", "time"),
                Row("stop", "udp[0].stop_ns", "time", none="the run's end"),
                Row("packet_size", "udp[0].packet_size", "bytes", required=True),
                Row("model", "udp[0].model.kind", "enum", required=True, checked=False),
            ], elsewhere={"rate": "model tables", "interval": "model tables", "random": "model tables"},
                shown_as="[[udp]]"),
            Table('model = "cbr"', "udp[0]", _udp_scenario({"model": "cbr", "rate": "1Mbps"}), [
                Row("rate", "udp[0].model.interval", "bandwidth", required=True, shown="required (or interval)"),
                Row("interval", "udp[0].model.interval", "time", shown="(or rate)", checked=False),
                Row("random", "udp[0].model.random", "bool"),
            ], elsewhere={k: "[[udp]]" for k in ("name", "from", "to", "start", "stop", "packet_size", "model")},
                shown_as="[[udp]]"),
            Table('model = "exp-onoff"', "udp[0]",
                  _udp_scenario({"model": "exp-onoff", "rate": "1Mbps", "mean_on": "10ms", "load": 0.5}), [
                Row("rate", "udp[0].model.rate_bps", "bandwidth", required=True),
                Row("mean_on", "udp[0].model.mean_on", "time", required=True),
                Row("load", "udp[0].model.off.load.load", "ratio", required=True,
                    shown="required: one of load, mean_off, mean_rate"),
                Row("load_reference", "udp[0].model.off.load.reference_bps", "bandwidth",
                    none="the narrowest link direction on the path", probe="1Mbps"),
            ], elsewhere={"mean_off": "one of load, mean_off, mean_rate", "mean_rate": "one of load, mean_off, mean_rate",
                          **{k: "[[udp]]" for k in ("name", "from", "to", "start", "stop", "packet_size", "model")}},
                shown_as="[[udp]]"),
            Table('model = "pareto-onoff"', "udp[0]",
                  _udp_scenario({"model": "pareto-onoff", "rate": "1Mbps", "mean_on": "10ms", "mean_off": "20ms"}), [
                Row("rate", "udp[0].model.rate_bps", "bandwidth", required=True),
                Row("mean_on", "udp[0].model.mean_on", "time", required=True),
                Row("mean_off", "udp[0].model.mean_off", "time", required=True),
                Row("shape", "udp[0].model.shape", "count"),
            ], elsewhere={k: "[[udp]]" for k in ("name", "from", "to", "start", "stop", "packet_size", "model")},
                shown_as="[[udp]]"),
        ],
        "monitor": [Table("[monitor]", "monitor", with_value("monitor", {}), [
            Row("cwnd", "monitor.cwnd", "bool"),
            Row("throughput", "monitor.throughput", "bool"),
            Row("queues", "monitor.queues", "", probe=["S->D"]),
            Row("all_queues", "monitor.all_queues", "bool"),
        ])],
        "topologies": [
            Table("[dumbbell]", "dumbbell",
                  {"run": {"duration": "10s"},
                   "dumbbell": {"pairs": 2, "access": _ACCESS, "bottleneck": {"bandwidth": "1Mbps", "delay": "5ms"}},
                   "flows": [{"from": "S1", "to": "D1", "cc": "reno"}]}, [
                Row("pairs", _lte_count("S"), "count", required=True),
                Row("access", lambda d: _link_between(d, "S1", "R1")["bandwidth_bps"], "", required=True,
                    probe={"bandwidth": "3Mbps", "delay": "1ms"}),
                Row("egress", lambda d: _link_between(d, "R2", "D1")["bandwidth_bps"], "", follows="access",
                    probe={"bandwidth": "3Mbps", "delay": "1ms"}),
                Row("bottleneck", lambda d: _link_between(d, "R1", "R2")["bandwidth_bps"], "", required=True,
                    probe={"bandwidth": "3Mbps", "delay": "1ms"}),
            ]),
            Table("[lte]", "lte",
                  {"run": {"duration": "10s"},
                   "lte": {"server_link": _ACCESS, "enb_link": _ACCESS, "ue_link": _ACCESS},
                   "flows": [{"from": "server", "to": "UE1", "cc": "reno"}]}, [
                Row("enbs", _lte_count("eNB"), "count", probe=3),
                Row("ues_per_enb", _ues_per_enb, "count", probe=2),
                Row("server_link", lambda d: _link_between(d, "server", "aGW")["bandwidth_bps"], "", required=True,
                    probe={"bandwidth": "3Mbps", "delay": "1ms"}),
                Row("enb_link", lambda d: _link_between(d, "aGW", "eNB1")["bandwidth_bps"], "", required=True,
                    probe={"bandwidth": "3Mbps", "delay": "1ms"}),
                Row("ue_link", lambda d: _link_between(d, "eNB1", "UE1")["bandwidth_bps"], "", required=True,
                    probe={"bandwidth": "3Mbps", "delay": "1ms"}),
            ]),
        ],
    }
