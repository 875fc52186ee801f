//! Congestion marking at a switch port: when to set ECN's CE bit (or, with Source
//! Quench, tell the source). Markers are sans-IO: [`threshold`] looks at the queue an
//! arrival finds (DCTCP's K); [`codel`] at a departure's sojourn time (RFC 8289) and
//! [`red`] at the queue a departure leaves behind (DCQCN's RED-style marking).

pub mod codel;
pub mod red;
pub mod threshold;

use codel::Codel;
use red::Red;

/// What a port does as a data packet leaves it: a marker's decision, or HPCC's
/// telemetry record (`packet/int.rs`; the HPCC simulator's `SwitchNotifyDequeue`), which
/// marks nothing.
#[derive(Debug, Clone)]
pub enum AtDequeue {
    Codel(Codel),
    Red(Red),
    Telemetry,
}
