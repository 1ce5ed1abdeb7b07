"""A :class:`~vegaslab.ns2.model.Model` as the ns-2.35 OTcl script that runs it and prints
``VLAB ...`` result lines (:func:`build_script`): nodes, links and their queues, delay
schedules, traces and queue monitors, loss models, link changes, agents with their tick phase,
applications, and the end-of-run report.

A model can be built by hand, so what the script writes verbatim is checked again here
(:func:`_check_model`): agent and RED variables must be names the bridge knows, values plain
literals, indices in range; names appear only in comments (:func:`~vegaslab.ns2.tcl.comment_text`).
"""
from __future__ import annotations

import math
import re

from .flows import AGENT_VARS
from .links import loss_pattern
from .model import AGENT_CLASS, LinkDir, Model
from .rng import ns2_seed, phase_reset
from .tcl import NUMBER_TEXT, check_int, comment_text, tcl_num

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
        x, y = check_int(x, "link_changes"), check_int(y, "link_changes")
        L.append(f"[$ns link $n({x}) $n({y})] dynamic")
        L.append(f"[$ns link $n({x}) $n({y})] linkfail-drop-trace")
    for at, op, a, b in model.link_changes:
        if op not in ("down", "up"):
            raise ValueError(f"link_changes: op must be down or up, got {op!r}")
        L.append(f"$ns rtmodel-at {tcl_num(at, 'link_changes')} {op} "
                 f"$n({check_int(a, 'link_changes')}) $n({check_int(b, 'link_changes')})")
    return L


_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def _check_model(model: Model) -> None:
    """A :class:`Model` can also be built by hand: check that what :func:`build_script` writes
    verbatim (agent and RED variables, indices) is still a fixed name and a plain literal."""
    def literal(v, where):
        if not (isinstance(v, str) and (v in ("true", "false") or NUMBER_TEXT.fullmatch(v))):
            raise ValueError(f"{where}: not a Tcl number or boolean: {v!r}")
    n = len(model.nodes)
    for k, ld in enumerate(model.links):
        check_int(ld.src, f"links/{k}.src", 0, n - 1)
        check_int(ld.dst, f"links/{k}.dst", 0, n - 1)
        for var, val in (ld.red or {}).items():
            if not (isinstance(var, str) and re.fullmatch(r"[a-z_0-9]+_", var)):
                raise ValueError(f"links/{k}.red: not a Queue/RED variable: {var!r}")
            literal(val, f"links/{k}.red.{var}")
        _check_loss(ld.loss, f"links/{k}.loss")
    for i, f in enumerate(model.flows):
        if f.index != i or f.cc not in AGENT_CLASS or f.app not in ("ftp", "file", "file-packets"):
            raise ValueError(f"flows/{i}: index, cc or app is not one the bridge made")
        check_int(f.src, f"flows/{i}.src", 0, n - 1)
        check_int(f.dst, f"flows/{i}.dst", 0, n - 1)
        for var, val in f.agent_vars.items():
            if var not in AGENT_VARS:
                raise ValueError(f"flows/{i}.agent_vars: not an agent variable: {var!r}")
            literal(val, f"flows/{i}.agent_vars.{var}")
        phase = f.tick_phase
        if (isinstance(phase, bool) or not isinstance(phase, (int, float))
                or not (math.isfinite(phase) and phase >= 0)):
            raise ValueError(f"flows/{i}.tick_phase: expected seconds >= 0, got {phase!r}")


def _check_loss(loss, where: str) -> None:
    """A hand-built :attr:`LinkDir.loss` must be what :func:`loss_pattern` makes."""
    if loss is None:
        return
    if isinstance(loss, tuple) and len(loss) == 2 and loss[0] == "list":
        loss_pattern({"kind": "list", "packets": loss[1]}, where)
    elif isinstance(loss, tuple) and len(loss) == 4 and loss[0] == "periodic":
        loss_pattern({"kind": "periodic", "every": loss[1], "first": loss[2], "burst": loss[3]}, where)
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
             f"$em({k}) droplist {{{' '.join(tcl_num(p, w) for p in loss[1])}}}"]
    else:
        _, every, first, burst = loss
        L = [f"set em({k}) [new ErrorModel/Periodic]",
             f"$em({k}) unit pkt",
             f"$em({k}) set period_ {tcl_num(every, w)}",
             f"$em({k}) set offset_ {tcl_num(first + 1, w)}",
             f"$em({k}) set burstlen_ {tcl_num(burst, w)}",
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
    s = ns2_seed(check_int(model.seed if seed is None else seed, "seed", 0, 2**64 - 1))
    L = ["# generated by vegaslab.ns2 -- ns-2.35 OTcl",
         f"# scenario: {comment_text(model.name)}",
         "set ns [new Simulator]",
         *([f"set vl_all [open {trace_all} w]", "$ns trace-all $vl_all"] if trace_all else []),
         f"global defaultRNG\n$defaultRNG seed {tcl_num(s, 'seed')}",
         "set vl_phase_rng [new RNG]",
         _PROCS]
    for i, n in enumerate(model.nodes):
        L.append(f"set n({i}) [$ns node] ;# {comment_text(n)}")
    for k, ld in enumerate(model.links):
        a, b = ld.src, ld.dst
        for var, val in (ld.red or {}).items():
            L.append(f"Queue/RED set {var} {val}")
        L.append(f"$ns simplex-link $n({a}) $n({b}) {tcl_num(ld.bandwidth, f'links/{k}')}"
                 f" {tcl_num(ld.delay, f'links/{k}')} {'RED' if ld.red else 'DropTail'}"
                 f" ;# {comment_text(ld.name)}")
        L.append(f"$ns queue-limit $n({a}) $n({b}) {tcl_num(ld.limit, f'links/{k}')}")
    for k, ld in enumerate(model.links):
        a, b = ld.src, ld.dst
        for at, d in ld.schedule:
            L.append(f'$ns at {tcl_num(at, "at")} "[[$ns link $n({a}) $n({b})] link] set delay_'
                     f' {tcl_num(d, "delay")}"')
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
        L.append(f"# flow {i}: {comment_text(f.name)} ({f.cc}) "
                 f"{comment_text(f.src_name)} -> {comment_text(f.dst_name)}")
        L.append(f"set tcp({i}) [new {AGENT_CLASS[f.cc]}]")
        L.append(f"$tcp({i}) set fid_ {i}")
        for var, val in f.agent_vars.items():
            L.append(f"$tcp({i}) set {var} {val}")
        phase_seed, phase_tick = phase_reset(f.tick_phase)
        L.append(f"# tick phase {tcl_num(f.tick_phase, 'tick_phase')} s "
                 f"({'drawn from the seed' if f.tick_phase_seeded else 'set'})")
        L.append(f'$tcp({i}) proc reset {{}} "vl_phase_reset {i} {tcl_num(phase_seed, "phase")}'
                 f' {tcl_num(phase_tick, "phase")}"')
        L.append(f"$ns attach-agent $n({f.src}) $tcp({i})")
        L.append(f"set sink({i}) [new Agent/TCPSink]")
        L.append(f"$sink({i}) set packetSize_ {tcl_num(f.ack_size, 'ack_size')}")
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
            L.append(f'$ns at {tcl_num(f.start, "start")} "$app({i}) send '
                     f'{tcl_num(f.file_size, "file_size")}"')
        elif f.app == "file-packets":
            # ns-2's packet-count idiom (Application/FTP produce -> the agent's advance): it
            # sets curseq_ to N, as sendmsg of N x packetSize_ bytes would (ns-2 rounds bytes
            # up to whole packets); at the start, where nothing was sent, the two are the same.
            L.append(f'$ns at {tcl_num(f.start, "start")} "$app({i}) produce '
                     f'{tcl_num(check_int(f.file_packets, f"flows/{i}.file_packets", 1), "file_packets")}"')
        else:
            L.append(f'$ns at {tcl_num(f.start, "start")} "$app({i}) start"')
        if f.stop is not None and f.stop < model.duration:
            L.append(f'$ns at {tcl_num(f.stop, "stop")} "$app({i}) stop"')
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
    L.append(f"$ns at {tcl_num(model.duration, 'duration')} vl_finish")
    L.append("$ns run")
    return "\n".join(L) + "\n"
