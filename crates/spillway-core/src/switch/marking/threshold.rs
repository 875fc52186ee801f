//! Threshold marking (DCTCP §3.1, RFC 8257; CP §6 with K = 32 KB): an arriving data
//! packet is marked when the port already holds more than K bytes.

/// K in bytes, or off. Kept in the port's hot cache line (a `u64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Threshold(u64);

impl Threshold {
    pub const OFF: Threshold = Threshold(u64::MAX);

    pub fn new(k: Option<u64>) -> Threshold {
        Threshold(k.unwrap_or(u64::MAX))
    }

    #[inline(always)]
    pub fn is_off(self) -> bool {
        self.0 == u64::MAX
    }

    /// Does an arrival that found `queued` bytes ahead of it get marked?
    #[inline(always)]
    pub fn marks(self, queued: u64) -> bool {
        queued > self.0
    }
}
