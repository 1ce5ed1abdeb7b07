//! RED as ns-2's `Queue/RED` (`kind = "red"`) and the grids paper's linear RED (`kind =
//! "red-linear"`): one state machine, the drop function told apart by [`RedVariant`]. Both
//! decide at enqueue only. A RED queue sees the number of packets *waiting* (not counting the
//! one in transmission), exactly what ns-2's queue objects see (the link holds the packet it
//! is transmitting), and whether the link has been idle and since when.
//!
//! Early drops draw from [`crate::rng::stream`]`(seed,`[`STREAM_RED_BASE`]` + c)` for channel
//! `c` (the ids are listed in `rng`), so a run is bit-identical for a seed and adding a queue
//! never shifts other draws.
//!
//! ## RED as ns-2 implements it (`queue/red.cc`), packet mode
//!
//! On each arrival, with `q` the packets waiting:
//! - **Average.** `avg <- (1 - w)^(m+1) avg + w q`, where `m = 0` unless the link is idle (no
//!   packet waiting or in transmission); then `m = floor(ptc x idle time)` packets are assumed
//!   to have "arrived" to the empty queue while it was idle, `ptc = bandwidth / (8 x
//!   mean_pktsize)` (ns-2's packet time constant; `mean_pktsize` defaults to ns-2's 500 bytes).
//!   The link is idle from the end of its last transmission (ns-2: when `deque` finds the queue
//!   empty).
//! - **Weight** `w`: a number in (0, 1] (default 0.002, Floyd and Jacobson's value and ns-2's
//!   before 2.1b9), or `"auto"` = ns-2's `q_weight_ = -1`: `w = 1 - exp(-1 / (10 rtt ptc))` with
//!   `rtt = max(3 (delay + 1/ptc), 0.1 s)` from the link's bandwidth and propagation delay.
//!   (ns-2's `0` and `-2` settings are not offered: give the number.)
//! - **Count.** `count` grows by one per arrival; it restarts at 0 after any drop.
//! - **Decision** (only when `avg >= min` and `q > 1`, else `old <- false`):
//!   `avg >= max` (gentle: `>= 2 max`) -> forced drop; else the first packet after the average
//!   crossed `min` only sets `count = 1, old = true`; else early drop with probability
//!   `p_a` from `p_b = max_p (avg - min) / (max - min)` (gentle, `max <= avg < 2 max`:
//!   `p_b = max_p + (1 - max_p)(avg - max) / max`): with `wait` (ns-2's default `wait_ true`)
//!   `p_a = 0` if `count p_b < 1`, `p_b / (2 - count p_b)` if `< 2`, else 1; without it the
//!   classic Floyd-Jacobson `p_a = p_b / (1 - count p_b)` (1 once `count p_b >= 1`). A uniform
//!   draw `u <= p_a` drops.
//! - **Limit.** `q >= limit` is a forced drop: a RED queue of limit L holds L waiting packets
//!   plus the one in transmission (ns-2's RED compares the queue length before the arrival with
//!   `limit_`; DropTail's limit, by contrast, counts the packet in transmission).
//! - ns-2 options not modelled: byte mode (`bytes_`, `queue_in_bytes_`: ns-2.35's defaults are
//!   true, set them false to compare), ECN marking, adaptive RED, `cautious_`, drop-front and
//!   random-victim drops. With `use_mark_p_ true` (ns-2.35's default) ns-2 counts drops with
//!   `avg >= max` as early rather than forced; they are dropped either way.
//!
//! ## The grids paper's linear RED (`red-linear`)
//!
//! Weigle and Feng (the grids paper, "A Case for TCP Vegas in High-Performance Computational
//! Grids", §2.2) "use a variable, rather than a constant, drop probability
//! P ... P ranges from 0 to 1 as the average queue size ranges from RED_min to RED_max":
//! `P = (avg - min) / (max - min)` between the thresholds, every packet dropped above `max`.
//! The average is RED's weighted average (the paper's "weighted average of the queue length"),
//! computed as above (same weight and idle decay); P is applied as is, with no count-based
//! spacing and no `q > 1` guard (the paper's "effective formula"). Drops above `max` and over
//! the limit are forced, those between the thresholds early.

use super::registry::{Kind, KindDoc, Placement, QueueKey};
use super::{Arrival, QueueDiscipline, Verdict};
use crate::rng::{stream, STREAM_RED_BASE};
use vegaslab_cc::params::{Param, ParamError, ParamKind, ParamSource};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use vegaslab_cc::Nanos;

/// Which RED drop function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RedVariant {
    /// Floyd-Jacobson RED as ns-2's `Queue/RED` (`kind = "red"`).
    Classic,
    /// The grids paper's linear P = (avg - min)/(max - min) (`kind = "red-linear"`).
    Linear,
}

/// The EWMA weight of the average queue length.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RedWeight {
    Fixed(f64),
    /// ns-2's `q_weight_ = -1`: from the link's bandwidth and delay.
    Auto,
}

/// A validated RED configuration (`queue = { kind = "red", ... }`), in packets.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct RedSpec {
    pub variant: RedVariant,
    /// Hard limit on waiting packets (ns-2 `limit_`).
    pub limit: u32,
    /// Thresholds on the average, packets (ns-2 `thresh_`, `maxthresh_`).
    pub min_th: f64,
    pub max_th: f64,
    /// Drop probability at `max_th` (ns-2 `1 / linterm_`); unused by the linear variant.
    pub max_p: f64,
    pub weight: RedWeight,
    pub gentle: bool,
    /// ns-2 `wait_`: space early drops uniformly with a wait after each.
    pub wait: bool,
    /// Bytes per packet for the idle-time decay (ns-2 `mean_pktsize_`).
    pub mean_pktsize: u32,
}

impl RedSpec {
    /// The grids paper's defaults around given thresholds (weight 0.002, ns-2 packet time).
    pub fn new(variant: RedVariant, limit: u32, min_th: f64, max_th: f64) -> Self {
        RedSpec { variant, limit, min_th, max_th, max_p: 0.1, weight: RedWeight::Fixed(0.002), gentle: false, wait: true, mean_pktsize: 500 }
    }

    /// Check the parameters; `Err((field, message))`. (Negated comparisons reject NaN too.)
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.min_th >= 0.0) || !self.min_th.is_finite() {
            return Err(("min", format!("must be >= 0 packets, got {}", self.min_th)));
        }
        if !(self.max_th > self.min_th) || !self.max_th.is_finite() {
            return Err(("max", format!("must be > min ({}), got {}", self.min_th, self.max_th)));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(("max_p", format!("must be in (0, 1], got {}", self.max_p)));
        }
        if let RedWeight::Fixed(w) = self.weight {
            if !(w > 0.0 && w <= 1.0) {
                return Err(("weight", format!("must be in (0, 1] or \"auto\", got {w}")));
            }
        }
        if !((self.limit as f64) > self.max_th) {
            return Err(("limit", format!("must be > max ({}), got {}", self.max_th, self.limit)));
        }
        if self.mean_pktsize == 0 {
            return Err(("mean_pktsize", "must be >= 1 byte".to_string()));
        }
        Ok(())
    }

    /// The weight in force on a link of this bandwidth and propagation delay.
    pub fn effective_weight(&self, bandwidth_bps: f64, delay_s: f64) -> f64 {
        match self.weight {
            RedWeight::Fixed(w) => w,
            RedWeight::Auto => {
                let ptc = bandwidth_bps / (8.0 * self.mean_pktsize as f64);
                let rtt = (3.0 * (delay_s + 1.0 / ptc)).max(0.1);
                1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
            }
        }
    }
}

/// `x^n` by repeated squaring: plain IEEE multiplications, so identical on every machine.
pub fn powu(mut x: f64, mut n: u64) -> f64 {
    let mut acc = 1.0;
    while n > 0 {
        if n & 1 == 1 {
            acc *= x;
        }
        x *= x;
        n >>= 1;
    }
    acc
}

/// RED state of one link direction.
#[derive(Clone, Debug)]
pub struct Red {
    pub spec: RedSpec,
    /// EWMA weight in force.
    pub q_w: f64,
    /// Packets per second for the idle decay (ns-2 `ptc`).
    pub ptc: f64,
    /// Average queue length (packets).
    pub avg: f64,
    count: i64,
    old: bool,
    rng: ChaCha8Rng,
    pub early_drops: u64,
    pub forced_drops: u64,
    /// A monitored queue's `avg` at each sample time so far (the channel takes them with its
    /// length samples): the average as the last arrival at or before the sample time left it,
    /// which is what the next drop decision starts from (ns-2 updates `ave_` only at arrivals,
    /// so an idle period's decay shows at the next arrival, as in a trace of ns-2's `ave_`).
    pub avg_samples: Vec<f64>,
}

impl Red {
    pub fn new(spec: &RedSpec, bandwidth_bps: f64, delay: Nanos, seed: u64, channel: usize) -> Self {
        Red {
            q_w: spec.effective_weight(bandwidth_bps, delay as f64 * 1e-9),
            ptc: bandwidth_bps / (8.0 * spec.mean_pktsize as f64),
            spec: spec.clone(),
            avg: 0.0,
            count: 0,
            old: false,
            rng: stream(seed, STREAM_RED_BASE + channel as u64),
            early_drops: 0,
            forced_drops: 0,
            avg_samples: Vec::new(),
        }
    }

    /// Update the average for an arrival seeing `qlen` packets waiting; `idle_since` is when
    /// the link went idle if it is idle now.
    pub fn update_average(&mut self, now: Nanos, qlen: usize, idle_since: Option<Nanos>) -> f64 {
        let m = match idle_since {
            Some(t0) if now > t0 => (self.ptc * ((now - t0) as f64 * 1e-9)) as u64,
            _ => 0,
        };
        // `m` saturates for an absurd idle time; so must `m + 1` (a wrap to 0 would mean "no decay").
        self.avg = self.avg * powu(1.0 - self.q_w, m.saturating_add(1)) + self.q_w * qlen as f64;
        self.avg
    }

    /// ns-2's `calculate_p_new`: the drop probability before count spacing.
    pub fn p_b(&self, avg: f64) -> f64 {
        let s = &self.spec;
        let p = if s.gentle && avg >= s.max_th {
            let c = (1.0 - s.max_p) / s.max_th;
            c * avg + 2.0 * s.max_p - 1.0
        } else if avg >= s.max_th {
            1.0
        } else {
            s.max_p * (avg - s.min_th) / (s.max_th - s.min_th)
        };
        p.min(1.0)
    }

    /// ns-2's `modify_p`: spacing by the packets since the last drop.
    pub fn p_a(&self, p_b: f64, count: i64) -> f64 {
        let cp = count as f64 * p_b;
        let p = if self.spec.wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p_b / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            p_b / (1.0 - cp)
        } else {
            1.0
        };
        p.min(1.0)
    }

    /// A packet arrives seeing `qlen` waiting.
    pub fn arrive(&mut self, now: Nanos, qlen: usize, idle_since: Option<Nanos>) -> Verdict {
        let avg = self.update_average(now, qlen, idle_since);
        let mut verdict = match self.spec.variant {
            RedVariant::Classic => self.classic(avg, qlen),
            RedVariant::Linear => self.linear(avg),
        };
        if qlen as u64 >= self.spec.limit as u64 {
            verdict = Verdict::Forced;
        }
        match verdict {
            Verdict::Accept => {}
            Verdict::Early => self.early_drops += 1,
            Verdict::Forced => {
                self.forced_drops += 1;
                self.count = 0;
            }
        }
        verdict
    }

    fn classic(&mut self, avg: f64, qlen: usize) -> Verdict {
        let s = &self.spec;
        self.count += 1;
        if avg >= s.min_th && qlen > 1 {
            let top = if s.gentle { 2.0 * s.max_th } else { s.max_th };
            if avg >= top {
                Verdict::Forced
            } else if !self.old {
                // The average just crossed min_th: start counting from here.
                self.count = 1;
                self.old = true;
                Verdict::Accept
            } else {
                let p = self.p_a(self.p_b(avg), self.count);
                let u: f64 = self.rng.gen();
                if u <= p {
                    self.count = 0;
                    Verdict::Early
                } else {
                    Verdict::Accept
                }
            }
        } else {
            self.old = false;
            Verdict::Accept
        }
    }

    fn linear(&mut self, avg: f64) -> Verdict {
        let s = &self.spec;
        if avg < s.min_th {
            Verdict::Accept
        } else if avg >= s.max_th {
            Verdict::Forced
        } else {
            let p = (avg - s.min_th) / (s.max_th - s.min_th);
            let u: f64 = self.rng.gen();
            if u < p {
                Verdict::Early
            } else {
                Verdict::Accept
            }
        }
    }
}

impl QueueDiscipline for Red {
    /// ns-2's `REDQueue::enque`: the idle time is since the link's last transmission ended.
    fn enqueue(&mut self, a: &Arrival) -> Verdict {
        self.arrive(a.now, a.waiting as usize, a.idle_since)
    }
}

/// Any finite number: the thresholds, `max_p` and the weight are checked together by
/// [`RedSpec::validate`], whose messages name the rule (`max > min >= 0`).
const ANY_NUMBER: ParamKind = ParamKind::Number { lo: f64::MIN, hi: f64::MAX };

const LIMIT: QueueKey = QueueKey {
    param: Param {
        name: "limit",
        kind: ParamKind::Integer { lo: 1, hi: 100_000_000 },
        unit: "packets",
        doc: "the packets that may wait, not counting the one being transmitted; more than max",
        cite: "ns-2 queue/red.cc, limit_ compared with the queue before the arrival",
    },
    field: "limit",
    required: false,
};
const MIN: QueueKey = QueueKey {
    param: Param {
        name: "min",
        kind: ANY_NUMBER,
        unit: "packets",
        doc: "the lower threshold on the average queue",
        cite: "Floyd and Jacobson 1993, min_th; ns-2 thresh_",
    },
    field: "min_th",
    required: true,
};
const MAX: QueueKey = QueueKey {
    param: Param {
        name: "max",
        kind: ANY_NUMBER,
        unit: "packets",
        doc: "the upper threshold on the average queue",
        cite: "Floyd and Jacobson 1993, max_th; ns-2 maxthresh_",
    },
    field: "max_th",
    required: true,
};
const MAX_P: QueueKey = QueueKey {
    param: Param {
        name: "max_p",
        kind: ANY_NUMBER,
        unit: "probability",
        doc: "the drop probability as the average reaches max, in (0, 1]",
        cite: "Floyd and Jacobson 1993, max_p; ns-2 1 / linterm_",
    },
    field: "max_p",
    required: false,
};
const WEIGHT: QueueKey = QueueKey {
    param: Param {
        name: "weight",
        kind: ANY_NUMBER,
        unit: "",
        doc: "the weight of the average queue's EWMA, in (0, 1], or \"auto\" for ns-2's rule from the link's bandwidth and delay",
        cite: "Floyd and Jacobson 1993, w_q; ns-2 q_weight_ (-1: auto)",
    },
    field: "weight",
    required: false,
};
const GENTLE: QueueKey = QueueKey {
    param: Param {
        name: "gentle",
        kind: ParamKind::Boolean,
        unit: "",
        doc: "raise the drop probability from max_p to 1 between max and 2 max instead of dropping every packet above max",
        cite: "ns-2 gentle_ (Floyd 2000, gentle RED)",
    },
    field: "gentle",
    required: false,
};
const WAIT: QueueKey = QueueKey {
    param: Param {
        name: "wait",
        kind: ParamKind::Boolean,
        unit: "",
        doc: "space early drops uniformly, waiting after each",
        cite: "ns-2 wait_",
    },
    field: "wait",
    required: false,
};
const MEAN_PKTSIZE: QueueKey = QueueKey {
    param: Param {
        name: "mean_pktsize",
        kind: ParamKind::Integer { lo: 1, hi: 1_000_000_000 },
        unit: "bytes",
        doc: "bytes per packet in the idle-time decay of the average (and the auto weight)",
        cite: "ns-2 mean_pktsize_",
    },
    field: "mean_pktsize",
    required: false,
};

/// Names of the RED keys in ns-2's `Queue/RED` and in Floyd and Jacobson's paper, for
/// suggestions only.
const ALIASES: &[(&str, &str, &str)] = &[
    ("thresh", "min", "ns-2's thresh_ is min here"),
    ("min_th", "min", "RED's min_th is min here"),
    ("minth", "min", "RED's min_th is min here"),
    ("min_thresh", "min", "RED's min_th is min here"),
    ("maxthresh", "max", "ns-2's maxthresh_ is max here"),
    ("max_th", "max", "RED's max_th is max here"),
    ("maxth", "max", "RED's max_th is max here"),
    ("max_thresh", "max", "RED's max_th is max here"),
    ("q_weight", "weight", "ns-2's q_weight_ is weight here"),
    ("w_q", "weight", "RED's w_q is weight here"),
    ("wq", "weight", "RED's w_q is weight here"),
    ("linterm", "max_p", "ns-2's linterm_ is 1 / max_p"),
    ("max_prob", "max_p", "the drop probability at max"),
    ("queue_limit", "limit", "the queue's limit in packets"),
];

impl Kind for Red {
    type Spec = RedSpec;
    const KINDS: &'static [KindDoc] = &[
        KindDoc {
            name: "red",
            about: "Random Early Detection in packet mode, as ns-2's Queue/RED",
            cite: "Floyd and Jacobson 1993; ns-2 queue/red.cc",
            keys: &[LIMIT, MIN, MAX, MAX_P, WEIGHT, GENTLE, WAIT, MEAN_PKTSIZE],
            minimal: "{ kind = \"red\", min = 5, max = 15 }",
            aliases: ALIASES,
        },
        KindDoc {
            name: "red-linear",
            about: "the grids paper's RED: drop probability (avg - min) / (max - min) between the thresholds",
            cite: "the grids paper, section 2.2",
            keys: &[LIMIT, MIN, MAX, WEIGHT, MEAN_PKTSIZE],
            minimal: "{ kind = \"red-linear\", min = 5, max = 15 }",
            aliases: ALIASES,
        },
    ];

    fn read(kind: &str, table: &dyn ParamSource) -> Result<RedSpec, ParamError> {
        let variant = if kind == "red-linear" { RedVariant::Linear } else { RedVariant::Classic };
        let min = MIN.required_number(table)?;
        let max = MAX.required_number(table)?;
        let limit = LIMIT.limit(table)?;
        let mut spec = RedSpec::new(variant, limit, min, max);
        if variant == RedVariant::Linear {
            spec.max_p = 1.0;
        } else if let Some(p) = MAX_P.param.number(table)? {
            spec.max_p = p;
        }
        // A string is "auto" or an error; anything else is read (and refused) as a number.
        spec.weight = match table.string(WEIGHT.param.name) {
            Ok(Some(s)) if s == "auto" => RedWeight::Auto,
            Ok(Some(s)) => return Err(table.error(WEIGHT.param.name, format!("must be a number in (0, 1] or \"auto\", got \"{s}\""))),
            Ok(None) => spec.weight,
            Err(_) => WEIGHT.param.number(table)?.map_or(spec.weight, RedWeight::Fixed),
        };
        spec.gentle = GENTLE.param.boolean(table)?.unwrap_or(false);
        spec.wait = WAIT.param.boolean(table)?.unwrap_or(true);
        if let Some(s) = MEAN_PKTSIZE.param.integer(table)? {
            spec.mean_pktsize = s as u32;
        }
        spec.validate().map_err(|(field, message)| table.error(field, message))?;
        Ok(spec)
    }
    fn kind_of(spec: &RedSpec) -> &'static str {
        match spec.variant {
            RedVariant::Classic => "red",
            RedVariant::Linear => "red-linear",
        }
    }
    fn limit(spec: &RedSpec) -> u32 {
        spec.limit
    }
    fn build(spec: &RedSpec, on: &Placement) -> Red {
        Red::new(spec, on.bandwidth_bps, on.delay, on.seed, on.channel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(min: f64, max: f64, w: f64) -> Red {
        let mut s = RedSpec::new(RedVariant::Classic, 100, min, max);
        s.weight = RedWeight::Fixed(w);
        Red::new(&s, 1e6, 10_000_000, 1, 0)
    }

    #[test]
    fn average_is_an_ewma_of_the_queue_seen_by_arrivals() {
        let mut r = red(5.0, 15.0, 0.5);
        // Busy link (no idle decay): avg = 0.5*0 + 0.5*4 = 2; then 0.5*2 + 0.5*8 = 5.
        assert_eq!(r.update_average(0, 4, None), 2.0);
        assert_eq!(r.update_average(1, 8, None), 5.0);
    }

    #[test]
    fn idle_time_decays_the_average_by_the_packets_that_could_have_been_sent() {
        let mut r = red(5.0, 15.0, 0.5);
        r.avg = 8.0;
        // 1 Mbps, 500-byte mean packets: ptc = 250 pkt/s. Idle 10 ms -> m = 2.5 -> 2, so
        // avg = 8 * 0.5^3 + 0.5 * 0 = 1.
        assert_eq!(r.update_average(20_000_000, 0, Some(10_000_000)), 1.0);
    }

    #[test]
    fn auto_weight_follows_ns2_rule() {
        let mut s = RedSpec::new(RedVariant::Classic, 100, 5.0, 15.0);
        s.weight = RedWeight::Auto;
        // 1.5 Mbps, 500-byte packets: ptc = 375/s; delay 4 ms: rtt = 3*(0.004+1/375) = 0.02 ->
        // 0.1 s; w = 1 - exp(-1/(10*0.1*375)).
        let w = s.effective_weight(1.5e6, 0.004);
        assert!((w - (1.0 - (-1.0f64 / 375.0).exp())).abs() < 1e-15, "{w}");
    }

    #[test]
    fn drop_probability_is_linear_between_thresholds_and_spaced_by_count() {
        let mut r = red(5.0, 15.0, 0.002);
        r.spec.max_p = 0.1;
        // avg 10: p_b = 0.1 * 5/10 = 0.05.
        assert!((r.p_b(10.0) - 0.05).abs() < 1e-15);
        assert_eq!(r.p_b(15.0), 1.0);
        // wait (ns-2 default): count 10 -> cp = 0.5 < 1 -> 0; count 30 -> cp 1.5 -> 0.05/0.5.
        assert_eq!(r.p_a(0.05, 10), 0.0);
        assert!((r.p_a(0.05, 30) - 0.1).abs() < 1e-15);
        assert_eq!(r.p_a(0.05, 40), 1.0);
        // classic Floyd-Jacobson: count 10 -> 0.05 / (1 - 0.5) = 0.1.
        r.spec.wait = false;
        assert!((r.p_a(0.05, 10) - 0.1).abs() < 1e-15);
        assert_eq!(r.p_a(0.05, 20), 1.0);
    }

    #[test]
    fn gentle_ramps_from_max_p_to_one_between_max_and_twice_max() {
        let mut r = red(5.0, 15.0, 0.002);
        r.spec.gentle = true;
        r.spec.max_p = 0.1;
        assert!((r.p_b(15.0) - 0.1).abs() < 1e-12);
        assert!((r.p_b(22.5) - 0.55).abs() < 1e-12);
        assert!((r.p_b(30.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn powu_matches_repeated_multiplication() {
        let x = 0.998f64;
        let mut y = 1.0;
        for _ in 0..37 {
            y *= x;
        }
        assert!((powu(x, 37) - y).abs() < 1e-15);
        assert_eq!(powu(x, 0), 1.0);
    }
}
