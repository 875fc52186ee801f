//! The Fastpass Control Protocol (FCP, §5.3) and arbiter failover (§5.1), sans-IO.
//!
//! - [`wire`]: the fixed, versioned, big-endian message layout; `encode`/`decode`
//!   (decoding never panics), the checksum keyed with the nonce agreed at reset.
//! - [`endpoint`]: the endpoint's state machine: running totals per destination,
//!   batched reports, retransmission of current totals, lost and late allocations,
//!   resets and epochs.
//! - [`comm`]: the arbiter's protocol state machine (the paper's comm-core, §6.2): per
//!   endpoint nonce and reset state, reports into an [`crate::Arbiter`], allocation
//!   messages from a [`crate::Batch`], acks, watchdogs.
//! - [`failover`]: primary/secondary roles, watchdog and takeover timing, epochs.
//!
//! Time is `u64` picoseconds passed in as `now`: no clocks, no I/O, no threads. The
//! simulator passes [`wire::Msg`] values (charging [`wire::Msg::wire_len`] bytes); a UDP
//! service encodes and decodes them.

pub mod comm;
pub mod endpoint;
pub mod failover;
pub mod wire;

pub use comm::{Comm, CommConfig, CommEvent, CommStats, Dest, Transmit};
pub use endpoint::{Endpoint, EndpointConfig, EndpointStats, Granted, Input};
pub use failover::{Failover, FailoverConfig, FailoverEvent, Role};
pub use wire::{decode, peek, DecodeError, EncodeError, Msg};

/// Whether sequence number `a` is after `b` (serial-number arithmetic, RFC 1982).
pub(crate) fn newer(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// `n` hits within `window` of the first: a burst (then counting starts again).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BurstDetector {
    n: u32,
    window: u64,
    start: u64,
    count: u32,
}

impl BurstDetector {
    pub(crate) fn new(n: u32, window: u64) -> Self {
        BurstDetector {
            n: n.max(1),
            window,
            start: 0,
            count: 0,
        }
    }

    /// Record a hit at `now`; true when it completes a burst.
    pub(crate) fn hit(&mut self, now: u64) -> bool {
        if self.count == 0 || now.saturating_sub(self.start) > self.window {
            self.start = now;
            self.count = 0;
        }
        self.count += 1;
        if self.count >= self.n {
            self.count = 0;
            true
        } else {
            false
        }
    }
}

/// SplitMix64: the nonce generator's mixing step (deterministic from the caller's seed).
pub(crate) fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
