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
//! Per-pair state lives in the shared [`DemandTable`]; a pair's token travels through the
//! ring and only its holder writes its allocation counters. Threads are std threads,
//! links are bounded std channels sized so that a stage never blocks on a full link, and
//! token buffers circulate, so the steady state allocates nothing.

use crate::alloc::{Batch, Core};
use crate::demand::{DemandError, DemandTable, Flow};
use crate::fabric::Fabric;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

const CHUNK: usize = 512;

struct Chunk {
    flows: Vec<Flow>,
    end: bool,
}

struct Cmd {
    first: u64,
    arrivals: Vec<Flow>,
    out: Batch,
}

/// A ring of allocator threads for greedy max-min allocation.
pub struct Pipeline {
    demand: Arc<DemandTable>,
    cmds: Vec<SyncSender<Cmd>>,
    results: Receiver<(Batch, Vec<Flow>)>,
    threads: Vec<JoinHandle<()>>,
    next: usize,
    arrivals: Vec<Flow>,
    spare_batches: Vec<Batch>,
    spare_vecs: Vec<Vec<Flow>>,
    width: u32,
    in_flight: usize,
    /// Thread CPU time of each stage, in nanoseconds, updated after every batch.
    cpu_ns: Arc<Vec<AtomicU64>>,
}

impl Pipeline {
    /// `stages` >= 2 allocator threads; batches of `width` timeslots.
    pub fn new(fabric: &Fabric, stages: usize, width: u32) -> Self {
        assert!(
            stages >= 2,
            "a pipeline has at least two stages (use Allocator for one)"
        );
        let n = fabric.endpoints();
        let demand = Arc::new(DemandTable::new_shared(n));
        // Room for every token of one batch's output plus the next one's start.
        let link_cap = 2 * (n * n / CHUNK + 4);
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
                flows: Vec::new(),
                end: true,
            })
            .expect("link open");
        let (res_tx, results) = sync_channel(4 * stages);
        let mut cmds = Vec::new();
        let mut threads = Vec::new();
        let cpu_ns: Arc<Vec<AtomicU64>> =
            Arc::new((0..stages).map(|_| AtomicU64::new(0)).collect());
        for i in 0..stages {
            let (cmd_tx, cmd_rx) = sync_channel::<Cmd>(2);
            cmds.push(cmd_tx);
            let input = links_rx[(i + stages - 1) % stages]
                .take()
                .expect("one reader");
            let output = links_tx[i].clone();
            let res = res_tx.clone();
            let d = demand.clone();
            let core = Core::new(fabric, width);
            let cpu = cpu_ns.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("alloc-{i}"))
                    .spawn(move || {
                        let report = move || {
                            let ns = (crate::cputime::thread_cpu_seconds() * 1e9) as u64;
                            cpu[i].store(ns, Relaxed);
                        };
                        stage(core, d, cmd_rx, input, output, res, &report)
                    })
                    .expect("spawn allocator thread"),
            );
        }
        Pipeline {
            demand,
            cmds,
            results,
            threads,
            next: 0,
            arrivals: Vec::new(),
            spare_batches: Vec::new(),
            spare_vecs: Vec::new(),
            width,
            in_flight: 0,
            cpu_ns,
        }
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
            self.arrivals.push(f);
        }
        Ok(())
    }

    pub fn leave(&mut self, e: u32) -> Result<(), DemandError> {
        self.demand.leave(e)
    }

    pub fn rejoin(&mut self, e: u32) -> Result<(), DemandError> {
        self.demand.rejoin(e, &mut self.arrivals)
    }

    /// Start allocating timeslots `first .. first + width` (batches in increasing order).
    /// Results come back from [`Pipeline::recv`], in order.
    pub fn allocate(&mut self, first: u64) {
        let fresh = self.spare_vecs.pop().unwrap_or_default();
        let arrivals = std::mem::replace(&mut self.arrivals, fresh);
        let out = self.spare_batches.pop().unwrap_or_default();
        self.cmds[self.next]
            .send(Cmd {
                first,
                arrivals,
                out,
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

    /// Batches started and not yet received.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The next finished batch. Stages finish in ring order, so batches arrive in the
    /// order they were started.
    pub fn recv(&mut self) -> Batch {
        let (b, v) = self.results.recv().expect("allocator thread alive");
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

fn stage(
    core: Core,
    d: Arc<DemandTable>,
    cmds: Receiver<Cmd>,
    input: Receiver<Chunk>,
    output: SyncSender<Chunk>,
    results: SyncSender<(Batch, Vec<Flow>)>,
    report: &dyn Fn(),
) {
    if core.slots.racks() {
        stage_loop::<true>(core, d, cmds, input, output, results, report)
    } else {
        stage_loop::<false>(core, d, cmds, input, output, results, report)
    }
}

fn stage_loop<const RACKS: bool>(
    mut core: Core,
    d: Arc<DemandTable>,
    cmds: Receiver<Cmd>,
    input: Receiver<Chunk>,
    output: SyncSender<Chunk>,
    results: SyncSender<(Batch, Vec<Flow>)>,
    report: &dyn Fn(),
) {
    let mut pool: Vec<Vec<Flow>> = Vec::new();
    let mut leftover: Vec<Flow> = Vec::new();
    let mut keys = crate::alloc::SortScratch::default();
    let new_chunk = |pool: &mut Vec<Vec<Flow>>| {
        let mut v = pool.pop().unwrap_or_default();
        v.clear();
        v.reserve(CHUNK);
        v
    };
    while let Ok(Cmd {
        first,
        mut arrivals,
        mut out,
    }) = cmds.recv()
    {
        let d = &*d;
        core.begin(d, first, &mut out);
        crate::alloc::sort_by_key(d, &mut arrivals, &mut keys);
        let mut j = 0;
        let mut stale = new_chunk(&mut pool);
        // Round 1: the previous batch's leftovers as they stream in, merged with the
        // newly active pairs by max-min key (§3.1).
        loop {
            let Ok(chunk) = input.recv() else { return };
            for &f in &chunk.flows {
                let key = d.last_key(f);
                while j < arrivals.len() && d.last_key(arrivals[j]) < key {
                    core.offer_next::<RACKS>(d, arrivals[j], &mut stale, &mut out);
                    j += 1;
                }
                core.offer_next::<RACKS>(d, f, &mut stale, &mut out);
                if stale.len() >= CHUNK {
                    let full = std::mem::replace(&mut stale, new_chunk(&mut pool));
                    if output
                        .send(Chunk {
                            flows: full,
                            end: false,
                        })
                        .is_err()
                    {
                        return;
                    }
                }
            }
            pool.push(chunk.flows);
            if chunk.end {
                break;
            }
        }
        for &f in &arrivals[j..] {
            core.offer_next::<RACKS>(d, f, &mut stale, &mut out);
        }
        if output
            .send(Chunk {
                flows: stale,
                end: false,
            })
            .is_err()
        {
            return;
        }
        // Pairs allocated in this batch, by slot: only now in order (the reordering).
        leftover.clear();
        core.drain_bins::<RACKS, _>(d, &mut leftover, &mut out);
        let mut tail = new_chunk(&mut pool);
        tail.extend_from_slice(&leftover);
        if output
            .send(Chunk {
                flows: tail,
                end: true,
            })
            .is_err()
        {
            return;
        }
        arrivals.clear();
        report();
        if results.send((out, arrivals)).is_err() {
            return;
        }
    }
}
