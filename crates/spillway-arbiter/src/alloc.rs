//! Timeslot allocation of one batch (Fastpass §3, §3.1).
//!
//! Each timeslot gets a greedy maximal matching over the pairs with pending demand, in
//! policy order. A batch of up to 64 timeslots is allocated at once with the bitmap
//! table ([`crate::slots`]).
//!
//! Max-min ("least recently allocated first") is exact per timeslot, not just per batch:
//! a pair allocated in slot k has key k, larger than every key from before the batch, so
//! all pre-batch pairs are offered first (each takes its first free slot), then pairs are
//! re-offered from per-slot bins in slot order, FIFO within a bin. That is the order the
//! timeslot-by-timeslot greedy of §3 would process them in (§3.1's "limited
//! reordering"), and it is what makes N senders to one receiver alternate perfectly.
//!
//! Min-FCT ("fewest remaining MTUs first") orders by remaining demand at the start of the
//! batch, and a pair keeps the slots it can take (shortest remaining first, per batch).
//!
//! [`Mode::Iterative`] goes beyond a maximal matching: after the greedy pass, a blocked
//! pair (s, d) takes slot t where s is free and d is used by (s', d), if (s', d) can move
//! to a slot t' where both are free (or the mirror case) — a length-3 augmenting path,
//! the step iSLIP-style iterations approximate. No grant is ever removed, so every pair
//! gets at least what greedy gave it (the policy's guarantee holds); a final greedy pass
//! restores maximality.

use crate::demand::{DemandTable, Flow};
use crate::fabric::Fabric;
use crate::slots::{Grant, Slots};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Least recently allocated first (max-min fairness, §3.1).
    MaxMin,
    /// Fewest remaining MTUs first (minimises flow completion time, §3.1).
    MinFct,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The paper's greedy maximal matching.
    Greedy,
    /// Greedy, then augmenting moves within the batch, then greedy again.
    Iterative,
}

/// The allocation of one batch: the grants of timeslots `first .. first + width`.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    first: u64,
    width: u32,
    grants: Vec<Grant>,
}

impl Batch {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn first_timeslot(&self) -> u64 {
        self.first
    }
    pub fn width(&self) -> u32 {
        self.width
    }
    /// All grants of the batch, in no particular order.
    pub fn grants(&self) -> &[Grant] {
        &self.grants
    }
    /// The matching of timeslot `first + k`.
    pub fn timeslot(&self, k: u32) -> impl Iterator<Item = Flow> + '_ {
        self.grants
            .iter()
            .filter(move |g| g.slot == k)
            .map(Grant::flow)
    }
    pub(crate) fn reset(&mut self, first: u64, width: u32) {
        self.first = first;
        self.width = width;
        self.grants.clear();
    }
}

/// Per-batch working state shared by the single-threaded allocator and pipeline stages.
pub(crate) struct Core {
    pub slots: Slots,
    pub width: u32,
    pub first: u64,
    /// Max-min: pairs allocated in slot k with demand left, in processing order.
    pub bins: Vec<Vec<Tok>>,
}

/// A pair in flight within a batch, carrying its remaining demand and grants so far.
#[derive(Clone, Copy)]
pub(crate) struct Tok {
    f: Flow,
    rem: u32,
    got: u32,
}

/// Sort pairs by max-min key (then source, destination) with the keys read once.
pub(crate) fn sort_by_key(d: &DemandTable, v: &mut [Flow], scratch: &mut Vec<u128>) {
    if v.len() < 2 {
        return;
    }
    scratch.clear();
    scratch.extend(
        v.iter()
            .map(|f| (d.last_key(*f) as u128) << 64 | (f.src as u128) << 32 | f.dst as u128),
    );
    scratch.sort_unstable();
    for (f, &k) in v.iter_mut().zip(scratch.iter()) {
        *f = Flow {
            src: (k >> 32) as u32,
            dst: k as u32,
        };
    }
}

impl Core {
    pub fn new(fabric: &Fabric, width: u32) -> Self {
        Core {
            slots: Slots::new(fabric, width),
            width,
            first: 0,
            bins: (0..width).map(|_| Vec::new()).collect(),
        }
    }

    pub fn begin(&mut self, d: &DemandTable, first: u64, out: &mut Batch) {
        self.first = first;
        self.slots.clear();
        // An endpoint that has left has no free slot at all (§5.1).
        for e in 0..d.endpoints() {
            if !d.present(e as u32) {
                self.slots.src_free[e] = 0;
                self.slots.dst_free[e] = 0;
            }
        }
        out.reset(first, self.width);
    }

    #[inline(always)]
    fn grant<const RACKS: bool>(&mut self, d: &DemandTable, f: Flow, k: u32, out: &mut Batch) {
        self.slots.place::<RACKS>(f, k, out.grants.len() as u32);
        out.grants.push(Grant {
            slot: k,
            src: f.src,
            dst: f.dst,
        });
        d.grant(f, self.first + k as u64);
    }

    /// Max-min: offer `f` its first timeslot of the batch. Allocated with demand left →
    /// bin of that slot; nothing free → `blocked`. The pair's state is read once here and
    /// written back once when it leaves the batch; in between it travels in the token.
    #[inline(always)]
    pub fn offer_next<const RACKS: bool>(
        &mut self,
        d: &DemandTable,
        f: Flow,
        blocked: &mut Vec<Flow>,
        out: &mut Batch,
    ) {
        let rem = d.remaining(f);
        if rem == 0 {
            if d.retire(f) {
                blocked.push(f);
            }
            return;
        }
        let t = Tok {
            f,
            rem: rem.min(u32::MAX as u64) as u32,
            got: 0,
        };
        self.step::<RACKS>(d, t, 0, blocked, out);
    }

    /// Give the token its next slot; it last got slot `k_last` (if `got > 0`). Only
    /// slots after that can be free for it (§3.1): earlier ones were taken before it.
    #[inline(always)]
    fn step<const RACKS: bool>(
        &mut self,
        d: &DemandTable,
        mut t: Tok,
        k_last: u32,
        blocked: &mut Vec<Flow>,
        out: &mut Batch,
    ) {
        let a = self.slots.avail::<RACKS>(t.f);
        if a == 0 {
            return self.exit(d, t, k_last, blocked);
        }
        let k = a.trailing_zeros();
        self.slots.place::<RACKS>(t.f, k, out.grants.len() as u32);
        out.grants.push(Grant {
            slot: k,
            src: t.f.src,
            dst: t.f.dst,
        });
        t.rem -= 1;
        t.got += 1;
        if t.rem > 0 {
            self.bins[k as usize].push(t);
        } else {
            self.exit(d, t, k, blocked);
        }
    }

    /// The token leaves the batch: write its grants back; keep it pending if it still
    /// has demand (or gained some meanwhile) and both endpoints are present.
    #[inline(always)]
    fn exit(&mut self, d: &DemandTable, t: Tok, k_last: u32, blocked: &mut Vec<Flow>) {
        if t.got > 0 {
            d.commit(t.f, t.got as u64, self.first + k_last as u64);
        }
        let keep = if t.rem == 0 {
            d.retire(t.f)
        } else {
            d.endpoints_present(t.f) || d.retire(t.f)
        };
        if keep {
            blocked.push(t.f);
        }
    }

    /// Max-min: re-offer the pairs binned by slot, in slot order (§3.1).
    pub fn drain_bins<const RACKS: bool>(
        &mut self,
        d: &DemandTable,
        blocked: &mut Vec<Flow>,
        out: &mut Batch,
    ) {
        for k in 0..self.width {
            let mut bin = std::mem::take(&mut self.bins[k as usize]);
            for &t in &bin {
                self.step::<RACKS>(d, t, k, blocked, out);
            }
            bin.clear();
            self.bins[k as usize] = bin;
        }
    }

    /// Give `f` every free slot it can use (min-FCT and the final greedy pass). Returns
    /// whether the pair stays pending.
    #[inline]
    pub fn fill<const RACKS: bool>(&mut self, d: &DemandTable, f: Flow, out: &mut Batch) -> bool {
        let mut rem = d.remaining(f);
        let mut a = self.slots.avail::<RACKS>(f);
        while rem > 0 && a != 0 {
            let k = a.trailing_zeros();
            self.grant::<RACKS>(d, f, k, out);
            rem -= 1;
            a = self.slots.avail::<RACKS>(f);
        }
        if rem == 0 || !d.endpoints_present(f) {
            return d.retire(f);
        }
        true
    }

    /// One augmenting move for the blocked pair `f`; true if it gained a timeslot.
    fn augment<const RACKS: bool>(&mut self, d: &DemandTable, f: Flow, out: &mut Batch) -> bool {
        let full = self.slots.full;
        let (s, t) = (f.src as usize, f.dst as usize);
        // Case 0: source free, destination held by (s', dst): move (s', dst) away.
        // Case 1: destination free, source held by (src, d'): move (src, d') away.
        for case in 0..2 {
            let (sf, df) = (self.slots.src_free[s], self.slots.dst_free[t]);
            let mut cand = full & if case == 0 { sf & !df } else { df & !sf };
            while cand != 0 {
                let k = cand.trailing_zeros();
                cand &= cand - 1;
                let gi = if case == 0 {
                    self.slots.dst_owner[t * 64 + k as usize]
                } else {
                    self.slots.src_owner[s * 64 + k as usize]
                };
                if self.try_move::<RACKS>(d, gi, k, f, out) {
                    return true;
                }
            }
        }
        false
    }

    /// Move grant `gi` (in slot k) to another slot and give slot k to `f`, if both fit.
    fn try_move<const RACKS: bool>(
        &mut self,
        d: &DemandTable,
        gi: u32,
        k: u32,
        f: Flow,
        out: &mut Batch,
    ) -> bool {
        let q = out.grants[gi as usize].flow();
        let to = self.slots.avail::<RACKS>(q);
        if to == 0 {
            return false;
        }
        let k2 = to.trailing_zeros();
        self.slots.unplace::<RACKS>(q, k);
        if self.slots.avail::<RACKS>(f) & (1u64 << k) == 0 {
            // Rack capacity still binds for f in slot k: put q back.
            self.slots.place::<RACKS>(q, k, gi);
            return false;
        }
        self.slots.place::<RACKS>(q, k2, gi);
        out.grants[gi as usize].slot = k2;
        self.grant::<RACKS>(d, f, k, out);
        // q's max-min key is its latest slot in the batch.
        let src_busy = !self.slots.src_free[q.src as usize] & self.slots.full;
        let latest = (0..64u32)
            .rev()
            .filter(|&x| src_busy >> x & 1 == 1)
            .find(|&x| {
                out.grants[self.slots.src_owner[q.src as usize * 64 + x as usize] as usize].dst
                    == q.dst
            })
            .expect("q was just placed");
        d.set_last(q, self.first + latest as u64);
        true
    }
}

/// Single-threaded allocator: owns the pending pairs between batches.
pub struct Allocator {
    policy: Policy,
    mode: Mode,
    core: Core,
    /// Pairs with demand, in policy order (max-min: ascending key).
    pending: Vec<Flow>,
    /// Pairs activated since the last batch.
    arrivals: Vec<Flow>,
    stale: Vec<Flow>,
    leftover: Vec<Flow>,
    counts: Vec<u32>,
    keys: Vec<u128>,
}

impl Allocator {
    pub fn new(fabric: &Fabric, policy: Policy, mode: Mode, width: u32) -> Self {
        Allocator {
            policy,
            mode,
            core: Core::new(fabric, width),
            pending: Vec::new(),
            arrivals: Vec::new(),
            stale: Vec::new(),
            leftover: Vec::new(),
            counts: vec![0; 66],
            keys: Vec::new(),
        }
    }

    pub fn width(&self) -> u32 {
        self.core.width
    }

    pub fn policy(&self) -> Policy {
        self.policy
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Switch between greedy and iterative matching between batches.
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// Hand over a pair that [`DemandTable`] reported as newly active.
    pub fn activate(&mut self, f: Flow) {
        self.arrivals.push(f);
    }

    /// Pairs currently pending (with a token in this allocator).
    pub fn pending_len(&self) -> usize {
        self.pending.len() + self.arrivals.len()
    }

    /// Allocate timeslots `first .. first + width` into `out`. The caller's clock decides
    /// `first`; batches must not overlap and should be allocated in increasing order.
    pub fn allocate(&mut self, d: &DemandTable, first: u64, out: &mut Batch) {
        self.core.begin(d, first, out);
        // Only the iterative mode looks up who holds a slot.
        self.core.slots.own = self.mode == Mode::Iterative;
        if self.core.slots.racks() {
            self.run::<true>(d, out)
        } else {
            self.run::<false>(d, out)
        }
    }

    fn run<const RACKS: bool>(&mut self, d: &DemandTable, out: &mut Batch) {
        self.stale.clear();
        self.leftover.clear();
        match self.policy {
            Policy::MaxMin => {
                // New pairs join in key order (never allocated = 0 = first); a pair that
                // was idle keeps the key of its last allocation.
                sort_by_key(d, &mut self.arrivals, &mut self.keys);
                let (mut i, mut j) = (0, 0);
                while i < self.pending.len() || j < self.arrivals.len() {
                    let f = if j == self.arrivals.len()
                        || (i < self.pending.len()
                            && d.last_key(self.pending[i]) <= d.last_key(self.arrivals[j]))
                    {
                        i += 1;
                        self.pending[i - 1]
                    } else {
                        j += 1;
                        self.arrivals[j - 1]
                    };
                    self.core.offer_next::<RACKS>(d, f, &mut self.stale, out);
                }
                self.core.drain_bins::<RACKS>(d, &mut self.leftover, out);
            }
            Policy::MinFct => {
                self.pending.append(&mut self.arrivals);
                self.pending
                    .sort_unstable_by_key(|&f| (d.remaining(f), d.last_key(f), f.src, f.dst));
                for i in 0..self.pending.len() {
                    let f = self.pending[i];
                    if self.core.fill::<RACKS>(d, f, out) {
                        self.leftover.push(f);
                    }
                }
            }
        }
        self.arrivals.clear();
        self.pending.clear();
        if self.mode == Mode::Iterative {
            for list in [&self.stale, &self.leftover] {
                for &f in list.iter() {
                    while d.remaining(f) > 0 && self.core.augment::<RACKS>(d, f, out) {}
                }
            }
        }
        if self.mode == Mode::Greedy {
            // Already in key order: blocked before the batch, then by slot.
            self.pending.extend_from_slice(&self.stale);
            self.pending.extend_from_slice(&self.leftover);
            return;
        }
        // Final greedy pass (maximality after the moves), then a stable counting sort by
        // key bucket (pre-batch, slot 0..63) to restore max-min order.
        let first = self.core.first;
        self.counts.fill(0);
        let mut keep = std::mem::take(&mut self.stale);
        keep.append(&mut self.leftover);
        keep.retain(|&f| self.core.fill::<RACKS>(d, f, out));
        let bucket = |f: Flow| (d.last_key(f).saturating_sub(first)) as usize;
        for &f in &keep {
            self.counts[bucket(f) + 1] += 1;
        }
        for b in 1..self.counts.len() {
            self.counts[b] += self.counts[b - 1];
        }
        self.pending.resize(keep.len(), Flow { src: 0, dst: 0 });
        for &f in &keep {
            let b = bucket(f);
            self.pending[self.counts[b] as usize] = f;
            self.counts[b] += 1;
        }
        keep.clear();
        self.stale = keep;
    }
}

/// The arbiter's allocation side in one value: the demand table plus a single-threaded
/// allocator. Sans-IO: the caller feeds reports and asks for batches on its own clock.
pub struct Arbiter {
    demand: DemandTable,
    alloc: Allocator,
    rejoined: Vec<Flow>,
}

impl Arbiter {
    pub fn new(fabric: &Fabric, policy: Policy, mode: Mode, width: u32) -> Self {
        Arbiter {
            demand: DemandTable::new(fabric.endpoints()),
            alloc: Allocator::new(fabric, policy, mode, width),
            rejoined: Vec::new(),
        }
    }

    pub fn demand(&self) -> &DemandTable {
        &self.demand
    }

    pub fn allocator(&self) -> &Allocator {
        &self.alloc
    }

    pub fn set_mode(&mut self, mode: Mode) {
        self.alloc.set_mode(mode);
    }

    /// FCP aggregate count (§5.3): `src` has requested `total` timeslots to `dst` since
    /// its last reset.
    pub fn request(&mut self, src: u32, dst: u32, total: u64) -> Result<(), crate::DemandError> {
        if let Some(f) = self.demand.request(src, dst, total)? {
            self.alloc.activate(f);
        }
        Ok(())
    }

    pub fn leave(&mut self, e: u32) -> Result<(), crate::DemandError> {
        self.demand.leave(e)
    }

    pub fn rejoin(&mut self, e: u32) -> Result<(), crate::DemandError> {
        self.demand.rejoin(e, &mut self.rejoined)?;
        for f in self.rejoined.drain(..) {
            self.alloc.activate(f);
        }
        Ok(())
    }

    pub fn reset(&mut self, e: u32) -> Result<(), crate::DemandError> {
        self.demand.reset(e)
    }

    /// Allocate timeslots `first .. first + width`.
    pub fn allocate(&mut self, first: u64, out: &mut Batch) {
        self.alloc.allocate(&self.demand, first, out);
    }
}
