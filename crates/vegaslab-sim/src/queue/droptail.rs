//! ns-2's DropTail (`queue/drop-tail.cc`): a packet is dropped when the queue is full.

use super::{Arrival, QueueDiscipline, Verdict};

/// A DropTail queue of `limit` packets, counting the one in transmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DropTail {
    pub limit: u32,
}

/// ns-2 DropTail: drop when (waiting + 1) >= limit, so limit - 1 wait and one is in
/// transmission. (The plain channel's copy of `accept` calls this with the limit it keeps in
/// its first cache line, not through [`super::Discipline`].)
#[inline(always)]
pub fn droptail_admits(waiting: u64, limit: u32) -> bool {
    waiting + 1 < limit as u64
}

impl QueueDiscipline for DropTail {
    fn enqueue(&mut self, a: &Arrival) -> Verdict {
        if droptail_admits(a.waiting, self.limit) {
            Verdict::Accept
        } else {
            Verdict::Forced
        }
    }
}
