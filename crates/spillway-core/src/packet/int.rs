//! HPCC's in-band network telemetry (HPCC §3.2, §4.2; the HPCC simulator's `IntHeader`):
//! every switch port a data packet leaves appends one hop record of what it saw, the
//! receiver copies the records into its ACK, and the sender reacts to the most loaded hop.
//!
//! On the wire the header is fixed: 8 B per hop for up to [`MAX_HOPS`] hops and 2 B of hop
//! count, [`INT_HEADER_BYTES`] in all, on every data packet and every ACK of an HPCC flow
//! (the paper's 42 B). The records here keep full precision (picoseconds, bytes, bytes
//! queued), where the simulator packs them into 64 bits (a 24-bit nanosecond clock, bytes in
//! units of 128, queue in units of 80): deltas of these are what it reads, and ours are exact.

use crate::units::Ps;

/// Hops a header has room for (HPCC's `IntHeader::maxHop`): the five switches of a
/// three-tier path.
pub const MAX_HOPS: usize = 5;

/// The header's bytes on the wire: 8 B per hop plus the hop count.
pub const INT_HEADER_BYTES: u32 = 8 * MAX_HOPS as u32 + 2;

/// What one egress port saw as the packet left it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntHop {
    /// When the packet left (its dequeue).
    pub ts: Ps,
    /// Bytes the port had sent before this packet (every packet it sent, all classes).
    pub tx_bytes: u64,
    /// Bytes queued at the port after this packet left, all classes.
    pub qlen: u64,
    /// The port's link rate, bit/s.
    pub rate: u64,
}

/// The records a packet carries, first hop first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntStack {
    /// Hops recorded; more than [`MAX_HOPS`] once a path outgrew the header (its
    /// telemetry is then ignored, as the simulator ignores `nhop > maxHop`).
    pub n: u8,
    pub hops: [IntHop; MAX_HOPS],
}

impl IntStack {
    /// A port appends its record (a full header only counts the hop).
    #[inline]
    pub fn push(&mut self, hop: IntHop) {
        if (self.n as usize) < MAX_HOPS {
            self.hops[self.n as usize] = hop;
        }
        self.n = self.n.saturating_add(1);
    }

    /// The records, if the path fitted the header.
    #[inline]
    pub fn hops(&self) -> Option<&[IntHop]> {
        ((self.n as usize) <= MAX_HOPS).then(|| &self.hops[..self.n as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_the_papers_42_bytes_and_overflows_to_none() {
        assert_eq!(INT_HEADER_BYTES, 42);
        let mut s = IntStack::default();
        assert_eq!(s.hops(), Some(&[][..]));
        for k in 0..MAX_HOPS as u64 {
            s.push(IntHop {
                ts: k,
                ..IntHop::default()
            });
        }
        assert_eq!(s.hops().unwrap().len(), MAX_HOPS);
        assert_eq!(s.hops().unwrap()[3].ts, 3);
        s.push(IntHop::default());
        assert_eq!(s.hops(), None);
    }
}
