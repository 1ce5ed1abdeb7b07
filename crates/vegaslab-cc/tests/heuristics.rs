//! Weigle-Feng alpha/beta heuristics (the grids paper: Weigle and Feng, "A Case for TCP Vegas
//! in High-Performance Computational Grids", sections 4.1-4.3) on the paper's own
//! numbers.

use vegaslab_cc::heuristics::{from_queue_size, from_red, from_red_exact, from_red_per_flow, Thresholds};

fn t(alpha: u64, beta: u64) -> Thresholds {
    Thresholds { alpha, beta }
}

#[test]
fn queue_size_heuristic_on_network_1_buffers() {
    // Section 4.1: alpha = floor(q/3) - 1, beta = floor(q/3).
    // q = 25: floor(8.33) = 8 -> 7, 8. q = 7 (Fig. 3's second bars): 2 -> 1, 2.
    assert_eq!(from_queue_size(25).unwrap(), t(7, 8));
    assert_eq!(from_queue_size(7).unwrap(), t(1, 2));
    // Ends of the sweep 4..50: q = 4 -> 1 -> 0, 1; q = 50 -> 16 -> 15, 16.
    assert_eq!(from_queue_size(4).unwrap(), t(0, 1));
    assert_eq!(from_queue_size(50).unwrap(), t(15, 16));
    // Multiples of 3: q = 30 -> 9, 10.
    assert_eq!(from_queue_size(30).unwrap(), t(9, 10));
    assert_eq!(from_queue_size(3).unwrap(), t(0, 1));
}

#[test]
fn queue_below_three_would_make_alpha_negative() {
    let e = from_queue_size(2).unwrap_err();
    assert_eq!(e.input, "queue");
    assert!(e.message.contains("must be >= 3"), "{e}");
}

#[test]
fn red_heuristic_subtracts_two() {
    // Section 4.2: alpha = RED_min - 2, beta = RED_max - 2; e.g. min 4 / max 8 -> 2, 6;
    // network 1's extremes 3/6 -> 1, 4 and 10/20 -> 8, 18.
    assert_eq!(from_red(4, 8).unwrap(), t(2, 6));
    assert_eq!(from_red(3, 6).unwrap(), t(1, 4));
    assert_eq!(from_red(10, 20).unwrap(), t(8, 18));
    assert_eq!(from_red(1, 6).unwrap_err().input, "red_min");
    assert_eq!(from_red(5, 4).unwrap_err().input, "red_max");
}

#[test]
fn red_exact_heuristic_uses_the_thresholds() {
    assert_eq!(from_red_exact(4, 8).unwrap(), t(4, 8));
    assert_eq!(from_red_exact(8948, 35791).unwrap(), t(8948, 35791));
    assert_eq!(from_red_exact(0, 8).unwrap_err().input, "red_min");
    assert_eq!(from_red_exact(9, 8).unwrap_err().input, "red_max");
}

#[test]
fn red_per_flow_heuristic_is_just_below_the_fair_share_on_networks_2_to_4() {
    // Network 3 and 4: RED_min 8948, N 100: 89.48 -> beta 89 (largest whole number below),
    // alpha 88: the paper's "slightly less than 8948/100 ~ 89".
    assert_eq!(from_red_per_flow(8948, 100).unwrap(), t(88, 89));
    // Network 2: 6711 / 50 = 134.22 ("about 134 packets") -> 133, 134.
    assert_eq!(from_red_per_flow(6711, 50).unwrap(), t(133, 134));
    // Exact division stays strictly below: 9000 / 100 = 90 -> 88, 89.
    assert_eq!(from_red_per_flow(9000, 100).unwrap(), t(88, 89));
    // Smallest valid: RED_min = N + 1 -> (N)/N = 1 -> 0, 1.
    assert_eq!(from_red_per_flow(11, 10).unwrap(), t(0, 1));
}

#[test]
fn red_per_flow_rejects_too_few_packets_per_flow_and_zero_flows() {
    let e = from_red_per_flow(10, 10).unwrap_err();
    assert_eq!(e.input, "red_min");
    assert!(e.message.contains("must be > flows (10)"), "{e}");
    assert_eq!(from_red_per_flow(100, 0).unwrap_err().input, "flows");
}
