//! The kfuncs and helpers the simulator provides, with Linux's semantics, on the simulator's
//! socket block.
//!
//! The kfuncs are Linux's Reno building blocks of `net/ipv4/tcp_cong.c` (exported to BPF
//! struct_ops by `bpf_tcp_ca_kfunc_set`), written here from their documented behaviour:
//! arithmetic is `u32` and wraps as the kernel's does. Where Linux would divide by zero
//! (`tcp_cong_avoid_ai` with `w = 0`, a kernel oops) the call is an error, which ends the run
//! with a fault naming it.

use crate::layout::{Block, IS_CWND_LIMITED, MAX_PACKETS_OUT, PRIOR_CWND, SND_CWND, SND_CWND_CLAMP, SND_CWND_CNT, SND_SSTHRESH};

/// `tcp_in_slow_start`: cwnd below ssthresh.
fn in_slow_start(sk: &Block) -> bool {
    sk.u32(&SND_CWND) < sk.u32(&SND_SSTHRESH)
}

/// `tcp_is_cwnd_limited` (include/net/tcp.h): the sender was cwnd-limited in the current
/// window, or is in slow start with cwnd below twice the most packets it had out.
pub fn is_cwnd_limited(sk: &Block) -> bool {
    sk.bits(&IS_CWND_LIMITED) != 0 || (in_slow_start(sk) && sk.u32(&SND_CWND) < 2u32.wrapping_mul(sk.u32(&MAX_PACKETS_OUT)))
}

/// `tcp_slow_start`: grow cwnd by `acked`, at most up to ssthresh, then clamp; returns the
/// part of `acked` left over for congestion avoidance.
pub fn tcp_slow_start(sk: &mut Block, acked: u32) -> u32 {
    let cwnd = sk.u32(&SND_CWND);
    let grown = cwnd.wrapping_add(acked).min(sk.u32(&SND_SSTHRESH));
    let left = acked.wrapping_sub(grown.wrapping_sub(cwnd));
    sk.set_u32(&SND_CWND, grown.min(sk.u32(&SND_CWND_CLAMP)));
    left
}

/// `tcp_cong_avoid_ai`: one packet more per `w` packets acknowledged (`snd_cwnd_cnt` counts
/// them); a counter already at `w` (w shrank) first gives its packet, and a large `acked` gives
/// several at once; then clamp.
pub fn tcp_cong_avoid_ai(sk: &mut Block, w: u32, acked: u32) -> Result<(), String> {
    if w == 0 {
        return Err("tcp_cong_avoid_ai was called with w = 0 (Linux divides by it)".into());
    }
    let mut cnt = sk.u32(&SND_CWND_CNT);
    let mut cwnd = sk.u32(&SND_CWND);
    if cnt >= w {
        cnt = 0;
        cwnd = cwnd.wrapping_add(1);
    }
    cnt = cnt.wrapping_add(acked);
    if cnt >= w {
        let delta = cnt / w;
        cnt -= delta * w;
        cwnd = cwnd.wrapping_add(delta);
    }
    sk.set_u32(&SND_CWND_CNT, cnt);
    sk.set_u32(&SND_CWND, cwnd.min(sk.u32(&SND_CWND_CLAMP)));
    Ok(())
}

/// `tcp_reno_cong_avoid`: nothing unless cwnd-limited; slow start below ssthresh, and what
/// it leaves of `acked` goes to the linear increase with `w` = cwnd.
pub fn tcp_reno_cong_avoid(sk: &mut Block, acked: u32) -> Result<(), String> {
    if !is_cwnd_limited(sk) {
        return Ok(());
    }
    let mut acked = acked;
    if in_slow_start(sk) {
        acked = tcp_slow_start(sk, acked);
        if acked == 0 {
            return Ok(());
        }
    }
    let cwnd = sk.u32(&SND_CWND);
    tcp_cong_avoid_ai(sk, cwnd, acked)
}

/// `tcp_reno_ssthresh`: half the window, at least 2.
pub fn tcp_reno_ssthresh(sk: &Block) -> u32 {
    (sk.u32(&SND_CWND) >> 1).max(2)
}

/// `tcp_reno_undo_cwnd`: the window before the last reduction, if larger.
pub fn tcp_reno_undo_cwnd(sk: &Block) -> u32 {
    sk.u32(&SND_CWND).max(sk.u32(&PRIOR_CWND))
}

/// `bpf_jiffies64`: the simulated time in jiffies of `hz` per second, `floor(now_ns * hz /
/// 10^9)` computed in whole seconds and the rest, so that nothing overflows 64 bits.
pub fn jiffies64(now_ns: u64, hz: u32) -> u64 {
    const NS_PER_S: u64 = 1_000_000_000;
    let hz = u64::from(hz);
    (now_ns / NS_PER_S) * hz + (now_ns % NS_PER_S) * hz / NS_PER_S
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::SOCK_SIZE;

    fn sock(cwnd: u32, ssthresh: u32, clamp: u32, cnt: u32) -> [u8; SOCK_SIZE] {
        let mut raw = [0u8; SOCK_SIZE];
        let mut b = Block(&mut raw);
        b.set_u32(&SND_CWND, cwnd);
        b.set_u32(&SND_SSTHRESH, ssthresh);
        b.set_u32(&SND_CWND_CLAMP, clamp);
        b.set_u32(&SND_CWND_CNT, cnt);
        raw
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        let mut raw = sock(10, 12, 100, 0);
        let mut b = Block(&mut raw);
        assert_eq!(tcp_slow_start(&mut b, 5), 3); // 10 + 5 capped at 12: 2 used, 3 left
        assert_eq!(b.u32(&SND_CWND), 12);
    }

    #[test]
    fn slow_start_is_clamped_by_snd_cwnd_clamp() {
        let mut raw = sock(10, 0x7fff_ffff, 11, 0);
        let mut b = Block(&mut raw);
        assert_eq!(tcp_slow_start(&mut b, 4), 0);
        assert_eq!(b.u32(&SND_CWND), 11);
    }

    #[test]
    fn the_linear_increase_adds_one_packet_per_w_acked() {
        let mut raw = sock(10, 5, 100, 8);
        let mut b = Block(&mut raw);
        tcp_cong_avoid_ai(&mut b, 10, 1).unwrap(); // cnt 9 < 10: no growth
        assert_eq!((b.u32(&SND_CWND), b.u32(&SND_CWND_CNT)), (10, 9));
        tcp_cong_avoid_ai(&mut b, 10, 1).unwrap(); // cnt 10: +1, cnt 0
        assert_eq!((b.u32(&SND_CWND), b.u32(&SND_CWND_CNT)), (11, 0));
    }

    #[test]
    fn a_counter_already_past_w_gives_its_packet_first_and_bulk_acks_give_several() {
        let mut raw = sock(20, 5, 100, 25);
        let mut b = Block(&mut raw);
        // cnt 25 >= w 10: cwnd 21, cnt 0; then cnt 23 -> delta 2: cwnd 23, cnt 3
        tcp_cong_avoid_ai(&mut b, 10, 23).unwrap();
        assert_eq!((b.u32(&SND_CWND), b.u32(&SND_CWND_CNT)), (23, 3));
    }

    #[test]
    fn a_linear_increase_by_zero_is_an_error_not_a_crash() {
        let mut raw = sock(20, 5, 100, 0);
        assert!(tcp_cong_avoid_ai(&mut Block(&mut raw), 0, 1).is_err());
    }

    #[test]
    fn reno_does_not_grow_a_window_that_is_not_cwnd_limited() {
        let mut raw = sock(10, 5, 100, 9);
        let mut b = Block(&mut raw);
        tcp_reno_cong_avoid(&mut b, 1).unwrap();
        assert_eq!(b.u32(&SND_CWND), 10);
        b.set_bits(&IS_CWND_LIMITED, 1);
        tcp_reno_cong_avoid(&mut b, 1).unwrap(); // cnt 10 >= w 10
        assert_eq!((b.u32(&SND_CWND), b.u32(&SND_CWND_CNT)), (11, 0));
    }

    #[test]
    fn reno_in_slow_start_counts_as_cwnd_limited_below_twice_max_packets_out() {
        let mut raw = sock(10, 100, 1000, 0);
        let mut b = Block(&mut raw);
        b.set_u32(&MAX_PACKETS_OUT, 5); // 10 < 2 * 5 is false: not limited
        tcp_reno_cong_avoid(&mut b, 2).unwrap();
        assert_eq!(b.u32(&SND_CWND), 10);
        b.set_u32(&MAX_PACKETS_OUT, 6); // 10 < 12
        tcp_reno_cong_avoid(&mut b, 2).unwrap();
        assert_eq!(b.u32(&SND_CWND), 12);
    }

    #[test]
    fn reno_carries_what_slow_start_leaves_into_the_linear_increase() {
        let mut raw = sock(9, 10, 1000, 0);
        let mut b = Block(&mut raw);
        b.set_bits(&IS_CWND_LIMITED, 1);
        // slow start: 9 -> 10 uses 1 of 11; the linear increase gets 10 with w = 10: +1
        tcp_reno_cong_avoid(&mut b, 11).unwrap();
        assert_eq!((b.u32(&SND_CWND), b.u32(&SND_CWND_CNT)), (11, 0));
    }

    #[test]
    fn reno_ssthresh_halves_to_at_least_two_and_undo_takes_the_larger_window() {
        let mut raw = sock(9, 0, 0, 0);
        let mut b = Block(&mut raw);
        assert_eq!(tcp_reno_ssthresh(&b), 4);
        b.set_u32(&SND_CWND, 3);
        assert_eq!(tcp_reno_ssthresh(&b), 2);
        b.set_u32(&PRIOR_CWND, 17);
        assert_eq!(tcp_reno_undo_cwnd(&b), 17);
        b.set_u32(&SND_CWND, 20);
        assert_eq!(tcp_reno_undo_cwnd(&b), 20);
    }

    #[test]
    fn jiffies_count_whole_ticks_of_the_configured_hz() {
        assert_eq!(jiffies64(3_999_999, 250), 0);
        assert_eq!(jiffies64(4_000_000, 250), 1);
        assert_eq!(jiffies64(10_000_000_000, 1000), 10_000);
        assert_eq!(jiffies64(u64::MAX, 1000), (u128::from(u64::MAX) * 1000 / 1_000_000_000) as u64);
    }
}
