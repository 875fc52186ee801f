//! PFC deadlock: a cycle of buffer dependencies in which every port waits for the next
//! (Hu et al., "Deadlocks in datacenter networks: why do they form, and how to avoid
//! them", HotNets 2016). An egress port paused by its neighbour waits for the
//! neighbour's input on that link to drain; that input waits for the egress ports its
//! queued packets are for. When such waits close a cycle and every port in it has been
//! paused without a break for `deadlock_after`, no pause in it will ever lift: the run
//! is stopped and the cycle named, instead of running on with nothing moving.

use super::Switch;
use crate::fabric::Fabric;
use crate::units::Ps;
use std::collections::HashMap;

/// A port of a switch: (node, port index).
pub type PortId = (u32, u16);

/// The wait-for graph's cycle among ports paused since at least `before`, if there is
/// one: the ports in order, each waiting for the next (the last for the first).
/// `switch(node)`: the switch at `node` (in a parallel run, from the process that owns
/// it).
pub fn find_cycle<'a>(
    switch: impl Fn(u32) -> &'a Switch,
    fabric: &Fabric,
    before: Ps,
) -> Option<Vec<PortId>> {
    let hosts = fabric.hosts();
    let stuck = |(node, port): PortId| -> bool {
        match switch(node) {
            Switch::Cioq(s) => s.stuck_since(port as usize).is_some_and(|t| t <= before),
            Switch::Oq(_) => false,
        }
    };
    // The stuck ports a stuck port waits for: those of its neighbour's input.
    let next = |(node, port): PortId| -> Vec<PortId> {
        let end = &fabric.ports(node)[port as usize];
        if end.peer < hosts {
            return Vec::new();
        }
        let Switch::Cioq(s) = switch(end.peer) else {
            return Vec::new();
        };
        let mut w = s.waits_for(end.peer_port as usize);
        let mut out = Vec::new();
        while w != 0 {
            let o = w.trailing_zeros() as u16;
            w &= w - 1;
            if stuck((end.peer, o)) {
                out.push((end.peer, o));
            }
        }
        out
    };
    // Depth-first search with colours: on the stack (grey) or finished (black).
    let mut state: HashMap<PortId, bool> = HashMap::new(); // true: on the stack
    for s in 0..fabric.switches() {
        let node = hosts + s;
        for port in 0..fabric.ports(node).len() as u16 {
            let start = (node, port);
            if state.contains_key(&start) || !stuck(start) {
                continue;
            }
            let mut stack: Vec<(PortId, Vec<PortId>)> = vec![(start, next(start))];
            state.insert(start, true);
            while let Some((at, succ)) = stack.last_mut() {
                let at = *at;
                match succ.pop() {
                    Some(n) => match state.get(&n) {
                        Some(true) => {
                            // Back edge: the cycle is the stack from `n` on.
                            let from = stack.iter().position(|(p, _)| *p == n).unwrap();
                            return Some(stack[from..].iter().map(|(p, _)| *p).collect());
                        }
                        Some(false) => {}
                        None => {
                            state.insert(n, true);
                            let s = next(n);
                            stack.push((n, s));
                        }
                    },
                    None => {
                        state.insert(at, false);
                        stack.pop();
                    }
                }
            }
        }
    }
    None
}

/// The cycle for a person: `leaf0 port 2 (to spine0) -> spine0 port 1 (to leaf1) -> ...
/// -> leaf0 port 2`.
pub fn describe(cycle: &[PortId], fabric: &Fabric) -> String {
    let name = |(n, p): PortId| format!("{} port {p}", fabric.node_name(n));
    let mut s: Vec<String> = cycle
        .iter()
        .map(|&(n, p)| {
            let peer = fabric.ports(n)[p as usize].peer;
            format!("{} (to {})", name((n, p)), fabric.node_name(peer))
        })
        .collect();
    s.push(name(cycle[0]));
    format!(
        "PFC deadlock: each egress port is paused by the next one's switch and holds \
         packets for it: {}",
        s.join(" -> ")
    )
}
