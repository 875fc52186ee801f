//! Closed-loop background flows (DeTail §8.1.2: "each server also has an average of 1
//! long delay-insensitive low-priority flow of 1MB"): every host keeps one flow of a
//! fixed size to a random other host running, the next starting as the last one's
//! receiver gets its last byte. The hosts that keep flows and those the flows go to can
//! be restricted (DeTail §8.2: "each front-end server is constantly engaged in a 1MB
//! background flow to a randomly selected back-end server").

use super::flow::{NewFlow, CLASS_BACKGROUND, NO_QUERY};
use super::spec::ClosedLoopSpec;
use crate::rng::Rng;
use crate::units::Ps;

pub struct ClosedLoop {
    size: u64,
    class: u8,
    sources: Vec<u32>,
    destinations: Vec<u32>,
    /// The destinations are hosts 0..n and include every source (so the draw of one of
    /// the n - 1 others can skip the source by index).
    all_hosts: bool,
    /// The first flows (one per host) have started.
    started: bool,
    rng: Rng,
}

impl ClosedLoop {
    pub fn new(s: &ClosedLoopSpec, rng: Rng) -> ClosedLoop {
        ClosedLoop {
            size: s.size,
            class: s.class,
            sources: s.sources.clone(),
            destinations: s.destinations.clone(),
            all_hosts: s
                .destinations
                .iter()
                .enumerate()
                .all(|(k, &d)| d == k as u32)
                && s.sources
                    .iter()
                    .all(|&h| (h as usize) < s.destinations.len()),
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
        for k in 0..self.sources.len() {
            let h = self.sources[k];
            out.push(self.flow(h, tag(h)));
        }
    }

    /// Host `src`'s next flow, its last one having arrived.
    pub fn flow(&mut self, src: u32, tag: u64) -> NewFlow {
        // Uniform over the destinations other than the source (one exists: checked when
        // the scenario was read). Drawn as before when every host is a destination.
        let dst = if self.all_hosts {
            let d = self.rng.below(self.destinations.len() as u64 - 1) as u32;
            if d >= src {
                d + 1
            } else {
                d
            }
        } else {
            loop {
                let d = self.destinations[self.rng.below(self.destinations.len() as u64) as usize];
                if d != src {
                    break d;
                }
            }
        };
        NewFlow {
            src,
            dst,
            size: self.size,
            class: CLASS_BACKGROUND,
            query: NO_QUERY,
            tag,
            priority: Some(self.class),
        }
    }
}
