//! CoDel, "Controlled Delay" active queue management (RFC 8289; `kind = "codel"`).
//!
//! CoDel judges each packet as it leaves the queue by its *sojourn time* (dequeue time less
//! enqueue time), and drops at dequeue:
//! - **Above target** ([`CoDel::ok_to_drop`], the RFC's `dodequeue`): a packet whose sojourn
//!   time is below `target`, or that leaves at most one packet's worth of bytes behind it,
//!   resets the clock. Otherwise the first such packet sets `first_above_time = now +
//!   interval`, and from then on (`now >= first_above_time`, the RFC's comparison) dropping is
//!   allowed: the sojourn time has stayed above target for a whole interval.
//! - **Entering the dropping state**: the first packet allowed to drop is dropped, the next
//!   one (dequeued at the same instant) is sent, and the next drop is due at
//!   `now + interval / sqrt(count)`.
//! - **In the dropping state**: a packet not allowed to drop ends the state and is sent. One
//!   allowed to drop, dequeued at or after the drop time, is dropped, `count` grows by one,
//!   and the packet behind it is dequeued at once; if it too may be dropped the drop time moves
//!   on by the control law, `drop_next + interval / sqrt(count)` (from the previous drop
//!   *time*, not from now), and if that is still not later than now it is dropped too, as the
//!   RFC's loop does.
//! - **Count reuse** (RFC 8289 section 5, pseudocode of `dequeue`, the Linux rule): on entering
//!   the dropping state, if more than one drop (`count - lastcount > 1`) was made in the last
//!   dropping state and that state's next drop time lies less than 16 intervals back, `count`
//!   starts from that number of drops instead of 1: the drop rate that last controlled the
//!   queue is a good starting point.
//! - **An empty queue**: when the transmitter falls free and finds nothing waiting (the RFC's
//!   `dequeue` returning no packet), the dropping state ends and the above-target clock resets.
//!
//! Where the RFC leaves a detail open, this follows Linux (`include/net/codel_impl.h`,
//! `net/sched/sch_codel.c`), and says so at the line: the enqueue limit counts waiting packets
//! (Linux's `sch->limit` against the qdisc's length, which the packet being sent has left),
//! and the time difference of the count-reuse test is signed. Two deliberate differences from
//! Linux: `first_above_time` is reached at `now >=` (the RFC;
//! Linux's `codel_time_after` needs `>`), and the control law is computed exactly in
//! floating point and rounded down to the nanosecond (the RFC's `INTERVAL / sqrt(count)`;
//! Linux approximates `1/sqrt(count)` by Newton steps in 32-bit fixed point). The "one
//! packet's worth" of bytes is the largest packet this queue has seen: the RFC's `maxpacket`
//! (which it says should be the interface MTU; Linux uses the device MTU), as the simulator's
//! links have no MTU of their own. No ECN marking: every CoDel decision here is a drop.

use super::registry::{Kind, KindDoc, Placement, QueueKey};
use super::{Arrival, Departure, QueueDiscipline, Verdict};
use crate::scenario::limits::MAX_TIME_NS;
use vegaslab_cc::params::{Param, ParamError, ParamKind, ParamSource};
use vegaslab_cc::Nanos;

/// Linux's default target sojourn time (`codel` qdisc, `target 5ms`; the RFC's recommended setting).
pub const DEFAULT_TARGET_NS: Nanos = 5_000_000;
/// Linux's default interval (`interval 100ms`; the RFC's recommended setting).
pub const DEFAULT_INTERVAL_NS: Nanos = 100_000_000;

/// A validated CoDel configuration (`queue = { kind = "codel", ... }`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct CoDelSpec {
    /// Most packets waiting, not counting the one in transmission (Linux's `limit`, which
    /// counts the qdisc's packets; the packet on the wire has left it).
    pub limit: u32,
    /// Acceptable standing sojourn time.
    #[serde(rename = "target_ns")]
    pub target: Nanos,
    /// Window over which the sojourn time must stay above target before dropping starts, and
    /// the control law's base spacing.
    #[serde(rename = "interval_ns")]
    pub interval: Nanos,
}

/// CoDel's state on one link direction.
#[derive(Clone, Debug)]
pub struct CoDel {
    pub spec: CoDelSpec,
    /// When the sojourn time will have been above target for an interval (the RFC's
    /// `first_above_time_`; `None` is its 0: not above target).
    first_above_time: Option<Nanos>,
    /// When the next drop is due in the dropping state.
    drop_next: Nanos,
    /// Drops in the current (or last) dropping state, as the control law counts them.
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    dropping: bool,
    /// A packet was just dropped in the dropping state: the next one is dequeued at the same
    /// instant, inside the RFC's drop loop, where the drop time moves on before it is judged.
    in_drop_loop: bool,
    /// The dropping state was just entered with a drop: the next packet, dequeued at the same
    /// instant, is the one the RFC's entering branch returns (sent whatever it is).
    just_entered: bool,
    /// Largest packet seen (bytes): the RFC's `maxpacket`.
    maxpacket: u32,
    /// Packets dropped at dequeue, and at enqueue because the queue was full.
    pub dequeue_drops: u64,
    pub limit_drops: u64,
}

impl CoDel {
    pub fn new(spec: &CoDelSpec) -> Self {
        CoDel {
            spec: spec.clone(),
            first_above_time: None,
            drop_next: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
            in_drop_loop: false,
            just_entered: false,
            maxpacket: 0,
            dequeue_drops: 0,
            limit_drops: 0,
        }
    }

    /// The control law: the next drop time `t + interval / sqrt(count)`, rounded down to the
    /// nanosecond.
    pub fn control_law(&self, t: Nanos, count: u32) -> Nanos {
        let spacing = self.spec.interval as f64 / (count.max(1) as f64).sqrt();
        t.saturating_add(spacing as Nanos)
    }

    /// The RFC's `dodequeue` test: whether the departing packet may be dropped, updating the
    /// above-target clock.
    fn ok_to_drop(&mut self, d: &Departure) -> bool {
        let sojourn = d.now.saturating_sub(d.enqueued_at);
        if sojourn < self.spec.target || d.backlog_bytes <= self.maxpacket as u64 {
            // Below target (or too little queue to matter): stay below for an interval first.
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(d.now.saturating_add(self.spec.interval));
                false
            }
            Some(t) => d.now >= t,
        }
    }

    /// Whether the queue is in the dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// The control law's count of drops.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// When the next drop is due (meaningful in the dropping state).
    pub fn drop_next(&self) -> Nanos {
        self.drop_next
    }
}

impl QueueDiscipline for CoDel {
    fn enqueue(&mut self, a: &Arrival) -> Verdict {
        // Linux's `codel_qdisc_enqueue`: full at `limit` packets in the qdisc.
        if a.waiting >= self.spec.limit as u64 {
            self.limit_drops += 1;
            return Verdict::Forced;
        }
        self.maxpacket = self.maxpacket.max(a.bytes);
        Verdict::Accept
    }

    fn dequeue(&mut self, d: &Departure) -> Verdict {
        let ok = self.ok_to_drop(d);
        if std::mem::take(&mut self.just_entered) {
            // The packet the entering branch dequeues after its drop and returns.
            return Verdict::Accept;
        }
        if self.dropping {
            if !ok {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
                self.in_drop_loop = false;
                return Verdict::Accept;
            }
            if std::mem::take(&mut self.in_drop_loop) {
                // Still allowed to drop after a drop: schedule the next drop from the last one.
                self.drop_next = self.control_law(self.drop_next, self.count);
            }
            if d.now >= self.drop_next {
                // Counted before the next drop time is computed (the RFC's `++count_`).
                self.count = self.count.saturating_add(1);
                self.in_drop_loop = true;
                self.dequeue_drops += 1;
                return Verdict::Early;
            }
            return Verdict::Accept;
        }
        if !ok {
            return Verdict::Accept;
        }
        // Enter the dropping state with a drop. Count reuse: the drops of the last dropping
        // state, if more than one and it was recent (drop_next less than 16 intervals back;
        // a drop_next still ahead counts as recent, as Linux's signed time difference does).
        self.dropping = true;
        self.just_entered = true;
        let delta = self.count.wrapping_sub(self.lastcount);
        let recent = d.now < self.drop_next || d.now - self.drop_next < self.spec.interval.saturating_mul(16);
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.lastcount = self.count;
        self.drop_next = self.control_law(d.now, self.count);
        self.dequeue_drops += 1;
        Verdict::Early
    }

    fn idle(&mut self, _now: Nanos) {
        // The RFC's `dequeue` finding the queue empty: out of the dropping state, and
        // `dodequeue`'s "can't be above target".
        self.dropping = false;
        self.in_drop_loop = false;
        self.just_entered = false;
        self.first_above_time = None;
    }

    fn drops_at_dequeue(&self) -> bool {
        true
    }
}

const LIMIT: QueueKey = QueueKey {
    param: Param {
        name: "limit",
        kind: ParamKind::Integer { lo: 1, hi: 100_000_000 },
        unit: "packets",
        doc: "the packets that may wait, not counting the one being transmitted",
        cite: "Linux sch_codel.c, limit (the qdisc's packets; the one on the wire has left it)",
    },
    field: "limit",
    required: false,
};
const TARGET: QueueKey = QueueKey {
    param: Param {
        name: "target",
        kind: ParamKind::Time { lo_ns: 1, hi_ns: MAX_TIME_NS as u64 },
        unit: "s",
        doc: "the acceptable standing sojourn time",
        cite: "RFC 8289 section 4.3 (5 ms, Linux's default)",
    },
    field: "target_ns",
    required: false,
};
const INTERVAL: QueueKey = QueueKey {
    param: Param {
        name: "interval",
        kind: ParamKind::Time { lo_ns: 1, hi_ns: MAX_TIME_NS as u64 },
        unit: "s",
        doc: "how long the sojourn time must stay above target before dropping starts, and the control law's base spacing; longer than target",
        cite: "RFC 8289 section 4.4 (100 ms, Linux's default)",
    },
    field: "interval_ns",
    required: false,
};

impl Kind for CoDel {
    type Spec = CoDelSpec;
    const KINDS: &'static [KindDoc] = &[KindDoc {
        name: "codel",
        about: "Controlled Delay: drop at dequeue when the sojourn time stays above target for an interval",
        cite: "RFC 8289; Linux sch_codel.c",
        keys: &[LIMIT, TARGET, INTERVAL],
        minimal: "{ kind = \"codel\" }",
        aliases: &[],
    }];

    fn read(_kind: &str, table: &dyn ParamSource) -> Result<CoDelSpec, ParamError> {
        let limit = LIMIT.limit(table)?;
        let target = TARGET.param.time(table)?.unwrap_or(DEFAULT_TARGET_NS);
        let interval = INTERVAL.param.time(table)?.unwrap_or(DEFAULT_INTERVAL_NS);
        if interval <= target {
            let s = |ns: u64| format!("{} s", ns as f64 / 1e9);
            return Err(table.error(INTERVAL.param.name, format!("must be > target ({}), got {}", s(target), s(interval))));
        }
        Ok(CoDelSpec { limit, target, interval })
    }
    fn kind_of(_spec: &CoDelSpec) -> &'static str {
        "codel"
    }
    fn limit(spec: &CoDelSpec) -> u32 {
        spec.limit
    }
    fn build(spec: &CoDelSpec, _on: &Placement) -> CoDel {
        CoDel::new(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn codel() -> CoDel {
        let mut q = CoDel::new(&CoDelSpec { limit: 1000, target: DEFAULT_TARGET_NS, interval: DEFAULT_INTERVAL_NS });
        // A 1000-byte packet has been enqueued: `maxpacket` is 1000.
        assert_eq!(q.enqueue(&Arrival { now: 0, waiting: 0, idle_since: None, bytes: 1000 }), Verdict::Accept);
        q
    }

    /// The tests' clock starts at 1 s of simulated time, so that a packet leaving early may
    /// have waited long.
    const BASE: Nanos = 1_000_000_000;

    /// A departure at `BASE + now` of a packet that waited `sojourn`, with a long queue behind
    /// it.
    fn leave(q: &mut CoDel, now: Nanos, sojourn: Nanos) -> Verdict {
        let now = BASE + now;
        q.dequeue(&Departure { now, enqueued_at: now - sojourn, bytes: 1000, backlog_bytes: 50_000 })
    }

    /// A persistently overloaded queue from `from` to `until`: every packet leaves with
    /// sojourn time `sojourn`; a sent packet takes `tx` on the link, a dropped one none (the
    /// next leaves at the same instant). The times of the drops.
    fn overloaded(q: &mut CoDel, from: Nanos, until: Nanos, tx: Nanos, sojourn: Nanos) -> Vec<Nanos> {
        let (mut now, mut drops) = (from, vec![]);
        while now < until {
            match leave(q, now, sojourn) {
                Verdict::Accept => now += tx,
                _ => drops.push(now),
            }
        }
        drops
    }

    #[test]
    fn no_packet_is_dropped_while_the_sojourn_time_stays_below_target() {
        let mut q = codel();
        // Ten seconds of departures every 0.1 ms, each having waited just under 5 ms.
        assert!(overloaded(&mut q, 10 * MS, 10_000 * MS, MS / 10, 5 * MS - 1).is_empty());
        assert!(!q.dropping());
    }

    #[test]
    fn no_packet_is_dropped_with_at_most_one_packet_left_behind_however_long_it_waited() {
        let mut q = codel();
        for i in 0..10_000u64 {
            let now = BASE + i * MS;
            let v = q.dequeue(&Departure { now, enqueued_at: now - 50 * MS, bytes: 1000, backlog_bytes: 1000 });
            assert_eq!(v, Verdict::Accept, "at {now}");
        }
    }

    #[test]
    fn the_first_drop_comes_once_the_sojourn_time_has_stayed_above_target_for_an_interval() {
        // Above target from 10 ms on, departures every 1 ms: the clock starts at 10 ms, so the
        // first drop is at 110 ms exactly (`now >= first_above_time`).
        let mut q = codel();
        let drops = overloaded(&mut q, 10 * MS, 200 * MS, MS, 20 * MS);
        assert_eq!(drops.first(), Some(&(110 * MS)));
        // A dip below target at 60 ms restarts the interval: the first drop moves to 161 ms.
        let mut q = codel();
        assert!(overloaded(&mut q, 10 * MS, 60 * MS, MS, 20 * MS).is_empty());
        assert_eq!(leave(&mut q, 60 * MS, 4 * MS), Verdict::Accept);
        let drops = overloaded(&mut q, 61 * MS, 300 * MS, MS, 20 * MS);
        assert_eq!(drops.first(), Some(&(161 * MS)));
    }

    #[test]
    fn drops_in_a_persistent_overload_are_spaced_by_interval_over_the_square_root_of_the_count() {
        // Departures every 10 us with the sojourn time always 50 ms: first drop at 110 ms
        // (entering: count 1, next at +100 ms), then each at the first departure at or after
        // drop_next, where drop_next(k+1) = drop_next(k) + 100 ms / sqrt(k+1).
        let tx = 10_000;
        let mut q = codel();
        let drops = overloaded(&mut q, 10 * MS, 2_000 * MS, tx, 50 * MS);
        let mut want = vec![110 * MS];
        let mut next = 110 * MS + 100 * MS;
        let mut count = 1u32;
        while next < 2_000 * MS {
            want.push(next.div_ceil(tx) * tx); // the first departure at or after drop_next
            count += 1;
            next += (100e6 / (count as f64).sqrt()) as Nanos;
        }
        assert_eq!(drops, want);
        assert!(drops.len() > 20, "{}", drops.len());
        // The gaps shrink as 1/sqrt(count), within one departure: 100, 70.7, 57.7, 50 ms, ...
        for (k, gap) in drops.windows(2).map(|w| w[1] - w[0]).enumerate() {
            let law = 100e6 / ((k + 1) as f64).sqrt();
            assert!((gap as f64 - law).abs() <= tx as f64, "gap {k}: {gap} against {law}");
        }
    }

    #[test]
    fn a_drop_time_already_passed_drops_the_next_packets_at_the_same_instant() {
        // The link stalls for 300 ms in the dropping state: at the next departure drop_next
        // lies far back, and the drop loop drops packet after packet at that instant until the
        // control law passes it.
        let mut q = codel();
        // Drops at 110 and 210 ms; the packet after the second moved drop_next on to
        // 210 + 100/sqrt(2) ms.
        assert_eq!(overloaded(&mut q, 10 * MS, 215 * MS, MS, 50 * MS), vec![110 * MS, 210 * MS]);
        assert_eq!((q.count(), q.drop_next() - BASE), (2, 280_710_678));
        let at = 515 * MS;
        let mut burst = 0;
        while leave(&mut q, at, 50 * MS) != Verdict::Accept {
            burst += 1;
        }
        // drop_next 281, +57.7 (338), +50 (388), +44.7 (433), +40.8 (474), +37.8 (512), all
        // passed; +35.4 (547) is not: six drops, and the seventh packet is sent.
        assert_eq!(burst, 6);
        assert_eq!(q.count(), 8);
        assert!(q.dropping() && q.drop_next() - BASE > at);
    }

    #[test]
    fn a_sojourn_time_below_target_ends_the_dropping_state() {
        let mut q = codel();
        overloaded(&mut q, 10 * MS, 150 * MS, MS, 50 * MS);
        assert!(q.dropping());
        assert_eq!(leave(&mut q, 150 * MS, 2 * MS), Verdict::Accept);
        assert!(!q.dropping());
        // Above target again: no drop before a whole new interval has passed.
        let drops = overloaded(&mut q, 151 * MS, 400 * MS, MS, 50 * MS);
        assert_eq!(drops.first(), Some(&(251 * MS)));
    }

    #[test]
    fn an_empty_queue_ends_the_dropping_state_and_resets_the_clock() {
        let mut q = codel();
        overloaded(&mut q, 10 * MS, 150 * MS, MS, 50 * MS);
        assert!(q.dropping());
        q.idle(150 * MS);
        assert!(!q.dropping());
        let drops = overloaded(&mut q, 151 * MS, 400 * MS, MS, 50 * MS);
        assert_eq!(drops.first(), Some(&(251 * MS)));
    }

    #[test]
    fn reentering_soon_after_leaving_reuses_the_count_of_the_last_dropping_state() {
        // A first dropping state of five drops (110, 210, 281, 338 and 388 ms; departures
        // every 10 us): count 5, of which the entering drop's 1 is `lastcount`.
        let tx = 10_000;
        let mut q = codel();
        let first = overloaded(&mut q, 10 * MS, 400 * MS, tx, 50 * MS);
        assert_eq!(first.len(), 5);
        assert_eq!(q.count(), 5);
        let left_at = 400 * MS;
        assert_eq!(leave(&mut q, left_at, MS), Verdict::Accept);
        // Above target again at once: re-entry 100 ms later, well within 16 intervals of
        // drop_next: count = 5 - 1 = 4 (the drops after the last entry), so the next drop
        // comes 100 / sqrt(4) = 50 ms after the entry, not 100 ms.
        let again = overloaded(&mut q, left_at + tx, left_at + 200 * MS, tx, 50 * MS);
        let entry = again[0];
        assert_eq!(entry, left_at + tx + 100 * MS);
        assert_eq!(again[1] - entry, 50 * MS);
    }

    #[test]
    fn reentering_long_after_the_last_dropping_state_starts_the_count_at_one() {
        let tx = 10_000;
        let mut q = codel();
        overloaded(&mut q, 10 * MS, 400 * MS, tx, 50 * MS);
        assert_eq!(leave(&mut q, 400 * MS, MS), Verdict::Accept);
        // 16 intervals and more after drop_next.
        let late = 400 * MS + 1_700 * MS;
        let again = overloaded(&mut q, late, late + 300 * MS, tx, 50 * MS);
        assert_eq!(again[0], late + 100 * MS);
        assert_eq!(again[1] - again[0], 100 * MS);
    }

    #[test]
    fn the_packet_after_the_entering_drop_is_sent_whatever_its_sojourn_time() {
        let mut q = codel();
        overloaded(&mut q, 10 * MS, 110 * MS, MS, 50 * MS);
        assert_eq!(leave(&mut q, 110 * MS, 50 * MS), Verdict::Early);
        assert_eq!(leave(&mut q, 110 * MS, 50 * MS), Verdict::Accept);
    }

    #[test]
    fn a_full_queue_drops_on_arrival() {
        let mut q = CoDel::new(&CoDelSpec { limit: 3, target: DEFAULT_TARGET_NS, interval: DEFAULT_INTERVAL_NS });
        let arrive = |q: &mut CoDel, waiting| q.enqueue(&Arrival { now: 0, waiting, idle_since: None, bytes: 1500 });
        assert_eq!(arrive(&mut q, 2), Verdict::Accept);
        assert_eq!(arrive(&mut q, 3), Verdict::Forced);
        assert_eq!(q.limit_drops, 1);
    }
}
