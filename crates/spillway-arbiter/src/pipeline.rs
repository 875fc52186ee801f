//! Pipelined allocation across threads (Fastpass §3.1, Fig. 3; §6.2 alloc-cores).
//!
//! `S` stages in a ring; stage `i` allocates batches `i, i + S, ...`. The input of the
//! allocator for batch b + 1 is the demand batch b left, streamed in chunks as batch b
//! produces it. Max-min needs only limited reordering (§3.1): pairs batch b could not
//! allocate keep keys older than batch b and leave in order as soon as they are blocked,
//! so the next stage processes them at once; pairs allocated in batch b (keys inside it)
//! follow in slot order once batch b is done. Newly active pairs are merged in by key.
//! The result is the same allocation the single-threaded greedy max-min computes.
//!
//! Per-pair state lives in the shared [`DemandTable`]; a pair's token (its remaining
//! demand, a lower bound as in the single-threaded allocator, and its max-min key)
//! travels through the ring, and only its holder writes its allocation counters. A stage
//! runs the same allocation loop as the single-threaded allocator. Threads are std
//! threads, links are bounded std channels sized so that a stage never blocks on a full
//! link, and token buffers circulate, so the steady state allocates nothing.

use crate::alloc::{
    check_first, reread_after_reset, sort_arrivals, Batch, Core, General, MaxMinPass, Pend,
    SortScratch,
};
use crate::demand::{DemandError, DemandTable, Flow};
use crate::fabric::{ConfigError, Fabric};
use crate::slots::check_width;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{sync_channel, Receiver, RecvError, SyncSender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Pairs per message between stages: small enough that the next stage starts soon,
/// large enough that hand-offs are rare.
const CHUNK: usize = 256;

struct Chunk {
    pends: Vec<Pend>,
    end: bool,
    /// The table's reset count the producing stage's batch started with: tokens from
    /// before a reset carry demand it may have dropped.
    resets: u64,
}

struct Cmd {
    first: u64,
    arrivals: Vec<Pend>,
    out: Batch,
    /// The table's reset count when the batch was started.
    resets: u64,
}

/// A ring of allocator threads for greedy max-min allocation.
pub struct Pipeline {
    demand: Arc<DemandTable>,
    cmds: Vec<SyncSender<Cmd>>,
    results: Receiver<(Batch, Vec<Pend>)>,
    threads: Vec<JoinHandle<()>>,
    next: usize,
    arrivals: Vec<Pend>,
    rejoined: Vec<Flow>,
    /// The table's reset count at the last batch started.
    resets: u64,
    spare_batches: Vec<Batch>,
    spare_vecs: Vec<Vec<Pend>>,
    width: u32,
    in_flight: usize,
    /// Thread CPU time of each stage, in nanoseconds, updated after every batch.
    cpu_ns: Arc<Vec<AtomicU64>>,
    /// Of that, the time each stage spent on batches after their input had ended.
    serial_ns: Arc<Vec<AtomicU64>>,
}

impl Pipeline {
    /// `stages` >= 2 allocator threads (else [`ConfigError::Stages`]: use an
    /// [`crate::Allocator`] for one); batches of `width` timeslots (`1..=MAX_WIDTH`, else
    /// [`ConfigError::Width`]).
    pub fn new(fabric: &Fabric, stages: usize, width: u32) -> Result<Self, ConfigError> {
        Self::with_chunk(fabric, stages, width, CHUNK)
    }

    /// [`Pipeline::new`] with `chunk` pairs per message between stages (tests use small
    /// ones to exercise the streaming); 0 is [`ConfigError::Chunk`].
    #[doc(hidden)]
    pub fn with_chunk(
        fabric: &Fabric,
        stages: usize,
        width: u32,
        chunk: usize,
    ) -> Result<Self, ConfigError> {
        // Checked before any thread starts.
        if chunk == 0 {
            return Err(ConfigError::Chunk);
        }
        if stages < 2 {
            return Err(ConfigError::Stages(stages));
        }
        check_width(width)?;
        let n = fabric.endpoints();
        let demand = Arc::new(DemandTable::new_shared(n));
        // Room for every token of one batch's output plus the next one's start.
        let link_cap = 2 * (n * n / chunk + width as usize + 4);
        let mut links_tx = Vec::new();
        let mut links_rx = Vec::new();
        for _ in 0..stages {
            let (tx, rx) = sync_channel::<Chunk>(link_cap);
            links_tx.push(tx);
            links_rx.push(Some(rx));
        }
        // Batch 0 starts from an empty stream.
        links_tx[stages - 1]
            .send(Chunk {
                pends: Vec::new(),
                end: true,
                resets: 0,
            })
            .expect("link open");
        let (res_tx, results) = sync_channel(4 * stages);
        let mut cmds = Vec::new();
        let mut threads = Vec::new();
        let cpu_ns: Arc<Vec<AtomicU64>> =
            Arc::new((0..stages).map(|_| AtomicU64::new(0)).collect());
        let serial_ns: Arc<Vec<AtomicU64>> =
            Arc::new((0..stages).map(|_| AtomicU64::new(0)).collect());
        for i in 0..stages {
            let (cmd_tx, cmd_rx) = sync_channel::<Cmd>(2);
            cmds.push(cmd_tx);
            let st = Stage {
                input: links_rx[(i + stages - 1) % stages]
                    .take()
                    .expect("one reader"),
                output: links_tx[i].clone(),
                pool: Vec::new(),
                chunk,
                keys: SortScratch::default(),
                serial: 0.0,
                resets: 0,
            };
            let res = res_tx.clone();
            let d = demand.clone();
            let core = Core::new(fabric, width);
            let cpu = cpu_ns.clone();
            let serial = serial_ns.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("alloc-{i}"))
                    .spawn(move || {
                        let report = move |serial_s: f64| {
                            let ns = (crate::cputime::thread_cpu_seconds() * 1e9) as u64;
                            cpu[i].store(ns, Relaxed);
                            serial[i].store((serial_s * 1e9) as u64, Relaxed);
                        };
                        stage(st, core, d, cmd_rx, res, &report)
                    })
                    .expect("spawn allocator thread"),
            );
        }
        Ok(Pipeline {
            demand,
            cmds,
            results,
            threads,
            next: 0,
            arrivals: Vec::new(),
            rejoined: Vec::new(),
            resets: 0,
            spare_batches: Vec::new(),
            spare_vecs: Vec::new(),
            width,
            in_flight: 0,
            cpu_ns,
            serial_ns,
        })
    }

    pub fn demand(&self) -> &DemandTable {
        &self.demand
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    /// FCP aggregate count (§5.3); see [`DemandTable::request`].
    pub fn request(&mut self, src: u32, dst: u32, total: u64) -> Result<(), DemandError> {
        if let Some(f) = self.demand.request(src, dst, total)? {
            // Its demand and key, read while the report has the record in cache (no
            // stage holds the pair: it was inactive).
            self.arrivals.push(Pend::read(&self.demand, f));
        }
        Ok(())
    }

    pub fn leave(&mut self, e: u32) -> Result<(), DemandError> {
        self.demand.leave(e)
    }

    pub fn rejoin(&mut self, e: u32) -> Result<(), DemandError> {
        self.demand.rejoin(e, &mut self.rejoined)?;
        for f in self.rejoined.drain(..) {
            self.arrivals.push(Pend::read(&self.demand, f));
        }
        Ok(())
    }

    /// FCP re-synchronisation (§5.1, §5.3); see [`DemandTable::reset`]. Batches started
    /// after it re-read the demand of every pair they are handed (as the single-threaded
    /// allocator does after a reset); batches already started may still allocate demand
    /// it dropped.
    pub fn reset(&mut self, e: u32) -> Result<(), DemandError> {
        self.demand.reset(e)
    }

    /// [`Pipeline::reset`] at an agreed count; see [`DemandTable::reset_to`].
    pub fn reset_to(&mut self, e: u32, total: u64) -> Result<(), DemandError> {
        self.demand.reset_to(e, total)
    }

    /// Start allocating timeslots `first .. first + width` (batches in increasing order).
    /// Results come back from [`Pipeline::recv`], in order.
    ///
    /// # Panics
    /// With as many batches in flight as the pipeline holds results for (4 per stage):
    /// [`Pipeline::recv`] some first (the stages would stop with nobody receiving). If
    /// the batch would end past timeslot `u64::MAX` (see [`crate::Allocator::allocate`]).
    pub fn allocate(&mut self, first: u64) {
        check_first(first, self.width);
        assert!(
            self.in_flight < 4 * self.cmds.len(),
            "{} batches in flight: recv() finished batches before starting more",
            self.in_flight
        );
        reread_after_reset(&self.demand, &mut self.resets, &mut self.arrivals);
        let resets = self.resets;
        let fresh = self.spare_vecs.pop().unwrap_or_default();
        let arrivals = std::mem::replace(&mut self.arrivals, fresh);
        let out = self.spare_batches.pop().unwrap_or_default();
        self.cmds[self.next]
            .send(Cmd {
                first,
                arrivals,
                out,
                resets,
            })
            .expect("allocator thread alive");
        self.next = (self.next + 1) % self.cmds.len();
        self.in_flight += 1;
    }

    /// CPU time the allocator threads have used so far, in seconds (as of each thread's
    /// last finished batch).
    pub fn cpu_seconds(&self) -> f64 {
        self.cpu_ns.iter().map(|c| c.load(Relaxed)).sum::<u64>() as f64 * 1e-9
    }

    /// Of [`Pipeline::cpu_seconds`], the part spent on batches after their input had
    /// ended: the tail of the previous batch, then the drain of the slots. Batch b + 1
    /// cannot start that before batch b has finished it (pairs allocated in batch b come
    /// after every older pair, §3.1), so it runs one stage at a time: the pipeline's
    /// time per batch is at least this part's, whatever the number of stages.
    pub fn serial_cpu_seconds(&self) -> f64 {
        self.serial_ns.iter().map(|c| c.load(Relaxed)).sum::<u64>() as f64 * 1e-9
    }

    /// Batches started and not yet received.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The next finished batch. Stages finish in ring order, so batches arrive in the
    /// order they were started.
    ///
    /// # Panics
    /// With no batch in flight (it would wait forever).
    pub fn recv(&mut self) -> Batch {
        assert!(self.in_flight > 0, "recv() with no batch in flight");
        let (b, v) = recv_soon(&self.results).expect("allocator thread alive");
        self.spare_vecs.push(v);
        self.in_flight -= 1;
        b
    }

    /// Give a received batch back for reuse (optional; avoids allocation).
    pub fn recycle(&mut self, b: Batch) {
        self.spare_batches.push(b);
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        self.cmds.clear();
        while self.in_flight > 0 && self.results.recv().is_ok() {
            self.in_flight -= 1;
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Receive from a link, a stage's commands or the results, waiting without sleeping at
/// first: the producer is in the middle of a batch, so the next message is usually
/// microseconds away, and parking (a futex wait, then a wake-up syscall on the sender's
/// side) costs more than that. With narrow batches the hand-offs are most of the
/// pipeline's time (docs/arbiter.md).
fn recv_soon<T>(rx: &Receiver<T>) -> Result<T, RecvError> {
    for i in 0..SPINS {
        match rx.try_recv() {
            Ok(x) => return Ok(x),
            Err(TryRecvError::Disconnected) => return Err(RecvError),
            Err(TryRecvError::Empty) if i < 64 => std::hint::spin_loop(),
            // Give the core away (another stage or the feeder may be waiting for it).
            Err(TryRecvError::Empty) => std::thread::yield_now(),
        }
    }
    rx.recv()
}

/// Tries of [`recv_soon`] before it sleeps (about 50-100 us of yields): long enough for
/// the hand-offs inside a batch, short enough not to burn a core that another thread
/// needs when there are more threads than cores.
const SPINS: u32 = 256;

struct Stage {
    input: Receiver<Chunk>,
    output: SyncSender<Chunk>,
    /// Chunk buffers, circulating round the ring.
    pool: Vec<Vec<Pend>>,
    chunk: usize,
    keys: SortScratch,
    /// CPU seconds spent on batches after their input ended.
    serial: f64,
    /// The table's reset count the current batch started with.
    resets: u64,
}

/// The link is closed: the pipeline is being dropped.
struct Closed;

impl Stage {
    fn fresh(&mut self) -> Vec<Pend> {
        let mut v = self.pool.pop().unwrap_or_default();
        v.clear();
        v.reserve(self.chunk);
        v
    }

    fn send(&mut self, v: &mut Vec<Pend>, end: bool) -> Result<(), Closed> {
        let full = std::mem::replace(v, self.fresh());
        self.output
            .send(Chunk {
                pends: full,
                end,
                resets: self.resets,
            })
            .map_err(|_| Closed)
    }

    /// Hand a full chunk of blocked pairs to the next stage, their grants written back to
    /// the table first (the next stage may read their records).
    fn hand_on<P: MaxMinPass>(
        &mut self,
        pass: &mut P,
        blocked: &mut Vec<Pend>,
    ) -> Result<(), Closed> {
        pass.write_back();
        self.send(blocked, false)
    }

    /// Allocate one batch into `out`: round 1 offers the previous batch's pairs as they
    /// stream in, merged with the newly active ones by key; those blocked go on at once.
    /// Then the slots are drained in order, and the pairs blocked there (keys inside this
    /// batch, in key order) go on as each chunk fills (§3.1's limited reordering).
    fn batch<P: MaxMinPass>(
        &mut self,
        mut pass: P,
        d: &DemandTable,
        arrivals: &[Pend],
        width: u32,
    ) -> Result<(), Closed> {
        let mut j = 0;
        let mut blocked = self.fresh();
        loop {
            let chunk = recv_soon(&self.input).map_err(|_| Closed)?;
            // Tokens from a batch started before a reset: their demand is re-read.
            let reread = chunk.resets != self.resets;
            for &p in &chunk.pends {
                let p = if reread { Pend::read(d, p.f) } else { p };
                while j < arrivals.len() && arrivals[j].key < p.key {
                    pass.offer(arrivals[j], &mut blocked);
                    j += 1;
                }
                pass.offer(p, &mut blocked);
                if blocked.len() >= self.chunk {
                    self.hand_on(&mut pass, &mut blocked)?;
                }
            }
            self.pool.push(chunk.pends);
            if chunk.end {
                break;
            }
        }
        let t0 = crate::cputime::thread_cpu_seconds();
        for &a in &arrivals[j..] {
            pass.offer(a, &mut blocked);
        }
        for k in 0..width {
            pass.drain_slot(k, &mut blocked);
            if blocked.len() >= self.chunk {
                self.hand_on(&mut pass, &mut blocked)?;
            }
        }
        pass.finish();
        self.send(&mut blocked, true)?;
        self.serial += crate::cputime::thread_cpu_seconds() - t0;
        self.pool.push(blocked);
        Ok(())
    }
}

fn stage(
    mut st: Stage,
    mut core: Core,
    d: Arc<DemandTable>,
    cmds: Receiver<Cmd>,
    results: SyncSender<(Batch, Vec<Pend>)>,
    report: &dyn Fn(f64),
) {
    while let Ok(Cmd {
        first,
        mut arrivals,
        mut out,
        resets,
    }) = recv_soon(&cmds)
    {
        let d = &*d;
        st.resets = resets;
        core.begin(d, first, &mut out);
        sort_arrivals(d.endpoints(), &mut arrivals, &mut st.keys);
        let width = core.width;
        let done = if core.slots.racks() {
            let pass = General::<true> {
                core: &mut core,
                d,
                out: &mut out,
            };
            st.batch(pass, d, &arrivals, width)
        } else {
            st.batch(core.flat(d, &mut out), d, &arrivals, width)
        };
        if done.is_err() {
            return;
        }
        arrivals.clear();
        report(st.serial);
        if results.send((out, arrivals)).is_err() {
            return;
        }
    }
}
