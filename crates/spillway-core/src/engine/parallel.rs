//! A parallel run (docs/architecture.md § Parallel runs): the fabric cut into logical
//! processes ([`Partition`]), each a [`Sim`] of its own (event queue, packet arena,
//! counters, its switches and hosts), run in windows by `run.threads` threads.
//!
//! Conservative synchronization, no rollback: every process runs the events of window
//! `[T, T + L)`, where T is the earliest pending event of any process and L the
//! lookahead (no packet sent over a cut link arrives sooner than L after it was sent), so
//! nothing another process does in the window can reach it before the window ends. At
//! the window's end the processes exchange their post (packets that crossed a cut,
//! notes between a flow's two ends) and take it in in the order of the senders'
//! indices. What each process does therefore depends only on the partition and the
//! scenario: the same output for any number of threads, which only decide how many
//! processes run at once (thread t runs processes t, t + threads, ...).
//!
//! Every thread decides the next window from the same published status, so no thread
//! leads: two barriers a window (after the run, after the exchange).

use super::context::StopReason;
use super::mailbox::Post;
use super::Sim;
use crate::config::{Scenario, ScenarioError};
use crate::fabric::partition::{Partition, SPLIT};
use crate::fabric::Fabric;
use crate::host::ReceiverHalf;
use crate::output::counters::Counters;
use crate::output::flow_throughput::FlowThroughputRecords;
use crate::output::flows::FlowRecords;
use crate::output::pings::PingRecords;
use crate::output::ports::PortRecords;
use crate::output::timeseries::TimeseriesRecords;
use crate::switch::deadlock;
use crate::switch::port::PortReport;
use crate::units::{Ps, HORIZON};
use crate::workload::QueryRecord;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What a process publishes at a window's end for every thread to decide by.
#[derive(Debug, Clone, Copy)]
struct Status {
    /// Its earliest pending event (Ps::MAX: none).
    next: Ps,
    events: u64,
    /// Flows whose sender's end is here, not yet recorded.
    active: u64,
    /// Its workload will start no more flows.
    exhausted: bool,
    /// The time of its last event.
    now: Ps,
    /// Nothing left but samples and checks.
    idle: bool,
    /// Its last progress check (`Sim::progress_checked`).
    checked: Option<(Ps, bool, u64)>,
}

impl Status {
    fn of(s: &mut Sim) -> Status {
        let (active, exhausted) = s.part_status();
        Status {
            next: s.next_time().unwrap_or(Ps::MAX),
            events: s.counters().events,
            active,
            exhausted,
            now: s.now(),
            idle: s.idle(),
            checked: s.progress_checked(),
        }
    }
}

/// What every thread decides from the statuses, identically.
enum Decision {
    Run {
        until: Ps,
    },
    Pause,
    /// Every process has run up to the next look over the whole fabric (a deadlock
    /// check), which the run then takes with all of them in hand.
    Global,
    Stop {
        reason: StopReason,
        now: Ps,
    },
}

/// Where a run stands after `step`'s windows.
#[derive(Clone, Copy)]
struct Outcome {
    window: u64,
    stop: Option<(StopReason, Ps)>,
    global: bool,
    peak_active: u64,
    /// Wall seconds this thread waited at barriers.
    waited_s: f64,
}

/// How the windows went, for docs/performance.md's efficiency figures.
#[derive(Debug, Clone, Default)]
pub struct ParallelStats {
    pub partitions: u32,
    pub threads: u32,
    pub lookahead_ps: Ps,
    pub windows: u64,
    /// Packets that crossed a cut link.
    pub parcels: u64,
    /// Wall seconds in `step`, and summed over threads, waiting at barriers.
    pub wall_s: f64,
    pub barrier_wait_s: f64,
    /// Events each process ran.
    pub events_per_partition: Vec<u64>,
}

/// A process, alone on its cache lines: processes next to each other in memory run on
/// different threads, and their hot fields (the clock, the counters) written at every
/// event would otherwise share a line between cores.
#[repr(align(128))]
struct Lp(Sim);

impl std::ops::Deref for Lp {
    type Target = Sim;
    fn deref(&self) -> &Sim {
        &self.0
    }
}

impl std::ops::DerefMut for Lp {
    fn deref_mut(&mut self) -> &mut Sim {
        &mut self.0
    }
}

pub struct Parallel {
    lps: Vec<Lp>,
    part: Arc<Partition>,
    threads: usize,
    window: u64,
    status: Vec<Status>,
    end_time: Ps,
    event_limit: u64,
    stop: StopReason,
    now: Ps,
    ended: bool,
    /// Why the run stopped, in words, when the reason needs them.
    detail: String,
    /// With flow control, `switch.deadlock_after`, and when the next deadlock check is.
    deadlock_after: Option<Ps>,
    next_check: Ps,
    /// `run.progress_limit`.
    progress_limit: Option<Ps>,
    /// `ping.src`.
    ping_src: Option<u32>,
    peak_active: u64,
    /// Counts settled here: flows joined from their two halves, the end's dead bytes.
    settled: Counters,
    merge: RecordMerge,
    /// Records joined at the run's end and not yet taken.
    left: FlowRecords,
    stats: ParallelStats,
}

impl Parallel {
    pub fn new(
        sc: &Scenario,
        fabric: Fabric,
        part: Partition,
        threads: usize,
    ) -> Result<Parallel, ScenarioError> {
        let fabric = Arc::new(fabric);
        let part = Arc::new(part);
        let mut lps = (0..part.count)
            .map(|lp| {
                let mut s = Sim::build(sc, fabric.clone(), Some((part.clone(), lp)))?;
                s.take_part(&part, lp);
                Ok(Lp(s))
            })
            .collect::<Result<Vec<_>, ScenarioError>>()?;
        let status = lps.iter_mut().map(|s| Status::of(s)).collect();
        let threads = threads.clamp(1, lps.len());
        let stats = ParallelStats {
            partitions: part.count,
            threads: threads as u32,
            lookahead_ps: part.lookahead,
            events_per_partition: vec![0; lps.len()],
            ..ParallelStats::default()
        };
        let deadlock_after = lps[0].deadlock_after;
        Ok(Parallel {
            merge: RecordMerge::new(lps.len()),
            left: FlowRecords::default(),
            detail: String::new(),
            deadlock_after,
            next_check: deadlock_after.unwrap_or(Ps::MAX),
            progress_limit: sc.run.progress_limit,
            ping_src: sc.ping.map(|p| p.src),
            lps,
            part,
            threads,
            window: 0,
            status,
            end_time: sc.run.duration.unwrap_or(HORIZON),
            event_limit: sc.run.max_events.unwrap_or(u64::MAX),
            stop: StopReason::Running,
            now: 0,
            ended: false,
            peak_active: 0,
            settled: Counters::default(),
            stats,
        })
    }

    pub fn fabric(&self) -> &Fabric {
        &self.lps[0].cx.fabric
    }

    pub fn now(&self) -> Ps {
        self.now
    }

    pub fn stop_reason(&self) -> StopReason {
        self.stop
    }

    pub fn finished(&self) -> bool {
        self.stop != StopReason::Running
    }

    pub fn active_flows(&self) -> u64 {
        self.status.iter().map(|s| s.active).sum()
    }

    pub fn hosts(&self) -> u32 {
        self.lps[0].hosts()
    }

    pub fn stats(&self) -> &ParallelStats {
        &self.stats
    }

    pub fn stop_detail(&self) -> &str {
        &self.detail
    }

    /// Runs windows until at least `budget` events have run (or the run stops); true
    /// once it has ended.
    pub fn step(&mut self, budget: u64) -> bool {
        let mut ran = 0;
        while !self.finished() && ran < budget {
            let before: u64 = self.status.iter().map(|s| s.events).sum();
            if !self.windows(budget - ran) {
                break;
            }
            // Every process has run every event before the check.
            self.check_deadlock();
            ran += self.status.iter().map(|s| s.events).sum::<u64>() - before;
        }
        self.finished()
    }

    /// Runs windows on the threads until at least `budget` events have run, the run
    /// stops, or a look over the whole fabric is due (then true).
    fn windows(&mut self, budget: u64) -> bool {
        let t0 = Instant::now();
        let n = self.lps.len();
        let shared = Shared {
            slots: (0..n * n).map(|_| Mutex::new(Post::default())).collect(),
            full: (0..n * n).map(|_| AtomicBool::new(false)).collect(),
            status: self.status.iter().map(|s| Mutex::new(*s)).collect(),
            barrier: Barrier::new(self.threads),
            lookahead: self.part.lookahead,
            check_at: self.next_check,
            progress_limit: self.progress_limit,
            end_time: self.end_time,
            event_limit: self.event_limit,
            budget,
            start_events: self.status.iter().map(|s| s.events).sum(),
            window: self.window,
            peak_active: self.peak_active,
            parcels: AtomicUsize::new(0),
        };
        let mut groups: Vec<Vec<(usize, &mut Sim)>> =
            (0..self.threads).map(|_| Vec::new()).collect();
        for (i, s) in self.lps.iter_mut().enumerate() {
            groups[i % self.threads].push((i, &mut s.0));
        }
        let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
            let mut groups = groups.into_iter();
            let first = groups.next().expect("at least one thread");
            let others: Vec<_> = groups
                .map(|g| {
                    let shared = &shared;
                    scope.spawn(move || worker(g, shared))
                })
                .collect();
            let mut all = vec![worker(first, &shared)];
            for h in others {
                match h.join() {
                    Ok(o) => all.push(o),
                    Err(e) => std::panic::resume_unwind(e),
                }
            }
            all
        });
        let o = outcomes[0];
        self.stats.barrier_wait_s += outcomes.iter().map(|o| o.waited_s).sum::<f64>();
        self.stats.windows += o.window - self.window;
        self.stats.parcels += shared.parcels.load(Ordering::Relaxed) as u64;
        self.window = o.window;
        self.peak_active = o.peak_active;
        self.status = shared
            .status
            .iter()
            .map(|m| *m.lock().expect("no worker panicked"))
            .collect();
        for (i, s) in self.status.iter().enumerate() {
            self.stats.events_per_partition[i] = s.events;
        }
        if let Some((reason, now)) = o.stop {
            self.stop = reason;
            self.now = now;
            if reason == StopReason::NoProgress {
                self.detail = self.no_progress();
            }
            self.end();
        } else {
            self.now = self.status.iter().map(|s| s.now).max().unwrap_or(0);
        }
        self.stats.wall_s += t0.elapsed().as_secs_f64();
        o.global
    }

    /// The deadlock check at `next_check` (every process has run up to it): over every
    /// process's switches, as a whole run's (`Sim::check_deadlock`).
    fn check_deadlock(&mut self) {
        let Some(after) = self.deadlock_after else {
            return;
        };
        let now = self.next_check;
        let fabric = self.lps[0].cx.fabric.clone();
        let hosts = fabric.hosts();
        let (lps, part) = (&self.lps, &self.part);
        // (Flow control keeps every switch whole: `Run::new`.)
        debug_assert!(!part.has_split());
        let switch = |n: u32| &lps[part.lp(n) as usize].switches[(n - hosts) as usize];
        if let Some(cycle) = deadlock::find_cycle(switch, &fabric, now.saturating_sub(after)) {
            self.detail = deadlock::describe(&cycle, &fabric);
            self.stop = StopReason::Deadlock;
            self.now = now;
            self.end();
            return;
        }
        self.next_check = now + after;
    }

    /// `run.progress_limit`'s stop, in words (`Sim::check_progress`).
    fn no_progress(&self) -> String {
        // Every process checked at the same time.
        let at = self.status[0].checked.map_or(0, |c| c.0);
        let active: u64 = self
            .status
            .iter()
            .filter_map(|s| s.checked)
            .map(|c| c.2)
            .sum();
        let every = self.progress_limit.unwrap_or(0);
        format!(
            "{active} active flows had no byte acknowledged since {} (run.progress_limit)",
            crate::units::format_time(at - every)
        )
    }

    pub fn run_to_end(&mut self) {
        while !self.step(1 << 20) {}
    }

    /// The run has stopped: every process records its flows, and the counts that are
    /// not sums are settled over all of them.
    fn end(&mut self) {
        self.ended = true;
        let (mut bytes, mut wire) = (0, 0);
        for s in &mut self.lps {
            s.end_part();
            let (b, w) = s.in_flight();
            bytes += b;
            wire += w;
        }
        let mut c = Counters::default();
        for s in &self.lps {
            c.add(s.counters());
        }
        let st = &mut self.settled;
        st.in_flight_data_bytes = bytes;
        st.dead_bytes = c.host_sent_data_bytes - c.host_received_data_bytes - bytes;
        st.dead_wire_bytes = c.host_sent_data_wire_bytes - c.host_received_data_wire_bytes - wire;
        // Every flow's halves are joined now, so that the counts of flows finished are
        // whole whether or not the records have been taken; the next take hands them out.
        self.left = self.merged();
    }

    /// The run's counters: the processes' summed, with what is settled here.
    pub fn counters(&self) -> Counters {
        let mut c = Counters::default();
        for s in &self.lps {
            c.add(s.counters());
        }
        // Not sums: the whole run's active flows at their peak (seen at window ends),
        // and the processes' stored packets at theirs, side by side.
        c.peak_active_flows = self.peak_active;
        // Every process counts the workload's open queries, the same.
        c.queries_unfinished = self.lps[0].counters().queries_unfinished;
        let st = &self.settled;
        c.flows_finished += st.flows_finished;
        c.flows_unfinished += st.flows_unfinished;
        if self.ended {
            c.in_flight_data_bytes = st.in_flight_data_bytes;
            c.dead_bytes = st.dead_bytes;
            c.dead_wire_bytes = st.dead_wire_bytes;
        }
        c
    }

    /// The flow records final since the last call, in the order of (window written,
    /// process, order there): the same for every thread count and every pace of calls.
    pub fn take_flows(&mut self) -> FlowRecords {
        let mut out = std::mem::take(&mut self.left);
        let more = self.merged();
        for i in 0..more.len() {
            out.push_row(&more, i);
        }
        out
    }

    /// The records the processes have written since the last call, joined, those that
    /// can go.
    fn merged(&mut self) -> FlowRecords {
        for (lp, s) in self.lps.iter_mut().enumerate() {
            let rows = s.take_flows();
            let (halves, keys) = s.take_halves();
            self.merge.add(lp, &rows, &keys, halves);
        }
        self.merge.emit(self.ended, &mut self.settled)
    }

    /// Every process runs the same workload and hears of every completion: process 0's
    /// query records are the run's (the others', identical, are dropped).
    pub fn take_queries(&mut self) -> Vec<QueryRecord> {
        let mut lps = self.lps.iter_mut();
        let rows = lps.next().map(|s| s.take_queries()).unwrap_or_default();
        for s in lps {
            debug_assert_eq!(s.take_queries(), rows);
        }
        rows
    }

    /// Every port's record, node by node (hosts' NICs first), each from the process that
    /// owns it, with its queue samples there.
    pub fn port_records(&self) -> PortRecords {
        let mut r = PortRecords::default();
        let hosts = self.hosts();
        let now = self.now;
        let fabric = &self.lps[0].cx.fabric;
        for h in 0..hosts {
            let lp = &self.lps[self.part.lp(h) as usize];
            let q = lp.sampling.queue_row(fabric.first_port(h));
            r.push(h, 0, false, &lp.nic_report(h, now), q);
        }
        for node in hosts..self.part.lp_of.len() as u32 {
            let base = fabric.first_port(node);
            if self.part.lp(node) == SPLIT {
                // Each port from the process it serves (its copies elsewhere idle); each
                // process's reports of this switch taken once.
                let mut reps: HashMap<u32, Vec<PortReport>> = HashMap::new();
                for i in 0..fabric.ports(node).len() {
                    let owner = self.part.port_owner(fabric, node, i);
                    let lp = &self.lps[owner as usize];
                    let rep = &reps.entry(owner).or_insert_with(|| lp.switch_reports(node))[i];
                    r.push(node, i as u32, true, rep, lp.sampling.queue_row(base + i));
                }
                continue;
            }
            let lp = &self.lps[self.part.lp(node) as usize];
            for (i, rep) in lp.switch_reports(node).iter().enumerate() {
                r.push(node, i as u32, true, rep, lp.sampling.queue_row(base + i));
            }
        }
        r
    }

    pub fn has_timeseries(&self) -> bool {
        self.lps[0].has_timeseries()
    }

    /// The timeseries' rows since the last call: every process samples at the same
    /// times, its own flows and counts, which add up to the run's.
    pub fn take_timeseries(&mut self) -> TimeseriesRecords {
        let mut lps = self.lps.iter_mut();
        let mut t = lps.next().map(|s| s.take_timeseries()).unwrap_or_default();
        for s in lps {
            let o = s.take_timeseries();
            assert_eq!(
                o.time_ps, t.time_ps,
                "every process samples at the same times"
            );
            let sum = |a: &mut Vec<u64>, b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            sum(&mut t.active_flows, &o.active_flows);
            sum(&mut t.outstanding_bytes, &o.outstanding_bytes);
            sum(&mut t.flows_started, &o.flows_started);
            sum(&mut t.drops, &o.drops);
        }
        t
    }

    pub fn has_queries(&self) -> bool {
        self.lps[0].has_queries()
    }

    pub fn has_pings(&self) -> bool {
        self.lps[0].has_pings()
    }

    /// `[ping]`'s rows: its source's process sends and hears the replies.
    pub fn take_pings(&mut self) -> PingRecords {
        match self.ping_src {
            Some(src) => self.lps[self.part.lp(src) as usize].take_pings(),
            None => PingRecords::default(),
        }
    }

    pub fn has_flow_throughput(&self) -> bool {
        self.lps[0].has_flow_throughput()
    }

    /// The goodput rows since the last call, each from its flow's sender's process: by
    /// time, then process, then the order written there.
    pub fn take_flow_throughput(&mut self) -> FlowThroughputRecords {
        let mut all = FlowThroughputRecords::default();
        for s in &mut self.lps {
            let r = s.take_flow_throughput();
            for i in 0..r.len() {
                all.push_row(&r, i);
            }
        }
        let mut order: Vec<usize> = (0..all.len()).collect();
        order.sort_by_key(|&i| all.time_ps[i]);
        let mut out = FlowThroughputRecords::default();
        for i in order {
            out.push_row(&all, i);
        }
        out
    }
}

/// What the threads of one `step` share.
struct Shared {
    /// Post from process i to process j: `slots[i * n + j]`.
    slots: Vec<Mutex<Post>>,
    /// Whether `slots[i]` holds a post not yet taken: most pairs of processes exchange
    /// nothing in most windows, and a look at a flag is cheaper than a lock (set and
    /// cleared on either side of a barrier, which orders them).
    full: Vec<AtomicBool>,
    status: Vec<Mutex<Status>>,
    barrier: Barrier,
    lookahead: Ps,
    /// The next look over the whole fabric (Ps::MAX: none).
    check_at: Ps,
    progress_limit: Option<Ps>,
    end_time: Ps,
    event_limit: u64,
    budget: u64,
    start_events: u64,
    window: u64,
    peak_active: u64,
    parcels: AtomicUsize,
}

impl Shared {
    /// The next window, decided from every process's status (each thread decides the
    /// same); `peak` follows the run's active flows.
    fn decide(&self, peak: &mut u64) -> Decision {
        let st: Vec<Status> = self
            .status
            .iter()
            .map(|m| *m.lock().expect("no worker panicked"))
            .collect();
        let active: u64 = st.iter().map(|s| s.active).sum();
        *peak = (*peak).max(active);
        let events: u64 = st.iter().map(|s| s.events).sum();
        let last = st.iter().map(|s| s.now).max().unwrap_or(0);
        let next = st.iter().map(|s| s.next).min().unwrap_or(Ps::MAX);
        if active == 0 && st.iter().all(|s| s.exhausted) {
            return Decision::Stop {
                reason: StopReason::AllFlowsDone,
                now: last,
            };
        }
        if next == Ps::MAX || st.iter().all(|s| s.idle) {
            // Nothing left to happen (samples and checks do not count, as in a whole run).
            let reason = if active > 0 {
                StopReason::Stalled
            } else {
                StopReason::AllFlowsDone
            };
            return Decision::Stop { reason, now: last };
        }
        // `run.progress_limit`: every process checks at the same times; the run stops
        // when at one of them nothing was acknowledged anywhere while flows were active.
        if let (Some(every), Some((at, ..))) = (self.progress_limit, st[0].checked) {
            let stuck = st
                .iter()
                .all(|s| s.checked.is_some_and(|c| c.0 == at && c.1));
            let active: u64 = st.iter().filter_map(|s| s.checked).map(|c| c.2).sum();
            if stuck && active > 0 && at >= 2 * every {
                return Decision::Stop {
                    reason: StopReason::NoProgress,
                    now: last,
                };
            }
        }
        if next > self.end_time {
            let reason = if self.end_time == HORIZON {
                StopReason::Horizon
            } else {
                StopReason::Duration
            };
            return Decision::Stop {
                reason,
                now: self.end_time,
            };
        }
        if events >= self.event_limit {
            return Decision::Stop {
                reason: StopReason::MaxEvents,
                now: last,
            };
        }
        if events - self.start_events >= self.budget {
            return Decision::Pause;
        }
        if next >= self.check_at {
            return Decision::Global;
        }
        Decision::Run {
            until: next.saturating_add(self.lookahead).min(self.check_at),
        }
    }
}

/// One thread's share of a `step`: its processes, window after window.
fn worker(mut mine: Vec<(usize, &mut Sim)>, sh: &Shared) -> Outcome {
    let n = sh.status.len();
    let mut w = sh.window;
    let mut peak = sh.peak_active;
    let mut waited = 0.0;
    let _guard = PanicGuard(&sh.barrier);
    loop {
        let d = sh.decide(&mut peak);
        let until = match d {
            Decision::Run { until } => until,
            Decision::Pause | Decision::Global => {
                return Outcome {
                    window: w,
                    stop: None,
                    global: matches!(d, Decision::Global),
                    peak_active: peak,
                    waited_s: waited,
                }
            }
            Decision::Stop { reason, now } => {
                return Outcome {
                    window: w,
                    stop: Some((reason, now)),
                    global: false,
                    peak_active: peak,
                    waited_s: waited,
                }
            }
        };
        let mut parcels = 0;
        for (i, s) in mine.iter_mut() {
            s.run_window(w, until);
            for dst in (0..n).filter(|&d| d != *i) {
                if !s.has_post(dst) {
                    continue;
                }
                let k = *i * n + dst;
                let mut slot = sh.slots[k].lock().expect("no worker panicked");
                s.swap_post(dst, &mut slot);
                parcels += slot.parcels.len();
                sh.full[k].store(true, Ordering::Relaxed);
            }
        }
        sh.parcels.fetch_add(parcels, Ordering::Relaxed);
        waited += sh.barrier.wait();
        for (i, s) in mine.iter_mut() {
            // In the senders' order, whichever posted.
            for src in (0..n).filter(|&x| x != *i) {
                let k = src * n + *i;
                if !sh.full[k].swap(false, Ordering::Relaxed) {
                    continue;
                }
                let mut slot = sh.slots[k].lock().expect("no worker panicked");
                s.import(&mut slot);
            }
            s.imported();
            *sh.status[*i].lock().expect("no worker panicked") = Status::of(s);
        }
        waited += sh.barrier.wait();
        w += 1;
    }
}

/// A spinning barrier: windows are short (microseconds of simulated time, tens of
/// microseconds of work), too short to sleep between. After a while it yields, so an
/// oversubscribed machine still makes progress. A thread that panics breaks it, so the
/// others return instead of waiting for ever.
struct Barrier {
    n: usize,
    /// Spins before yielding: none when there are more threads than cores (the thread
    /// waited for may need this core).
    spin: u32,
    count: AtomicUsize,
    generation: AtomicUsize,
    broken: AtomicBool,
}

impl Barrier {
    fn new(n: usize) -> Barrier {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        Barrier {
            n,
            spin: if n > cores { 0 } else { 1 << 12 },
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            broken: AtomicBool::new(false),
        }
    }

    /// Waits for every thread; returns the seconds waited.
    fn wait(&self) -> f64 {
        if self.n == 1 {
            return 0.0;
        }
        let t0 = Instant::now();
        let g = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
        } else {
            let mut spins = 0u32;
            while self.generation.load(Ordering::Acquire) == g {
                if self.broken.load(Ordering::Relaxed) {
                    panic!("another thread of the parallel run panicked");
                }
                spins += 1;
                if spins < self.spin {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
        t0.elapsed().as_secs_f64()
    }
}

struct PanicGuard<'a>(&'a Barrier);

impl Drop for PanicGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.broken.store(true, Ordering::Relaxed);
        }
    }
}

/// The flow records of every process, put in one order, a sender's half joined to its
/// receiver's (written in another process, a window or two later) before it goes out.
struct RecordMerge {
    rows: FlowRecords,
    /// Per pending row: (window, process, order in it, a sender's half).
    keys: Vec<(u64, u32, u64, bool)>,
    halves: HashMap<u64, ReceiverHalf>,
    written: Vec<u64>,
}

impl RecordMerge {
    fn new(lps: usize) -> RecordMerge {
        RecordMerge {
            rows: FlowRecords::default(),
            keys: Vec::new(),
            halves: HashMap::new(),
            written: vec![0; lps],
        }
    }

    fn add(
        &mut self,
        lp: usize,
        rows: &FlowRecords,
        keys: &[(u64, bool)],
        halves: Vec<ReceiverHalf>,
    ) {
        debug_assert_eq!(rows.len(), keys.len());
        for (i, &(w, split)) in keys.iter().enumerate() {
            self.rows.push_row(rows, i);
            self.keys.push((w, lp as u32, self.written[lp], split));
            self.written[lp] += 1;
        }
        for h in halves {
            self.halves.insert(h.id, h);
        }
    }

    /// The rows that can go, in key order: up to the first sender's half whose
    /// receiver's half has not come (all, once the run has ended). Joined flows are
    /// counted finished or not in `settled`.
    fn emit(&mut self, ended: bool, settled: &mut Counters) -> FlowRecords {
        let mut order: Vec<usize> = (0..self.keys.len()).collect();
        order.sort_unstable_by_key(|&i| {
            let (w, lp, k, _) = self.keys[i];
            (w, lp, k)
        });
        let (mut out, mut rest) = (FlowRecords::default(), FlowRecords::default());
        let mut rest_keys = Vec::new();
        let mut blocked = false;
        for i in order {
            let split = self.keys[i].3;
            if !blocked && split && !self.halves.contains_key(&self.rows.flow_id[i]) && !ended {
                blocked = true;
            }
            if blocked {
                rest.push_row(&self.rows, i);
                rest_keys.push(self.keys[i]);
                continue;
            }
            out.push_row(&self.rows, i);
            if split {
                let last = out.len() - 1;
                let h = self.halves.remove(&out.flow_id[last]);
                join(&mut out, last, h, settled);
            }
        }
        self.rows = rest;
        self.keys = rest_keys;
        out
    }
}

/// Row `i` of `r`, a sender's half, takes its receiver's half `h`.
fn join(r: &mut FlowRecords, i: usize, h: Option<ReceiverHalf>, settled: &mut Counters) {
    let h = h.unwrap_or(ReceiverHalf {
        id: r.flow_id[i],
        finish: None,
        delivered_bytes: 0,
        duplicate_bytes: 0,
        notified: 0,
    });
    match h.finish {
        Some(t) => {
            r.finish_ps[i] = t;
            r.fct_ps[i] = t - r.start_ps[i];
            r.slowdown[i] = (t - r.start_ps[i]) as f64 / r.ideal_fct_ps[i] as f64;
            settled.flows_finished += 1;
        }
        None => settled.flows_unfinished += 1,
    }
    r.delivered_bytes[i] = h.delivered_bytes;
    r.duplicate_bytes[i] = h.duplicate_bytes;
    r.notifications[i] += h.notified;
}
