//! Packets live in a pool and travel as small indices; a freed slot is reused, so the
//! steady state allocates nothing per packet.

use vegaslab_cc::Nanos;

pub type PacketId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Data,
    Ack,
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub kind: Kind,
    pub flow: u32,
    pub seqno: i64,
    /// Bytes on the wire.
    pub size: u32,
    pub src: u32,
    pub dst: u32,
    pub syn: bool,
    pub sent_at: Nanos,
}

#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    live: Vec<bool>,
    free: Vec<PacketId>,
}

impl PacketPool {
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = p;
                self.live[id as usize] = true;
                id
            }
            None => {
                self.slots.push(p);
                self.live.push(true);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    pub fn free(&mut self, id: PacketId) {
        debug_assert!(self.live[id as usize], "double free of packet {id}");
        self.live[id as usize] = false;
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Packets still in the network, for conservation checks.
    pub fn live_packets(&self) -> impl Iterator<Item = &Packet> {
        self.slots.iter().zip(&self.live).filter(|(_, l)| **l).map(|(p, _)| p)
    }
}
