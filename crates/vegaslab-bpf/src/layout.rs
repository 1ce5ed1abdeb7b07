//! The simulator's socket as a BPF program sees it: the one table of kernel fields offered to
//! objects, where each lives in the simulator's socket block, and `struct ack_sample`.
//!
//! An object compiled against Linux's `vmlinux.h` reads `tp->snd_cwnd` at Linux's offset; its
//! CO-RE relocations (`.BTF.ext`) name the field by (declaring struct, member), and the loader
//! rewrites the access to the offset below ([`crate::core`]). A field not in [`FIELDS`] is
//! refused at load time, naming it. The block holds only these fields, at the simulator's own
//! offsets; the kernel's embedding chain (`tcp_sock` starts with `inet_connection_sock`, which
//! starts with `inet_sock`, then `sock`, then `sock_common`) is [`EMBEDDED`]: members at offset
//! 0 of each other, as in Linux.
//!
//! Widths equal Linux 6.12's declarations (checked against the object's own BTF at load).
//! Bitfields sit at Linux's bit position inside their byte: a plain C read of a bitfield gets
//! only a byte-offset relocation and masks with the bit position it was compiled with
//! (docs/decisions.md, "BPF bitfields keep Linux's bit position").

/// Size of the socket block (bytes).
pub const SOCK_SIZE: usize = 256;
/// Size of the `struct ack_sample` block (bytes).
pub const ACK_SAMPLE_SIZE: usize = 16;

/// Where a bitfield's bits are inside the bytes at [`Field::offset`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bits {
    /// Lowest bit, counted from the least significant bit of the byte (Linux's position).
    pub pos: u32,
    /// Width in bits.
    pub len: u32,
}

/// One offered field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// The kernel struct that declares the member (`tcp_sock`, `sock`, ...).
    pub strukt: &'static str,
    /// The member's name.
    pub member: &'static str,
    /// Byte offset in the simulator's block (the socket block, or the ack_sample block for
    /// `ack_sample` members).
    pub offset: u32,
    /// Width in bytes (for a bitfield: the byte that holds it).
    pub size: u32,
    /// Whether Linux declares it signed.
    pub signed: bool,
    /// `Some` for a bitfield.
    pub bits: Option<Bits>,
    /// What the simulator keeps there, in one sentence (docs/bpf-objects.md shows it).
    pub holds: &'static str,
}

const fn field(strukt: &'static str, member: &'static str, offset: u32, size: u32, holds: &'static str) -> Field {
    Field { strukt, member, offset, size, signed: false, bits: None, holds }
}

pub const ICSK_CA_PRIV: Field = field("inet_connection_sock", "icsk_ca_priv", 0, 104, "The congestion control's private area (104 bytes, Linux's ICSK_CA_PRIV_SIZE), kept for the connection's life, zero at init.");
pub const SND_CWND: Field = field("tcp_sock", "snd_cwnd", 104, 4, "The window in packets, floor(cwnd) and at least 1 before a hook; read back after it.");
pub const SND_SSTHRESH: Field = field("tcp_sock", "snd_ssthresh", 108, 4, "The slow-start threshold in packets (infinite: 0x7fffffff); read back after a hook.");
pub const SND_CWND_CLAMP: Field = field("tcp_sock", "snd_cwnd_clamp", 112, 4, "The largest window: the receiver window, in packets.");
pub const SND_CWND_CNT: Field = field("tcp_sock", "snd_cwnd_cnt", 116, 4, "Reno's ACK counter for the linear increase; kept across hooks, 0 at init and when a loss is detected.");
pub const PRIOR_CWND: Field = field("tcp_sock", "prior_cwnd", 120, 4, "The window when the last loss was detected (for undo_cwnd).");
pub const SND_NXT: Field = field("tcp_sock", "snd_nxt", 124, 4, "The next sequence number to send, counted in packets, not bytes.");
pub const SND_UNA: Field = field("tcp_sock", "snd_una", 128, 4, "The oldest unacknowledged sequence number, in packets.");
pub const MAX_PACKETS_OUT: Field = field("tcp_sock", "max_packets_out", 132, 4, "Set so that tcp_is_cwnd_limited() gives the simulator's verdict (with is_cwnd_limited).");
pub const TCP_MSTAMP: Field = field("tcp_sock", "tcp_mstamp", 136, 8, "The time of the call, µs of simulated time.");
pub const LSNDTIME: Field = field("tcp_sock", "lsndtime", 144, 4, "When data was last sent, in jiffies of the object's CONFIG_HZ (set before cwnd_event(TX_START); 0 until then).");
pub const SRTT_US: Field = field("tcp_sock", "srtt_us", 148, 4, "0: the simulator keeps its RTT estimator to itself (take RTTs from pkts_acked).");
pub const MSS_CACHE: Field = field("tcp_sock", "mss_cache", 152, 4, "1: windows and sequence numbers count packets.");
pub const PACKETS_OUT: Field = field("tcp_sock", "packets_out", 156, 4, "Packets in flight.");
pub const SK_PACING_RATE: Field = field("sock", "sk_pacing_rate", 160, 8, "0: the simulator does not pace.");
pub const SK_PACING_STATUS: Field = field("sock", "sk_pacing_status", 168, 4, "0 (SK_PACING_NONE).");
pub const IS_CWND_LIMITED: Field = Field { bits: Some(Bits { pos: 3, len: 1 }), ..field("tcp_sock", "is_cwnd_limited", 172, 1, "Whether the sender is limited by cwnd (bit 3 of its byte, as in Linux 6.12).") };
pub const ICSK_CA_STATE: Field = Field { bits: Some(Bits { pos: 0, len: 5 }), ..field("inet_connection_sock", "icsk_ca_state", 173, 1, "The loss-recovery state, TCP_CA_Open 0 to TCP_CA_Loss 4 (bits 0-4); during set_state still the old one.") };

pub const ACK_PKTS_ACKED: Field = field("ack_sample", "pkts_acked", 0, 4, "1: the simulator's RTT sample does not carry the count.");
pub const ACK_RTT_US: Field = Field { signed: true, ..field("ack_sample", "rtt_us", 4, 4, "The RTT sample in µs; negative means none.") };
pub const ACK_IN_FLIGHT: Field = field("ack_sample", "in_flight", 8, 4, "Packets in flight when the ACK arrived.");

/// Every offered field; each one's `holds` says what the simulator keeps there.
pub const FIELDS: &[Field] = &[
    ICSK_CA_PRIV,
    SND_CWND,
    SND_SSTHRESH,
    SND_CWND_CLAMP,
    SND_CWND_CNT,
    PRIOR_CWND,
    SND_NXT,
    SND_UNA,
    MAX_PACKETS_OUT,
    TCP_MSTAMP,
    LSNDTIME,
    SRTT_US,
    MSS_CACHE,
    PACKETS_OUT,
    SK_PACING_RATE,
    SK_PACING_STATUS,
    IS_CWND_LIMITED,
    ICSK_CA_STATE,
    ACK_PKTS_ACKED,
    ACK_RTT_US,
    ACK_IN_FLIGHT,
];

/// Members that are the enclosing object itself at offset 0 (Linux's socket embedding chain).
pub const EMBEDDED: &[(&str, &str)] = &[("tcp_sock", "inet_conn"), ("inet_connection_sock", "icsk_inet"), ("inet_sock", "sk"), ("sock", "__sk_common")];

/// The offered field `strukt.member`, if any.
pub fn find(strukt: &str, member: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.strukt == strukt && f.member == member)
}

/// Typed access to a socket (or ack_sample) block.
pub struct Block<'a>(pub &'a mut [u8]);

impl Block<'_> {
    fn bytes<const N: usize>(&self, f: &Field) -> [u8; N] {
        let o = f.offset as usize;
        let mut b = [0u8; N];
        b.copy_from_slice(&self.0[o..o + N]);
        b
    }

    /// A 4-byte field.
    pub fn u32(&self, f: &Field) -> u32 {
        u32::from_le_bytes(self.bytes::<4>(f))
    }

    /// Set a 4-byte field.
    pub fn set_u32(&mut self, f: &Field, v: u32) {
        let o = f.offset as usize;
        self.0[o..o + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// Set an 8-byte field.
    pub fn set_u64(&mut self, f: &Field, v: u64) {
        let o = f.offset as usize;
        self.0[o..o + 8].copy_from_slice(&v.to_le_bytes());
    }

    /// A bitfield's value.
    pub fn bits(&self, f: &Field) -> u32 {
        let b = f.bits.expect("a bitfield");
        (u32::from(self.0[f.offset as usize]) >> b.pos) & ((1 << b.len) - 1)
    }

    /// Set a bitfield, keeping the byte's other bits.
    pub fn set_bits(&mut self, f: &Field, v: u32) {
        let b = f.bits.expect("a bitfield");
        let mask = (((1u32 << b.len) - 1) << b.pos) as u8;
        let byte = &mut self.0[f.offset as usize];
        *byte = (*byte & !mask) | (((v << b.pos) as u8) & mask);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_fields_fit_the_block_and_do_not_overlap() {
        let mut sock: Vec<&Field> = FIELDS.iter().filter(|f| f.strukt != "ack_sample").collect();
        sock.sort_by_key(|f| f.offset);
        for pair in sock.windows(2) {
            assert!(pair[0].offset + pair[0].size <= pair[1].offset, "{} overlaps {}", pair[0].member, pair[1].member);
        }
        assert!(sock.iter().all(|f| (f.offset + f.size) as usize <= SOCK_SIZE));
        assert!(FIELDS.iter().filter(|f| f.strukt == "ack_sample").all(|f| (f.offset + f.size) as usize <= ACK_SAMPLE_SIZE));
    }

    #[test]
    fn a_bitfield_is_written_at_its_linux_bit_position_only() {
        let mut raw = [0xffu8; SOCK_SIZE];
        let mut b = Block(&mut raw);
        b.set_bits(&IS_CWND_LIMITED, 0);
        assert_eq!(b.0[IS_CWND_LIMITED.offset as usize], !(1u8 << 3));
        b.set_bits(&ICSK_CA_STATE, 3);
        assert_eq!(b.bits(&ICSK_CA_STATE), 3);
        assert_eq!(b.0[ICSK_CA_STATE.offset as usize], 0xe0 | 3);
    }
}
