//! RoVegas's AQT-enabled router (Chan et al., "Design and performance evaluation of an improved
//! TCP congestion avoidance scheme", section 3): a router adds the time a probing packet spent
//! in its queue to the packet's AQT option. A hook on dequeue, not a discipline: it decides no
//! fate. A channel whose sending node is such a router (`Channel::aqt_enabled`) applies it to
//! every probing packet it transmits, with the wait from arrival to transmission start.

use crate::packet::Packet;
use vegaslab_cc::Nanos;

/// Add the queueing time `queued` to a probing packet's AQT (saturating, as the option's 32
/// bits of nanoseconds hold about 4.3 s).
#[inline(always)]
pub fn stamp(p: &mut Packet, queued: Nanos) {
    if p.probe {
        p.aqt = p.aqt.saturating_add(queued.min(u32::MAX as u64) as u32);
    }
}
