//! RoVegas's AQT-enabled router (Chan et al., "Design and performance evaluation of an improved
//! TCP congestion avoidance scheme", section 3): a router adds the time a probing packet spent
//! in its queue to the packet's AQT option. A hook on dequeue, not a discipline: it decides no
//! fate. A channel whose sending node is such a router (`Channel::aqt_enabled`) applies it to
//! every probing packet it transmits, with the wait from arrival to transmission start.

use vegaslab_cc::Nanos;

/// A probing packet's AQT after a wait of `queued` in the queue (saturating, as the option's
/// 32 bits of nanoseconds hold about 4.3 s). On the value, not the packet: a reference to the
/// packet on `Simulator::hops`'s path made the compiler keep the packet in memory there
/// (+1% instructions on the benchmark's 50 s slice).
#[inline(always)]
pub fn stamped(aqt: u32, queued: Nanos) -> u32 {
    aqt.saturating_add(queued.min(u32::MAX as u64) as u32)
}
