//! FCP messages in flight. A message travels as a packet (or, with `fastpass.control =
//! "ideal"`, as an event) that carries only its id; the message itself waits here, in
//! id order, until it arrives. One that never does (dropped in the network) is
//! forgotten once it is older than any packet could be: memory stays bounded by the
//! messages of the last [`HORIZON`].

use crate::packet::wire::wire_bytes;
use crate::units::Ps;
use spillway_arbiter::fcp::Msg;
use std::collections::VecDeque;

/// IP header bytes in front of an FCP message (FCP is its own IP protocol, §6.1).
const IP_HEADER: u32 = 20;

/// An FCP message's bytes on the wire: IP header, message, framing (what the sender's
/// link carries, and what the arbiter counts against its own).
pub fn fcp_wire_bytes(m: &Msg, framing: u32) -> u32 {
    wire_bytes(IP_HEADER + m.wire_len() as u32, framing)
}

/// Messages older than this are taken as lost (no queue in these networks holds a
/// packet for anywhere near as long).
pub const HORIZON: Ps = 50_000_000_000;

/// Which way a message goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toward {
    /// From an endpoint to the arbiters.
    Arbiter,
    /// From an arbiter to an endpoint.
    Endpoint,
    /// Between arbiters (watchdogs).
    Peer,
}

struct Entry {
    sent: Ps,
    toward: Toward,
    msg: Option<Msg>,
}

#[derive(Default)]
pub struct Channel {
    /// Id of `entries[0]`.
    base: u32,
    entries: VecDeque<Entry>,
    /// Messages forgotten unarrived.
    pub expired: u64,
}

impl Channel {
    /// Keeps `msg` until it arrives; its id.
    pub fn put(&mut self, now: Ps, toward: Toward, msg: Msg) -> u32 {
        while let Some(e) = self.entries.front() {
            if e.msg.is_some() && e.sent + HORIZON > now {
                break;
            }
            self.expired += e.msg.is_some() as u64;
            self.entries.pop_front();
            self.base = self.base.wrapping_add(1);
        }
        self.entries.push_back(Entry {
            sent: now,
            toward,
            msg: Some(msg),
        });
        self.base.wrapping_add(self.entries.len() as u32 - 1)
    }

    /// Message `id`, which has arrived, and when it was sent; `None` if it was forgotten.
    pub fn take(&mut self, id: u32) -> Option<(Msg, Ps)> {
        let i = id.wrapping_sub(self.base) as usize;
        let e = self.entries.get_mut(i)?;
        Some((e.msg.take()?, e.sent))
    }

    /// Which way message `id` goes, if it is still kept.
    pub fn toward(&self, id: u32) -> Option<Toward> {
        let i = id.wrapping_sub(self.base) as usize;
        self.entries
            .get(i)
            .filter(|e| e.msg.is_some())
            .map(|e| e.toward)
    }
}
