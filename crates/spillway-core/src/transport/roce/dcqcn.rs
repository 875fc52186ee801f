//! DCQCN's reaction point (DCQCN §3.2) as the HPCC simulator runs it (`CC_MODE` 1, its
//! Mellanox CX-4 model, `RdmaHw::*Mlx`): idle until the first CNP; then α on its own
//! period, a cut at most once per decrease interval while a CNP is pending, and the
//! increase timer's fast recovery, additive and hyper increase. No byte counter.
//!
//! The timers are periodic but most of their events change nothing (α decays, no CNP is
//! pending): instead of an event each, [`Dcqcn::advance`] replays every event due by
//! `now`, in time order, whenever the sender looks at its rate, and skips runs of events
//! that do nothing in one step. The rate a packet is sent at is the one its send time
//! gives.

use super::config::DcqcnConfig;
use crate::units::Ps;

/// The simulator offsets the decrease check 1 ns after the α update due at the same time.
const DECREASE_OFFSET: Ps = 1_000;

#[derive(Debug, Clone)]
pub struct Dcqcn {
    cfg: DcqcnConfig,
    /// A CNP has arrived (the timers run from the first).
    started: bool,
    pub(super) alpha: f64,
    /// R_T, bit/s.
    pub(super) target: f64,
    /// Increase events since the last cut.
    pub(super) stage: u32,
    /// A CNP arrived since α's last update; since the last decrease check.
    cnp_alpha: bool,
    cnp_decrease: bool,
    next_alpha: Ps,
    next_decrease: Ps,
    /// The increase timer, armed by the first cut.
    next_increase: Ps,
    cuts: u32,
}

impl Dcqcn {
    pub fn new(cfg: DcqcnConfig) -> Self {
        Dcqcn {
            cfg,
            started: false,
            alpha: 1.0,
            target: 0.0,
            stage: 0,
            cnp_alpha: false,
            cnp_decrease: false,
            next_alpha: Ps::MAX,
            next_decrease: Ps::MAX,
            next_increase: Ps::MAX,
            cuts: 0,
        }
    }

    /// Rate cuts so far.
    pub fn cuts(&self) -> u32 {
        self.cuts
    }

    /// A CNP-flagged ACK arrived at `now` (after [`Dcqcn::advance`] to `now`).
    pub fn on_cnp(&mut self, now: Ps, rate: f64) {
        self.cnp_alpha = true;
        self.cnp_decrease = true;
        if !self.started {
            // `cnp_received_mlx`: α = 1, both timers start; the target is the rate
            // (RATE_ON_FIRST_CNP = 1: no cut yet).
            self.started = true;
            self.alpha = 1.0;
            self.cnp_alpha = false;
            self.next_alpha = now + self.cfg.alpha_interval;
            self.next_decrease = now + self.cfg.decrease_interval + DECREASE_OFFSET;
            self.target = rate;
        }
    }

    /// Every timer event due by `now`, in time order, applied to `rate` (bit/s).
    /// Events due at the same instant run in the order the simulator's event queue gives
    /// them, the one scheduled first first: α's (its check is 1 ns later), then of the
    /// increase timer's and the decrease check's the one with the longer period (the
    /// check first when they are equal: a cut arms the next check before the timer).
    pub fn advance(&mut self, now: Ps, rate: &mut f64, line: f64, min_rate: f64) {
        let c = self.cfg;
        let increase_first = c.increase_interval > c.decrease_interval;
        loop {
            let t = self
                .next_alpha
                .min(self.next_increase)
                .min(self.next_decrease);
            if t > now {
                return;
            }
            let increase = t == self.next_increase && (increase_first || self.next_decrease != t);
            if t == self.next_alpha {
                if self.cnp_alpha {
                    self.alpha = (1.0 - c.g) * self.alpha + c.g;
                    self.cnp_alpha = false;
                    self.next_alpha += c.alpha_interval;
                } else {
                    // Decays up to `now`, or up to a pending cut, which reads α.
                    let limit = if self.cnp_decrease {
                        now.min(self.next_decrease)
                    } else {
                        now
                    };
                    let k = (limit.saturating_sub(t) / c.alpha_interval + 1).min(i32::MAX as u64);
                    self.alpha *= (1.0 - c.g).powi(k as i32);
                    self.next_alpha += k * c.alpha_interval;
                }
            } else if increase {
                self.next_increase += c.increase_interval;
                if self.stage > c.fast_recovery && self.target >= line && *rate >= line {
                    // Nothing left to raise: the remaining ticks only count.
                    let k = (now - t) / c.increase_interval;
                    self.next_increase += k * c.increase_interval;
                    self.stage = self.stage.saturating_add(k as u32 + 1);
                    continue;
                }
                self.increase(rate, line);
            } else if self.cnp_decrease {
                self.next_decrease += c.decrease_interval;
                // `CheckRateDecreaseMlx`: the target keeps its value after a cut that
                // followed a cut, unless clamped.
                if c.clamp_target || self.stage != 0 {
                    self.target = *rate;
                }
                *rate = (*rate * (1.0 - self.alpha / 2.0)).max(min_rate);
                self.stage = 0;
                self.cnp_decrease = false;
                self.next_increase = t + c.increase_interval;
                self.cuts += 1;
            } else {
                // No CNP pending: the checks up to `now` find nothing.
                let k = (now - t) / c.decrease_interval + 1;
                self.next_decrease += k * c.decrease_interval;
            }
        }
    }

    /// One increase event (`RateIncEventMlx`): fast recovery toward the target, then
    /// additive, then hyper increase of the target.
    fn increase(&mut self, rate: &mut f64, line: f64) {
        let c = self.cfg;
        if self.stage == c.fast_recovery {
            self.target = (self.target + c.rate_ai).min(line);
        } else if self.stage > c.fast_recovery {
            self.target = (self.target + c.rate_hai).min(line);
        }
        *rate = *rate / 2.0 + self.target / 2.0;
        self.stage = self.stage.saturating_add(1);
    }
}
