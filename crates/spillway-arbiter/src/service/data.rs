//! The service's datagrams besides FCP: data packets between endpoints, and the status
//! and stop queries. FCP messages start with their version byte (1); these start with
//! a different first byte, so one socket carries both and a glance tells them apart.

/// First byte of a data datagram.
pub const DATA_MAGIC: u8 = 0xD7;
/// magic, 3 bytes zero, src u32, dst u32, timeslot u64, epoch u32, seq u32.
pub const DATA_LEN: usize = 28;
/// A status query; the answer is one JSON object.
pub const STATUS_QUERY: &[u8] = b"\xE5spillway-status";
/// Stop cleanly (as SIGTERM), from loopback only.
pub const STOP_QUERY: &[u8] = b"\xE5spillway-stop";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Data {
    pub src: u32,
    pub dst: u32,
    pub timeslot: u64,
    /// The epoch of the arbiter that granted the timeslot.
    pub epoch: u32,
    pub seq: u32,
}

impl Data {
    /// Write into `buf` (at least [`DATA_LEN`] bytes; the rest is padding, left as is).
    pub fn encode(&self, buf: &mut [u8]) {
        buf[0] = DATA_MAGIC;
        buf[1..4].fill(0);
        buf[4..8].copy_from_slice(&self.src.to_be_bytes());
        buf[8..12].copy_from_slice(&self.dst.to_be_bytes());
        buf[12..20].copy_from_slice(&self.timeslot.to_be_bytes());
        buf[20..24].copy_from_slice(&self.epoch.to_be_bytes());
        buf[24..28].copy_from_slice(&self.seq.to_be_bytes());
    }

    /// `None` unless it is a data datagram of at least [`DATA_LEN`] bytes.
    pub fn decode(b: &[u8]) -> Option<Data> {
        if b.len() < DATA_LEN || b[0] != DATA_MAGIC {
            return None;
        }
        let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        Some(Data {
            src: u32_at(4),
            dst: u32_at(8),
            timeslot: u64::from_be_bytes(b[12..20].try_into().expect("8 bytes")),
            epoch: u32_at(20),
            seq: u32_at(24),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let d = Data {
            src: 3,
            dst: 7,
            timeslot: 1 << 40,
            epoch: 5,
            seq: 9,
        };
        let mut b = [0xAAu8; 64];
        d.encode(&mut b);
        assert_eq!(Data::decode(&b), Some(d));
        assert_eq!(Data::decode(&b[..DATA_LEN - 1]), None);
        b[0] = crate::fcp::wire::VERSION;
        assert_eq!(Data::decode(&b), None);
        assert_ne!(STATUS_QUERY[0], crate::fcp::wire::VERSION);
        assert_ne!(STATUS_QUERY[0], DATA_MAGIC);
    }
}
