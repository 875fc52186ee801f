//! Congestion marking at a switch port: when to set ECN's CE bit (or, with Source
//! Quench, tell the source). Markers are sans-IO: [`threshold`] looks at the queue an
//! arrival finds (DCTCP's K); [`codel`] at a departure's sojourn time (RFC 8289) and
//! [`red`] at the queue a departure leaves behind (DCQCN's RED-style marking).

pub mod codel;
pub mod red;
pub mod threshold;

use crate::units::Ps;
use codel::Codel;
use red::Red;

/// A marker that decides as a data packet leaves the port.
#[derive(Debug, Clone)]
pub enum AtDequeue {
    Codel(Codel),
    Red(Red),
}

impl AtDequeue {
    /// Is the data packet leaving at `now`, after `sojourn` in the queue and with
    /// `backlog` bytes behind it, marked?
    #[inline]
    pub fn on_dequeue(&mut self, now: Ps, sojourn: Ps, backlog: u64) -> bool {
        match self {
            AtDequeue::Codel(c) => c.on_dequeue(now, sojourn, backlog),
            AtDequeue::Red(r) => r.on_dequeue(backlog),
        }
    }
}
