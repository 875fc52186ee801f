//! Routing tables: per switch and destination host, the set of egress ports a packet
//! may take (all equal-cost shortest-path next hops, or a `switch.routes` override).
//!
//! Built in time linear in the table, not in switches × hosts: a host hangs off exactly
//! one switch (its ToR), so a switch's next hops toward a host depend only on that ToR,
//! except at the ToR itself. One breadth-first search per ToR over the switch graph gives
//! every switch's sets toward it; a switch's row over destinations is then a run per
//! rack (trees number hosts rack by rack), compressed straight into a window of equal
//! blocks ([`RouteWindow`]) without ever being spelled out host by host. A fat tree with
//! k = 64 (65,536 hosts, 5,120 switches) builds in seconds; the full matrix would be 1.3 GB.

use std::collections::{HashMap, VecDeque};

/// A forwarding override (`switch.routes`): at switch `at`, packets for `to` leave
/// toward `via`.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteSpec {
    pub at: u32,
    /// Destination hosts; empty means all.
    pub to: Vec<u32>,
    /// Neighbouring nodes to forward to.
    pub via: Vec<u32>,
    /// One positive weight per `via`, when the choice is weighted per packet.
    pub weights: Option<Vec<f64>>,
}

/// Why a routing table could not be built, and the scenario key responsible:
/// `topology` for its shape, `switch.routes[...]` for overrides that fail only together.
#[derive(Debug)]
pub struct RouteError {
    pub key: String,
    pub message: String,
}

impl RouteError {
    fn topology(message: String) -> Self {
        RouteError {
            key: "topology".into(),
            message,
        }
    }
}

/// One switch's routes: destination d uses set `window_sets[first + k]` when
/// k = (d - lo) >> shift is below `count`, and set `default` otherwise.
#[derive(Debug, Clone, Copy)]
struct RouteWindow {
    lo: u32,
    shift: u32,
    count: u32,
    first: u32,
    default: u32,
}

/// A run of destinations with one port set: hosts `start..start + len` use set `set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    start: u32,
    len: u32,
    set: u32,
}

impl RouteWindow {
    #[cfg(test)]
    fn set(&self, dst: u32, window_sets: &[u32]) -> u32 {
        match self.block(dst) {
            Ok(i) => window_sets[i],
            Err(default) => default,
        }
    }

    /// Where `dst`'s set is: `Ok(i)` for `window_sets[i]`, with i in
    /// `first..first + count`, or `Err(set)` for the default set.
    #[inline(always)]
    fn block(&self, dst: u32) -> Result<usize, u32> {
        // Below `lo` wraps around to a huge block number: outside, like above the window.
        let k = (dst as u64).wrapping_sub(self.lo as u64) >> self.shift;
        if k < self.count as u64 {
            Ok(self.first as usize + k as usize)
        } else {
            Err(self.default)
        }
    }

    /// The smallest window for a switch's row of sets (one per destination host, given
    /// as runs covering `0..n` in order, neighbours with different sets): the default is
    /// the set at one end of the row, the window spans every destination with another
    /// set, and the blocks are as wide as the row allows.
    fn from_runs(runs: &[Run], window_sets: &mut Vec<u32>) -> RouteWindow {
        let first = window_sets.len() as u32;
        let (Some(head), Some(tail)) = (runs.first(), runs.last()) else {
            return RouteWindow {
                lo: 0,
                shift: 0,
                count: 0,
                first,
                default: 0,
            };
        };
        let n = (tail.start + tail.len) as usize;
        // (default, lo, hi) for each end's set; keep the narrower window.
        let span = |default: u32| {
            let lo = runs
                .iter()
                .find(|r| r.set != default)
                .map_or(n, |r| r.start as usize);
            let hi = runs
                .iter()
                .rev()
                .find(|r| r.set != default)
                .map_or(lo, |r| (r.start + r.len) as usize);
            (default, lo, hi)
        };
        let (a, b) = (span(head.set), span(tail.set));
        let (default, lo, hi) = if b.2 - b.1 < a.2 - a.1 { b } else { a };
        if lo >= hi {
            return RouteWindow {
                lo: 0,
                shift: 0,
                count: 0,
                first,
                default,
            };
        }
        // The widest blocks (a power of two, at most the row's length) each holding a
        // single set: every point inside the window where the set changes, and its end
        // (past which the default applies), must fall on a block boundary.
        let mut shift = (usize::BITS - 1 - n.leading_zeros()).min(31);
        for r in runs {
            let p = r.start as usize;
            if p > lo && p < hi {
                shift = shift.min((p - lo).trailing_zeros());
            }
        }
        if hi < n {
            shift = shift.min((hi - lo).trailing_zeros());
        }
        let count = (hi - lo).div_ceil(1 << shift);
        let mut at = runs.iter().peekable();
        for k in 0..count {
            let d = lo + (k << shift);
            while at.peek().is_some_and(|r| (r.start + r.len) as usize <= d) {
                at.next();
            }
            window_sets.push(at.peek().map_or(default, |r| r.set));
        }
        RouteWindow {
            lo: lo as u32,
            shift,
            count: count as u32,
            first,
            default,
        }
    }
}

/// The routing tables of a network: per switch a [`RouteWindow`] over the shared port
/// sets. Trees number hosts rack by rack, so a switch has a handful of blocks (its rack's
/// hosts, its pod's racks, or the pods), not one entry per host: the table stays in
/// cache as the network grows, and a lookup is a subtraction, a shift and a compare.
pub struct RouteTable {
    hosts: u32,
    windows: Vec<RouteWindow>,
    /// The blocks' sets, `windows[s].count` of them from `windows[s].first`.
    window_sets: Vec<u32>,
    /// Flattened port sets: (offset, len) into `set_ports`.
    sets: Vec<(u32, u32)>,
    set_ports: Vec<u16>,
    /// Cumulative weights of a set whose choice is weighted per packet (a
    /// `switch.routes` entry with `weights`), parallel to `sets`.
    set_weights: Vec<Option<Box<[f64]>>>,
    /// Whether any set is weighted: the hot path looks up weights only then.
    weighted: bool,
}

/// A weighted set's identity: its ports and their weights' bits.
type WeightedKey = (Box<[u16]>, Box<[u64]>);

/// Port sets shared by every switch, deduplicated: most are "all uplinks" or "one port".
#[derive(Default)]
struct SetPool {
    sets: Vec<(u32, u32)>,
    set_ports: Vec<u16>,
    set_weights: Vec<Option<Box<[f64]>>>,
    plain: HashMap<Box<[u16]>, u32>,
    weighted: HashMap<WeightedKey, u32>,
}

impl SetPool {
    fn ports(&self, id: u32) -> &[u16] {
        let (off, len) = self.sets[id as usize];
        &self.set_ports[off as usize..(off + len) as usize]
    }

    fn push(&mut self, ports: &[u16], weights: Option<Box<[f64]>>) -> u32 {
        self.sets
            .push((self.set_ports.len() as u32, ports.len() as u32));
        self.set_ports.extend_from_slice(ports);
        self.set_weights.push(weights);
        (self.sets.len() - 1) as u32
    }

    /// The id of the unweighted set `ports`, made if new.
    fn plain(&mut self, ports: &[u16]) -> u32 {
        if let Some(&id) = self.plain.get(ports) {
            return id;
        }
        let id = self.push(ports, None);
        self.plain.insert(ports.into(), id);
        id
    }

    /// The id of set `ports` chosen by `weights` per packet (one per port).
    fn weighted(&mut self, ports: &[u16], weights: &[f64]) -> u32 {
        let key: WeightedKey = (ports.into(), weights.iter().map(|w| w.to_bits()).collect());
        if let Some(&id) = self.weighted.get(&key) {
            return id;
        }
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cum = weights
            .iter()
            .map(|&w| {
                acc += w / total;
                acc
            })
            .collect();
        let id = self.push(ports, Some(cum));
        self.weighted.insert(key, id);
        id
    }
}

/// `peers[n]`: the node at the other end of each of node n's ports, by port index.
pub struct Adjacency<'a> {
    pub peers: &'a [Vec<u32>],
    pub hosts: u32,
}

impl RouteTable {
    /// Shortest-path routes (all equal-cost next hops kept) with `routes` overriding them
    /// where they apply. Errors when some host cannot reach another, when an override
    /// names a neighbour that is not linked, or when overrides make packets loop.
    pub fn build(
        adj: &Adjacency,
        routes: &[RouteSpec],
        name: &dyn Fn(u32) -> String,
    ) -> Result<RouteTable, RouteError> {
        let hosts = adj.hosts as usize;
        let n = adj.peers.len();
        let switches = n - hosts;
        // Each host's switch, and the distinct ToRs in order of their first host.
        let tor: Vec<u32> = adj.peers[..hosts].iter().map(|p| p[0]).collect();
        let mut tor_index = vec![u32::MAX; switches];
        let mut tors: Vec<u32> = Vec::new();
        let mut first_host: Vec<u32> = Vec::new();
        for (h, &t) in tor.iter().enumerate() {
            let i = &mut tor_index[t as usize - hosts];
            if *i == u32::MAX {
                *i = tors.len() as u32;
                tors.push(t);
                first_host.push(h as u32);
            }
        }
        // Overrides: (switch, destination) -> the last route entry naming it.
        let mut overrides: HashMap<(u32, u32), usize> = HashMap::new();
        for (i, r) in routes.iter().enumerate() {
            if r.to.is_empty() {
                for d in 0..adj.hosts {
                    overrides.insert((r.at, d), i);
                }
            } else {
                for &d in &r.to {
                    overrides.insert((r.at, d), i);
                }
            }
        }
        let mut pool = SetPool::default();
        // Checked in destination order, then switch order: the first bad entry is named.
        let mut keys: Vec<(u32, u32)> = overrides.keys().copied().collect();
        keys.sort_unstable_by_key(|&(s, d)| (d, s));
        let mut override_set: HashMap<(u32, u32), u32> = HashMap::with_capacity(keys.len());
        let mut ports_buf: Vec<u16> = Vec::new();
        for (s, d) in keys {
            let i = overrides[&(s, d)];
            let r = &routes[i];
            ports_buf.clear();
            for &v in &r.via {
                let Some(port) = adj.peers[s as usize].iter().position(|&p| p == v) else {
                    return Err(RouteError {
                        key: format!("switch.routes[{i}]"),
                        message: format!("{} is not linked to {}", name(v), name(s)),
                    });
                };
                if v < adj.hosts && v != d {
                    return Err(RouteError {
                        key: format!("switch.routes[{i}]"),
                        message: format!("via host {v} toward host {d}; hosts do not forward"),
                    });
                }
                ports_buf.push(port as u16);
            }
            let id = match &r.weights {
                Some(w) => pool.weighted(&ports_buf, w),
                None => pool.plain(&ports_buf),
            };
            override_set.insert((s, d), id);
        }
        // Per switch and ToR (by index), the set toward that ToR's hosts; at the ToR
        // itself each host has its own port (`own`).
        let nt = tors.len();
        let mut toward = vec![u32::MAX; switches * nt];
        let mut own = vec![u32::MAX; hosts];
        let mut dist = vec![u32::MAX; switches];
        let mut queue = VecDeque::new();
        // Per switch, the set it took toward the previous ToR: neighbouring ToRs mostly
        // give the same one, found without hashing.
        let mut prev = vec![u32::MAX; switches];
        for (ti, &t) in tors.iter().enumerate() {
            // Breadth-first from the ToR over switches (hosts do not forward).
            dist.fill(u32::MAX);
            dist[t as usize - hosts] = 0;
            queue.push_back(t);
            while let Some(u) = queue.pop_front() {
                let du = dist[u as usize - hosts];
                for &v in &adj.peers[u as usize] {
                    if v >= adj.hosts && dist[v as usize - hosts] == u32::MAX {
                        dist[v as usize - hosts] = du + 1;
                        queue.push_back(v);
                    }
                }
            }
            // The first host that cannot reach this ToR's first host.
            let unreached = |h: u32| dist[tor[h as usize] as usize - hosts] == u32::MAX;
            if tors.iter().any(|&u| dist[u as usize - hosts] == u32::MAX) {
                let h = (0..adj.hosts)
                    .find(|&h| unreached(h))
                    .expect("a ToR has hosts");
                return Err(RouteError::topology(format!(
                    "host {h} cannot reach host {}",
                    first_host[ti]
                )));
            }
            for s in 0..switches {
                let ds = dist[s];
                if ds == u32::MAX || s + hosts == t as usize {
                    continue;
                }
                ports_buf.clear();
                for (i, &v) in adj.peers[s + hosts].iter().enumerate() {
                    if v >= adj.hosts && dist[v as usize - hosts] == ds - 1 {
                        ports_buf.push(i as u16);
                    }
                }
                let p = prev[s];
                let id = if p != u32::MAX && pool.ports(p) == ports_buf.as_slice() {
                    p
                } else {
                    pool.plain(&ports_buf)
                };
                prev[s] = id;
                toward[s * nt + ti] = id;
            }
        }
        for (d, &t) in tor.iter().enumerate() {
            let port = adj.peers[t as usize]
                .iter()
                .position(|&p| p as usize == d)
                .expect("a host's switch links back to it");
            own[d] = pool.plain(&[port as u16]);
        }
        // Each switch's row over destinations, as runs, straight into its window.
        let mut by_switch: Vec<Vec<(u32, u32)>> = vec![Vec::new(); switches];
        for (&(s, d), &id) in &override_set {
            by_switch[s as usize - hosts].push((d, id));
        }
        let mut windows = Vec::with_capacity(switches);
        let mut window_sets = Vec::new();
        let mut runs: Vec<Run> = Vec::new();
        let mut row: Vec<u32> = Vec::new();
        for s in 0..switches {
            runs.clear();
            let push = |runs: &mut Vec<Run>, start: u32, len: u32, set: u32| match runs.last_mut() {
                Some(r) if r.set == set => r.len += len,
                _ => runs.push(Run { start, len, set }),
            };
            let mut d = 0;
            while d < hosts {
                let t = tor[d];
                if t as usize == s + hosts {
                    push(&mut runs, d as u32, 1, own[d]);
                    d += 1;
                    continue;
                }
                // Every host of this rack from d on (hosts of one ToR are consecutive
                // in every shape we build; any other order still gives correct runs).
                let mut e = d + 1;
                while e < hosts && tor[e] == t {
                    e += 1;
                }
                let set = toward[s * nt + tor_index[t as usize - hosts] as usize];
                push(&mut runs, d as u32, (e - d) as u32, set);
                d = e;
            }
            let over = &mut by_switch[s];
            if !over.is_empty() {
                // Overrides are few: spell this row out, apply them, and run it again.
                row.clear();
                for r in &runs {
                    row.extend(std::iter::repeat_n(r.set, r.len as usize));
                }
                for &(d, id) in over.iter() {
                    row[d as usize] = id;
                }
                runs.clear();
                for (d, &set) in row.iter().enumerate() {
                    push(&mut runs, d as u32, 1, set);
                }
            }
            windows.push(RouteWindow::from_runs(&runs, &mut window_sets));
        }
        // What the unchecked lookups rely on (see `route_set` and `next_hops`): both
        // hold by construction, checked once here.
        assert!(windows
            .iter()
            .all(|w| (w.first + w.count) as usize <= window_sets.len()));
        assert!(pool
            .sets
            .iter()
            .all(|&(off, len)| (off + len) as usize <= pool.set_ports.len()));
        let table = RouteTable {
            hosts: adj.hosts,
            windows,
            window_sets,
            weighted: pool.set_weights.iter().any(Option::is_some),
            sets: pool.sets,
            set_ports: pool.set_ports,
            set_weights: pool.set_weights,
        };
        let mut dsts: Vec<u32> = overrides.keys().map(|&(_, d)| d).collect();
        dsts.sort_unstable();
        dsts.dedup();
        table.check_no_loops(adj, &dsts, name)?;
        Ok(table)
    }

    /// With routes overridden, a packet could circle forever: refuse any cycle in the
    /// next-hop graph toward an overridden destination.
    fn check_no_loops(
        &self,
        adj: &Adjacency,
        dsts: &[u32],
        name: &dyn Fn(u32) -> String,
    ) -> Result<(), RouteError> {
        let n = adj.peers.len();
        let hosts = self.hosts as usize;
        for &d in dsts {
            // Iterative DFS with colours: 0 new, 1 on the stack, 2 done.
            let mut colour = vec![0u8; n];
            for start in hosts..n {
                if colour[start] != 0 {
                    continue;
                }
                let mut stack = vec![(start, 0usize)];
                colour[start] = 1;
                while let Some(&mut (u, ref mut next)) = stack.last_mut() {
                    let hops = self.next_hops(u as u32, d);
                    if *next == hops.len() {
                        colour[u] = 2;
                        stack.pop();
                        continue;
                    }
                    let v = adj.peers[u][hops[*next] as usize] as usize;
                    *next += 1;
                    if v < hosts {
                        continue;
                    }
                    match colour[v] {
                        0 => {
                            colour[v] = 1;
                            stack.push((v, 0));
                        }
                        1 => {
                            return Err(RouteError {
                                key: "switch.routes".into(),
                                message: format!(
                                    "packets for host {d} would loop through {}",
                                    name(v as u32)
                                ),
                            })
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// Some route is weighted per packet (`switch.routes` with `weights`).
    pub fn weighted(&self) -> bool {
        self.weighted
    }

    /// Cumulative weights of the port set at `switch` toward `dst`, when that choice is
    /// weighted; look only when [`RouteTable::weighted`].
    pub fn hop_weights(&self, switch: u32, dst: u32) -> Option<&[f64]> {
        self.set_weights[self.route_set(switch, dst)].as_deref()
    }

    /// Equal-cost egress ports at `switch` toward host `dst`.
    #[inline(always)]
    pub fn next_hops(&self, switch: u32, dst: u32) -> &[u16] {
        let (off, len) = self.sets[self.route_set(switch, dst)];
        // SAFETY: every set lies within `set_ports` (asserted in `build`; `sets` and
        // `set_ports` do not change after). Unchecked, as both bounds were checked per
        // forwarding decision.
        unsafe {
            self.set_ports
                .get_unchecked(off as usize..(off + len) as usize)
        }
    }

    /// Index of the port set `switch` uses toward `dst`.
    #[inline(always)]
    fn route_set(&self, switch: u32, dst: u32) -> usize {
        match self.windows[(switch - self.hosts) as usize].block(dst) {
            // SAFETY: i < first + count <= window_sets.len() for every window (asserted
            // in `build`; neither changes after).
            Ok(i) => unsafe { *self.window_sets.get_unchecked(i) as usize },
            Err(default) => default as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The window [`RouteWindow::from_runs`] makes answers exactly the row it was given,
    /// for rows of runs of any lengths (rack-like blocks, single hosts, ragged ends).
    #[test]
    fn a_route_window_answers_its_row() {
        let mut rng = Rng::new(7, 7);
        for case in 0..2000 {
            let n = 1 + rng.below(300) as usize;
            let mut row = Vec::with_capacity(n);
            let sets = 1 + rng.below(6) as u32;
            while row.len() < n {
                let len = match case % 3 {
                    0 => 1 << rng.below(5),
                    1 => 1 + rng.below(20),
                    _ => 1,
                } as usize;
                let set = rng.below(sets as u64) as u32;
                row.extend(std::iter::repeat_n(set, len.min(n - row.len())));
            }
            let mut runs: Vec<Run> = Vec::new();
            for (d, &set) in row.iter().enumerate() {
                match runs.last_mut() {
                    Some(r) if r.set == set => r.len += 1,
                    _ => runs.push(Run {
                        start: d as u32,
                        len: 1,
                        set,
                    }),
                }
            }
            let mut table = vec![9; rng.below(3) as usize];
            let w = RouteWindow::from_runs(&runs, &mut table);
            for (d, &set) in row.iter().enumerate() {
                assert_eq!(w.set(d as u32, &table), set, "case {case}, host {d}");
            }
        }
    }

    /// A breadth-first search per destination host over the whole graph, as the tables
    /// were first built: every switch's next hops toward every host agree with it, on
    /// every shape, with and without overrides.
    #[test]
    fn tables_agree_with_a_search_per_destination() {
        use crate::config::Scenario;
        use crate::fabric::topology::Topology;
        let shapes = [
            "[topology]\nkind = \"star\"\nhosts = 7",
            "[topology]\nkind = \"dumbbell\"\nhosts = 6",
            "[topology]\nkind = \"leaf_spine\"\nracks = 5\nhosts_per_rack = 3\nspines = 3",
            "[topology]\nkind = \"fat_tree\"\nk = 4",
            "[topology]\nkind = \"fat_tree\"\nk = 6",
            "[topology]\nkind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 2\nspines = 2\n\
             [[switch.routes]]\nat = \"leaf1\"\nto = [0]\nvia = [\"spine1\"]\n\
             [[switch.routes]]\nat = \"leaf0\"\nvia = [\"spine0\", \"spine1\"]\nto = [3]\nweights = [1, 2]",
        ];
        for text in shapes {
            let sc = Scenario::parse(text, &[], None).unwrap();
            let topo = Topology::build(&sc.topology);
            let mut peers = vec![Vec::new(); topo.nodes() as usize];
            for l in &topo.links {
                peers[l.a as usize].push(l.b);
                peers[l.b as usize].push(l.a);
            }
            let adj = Adjacency {
                peers: &peers,
                hosts: topo.hosts,
            };
            let t = RouteTable::build(&adj, &sc.routes, &|i| i.to_string()).unwrap();
            let n = peers.len();
            let hosts = topo.hosts as usize;
            for d in 0..hosts {
                let mut dist = vec![u32::MAX; n];
                dist[d] = 0;
                let mut q = VecDeque::from([d]);
                while let Some(u) = q.pop_front() {
                    if u < hosts && u != d {
                        continue;
                    }
                    for &v in &peers[u] {
                        if dist[v as usize] == u32::MAX {
                            dist[v as usize] = dist[u] + 1;
                            q.push_back(v as usize);
                        }
                    }
                }
                for s in hosts..n {
                    let over = sc.routes.iter().rev().find(|r| {
                        r.at as usize == s && (r.to.is_empty() || r.to.contains(&(d as u32)))
                    });
                    let want: Vec<u16> = match over {
                        Some(r) => r
                            .via
                            .iter()
                            .map(|&v| peers[s].iter().position(|&p| p == v).unwrap() as u16)
                            .collect(),
                        None => (0..peers[s].len())
                            .filter(|&i| {
                                let p = peers[s][i] as usize;
                                dist[p] == dist[s] - 1 && (p == d || p >= hosts)
                            })
                            .map(|i| i as u16)
                            .collect(),
                    };
                    assert_eq!(
                        t.next_hops(s as u32, d as u32),
                        want.as_slice(),
                        "{text}: {s} -> {d}"
                    );
                }
            }
        }
    }
}
