//! The engine: the event loop and its dispatch. Components (the hosts, the switches) own
//! their state and their decisions; the engine pops the next event and hands it to the
//! component it concerns, with the context ([`context::Ctx`]): the time, a way to
//! schedule events, the packet arena, the counters, the fabric.
//!
//! Events are ordered by (time, insertion order) (see [`EventQueue`]), so equal-time
//! events run in the order they were scheduled and every run of a scenario is identical.

pub mod context;
pub mod event;
pub mod mailbox;
mod outputs;
pub mod parallel;
mod process;
pub mod queue;
pub mod run;
pub mod sampling;

use crate::config::{Scenario, ScenarioError};
use crate::fabric::partition::Partition;
use crate::fabric::topology::TopologySpec;
use crate::fabric::Fabric;
use crate::host::Hosts;
use crate::output::counters::Counters;
use crate::packet::prefetch;
use crate::rng::{component, Rng};
use crate::switch::deadlock;
use crate::switch::flow_control::FlowControl;
use crate::switch::forwarding::Forwarder;
use crate::switch::port::Port;
use crate::switch::{Switch, SwitchKind};
use crate::transport::cc::kinds::Cc;
use crate::transport::tcp::sender::TcpSender;
use crate::units::Ps;
use crate::workload::Traffic;
use context::Ctx;
pub use context::StopReason;
use event::{Ev, Sampled, ROUTE_ON_ARRIVAL};
use queue::EventQueue;
use sampling::Sampling;
use std::sync::Arc;

/// Prefetching for the next event pays only when the lines it loads have left L2
/// between a port's packets: measured on this machine (AMD EPYC, 512 KB L2), fat tree
/// k=16 (6144 ports of 256 B, 1.5 MB) 8-10% less wall time, k=8 (768 ports, 192 KB)
/// no change, incast on a star (130 ports) ~4% more. So it is on above 512 KB of ports.
const PREFETCH_ABOVE_BYTES: usize = 512 << 10;

/// Calendar geometry for this network: slots narrow enough to hold about four events
/// each when every host link is busy (~4 events per packet-time per host), so that a slot
/// needs little sorting, and a ring long enough to hold the furthest hop (propagation +
/// serialization of a jumbo frame) twice over.
fn queue_geometry(t: &TopologySpec, fabric: &Fabric, hosts: u32) -> (u32, u32) {
    // `hosts`: those of this process (all but in a parallel run), whose events it holds.
    let events_per_s = hosts.max(1) as f64 * t.link_rate as f64 / (8.0 * 1538.0) * 4.0;
    // Measured (callgrind, fat-trees k=8 and k=16), with a slot's events insertion-sorted
    // as the cursor reaches it: 4 per slot beats 2 (more cursor moves, a ring twice as
    // long: D1 misses per hop 8.24 / 9.65 against 8.12 / 9.42) and 8 (more sorting:
    // 557 instructions per hop at k=8 against 549).
    let width_ps = 4.0 * 1e12 / events_per_s;
    let shift = (width_ps.log2().floor() as u32).clamp(8, 20);
    let horizon = fabric.longest_hop(9100);
    let slots_log2 = (65 - (horizon >> shift).leading_zeros()).clamp(12, 17);
    (shift, slots_log2)
}

pub struct Sim {
    cx: Ctx,
    hosts: Hosts,
    /// Switch `node` is `switches[node - hosts]`.
    switches: Vec<Switch>,
    /// Per switch, the address of its first port (its ports are contiguous): what
    /// `prefetch_for` computes a port's address from without loading the switch, whose
    /// lines are cold at scale. Reaching a port through the switch was two dependent
    /// loads, the first a miss: at 1,024 hosts 11 M of the 24 M more L1 misses (in 8 ms
    /// of fattree16_websearch) that made it 0.8x of aae68fb's one flat port array.
    /// Addresses only, never dereferenced (a prefetch cannot fault).
    port_lines: Vec<usize>,
    /// `run.duration` (or the clock's horizon) and `run.max_events` (u64::MAX when
    /// unset): one compare an event.
    end_time: Ps,
    event_limit: u64,
    /// The run's end has been processed (flows recorded).
    ended: bool,
    /// With flow control, `switch.deadlock_after`: how often to look for a deadlock and
    /// how long its ports must have been paused.
    deadlock_after: Option<Ps>,
    /// The samplers (`run.*_interval`) and what they took.
    sampling: Sampling,
    /// `[ping]`: the interval between requests.
    ping_every: Option<Ps>,
    /// `run.progress_limit`, and the bytes acknowledged, cumulatively or selectively
    /// (offered less those neither), at the last check.
    progress_limit: Option<Ps>,
    acked_at_check: u64,
    /// In a parallel run, the last progress check here: (its time, nothing acknowledged
    /// here since the one before, flows active here); the run decides over all of them.
    checked: Option<(Ps, bool, u64)>,
    /// Periodic events queued ([`Ev::periodic`]): when they are all that is left, nothing
    /// else will happen.
    periodic: usize,
}

impl Sim {
    pub fn new(sc: &Scenario) -> Result<Sim, ScenarioError> {
        Sim::build(sc, Arc::new(Sim::fabric(sc)?), None)
    }

    /// The scenario's fabric, or its error.
    pub fn fabric(sc: &Scenario) -> Result<Fabric, ScenarioError> {
        Fabric::build(&sc.topology, &sc.routes, sc.switch.timing, sc.run.seed).map_err(|e| {
            // The topology's errors name its kind; routes that fail only together (a
            // loop) name no one value.
            let value = if e.key == "topology" {
                sc.topology.kind.as_str()
            } else {
                ""
            };
            ScenarioError::new(&e.key, value, e.message)
        })
    }

    /// The run of `sc` on `fabric`: the whole of it, or with `part`, logical process
    /// `part.1`'s share of a parallel run (its switches built, the others' place
    /// holders; its queue sized for its hosts), which `Sim::take_part` (process.rs)
    /// then wires to the post.
    pub(crate) fn build(
        sc: &Scenario,
        fabric: Arc<Fabric>,
        part: Option<(Arc<Partition>, u32)>,
    ) -> Result<Sim, ScenarioError> {
        let seed = sc.run.seed;
        let owns = |n: u32| part.as_ref().is_none_or(|(p, lp)| p.lp(n) == *lp);
        let own_hosts = (0..fabric.hosts()).filter(|&h| owns(h)).count() as u32;
        let (shift, slots_log2) = queue_geometry(&sc.topology, &fabric, own_hosts);
        let mut queue = EventQueue::with_geometry(shift, slots_log2);
        // One switch for both prefetches, the calendar's and `Sim::prefetch_for`.
        let port_bytes = fabric.all_ports().len() * std::mem::size_of::<Port>();
        queue.set_prefetch(port_bytes > PREFETCH_ABOVE_BYTES);
        let forwarding = Forwarder::new(sc.switch.forwarding, fabric.routes());
        let mut cx = Ctx::new(queue, fabric, forwarding);
        let framing = sc.topology.framing_bytes;
        let hosts = cx.fabric.hosts();
        let builds = |n: u32| part.as_ref().is_none_or(|(p, lp)| p.builds(n, *lp));
        let switches = (hosts..cx.fabric.node_count() as u32)
            .map(|n| {
                if builds(n) {
                    Switch::new(&sc.switch, &cx.fabric, n, seed, framing)
                } else {
                    Ok(Switch::absent())
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ScenarioError::new(e.key, &e.value, e.message))?;
        let mut periodic = 0;
        let deadlock_after = match sc.switch.kind {
            SwitchKind::Cioq(c) if c.flow_control != FlowControl::None => {
                // A parallel run looks for deadlocks over all its processes at once.
                if part.is_none() {
                    cx.push(c.deadlock_after, Ev::DeadlockCheck);
                    periodic += 1;
                }
                Some(c.deadlock_after)
            }
            _ => None,
        };
        let calibrated =
            crate::workload::calibrated(&sc.workload, &cx.fabric, sc.topology.link_rate);
        let traffic = Traffic::new(
            calibrated.as_ref().unwrap_or(&sc.workload),
            &sc.classes,
            sc.background.as_ref(),
            hosts,
            sc.topology.link_rate,
            Rng::new(seed, component::WORKLOAD),
            Rng::new(seed, component::BACKGROUND),
        );
        let mut hosts = Hosts::new(&sc.host, &sc.transport, traffic, &cx, framing, seed);
        if sc.switch.flow_control() != FlowControl::None {
            hosts.obey_pauses();
        }
        hosts.start(&mut cx);
        let ports = cx.fabric.all_ports().len();
        let port_lines = switches
            .iter()
            .map(|s| s.ports().as_ptr() as usize)
            .collect();
        let sampling = Sampling::new(&sc.run, ports);
        for (what, every) in sampling.on() {
            cx.push(every, Ev::Sample(what));
            periodic += 1;
        }
        if sc.run.flow_throughput.is_some() {
            hosts.track_flow_throughput();
        }
        if let Some(p) = &sc.ping {
            hosts.start_pings(p);
            cx.push(p.start, Ev::Ping);
            periodic += 1;
        }
        if let Some(every) = sc.run.progress_limit {
            cx.push(every, Ev::ProgressCheck);
            periodic += 1;
        }
        Ok(Sim {
            cx,
            hosts,
            switches,
            port_lines,
            end_time: sc.run.duration.unwrap_or(crate::units::HORIZON),
            event_limit: sc.run.max_events.unwrap_or(u64::MAX),
            ended: false,
            deadlock_after,
            sampling,
            ping_every: sc.ping.map(|p| p.interval),
            progress_limit: sc.run.progress_limit,
            acked_at_check: 0,
            checked: None,
            periodic,
        })
    }

    pub fn now(&self) -> Ps {
        self.cx.now
    }

    pub fn stop_reason(&self) -> StopReason {
        self.cx.stop
    }

    /// Why the run stopped, in words, when the reason needs them (a deadlock's ports).
    pub fn stop_detail(&self) -> &str {
        &self.cx.stop_detail
    }

    pub fn finished(&self) -> bool {
        self.cx.stop != StopReason::Running
    }

    pub fn active_flows(&self) -> u64 {
        self.hosts.active_flows()
    }

    pub fn has_queries(&self) -> bool {
        self.hosts.has_queries()
    }

    pub fn counters(&self) -> &Counters {
        &self.cx.counters
    }

    /// Runs up to `budget` events; returns true once the run has ended.
    pub fn step(&mut self, budget: u64) -> bool {
        // Never past `run.max_events`: that limit is checked once per call, not per event.
        // (The limit was checked after each event, so even `max_events = 0` ran one.)
        let budget = budget.min(
            self.event_limit
                .max(1)
                .saturating_sub(self.cx.counters.events),
        );
        for _ in 0..budget {
            if self.finished() {
                break;
            }
            let Some((time, ev)) = self.cx.queue_mut().pop() else {
                self.cx.stop = if self.hosts.active_flows() > 0 {
                    StopReason::Stalled
                } else {
                    StopReason::AllFlowsDone
                };
                break;
            };
            if ev.periodic() {
                self.periodic -= 1;
                if self.cx.queue().len() == self.periodic {
                    // Nothing else is left to happen: the check, the sample or the ping
                    // does not move the clock.
                    continue;
                }
            }
            if time > self.end_time {
                self.cx.now = self.end_time;
                self.cx.stop = if self.end_time == crate::units::HORIZON {
                    StopReason::Horizon
                } else {
                    StopReason::Duration
                };
                break;
            }
            self.run_event(time, ev);
        }
        if self.cx.counters.events >= self.event_limit && !self.finished() {
            self.cx.stop = StopReason::MaxEvents;
        }
        if self.finished() && !self.ended {
            self.end();
        }
        self.finished()
    }

    /// Event `ev` at `time` runs: the clock moves, the next event's lines start loading,
    /// the component it concerns handles it, the flows it woke send.
    #[inline(always)]
    fn run_event(&mut self, time: Ps, ev: Ev) {
        self.cx.now = time;
        self.cx.counters.events += 1;
        if self.cx.queue().prefetching() {
            if let Some(&next) = self.cx.queue().peek_near() {
                self.prefetch_for(next);
            }
        }
        self.dispatch(time, ev);
        self.hosts.poll_woken(&mut self.cx);
    }

    /// Hands event `ev` at `time` to the component it concerns.
    #[inline(always)]
    fn dispatch(&mut self, time: Ps, ev: Ev) {
        let cx = &mut self.cx;
        let hosts = cx.fabric.hosts();
        match ev {
            Ev::Arrive {
                node,
                pkt,
                port,
                egress,
            } => {
                if node < hosts {
                    self.hosts.on_arrive(cx, node, pkt);
                } else {
                    self.switches[(node - hosts) as usize].on_arrive(cx, node, pkt, port, egress);
                }
            }
            Ev::Header {
                node,
                pkt,
                port,
                egress,
            } => self.switches[(node - hosts) as usize].on_header(cx, node, pkt, port, egress),
            Ev::PortFree { node, port } => {
                if node < hosts {
                    self.hosts.on_nic_free(cx, node, time);
                } else {
                    self.switches[(node - hosts) as usize].on_port_free(cx, node, port, time);
                }
            }
            Ev::Timer { slot } => self.hosts.on_timer(cx, slot, time),
            Ev::HostDone { host, pkt } => self.hosts.on_host_done(cx, host, pkt),
            Ev::HostRx { host, pkt } => self.hosts.on_host_rx(cx, host, pkt),
            Ev::GroFlush { slot } => self.hosts.on_gro_flush(cx, slot, time),
            Ev::Workload => self.hosts.on_workload(cx, time),
            Ev::Crossed {
                node,
                pkt,
                input,
                output,
            } => self.switches[(node - hosts) as usize].on_crossed(cx, node, pkt, input, output),
            Ev::PauseTakes { node, port, pkt } => {
                if node < hosts {
                    self.hosts.on_pause_takes(cx, node, pkt);
                } else {
                    self.switches[(node - hosts) as usize].on_pause_takes(cx, node, port, pkt);
                }
            }
            Ev::DeadlockCheck => self.check_deadlock(time),
            Ev::ProgressCheck => self.check_progress(time),
            Ev::Sample(what) => self.sample(what, time),
            Ev::Ping => self.ping(time),
            Ev::FpSlot {
                host,
                dst,
                path,
                lo,
            } => self.hosts.on_fastpass_slot(cx, host, dst, path, lo),
            Ev::FpEndpoint { host } => self.hosts.on_fastpass_endpoint(cx, host, time),
            Ev::FpArbiter { rank } => self.hosts.on_fastpass_arbiter(cx, rank, time),
            Ev::FpDeliver { host, msg } => self.hosts.on_fastpass_deliver(cx, host, msg),
            Ev::FpHandle { rank, msg } => self.hosts.on_fastpass_handle(cx, rank, msg),
        }
    }

    /// Queues periodic event `ev` at `time` (it runs only while anything else is still
    /// to happen: see `step`).
    fn again(&mut self, time: Ps, ev: Ev) {
        debug_assert!(ev.periodic());
        self.periodic += 1;
        self.cx.push(time, ev);
    }

    /// Sampler `what` samples, and will again.
    #[inline(never)]
    fn sample(&mut self, what: Sampled, now: Ps) {
        let (hosts, cx) = (&mut self.hosts, &self.cx);
        self.sampling
            .sample(what, now, hosts, &self.switches, &cx.counters, &cx.fabric);
        self.again(now + self.sampling.every(what), Ev::Sample(what));
    }

    /// `[ping]`: a request leaves, and the next will.
    #[inline(never)]
    fn ping(&mut self, now: Ps) {
        self.hosts.send_ping(&mut self.cx);
        let every = self.ping_every.expect("pings only with an interval");
        self.again(now + every, Ev::Ping);
    }

    /// Looks for a cycle of ports paused since the last check; stops the run on one,
    /// else checks again later.
    #[inline(never)]
    fn check_deadlock(&mut self, now: Ps) {
        let after = self.deadlock_after.expect("checks only with flow control");
        let before = now.saturating_sub(after);
        let hosts = self.cx.fabric.hosts();
        let switch = |n: u32| &self.switches[(n - hosts) as usize];
        if let Some(cycle) = deadlock::find_cycle(switch, &self.cx.fabric, before) {
            self.cx.stop_detail = deadlock::describe(&cycle, &self.cx.fabric);
            self.cx.stop = StopReason::Deadlock;
            return;
        }
        self.again(now + after, Ev::DeadlockCheck);
    }

    /// `run.progress_limit`: stops the run when its active flows have had nothing
    /// acknowledged since the last check, else checks again later. Bytes acknowledged
    /// only grow: those offered, less those neither cumulatively acknowledged nor SACKed.
    /// A SACKed byte counts: a flow whose first hole waits (Turbo T1 resends it only
    /// on a timeout, inflated, so it can lose for many timeouts to other flows' data
    /// at their true priority) while the rest of its data arrives is slow, not
    /// livelocked, and finishes once the competition ends.
    #[inline(never)]
    fn check_progress(&mut self, now: Ps) {
        let every = self.progress_limit.expect("checks only with a limit");
        let acked = self.cx.counters.bytes_offered - self.hosts.unsacked_bytes();
        let active = self.hosts.active_flows();
        if self.cx.outbox.is_some() {
            self.checked = Some((now, acked == self.acked_at_check, active));
        } else if active > 0 && acked == self.acked_at_check && now >= 2 * every {
            self.cx.stop_detail = format!(
                "{active} active flows had no byte acknowledged since {} (run.progress_limit)",
                crate::units::format_time(now - every)
            );
            self.cx.stop = StopReason::NoProgress;
            return;
        }
        self.acked_at_check = acked;
        self.again(now + every, Ev::ProgressCheck);
    }

    /// Start loading what event `ev` will touch first, while the event before it runs:
    /// at a host the packet (its delivery reads it whole), at a switch the packet's hot
    /// part and the egress port's first line. With many hosts these lines are no longer
    /// in L2 when their event comes (docs/performance.md § Scale).
    #[inline(always)]
    fn prefetch_for(&self, ev: Ev) {
        let hosts = self.cx.fabric.hosts();
        match ev {
            Ev::Arrive {
                node, pkt, egress, ..
            } => {
                if node < hosts {
                    self.cx.pkts.prefetch(pkt, true);
                } else if egress != ROUTE_ON_ARRIVAL {
                    self.cx.pkts.prefetch(pkt, false);
                    self.prefetch_switch_port((node - hosts) as usize, egress as usize);
                }
            }
            Ev::PortFree { node, port } => {
                if node < hosts {
                    self.hosts.prefetch_nic(node);
                } else {
                    self.prefetch_switch_port((node - hosts) as usize, port as usize);
                }
            }
            _ => {}
        }
    }

    /// Start loading switch `s`'s own first line (its dispatch reads it) and its port
    /// `port`'s lines, all from addresses at hand: none waits for another.
    #[inline(always)]
    fn prefetch_switch_port(&self, s: usize, port: usize) {
        if let Some(sw) = self.switches.get(s) {
            prefetch(sw as *const Switch as *const u8);
            Port::prefetch_at(self.port_lines[s].wrapping_add(port * std::mem::size_of::<Port>()));
        }
    }

    pub fn run_to_end(&mut self) {
        while !self.step(1 << 20) {}
    }

    /// The run has stopped: the flows still there are recorded.
    fn end(&mut self) {
        self.ended = true;
        self.hosts.end(&mut self.cx);
        self.cx.counters.peak_packets = self.cx.pkts.capacity() as u64;
    }

    pub fn hosts(&self) -> u32 {
        self.cx.fabric.hosts()
    }

    /// The sender of a live flow, for tests.
    pub fn sender_of(&self, flow_id: u64) -> Option<&TcpSender<Cc>> {
        self.hosts
            .connection(flow_id)
            .and_then(|c| c.tcp())
            .map(|c| c.sender())
    }

    pub fn live_packets(&self) -> usize {
        self.cx.pkts.live()
    }

    /// Every port's queued bytes now, in ports.parquet's order (for tests: what a queue
    /// sample reads).
    pub fn queued_bytes(&self) -> Vec<u64> {
        let nics = self.hosts.nics().iter().map(|n| n.port());
        let switches = self.switches.iter().flat_map(|s| s.ports());
        nics.chain(switches).map(|p| p.bytes()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work conservation with strict FastLane caps (§5.1.3): data never waits at a port
    /// beyond the end of the current transmission for a wake-up set for a capped
    /// notification. Checked after every event of an incast whose notification buffer
    /// holds one notification, so notifications often wait for the cap while data and
    /// ACKs come and go. Data that arrived while a packet was on the wire and only a
    /// notification waited used to sit until the cap allowed the notification.
    #[test]
    fn data_never_waits_for_a_strict_notification_cap() {
        // Flows both ways over a dumbbell: a host's switch port carries the data coming
        // to it and the notifications for the data it sent.
        let text = r#"
[topology]
kind = "dumbbell"
hosts = 8
link_rate = "10Gbps"
link_delay = "1us"
[switch]
buffer = "16KB"
overflow = "fastlane"
fastlane_strict = true
fastlane_buffer = "64B"
[transport]
rto_min = "1ms"
[workload]
kind = "trace"
flows = [
  { src = 0, dst = 4, size = "2MB" }, { src = 1, dst = 4, size = "2MB" },
  { src = 4, dst = 0, size = "2MB" }, { src = 5, dst = 0, size = "2MB" },
  { src = 2, dst = 6, size = "2MB" }, { src = 6, dst = 2, size = "2MB" },
]
"#;
        let sc = Scenario::parse(text, &[], None).unwrap();
        let mut sim = Sim::new(&sc).unwrap();
        let mut checked = 0u64;
        while !sim.step(1) {
            let now = sim.now();
            let ports = sim
                .hosts
                .nics()
                .iter()
                .map(|n| n.port())
                .chain(sim.switches.iter().flat_map(|s| s.ports()));
            for p in ports {
                if let Some((wake, free)) = p.waiting_past_free(now) {
                    panic!("data waits at t={now} for a wake-up at {wake} (link free at {free})");
                }
                checked += !p.is_empty() as u64;
            }
        }
        assert!(checked > 1000);
        assert!(sim.counters().notifications_dropped > 0, "the cap binds");
        assert_eq!(sim.counters().flows_unfinished, 0);
    }

    /// 802.1Qbb timing (DeTail §6.1): a pause takes effect two 512-bit times after it
    /// reaches a port (1.024 us at 1 Gbps), the frame on the wire then completes, and no
    /// new frame of a paused class starts until the resume. Two senders at line rate
    /// into one receiver through a lossless switch: the senders' NICs are paused and
    /// resumed many times; every event is checked.
    #[test]
    fn a_pause_takes_effect_after_the_response_time_and_holds_until_resumed() {
        let text = r#"
[topology]
kind = "star"
hosts = 3
link_rate = "1Gbps"
link_delay = "6600ns"
[switch]
kind = "cioq"
flow_control = "pfc"
[workload]
kind = "trace"
flows = [{ src = 0, dst = 2, size = "2MB" }, { src = 1, dst = 2, size = "2MB" }]
"#;
        let sc = Scenario::parse(text, &[], None).unwrap();
        let mut sim = Sim::new(&sc).unwrap();
        struct Seen {
            received: u64,
            arrived: Ps,
            paused: u8,
            busy: Ps,
        }
        let mut seen: Vec<Seen> = (0..2)
            .map(|_| Seen {
                received: 0,
                arrived: 0,
                paused: 0,
                busy: 0,
            })
            .collect();
        let (mut pauses, mut resumes) = (0, 0);
        while !sim.step(1) {
            let now = sim.now();
            for (h, s) in seen.iter_mut().enumerate() {
                let p = sim.hosts.nics()[h].port();
                let r = p.report(now).pause_received;
                if r > s.received {
                    assert_eq!(r, s.received + 1, "one frame an event");
                    s.received = r;
                    s.arrived = now;
                }
                let paused = p.paused();
                if paused != s.paused {
                    assert_eq!(now, s.arrived + 1_024_000, "host {h}: the response time");
                    if paused & !s.paused != 0 {
                        pauses += 1;
                        // The frame on the wire is not cut short.
                        assert!(p.busy_until() >= s.busy.min(now));
                    } else {
                        resumes += 1;
                    }
                    s.paused = paused;
                } else if paused != 0 {
                    // Nothing new starts while paused (the data is class 0).
                    assert_eq!(p.busy_until(), s.busy, "host {h} sent while paused");
                }
                s.busy = p.busy_until();
            }
        }
        assert!(
            pauses > 10 && resumes > 10,
            "{pauses} pauses, {resumes} resumes"
        );
        assert_eq!(sim.counters().drops, 0);
        assert_eq!(sim.counters().flows_finished, 2);
    }

    /// The combined input/output-queued switch's bookkeeping holds after every event,
    /// for VOQ and FIFO inputs, lossy and lossless, with a speedup (transfers take time
    /// and contend) and without: an all-to-all query load in two classes over DeTail's
    /// leaf-spine, ALB spreading it.
    #[test]
    fn the_cioq_switch_keeps_its_books_at_every_event() {
        let text = r#"
[topology]
kind = "detail96"
racks = 3
[switch]
kind = "cioq"
forwarding = "alb"
forwarding_delay = "3100ns"
[transport]
rto_min = "10ms"
[workload]
kind = "request_response"
request_size = "1460B"
response_sizes = ["2KB", "8KB", "32KB"]
rate = 5000
priorities = 2
queries = 600
"#;
        for ingress in ["voq", "fifo"] {
            for fc in ["none", "pfc", "pause"] {
                for speedup in ["4", "off"] {
                    let o = [
                        format!("switch.ingress={ingress}"),
                        format!("switch.flow_control={fc}"),
                        format!("switch.speedup={speedup}"),
                    ];
                    let sc = Scenario::parse(text, &o, None).unwrap();
                    let mut sim = Sim::new(&sc).unwrap();
                    let mut waited = 0u64;
                    while !sim.step(1) {
                        for s in &sim.switches {
                            let Switch::Cioq(s) = s else { unreachable!() };
                            s.check(&sim.cx.pkts);
                            waited += (s.ports().iter().any(|p| !p.is_empty())) as u64;
                        }
                    }
                    let c = sim.counters();
                    assert_eq!(c.flows_unfinished, 0, "{o:?}");
                    assert!(waited > 1000, "{o:?}: packets queued");
                    if fc != "none" {
                        assert_eq!(c.drops, 0, "{o:?}");
                    }
                }
            }
        }
    }
}
