//! `topology.kind = "graph"`: any fabric given link by link, from the HPCC simulator's
//! `topology.txt` (`topology.file`) or from the scenario (`[[topology.links]]`).
//!
//! HPCC's format (alibaba-edu/High-Precision-Congestion-Control, `simulation/mix/*.txt`,
//! read by `scratch/third.cc`): a first line `nodes switches links`, a second with the
//! switches' ids (every other id is a host), then a line a link, `a b rate delay
//! error_rate`, rate and delay as ns-3 writes them (`10000000000bps`, `100Gbps`;
//! `1000ns`). The engine numbers hosts first: hosts keep their order, then switches
//! theirs, and [`Graph::ids`] maps back to the file's ids (flow.txt names those, fct.txt
//! writes them).

use crate::units;

#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    pub hosts: u32,
    pub switches: u32,
    /// In the engine's numbering (hosts `0..hosts`, then switches), the host end first.
    pub links: Vec<GivenLink>,
    /// The file's (or scenario's) id of each node, by the engine's number.
    pub ids: Vec<u32>,
}

/// One link as a file or scenario gives it, in its own ids.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GivenLink {
    pub a: u32,
    pub b: u32,
    pub rate: u64,
    pub delay: units::Ps,
}

impl Graph {
    /// A graph of `nodes` ids, `switches` among them, joined by `links`; `at(i)` names
    /// where link i was given (a line of a file, an item of a list) for errors.
    pub fn new(
        nodes: u32,
        switch_ids: &[u32],
        links: &[GivenLink],
        at: impl Fn(usize) -> String,
    ) -> Result<Graph, String> {
        let mut is_switch = vec![false; nodes as usize];
        for &s in switch_ids {
            let slot = is_switch
                .get_mut(s as usize)
                .ok_or_else(|| format!("switch id {s} is not below the node count {nodes}"))?;
            if *slot {
                return Err(format!("switch id {s} is listed twice"));
            }
            *slot = true;
        }
        // Hosts first in their id order, then switches in theirs.
        let mut ids: Vec<u32> = (0..nodes).filter(|&i| !is_switch[i as usize]).collect();
        let hosts = ids.len() as u32;
        ids.extend((0..nodes).filter(|&i| is_switch[i as usize]));
        let mut number = vec![0u32; nodes as usize];
        for (n, &id) in ids.iter().enumerate() {
            number[id as usize] = n as u32;
        }
        if hosts < 2 {
            return Err(format!(
                "{hosts} hosts (ids not listed as switches); at least 2"
            ));
        }
        let mut degree = vec![0u32; nodes as usize];
        let mut out = Vec::with_capacity(links.len());
        let mut seen = std::collections::HashSet::new();
        for (i, l) in links.iter().enumerate() {
            for end in [l.a, l.b] {
                if end >= nodes {
                    return Err(format!(
                        "{}: node {end} is not below the node count {nodes}",
                        at(i)
                    ));
                }
            }
            if l.a == l.b {
                return Err(format!("{}: a link from node {} to itself", at(i), l.a));
            }
            if !seen.insert((l.a.min(l.b), l.a.max(l.b))) {
                return Err(format!(
                    "{}: a second link between {} and {} (parallel links are not modelled)",
                    at(i),
                    l.a,
                    l.b
                ));
            }
            if !is_switch[l.a as usize] && !is_switch[l.b as usize] {
                return Err(format!(
                    "{}: a link between two hosts ({} and {}): a host links to a switch",
                    at(i),
                    l.a,
                    l.b
                ));
            }
            degree[l.a as usize] += 1;
            degree[l.b as usize] += 1;
            let (a, b) = (number[l.a as usize], number[l.b as usize]);
            // Host end first, as the engine's other shapes lay links out.
            let (a, b) = if b < hosts && a >= hosts {
                (b, a)
            } else {
                (a, b)
            };
            out.push(GivenLink {
                a,
                b,
                rate: l.rate,
                delay: l.delay,
            });
        }
        if let Some(&h) = ids[..hosts as usize]
            .iter()
            .find(|&&h| degree[h as usize] != 1)
        {
            return Err(format!(
                "host {h} has {} links; a host (an id not listed as a switch) has exactly one",
                degree[h as usize]
            ));
        }
        Ok(Graph {
            hosts,
            switches: nodes - hosts,
            links: out,
            ids,
        })
    }

    /// The engine's number of the node the file calls `id`.
    pub fn number_of(&self, id: u32) -> Option<u32> {
        self.ids.iter().position(|&i| i == id).map(|n| n as u32)
    }

    /// The engine's host number of each host id (None: a switch or no such node).
    pub fn host_numbers(&self) -> Vec<Option<u32>> {
        let top = self.ids.iter().copied().max().map_or(0, |m| m as usize + 1);
        let mut out = vec![None; top];
        for (n, &id) in self.ids[..self.hosts as usize].iter().enumerate() {
            out[id as usize] = Some(n as u32);
        }
        out
    }
}

impl Graph {
    /// The most switch-to-switch links on a shortest path between two hosts' switches
    /// (a breadth-first search from each switch that has a host).
    pub fn fabric_hops(&self) -> u32 {
        let n = (self.hosts + self.switches) as usize;
        let mut adj = vec![Vec::new(); n];
        for l in &self.links {
            if l.a >= self.hosts {
                adj[l.a as usize].push(l.b);
                adj[l.b as usize].push(l.a);
            }
        }
        let mut edge: Vec<u32> = self
            .links
            .iter()
            .filter(|l| l.a < self.hosts)
            .map(|l| l.b)
            .collect();
        edge.sort_unstable();
        edge.dedup();
        let mut most = 0;
        let mut dist = vec![u32::MAX; n];
        for &s in &edge {
            dist.fill(u32::MAX);
            dist[s as usize] = 0;
            let mut queue = std::collections::VecDeque::from([s]);
            while let Some(u) = queue.pop_front() {
                for &v in &adj[u as usize] {
                    if dist[v as usize] == u32::MAX {
                        dist[v as usize] = dist[u as usize] + 1;
                        queue.push_back(v);
                    }
                }
            }
            most = edge
                .iter()
                .map(|&e| dist[e as usize])
                .filter(|&d| d != u32::MAX)
                .fold(most, u32::max);
        }
        most
    }
}

/// An HPCC `topology.txt`. Errors name the line (1-based).
pub fn parse_hpcc(text: &str) -> Result<Graph, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (n, first) = lines.next().ok_or("empty topology file")?;
    let head: Vec<&str> = first.split_whitespace().collect();
    let num = |s: &str, what: &str, n: usize| -> Result<u32, String> {
        s.parse()
            .map_err(|_| format!("line {n}: {what} '{s}' is not a whole number"))
    };
    if head.len() != 3 {
        return Err(format!(
            "line {n}: expected 'nodes switches links', found '{first}'"
        ));
    }
    let (nodes, switches, count) = (
        num(head[0], "the node count", n)?,
        num(head[1], "the switch count", n)?,
        num(head[2], "the link count", n)?,
    );
    if nodes > 1 << 24 {
        return Err(format!("line {n}: {nodes} nodes; at most 2^24"));
    }
    let mut switch_ids = Vec::new();
    if switches > 0 {
        let (n, second) = lines
            .next()
            .ok_or_else(|| format!("line {}: expected the {switches} switch ids", n + 1))?;
        for s in second.split_whitespace() {
            switch_ids.push(num(s, "a switch id", n)?);
        }
        if switch_ids.len() != switches as usize {
            return Err(format!(
                "line {n}: {} switch ids, the first line says {switches}",
                switch_ids.len()
            ));
        }
    }
    let mut links = Vec::new();
    let mut line_of = Vec::new();
    for (n, line) in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 5 {
            return Err(format!(
                "line {n}: expected 'a b rate delay error_rate', found '{line}'"
            ));
        }
        let rate = units::parse_rate(f[2]).map_err(|m| format!("line {n}: rate: {m}"))?;
        let delay = units::parse_time(f[3]).map_err(|m| format!("line {n}: delay: {m}"))?;
        let err: f64 = f[4]
            .parse()
            .map_err(|_| format!("line {n}: error rate '{}' is not a number", f[4]))?;
        if err != 0.0 {
            return Err(format!(
                "line {n}: error rate {err}: random link loss is not modelled (only 0)"
            ));
        }
        links.push(GivenLink {
            a: num(f[0], "node", n)?,
            b: num(f[1], "node", n)?,
            rate,
            delay,
        });
        line_of.push(n);
    }
    if links.len() != count as usize {
        return Err(format!(
            "{} links after the header, its first line says {count}",
            links.len()
        ));
    }
    Graph::new(nodes, &switch_ids, &links, |i| {
        format!("line {}", line_of[i])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_hpcc_file_is_read_and_renumbered_hosts_first() {
        // Switch 1 between hosts 0 and 2, switch 3 above it with host 4.
        let g = parse_hpcc(
            "5 2 4\n1 3\n0 1 10000000000bps 1000ns 0\n2 1 10Gbps 1us 0\n1 3 40Gbps 1000ns 0.000000\n4 3 100Gbps 2000ns 0\n",
        )
        .unwrap();
        assert_eq!((g.hosts, g.switches), (3, 2));
        assert_eq!(g.ids, vec![0, 2, 4, 1, 3]);
        assert_eq!(g.number_of(3), Some(4));
        assert_eq!(
            g.host_numbers(),
            vec![Some(0), None, Some(1), None, Some(2)]
        );
        let l = g.links[3];
        assert_eq!(
            (l.a, l.b, l.rate, l.delay),
            (2, 4, 100_000_000_000, 2_000_000)
        );
        assert_eq!(g.links[2].b, 4);
    }

    #[test]
    fn bad_files_are_refused_naming_the_line() {
        let cases = [
            ("3 1\n", "line 1"),
            (
                "3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbbps 1us 0\n",
                "line 4: rate",
            ),
            (
                "3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1 0\n",
                "line 4: delay",
            ),
            (
                "3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1us\n",
                "line 4: expected",
            ),
            (
                "3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1us 0.01\n",
                "line 4: error rate",
            ),
            (
                "3 1 2\n2\n0 2 10Gbps 1us 0\n1 7 10Gbps 1us 0\n",
                "line 4: node 7",
            ),
            (
                "3 1 2\n2\n0 2 10Gbps 1us 0\n0 1 10Gbps 1us 0\n",
                "line 4: a link between two hosts",
            ),
            (
                "3 1 2\n2\n0 2 10Gbps 1us 0\n2 0 10Gbps 1us 0\n",
                "line 4: a second link",
            ),
            (
                "3 1 3\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1us 0\n",
                "2 links after",
            ),
            (
                "3 2 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1us 0\n",
                "line 2: 1 switch ids",
            ),
            (
                "4 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1us 0\n",
                "host 3 has 0 links",
            ),
        ];
        for (text, want) in cases {
            let e = parse_hpcc(text).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
