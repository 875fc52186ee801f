//! FastLane, transport half (FastLane §3.4): what a source does with drop notifications.
//!
//! Both TCP and pFabric keep the paper's table of notified segments — (segment,
//! attempts, in flight) — walked in sequence order, and resend from it while the number
//! of retransmissions in flight stays under `max_sim`. They differ in how `max_sim`
//! moves and what gates a resend:
//!
//! - TCP (§3.4.1, Fig. 5): `max_sim` starts at half the congestion window and halves
//!   whenever a packet is notified again (a ping-pong retransmission); no new data is sent
//!   while the table is non-empty; when it empties the window becomes half of what it was
//!   on entering recovery. A notification for the lowest outstanding segment is resent at
//!   once, so cumulative ACKs never stall behind a throttled hole.
//! - pFabric (§3.4.2): every notification resets `max_sim` to 1 and first sends a probe;
//!   resends start once the probe is acknowledged (congestion has passed), and `max_sim`
//!   doubles with every successful retransmission, as slow start would.
//!
//! The scoreboard ([`super::scoreboard`]) marks notified segments lost, so they leave the
//! pipe at once; this module only decides which to resend and when.

/// How a sender reacts to notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotifyMode {
    Tcp,
    Probe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub seg: u64,
    pub attempts: u8,
    pub in_flight: bool,
}

#[derive(Debug, Clone)]
pub struct Recovery {
    mode: NotifyMode,
    /// Sorted by segment.
    entries: Vec<Entry>,
    max_sim: u64,
    in_flight: u64,
    /// Congestion window (bytes) when the table last went from empty to non-empty.
    entry_cwnd: u64,
    /// pFabric: resends wait for the probe's acknowledgement.
    gate_open: bool,
    /// Times the table was entered (recovery episodes).
    episodes: u32,
}

impl Recovery {
    pub fn new(mode: NotifyMode) -> Self {
        Recovery {
            mode,
            entries: Vec::new(),
            max_sim: 0,
            in_flight: 0,
            entry_cwnd: 0,
            gate_open: mode == NotifyMode::Tcp,
            episodes: 0,
        }
    }

    pub fn mode(&self) -> NotifyMode {
        self.mode
    }

    /// Most retransmissions in flight at once.
    pub fn max_sim(&self) -> u64 {
        self.max_sim
    }

    /// The congestion window (bytes) when the table last went from empty to non-empty.
    pub fn entry_cwnd(&self) -> u64 {
        self.entry_cwnd
    }

    /// Times the table was entered (recovery episodes).
    pub fn episodes(&self) -> u32 {
        self.episodes
    }

    pub fn active(&self) -> bool {
        !self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// Records a notification for segment `seg`; `cwnd`/`mss` in bytes.
    pub fn on_notify(&mut self, seg: u64, cwnd: u64, mss: u64) {
        if self.entries.is_empty() {
            self.entry_cwnd = cwnd;
            self.episodes += 1;
            self.max_sim = match self.mode {
                NotifyMode::Tcp => (cwnd / mss / 2).max(1),
                NotifyMode::Probe => 1,
            };
        }
        let repeat = match self.entries.binary_search_by_key(&seg, |e| e.seg) {
            Ok(i) => {
                let e = &mut self.entries[i];
                if e.in_flight {
                    e.in_flight = false;
                    self.in_flight -= 1;
                }
                e.attempts = e.attempts.saturating_add(1);
                e.attempts > 1
            }
            Err(i) => {
                self.entries.insert(
                    i,
                    Entry {
                        seg,
                        attempts: 1,
                        in_flight: false,
                    },
                );
                false
            }
        };
        match self.mode {
            // Fig. 5: back off multiplicatively as the same packet is dropped again.
            NotifyMode::Tcp if repeat => self.max_sim = (self.max_sim / 2).max(1),
            NotifyMode::Tcp => {}
            // §3.4.2: restart from one resend, behind a fresh probe.
            NotifyMode::Probe => {
                self.max_sim = 1;
                self.gate_open = false;
            }
        }
    }

    /// Probe mode with notified segments held until a probe is answered.
    pub fn awaits_probe(&self) -> bool {
        self.mode == NotifyMode::Probe && !self.gate_open && !self.is_empty()
    }

    /// The probe came back: congestion has passed, resends may start.
    pub fn on_probe_ack(&mut self) {
        self.gate_open = true;
    }

    /// The next segment to resend within `max_sim`, if any (lowest first).
    pub fn next_to_send(&self) -> Option<u64> {
        if !self.gate_open || self.in_flight >= self.max_sim {
            return None;
        }
        self.entries.iter().find(|e| !e.in_flight).map(|e| e.seg)
    }

    /// `seg`'s retransmission has left (it may bypass `max_sim`: the lowest segment).
    pub fn mark_sent(&mut self, seg: u64) {
        if let Ok(i) = self.entries.binary_search_by_key(&seg, |e| e.seg) {
            if !self.entries[i].in_flight {
                self.entries[i].in_flight = true;
                self.in_flight += 1;
            }
        }
    }

    pub fn contains(&self, seg: u64) -> bool {
        self.entries.binary_search_by_key(&seg, |e| e.seg).is_ok()
    }

    /// Drops the entries whose segments `delivered` says have arrived; returns true when
    /// this emptied the table (recovery is over).
    pub fn settle(&mut self, mut delivered: impl FnMut(u64) -> bool) -> bool {
        if self.entries.is_empty() {
            return false;
        }
        let mut successes = 0;
        let mut in_flight = self.in_flight;
        self.entries.retain(|e| {
            if delivered(e.seg) {
                if e.in_flight {
                    in_flight -= 1;
                    successes += 1;
                }
                false
            } else {
                true
            }
        });
        self.in_flight = in_flight;
        if self.mode == NotifyMode::Probe {
            // §3.4.2: doubles with every successful retransmission.
            for _ in 0..successes {
                self.max_sim = self.max_sim.saturating_mul(2);
            }
        }
        if self.entries.is_empty() {
            self.in_flight = 0;
            self.gate_open = self.mode == NotifyMode::Tcp;
            return true;
        }
        false
    }

    /// A timeout: everything is being resent anyway; notifications from before it are stale.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.in_flight = 0;
        self.gate_open = self.mode == NotifyMode::Tcp;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_max_sim_starts_at_half_the_window_and_halves_on_repeats() {
        let mut r = Recovery::new(NotifyMode::Tcp);
        for s in [5, 3, 9, 7] {
            r.on_notify(s, 16_000, 1_000);
        }
        assert_eq!(r.max_sim, 8);
        // Walked in sequence order.
        let mut order = Vec::new();
        while let Some(s) = r.next_to_send() {
            r.mark_sent(s);
            order.push(s);
        }
        assert_eq!(order, vec![3, 5, 7, 9]);
        r.on_notify(5, 16_000, 1_000); // the resend of 5 was dropped again
        assert_eq!(r.max_sim, 4);
        assert_eq!(r.in_flight(), 3);
        assert!(!r.settle(|s| s != 5));
        assert!(r.settle(|_| true));
        assert!(!r.active());
    }

    #[test]
    fn pfabric_waits_for_the_probe_and_doubles_on_success() {
        let mut r = Recovery::new(NotifyMode::Probe);
        for s in 0..6 {
            r.on_notify(s, 20_000, 1_000);
        }
        assert_eq!(r.next_to_send(), None, "no resend before the probe returns");
        r.on_probe_ack();
        assert_eq!(r.next_to_send(), Some(0));
        r.mark_sent(0);
        assert_eq!(r.next_to_send(), None, "max_sim starts at 1");
        r.settle(|s| s == 0);
        assert_eq!(r.max_sim, 2);
        r.mark_sent(1);
        r.mark_sent(2);
        r.settle(|s| s <= 2);
        assert_eq!(r.max_sim, 8);
        // A new notification restarts from 1 behind a new probe.
        r.on_notify(4, 20_000, 1_000);
        assert_eq!((r.max_sim, r.next_to_send()), (1, None));
    }
}
