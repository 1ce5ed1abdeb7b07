//! The pcap form of the packet trace: each captured packet as a synthesized IPv4 + TCP (or
//! UDP) header that Wireshark's TCP analysis reads as the connection the simulation ran.
//!
//! **Byte numbering.** The simulator numbers a connection's data packets 0, 1, 2, ... (ns-2's
//! `seqno`) and its ACKs by the highest in-order packet received. On the wire each data packet
//! carries the same payload of `payload` bytes (its size on the wire less the synthesized
//! headers), so packet `k` carries the bytes `[start(k), start(k) + payload)` of a byte stream
//! numbered from a per-connection initial sequence number (ISN) as RFC 9293 section 3.4 does:
//! the SYN takes one number, so does the FIN. A connection whose simulator models a SYN
//! (Reno/NewReno's 40-byte packet 0, `tcp.syn`) sends it without payload; one that models none
//! (ns-2's Vegas agent, `tcp.syn = false`) sends its packet 0 as a SYN carrying data, so no
//! packet is invented and the first packet of every connection is its SYN. A retransmission
//! carries its packet's original numbers, so Wireshark flags exactly the retransmissions.
//! An ACK of packet `a` acknowledges `end(a)`, the number after its last byte (and after the
//! FIN when `a` is the transfer's last packet).
//!
//! **Flags.** SYN on packet 0; SYN-ACK on the sink's answer to it; FIN on the last packet of a
//! transfer whose end the simulator knows (a file, a per-flow connection's flow); ACK on every
//! acknowledgement and on every data packet after the SYN, acknowledging the receiver's side at
//! `receiver ISN + 1`. The sink's answer to the SYN is an ACK of packet 0 like any other (ns-2's
//! `TCPSink` has no handshake, and a packet carries no id), so the tracer flags as the SYN-ACK,
//! on each link direction, the first ACK of packet 0 of the connection that the direction
//! carries: a connection's ACKs cross a direction in the order the sink sent them (FIFO queues,
//! one route), so that is the same packet on every hop, unless it was lost on the way. The
//! receiver sends no FIN. The receiver window is not encoded: the SYN and the SYN-ACK carry a
//! window-scale option of [`WINDOW_SHIFT`] (RFC 7323 section 2), so every later segment's
//! 65535 advertises 1 GiB and a large window never reads as "window full"; the SYN's own
//! window is unscaled, as the RFC says. The option's four bytes are added to those two
//! segments' headers, beyond their size on the wire.
//!
//! **Headers.** IPv4 addresses 10.x.y.z from the node index; ports 1024 + the agent's slot
//! (`Tracer`), and 32768 + the connection's index for the connections a per-flow entry opens, so
//! each is its own TCP stream. Header bytes beyond the 40 basic ones become TCP options (NOPs:
//! Linux's timestamps and SACK blocks take their room, not their content); the RoVegas AQT
//! option is an IP option (kind 0x9e, RFC 4727's experimental value) carrying the accumulated
//! queueing time and its echo in nanoseconds. The payload is not captured (captured length =
//! the headers, original length = the packet's size on the wire); the IPv4, TCP and UDP
//! checksums are those of the packet with a payload of zero bytes. The file is the classic
//! libpcap format, two fixed headers (24 and 16 bytes, little-endian here), written directly
//! rather than through a crate.

use std::io::Write;

/// What the byte numbering of one TCP connection needs: fixed for the connection, except
/// `last`, which the simulator may learn while the connection runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    /// Payload bytes of every data packet but a payload-less SYN.
    pub payload: u32,
    /// TCP option bytes on data packets (a multiple of 4, at most 40).
    pub tcp_options: u32,
    /// Packet 0 is a SYN without payload (the simulator models it).
    pub syn_packet: bool,
    /// The transfer's last packet, if the simulator knows where the flow ends.
    pub last: Option<i64>,
    /// The sender's and the receiver's initial sequence numbers.
    pub isn: u32,
    pub receiver_isn: u32,
}

/// TCP flag bits (RFC 9293 section 3.1).
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;
/// The window-scale shift the SYN and SYN-ACK announce: the largest RFC 7323 allows.
pub const WINDOW_SHIFT: u8 = 14;

impl Stream {
    /// The connection of these sizes, its ISNs drawn from its index (deterministic).
    pub fn new(conn: u32, wire: u32, header_bytes: u32, syn_packet: bool, last: Option<i64>) -> Stream {
        let tcp_options = (header_bytes.saturating_sub(40) / 4 * 4).min(40);
        let payload = wire.saturating_sub(40 + tcp_options).max(1);
        Stream { payload, tcp_options, syn_packet, last, isn: mix(2 * conn as u64) as u32, receiver_isn: mix(2 * conn as u64 + 1) as u32 }
    }

    /// Payload bytes of data packet `k`.
    pub fn len(&self, k: i64) -> u32 {
        if k == 0 && self.syn_packet {
            0
        } else {
            self.payload
        }
    }

    /// Sequence-number space packet `k` takes besides its payload: its SYN and its FIN.
    fn flags_space(&self, k: i64) -> u64 {
        u64::from(k == 0) + u64::from(self.last == Some(k))
    }

    /// The (unwrapped) sequence number of data packet `k`'s first byte.
    pub fn start(&self, k: i64) -> u64 {
        let k = k.max(0) as u64;
        if k == 0 {
            return self.isn as u64;
        }
        // The SYN's number, then k - 1 packets of payload, or k when packet 0 carried some.
        let before = if self.syn_packet { k - 1 } else { k };
        self.isn as u64 + 1 + before * self.payload as u64
    }

    /// The number after data packet `k` (its payload, SYN and FIN): what its ACK acknowledges.
    pub fn end(&self, k: i64) -> u64 {
        self.start(k) + self.len(k) as u64 + self.flags_space(k)
    }

    /// Sequence number, acknowledgement number and flags of data packet `k`.
    pub fn data(&self, k: i64) -> (u32, u32, u8) {
        let fin = if self.last == Some(k) { FIN } else { 0 };
        if k == 0 {
            (self.start(0) as u32, 0, SYN | fin)
        } else {
            (self.start(k) as u32, self.receiver_isn.wrapping_add(1), ACK | PSH | fin)
        }
    }

    /// Sequence number, acknowledgement number and flags of the ACK of packet `a` (the highest
    /// in order received; -1 before any); `syn_ack`: it is the receiver's answer to the SYN,
    /// which takes the receiver's ISN.
    pub fn ack(&self, a: i64, syn_ack: bool) -> (u32, u32, u8) {
        let acked = if a < 0 { self.isn as u64 } else { self.end(a) };
        if syn_ack {
            (self.receiver_isn, acked as u32, SYN | ACK)
        } else {
            (self.receiver_isn.wrapping_add(1), acked as u32, ACK)
        }
    }
}

/// SplitMix64's finaliser: a fixed, well-spread number from an index.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One captured packet, as [`headers`] writes it.
pub struct Packet {
    pub src: (u32, u16),
    pub dst: (u32, u16),
    /// IPv4 identification.
    pub id: u16,
    /// The RoVegas AQT option's bytes (0: none) and its two values.
    pub ip_option: (u32, u32, u32),
    pub l4: L4,
}

pub enum L4 {
    Udp { payload: u32 },
    Tcp { seq: u32, ack: u32, flags: u8, options: u32, payload: u32 },
}

/// The synthesized IPv4 + TCP/UDP headers of `p` (network byte order).
pub fn headers(p: &Packet) -> Vec<u8> {
    let (opt_bytes, aqt, echo) = p.ip_option;
    let opt_bytes = (opt_bytes / 4 * 4).min(40);
    let ihl = 20 + opt_bytes;
    // A SYN (or SYN-ACK) announces the window scale: NOP + kind 3, length 3, the shift.
    let scale = match p.l4 {
        L4::Tcp { flags, .. } if flags & SYN != 0 => 4,
        _ => 0,
    };
    let (l4_header, payload, proto) = match p.l4 {
        L4::Udp { payload } => (8, payload, 17u8),
        L4::Tcp { options, payload, .. } => (20 + options + scale, payload, 6u8),
    };
    let l4_len = l4_header + payload;
    let total = (ihl + l4_len).min(65535) as u16;
    let addr = |n: u32| [10, (n >> 16) as u8, (n >> 8) as u8, n as u8];
    let mut h = Vec::with_capacity((ihl + l4_header) as usize);
    h.extend_from_slice(&[0x40 | (ihl / 4) as u8, 0]);
    h.extend_from_slice(&total.to_be_bytes());
    h.extend_from_slice(&p.id.to_be_bytes());
    h.extend_from_slice(&[0x40, 0, 64, proto, 0, 0]);
    h.extend_from_slice(&addr(p.src.0));
    h.extend_from_slice(&addr(p.dst.0));
    if opt_bytes > 0 {
        let mut opt = vec![0u8; opt_bytes as usize];
        opt[0] = 0x9e;
        opt[1] = opt_bytes as u8;
        let values: Vec<u8> = aqt.to_be_bytes().into_iter().chain(echo.to_be_bytes()).collect();
        let room = opt.len() - 2;
        opt[2..2 + room.min(8)].copy_from_slice(&values[..room.min(8)]);
        h.extend_from_slice(&opt);
    }
    let sum = checksum(&h, 0);
    h[10..12].copy_from_slice(&sum.to_be_bytes());
    let l4_start = h.len();
    h.extend_from_slice(&p.src.1.to_be_bytes());
    h.extend_from_slice(&p.dst.1.to_be_bytes());
    match p.l4 {
        L4::Udp { .. } => {
            h.extend_from_slice(&(l4_len.min(65535) as u16).to_be_bytes());
            h.extend_from_slice(&[0, 0]);
        }
        L4::Tcp { seq, ack, flags, options, .. } => {
            h.extend_from_slice(&seq.to_be_bytes());
            h.extend_from_slice(&ack.to_be_bytes());
            h.extend_from_slice(&[(((20 + options + scale) / 4) << 4) as u8, flags, 0xff, 0xff, 0, 0, 0, 0]);
            if scale > 0 {
                h.extend_from_slice(&[1, 3, 3, WINDOW_SHIFT]);
            }
            h.resize(h.len() + options as usize, 1); // NOP options
        }
    }
    // The pseudo-header (RFC 9293 section 3.1; RFC 768) and the header; zero payload bytes add
    // nothing to the sum.
    let mut pseudo = [0u8; 12];
    pseudo[..8].copy_from_slice(&h[12..20]);
    pseudo[9] = proto;
    pseudo[10..12].copy_from_slice(&(l4_len.min(65535) as u16).to_be_bytes());
    let partial = sum_words(&pseudo);
    let mut sum = checksum(&h[l4_start..], partial);
    if proto == 17 && sum == 0 {
        sum = 0xffff; // RFC 768: a computed zero is sent as all ones
    }
    let at = l4_start + if proto == 17 { 6 } else { 16 };
    h[at..at + 2].copy_from_slice(&sum.to_be_bytes());
    h
}

/// The classic libpcap global header: microsecond timestamps, version 2.4, zone 0, sigfigs 0,
/// snaplen 65535, LINKTYPE_RAW (101), little-endian.
pub fn write_header(w: &mut impl Write) -> std::io::Result<()> {
    w.write_all(&0xa1b2c3d4u32.to_le_bytes())?;
    w.write_all(&2u16.to_le_bytes())?;
    w.write_all(&4u16.to_le_bytes())?;
    w.write_all(&0i32.to_le_bytes())?;
    w.write_all(&0u32.to_le_bytes())?;
    w.write_all(&65535u32.to_le_bytes())?;
    w.write_all(&101u32.to_le_bytes())
}

/// One record: its time in microseconds, the captured headers and the packet's size on the wire
/// (or the IPv4 total length written in them, when that is larger: a SYN's window-scale option).
pub fn write_record(w: &mut impl Write, us: u64, captured: &[u8], wire: u32) -> std::io::Result<()> {
    let ip_total = captured.get(2..4).map_or(0, |b| u16::from_be_bytes([b[0], b[1]]) as u32);
    w.write_all(&((us / 1_000_000) as u32).to_le_bytes())?;
    w.write_all(&((us % 1_000_000) as u32).to_le_bytes())?;
    w.write_all(&(captured.len() as u32).to_le_bytes())?;
    w.write_all(&wire.max(ip_total).max(captured.len() as u32).to_le_bytes())?;
    w.write_all(captured)
}

fn sum_words(b: &[u8]) -> u32 {
    b.chunks(2).map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32).sum()
}

/// The Internet checksum (RFC 1071) of `b`, starting from a partial sum.
fn checksum(b: &[u8], partial: u32) -> u16 {
    let mut sum = partial + sum_words(b);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reno(last: Option<i64>) -> Stream {
        // 1040-byte packets with 40 header bytes, a modelled SYN.
        Stream { isn: 1000, receiver_isn: 5000, ..Stream::new(0, 1040, 40, true, last) }
    }

    fn vegas() -> Stream {
        // ns-2's Vegas agent: 1000 bytes on the wire, headers included in them, no SYN.
        Stream { isn: 1000, receiver_isn: 5000, ..Stream::new(0, 1000, 0, false, None) }
    }

    #[test]
    fn a_modelled_syn_takes_one_number_and_data_follows_it_in_payload_steps() {
        let s = reno(None);
        assert_eq!(s.payload, 1000);
        assert_eq!((s.start(0), s.len(0), s.end(0)), (1000, 0, 1001));
        assert_eq!((s.start(1), s.end(1)), (1001, 2001));
        assert_eq!(s.start(2), 2001);
        // Every packet starts where the one before it ends: no gap a reader would call lost.
        for k in 0..50 {
            assert_eq!(s.end(k), s.start(k + 1));
        }
    }

    #[test]
    fn a_connection_without_a_modelled_syn_sends_packet_0_as_a_syn_carrying_data() {
        let s = vegas();
        assert_eq!(s.payload, 960); // 1000 bytes on the wire less 40 synthesized header bytes
        assert_eq!(s.data(0), (1000, 0, SYN));
        assert_eq!((s.len(0), s.end(0)), (960, 1961));
        assert_eq!(s.data(1), (1961, 5001, ACK | PSH));
        for k in 0..50 {
            assert_eq!(s.end(k), s.start(k + 1));
        }
    }

    #[test]
    fn an_ack_acknowledges_the_byte_after_the_highest_packet_in_order() {
        let s = reno(None);
        assert_eq!(s.ack(0, false), (5001, 1001, ACK));
        assert_eq!(s.ack(3, false), (5001, s.start(4) as u32, ACK));
        assert_eq!(s.ack(-1, false).1, 1000);
    }

    #[test]
    fn the_answer_to_the_syn_takes_the_receivers_isn_and_later_acks_follow_it() {
        let s = reno(None);
        assert_eq!(s.ack(0, true), (5000, 1001, SYN | ACK));
        assert_eq!(s.data(1).1, 5001);   // the sender's data acknowledges the receiver's SYN
    }

    #[test]
    fn the_last_packet_of_a_known_transfer_carries_a_fin_that_its_ack_covers() {
        let s = reno(Some(4));
        assert_eq!(s.data(4).2, ACK | PSH | FIN);
        assert_eq!(s.data(3).2, ACK | PSH);
        assert_eq!(s.ack(4, false).1 as u64, s.start(4) + 1000 + 1);
    }

    #[test]
    fn sequence_numbers_wrap_modulo_2_to_the_32() {
        let s = Stream { isn: u32::MAX - 500, ..reno(None) };
        assert_eq!(s.data(1).0, (u32::MAX as u64 - 499) as u32);
        assert_eq!(s.data(2).0, 500);
    }

    #[test]
    fn connections_get_distinct_deterministic_isns() {
        let isns: std::collections::BTreeSet<u32> = (0..1000).map(|c| Stream::new(c, 1040, 40, true, None).isn).collect();
        assert_eq!(isns.len(), 1000);
        assert_eq!(Stream::new(7, 1040, 40, true, None).isn, Stream::new(7, 1040, 40, true, None).isn);
    }

    #[test]
    fn linux_header_bytes_become_tcp_options_and_not_payload() {
        let s = Stream::new(0, 1052, 52, true, None);
        assert_eq!((s.tcp_options, s.payload), (12, 1000));
    }

    #[test]
    fn the_headers_checksums_verify_and_lengths_match_the_payload() {
        let p = Packet { src: (1, 1024), dst: (2, 1025), id: 9, ip_option: (12, 7, 8), l4: L4::Tcp { seq: 1, ack: 2, flags: ACK, options: 12, payload: 960 } };
        let h = headers(&p);
        assert_eq!(h.len(), 32 + 32);
        assert_eq!(h[0], 0x48); // IHL 8 words: the 12-byte AQT option
        assert_eq!(u16::from_be_bytes([h[2], h[3]]), 32 + 32 + 960);
        assert_eq!(checksum(&h[..32], 0), 0);
        assert_eq!((h[32 + 12] >> 4) as u32 * 4, 32);
        let mut pseudo = [0u8; 12];
        pseudo[..8].copy_from_slice(&h[12..20]);
        pseudo[9] = 6;
        pseudo[10..12].copy_from_slice(&((32 + 960) as u16).to_be_bytes());
        assert_eq!(checksum(&h[32..], sum_words(&pseudo)), 0);
        let u = headers(&Packet { l4: L4::Udp { payload: 100 }, ip_option: (0, 0, 0), ..p });
        assert_eq!((u.len(), u16::from_be_bytes([u[24], u[25]])), (28, 108));
    }

    #[test]
    fn a_syn_and_a_syn_ack_announce_the_window_scale_and_other_segments_do_not() {
        let syn = Packet { src: (1, 1024), dst: (2, 1025), id: 1, ip_option: (0, 0, 0), l4: L4::Tcp { seq: 1, ack: 0, flags: SYN, options: 0, payload: 960 } };
        for flags in [SYN, SYN | ACK] {
            let h = headers(&Packet { l4: L4::Tcp { seq: 1, ack: 0, flags, options: 0, payload: 960 }, ..syn });
            assert_eq!(h.len(), 20 + 24);
            assert_eq!((h[20 + 12] >> 4) as u32 * 4, 24);
            assert_eq!(&h[40..44], &[1, 3, 3, WINDOW_SHIFT]);
            assert_eq!(u16::from_be_bytes([h[2], h[3]]), 20 + 24 + 960);
            let mut pseudo = [0u8; 12];
            pseudo[..8].copy_from_slice(&h[12..20]);
            pseudo[9] = 6;
            pseudo[10..12].copy_from_slice(&((24 + 960) as u16).to_be_bytes());
            assert_eq!(checksum(&h[20..], sum_words(&pseudo)), 0);
        }
        let data = headers(&Packet { l4: L4::Tcp { seq: 1, ack: 0, flags: ACK, options: 0, payload: 960 }, ..syn });
        assert_eq!(data.len(), 40);
    }
}
