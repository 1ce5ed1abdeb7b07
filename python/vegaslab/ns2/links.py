"""The links of the normalised scenario mapped onto ns-2: each direction a ``simplex-link`` with
its DropTail or classic RED queue (:func:`link_direction`), its delay schedule and its
deterministic loss pattern (:func:`loss_pattern`), and a link's ``down_ns`` intervals as
``$ns rtmodel-at`` events (:func:`link_changes`). Anything else raises ``ValueError`` naming
the field of the normalised scenario and which link it is.
"""
from __future__ import annotations

from .. import schema as layout
from .model import LinkDir
from .tcl import INT_MAX, check_bool, check_float, check_int, check_keys, check_list, secs, tcl_bool, tcl_num


def _queue(q, where: str) -> tuple[int, dict | None]:
    """(limit, Queue/RED variables or None for DropTail) of one direction's queue."""
    if not isinstance(q, dict):
        raise ValueError(f"{where}: expected an object, got {q!r}")
    kind = q.get("kind")
    if kind == "droptail":
        check_keys(q, layout.keys("QueueSpec", "droptail"), where)
        return check_int(q.get("limit"), f"{where}.limit", 1), None
    if kind == "codel":
        # ns-2.35, the release the bridge targets, has no CoDel (no Queue/CoDel class: it came
        # to ns-2 only in later development trees), so there is nothing to compare with.
        raise ValueError(f"{where}.kind: ns-2.35 has no CoDel queue (no Queue/CoDel), so the "
                         f"ns-2 bridge cannot run a codel link; it supports droptail and red queues")
    if kind != "red":
        raise ValueError(f"{where}.kind: the ns-2 bridge supports droptail and red queues, "
                         f"got {kind!r}")
    check_keys(q, layout.keys("QueueSpec", "red"), where)
    if q.get("variant") != "classic":
        raise ValueError(f"{where}.variant: only classic RED (kind = \"red\") maps to ns-2's "
                         f"Queue/RED, got {q.get('variant')!r}")
    max_p = check_float(q.get("max_p"), f"{where}.max_p")
    if max_p <= 0:
        raise ValueError(f"{where}.max_p: must be > 0, got {max_p!r}")
    weight = q.get("weight")
    if weight == "auto":
        q_weight = "-1"    # ns-2: computed from the link's bandwidth and delay
    elif isinstance(weight, dict) and set(weight) == {"fixed"}:
        q_weight = tcl_num(check_float(weight["fixed"], f"{where}.weight.fixed"),
                           f"{where}.weight.fixed")
    else:
        raise ValueError(f"{where}.weight: expected \"auto\" or {{\"fixed\": w}}, got {weight!r}")
    # Packet mode, no ECN, classic forced drops above max (use_mark_p_ false), as the core's
    # RED (crates/vegaslab-sim/src/queue/red.rs).
    red = {
        "thresh_": tcl_num(check_float(q.get("min_th"), f"{where}.min_th"), f"{where}.min_th"),
        "maxthresh_": tcl_num(check_float(q.get("max_th"), f"{where}.max_th"), f"{where}.max_th"),
        "linterm_": tcl_num(1.0 / max_p, f"{where}.max_p"),
        "q_weight_": q_weight,
        "gentle_": tcl_bool(check_bool(q.get("gentle"), f"{where}.gentle")),
        "wait_": tcl_bool(check_bool(q.get("wait"), f"{where}.wait")),
        "mean_pktsize_": tcl_num(check_int(q.get("mean_pktsize"), f"{where}.mean_pktsize", 1),
                                 f"{where}.mean_pktsize"),
        "bytes_": "false", "queue_in_bytes_": "false", "setbit_": "false",
        "use_mark_p_": "false", "drop_tail_": "true", "drop_front_": "false",
        "drop_rand_": "false", "ns1_compat_": "false", "adaptive_": "0", "cautious_": "0",
    }
    return check_int(q.get("limit"), f"{where}.limit", 1), red


def link_direction(d, src: int, dst: int, nodes: list, where: str) -> LinkDir:
    """One direction of a link, from node index ``src`` to ``dst`` (``nodes``: the node names),
    as a :class:`LinkDir`: bandwidth, delay, delay schedule, queue and loss pattern."""
    check_keys(d, layout.keys("DirectionSpec"), where)
    bw = check_float(d.get("bandwidth_bps"), f"{where}.bandwidth_bps")
    if bw <= 0:
        raise ValueError(f"{where}.bandwidth_bps: must be > 0, got {bw!r}")
    rate = d.get("error_rate")
    if rate != 0:
        raise ValueError(f"{where}.error_rate: the ns-2 bridge has no packet errors "
                         f"(only 0), got {rate!r}")
    sched = []
    for j, ev in enumerate(check_list(d.get("delay_schedule_ns"), f"{where}.delay_schedule_ns")):
        w = f"{where}.delay_schedule_ns[{j}]"
        if not (isinstance(ev, list) and len(ev) == 2):
            raise ValueError(f"{w}: expected [at_ns, delay_ns], got {ev!r}")
        sched.append((secs(ev[0], w + "[0]"), secs(ev[1], w + "[1]")))
    limit, red = _queue(d.get("queue"), f"{where}.queue")
    return LinkDir(src, dst, nodes[src], nodes[dst], bw, secs(d.get("delay_ns"), f"{where}.delay_ns"),
                   limit, sched, red, loss_pattern(d.get("loss"), f"{where}.loss"))


def loss_pattern(loss, where: str) -> tuple | None:
    """One direction's loss pattern (``None`` when the document has none) for
    :func:`~vegaslab.ns2.script.build_script`: ``("list", sorted indices)`` or ``("periodic", every, first, burst)``.

    ns-2 counts the packets passing its error model in a C ``int`` (and ``offset_ = first + 1``
    must fit one), so larger indices are refused here, naming the field.
    """
    if loss is None:
        return None
    if not isinstance(loss, dict):
        raise ValueError(f"{where}: expected an object, got {loss!r}")
    kind = loss.get("kind")
    if kind == "list":
        check_keys(loss, layout.keys("LossPattern", "list"), where)
        packets = [check_int(p, f"{where}.packets[{j}]", 0, INT_MAX - 1)
                   for j, p in enumerate(check_list(loss.get("packets"), f"{where}.packets"))]
        if packets != sorted(set(packets)):
            raise ValueError(f"{where}.packets: expected distinct indices in increasing order")
        return ("list", packets)
    if kind == "periodic":
        check_keys(loss, layout.keys("LossPattern", "periodic"), where)
        every = check_int(loss.get("every"), f"{where}.every", 1)
        first = check_int(loss.get("first"), f"{where}.first", 0, INT_MAX - 1)
        burst = check_int(loss.get("burst"), f"{where}.burst", 1, every)
        return ("periodic", every, first, burst)
    raise ValueError(f"{where}.kind: expected \"list\" or \"periodic\", got {kind!r}")


def link_changes(down, dirs, a: int, b: int, where: str) -> list:
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
    for j, iv in enumerate(check_list(down, f"{where}.down_ns")):
        w = f"{where}.down_ns[{j}]"
        if not (isinstance(iv, list) and len(iv) == 2):
            raise ValueError(f"{w}: expected [from_ns, to_ns], got {iv!r}")
        frm, to = secs(iv[0], w + "[0]"), secs(iv[1], w + "[1]")
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
