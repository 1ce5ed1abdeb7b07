//! What a link direction loses after its queue: the uniform packet-error model and the
//! deterministic loss patterns. Both act on packets the queue accepted, after the link (where
//! ns-2's `$ns link-lossmodel` inserts an error model), so a lost packet has occupied the
//! queue and the transmitter.
//!
//! Draws of the packet-error model come from [`crate::rng::stream`]`(seed,`
//! [`STREAM_ERROR_BASE`]` + c)` for channel `c`, so adding one never shifts another's draws.

use crate::rng::{stream, STREAM_ERROR_BASE};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A uniform packet error rate on one link direction: each transmitted packet is lost with
/// probability `rate`, independently (ns-2 `ErrorModel` with `unit pkt` and a uniform random
/// variable). The draw is made when the packet is accepted (its fate is fixed then); the
/// packet still occupies the queue and the transmitter.
#[derive(Clone, Debug)]
pub struct PacketErrors {
    pub rate: f64,
    rng: ChaCha8Rng,
}

impl PacketErrors {
    /// `None` for a zero rate (no draws at all, so a zero-rate link costs nothing).
    /// Boxed: the generator's state is large and most channels have none.
    pub fn new(rate: f64, seed: u64, channel: usize) -> Option<Box<Self>> {
        (rate > 0.0).then(|| Box::new(PacketErrors { rate, rng: stream(seed, STREAM_ERROR_BASE + channel as u64) }))
    }

    #[inline]
    pub fn corrupts(&mut self) -> bool {
        self.rng.gen::<f64>() < self.rate
    }
}

/// A deterministic loss pattern on one link direction (`loss = { ... }` in a link table): which
/// packets, counted from 0 in the order the direction transmits them, are lost.
///
/// What is counted: every packet the direction's queue accepts (so transmits), whatever it is
/// (data, ACKs, UDP), as ns-2's `ErrorModel` counts every packet that passes it (`unit pkt`).
/// Packets the queue drops are not counted: they never reach the link. The pattern sits where
/// ns-2's `$ns link-lossmodel` puts an error model, after the queue and the link (`SimpleLink
/// insert-linkloss`: between the delay line and the far node), which is also where the
/// uniform `error_rate` acts: a lost packet occupied the queue and the transmitter.
/// ns-2 counts in the order packets leave the delay line; that is the transmission order
/// unless a delay that falls lets a later packet overtake (a delay schedule), when the two can
/// differ.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum LossPattern {
    /// The packets with these indices (0-based), in increasing order, each once (ns-2's
    /// `ErrorModel/List` with `droplist`, whose count also starts at 0).
    List {
        #[serde(serialize_with = "serialize_indices")]
        #[schemars(with = "Vec<u64>")]
        packets: std::sync::Arc<[u64]>,
    },
    /// `burst` consecutive packets from index `first`, then from `first + every`, `first + 2
    /// every`, ... (ns-2's `ErrorModel/Periodic` with `offset_ = first + 1`, `period_ = every`,
    /// `burstlen_ = burst`: its count starts at 1 and offsets 0 and 1 both lose the first
    /// packet, so the scenario uses 0-based indices and the bridge translates).
    Periodic { every: u64, first: u64, burst: u64 },
}

/// The list is shared (`Arc`) by the directions and links a builder copies it to; it is written
/// out as a plain list.
fn serialize_indices<S: serde::Serializer>(packets: &std::sync::Arc<[u64]>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(packets.iter())
}

impl LossPattern {
    /// Whether the packet with this index (0-based) is lost (for tests and documentation: the
    /// simulator walks the pattern with [`PatternLosses`]).
    pub fn loses(&self, index: u64) -> bool {
        match self {
            LossPattern::List { packets } => packets.binary_search(&index).is_ok(),
            LossPattern::Periodic { every, first, burst } => index >= *first && (index - first) % every < *burst,
        }
    }
}

/// A loss pattern being applied: the index of the next packet, and for a list the next listed
/// index not yet reached.
#[derive(Clone, Debug)]
pub struct PatternLosses {
    pattern: LossPattern,
    count: u64,
    next: usize,
}

impl PatternLosses {
    /// `None` without a pattern (a direction without one costs nothing). Boxed: most channels
    /// have none.
    pub fn new(pattern: &Option<LossPattern>) -> Option<Box<Self>> {
        pattern.as_ref().map(|p| Box::new(PatternLosses { pattern: p.clone(), count: 0, next: 0 }))
    }

    /// The fate of the next transmitted packet: true if the pattern loses it.
    #[inline]
    pub fn loses_next(&mut self) -> bool {
        let i = self.count;
        self.count += 1;
        match &self.pattern {
            LossPattern::List { packets } => {
                if packets.get(self.next) == Some(&i) {
                    self.next += 1;
                    true
                } else {
                    false
                }
            }
            LossPattern::Periodic { every, first, burst } => i >= *first && (i - first) % every < *burst,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_pattern_loses_exactly_the_listed_indices_counted_from_zero() {
        let p = LossPattern::List { packets: vec![0, 3, 4, 9].into() };
        let mut walk = PatternLosses::new(&Some(p.clone())).unwrap();
        let lost: Vec<u64> = (0..12u64).filter(|_| walk.loses_next()).collect();
        assert_eq!(lost, vec![0, 3, 4, 9]);
        assert_eq!((0..12u64).filter(|&i| p.loses(i)).collect::<Vec<_>>(), lost);
    }

    #[test]
    fn a_periodic_pattern_loses_bursts_from_first_every_period() {
        let p = LossPattern::Periodic { every: 5, first: 2, burst: 2 };
        let mut walk = PatternLosses::new(&Some(p.clone())).unwrap();
        let lost: Vec<u64> = (0..20u64).filter(|_| walk.loses_next()).collect();
        assert_eq!(lost, vec![2, 3, 7, 8, 12, 13, 17, 18]);
        assert_eq!((0..20u64).filter(|&i| p.loses(i)).collect::<Vec<_>>(), lost);
        // every = 1 loses every packet from `first` on.
        let all = LossPattern::Periodic { every: 1, first: 3, burst: 1 };
        assert_eq!((0..6u64).filter(|&i| all.loses(i)).collect::<Vec<_>>(), vec![3, 4, 5]);
    }
}
