//! Packets are small plain values (40 bytes) that travel by value through each link's FIFO
//! ring buffer. There is no per-packet allocation: a link's ring keeps its capacity, and a
//! packet's bytes are read sequentially as it moves, which measured faster than a shared
//! pool indexed by id (the pool's slots were cache misses after a long queueing delay).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Data,
    Ack,
    /// A UDP datagram; `flow` is the index of its source (`udp`), `seqno` its number.
    Udp,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    pub seqno: i64,
    pub flow: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// Destination node.
    pub dst: u32,
    /// RoVegas AQT option (the RoVegas paper: Chan et al., "Design and performance evaluation
    /// of an improved TCP congestion avoidance scheme", section 3): accumulated queueing time
    /// at AQT-enabled routers, and the echo of the data packet's AQT on an ACK; nanoseconds,
    /// saturating at about 4.3 s. Meaningful only when `probe` is set.
    pub aqt: u32,
    /// On an ACK, the AQT echo; on a data segment of Linux's stack, its timestamp value in
    /// milliseconds (RFC 7323), which the receiver echoes.
    pub aqt_echo: u32,
    pub kind: Kind,
    pub probe: bool,
    /// On an ACK of Linux's receiver: the number of its report (SACK blocks, DSACK,
    /// timestamp echo), which the sender takes from the receiver's ring
    /// ([`crate::linux_receiver::LinuxReceiver::take`]). 0 otherwise.
    pub report: u16,
    /// ns-2's double-precision clock (seconds) at the packet's current event: when the
    /// sender sent it, or when it reaches the node it travels to (see `run.clock`,
    /// `scenario::SenderClock`). Carried whatever the clock setting; only senders read it.
    pub clock: f64,
}
