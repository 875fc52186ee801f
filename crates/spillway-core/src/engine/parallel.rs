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
use crate::fabric::partition::Partition;
use crate::fabric::Fabric;
use crate::host::ReceiverHalf;
use crate::output::counters::Counters;
use crate::output::flows::FlowRecords;
use crate::output::ports::PortRecords;
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
        }
    }
}

/// What every thread decides from the statuses, identically.
enum Decision {
    Run { until: Ps },
    Pause,
    Stop { reason: StopReason, now: Ps },
}

/// Where a run stands after `step`'s windows.
#[derive(Clone, Copy)]
struct Outcome {
    window: u64,
    stop: Option<(StopReason, Ps)>,
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
    peak_active: u64,
    /// Counts settled here: flows joined from their two halves, the end's dead bytes.
    settled: Counters,
    merge: RecordMerge,
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
        Ok(Parallel {
            merge: RecordMerge::new(lps.len()),
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

    /// Runs windows until at least `budget` events have run (or the run stops); true
    /// once it has ended.
    pub fn step(&mut self, budget: u64) -> bool {
        if self.finished() {
            return true;
        }
        let t0 = Instant::now();
        let n = self.lps.len();
        let shared = Shared {
            slots: (0..n * n).map(|_| Mutex::new(Post::default())).collect(),
            status: self.status.iter().map(|s| Mutex::new(*s)).collect(),
            barrier: Barrier::new(self.threads),
            lookahead: self.part.lookahead,
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
            self.end();
        } else {
            self.now = self.status.iter().map(|s| s.now).max().unwrap_or(0);
        }
        self.stats.wall_s += t0.elapsed().as_secs_f64();
        self.finished()
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
        for (lp, s) in self.lps.iter_mut().enumerate() {
            let rows = s.take_flows();
            let (halves, keys) = s.take_halves();
            self.merge.add(lp, &rows, &keys, halves);
        }
        self.merge.emit(self.ended, &mut self.settled)
    }

    pub fn take_queries(&mut self) -> Vec<QueryRecord> {
        self.lps.iter_mut().flat_map(|s| s.take_queries()).collect()
    }

    /// Every port's record, node by node (hosts' NICs first), each from the process that
    /// owns it.
    pub fn port_records(&self) -> PortRecords {
        let mut r = PortRecords::default();
        let hosts = self.hosts();
        let now = self.now;
        let none = crate::output::queues::QueueRow::NONE;
        for h in 0..hosts {
            let rep = self.lps[self.part.lp(h) as usize].nic_report(h, now);
            r.push(h, 0, false, &rep, none);
        }
        for node in hosts..self.part.lp_of.len() as u32 {
            let lp = &self.lps[self.part.lp(node) as usize];
            for (i, rep) in lp.switch_reports(node).iter().enumerate() {
                r.push(node, i as u32, true, rep, none);
            }
        }
        r
    }
}

/// What the threads of one `step` share.
struct Shared {
    /// Post from process i to process j: `slots[i * n + j]`.
    slots: Vec<Mutex<Post>>,
    status: Vec<Mutex<Status>>,
    barrier: Barrier,
    lookahead: Ps,
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
        if next == Ps::MAX {
            return Decision::Stop {
                reason: StopReason::Stalled,
                now: last,
            };
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
        Decision::Run {
            until: next.saturating_add(self.lookahead),
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
        let until = match sh.decide(&mut peak) {
            Decision::Run { until } => until,
            Decision::Pause => {
                return Outcome {
                    window: w,
                    stop: None,
                    peak_active: peak,
                    waited_s: waited,
                }
            }
            Decision::Stop { reason, now } => {
                return Outcome {
                    window: w,
                    stop: Some((reason, now)),
                    peak_active: peak,
                    waited_s: waited,
                }
            }
        };
        for (i, s) in mine.iter_mut() {
            s.run_window(w, until);
            for dst in (0..n).filter(|&d| d != *i) {
                let mut slot = sh.slots[*i * n + dst].lock().expect("no worker panicked");
                s.swap_post(dst, &mut slot);
                sh.parcels.fetch_add(slot.parcels.len(), Ordering::Relaxed);
            }
        }
        waited += sh.barrier.wait();
        for (i, s) in mine.iter_mut() {
            for src in (0..n).filter(|&x| x != *i) {
                let mut slot = sh.slots[src * n + *i].lock().expect("no worker panicked");
                s.import(&mut slot);
            }
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
