//! Incast rounds: many senders to one receiver (or every host to every other), round
//! after round, each round's group one query.

use super::flow::{NewFlow, QueryRecord, CLASS_INCAST};
use super::spec::IncastSpec;
use crate::rng::Rng;
use crate::units::Ps;
use std::collections::VecDeque;

/// One receiver and its senders within an incast round.
pub struct IncastGroup {
    receiver: u32,
    senders: Vec<u32>,
    size: u64,
}

impl IncastGroup {
    /// One group: `senders` senders, spread over `sources` in turn, to `receiver`.
    pub fn many_to_one(receiver: u32, sources: &[u32], senders: u32, size: u64) -> Vec<Self> {
        vec![IncastGroup {
            receiver,
            senders: (0..senders)
                .map(|i| sources[i as usize % sources.len()])
                .collect(),
            size,
        }]
    }

    /// A group per host: each receives `size` in total, evenly from every other host.
    pub fn all_to_all(hosts: u32, size: u64) -> Vec<Self> {
        let per = (size / (hosts as u64 - 1)).max(1);
        (0..hosts)
            .map(|r| IncastGroup {
                receiver: r,
                senders: (0..hosts).filter(|&h| h != r).collect(),
                size: per,
            })
            .collect()
    }
}

/// Incast rounds. Each round every group's senders send `size` bytes to the group's
/// receiver (one group for many-to-one, one per host for all-to-all); each group is one
/// query. Each sender starts at the round's start plus a uniform jitter in [0, jitter),
/// so that senders are not synchronized to the picosecond (as no two servers are).
pub struct Incast {
    groups: Vec<IncastGroup>,
    rounds: u32,
    period: Option<Ps>,
    jitter: Ps,
    next_round: u32,
    next_round_time: Option<Ps>,
    /// Sender starts not yet due: (time, group, sender index, round), time-ordered.
    starts: VecDeque<(Ps, u32, u32, u32)>,
    /// Open queries: (query id, start, flows still arriving).
    open: Vec<(u64, Ps, u32)>,
    /// Open rounds: (round, queries still open).
    open_rounds: Vec<(u32, u32)>,
    rng: Rng,
}

impl Incast {
    /// `rounds` rounds of `groups`, every `period` or (without one) each when the last
    /// has completed; the first starts at once.
    pub fn new(spec: &IncastSpec, hosts: u32, rng: Rng) -> Incast {
        let groups = if spec.all_to_all {
            IncastGroup::all_to_all(hosts, spec.size)
        } else {
            IncastGroup::many_to_one(spec.receiver, &spec.sources, spec.senders, spec.size)
        };
        Incast {
            groups,
            rounds: spec.rounds,
            period: spec.period,
            jitter: spec.jitter,
            next_round: 0,
            next_round_time: Some(0),
            starts: VecDeque::new(),
            open: Vec::new(),
            open_rounds: Vec::new(),
            rng,
        }
    }

    pub fn next_time(&self) -> Option<Ps> {
        match (self.starts.front(), self.next_round_time) {
            (Some(&(t, ..)), Some(r)) => Some(t.min(r)),
            (Some(&(t, ..)), None) => Some(t),
            (None, r) => r,
        }
    }

    /// Queries begun and not yet complete (a round's groups from its start).
    pub fn open_queries(&self) -> u64 {
        self.open.len() as u64
    }

    pub fn exhausted(&self) -> bool {
        self.next_round_time.is_none() && self.starts.is_empty() && self.open.is_empty()
    }

    fn query_id(&self, round: u32, group: u32) -> u64 {
        round as u64 * self.groups.len() as u64 + group as u64
    }

    pub fn generate(&mut self, now: Ps, out: &mut Vec<NewFlow>) {
        if self.next_round_time.is_some_and(|t| t <= now) {
            let round = self.next_round;
            let mut starts = Vec::new();
            for (g, group) in self.groups.iter().enumerate() {
                for i in 0..group.senders.len() as u32 {
                    let j = if self.jitter > 0 {
                        self.rng.below(self.jitter)
                    } else {
                        0
                    };
                    starts.push((now + j, g as u32, i, round));
                }
                let q = self.query_id(round, g as u32);
                self.open.push((q, now, group.senders.len() as u32));
            }
            starts.sort_unstable();
            // With a period shorter than the jitter, rounds overlap: keep the queue in
            // time order, which `next_time` and the loop below rely on.
            let overlaps = self
                .starts
                .back()
                .zip(starts.first())
                .is_some_and(|(last, first)| last > first);
            self.starts.extend(starts);
            if overlaps {
                self.starts.make_contiguous().sort_unstable();
            }
            self.open_rounds.push((round, self.groups.len() as u32));
            self.next_round += 1;
            self.next_round_time = match self.period {
                Some(p) if self.next_round < self.rounds => Some(now + p),
                _ => None, // closed loop: the next round starts when this one completes
            };
        }
        while let Some(&(t, g, i, round)) = self.starts.front() {
            if t > now {
                break;
            }
            self.starts.pop_front();
            let group = &self.groups[g as usize];
            let q = self.query_id(round, g);
            out.push(NewFlow {
                src: group.senders[i as usize],
                dst: group.receiver,
                size: group.size,
                class: CLASS_INCAST,
                query: q,
                tag: q,
                priority: None,
            });
        }
    }

    pub fn on_flow_done(&mut self, now: Ps, tag: u64, queries: &mut Vec<QueryRecord>) {
        let Some(i) = self.open.iter().position(|r| r.0 == tag) else {
            return;
        };
        self.open[i].2 -= 1;
        if self.open[i].2 > 0 {
            return;
        }
        let (q, start, _) = self.open.remove(i);
        let group = &self.groups[(q % self.groups.len() as u64) as usize];
        queries.push(QueryRecord {
            query_id: q,
            start,
            finish: now,
            size_bytes: group.size * group.senders.len() as u64,
            flows: group.senders.len() as u32,
            parent: None,
        });
        let round = (q / self.groups.len() as u64) as u32;
        let r = self
            .open_rounds
            .iter()
            .position(|r| r.0 == round)
            .expect("open round");
        self.open_rounds[r].1 -= 1;
        if self.open_rounds[r].1 == 0 {
            self.open_rounds.remove(r);
            if self.period.is_none() && self.next_round < self.rounds {
                self.next_round_time = Some(now);
            }
        }
    }
}
