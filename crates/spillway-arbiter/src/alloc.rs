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

use crate::demand::{DemandError, DemandTable, Flow};
use crate::fabric::{ConfigError, Fabric};
use crate::slots::{check_width, Grant, Slots};

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

/// The allocation of one batch: the grants of timeslots `first .. first + width`, kept
/// per timeslot (what path selection and the endpoints consume).
///
/// Slot k's grants are `toks[k * stride..][..len[k]]`, in the order they were made.
/// During max-min allocation they are also the per-slot bins (§3.1 order): a pair
/// granted slot k is re-offered from there, so recording a grant and binning its token
/// is one store. A token's count fields matter only while the batch is allocated.
#[derive(Clone, Debug)]
pub struct Batch {
    first: u64,
    width: u32,
    stride: usize,
    toks: Vec<Tok>,
    len: [u32; 64],
}

impl Default for Batch {
    fn default() -> Self {
        Batch {
            first: 0,
            width: 0,
            stride: 0,
            toks: Vec::new(),
            len: [0; 64],
        }
    }
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
    /// Number of grants in the batch.
    pub fn len(&self) -> usize {
        self.len[..self.width as usize]
            .iter()
            .map(|&l| l as usize)
            .sum()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// All grants of the batch, slot by slot.
    pub fn grants(&self) -> impl Iterator<Item = Grant> + '_ {
        (0..self.width).flat_map(move |k| {
            self.timeslot(k).map(move |f| Grant {
                slot: k,
                src: f.src,
                dst: f.dst,
            })
        })
    }
    /// The matching of timeslot `first + k`: empty for `k` outside the batch.
    pub fn timeslot(&self, k: u32) -> impl ExactSizeIterator<Item = Flow> + '_ {
        let toks = if k < self.width {
            let at = k as usize * self.stride;
            &self.toks[at..at + self.len[k as usize] as usize]
        } else {
            &[]
        };
        toks.iter().map(|t| t.f())
    }
    /// Start a batch for `n` endpoints: at most `n` grants per timeslot.
    pub(crate) fn reset(&mut self, first: u64, width: u32, n: usize) {
        self.first = first;
        self.width = width;
        // Skewed by a few tokens so that the slots' heads do not share cache sets.
        self.stride = n + 4;
        let need = width as usize * self.stride;
        if self.toks.len() < need {
            let none = Tok::new(Flow { src: 0, dst: 0 }, 0, 0);
            self.toks.resize(need, none);
        }
        self.len = [0; 64];
    }
    /// Record a grant of slot `k`, with its token state.
    #[inline(always)]
    fn push(&mut self, k: u32, t: Tok) {
        let l = &mut self.len[k as usize];
        self.toks[k as usize * self.stride + *l as usize] = t;
        *l += 1;
    }
    #[inline(always)]
    fn at(&self, k: u32, i: u32) -> Flow {
        self.toks[k as usize * self.stride + i as usize].f()
    }
}

/// The caller's clock must leave room for the batch: max-min keys are timeslot + 1, and
/// a batch's last key is `first + width`. A clock that far (2^64 timeslots of 1.2 us is
/// 700,000 years) is a caller's bug: a panic, not wrapped keys (which put pairs out of
/// order and read as "never allocated").
pub(crate) fn check_first(first: u64, width: u32) {
    assert!(
        first.checked_add(width as u64).is_some(),
        "batch of {width} timeslots from {first} ends past u64::MAX"
    );
}

/// Per-batch working state shared by the single-threaded allocator and pipeline stages.
pub(crate) struct Core {
    pub slots: Slots,
    pub width: u32,
    pub first: u64,
    /// Whether some endpoint was absent when the batch began (else no presence checks).
    absent: bool,
    /// Grants of pairs that left the batch blocked, not yet written to the table
    /// ([`Flat`]).
    commits: Vec<Commit>,
}

/// A blocked pair's grants in the batch, to be written back to its table record.
#[derive(Clone, Copy)]
pub(crate) struct Commit {
    f: Flow,
    got: u32,
    last: u64,
}

/// A pair in flight within a batch, carrying the demand it may still take (a lower
/// bound of what the table says: reports only add) and its grants in this batch. Two
/// words, updated whole: a grant is one add, and the token is stored from registers
/// (field-wise updates of a spilled token made its 16-byte reload miss store forwarding).
/// In a [`Batch`] a token with nothing left (`rem` 0) is only the record of a grant.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tok {
    /// src | dst << 32.
    pair: u64,
    /// rem | got << 32.
    cnt: u64,
}

impl Tok {
    #[inline(always)]
    fn new(f: Flow, rem: u32, got: u32) -> Tok {
        Tok {
            pair: f.src as u64 | (f.dst as u64) << 32,
            cnt: rem as u64 | (got as u64) << 32,
        }
    }
    #[inline(always)]
    fn f(self) -> Flow {
        Flow {
            src: self.pair as u32,
            dst: (self.pair >> 32) as u32,
        }
    }
    #[inline(always)]
    fn rem(self) -> u32 {
        self.cnt as u32
    }
    #[inline(always)]
    fn got(self) -> u32 {
        (self.cnt >> 32) as u32
    }
    /// One more grant: rem - 1, got + 1 (rem > 0).
    #[inline(always)]
    fn take_one(&mut self) {
        debug_assert!(self.rem() > 0);
        self.cnt += (1 << 32) - 1;
    }
    #[inline(always)]
    fn clear_got(&mut self) {
        self.cnt &= u32::MAX as u64;
    }
    #[inline(always)]
    fn set_rem(&mut self, rem: u32) {
        self.cnt = (self.cnt & !(u32::MAX as u64)) | rem as u64;
    }
}

/// A pending pair between batches: its token state plus its max-min key (0 = never
/// allocated, else last allocated timeslot + 1, as in the table).
#[derive(Clone, Copy)]
pub(crate) struct Pend {
    pub(crate) f: Flow,
    pub(crate) rem: u32,
    pub(crate) key: u64,
}

impl Pend {
    /// The pair's full remaining demand and key, read from the table.
    #[inline]
    pub(crate) fn read(d: &DemandTable, f: Flow) -> Pend {
        let (rem, key) = d.remaining_and_key(f);
        Pend {
            f,
            rem: rem.min(u32::MAX as u64) as u32,
            key,
        }
    }
}

/// A reset drops pending demand, so tokens read before one may carry too much: when the
/// table's reset count differs from `seen`, re-read every token's demand and key and
/// remember the new count.
pub(crate) fn reread_after_reset<'a>(
    d: &DemandTable,
    seen: &mut u64,
    tokens: impl IntoIterator<Item = &'a mut Pend>,
) {
    let now = d.resets();
    if now != *seen {
        *seen = now;
        for t in tokens {
            *t = Pend::read(d, t.f);
        }
    }
}

/// Sort newly active pairs (state read when they were activated) by max-min key, then
/// source, destination, without touching the table. Key, pair index and position are
/// packed in one u64 when they fit: a bucket sort of words, then a gather.
///
/// Why buckets and not `sort_unstable` (which cost ~145 instructions a pair here): the
/// keys are spread thinly (Experiment F at load 0.3: ~490 pairs a batch, a third never
/// allocated, key 0; the rest over ~9500 timeslots), so one counting pass that spreads
/// them over one or two buckets per pair leaves buckets of a word or two, which one
/// insertion pass over the whole array puts in order. Key-0 pairs are bucketed by
/// their pair index (their keys tie), the others by key. A bucket that came out large
/// (keys bunched) sends the whole array to `sort_unstable`.
pub(crate) fn sort_arrivals(n: usize, v: &mut Vec<Pend>, scratch: &mut SortScratch) {
    if v.len() < 2 {
        return;
    }
    let bits = |x: u64| u64::BITS - x.leading_zeros();
    // Smallest nonzero key (key 0 wraps to the largest), largest key, key-0 count.
    let (lo1, hi, zeros) = v.iter().fold((u64::MAX, 0, 0usize), |(lo1, hi, z), p| {
        (
            lo1.min(p.key.wrapping_sub(1)),
            hi.max(p.key),
            z + (p.key == 0) as usize,
        )
    });
    let span = if hi == 0 { 0 } else { hi - 1 - lo1 };
    let bi = bits(v.len() as u64 - 1);
    // A pair is src << bd | dst: ordered as (src, dst), with no multiply.
    let bd = bits(n as u64 - 1);
    let bp = 2 * bd;
    let sorted = &mut scratch.pends;
    sorted.clear();
    if bi + bp + bits(span + 1) >= 64 {
        sorted.extend_from_slice(v);
        sorted.sort_unstable_by_key(|p| (p.key, p.f.src, p.f.dst));
        std::mem::swap(v, sorted);
        return;
    }
    let len = v.len();
    let low = bp + bi;
    let mask = (1u64 << bi) - 1;
    // One or two buckets per pair in each group: key-0 words by their top bits, the
    // others by their key's top bits. Fuller buckets take fewer instructions (2-4 pairs
    // a bucket: -3% of allocation) but the insertion pass then mispredicts its loop's
    // exit for most pairs, and measured no faster than `sort_unstable`.
    let b0 = bits(zeros as u64).min(low);
    let s0 = low - b0;
    let nb0 = 1usize << b0;
    let b1 = bits((len - zeros) as u64);
    let s1 = bits(span).saturating_sub(b1);
    let nb = nb0 + (span >> s1) as usize + 1;
    // count[b + 1]: words in bucket b, then (prefix sums) where bucket b starts in `out`,
    // counted from 1: out[0] is a 0 sentinel that stops the insertion loop.
    let count = &mut scratch.count;
    count.clear();
    count.resize(nb + 1, 0);
    // Every position of these is written before it is read: grown, never cleared.
    for (b, l) in [(&mut scratch.narrow, len), (&mut scratch.wide, len + 1)] {
        if b.len() < l {
            b.resize(l, 0);
        }
    }
    if scratch.bucket.len() < len {
        scratch.bucket.resize(len, 0);
    }
    let words = &mut scratch.narrow[..len];
    let bk = &mut scratch.bucket[..len];
    // Words: key-0 pairs (pair, position) below 1 << low, the others (key - lo1 + 1)
    // above: the words' order is the order wanted (a pair is unique in `v`).
    for (i, ((p, w), b)) in v
        .iter()
        .zip(words.iter_mut())
        .zip(bk.iter_mut())
        .enumerate()
    {
        let low_part = ((p.f.src as u64) << bd | p.f.dst as u64) << bi | i as u64;
        let (x, y) = if p.key == 0 {
            (low_part, (low_part >> s0) as usize)
        } else {
            let k = p.key - lo1;
            (k << low | low_part, nb0 + ((k - 1) >> s1) as usize)
        };
        *w = x;
        *b = y as u32;
        debug_assert!(y < nb);
        // SAFETY: y < nb (key-0: low_part < 1 << low, so y < nb0; else k - 1 <= span)
        // and count has nb + 1 entries.
        unsafe { *count.get_unchecked_mut(y + 1) += 1 };
    }
    let mut big = 0;
    count[0] = 1;
    for b in 1..=nb {
        big = big.max(count[b]);
        count[b] += count[b - 1];
    }
    if big > 32 {
        words.sort_unstable();
        sorted.extend(words.iter().map(|&x| v[(x & mask) as usize]));
        std::mem::swap(v, sorted);
        return;
    }
    let out = &mut scratch.wide[..len + 1];
    out[0] = 0;
    for (&w, &b) in words.iter().zip(bk.iter()) {
        // SAFETY: b < nb, and bucket b's positions are count[b] (at first) ..
        // count[b + 1] <= len + 1 = out.len().
        unsafe {
            let c = count.get_unchecked_mut(b as usize);
            *out.get_unchecked_mut(*c as usize) = w;
            *c += 1;
        }
    }
    // Insertion over the whole array: a word only moves within its bucket, and stops at
    // the sentinel at the latest (no word is below 0).
    for i in 2..=len {
        let w = out[i];
        let mut j = i;
        // SAFETY: 1 <= j <= i <= len; out[0] = 0 <= w ends the loop by j = 1.
        unsafe {
            while *out.get_unchecked(j - 1) > w {
                *out.get_unchecked_mut(j) = *out.get_unchecked(j - 1);
                j -= 1;
            }
            *out.get_unchecked_mut(j) = w;
        }
    }
    // SAFETY: the low bits of every word are a position in `v`.
    sorted.extend(
        out[1..]
            .iter()
            .map(|&x| unsafe { *v.get_unchecked((x & mask) as usize) }),
    );
    std::mem::swap(v, sorted);
}

/// Buffers of [`sort_arrivals`], reused.
#[derive(Default)]
pub(crate) struct SortScratch {
    narrow: Vec<u64>,
    wide: Vec<u64>,
    count: Vec<u32>,
    bucket: Vec<u32>,
    pends: Vec<Pend>,
}

impl Core {
    /// `width` checked by [`check_width`].
    pub fn new(fabric: &Fabric, width: u32) -> Self {
        Core {
            slots: Slots::new(fabric, width),
            width,
            first: 0,
            absent: false,
            commits: Vec::new(),
        }
    }

    pub fn begin(&mut self, d: &DemandTable, first: u64, out: &mut Batch) {
        self.first = first;
        self.slots.clear();
        // An endpoint that has left has no free slot at all (§5.1).
        self.absent = false;
        for e in 0..d.endpoints() {
            if !d.is_present(e as u32) {
                self.slots.src_free[e] = 0;
                self.slots.dst_free[e] = 0;
                self.absent = true;
            }
        }
        out.reset(first, self.width, d.endpoints());
    }

    #[inline(always)]
    fn grant<const RACKS: bool>(&mut self, d: &DemandTable, f: Flow, k: u32, out: &mut Batch) {
        self.slots.place::<RACKS>(f, k, out.len[k as usize]);
        out.push(k, Tok::new(f, 0, 0));
        d.grant(f, self.first + k as u64);
    }

    /// Max-min: offer the pair its first timeslot of the batch. Allocated with demand
    /// left → bin of that slot; nothing free → `blocked`. Its state travels in the token
    /// and is written back once when it leaves the batch.
    #[inline(always)]
    pub fn offer<const RACKS: bool>(
        &mut self,
        d: &DemandTable,
        p: Pend,
        blocked: &mut Vec<Pend>,
        out: &mut Batch,
    ) {
        let t = Tok::new(p.f, p.rem, 0);
        if p.rem == 0 {
            return self.exit(d, t, p.key, blocked);
        }
        self.step::<RACKS>(d, t, p.key, blocked, out);
    }

    /// Give the token its next slot; `key` is its max-min key so far. Only slots after
    /// the one it last got can be free for it (§3.1): earlier ones were taken before it.
    #[inline(always)]
    fn step<const RACKS: bool>(
        &mut self,
        d: &DemandTable,
        t: Tok,
        key: u64,
        blocked: &mut Vec<Pend>,
        out: &mut Batch,
    ) {
        let a = self.slots.avail::<RACKS>(t.f());
        if a == 0 {
            return self.exit(d, t, key, blocked);
        }
        let k = a.trailing_zeros();
        self.slots.place::<RACKS>(t.f(), k, out.len[k as usize]);
        out.push(k, granted(d, t, self.first + k as u64, blocked));
    }

    /// The token leaves the batch with nothing free for it (or nothing to send): write
    /// its grants back; keep it pending if it has demand and both endpoints are present.
    #[inline(always)]
    fn exit(&mut self, d: &DemandTable, t: Tok, key: u64, blocked: &mut Vec<Pend>) {
        exit(d, self.absent, t, key, blocked)
    }

    /// Max-min: re-offer the pairs binned by slot, in slot order (§3.1).
    pub fn drain_bins<const RACKS: bool>(
        &mut self,
        d: &DemandTable,
        blocked: &mut Vec<Pend>,
        out: &mut Batch,
    ) {
        for k in 0..self.width {
            self.drain_slot::<RACKS>(d, k, blocked, out);
        }
    }

    /// Re-offer the pairs granted slot `k` (all earlier slots drained).
    #[inline(always)]
    fn drain_slot<const RACKS: bool>(
        &mut self,
        d: &DemandTable,
        k: u32,
        blocked: &mut Vec<Pend>,
        out: &mut Batch,
    ) {
        let key = self.first + k as u64 + 1;
        // Tokens only move to later slots: slot k is complete when reached.
        for j in 0..out.len[k as usize] as usize {
            let t = out.toks[k as usize * out.stride + j];
            if t.rem() > 0 {
                self.step::<RACKS>(d, t, key, blocked, out);
            }
        }
    }

    /// Greedy max-min over the whole batch on a full-bisection fabric, single-threaded
    /// (no owner tables): the same allocation as `offer` + `drain_bins`, written as
    /// one loop over local slices so that the bitmap words, bins and grants stay in
    /// registers and are not reloaded after every write. `arrivals` must be in key order.
    /// Pairs that leave blocked are appended to `blocked` in key order: those blocked
    /// when offered, then those blocked in the drain (the next batch's pending list as
    /// is, no copy).
    pub fn maxmin_flat(
        &mut self,
        d: &DemandTable,
        pending: &[Pend],
        arrivals: &[Pend],
        blocked: &mut Vec<Pend>,
        out: &mut Batch,
    ) {
        let width = self.width;
        let mut b = self.flat(d, out);
        let mut i = 0;
        for &a in arrivals {
            while i < pending.len() && pending[i].key <= a.key {
                b.offer_ahead(pending[i], blocked);
                i += 1;
            }
            b.offer_ahead(a, blocked);
        }
        for &p in &pending[i..] {
            b.offer_ahead(p, blocked);
        }
        b.drain_all(width, blocked);
        b.finish();
    }

    /// The flat loop's working set over `out` (full-bisection fabric, no owner tables),
    /// for [`Core::maxmin_flat`] and pipeline stages. [`Flat::finish`] records the slots'
    /// lengths in `out`.
    pub(crate) fn flat<'a>(&'a mut self, d: &'a DemandTable, out: &'a mut Batch) -> Flat<'a> {
        debug_assert!(!self.slots.racks() && !self.slots.own);
        let stride = out.stride;
        let base = out.toks.as_mut_ptr();
        let mut tail = [base; 64];
        for (k, t) in tail.iter_mut().enumerate().take(self.width as usize) {
            // SAFETY: k * stride < width * stride <= `toks.len()` (`Batch::reset`).
            *t = unsafe { base.add(k * stride) };
        }
        Flat {
            d,
            first: self.first,
            absent: self.absent,
            sf: &mut self.slots.src_free,
            df: &mut self.slots.dst_free,
            commits: &mut self.commits,
            base,
            _toks: std::marker::PhantomData,
            len: &mut out.len,
            width: self.width,
            tail,
            stride,
        }
    }

    /// Give `f` every free slot it can use (min-FCT and the final greedy pass). Returns
    /// whether the pair stays pending.
    #[inline]
    pub fn fill<const RACKS: bool>(&mut self, d: &DemandTable, f: Flow, out: &mut Batch) -> bool {
        let mut rem = d.outstanding(f);
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
        let q = out.at(k, gi);
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
        // q's grant moves from slot k to k2; slot k's last grant takes its place.
        let last = out.len[k as usize] - 1;
        let at = k as usize * out.stride;
        out.toks[at + gi as usize] = out.toks[at + last as usize];
        out.len[k as usize] = last;
        if gi != last {
            let m = out.at(k, gi);
            self.slots.src_owner[m.src as usize * 64 + k as usize] = gi;
            self.slots.dst_owner[m.dst as usize * 64 + k as usize] = gi;
        }
        self.slots.place::<RACKS>(q, k2, out.len[k2 as usize]);
        out.push(k2, Tok::new(q, 0, 0));
        self.grant::<RACKS>(d, f, k, out);
        // q's max-min key is its latest slot in the batch.
        let src_busy = !self.slots.src_free[q.src as usize] & self.slots.full;
        let latest = (0..64u32)
            .rev()
            .filter(|&x| src_busy >> x & 1 == 1)
            .find(|&x| {
                out.at(x, self.slots.src_owner[q.src as usize * 64 + x as usize])
                    .dst
                    == q.dst
            })
            .expect("q was just placed");
        d.set_last(q, self.first + latest as u64);
        true
    }
}

/// The working set of [`Core::maxmin_flat`], as local references.
pub(crate) struct Flat<'a> {
    d: &'a DemandTable,
    first: u64,
    absent: bool,
    sf: &'a mut [u64],
    df: &'a mut [u64],
    /// The batch's per-slot lists ([`Batch`]): `toks` of `out`, borrowed for `'a` and
    /// written only through `base` and `tail`.
    base: *mut Tok,
    _toks: std::marker::PhantomData<&'a mut [Tok]>,
    /// Blocked pairs' grants, written back by [`Flat::write_back`].
    commits: &'a mut Vec<Commit>,
    /// The batch's per-slot lengths, written by [`Flat::finish`].
    len: &'a mut [u32; 64],
    width: u32,
    /// Where slot k's next grant goes in `toks`: a pointer, so that a grant's store is
    /// one load of it, the token's two words and its increment (an index took a shift
    /// and the list's base, which did not stay in a register, as well).
    tail: [*mut Tok; 64],
    stride: usize,
}

impl Flat<'_> {
    /// Re-offer the pairs granted slot `k` (all earlier slots drained).
    #[inline(always)]
    pub(crate) fn drain_slot(&mut self, k: u32, blocked: &mut Vec<Pend>) {
        let k = k as usize;
        let key = self.first + k as u64 + 1;
        // Tokens only move to later slots: slot k is complete when reached, so its end
        // is read once.
        // SAFETY: slot k's list is `base + k * stride .. tail[k]`, within `toks` (see
        // `Flat::step`).
        let (mut p, end) = unsafe { (self.base.add(k * self.stride), self.tail[k]) };
        while p != end {
            // SAFETY: as above, p < end.
            let t = unsafe { *p };
            p = unsafe { p.add(1) };
            if t.rem() > 0 {
                self.step(t, key, blocked);
            }
        }
    }

    /// Drain slots `0..width` in order: a function of its own, so that the loop's
    /// working set gets the registers (inlined into the offer loop's function, the
    /// bitmap words' bases were reloaded from the stack for every grant).
    /// The slots' write positions and the bitmap words' bases are locals here: as
    /// fields of `self` the compiler reloaded the bases after every store of a token.
    #[inline(never)]
    pub(crate) fn drain_all(&mut self, width: u32, blocked: &mut Vec<Pend>) {
        let (sf, df) = (self.sf.as_mut_ptr(), self.df.as_mut_ptr());
        let mut tail = self.tail;
        for k in 0..width as usize {
            let key = self.first + k as u64 + 1;
            // SAFETY: as in `Flat::drain_slot`.
            let (mut p, end) = unsafe { (self.base.add(k * self.stride), tail[k]) };
            while p != end {
                // SAFETY: p < end, within slot k's list.
                let t = unsafe { *p };
                p = unsafe { p.add(1) };
                if t.rem() == 0 {
                    continue;
                }
                let (s, r) = (t.f().src as usize, t.f().dst as usize);
                // SAFETY: s, r < n, as in `Flat::step`.
                let (ws, wd) = unsafe { (*sf.add(s), *df.add(r)) };
                let a = ws & wd;
                if a == 0 {
                    self.exit(t, key, blocked);
                    continue;
                }
                let bit = a & a.wrapping_neg();
                // SAFETY: as above.
                unsafe {
                    *sf.add(s) = ws ^ bit;
                    *df.add(r) = wd ^ bit;
                }
                let j = a.trailing_zeros() as usize & 63;
                let mut t = t;
                t.take_one();
                // `granted` without its prefetch (see `Flat::offer_ahead`).
                if t.rem() == 0 {
                    t.set_rem(refill(self.d, t, self.first + j as u64, blocked));
                    t.clear_got();
                }
                // SAFETY: within slot j's list, as in `Flat::step`.
                unsafe {
                    *tail[j] = t;
                    tail[j] = tail[j].add(1);
                }
            }
        }
        self.tail = tail;
    }

    /// Write the grants of the pairs that left blocked back to their table records. A
    /// blocked pair is not met again in the batch, and nobody else reads its record before
    /// the batch ends (single-threaded) or before it is handed on (pipeline stages, which
    /// call this before every hand-off), so the writes wait for one tight loop: the
    /// records' cache misses overlap there instead of stalling the allocation loop one by
    /// one (perf had the write-back in `exit` as a third of the allocation's time at load
    /// 0.9).
    #[inline]
    pub(crate) fn write_back(&mut self) {
        const AHEAD: usize = 8;
        let c = &self.commits[..];
        for i in 0..c.len() {
            if let Some(x) = c.get(i + AHEAD) {
                self.d.prefetch(x.f);
            }
            self.d.commit(c[i].f, c[i].got as u64, c[i].last);
        }
        self.commits.clear();
    }

    /// Write the blocked pairs' grants back and record each slot's number of grants in
    /// the batch.
    pub(crate) fn finish(mut self) {
        self.write_back();
        for k in 0..self.width as usize {
            // SAFETY: both within slot k's list in `toks`.
            self.len[k] =
                unsafe { self.tail[k].offset_from(self.base.add(k * self.stride)) } as u32;
        }
    }

    /// [`Flat::offer`] for [`Flat::drain_all`], which does not prefetch: a pair that may
    /// run dry within the batch has its record prefetched here, once, instead of a
    /// test on every grant in the drain. The prefetch also comes earlier (at the start
    /// of the batch, not one grant before the refill): measured 12% less CPU time at
    /// load 0.3. A token refilled in the drain and run dry again is not prefetched.
    #[inline(always)]
    fn offer_ahead(&mut self, p: Pend, blocked: &mut Vec<Pend>) {
        if p.rem <= self.width {
            self.d.prefetch(p.f);
        }
        self.offer(p, blocked)
    }

    #[inline(always)]
    pub(crate) fn offer(&mut self, p: Pend, blocked: &mut Vec<Pend>) {
        let t = Tok::new(p.f, p.rem, 0);
        if p.rem == 0 {
            return self.exit(t, p.key, blocked);
        }
        self.step(t, p.key, blocked);
    }

    #[inline(always)]
    fn step(&mut self, t: Tok, key: u64, blocked: &mut Vec<Pend>) {
        let (s, r) = (t.f().src as usize, t.f().dst as usize);
        // SAFETY: `s`, `r` < n = `sf.len()` = `df.len()`: every token's pair was checked
        // against the allocator's endpoints when it was activated
        // (`Allocator::activate`), and `allocate` checks that the table has as many.
        // The checks cost more than their compare: without them the loop's working
        // set fits in registers (callgrind: 5598 -> 4631 instructions per timeslot).
        let (ws, wd) = unsafe { (*self.sf.get_unchecked(s), *self.df.get_unchecked(r)) };
        let a = ws & wd;
        if a == 0 {
            return self.exit(t, key, blocked);
        }
        // The lowest common free slot: clear it in both words as read (no reload).
        let bit = a & a.wrapping_neg();
        // SAFETY: as above.
        unsafe {
            *self.sf.get_unchecked_mut(s) = ws ^ bit;
            *self.df.get_unchecked_mut(r) = wd ^ bit;
        }
        let k = a.trailing_zeros() & 63;
        let t = granted(self.d, t, self.first + k as u64, blocked);
        let i = &mut self.tail[k as usize];
        // SAFETY: slot k's grants start at base + k * stride and a slot holds at most n
        // grants (each clears bit k of a distinct source's word), so the tail stays below
        // base + k * stride + n < base + (k + 1) * stride <= base + width * stride <=
        // the end of `toks` (`Batch::reset`).
        unsafe {
            debug_assert!(i.offset_from(self.base) < ((k as usize + 1) * self.stride) as isize);
            **i = t;
            *i = i.add(1);
        }
    }

    #[inline(always)]
    fn exit(&mut self, t: Tok, key: u64, blocked: &mut Vec<Pend>) {
        if t.rem() > 0 && !self.absent {
            // Blocked with demand left: the usual case, its write-back deferred.
            if t.got() > 0 {
                self.commits.push(Commit {
                    f: t.f(),
                    got: t.got(),
                    last: key - 1,
                });
            }
            blocked.push(Pend {
                f: t.f(),
                rem: t.rem(),
                key,
            });
        } else {
            // It may retire, after which its record is read by whoever activates it
            // again: written back now.
            exit(self.d, self.absent, t, key, blocked)
        }
    }
}

/// One batch of greedy max-min fed piecewise (pipeline stages, §3.1): every pair with a
/// key from before the batch offered in key order, then the slots drained in order.
pub(crate) trait MaxMinPass {
    fn offer(&mut self, p: Pend, blocked: &mut Vec<Pend>);
    fn drain_slot(&mut self, k: u32, blocked: &mut Vec<Pend>);
    /// Write back what must be in the table before blocked pairs are handed on.
    fn write_back(&mut self);
    /// Record the slots' lengths in the batch.
    fn finish(self);
}

impl MaxMinPass for Flat<'_> {
    #[inline(always)]
    fn offer(&mut self, p: Pend, blocked: &mut Vec<Pend>) {
        Flat::offer(self, p, blocked)
    }
    #[inline(always)]
    fn drain_slot(&mut self, k: u32, blocked: &mut Vec<Pend>) {
        Flat::drain_slot(self, k, blocked)
    }
    fn write_back(&mut self) {
        Flat::write_back(self)
    }
    fn finish(self) {
        Flat::finish(self)
    }
}

/// [`Core`]'s general path (rack limits, presence words) as a [`MaxMinPass`].
pub(crate) struct General<'a, const RACKS: bool> {
    pub(crate) core: &'a mut Core,
    pub(crate) d: &'a DemandTable,
    pub(crate) out: &'a mut Batch,
}

impl<const RACKS: bool> MaxMinPass for General<'_, RACKS> {
    #[inline(always)]
    fn offer(&mut self, p: Pend, blocked: &mut Vec<Pend>) {
        self.core.offer::<RACKS>(self.d, p, blocked, self.out)
    }
    #[inline(always)]
    fn drain_slot(&mut self, k: u32, blocked: &mut Vec<Pend>) {
        self.core.drain_slot::<RACKS>(self.d, k, blocked, self.out)
    }
    fn write_back(&mut self) {}
    fn finish(self) {}
}

/// The token leaves the batch with nothing free for it (or nothing to send): write its
/// grants back; keep it pending if it has demand and both endpoints are present (checked
/// only when some endpoint was absent at the start of the batch: a pair of an endpoint
/// that leaves during the batch is dropped by the next one).
#[inline(always)]
fn exit(d: &DemandTable, absent: bool, t: Tok, key: u64, blocked: &mut Vec<Pend>) {
    if t.got() > 0 {
        d.commit(t.f(), t.got() as u64, key - 1);
    }
    if t.rem() > 0 && !absent {
        blocked.push(Pend {
            f: t.f(),
            rem: t.rem(),
            key,
        });
    } else {
        exit_slow(d, t, key, blocked);
    }
}

/// The token got timeslot `slot`: the token to record in the slot, for its next offer,
/// or with `rem` 0 if it left the batch (ran dry, nothing reported since).
#[inline(always)]
fn granted(d: &DemandTable, mut t: Tok, slot: u64, blocked: &mut Vec<Pend>) -> Tok {
    t.take_one();
    if t.rem() == 1 {
        // The next grant runs it dry and reads the table: start loading the record now
        // (the original prefetches its per-pair state too).
        d.prefetch(t.f());
    }
    if t.rem() == 0 {
        t.set_rem(refill(d, t, slot, blocked));
        t.clear_got();
    }
    t
}

/// A token ran dry in slot `last`: write it back and read the table for demand reported
/// since. Returns the demand to go on with (0: the pair left the batch).
#[cold]
#[inline(never)]
fn refill(d: &DemandTable, t: Tok, last: u64, blocked: &mut Vec<Pend>) -> u32 {
    let rem = d.commit_remaining(t.f(), t.got() as u64, last);
    if rem == 0 {
        if d.retire(t.f()) {
            blocked.push(Pend::read(d, t.f()));
        }
        return 0;
    }
    rem.min(u32::MAX as u64) as u32
}

/// The rest of `exit` (grants already written back): a token with nothing left, or an
/// endpoint absent from the batch.
#[cold]
#[inline(never)]
fn exit_slow(d: &DemandTable, t: Tok, key: u64, blocked: &mut Vec<Pend>) {
    let p = if t.rem() == 0 {
        Pend::read(d, t.f())
    } else {
        Pend {
            f: t.f(),
            rem: t.rem(),
            key,
        }
    };
    if p.rem > 0 && d.endpoints_present(p.f) {
        blocked.push(p);
    } else if d.retire(p.f) {
        blocked.push(Pend::read(d, p.f));
    }
}

/// Single-threaded allocator: owns the pending pairs between batches.
pub struct Allocator {
    policy: Policy,
    mode: Mode,
    core: Core,
    /// Pairs with demand, as tokens in policy order (max-min: ascending key).
    pending: Vec<Pend>,
    /// Pairs activated since the last batch, with the demand and key they had then
    /// (read from the table's record while the report had it in cache, as the
    /// original's `add_backlog` does; the key cannot change while the pair is
    /// inactive, and the demand is a lower bound, like a token's).
    arrivals: Vec<Pend>,
    /// Pairs that left the batch blocked, in key order (blocked when offered, then
    /// blocked in the drain): the next pending list.
    stale: Vec<Pend>,
    /// Pairs as bare flows (min-FCT and the iterative passes work from the table).
    flows: Vec<Flow>,
    kept: Vec<Flow>,
    counts: Vec<u32>,
    keys: SortScratch,
    /// The table's reset count when the tokens' demand was last read.
    resets: u64,
}

impl Allocator {
    /// An allocator of batches of `width` timeslots (`1..=MAX_WIDTH`, else
    /// [`ConfigError::Width`]).
    pub fn new(
        fabric: &Fabric,
        policy: Policy,
        mode: Mode,
        width: u32,
    ) -> Result<Self, ConfigError> {
        check_width(width)?;
        Ok(Allocator {
            policy,
            mode,
            core: Core::new(fabric, width),
            pending: Vec::new(),
            arrivals: Vec::new(),
            stale: Vec::new(),
            flows: Vec::new(),
            kept: Vec::new(),
            counts: vec![0; 66],
            keys: SortScratch::default(),
            resets: 0,
        })
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

    /// Hand over a pair that [`DemandTable`] reported as newly active. A pair outside
    /// this allocator's fabric is refused ([`DemandError::UnknownEndpoint`]): the
    /// allocation loop relies on it, its endpoint lookups are unchecked.
    ///
    /// # Panics
    /// If the table is not for this allocator's fabric (as [`Allocator::allocate`]).
    #[inline]
    pub fn activate(&mut self, d: &DemandTable, f: Flow) -> Result<(), DemandError> {
        let n = self.core.slots.src_free.len();
        assert_eq!(
            d.endpoints(),
            n,
            "demand table and allocator have different fabrics"
        );
        for e in [f.src, f.dst] {
            if e as usize >= n {
                return Err(DemandError::UnknownEndpoint(e));
            }
        }
        self.arrivals.push(Pend::read(d, f));
        Ok(())
    }

    /// Pairs currently pending (with a token in this allocator).
    pub fn pending_len(&self) -> usize {
        self.pending.len() + self.arrivals.len()
    }

    /// Allocate timeslots `first .. first + width` into `out`. The caller's clock decides
    /// `first`; batches must not overlap and should be allocated in increasing order.
    ///
    /// # Panics
    /// If the table is not for this allocator's fabric (a different number of endpoints),
    /// or the batch would end past timeslot `u64::MAX` (max-min keys are timeslot + 1: a
    /// clock that far is a caller's bug, not something to wrap).
    pub fn allocate(&mut self, d: &DemandTable, first: u64, out: &mut Batch) {
        assert_eq!(
            d.endpoints(),
            self.core.slots.src_free.len(),
            "demand table and allocator have different fabrics"
        );
        check_first(first, self.core.width);
        self.core.begin(d, first, out);
        // Only the iterative mode looks up who holds a slot.
        self.core.slots.own = self.mode == Mode::Iterative;
        reread_after_reset(
            d,
            &mut self.resets,
            self.pending.iter_mut().chain(&mut self.arrivals),
        );
        if self.core.slots.racks() {
            self.run::<true>(d, out)
        } else {
            self.run::<false>(d, out)
        }
    }

    fn run<const RACKS: bool>(&mut self, d: &DemandTable, out: &mut Batch) {
        self.stale.clear();
        match self.policy {
            Policy::MaxMin => {
                // New pairs join in key order (never allocated = 0 = first); a pair that
                // was idle keeps the key of its last allocation. Pending tokens carry
                // their keys, and so do the new pairs.
                sort_arrivals(d.endpoints(), &mut self.arrivals, &mut self.keys);
                if !RACKS && self.mode == Mode::Greedy {
                    self.core
                        .maxmin_flat(d, &self.pending, &self.arrivals, &mut self.stale, out);
                    self.arrivals.clear();
                    std::mem::swap(&mut self.pending, &mut self.stale);
                    return;
                }
                let mut i = 0;
                for &a in &self.arrivals {
                    while i < self.pending.len() && self.pending[i].key <= a.key {
                        let t = self.pending[i];
                        self.core.offer::<RACKS>(d, t, &mut self.stale, out);
                        i += 1;
                    }
                    self.core.offer::<RACKS>(d, a, &mut self.stale, out);
                }
                for &t in &self.pending[i..] {
                    self.core.offer::<RACKS>(d, t, &mut self.stale, out);
                }
                self.core.drain_bins::<RACKS>(d, &mut self.stale, out);
            }
            Policy::MinFct => {
                self.flows.clear();
                self.flows.extend(self.pending.iter().map(|t| t.f));
                self.flows.extend(self.arrivals.iter().map(|t| t.f));
                self.flows
                    .sort_unstable_by_key(|&f| (d.outstanding(f), d.last_key(f), f.src, f.dst));
                self.kept.clear();
                for i in 0..self.flows.len() {
                    let f = self.flows[i];
                    if self.core.fill::<RACKS>(d, f, out) {
                        self.kept.push(f);
                    }
                }
            }
        }
        self.arrivals.clear();
        self.pending.clear();
        if self.policy == Policy::MaxMin && self.mode == Mode::Greedy {
            // Already in key order: blocked before the batch, then by slot. The blocked
            // list (the long one under load) becomes the pending list without a copy.
            std::mem::swap(&mut self.pending, &mut self.stale);
            return;
        }
        if self.policy == Policy::MaxMin {
            self.kept.clear();
            self.kept.extend(self.stale.iter().map(|t| t.f));
        }
        if self.mode == Mode::Greedy {
            // Min-FCT greedy: the order is made at the start of the next batch.
            self.pending
                .extend(self.kept.iter().map(|&f| Pend::read(d, f)));
            return;
        }
        for &f in &self.kept {
            while d.outstanding(f) > 0 && self.core.augment::<RACKS>(d, f, out) {}
        }
        // Final greedy pass (maximality after the moves), then a stable counting sort by
        // key bucket (pre-batch, slot 0..63) to restore max-min order.
        let first = self.core.first;
        self.counts.fill(0);
        let mut keep = std::mem::take(&mut self.kept);
        keep.retain(|&f| self.core.fill::<RACKS>(d, f, out));
        let bucket = |f: Flow| (d.last_key(f).saturating_sub(first)) as usize;
        for &f in &keep {
            self.counts[bucket(f) + 1] += 1;
        }
        for b in 1..self.counts.len() {
            self.counts[b] += self.counts[b - 1];
        }
        self.flows.clear();
        self.flows.resize(keep.len(), Flow { src: 0, dst: 0 });
        for &f in &keep {
            let b = bucket(f);
            self.flows[self.counts[b] as usize] = f;
            self.counts[b] += 1;
        }
        self.pending
            .extend(self.flows.iter().map(|&f| Pend::read(d, f)));
        keep.clear();
        self.kept = keep;
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
    /// An arbiter for `fabric` allocating batches of `width` timeslots (`1..=MAX_WIDTH`,
    /// else [`ConfigError::Width`]).
    pub fn new(
        fabric: &Fabric,
        policy: Policy,
        mode: Mode,
        width: u32,
    ) -> Result<Self, ConfigError> {
        Ok(Arbiter {
            alloc: Allocator::new(fabric, policy, mode, width)?,
            demand: DemandTable::new(fabric.endpoints()),
            rejoined: Vec::new(),
        })
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

    /// FCP aggregate count (§5.3): `src` has requested `total` timeslots to `dst`, a
    /// modular count from its last reset; see [`DemandTable::request`] for its arithmetic
    /// and the reports refused.
    pub fn request(&mut self, src: u32, dst: u32, total: u64) -> Result<(), crate::DemandError> {
        if let Some(f) = self.demand.request(src, dst, total)? {
            self.alloc.activate(&self.demand, f)?;
        }
        Ok(())
    }

    pub fn leave(&mut self, e: u32) -> Result<(), crate::DemandError> {
        self.demand.leave(e)
    }

    pub fn rejoin(&mut self, e: u32) -> Result<(), crate::DemandError> {
        self.demand.rejoin(e, &mut self.rejoined)?;
        for f in self.rejoined.drain(..) {
            self.alloc.activate(&self.demand, f)?;
        }
        Ok(())
    }

    /// FCP re-synchronisation (§5.1, §5.3); see [`DemandTable::reset`].
    pub fn reset(&mut self, e: u32) -> Result<(), crate::DemandError> {
        self.demand.reset(e)
    }

    /// Re-synchronisation at an agreed count; see [`DemandTable::reset_to`].
    pub fn reset_to(&mut self, e: u32, total: u64) -> Result<(), crate::DemandError> {
        self.demand.reset_to(e, total)
    }

    /// Allocate timeslots `first .. first + width`.
    ///
    /// # Panics
    /// If the batch would end past timeslot `u64::MAX` (see [`Allocator::allocate`]).
    pub fn allocate(&mut self, first: u64, out: &mut Batch) {
        self.alloc.allocate(&self.demand, first, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Distinct pairs of `n` endpoints with keys drawn by `key`.
    fn pends(n: usize, picks: &[(u32, u32, u64, u32)]) -> Vec<Pend> {
        let mut seen = std::collections::HashSet::new();
        picks
            .iter()
            .map(|&(s, d, key, rem)| (s % n as u32, d % n as u32, key, rem))
            .filter(|&(s, d, _, _)| seen.insert((s, d)))
            .map(|(src, dst, key, rem)| Pend {
                f: Flow { src, dst },
                rem,
                key,
            })
            .collect()
    }

    fn check(n: usize, v: Vec<Pend>, scratch: &mut SortScratch) {
        let mut want = v.clone();
        want.sort_unstable_by_key(|p| (p.key, p.f.src, p.f.dst));
        let mut got = v;
        sort_arrivals(n, &mut got, scratch);
        let key = |p: &Pend| (p.key, p.f.src, p.f.dst, p.rem);
        assert_eq!(
            got.iter().map(key).collect::<Vec<_>>(),
            want.iter().map(key).collect::<Vec<_>>()
        );
    }

    proptest! {
        /// The bucket sort orders as a plain sort by (key, src, dst), whatever the keys:
        /// many key 0, keys spread thinly, bunched (the fallback), or too wide to pack.
        #[test]
        fn sort_arrivals_is_a_sort(
            n in 1usize..300,
            picks in prop::collection::vec((any::<u32>(), any::<u32>(), 0u64..4, any::<u32>()), 0..1500),
            base in prop_oneof![Just(0u64), 1u64..100_000, Just(u64::MAX / 2)],
            spread in prop_oneof![Just(1u64), 1u64..64, 64u64..100_000, Just(u64::MAX / 4)],
            zero_share in 0u32..4,
        ) {
            let mut scratch = SortScratch::default();
            let picks: Vec<_> = picks
                .iter()
                .enumerate()
                .map(|(i, &(s, d, k, r))| {
                    // A deterministic spread of keys from the drawn shape.
                    let h = (i as u64 ^ s as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    let key = if (k as u32) < zero_share {
                        0
                    } else {
                        base + 1 + h % spread
                    };
                    (s, d, key, r)
                })
                .collect();
            let n = n.max(2);
            let v = pends(n, &picks);
            // Twice with the same scratch: buffers reused with stale contents.
            check(n, v.clone(), &mut scratch);
            check(n, v.into_iter().rev().collect(), &mut scratch);
        }
    }

    /// The arbiter's own counts are modular too: started just below 2^64 (the table as
    /// after 2^64 allocated timeslots), a pair's demand is allocated exactly, across the
    /// wrap, in every mode and policy, and the endpoint's view does not see the origin.
    /// (The reports used to compare `base + total` with the count unwrapped: an
    /// overflow, or, wrapped, a demand dropped.)
    #[test]
    fn own_counts_wrap_across_u64_max() {
        let f = Flow { src: 0, dst: 1 };
        for policy in [Policy::MaxMin, Policy::MinFct] {
            for mode in [Mode::Greedy, Mode::Iterative] {
                let mut arb = Arbiter::new(&Fabric::full_bisection(4), policy, mode, 8).unwrap();
                arb.demand.start_counts_at(u64::MAX - 4);
                arb.request(0, 1, 10).unwrap();
                arb.request(2, 1, 6).unwrap();
                assert_eq!(arb.demand.remaining(f), Ok(10));
                let (mut b, mut got) = (Batch::new(), 0);
                for i in 0..4 {
                    arb.allocate(i * 8, &mut b);
                    got += b.grants().filter(|g| g.flow() == f).count();
                }
                assert_eq!(got, 10, "{policy:?} {mode:?}");
                let d = &arb.demand;
                assert_eq!(
                    (d.requested(f), d.allocated(f), d.remaining(f)),
                    (Ok(10), Ok(10), Ok(0))
                );
                arb.request(0, 1, 7).unwrap();
                assert_eq!(arb.demand.remaining(f), Ok(0));
            }
        }
    }

    /// All keys equal and nonzero (a whole timeslot's matching retiring together): one
    /// bucket, over the limit, sorted by the fallback.
    #[test]
    fn sort_arrivals_bunched() {
        let n = 256;
        let picks: Vec<_> = (0..n as u32)
            .map(|s| (s, (s * 7 + 1) % n as u32, 1234, s))
            .collect();
        check(
            n,
            pends(n, &picks).into_iter().rev().collect(),
            &mut SortScratch::default(),
        );
    }
}
