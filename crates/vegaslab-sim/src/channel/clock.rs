//! Conversions between the channel's integer nanoseconds and ns-2's double-precision clock,
//! on every packet-hop's path (`Channel::accept`).

use vegaslab_cc::Nanos;

/// The nanosecond nearest a time on ns-2's double clock (halves up, as `tx_times` rounds;
/// saturating: `Nanos::MAX` for an infinite or absurd time). Adding a half and truncating, not
/// `f64::round`, which is a libm call on baseline x86-64 (9% of the benchmark's time).
///
/// Every time below 2^63 ns (292 years) converts with one signed truncation; `as u64`'s
/// saturating conversion is a 16-instruction sequence on x86-64, on every packet-hop. Both
/// give the same value for every input (a test checks the edges); the rest (negative, NaN,
/// beyond) still saturates through `as`.
///
/// On x86-64 the range test is the conversion's own: `cvttsd2si` gives `i64::MIN` for a
/// NaN or a value beyond an `i64`, and a value in (-1, 0) truncates to 0 as `as` saturates
/// it, so a non-negative result is the answer and anything else goes the slow way: two
/// comparisons fewer per call, two calls per packet-hop.
#[inline]
pub(super) fn ns_of(clock: f64) -> Nanos {
    let ns = clock * 1e9 + 0.5;
    match truncated(ns) {
        Some(t) => t,
        None => saturating_ns(ns),
    }
}

/// `ns as Nanos` where no saturation is involved: the truncation of an `ns` in (-1, 2^63)
/// (in [0, 2^63) off x86-64); `None` for the rest, which `saturating_ns` converts.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn truncated(ns: f64) -> Option<Nanos> {
    use std::arch::x86_64::{_mm_cvttsd_si64, _mm_set_sd};
    // SAFETY: SSE2, all these need, is part of every x86-64 processor (the target's baseline).
    let t = unsafe { _mm_cvttsd_si64(_mm_set_sd(ns)) };
    (t >= 0).then_some(t as Nanos)
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn truncated(ns: f64) -> Option<Nanos> {
    // SAFETY: `ns` is finite and within [0, 2^63), so its truncation fits an i64.
    (0.0..I64_LIMIT).contains(&ns).then(|| unsafe { ns.to_int_unchecked::<i64>() as Nanos })
}

/// `ns_of` beyond an `i64`: out of line, so that the common case stays one branch and one
/// conversion (inlined, the compiler computed both and picked one, which cost more).
#[cold]
#[inline(never)]
fn saturating_ns(ns: f64) -> Nanos {
    ns as Nanos
}

/// When a transmission starts on ns-2's double clock: `arrival.max(busy)`, the later of the
/// packet's arrival and the end of the transmission before it, for clocks that are never NaN
/// (sums of finite non-negative doubles). `f64::max` also picks the other operand of a NaN,
/// which costs x86-64 five more instructions (a NaN mask and a blend) at every packet-hop.
/// The same value for every non-NaN pair, signed zeros included (ties give `arrival`, as
/// the code compiled for `max` does; ns-2's clock never is -0).
#[inline(always)]
pub(super) fn start_clock_of(arrival: f64, busy: f64) -> f64 {
    debug_assert!(!arrival.is_nan() && !busy.is_nan());
    if busy > arrival {
        busy
    } else {
        arrival
    }
}

/// 2^63 as a double: the first value an `i64` cannot hold.
#[cfg(any(test, not(target_arch = "x86_64")))]
pub(super) const I64_LIMIT: f64 = 9_223_372_036_854_775_808.0;
