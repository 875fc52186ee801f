//! The Poisson arrival process the open-loop generators share: exponential gaps on an
//! exact clock, with an optional limit on how many arrivals there are.

use crate::rng::Rng;
use crate::units::{Ps, PS_PER_S};

pub struct Arrivals {
    mean_gap_ps: f64,
    /// Exact arrival clock in ps as f64, so rounding does not accumulate.
    clock: f64,
    /// The clock rounded: when the next arrival is due.
    next_time: Ps,
    remaining: u64,
}

impl Arrivals {
    /// Arrivals at `rate` per second, at most `limit` of them. The first is drawn now, so
    /// the caller's stream is consumed in the same order as it always was: the first gap
    /// at construction, then one after each arrival.
    pub fn new(rate: f64, limit: Option<u64>, rng: &mut Rng) -> Arrivals {
        let mut a = Arrivals {
            mean_gap_ps: PS_PER_S as f64 / rate,
            clock: 0.0,
            next_time: 0,
            remaining: limit.unwrap_or(u64::MAX),
        };
        a.draw(rng);
        a
    }

    fn draw(&mut self, rng: &mut Rng) {
        self.clock += rng.exp(self.mean_gap_ps);
        self.next_time = self.clock.round() as Ps;
    }

    /// When the next arrival is due, if any is left.
    pub fn next_time(&self) -> Option<Ps> {
        (self.remaining > 0).then_some(self.next_time)
    }

    /// An arrival is due at or before `now`.
    pub fn due(&self, now: Ps) -> bool {
        self.remaining > 0 && self.next_time <= now
    }

    /// The due arrival has been served: count it and draw the next gap.
    pub fn advance(&mut self, rng: &mut Rng) {
        self.remaining -= 1;
        self.draw(rng);
    }

    /// Every arrival the limit allows has come.
    pub fn exhausted(&self) -> bool {
        self.remaining == 0
    }
}
