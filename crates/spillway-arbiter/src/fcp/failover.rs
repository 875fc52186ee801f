//! Arbiter failover (Fastpass §5.1): the primary sends a watchdog every `watchdog`
//! (100 us); a secondary that hears none for `takeover` (1 ms) times its rank becomes the
//! primary of a fresh, higher epoch.
//!
//! Split brain (the paper is silent): epochs are strictly ordered and each belongs to one
//! arbiter (epoch `e` is owned by rank `e % arbiters`), so two arbiters never lead the
//! same epoch. An endpoint follows the highest epoch it has heard and ignores lower ones;
//! a primary that hears a higher epoch (a watchdog, or an endpoint's message) stands
//! down. What remains: allocations the old primary sent before it stood down or died,
//! for timeslots up to its lead time ahead (65 us in the paper), may still be used by
//! endpoints that have not yet heard the new epoch. The takeover wait (1 ms) is far
//! longer than that lead, so after a crash they have expired before the new primary's
//! first timeslots. A primary that was only partitioned away (alive, but its watchdogs
//! lost) keeps allocating to the endpoints still following it until it hears the higher
//! epoch; those endpoints switch as soon as anything from the new primary (its reset)
//! reaches them, so the overlap lasts until the partition heals plus one lead time.

/// Failover parameters; times in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailoverConfig {
    /// This arbiter's rank: 0 is the initial primary, 1.. secondaries in takeover order.
    pub rank: u32,
    /// How many arbiters there are (ranks `0..arbiters`).
    pub arbiters: u32,
    /// T_w: watchdog interval of the primary.
    pub watchdog: u64,
    /// T_d: silence after which rank 1 takes over (rank r waits r * T_d).
    pub takeover: u64,
}

impl FailoverConfig {
    /// The paper's numbers: T_w = 100 us, T_d = 1 ms.
    pub fn new(rank: u32, arbiters: u32) -> Self {
        FailoverConfig {
            rank,
            arbiters,
            watchdog: 100_000_000,
            takeover: 1_000_000_000,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Primary,
    Secondary,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailoverEvent {
    /// This arbiter is now the primary of `epoch`.
    TookOver { epoch: u32 },
    /// This arbiter heard `epoch`, higher than its own, and is a secondary again.
    StoodDown { epoch: u32 },
}

pub struct Failover {
    cfg: FailoverConfig,
    role: Role,
    /// The highest epoch heard (the one led, when primary).
    epoch: u32,
    last_heard: u64,
    next_watchdog: u64,
}

impl Failover {
    /// Rank 0 starts as the primary of epoch `arbiters` (epoch 0 means "none heard" to
    /// an endpoint); the others as secondaries that heard the primary at `now`.
    pub fn new(cfg: FailoverConfig, now: u64) -> Self {
        let arbiters = cfg.arbiters.max(1);
        let cfg = FailoverConfig { arbiters, ..cfg };
        let primary = cfg.rank == 0;
        Failover {
            cfg,
            role: if primary {
                Role::Primary
            } else {
                Role::Secondary
            },
            epoch: if primary { arbiters } else { 0 },
            last_heard: now,
            next_watchdog: now,
        }
    }

    pub fn role(&self) -> Role {
        self.role
    }
    pub fn epoch(&self) -> u32 {
        self.epoch
    }
    pub fn config(&self) -> &FailoverConfig {
        &self.cfg
    }

    /// A watchdog of `epoch` arrived.
    pub fn on_watchdog(&mut self, now: u64, epoch: u32) -> Option<FailoverEvent> {
        if epoch > self.epoch {
            return self.heard_higher(now, epoch);
        }
        if epoch == self.epoch && self.role == Role::Secondary {
            self.last_heard = now;
        }
        // A lower epoch: a stale primary; it stands down when it hears ours.
        None
    }

    /// Anything of `epoch` arrived (a watchdog, or an endpoint following that epoch):
    /// a higher epoch than ours makes us a secondary following it.
    pub fn heard_higher(&mut self, now: u64, epoch: u32) -> Option<FailoverEvent> {
        if epoch <= self.epoch {
            return None;
        }
        self.epoch = epoch;
        self.last_heard = now;
        if self.role == Role::Primary {
            self.role = Role::Secondary;
            Some(FailoverEvent::StoodDown { epoch })
        } else {
            None
        }
    }

    /// When the secondary takes over if it hears nothing more.
    fn takeover_at(&self) -> u64 {
        self.last_heard.saturating_add(
            self.cfg
                .takeover
                .saturating_mul(self.cfg.rank.max(1) as u64),
        )
    }

    /// The first epoch above ours that this rank owns (None past u32::MAX).
    fn next_epoch(&self) -> Option<u32> {
        let a = self.cfg.arbiters as u64;
        let r = (self.cfg.rank as u64) % a;
        let e = self.epoch as u64 + 1;
        let owned = e + (r + a - e % a) % a;
        u32::try_from(owned).ok()
    }

    /// Fire timers: a secondary's takeover. Returns the event if there is one; whether
    /// a watchdog is due is [`Failover::watchdog_due`].
    pub fn handle_timeout(&mut self, now: u64) -> Option<FailoverEvent> {
        if self.role == Role::Secondary && now >= self.takeover_at() {
            let epoch = self.next_epoch()?;
            self.epoch = epoch;
            self.role = Role::Primary;
            self.next_watchdog = now;
            return Some(FailoverEvent::TookOver { epoch });
        }
        None
    }

    /// Whether the primary should send a watchdog at `now` (then the next is due one
    /// interval later).
    pub fn watchdog_due(&mut self, now: u64) -> bool {
        if self.role == Role::Primary && now >= self.next_watchdog {
            self.next_watchdog = now.saturating_add(self.cfg.watchdog);
            true
        } else {
            false
        }
    }

    pub fn poll_timeout(&self) -> u64 {
        match self.role {
            Role::Primary => self.next_watchdog,
            Role::Secondary => self.takeover_at(),
        }
    }
}
