//! Demand state per (source, destination) pair, fed by idempotent aggregate counts.
//!
//! Fastpass §5.3 (FCP): an endpoint reports the total number of timeslots it has ever
//! requested for a destination; the arbiter adds only the difference, so a retransmitted
//! or reordered report never allocates twice. §5.1: after failover the counts are reset
//! and endpoints report fresh totals.
//!
//! Every count is modular (u64, wrapping): totals, and the arbiter's own requested and
//! allocated counts, are compared only by their wrapping difference, read as a signed
//! distance bounded by [`MAX_OUTSTANDING`] (see [`DemandTable::request`]).
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

/// Most timeslots a pair may have requested and not yet allocated, and how far behind the
/// last total a report may be: 2^32 timeslots, about 86 minutes of a 10 Gbit/s link in
/// 1500-byte timeslots. A report beyond either is a corrupted or foreign count, refused
/// with an error. It also keeps every count difference far from 2^63, so the wrapping
/// difference of two counts always reads as the right signed distance.
pub const MAX_OUTSTANDING: u64 = 1 << 32;

/// Timeslots requested and not allocated: `requested - allocated`, modular. Above
/// [`MAX_OUTSTANDING`] it can only be negative (a pipeline stage allocated demand that a
/// reset dropped while its batch ran), which counts as none.
#[inline(always)]
fn pending(requested: u64, allocated: u64) -> u64 {
    let d = requested.wrapping_sub(allocated);
    if d > MAX_OUTSTANDING {
        0
    } else {
        d
    }
}

/// 32 bytes, aligned: one pair never straddles two cache lines.
#[derive(Default)]
#[repr(align(32))]
struct PairState {
    /// Timeslots requested, in the arbiter's own count (`base` + the endpoint's last
    /// total accepted, modular).
    requested: AtomicU64,
    /// Timeslots allocated, same count.
    allocated: AtomicU64,
    /// The arbiter's count minus the endpoint's (modular): `allocated` at the last
    /// reset, less the count the endpoint starts from.
    base: AtomicU64,
    /// 0 = never allocated, else last allocated timeslot + 1 (max-min order key).
    last: AtomicU64,
}

impl PairState {
    /// Record `got` allocated timeslots, the latest being `last`; returns the new
    /// allocated count. Only the token holder writes `allocated` and `last`.
    #[inline(always)]
    fn commit(&self, got: u64, last: u64) -> u64 {
        let allocated = self.allocated.load(Relaxed).wrapping_add(got);
        self.allocated.store(allocated, Relaxed);
        self.last.store(last + 1, Relaxed);
        allocated
    }
}

/// Why a demand report was refused (never a panic: reports come from the network). A
/// refused report changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DemandError {
    UnknownEndpoint(u32),
    SelfDemand(u32),
    /// The report asks for `demand` more timeslots while `outstanding` are still
    /// unallocated: more than [`MAX_OUTSTANDING`] in all.
    TooMuchDemand {
        src: u32,
        dst: u32,
        demand: u64,
        outstanding: u64,
    },
    /// The report's total is more than [`MAX_OUTSTANDING`] behind the last one accepted,
    /// `last`.
    TooFarBehind {
        src: u32,
        dst: u32,
        total: u64,
        last: u64,
    },
}

impl std::fmt::Display for DemandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            DemandError::UnknownEndpoint(e) => write!(f, "endpoint {e} is not in the fabric"),
            DemandError::SelfDemand(e) => write!(f, "endpoint {e} requested timeslots to itself"),
            DemandError::TooMuchDemand {
                src,
                dst,
                demand,
                outstanding,
            } => write!(
                f,
                "{src} -> {dst}: a report of {demand} more timeslots with {outstanding} \
                 outstanding exceeds {MAX_OUTSTANDING}"
            ),
            DemandError::TooFarBehind {
                src,
                dst,
                total,
                last,
            } => write!(
                f,
                "{src} -> {dst}: total {total} is more than {MAX_OUTSTANDING} behind the \
                 last one, {last}"
            ),
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

    /// FCP §5.3: `total` = timeslots `src` has requested for `dst`, counted from its
    /// last reset (0, or the count given to [`DemandTable::reset_to`]). Returns
    /// `Ok(Some(flow))` when the flow became active and must be handed to the allocator
    /// (exactly once).
    ///
    /// Totals are modular: u64 counts that wrap at 2^64, so no total is special (a count
    /// kept narrower on the wire is widened against the last one before it gets here).
    /// The report's demand is `total.wrapping_sub(last)`, `last` being the last total
    /// accepted for the pair, read as a signed distance (serial-number arithmetic,
    /// RFC 1982):
    /// - 0: a duplicate; nothing changes.
    /// - ahead by d: d more timeslots, accepted if the pair then has at most
    ///   [`MAX_OUTSTANDING`] requested and not allocated; otherwise
    ///   [`DemandError::TooMuchDemand`] and nothing changes.
    /// - behind by at most [`MAX_OUTSTANDING`]: an older report (reordered or
    ///   retransmitted); nothing changes.
    /// - behind by more: [`DemandError::TooFarBehind`]; nothing changes.
    ///
    /// So a report across 2^64 allocates exactly its difference, and a report is never
    /// dropped without either allocating or saying why.
    pub fn request(&self, src: u32, dst: u32, total: u64) -> Result<Option<Flow>, DemandError> {
        let f = self.check(src, dst)?;
        let p = self.pair(f);
        // Only the caller writes `requested` and `base`: these reads are current.
        let requested = p.requested.load(Relaxed);
        let last = requested.wrapping_sub(p.base.load(Relaxed));
        let ahead = total.wrapping_sub(last);
        if ahead == 0 {
            // A duplicate.
        } else if ahead < 1 << 63 {
            // A stale `allocated` (another thread allocating) only overstates this.
            let outstanding = pending(requested, p.allocated.load(Relaxed));
            if ahead > MAX_OUTSTANDING - outstanding {
                return Err(DemandError::TooMuchDemand {
                    src,
                    dst,
                    demand: ahead,
                    outstanding,
                });
            }
            p.requested
                .store(requested.wrapping_add(ahead), self.strong());
        } else if ahead.wrapping_neg() > MAX_OUTSTANDING {
            return Err(DemandError::TooFarBehind {
                src,
                dst,
                total,
                last,
            });
        }
        Ok(self.try_activate(f).then_some(f))
    }

    /// Remaining demand and max-min key, from one read of the pair's record.
    #[inline]
    pub(crate) fn remaining_and_key(&self, f: Flow) -> (u64, u64) {
        let p = self.pair(f);
        let rem = pending(p.requested.load(Relaxed), p.allocated.load(Relaxed));
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
        pending(p.requested.load(Relaxed), p.allocated.load(Relaxed))
    }

    /// The endpoint's view: the last total accepted from it (its modular count of
    /// timeslots requested, from its last reset's starting count).
    pub fn requested(&self, f: Flow) -> Result<u64, DemandError> {
        self.check_flow(f)?;
        let p = self.pair(f);
        Ok(p.requested.load(Relaxed).wrapping_sub(p.base.load(Relaxed)))
    }

    /// The endpoint's view: timeslots allocated, in the same count as its totals (the
    /// aggregate count FCP returns to the endpoint): `requested` once all is allocated.
    pub fn allocated(&self, f: Flow) -> Result<u64, DemandError> {
        self.check_flow(f)?;
        let p = self.pair(f);
        Ok(p.allocated.load(Relaxed).wrapping_sub(p.base.load(Relaxed)))
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
        pending(p.requested.load(Relaxed), allocated)
    }

    /// Record one allocated timeslot. Only the token holder calls this.
    #[inline]
    pub(crate) fn grant(&self, f: Flow, timeslot: u64) {
        let p = self.pair(f);
        p.allocated
            .store(p.allocated.load(Relaxed).wrapping_add(1), Relaxed);
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
        pending(p.requested.load(o), p.allocated.load(o)) > 0
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
        self.reset_to(e, 0)
    }

    /// [`DemandTable::reset`] with the endpoint's totals counting from `total` instead of
    /// zero, for every destination: with modular totals no count is special, so an
    /// endpoint and the arbiter may agree on any (the endpoint keeps its running counter).
    pub fn reset_to(&self, e: u32, total: u64) -> Result<(), DemandError> {
        self.check_endpoint(e)?;
        for d in 0..self.n as u32 {
            let p = self.pair(Flow { src: e, dst: d });
            let a = p.allocated.load(SeqCst);
            p.base.store(a.wrapping_sub(total), SeqCst);
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

    /// Start every pair's own counts (requested, allocated, and the base the endpoint's
    /// totals are read against) at `origin` instead of 0: the counts are modular, so
    /// nothing may change but the numbers (tests run them across 2^64 this way).
    #[cfg(test)]
    pub(crate) fn start_counts_at(&self, origin: u64) {
        for p in self.pairs.iter() {
            p.requested.store(origin, Relaxed);
            p.allocated.store(origin, Relaxed);
            p.base.store(origin, Relaxed);
        }
    }

    fn check_endpoint(&self, e: u32) -> Result<(), DemandError> {
        if (e as usize) < self.n {
            Ok(())
        } else {
            Err(DemandError::UnknownEndpoint(e))
        }
    }
}
