//! Independent checks of an allocated batch, from first principles (the definitions in
//! Fastpass §3 and footnote 2), not from the allocator's own bookkeeping.

#![allow(dead_code)]

use spillway_arbiter::{Batch, DemandTable, Fabric, Flow, Mode, Policy};
use std::collections::HashMap;

/// What the demand table said about every pair before a batch.
pub struct Snapshot {
    pub n: usize,
    pub remaining: Vec<u64>,
    pub requested: Vec<u64>,
    pub allocated: Vec<u64>,
    /// Max-min key: last allocated timeslot + 1, or 0 if never.
    pub key: Vec<u64>,
    pub present: Vec<bool>,
}

pub fn flow(n: usize, i: usize) -> Flow {
    Flow {
        src: (i / n) as u32,
        dst: (i % n) as u32,
    }
}

impl Snapshot {
    pub fn take(d: &DemandTable) -> Self {
        let n = d.endpoints();
        let all = (0..n * n).map(|i| flow(n, i));
        let mut s = Snapshot {
            n,
            remaining: vec![],
            requested: vec![],
            allocated: vec![],
            key: vec![],
            present: (0..n as u32).map(|e| d.present(e).unwrap()).collect(),
        };
        for f in all {
            s.remaining.push(if f.src == f.dst {
                0
            } else {
                d.remaining(f).unwrap()
            });
            s.requested.push(if f.src == f.dst {
                0
            } else {
                d.requested(f).unwrap()
            });
            s.allocated.push(if f.src == f.dst {
                0
            } else {
                d.allocated(f).unwrap()
            });
            s.key
                .push(d.last_allocated(f).unwrap().map_or(0, |t| t + 1));
        }
        s
    }
    fn idx(&self, f: Flow) -> usize {
        f.src as usize * self.n + f.dst as usize
    }
}

/// Check one batch. `Policy` decides what "maximal for its policy" means; in iterative
/// mode only plain maximality is required (plus the comparison with greedy elsewhere).
pub fn check_batch(
    fabric: &Fabric,
    policy: Policy,
    mode: Mode,
    before: &Snapshot,
    batch: &Batch,
    after: &DemandTable,
) -> Result<(), String> {
    let n = before.n;
    let w = batch.width() as usize;
    let rack = |e: u32| fabric.rack_of(e).unwrap() as usize;
    let racks = fabric.racks_len();
    // Per slot: who sends, who receives, rack loads.
    let mut src_at = vec![vec![None::<Flow>; n]; w];
    let mut dst_at = vec![vec![None::<Flow>; n]; w];
    let mut up = vec![vec![vec![]; racks]; w];
    let mut down = vec![vec![vec![]; racks]; w];
    let mut got: HashMap<Flow, Vec<usize>> = HashMap::new();
    for g in batch.grants() {
        let k = g.slot as usize;
        let f = g.flow();
        if k >= w {
            return Err(format!("grant {g:?} outside the batch of {w}"));
        }
        if f.src == f.dst || f.src as usize >= n || f.dst as usize >= n {
            return Err(format!("grant {g:?} is not a pair of distinct endpoints"));
        }
        if !before.present[f.src as usize] || !before.present[f.dst as usize] {
            return Err(format!("grant {g:?} to an endpoint that has left"));
        }
        if let Some(o) = src_at[k][f.src as usize].replace(f) {
            return Err(format!(
                "source {} twice in slot {k}: {o:?} and {f:?}",
                f.src
            ));
        }
        if let Some(o) = dst_at[k][f.dst as usize].replace(f) {
            return Err(format!(
                "destination {} twice in slot {k}: {o:?} and {f:?}",
                f.dst
            ));
        }
        if rack(f.src) != rack(f.dst) {
            up[k][rack(f.src)].push(f);
            down[k][rack(f.dst)].push(f);
        }
        got.entry(f).or_default().push(k);
    }
    for k in 0..w {
        for r in 0..racks {
            if up[k][r].len() > fabric.up_cap(r as u32).unwrap() as usize {
                return Err(format!(
                    "rack {r} uplink over capacity in slot {k}: {:?}",
                    up[k][r]
                ));
            }
            if down[k][r].len() > fabric.down_cap(r as u32).unwrap() as usize {
                return Err(format!("rack {r} downlink over capacity in slot {k}"));
            }
        }
    }
    // Conservation: allocated + pending = requested, and grants = what was taken.
    for i in 0..n * n {
        let f = flow(n, i);
        if f.src == f.dst {
            continue;
        }
        let g = got.get(&f).map_or(0, |v| v.len()) as u64;
        if g > before.remaining[i] {
            return Err(format!(
                "{f:?} got {g} slots but only {} pending",
                before.remaining[i]
            ));
        }
        if after.allocated(f).unwrap() != before.allocated[i] + g {
            return Err(format!("{f:?}: allocated count does not match grants"));
        }
        if after.allocated(f).unwrap() + after.remaining(f).unwrap() != after.requested(f).unwrap()
        {
            return Err(format!(
                "{f:?}: allocated {} + pending {} != requested {}",
                after.allocated(f).unwrap(),
                after.remaining(f).unwrap(),
                after.requested(f).unwrap()
            ));
        }
    }
    // Maximality (and policy order): a pair with demand left that is not in slot k must
    // be blocked there by a saturated resource, held by pairs of higher priority.
    let batch_first = batch.first_timeslot();
    for i in 0..n * n {
        let f = flow(n, i);
        if f.src == f.dst || before.remaining[i] == 0 {
            continue;
        }
        if !before.present[f.src as usize] || !before.present[f.dst as usize] {
            continue;
        }
        let mine = got.get(&f).cloned().unwrap_or_default();
        for k in 0..w {
            let before_k = mine.iter().filter(|&&x| x < k).count() as u64;
            let has_demand_at_k = before.remaining[i] > before_k;
            // Maximal at the end: with demand left, no free slot may remain for it.
            let left = before.remaining[i] - mine.len() as u64;
            if mine.contains(&k) || (!has_demand_at_k && left == 0) {
                continue;
            }
            // Priority of a pair at slot k.
            let key_at = |g: Flow| -> (u64, u64, u32, u32) {
                let gi = before.idx(g);
                match policy {
                    Policy::MaxMin => {
                        let last = got
                            .get(&g)
                            .and_then(|v| v.iter().filter(|&&x| x < k).max().copied());
                        let key = last.map_or(before.key[gi], |x| batch_first + x as u64 + 1);
                        (key, 0, 0, 0)
                    }
                    Policy::MinFct => (before.remaining[gi], before.key[gi], g.src, g.dst),
                }
            };
            let mut blockers: Vec<Vec<Flow>> = vec![];
            if let Some(o) = src_at[k][f.src as usize] {
                blockers.push(vec![o]);
            }
            if let Some(o) = dst_at[k][f.dst as usize] {
                blockers.push(vec![o]);
            }
            let (rs, rd) = (rack(f.src), rack(f.dst));
            if rs != rd {
                if up[k][rs].len() >= fabric.up_cap(rs as u32).unwrap() as usize {
                    blockers.push(up[k][rs].clone());
                }
                if down[k][rd].len() >= fabric.down_cap(rd as u32).unwrap() as usize {
                    blockers.push(down[k][rd].clone());
                }
            }
            if blockers.is_empty() {
                if left > 0 {
                    return Err(format!(
                        "not maximal: {f:?} has {left} pending but slot {k} is free for it"
                    ));
                }
                if mode == Mode::Greedy {
                    return Err(format!(
                        "policy order: {f:?} had demand at slot {k} and it was free"
                    ));
                }
                continue;
            }
            if mode == Mode::Greedy && has_demand_at_k {
                let me = key_at(f);
                let ok = blockers.iter().any(|set| {
                    set.iter().all(|&g| match policy {
                        Policy::MaxMin => key_at(g) <= me,
                        Policy::MinFct => key_at(g) < me,
                    })
                });
                if !ok {
                    return Err(format!(
                        "policy order: {f:?} (key {me:?}) lost slot {k} to lower-priority pairs {blockers:?}"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Grants per pair in a batch.
pub fn grant_counts(batch: &Batch) -> HashMap<Flow, u64> {
    let mut m = HashMap::new();
    for g in batch.grants() {
        *m.entry(g.flow()).or_insert(0) += 1;
    }
    m
}
