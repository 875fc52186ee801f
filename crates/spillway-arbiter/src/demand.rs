//! Demand state per (source, destination) pair, fed by idempotent aggregate counts.
//!
//! Fastpass §5.3 (FCP): an endpoint reports the total number of timeslots it has ever
//! requested for a destination; the arbiter adds only the difference, so a retransmitted
//! or reordered report never allocates twice. §5.1: after failover the counts are reset
//! and endpoints report fresh totals.
//!
//! The table is shared between the caller (who reports demand) and the allocators (who
//! consume it), possibly on different threads (§3.1 pipeline), so every field is an
//! atomic. Ownership is by protocol: only the caller writes `requested`/`base`, only the
//! allocator that currently holds a flow's token writes `allocated`/`last`. On x86 relaxed
//! loads and stores are plain moves; read-modify-writes are kept off the hot path.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};

/// A (source, destination) pair with demand: the token allocators pass along.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
}

/// 32 bytes, aligned: one pair never straddles two cache lines.
#[derive(Default)]
#[repr(align(32))]
struct PairState {
    /// Timeslots requested, in the arbiter's own count (epoch base + endpoint's total).
    requested: AtomicU64,
    /// Timeslots allocated, same count.
    allocated: AtomicU64,
    /// `allocated` at the last reset: the endpoint's totals are relative to it.
    base: AtomicU64,
    /// 0 = never allocated, else last allocated timeslot + 1 (max-min order key).
    last: AtomicU64,
}

impl PairState {
    /// Record `got` allocated timeslots, the latest being `last`; returns the new
    /// allocated count. Only the token holder writes `allocated` and `last`.
    #[inline(always)]
    fn commit(&self, got: u64, last: u64) -> u64 {
        let allocated = self.allocated.load(Relaxed) + got;
        self.allocated.store(allocated, Relaxed);
        self.last.store(last + 1, Relaxed);
        allocated
    }
}

/// Why a demand report was refused (never a panic: reports come from the network).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DemandError {
    UnknownEndpoint(u32),
    SelfDemand(u32),
}

impl std::fmt::Display for DemandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DemandError::UnknownEndpoint(e) => write!(f, "endpoint {e} is not in the fabric"),
            DemandError::SelfDemand(e) => write!(f, "endpoint {e} requested timeslots to itself"),
        }
    }
}
impl std::error::Error for DemandError {}

pub struct DemandTable {
    n: usize,
    pairs: Box<[PairState]>,
    /// Per pair: whether a token for it is in some allocator's pending list.
    active: Box<[AtomicBool]>,
    present: Box<[AtomicBool]>,
    /// Number of `reset` calls so far.
    resets: AtomicU64,
    /// Shared between threads (pipeline): the activation handshake needs sequentially
    /// consistent operations. Single-threaded, plain loads and stores do (an x86 locked
    /// instruction costs more than the rest of a grant).
    concurrent: bool,
}

impl DemandTable {
    pub fn new(n: usize) -> Self {
        DemandTable {
            n,
            pairs: (0..n * n).map(|_| PairState::default()).collect(),
            active: (0..n * n).map(|_| AtomicBool::new(false)).collect(),
            present: (0..n).map(|_| AtomicBool::new(true)).collect(),
            resets: AtomicU64::new(0),
            concurrent: false,
        }
    }

    /// A table whose reports and allocators run on different threads.
    pub fn new_shared(n: usize) -> Self {
        DemandTable {
            concurrent: true,
            ..Self::new(n)
        }
    }

    #[inline]
    fn strong(&self) -> std::sync::atomic::Ordering {
        if self.concurrent {
            SeqCst
        } else {
            Relaxed
        }
    }

    #[inline]
    fn active(&self, f: Flow) -> &AtomicBool {
        &self.active[f.src as usize * self.n + f.dst as usize]
    }

    pub fn endpoints(&self) -> usize {
        self.n
    }

    #[inline]
    fn pair(&self, f: Flow) -> &PairState {
        &self.pairs[f.src as usize * self.n + f.dst as usize]
    }

    fn check(&self, src: u32, dst: u32) -> Result<Flow, DemandError> {
        for e in [src, dst] {
            if e as usize >= self.n {
                return Err(DemandError::UnknownEndpoint(e));
            }
        }
        if src == dst {
            return Err(DemandError::SelfDemand(src));
        }
        Ok(Flow { src, dst })
    }

    /// FCP §5.3: `total` = timeslots `src` has requested for `dst` since its last reset.
    /// Stale totals (smaller than already seen) are ignored. Returns `Ok(Some(flow))` when
    /// the flow became active and must be handed to the allocator (exactly once).
    pub fn request(&self, src: u32, dst: u32, total: u64) -> Result<Option<Flow>, DemandError> {
        let f = self.check(src, dst)?;
        let p = self.pair(f);
        let want = p.base.load(Relaxed) + total;
        if want > p.requested.load(Relaxed) {
            p.requested.store(want, self.strong());
        }
        Ok(self.try_activate(f).then_some(f))
    }

    /// Remaining demand and max-min key, from one read of the pair's record.
    #[inline]
    pub(crate) fn remaining_and_key(&self, f: Flow) -> (u64, u64) {
        let p = self.pair(f);
        let rem = p
            .requested
            .load(Relaxed)
            .saturating_sub(p.allocated.load(Relaxed));
        (rem, p.last.load(Relaxed))
    }

    /// How many resets there have been: an allocator holding remaining demand in its
    /// tokens re-reads it when this changes (a reset drops pending demand).
    #[inline]
    pub(crate) fn resets(&self) -> u64 {
        self.resets.load(SeqCst)
    }

    /// Timeslots requested but not yet allocated. A pair naming an endpoint outside the
    /// table is an error (its index could alias another pair's record).
    pub fn remaining(&self, f: Flow) -> Result<u64, DemandError> {
        self.check_flow(f)?;
        Ok(self.outstanding(f))
    }

    /// [`DemandTable::remaining`] of a pair known to be in the table (the allocators').
    #[inline]
    pub(crate) fn outstanding(&self, f: Flow) -> u64 {
        let p = self.pair(f);
        p.requested
            .load(Relaxed)
            .saturating_sub(p.allocated.load(Relaxed))
    }

    /// The endpoint's view: timeslots requested since its last reset.
    pub fn requested(&self, f: Flow) -> Result<u64, DemandError> {
        self.check_flow(f)?;
        let p = self.pair(f);
        Ok(p.requested.load(Relaxed) - p.base.load(Relaxed))
    }

    /// The endpoint's view: timeslots allocated since its last reset (the aggregate
    /// count FCP returns to the endpoint).
    pub fn allocated(&self, f: Flow) -> Result<u64, DemandError> {
        self.check_flow(f)?;
        let p = self.pair(f);
        Ok(p.allocated
            .load(Relaxed)
            .saturating_sub(p.base.load(Relaxed)))
    }

    /// Last timeslot allocated to the pair, if any.
    pub fn last_allocated(&self, f: Flow) -> Result<Option<u64>, DemandError> {
        self.check_flow(f)?;
        Ok(self.pair(f).last.load(Relaxed).checked_sub(1))
    }

    /// Max-min order key: smaller = less recently allocated = served first.
    #[inline]
    pub(crate) fn last_key(&self, f: Flow) -> u64 {
        self.pair(f).last.load(Relaxed)
    }

    /// Record `got` allocated timeslots, the latest being `last`. Only the token holder
    /// calls this.
    #[inline]
    pub(crate) fn commit(&self, f: Flow, got: u64, last: u64) {
        self.pair(f).commit(got, last);
    }

    /// [`DemandTable::commit`], then [`DemandTable::remaining`] of the same record, with
    /// one lookup: a token that ran dry does both. Only the token holder writes
    /// `allocated`, so the count just stored is the one `remaining` would read.
    #[inline]
    pub(crate) fn commit_remaining(&self, f: Flow, got: u64, last: u64) -> u64 {
        let p = self.pair(f);
        let allocated = p.commit(got, last);
        p.requested.load(Relaxed).saturating_sub(allocated)
    }

    /// Record one allocated timeslot. Only the token holder calls this.
    #[inline]
    pub(crate) fn grant(&self, f: Flow, timeslot: u64) {
        let p = self.pair(f);
        p.allocated.store(p.allocated.load(Relaxed) + 1, Relaxed);
        if timeslot + 1 > p.last.load(Relaxed) {
            p.last.store(timeslot + 1, Relaxed);
        }
    }

    /// Set the max-min key after a grant moved within a batch (iterative mode).
    #[inline]
    pub(crate) fn set_last(&self, f: Flow, timeslot: u64) {
        self.pair(f).last.store(timeslot + 1, Relaxed);
    }

    /// Whether endpoint `e` is present (not left).
    pub fn present(&self, e: u32) -> Result<bool, DemandError> {
        self.check_endpoint(e)?;
        Ok(self.is_present(e))
    }

    /// [`DemandTable::present`] of an endpoint known to be in the table.
    #[inline]
    pub(crate) fn is_present(&self, e: u32) -> bool {
        self.present[e as usize].load(Relaxed)
    }

    #[inline]
    fn eligible(&self, f: Flow) -> bool {
        let o = self.strong();
        // Sequentially consistent when shared: `retire` stores `active` and then reads
        // `requested` here, while a report stores `requested` and then swaps `active`;
        // with a relaxed read, a weakly ordered CPU could let both miss the other's
        // store and leave a pair inactive with demand (on x86 the orderings cost nothing
        // extra for loads).
        let p = self.pair(f);
        p.requested.load(o).saturating_sub(p.allocated.load(o)) > 0
            && self.present[f.src as usize].load(o)
            && self.present[f.dst as usize].load(o)
    }

    #[inline]
    fn try_activate(&self, f: Flow) -> bool {
        if !self.eligible(f) {
            return false;
        }
        let a = self.active(f);
        if self.concurrent {
            a.compare_exchange(false, true, SeqCst, Relaxed).is_ok()
        } else {
            // Plain load and store: `swap` would be a locked instruction on x86.
            let was = a.load(Relaxed);
            a.store(true, Relaxed);
            !was
        }
    }

    /// The token holder gives up a flow with nothing left to allocate (or an absent
    /// endpoint). Returns true if the flow must be kept after all: demand arrived (or the
    /// endpoint rejoined) concurrently, and the re-check below saw it.
    // Always inlined: `refill` calls it for every pair that runs dry, and the partition
    // into codegen units sometimes left it out of line (+15 instructions a call).
    #[inline(always)]
    pub(crate) fn retire(&self, f: Flow) -> bool {
        if !self.concurrent {
            // One thread: the caller has just seen the pair with nothing to allocate (or
            // an endpoint absent), and nothing can change that before the next call.
            self.active(f).store(false, Relaxed);
            return false;
        }
        self.active(f).store(false, SeqCst);
        self.try_activate(f)
    }

    /// Hint that the pair's record will be read soon (no effect on any result).
    #[inline(always)]
    pub(crate) fn prefetch(&self, f: Flow) {
        #[cfg(target_arch = "x86_64")]
        if let Some(p) = self.pairs.get(f.src as usize * self.n + f.dst as usize) {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: a prefetch is only a hint: it never faults and reads nothing into
            // the program; `p` is a valid reference into `self.pairs` anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const PairState as *const i8) }
        }
    }

    /// Whether both endpoints may be allocated now.
    #[inline]
    pub(crate) fn endpoints_present(&self, f: Flow) -> bool {
        self.present[f.src as usize].load(Relaxed) && self.present[f.dst as usize].load(Relaxed)
    }

    /// The endpoint leaves (fails or is drained): nothing is allocated to or from it; its
    /// pending demand is kept and served again if it rejoins. Allocators drop its flows
    /// lazily as they meet them.
    pub fn leave(&self, e: u32) -> Result<(), DemandError> {
        self.check_endpoint(e)?;
        self.present[e as usize].store(false, SeqCst);
        Ok(())
    }

    /// The endpoint is back: flows to and from it that still have demand are activated
    /// and appended to `activated` for the allocator.
    pub fn rejoin(&self, e: u32, activated: &mut Vec<Flow>) -> Result<(), DemandError> {
        self.check_endpoint(e)?;
        self.present[e as usize].store(true, SeqCst);
        for o in 0..self.n as u32 {
            if o != e {
                for f in [Flow { src: e, dst: o }, Flow { src: o, dst: e }] {
                    if self.try_activate(f) {
                        activated.push(f);
                    }
                }
            }
        }
        Ok(())
    }

    /// FCP re-synchronisation (§5.1, §5.3): the arbiter forgets what `e` requested as a
    /// source; its next reports count from zero. Pending demand from `e` is dropped (the
    /// endpoint re-reports its queues).
    pub fn reset(&self, e: u32) -> Result<(), DemandError> {
        self.check_endpoint(e)?;
        for d in 0..self.n as u32 {
            let p = self.pair(Flow { src: e, dst: d });
            let a = p.allocated.load(SeqCst);
            p.base.store(a, SeqCst);
            p.requested.store(a, SeqCst);
        }
        self.resets.fetch_add(1, SeqCst);
        Ok(())
    }

    /// Both endpoints in the table (a query may name a pair of one endpoint: it has
    /// nothing requested).
    fn check_flow(&self, f: Flow) -> Result<(), DemandError> {
        self.check_endpoint(f.src)?;
        self.check_endpoint(f.dst)
    }

    fn check_endpoint(&self, e: u32) -> Result<(), DemandError> {
        if (e as usize) < self.n {
            Ok(())
        } else {
            Err(DemandError::UnknownEndpoint(e))
        }
    }
}
