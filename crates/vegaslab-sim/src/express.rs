//! Express hops: skipping events that cannot change anything.
//!
//! A packet normally waits in a channel's pipe for a delivery event at its arrival time. That
//! event is needed when something else may happen at the far node in between: packets from
//! other channels merging into the same next channel, or a sender's timers. But when every packet that can ever enter the next step comes through this one
//! channel, whose delay never changes (so packets leave in arrival order), the next step sees
//! the same packets in the same order at the same simulated times whenever it is processed.
//! Then the packet is handed on at its arrival time straight away, with no event.
//!
//! A receiver with a clock of its own (Linux's delayed ACKs) sends its ACKs as a sender sends
//! data: they are local packets, and its node is an end node whose timers are checked per
//! packet like a sender's.
//!
//! Static routing makes this decidable up front: each flow's data and ACK paths are fixed.
//! For each channel we collect its *feeders*: the channel each of its packets came from, or
//! "local" for packets a sender injects. A sink's ACKs count as coming from the channel that
//! delivered the data (the sink is driven only by that channel). A channel is *expressable*
//! when its only feeder is one order-keeping channel. A monitored queue is no exception: it
//! samples itself as its own clock passes each sample time (`Channel::start_sampling`). A channel
//! `c` hands packets on directly (`Channel::hands_on`) when every packet leaving it goes either
//! into an expressable channel fed by `c`, or to a sink whose ACK channel is expressable and
//! fed by `c`. Packets to senders are not decided here: a sender has timers, so whether its
//! ACK may skip the event is decided per ACK ("ACKs to a sender", below).
//!
//! UDP sources are local feeders too: their datagrams merge into the channels of their path,
//! so they are given as one-way routes (an empty ACK path). Their sink only counts, so a
//! channel may hand datagrams to it directly.
//!
//! **Packets to an end node**: a node where packets only end (senders get their
//! ACKs, sinks their data) may take them at their arrival ahead of the clock too, within the
//! event that accepted them, under conditions checked partly here (`express_nodes`) and
//! partly per packet (`Simulator::node_may_run_ahead`): nothing else may touch the node's
//! senders and sinks, or the links they send into, before the packet's arrival. Statically:
//! the node has one link in (so its packets arrive in that link's order), every link out of it
//! carries only what the node's own senders and sinks send (no transit, no UDP source there),
//! and its senders have no application clock. Per packet: no pending event of the node's
//! senders (a retransmission timer's deadline or pending event, a stop, a monitor's sample of
//! their state) falls before the arrival, no earlier packet waits in the link in and its delay
//! is constant, and the packet is not itself a consequence of a sender's sending (which would
//! nest one sender's processing inside another's, or its own).

use crate::channel::Channel;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Feeder {
    Local,
    Channel(u32),
}

/// The distinct feeders of a channel, as far as they matter.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Feeders {
    None,
    One(Feeder),
    Many,
}

/// A flow's route: channels of its data path and of its ACK path (empty for a one-way UDP
/// source, whose sink sends nothing back).
pub struct Route {
    pub data: Vec<u32>,
    pub ack: Vec<u32>,
    /// The receiver acts on a clock of its own (Linux's delayed ACKs), so its ACKs are local
    /// packets, not the delivering channel's: that channel does not hand data on to it.
    pub receiver_clock: bool,
}

/// Per channel `c` (`Channel::hands_on`): packets leaving `c` may be processed at their
/// arrival time without an event.
///
/// Linear in the total length of the routes: only whether a channel has exactly one feeder
/// (and which) matters, so feeders are not listed (a list checked for duplicates made a
/// 10,000-pair dumbbell's bottleneck quadratic).
pub fn express_channels(channels: &[Channel], routes: &[Route]) -> Vec<bool> {
    let n = channels.len();
    let mut feeders: Vec<Feeders> = vec![Feeders::None; n];
    let mut add = |c: u32, f: Feeder| {
        let slot = &mut feeders[c as usize];
        *slot = match *slot {
            Feeders::None => Feeders::One(f),
            Feeders::One(g) if g == f => Feeders::One(f),
            _ => Feeders::Many,
        };
    };
    for r in routes {
        for (i, &c) in r.data.iter().enumerate() {
            add(c, if i == 0 { Feeder::Local } else { Feeder::Channel(r.data[i - 1]) });
        }
        let last_data = *r.data.last().expect("non-empty route");
        if r.ack.is_empty() {
            continue;
        }
        for (i, &c) in r.ack.iter().enumerate() {
            let first = if r.receiver_clock { Feeder::Local } else { Feeder::Channel(last_data) };
            add(c, if i == 0 { first } else { Feeder::Channel(r.ack[i - 1]) });
        }
    }
    let expressable_from = |next: u32, from: u32| -> bool {
        feeders[next as usize] == Feeders::One(Feeder::Channel(from)) && channels[from as usize].keeps_order()
    };
    // Every "next step" of each channel, per flow path.
    let mut ok = vec![true; n];
    let mut used = vec![false; n];
    for r in routes {
        for w in r.data.windows(2) {
            used[w[0] as usize] = true;
            ok[w[0] as usize] &= expressable_from(w[1], w[0]);
        }
        let last_data = *r.data.last().unwrap();
        used[last_data as usize] = true;
        if r.ack.is_empty() {
            continue; // a UDP sink: it only counts
        }
        ok[last_data as usize] &= expressable_from(r.ack[0], last_data);
        for w in r.ack.windows(2) {
            used[w[0] as usize] = true;
            ok[w[0] as usize] &= expressable_from(w[1], w[0]);
        }
        // ACKs reaching the sender: decided per ACK by the simulator (module documentation).
        let last_ack = *r.ack.last().unwrap();
        used[last_ack as usize] = true;
        ok[last_ack as usize] = false;
    }
    ok.iter().zip(&used).map(|(o, u)| *o && *u).collect()
}

/// Per node: the static conditions under which packets arriving there may be processed ahead
/// of the clock (module documentation, "Packets to an end node"): one used link in; every
/// used link out carries only the first hops of routes starting there (a sender's data, a
/// sink's ACKs), none of a UDP source. (The caller adds what the routes do not show: the
/// senders' applications.)
///
/// With routes the same both ways (hop-count shortest paths), a node with one link in cannot
/// forward anything onto a link its own traffic uses, so the transit test only matters for
/// asymmetric routes; it and the one-link-in test are kept for those, without a scenario of
/// the test suite that needs them (`tests/express_senders.rs` covers the UDP test, the
/// per-packet conditions and every kind of end node).
pub fn express_nodes(nodes: usize, channels: &[Channel], routes: &[Route]) -> Vec<bool> {
    let mut used = vec![false; channels.len()];
    let mut transit = vec![false; channels.len()];
    let mut ok = vec![true; nodes];
    for r in routes {
        for path in [&r.data, &r.ack] {
            for (i, &c) in path.iter().enumerate() {
                used[c as usize] = true;
                transit[c as usize] |= i > 0;
            }
        }
        if r.ack.is_empty() {
            if let Some(&c) = r.data.first() {
                ok[channels[c as usize].from as usize] = false; // a UDP source's node
            }
        }
    }
    let mut links_in = vec![0u32; nodes];
    for (c, ch) in channels.iter().enumerate().filter(|&(c, _)| used[c]) {
        links_in[ch.to as usize] += 1;
        if transit[c] {
            ok[ch.from as usize] = false;
        }
    }
    ok.iter().zip(&links_in).map(|(&o, &n)| o && n == 1).collect()
}
