//! Traffic sources end to end: UDP sources and sinks (`[[udp]]`) and the TCP applications
//! with their own clocks (onoff, nps, pareto-paced), through whole runs.

use serde_json::Value;
use vegaslab_sim::run_text;

fn run(text: &str) -> Value {
    run_seed(text, None)
}

fn run_seed(text: &str, seed: Option<u64>) -> Value {
    let r = run_text(text, "t.toml", seed, &[], |_, _| true).unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(&r.to_json()).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// RoVegas's single bottleneck (the RoVegas paper: Chan et al., "Design and performance
/// evaluation of an improved TCP congestion avoidance scheme", Fig. 2): access 2 Mbit/s
/// 10 ms, routers 1 Mbit/s 20 ms, 50-packet FIFOs, 1000-byte packets.
const SINGLE_BOTTLENECK: &str = r#"
[run]
duration = "100s"
[[links]]
endpoints = ["S1", "R1"]
bandwidth = "2Mbps"
delay = "10ms"
[[links]]
endpoints = ["S3", "R1"]
bandwidth = "2Mbps"
delay = "10ms"
[[links]]
endpoints = ["R1", "R2"]
bandwidth = "1Mbps"
delay = "20ms"
[[links]]
endpoints = ["R2", "D1"]
bandwidth = "2Mbps"
delay = "10ms"
[[links]]
endpoints = ["R2", "D3"]
bandwidth = "2Mbps"
delay = "10ms"
[monitor]
cwnd = true
throughput = true
"#;

const VEGAS: &str = "\n[[flows]]\nname = \"vegas\"\nfrom = \"S1\"\nto = \"D1\"\ncc = \"vegas\"\ntcp = { window = 100 }\n";

fn vbr(load: f64) -> String {
    format!(
        "\n[[udp]]\nname = \"vbr\"\nfrom = \"D3\"\nto = \"S3\"\nstart = \"50s\"\npacket_size = 1000\nmodel = \"exp-onoff\"\nrate = \"2Mbps\"\nmean_on = \"10ms\"\nload = {load}\n"
    )
}

/// Mean of a flow's sampled throughput over samples with time in (from, to].
fn mean_throughput(r: &Value, flow: &str, from: f64, to: f64) -> f64 {
    let s = &r["series"]["flows"];
    let vals: Vec<f64> = (0..s["time_s"].as_array().unwrap().len())
        .filter(|&i| s["flow"][i] == flow && f(&s["time_s"][i]) > from && f(&s["time_s"][i]) <= to)
        .map(|i| f(&s["throughput_bps"][i]))
        .collect();
    vals.iter().sum::<f64>() / vals.len() as f64
}

#[test]
fn udp_packets_are_conserved_and_counted_at_the_sink() {
    let text = format!("{SINGLE_BOTTLENECK}{VEGAS}{}", vbr(0.9));
    let r = run(&text);
    let s = &r["udp"][0];
    assert_eq!(s["source"], "vbr");
    assert_eq!(s["model"], "exp-onoff");
    assert_eq!((s["from"].as_str(), s["to"].as_str()), (Some("D3"), Some("S3")));
    assert_eq!(u(&s["sent_pkts"]), u(&s["received_pkts"]) + u(&s["dropped_pkts"]) + u(&s["in_flight_pkts"]));
    assert_eq!(u(&s["sent_bytes"]), 1000 * u(&s["sent_pkts"]));
    assert!(u(&s["received_pkts"]) > 5000);
    // The TCP flow's own conservation is untouched by the UDP packets sharing its links.
    let fl = &r["flows"][0];
    assert_eq!(u(&fl["sent_pkts"]), u(&fl["received_pkts"]) + u(&fl["dropped_pkts"]) + u(&fl["in_flight_pkts"]));
}

#[test]
fn a_load_of_point_nine_offers_about_900_kbps() {
    let text = format!("{SINGLE_BOTTLENECK}{VEGAS}{}", vbr(0.9)).replace("duration = \"100s\"", "duration = \"400s\"");
    let r = run(&text);
    let s = &r["udp"][0];
    assert_eq!(f(&s["nominal_rate_bps"]), 900e3);
    let offered = f(&s["offered_bps"]);
    assert!((offered / 900e3 - 1.0).abs() < 0.03, "offered {offered}");
}

#[test]
fn backward_vbr_traffic_cuts_vegas_throughput_as_in_rovegas_fig4() {
    // The RoVegas paper, Fig. 4: Vegas holds ~1000 kbit/s until the VBR source starts at 50 s, then
    // falls (the paper: 348 kbit/s) because queueing on the ACK path looks like congestion.
    let r = run(&format!("{SINGLE_BOTTLENECK}{VEGAS}{}", vbr(0.9)));
    let before = mean_throughput(&r, "vegas", 10.0, 50.0);
    let after = mean_throughput(&r, "vegas", 55.0, 100.0);
    assert!(before > 950e3, "before {before}");
    assert!(after < 0.7 * before, "after {after} vs before {before}");
    // Load 0 is a silent source: nothing changes at 50 s.
    let quiet = run(&format!("{SINGLE_BOTTLENECK}{VEGAS}{}", vbr(0.0)));
    assert_eq!(u(&quiet["udp"][0]["sent_pkts"]), 0);
    assert!(mean_throughput(&quiet, "vegas", 55.0, 100.0) > 950e3);
}

#[test]
fn an_overloading_cbr_source_is_cut_to_the_bottleneck_rate() {
    let text = format!(
        "{SINGLE_BOTTLENECK}{VEGAS}\n[[udp]]\nname = \"cbr\"\nfrom = \"S3\"\nto = \"D3\"\npacket_size = 500\nmodel = \"cbr\"\nrate = \"1.5Mbps\"\nstop = \"80s\"\n"
    );
    let r = run(&text);
    let s = &r["udp"][0];
    // 1.5 Mbit/s of 500-byte packets for 80 s: 375 packets/s, the first at 0 s.
    assert_eq!(u(&s["sent_pkts"]), 30_000);
    assert_eq!(f(&s["end_s"]), 80.0);
    assert!(u(&s["dropped_pkts"]) > 5000);
    // Received over the whole run (the queue drains after 80 s), per second of sending.
    let got = f(&s["active_throughput_bps"]);
    assert!(got < 1.05e6 && got > 0.6e6, "{got}");
}

#[test]
fn udp_draws_depend_on_the_seed_only() {
    let text = format!("{SINGLE_BOTTLENECK}{VEGAS}{}", vbr(0.5));
    let a = run_seed(&text, Some(3));
    let b = run_seed(&text, Some(3));
    let c = run_seed(&text, Some(4));
    assert_eq!(a["udp"], b["udp"]);
    assert_ne!(a["udp"][0]["sent_pkts"], c["udp"][0]["sent_pkts"]);
}

const DUMBBELL: &str = r#"
[run]
duration = "200s"
sample_interval = "1s"
[dumbbell]
pairs = 3
access = { bandwidth = "10Mbps", delay = "1ms" }
bottleneck = { bandwidth = "2Mbps", delay = "20ms", queue = { limit = 60 } }
[monitor]
cwnd = true
throughput = true
"#;

/// Rows of one flow's sampled series: (time, active, cwnd, throughput).
fn rows(r: &Value, flow: &str) -> Vec<(f64, u64, f64, f64)> {
    let s = &r["series"]["flows"];
    (0..s["time_s"].as_array().unwrap().len())
        .filter(|&i| s["flow"][i] == flow)
        .map(|i| (f(&s["time_s"][i]), u(&s["active"][i]), f(&s["cwnd_pkts"][i]), f(&s["throughput_bps"][i])))
        .collect()
}

fn onoff_user(cc: &str) -> Value {
    run(&format!(
        "{DUMBBELL}\n[[flows]]\nname = \"user\"\npairs = \"1-1\"\ncc = \"{cc}\"\ntcp = {{ window = 200 }}\napp = {{ kind = \"onoff\", mean_on = \"10s\", mean_off = \"10s\", shape = 1.5 }}\n"
    ))
}

#[test]
fn an_onoff_user_sends_while_on_and_restarts_after_an_idle_rto_as_ns2_does() {
    let r = onoff_user("vegas");
    let rows = rows(&r, "user1");
    let on = rows.iter().filter(|x| x.1 == 1).count();
    let off = rows.iter().filter(|x| x.1 == 0).count();
    assert!(on > 10 && off > 10, "on {on} off {off}");
    assert_eq!(rows[0].1, 1, "the user starts ON");
    // Two samples (>= 1 s, many RTTs and an RTO) into an OFF period nothing more arrives,
    // and ns-2's slow_start_restart_ has fired: the idle Vegas agent is back at cwnd 2.
    let mut checked = 0;
    for w in rows.windows(3) {
        if w[0].1 == 1 && w[1].1 == 0 && w[2].1 == 0 {
            assert_eq!(w[2].3, 0.0, "data during OFF at {}", w[2].0);
            assert_eq!(w[2].2, 2.0, "idle window at {}", w[2].0);
            checked += 1;
        }
    }
    assert!(checked > 0);
    // No loss here: the idle firings are not counted as timeouts.
    assert_eq!(u(&r["flows"][0]["timeouts"]), 0);
    assert_eq!(u(&r["flows"][0]["dropped_pkts"]), 0);
    // The ON periods carry the data; the run's flow summary has no completion time.
    assert!(f(&r["flows"][0]["goodput_bps"]) > 0.3e6);
    assert!(r["flows"][0]["completion_time_s"].is_null());
    assert_eq!(f(&r["flows"][0]["end_s"]), 200.0);
}

#[test]
fn an_idle_reno_user_restarts_from_one_packet_keeping_its_ssthresh() {
    let r = onoff_user("reno");
    let s = &r["series"]["flows"];
    let n = s["time_s"].as_array().unwrap().len();
    let mut checked = 0;
    for i in 2..n {
        if s["active"][i - 2] == 1 && s["active"][i - 1] == 0 && s["active"][i] == 0 {
            assert_eq!(f(&s["cwnd_pkts"][i]), 1.0);
            // restart_bugfix_: an idle restart does not cut ssthresh.
            assert_eq!(f(&s["ssthresh_pkts"][i]), f(&s["ssthresh_pkts"][i - 2]));
            checked += 1;
        }
    }
    assert!(checked > 0);
}

/// The same user with ns-2's `slow_start_restart_ false`.
fn onoff_user_keeping_its_window(cc: &str) -> Value {
    run(&format!(
        "{DUMBBELL}\n[[flows]]\nname = \"user\"\npairs = \"1-1\"\ncc = \"{cc}\"\ntcp = {{ window = 200, slow_start_restart = false }}\napp = {{ kind = \"onoff\", mean_on = \"10s\", mean_off = \"10s\", shape = 1.5 }}\n"
    ))
}

#[test]
fn without_slow_start_restart_an_idle_user_keeps_its_window_through_the_off_period() {
    for cc in ["vegas", "reno"] {
        let (restarting, keeping) = (onoff_user(cc), onoff_user_keeping_its_window(cc));
        let (a, b) = (rows(&restarting, "user1"), rows(&keeping, "user1"));
        // Up to the first OFF sample the two runs are the same run (same seed, same ON/OFF
        // draws): nothing differs until an idle timer fires.
        let first_off = a.iter().position(|x| x.1 == 0).unwrap();
        assert!(first_off > 1);
        assert_eq!(a[..first_off], b[..first_off], "{cc}");
        // Two samples into each OFF period (past the last ACK and one RTO) the restarting user
        // is back at its idle window; the other holds the window its last ACKs left, unmoved
        // a second later.
        let mut checked = 0;
        for (wa, wb) in a.windows(4).zip(b.windows(4)) {
            if wb[0].1 == 1 && wb[1..].iter().all(|x| x.1 == 0) {
                assert_eq!(wb[3].2, wb[2].2, "{cc}: the window moved while idle at {}", wb[3].0);
                assert!(wb[2].2 > 2.0, "{cc}: window {} at {}", wb[2].2, wb[2].0);
                checked += 1;
            }
            if wa[0].1 == 1 && wa[1].1 == 0 && wa[2].1 == 0 {
                assert!(wa[2].2 <= 2.0, "{cc}: restarting window {} at {}", wa[2].2, wa[2].0);
            }
        }
        assert!(checked > 0, "{cc}");
    }
}

#[test]
fn slow_start_restart_is_ns2s_setting_and_linuxs_stack_refuses_it() {
    let text = format!(
        "{DUMBBELL}\n[[flows]]\nname = \"user\"\npairs = \"1-1\"\ncc = \"vegas\"\nparams = {{ flavour = \"linux\" }}\ntcp = {{ slow_start_restart = false }}\n"
    );
    let err = run_text(&text, "t.toml", None, &[], |_, _| true).err().expect("refused").to_string();
    assert!(err.contains("flows[0].tcp.slow_start_restart: is a setting of ns-2's stack"), "{err}");
}

#[test]
fn nps_flows_arrive_after_an_interflow_time_and_are_sent_at_once() {
    let text = format!(
        "{DUMBBELL}\n[[flows]]\nname = \"nps\"\npairs = \"1-1\"\ncc = \"reno\"\ntcp = {{ window = 200 }}\napp = {{ kind = \"nps\", mean_interarrival = \"20s\", mean_flow_size = \"1MB\", flow_shape = 1.5 }}\n"
    );
    let r = run(&text);
    let rows = rows(&r, "nps1");
    // The first flow arrives one (exponential) inter-flow time after the start: seed 1 puts it
    // past the first sample.
    assert_eq!(rows[0].1, 0);
    assert!(rows.iter().any(|x| x.1 == 1) && rows.iter().filter(|x| x.1 == 0).count() > 5);
    let fl = &r["flows"][0];
    assert!(u(&fl["delivered_pkts"]) > 1000);
    assert!(fl["completion_time_s"].is_null());
}

#[test]
fn pareto_pacing_holds_a_flow_below_its_unpaced_rate() {
    // The same arrivals and lengths (same seed and stream), once paced at 1 Mbit/s with ON
    // 30 ms / OFF 70 ms (at most ~0.3 Mbit/s on average), once handed over at once.
    let app = |kind: &str, extra: &str| {
        format!(
            "{DUMBBELL}\n[[flows]]\nname = \"x\"\npairs = \"1-1\"\ncc = \"reno\"\ntcp = {{ window = 200 }}\napp = {{ kind = \"{kind}\", mean_interarrival = \"2s\", mean_flow_size = \"1MB\"{extra} }}\n"
        )
    };
    let paced = run(&app("pareto-paced", ", rate = \"1Mbps\", mean_on = \"30ms\", mean_off = \"70ms\", shape = 1.5"));
    let nps = run(&app("nps", ""));
    let gp = |r: &Value| f(&r["flows"][0]["goodput_bps"]);
    assert!(gp(&paced) < 0.5e6, "paced {}", gp(&paced));
    assert!(gp(&nps) > 1.5 * gp(&paced), "nps {} paced {}", gp(&nps), gp(&paced));
    // A paced flow with data pending stays active.
    assert!(rows(&paced, "x1").iter().filter(|x| x.1 == 1).count() > 100);
}

#[test]
fn ftp_flows_are_active_from_start_to_stop() {
    let text = format!("{DUMBBELL}\n[[flows]]\nname = \"f\"\npairs = \"1-1\"\ncc = \"reno\"\nstart = \"10s\"\nstop = \"50s\"\n");
    let r = run(&text);
    for (t, active, _, _) in rows(&r, "f1") {
        assert_eq!(active, u64::from(t >= 10.0 && t < 50.0), "at {t}");
    }
}

#[test]
fn a_stopped_onoff_user_hands_over_nothing_more() {
    let text = format!(
        "{DUMBBELL}\n[[flows]]\nname = \"user\"\npairs = \"1-1\"\ncc = \"newreno\"\nstop = \"60s\"\napp = {{ kind = \"onoff\", mean_on = \"10s\", mean_off = \"5s\" }}\n"
    );
    let r = run(&text);
    for (t, active, _, tput) in rows(&r, "user1") {
        if t >= 62.0 {
            assert_eq!((active, tput), (0, 0.0), "at {t}");
        }
    }
}
