//! A rack-to-rack traffic matrix (`workload.matrix`): which pair of racks each flow goes
//! between, by weight, its hosts drawn uniformly in each (parsimon-eval's
//! `workload/src/spatial.rs`); and the arrival rate that loads the busiest link to a
//! given utilization (`workload.max_link_load`), worked out from the matrix and the
//! routes before the run.
//!
//! A rack is the set of hosts under one switch (a leaf, a fat tree's edge switch, a Clos
//! rack switch), numbered in the order of their first host. The file is the matrix as
//! text: a row a line for each source rack, a weight a destination rack, whitespace
//! between; `#` starts a comment.

use crate::fabric::Fabric;
use crate::rng::Rng;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone)]
pub struct RackMatrix {
    /// The hosts of each rack.
    racks: Vec<Vec<u32>>,
    /// (source rack, destination rack) of each pair with weight, and the running sum of
    /// the weights up to and including it.
    pairs: Vec<(u32, u32)>,
    cum: Vec<f64>,
}

impl RackMatrix {
    /// The racks of hosts `0..hosts`, each host's switch given by `switch_of`.
    pub fn racks_of(hosts: u32, switch_of: impl Fn(u32) -> u32) -> Vec<Vec<u32>> {
        let mut index = HashMap::new();
        let mut racks: Vec<Vec<u32>> = Vec::new();
        for h in 0..hosts {
            let r = *index.entry(switch_of(h)).or_insert_with(|| {
                racks.push(Vec::new());
                racks.len() - 1
            });
            racks[r].push(h);
        }
        racks
    }

    /// Reads the matrix over `racks`. Errors name the line.
    pub fn parse(text: &str, racks: Vec<Vec<u32>>) -> Result<RackMatrix, String> {
        let n = racks.len();
        let mut rows = Vec::with_capacity(n);
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let row = line
                .split_whitespace()
                .map(|w| {
                    w.parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite() && *x >= 0.0)
                        .ok_or_else(|| {
                            format!("line {}: '{w}' is not a non-negative weight", i + 1)
                        })
                })
                .collect::<Result<Vec<f64>, String>>()?;
            if row.len() != n {
                return Err(format!(
                    "line {}: {} weights; the topology has {n} racks",
                    i + 1,
                    row.len()
                ));
            }
            rows.push(row);
        }
        if rows.len() != n {
            return Err(format!("{} rows; the topology has {n} racks", rows.len()));
        }
        let (mut pairs, mut cum, mut total) = (Vec::new(), Vec::new(), 0.0);
        for (a, row) in rows.iter().enumerate() {
            for (b, &w) in row.iter().enumerate() {
                if w == 0.0 {
                    continue;
                }
                if a == b && racks[a].len() < 2 {
                    return Err(format!(
                        "rack {a} has one host: it cannot send to itself (row {a}, column {b})"
                    ));
                }
                total += w;
                pairs.push((a as u32, b as u32));
                cum.push(total);
            }
        }
        if pairs.is_empty() {
            return Err("every weight is 0".into());
        }
        Ok(RackMatrix { racks, pairs, cum })
    }

    pub fn rack_count(&self) -> usize {
        self.racks.len()
    }

    /// A flow's (source, destination) hosts: a pair of racks by weight, a host uniformly
    /// in each (redrawn until they differ).
    pub fn sample(&self, rng: &mut Rng) -> (u32, u32) {
        let total = *self.cum.last().expect("a matrix has a pair");
        let x = rng.next_f64() * total;
        let i = self
            .cum
            .partition_point(|&c| c <= x)
            .min(self.pairs.len() - 1);
        let (a, b) = self.pairs[i];
        let (ra, rb) = (&self.racks[a as usize], &self.racks[b as usize]);
        let src = ra[rng.below(ra.len() as u64) as usize];
        loop {
            let dst = rb[rng.below(rb.len() as u64) as usize];
            if dst != src {
                return (src, dst);
            }
        }
    }

    /// The share of all flows' bytes each port sends (by the fabric's port index), were
    /// every flow split evenly over its equal-cost next hops, as ECMP spreads many.
    pub fn port_shares(&self, fabric: &Fabric) -> Vec<f64> {
        let total = *self.cum.last().expect("a matrix has a pair");
        let mut share = vec![0.0; fabric.all_ports().len()];
        let switch_of = |h: u32| fabric.ports(h)[0].peer;
        let mut prev = 0.0;
        let (mut frontier, mut next) = (BTreeMap::new(), BTreeMap::new());
        for (&(a, b), &c) in self.pairs.iter().zip(&self.cum) {
            let p = (c - prev) / total;
            prev = c;
            let (ra, rb) = (&self.racks[a as usize], &self.racks[b as usize]);
            // Every source host of the rack its part up, every destination its part down.
            for &h in ra {
                share[fabric.first_port(h)] += p / ra.len() as f64;
            }
            let (top, bottom) = (switch_of(ra[0]), switch_of(rb[0]));
            for &h in rb {
                let port = fabric
                    .ports(bottom)
                    .iter()
                    .position(|e| e.peer == h)
                    .expect("a host's switch has a port to it");
                share[fabric.first_port(bottom) + port] += p / rb.len() as f64;
            }
            // Between the two racks' switches, split at each by its next hops toward
            // the rack's first host (every host of a rack is routed alike above it).
            frontier.clear();
            frontier.insert(top, p);
            let d = rb[0];
            while !frontier.is_empty() {
                next.clear();
                for (&node, &amount) in frontier.iter() {
                    if node == bottom {
                        continue;
                    }
                    let hops = fabric.routes().next_hops(node, d);
                    let part = amount / hops.len() as f64;
                    for &port in hops {
                        share[fabric.first_port(node) + port as usize] += part;
                        let peer = fabric.ports(node)[port as usize].peer;
                        *next.entry(peer).or_insert(0.0) += part;
                    }
                }
                std::mem::swap(&mut frontier, &mut next);
            }
        }
        share
    }

    /// Flows per second at which the busiest port carries `max_load` of its rate, each
    /// flow `mean_bytes` on average: min over ports of max_load × rate / (8 × mean ×
    /// share).
    pub fn rate_for_max_load(&self, fabric: &Fabric, max_load: f64, mean_bytes: f64) -> f64 {
        self.port_shares(fabric)
            .iter()
            .zip(fabric.all_ports())
            .filter(|(s, _)| **s > 0.0)
            .map(|(s, e)| max_load * e.rate as f64 / (8.0 * mean_bytes * s))
            .fold(f64::INFINITY, f64::min)
    }
}
