//! The arbiter's own link, as the arbiter sees it (Fastpass §5.1, §8.1): a virtual clock
//! of when the FCP messages it has sent will have left its NIC. The arbiter knows every
//! byte it hands its NIC and the link's rate, so it needs no help from the network to
//! know how far behind its transmissions are; a real arbiter knows its NIC's transmit
//! queue the same way.
//!
//! §5.1 allocates each timeslot `lead` (65 us) ahead "to leave enough time for
//! notifications to reach the endpoints". That time is spent in two places: in the
//! arbiter's own transmit queue and in the network. [`TxLink::deliverable`] keeps the
//! first within half the lead (what the network gets is the other half, far more than
//! the few hops of top-priority FCP packets need), so an arbiter that cannot send its
//! allocations fast enough allocates fewer timeslots instead of timeslots its messages
//! reach too late: it degrades rather than livelocks (§8.1: a single arbiter's network
//! throughput is a bottleneck at scale).

use crate::units::{serialization_ps, Ps};

#[derive(Debug, Clone)]
pub struct TxLink {
    rate: u64,
    /// When the last byte handed to the NIC will have left it.
    free_at: Ps,
    /// When the batch being sent began to leave, and how long the last whole batch took.
    batch_start: Ps,
    last_batch: Ps,
    /// The longest its queue has been.
    pub backlog_max: Ps,
}

impl TxLink {
    /// A link of `rate` bits per second, idle.
    pub fn new(rate: u64) -> TxLink {
        TxLink {
            rate,
            free_at: 0,
            batch_start: 0,
            last_batch: 0,
            backlog_max: 0,
        }
    }

    /// No link: messages that do not cross one never wait.
    pub fn unlimited() -> TxLink {
        TxLink::new(0)
    }

    /// `bytes` on the wire handed to the NIC at `now`.
    pub fn send(&mut self, now: Ps, bytes: u32) {
        if self.rate == 0 {
            return;
        }
        self.free_at = self.free_at.max(now) + serialization_ps(bytes as u64, self.rate);
        self.backlog_max = self.backlog_max.max(self.free_at - now);
    }

    /// How long what has been sent still needs to leave, at `now`.
    pub fn backlog(&self, now: Ps) -> Ps {
        self.free_at.saturating_sub(now)
    }

    /// A batch's messages begin at `now` (the time they take is measured until the next
    /// batch begins: its allocations, and whatever else the arbiter sends meanwhile).
    pub fn batch_begins(&mut self, now: Ps) {
        self.last_batch = self.free_at.max(self.batch_start) - self.batch_start;
        self.batch_start = self.free_at.max(now);
    }

    /// Whether a batch allocated at `now` can have left the NIC within half of `lead`:
    /// what is queued, plus what the last batch took (the next is about as large: the
    /// same endpoints, mostly, with demand). A batch that alone takes longer is sent
    /// when the link is idle.
    pub fn deliverable(&self, now: Ps, lead: Ps) -> bool {
        now >= self.deliverable_at(lead)
    }

    /// When [`TxLink::deliverable`] will hold again if nothing more is sent.
    pub fn deliverable_at(&self, lead: Ps) -> Ps {
        self.free_at
            .saturating_sub((lead / 2).saturating_sub(self.last_batch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1250 bytes at 10 Gb/s take 1 us; the queue drains at the link's rate.
    #[test]
    fn the_clock_runs_at_the_links_rate() {
        let mut l = TxLink::new(10_000_000_000);
        l.send(0, 1250);
        l.send(0, 1250);
        assert_eq!(l.backlog(0), 2_000_000);
        assert_eq!(l.backlog(1_500_000), 500_000);
        assert_eq!(l.backlog(3_000_000), 0);
        // Idle time is not credited: a message after a gap starts when it is sent.
        l.send(10_000_000, 1250);
        assert_eq!(l.backlog(10_000_000), 1_000_000);
        assert_eq!(l.backlog_max, 2_000_000);
    }

    /// A batch is deliverable while the queue and the last batch's time fit in half the
    /// lead, and becomes so again once the queue has drained far enough.
    #[test]
    fn a_batch_waits_for_the_link_to_drain() {
        let lead = 64_000_000;
        let mut l = TxLink::new(10_000_000_000);
        l.batch_begins(0);
        for _ in 0..10 {
            l.send(0, 1250); // a 10 us batch
        }
        l.batch_begins(0);
        // 10 us queued and a 10 us batch: within 32 us.
        assert!(l.deliverable(0, lead));
        assert!(!l.deliverable(0, lead / 2));
        for _ in 0..30 {
            l.send(0, 1250); // 30 us more
        }
        assert!(!l.deliverable(0, lead));
        let at = l.deliverable_at(lead);
        assert_eq!(at, 40_000_000 + 10_000_000 - 32_000_000);
        assert!(l.deliverable(at, lead));
        assert!(!l.deliverable(at - 1, lead));
        // A batch longer than half the lead goes when the link is idle.
        l.batch_begins(at);
        assert!(!l.deliverable(39_999_999, lead / 4));
        assert!(l.deliverable(40_000_000, lead / 4));
    }
}
