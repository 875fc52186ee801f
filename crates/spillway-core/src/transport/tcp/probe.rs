//! pFabric's probe mode (pFabric §4.3): after `probe_after` consecutive timeouts the
//! sender stops resending and sends a header-only probe, resuming once it is answered
//! (the path delivers again). FastLane's pFabric half (§3.4.2) also probes before
//! resending notified segments.

pub struct ProbeMode {
    /// `transport.probe_after`.
    after: Option<u32>,
    consecutive_timeouts: u32,
    /// No data until the probe is answered.
    probing: bool,
    /// A probe is out and unanswered.
    out: bool,
    /// A probe should go at the next send.
    due: bool,
}

impl ProbeMode {
    pub fn new(after: Option<u32>) -> Self {
        ProbeMode {
            after,
            consecutive_timeouts: 0,
            probing: false,
            out: false,
            due: false,
        }
    }

    /// In probe mode: nothing but the probe goes.
    #[inline]
    pub fn probing(&self) -> bool {
        self.probing
    }

    #[inline]
    pub fn due(&self) -> bool {
        self.due
    }

    #[inline]
    pub fn consecutive_timeouts(&self) -> u32 {
        self.consecutive_timeouts
    }

    /// New data was acknowledged: the path delivers, which answers what a probe asks; a
    /// probe lost on the way would otherwise keep the flow silent for `probe_after` more
    /// timeouts. That probe's flag goes too, or a lost one would stop every later
    /// FastLane probe: notified segments waiting on it (`awaiting`) get a probe of their
    /// own.
    #[inline]
    pub fn on_delivery(&mut self, awaiting: bool) {
        self.consecutive_timeouts = 0;
        if self.probing {
            self.probing = false;
            if self.out {
                self.out = false;
                self.due = awaiting;
            }
        }
    }

    /// A timeout: a probe unanswered for a whole timeout is lost; after `probe_after`
    /// timeouts in a row, ask whether the path is clear before resending.
    #[inline]
    pub fn on_timeout(&mut self) {
        self.consecutive_timeouts += 1;
        self.out = false;
        if self.after.is_some_and(|n| self.consecutive_timeouts >= n) {
            self.probing = true;
            self.due = true;
        }
    }

    /// A notification asks for a probe, unless one is out.
    #[inline]
    pub fn on_notified(&mut self) {
        if !self.out {
            self.due = true;
        }
    }

    /// The probe's echo: true if it answers the probe that is out.
    #[inline]
    pub fn on_echo(&mut self) -> bool {
        if !self.out {
            return false;
        }
        self.out = false;
        self.probing = false;
        true
    }

    /// The probe was dropped (and notified): true if another should go.
    #[inline]
    pub fn on_lost(&mut self) -> bool {
        if self.out {
            self.out = false;
            self.due = true;
            return true;
        }
        false
    }

    /// The probe that is due goes now: true if there was one.
    #[inline]
    pub fn send_due(&mut self) -> bool {
        if self.due {
            self.due = false;
            self.out = true;
            return true;
        }
        false
    }
}
