//! What the simulator offers an object besides socket fields: the hooks it calls, the BPF
//! helpers and kfuncs it provides, the kernel config values it answers, and the names of
//! Linux's helpers, so that a refusal names the helper an object asked for.

/// Hooks of `struct tcp_congestion_ops` the simulator calls (Linux's names), where the Linux
/// stack (`vegaslab_cc::linux`) calls the same-named operations. `release` is accepted and
/// never called: a simulated connection ends with the run, and nothing outside the
/// controller's own memory needs freeing.
pub const HOOKS: &[&str] = &["init", "release", "ssthresh", "cong_avoid", "set_state", "cwnd_event", "pkts_acked", "undo_cwnd"];

/// Hooks every congestion control must define: Linux's `tcp_validate_congestion_control`
/// (net/ipv4/tcp_cong.c) refuses an algorithm without them (`cong_control` may stand for
/// `cong_avoid` in Linux; the simulator does not call `cong_control`).
pub const REQUIRED_HOOKS: &[&str] = &["ssthresh", "cong_avoid", "undo_cwnd"];

/// Kfuncs the simulator provides (`crate::kfuncs`), as objects name them.
pub const KFUNCS: &[&str] = &["tcp_slow_start", "tcp_cong_avoid_ai", "tcp_reno_cong_avoid", "tcp_reno_ssthresh", "tcp_reno_undo_cwnd"];

/// BPF helpers the simulator provides: Linux's id and name.
pub const HELPERS: &[(u32, &str)] = &[(118, "bpf_jiffies64"), (5, "bpf_ktime_get_ns")];

/// Kernel config values an object may read as `extern ... __kconfig`.
pub const KCONFIG: &[&str] = &["CONFIG_HZ"];

/// The name of Linux's BPF helper `id` (`enum bpf_func_id`, include/uapi/linux/bpf.h), for the
/// helpers the simulator provides ([`HELPERS`]) and those a congestion control is likely to call
/// besides; `None` for the others.
pub fn helper_name(id: u32) -> Option<&'static str> {
    const NAMES: &[(u32, &str)] = &[
        (1, "bpf_map_lookup_elem"),
        (2, "bpf_map_update_elem"),
        (3, "bpf_map_delete_elem"),
        (4, "bpf_probe_read"),
        (6, "bpf_trace_printk"),
        (7, "bpf_get_prandom_u32"),
        (8, "bpf_get_smp_processor_id"),
        (14, "bpf_get_current_pid_tgid"),
        (16, "bpf_get_current_comm"),
        (25, "bpf_perf_event_output"),
        (35, "bpf_get_current_task"),
        (46, "bpf_get_socket_cookie"),
        (49, "bpf_setsockopt"),
        (57, "bpf_getsockopt"),
        (59, "bpf_sock_ops_cb_flags_set"),
        (93, "bpf_spin_lock"),
        (94, "bpf_spin_unlock"),
        (95, "bpf_sk_fullsock"),
        (96, "bpf_tcp_sock"),
        (107, "bpf_sk_storage_get"),
        (108, "bpf_sk_storage_delete"),
        (112, "bpf_probe_read_user"),
        (113, "bpf_probe_read_kernel"),
        (116, "bpf_tcp_send_ack"),
        (125, "bpf_ktime_get_boot_ns"),
        (130, "bpf_ringbuf_output"),
        (131, "bpf_ringbuf_reserve"),
        (132, "bpf_ringbuf_submit"),
        (133, "bpf_ringbuf_discard"),
        (137, "bpf_skc_to_tcp_sock"),
        (153, "bpf_per_cpu_ptr"),
        (154, "bpf_this_cpu_ptr"),
        (160, "bpf_ktime_get_coarse_ns"),
        (164, "bpf_for_each_map_elem"),
        (165, "bpf_snprintf"),
        (177, "bpf_trace_vprintk"),
        (181, "bpf_loop"),
        (194, "bpf_kptr_xchg"),
        (208, "bpf_ktime_get_tai_ns"),
    ];
    HELPERS.iter().chain(NAMES).find(|(i, _)| *i == id).map(|(_, n)| *n)
}

/// The VM's key for a builtin function (kfunc or helper): SBPF calls builtins by the murmur3
/// hash of their name.
pub fn builtin_key(name: &str) -> u32 {
    solana_sbpf::ebpf::hash_symbol_name(name.as_bytes())
}

/// `"a, b, c"`.
pub fn list(names: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    names.into_iter().map(|n| n.as_ref().to_string()).collect::<Vec<_>>().join(", ")
}
