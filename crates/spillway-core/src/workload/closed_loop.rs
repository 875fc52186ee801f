//! Closed-loop background flows (DeTail §8.1.2: "each server also has an average of 1
//! long delay-insensitive low-priority flow of 1MB"): every host keeps one flow of a
//! fixed size to a random other host running, the next starting as the last one's
//! receiver gets its last byte.

use super::flow::{NewFlow, CLASS_BACKGROUND, NO_QUERY};
use super::spec::ClosedLoopSpec;
use crate::rng::Rng;
use crate::units::Ps;

pub struct ClosedLoop {
    size: u64,
    class: u8,
    hosts: u32,
    /// The first flows (one per host) have started.
    started: bool,
    rng: Rng,
}

impl ClosedLoop {
    pub fn new(s: &ClosedLoopSpec, hosts: u32, rng: Rng) -> ClosedLoop {
        ClosedLoop {
            size: s.size,
            class: s.class,
            hosts,
            started: false,
            rng,
        }
    }

    /// The first flows start at time 0.
    pub fn next_time(&self) -> Option<Ps> {
        (!self.started).then_some(0)
    }

    /// Every host's first flow, if not started yet.
    pub fn generate(&mut self, out: &mut Vec<NewFlow>, tag: impl Fn(u32) -> u64) {
        if self.started {
            return;
        }
        self.started = true;
        for h in 0..self.hosts {
            out.push(self.flow(h, tag(h)));
        }
    }

    /// Host `src`'s next flow, its last one having arrived.
    pub fn flow(&mut self, src: u32, tag: u64) -> NewFlow {
        // Uniform over the other hosts.
        let d = self.rng.below(self.hosts as u64 - 1) as u32;
        NewFlow {
            src,
            dst: if d >= src { d + 1 } else { d },
            size: self.size,
            class: CLASS_BACKGROUND,
            query: NO_QUERY,
            tag,
            priority: Some(self.class),
        }
    }
}
