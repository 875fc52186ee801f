//! The TCP receiver: cumulative ACKs and RFC 2018 SACK blocks (most recent first), the
//! optional delayed ACK (RFC 5681 §4.2), ECN echo per ACK (as DCTCP does), D-SACK, the
//! FastLane multipath option's out-of-order count, and CP's PACK (CP §4.3): a
//! payload-cut packet is answered at once with the lost bytes named.

use super::config::TcpConfig;
use crate::packet::MAX_SACK;
use crate::transport::connection::{AckInfo, Data, Handled};
use crate::units::Ps;
use std::collections::VecDeque;

pub struct TcpReceiver {
    size: u64,
    mss: u64,
    delayed_ack: Option<Ps>,
    rcv_nxt: u64,
    /// ooo[i]: segment rcv_nxt/mss + i has arrived (ooo[0] is the hole, never set).
    ooo: VecDeque<bool>,
    /// The segment whose arrival triggers the next ACK's first SACK block.
    last_seg: Option<u64>,
    /// The segments whose blocks the last ACKs reported first, most recent first
    /// (RFC 2018 §4: later ACKs repeat them, so one lost ACK does not hide a block).
    reported: [Option<u64>; MAX_SACK],
    pending: u32,
    ack_deadline: Option<Ps>,
    echo_ts: Ps,
    echo_retx: bool,
    /// A CE-marked packet arrived since the last ACK (echoed per ACK, as DCTCP does).
    ce_pending: bool,
    /// Bytes held out of order above `rcv_nxt` (FastLane's multipath option).
    ooo_bytes: u64,
    /// CP: the lost block a payload-cut packet reported, for the next ACK (a PACK).
    pack: Option<(u64, u64)>,
    /// A duplicate segment arrived since the last ACK (reported as a D-SACK).
    dsack: bool,
    /// Payload bytes that arrived more than once.
    dup_bytes: u64,
}

impl TcpReceiver {
    pub fn new(cfg: &TcpConfig, size: u64) -> Self {
        Self::with(cfg.mss, cfg.delayed_ack, size)
    }

    /// A receiver of a flow of `size` bytes in segments of `mss`, delaying ACKs by up to
    /// `delayed_ack` (`None`: an ACK per segment).
    pub fn with(mss: u32, delayed_ack: Option<Ps>, size: u64) -> Self {
        TcpReceiver {
            size,
            mss: mss as u64,
            delayed_ack,
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            last_seg: None,
            reported: [None; MAX_SACK],
            pending: 0,
            ack_deadline: None,
            echo_ts: 0,
            echo_retx: false,
            ce_pending: false,
            ooo_bytes: 0,
            pack: None,
            dsack: false,
            dup_bytes: 0,
        }
    }

    /// Payload bytes that arrived more than once.
    pub fn dup_bytes(&self) -> u64 {
        self.dup_bytes
    }

    /// Bytes delivered in order, each exactly once.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }

    pub fn complete(&self) -> bool {
        self.rcv_nxt >= self.size
    }

    pub fn timer(&self) -> Option<Ps> {
        self.ack_deadline
    }

    fn seg_len(&self, k: u64) -> u64 {
        (self.size - k * self.mss).min(self.mss)
    }

    pub fn on_data(&mut self, now: Ps, d: Data) -> Handled {
        let Data {
            seq,
            len,
            ts,
            retx,
            ce,
        } = d;
        let was_complete = self.complete();
        self.ce_pending |= ce;
        let k = seq / self.mss;
        let base = self.rcv_nxt / self.mss;
        let mut in_order_no_holes = false;
        self.last_seg = None;
        if seq < self.rcv_nxt || seq >= self.size {
            self.dup_bytes += len as u64;
            self.dsack = true;
        } else if seq == self.rcv_nxt {
            // RFC 5681 §4.2: a segment that fills all or part of a gap is acknowledged at
            // once, so only one arriving with nothing out of order may be delayed. (The
            // hole map is empty or ends with a segment received: it only grows to mark one.)
            let had_holes = !self.ooo.is_empty();
            self.ooo.pop_front();
            self.rcv_nxt += len as u64;
            while self.ooo.front() == Some(&true) {
                self.ooo.pop_front();
                let next = self.rcv_nxt / self.mss;
                self.rcv_nxt += self.seg_len(next);
                self.ooo_bytes -= self.seg_len(next);
            }
            in_order_no_holes = !had_holes;
        } else {
            let i = (k - base) as usize;
            if self.ooo.len() <= i {
                self.ooo.resize(i + 1, false);
            }
            if self.ooo[i] {
                self.dup_bytes += len as u64;
                self.dsack = true;
            } else {
                self.ooo[i] = true;
                self.ooo_bytes += len as u64;
            }
            self.last_seg = Some(k);
        }
        let completed = !was_complete && self.complete();
        if self.pending == 0 {
            self.echo_ts = ts;
            self.echo_retx = retx;
        }
        self.pending += 1;
        let ack_now = match self.delayed_ack {
            // Delay only in-order data that leaves no hole, and never the last byte.
            Some(d) if in_order_no_holes && !self.complete() => {
                if self.pending >= 2 {
                    true
                } else {
                    self.ack_deadline.get_or_insert(now + d);
                    false
                }
            }
            _ => true,
        };
        Handled { ack_now, completed }
    }

    /// RFC 8257 §3.2: a segment whose CE mark differs from that of the segments an ACK
    /// is being delayed for ends the delay: they are acknowledged at once, echoing their
    /// own mark, before this one is taken in (so one ACK never mixes marked and unmarked
    /// data, and the sender's fraction of marked bytes stays exact).
    pub fn ce_flips(&self, ce: bool) -> bool {
        self.pending > 0 && ce != self.ce_pending
    }

    /// CP §4.3: a payload-cut packet arrived — `seq` and its original payload length
    /// `len` name the lost bytes. The PACK goes out at once (the caller sends the ACK).
    pub fn on_cut(&mut self, seq: u64, len: u32) {
        let right = (seq + len as u64).min(self.size);
        if seq >= self.rcv_nxt && right > seq {
            self.pack = Some((seq, right));
        }
    }

    /// The segment at `seq` has arrived before (or lies outside the data).
    pub fn is_duplicate(&self, seq: u64) -> bool {
        if seq < self.rcv_nxt || seq >= self.size {
            return true;
        }
        let i = (seq / self.mss - self.rcv_nxt / self.mss) as usize;
        self.ooo.get(i).copied().unwrap_or(false)
    }

    /// Delayed-ACK timer; true when an ACK is due now.
    pub fn on_timer(&mut self, now: Ps) -> bool {
        match self.ack_deadline {
            Some(d) if d <= now => {
                self.ack_deadline = None;
                self.pending > 0
            }
            _ => false,
        }
    }

    /// Builds the ACK and clears the pending count.
    pub fn make_ack(&mut self) -> AckInfo {
        let mut ack = AckInfo {
            cum: self.rcv_nxt,
            echo_ts: self.echo_ts,
            echo_retx: self.echo_retx,
            ece: self.ce_pending,
            ooo: self.ooo_bytes,
            // Swapped edges: (right, left) (CP §4.3, Fig. 4b).
            pack: self.pack.take().map_or((0, 0), |(l, r)| (r, l)),
            dsack: std::mem::take(&mut self.dsack),
            ..Default::default()
        };
        self.ce_pending = false;
        self.pending = 0;
        self.ack_deadline = None;
        // Consumed here: an ACK made for no new arrival (a PACK, a resent ACK) has no
        // triggering segment.
        let last_seg = self.last_seg.take();
        if self.ooo.is_empty() {
            return ack;
        }
        // RFC 2018: the block holding the segment that triggered this ACK comes first.
        let (mss, size) = (self.mss, self.size);
        let base = self.rcv_nxt / mss;
        let trigger = last_seg.filter(|&k| k >= base);
        // The blocks are found by scanning the hole map, once or twice per ACK while
        // data is out of order: as one slice (rotated in place only when it has wrapped),
        // not through the deque's wrap-around indexing.
        let ooo: &[bool] = self.ooo.make_contiguous();
        let block_of = |i: usize| -> (usize, usize) {
            let mut a = i;
            while a > 0 && ooo[a - 1] {
                a -= 1;
            }
            let mut b = i + 1;
            while b < ooo.len() && ooo[b] {
                b += 1;
            }
            (a, b)
        };
        let to_bytes = |(a, b): (usize, usize)| -> (u64, u64) {
            let l = (base + a as u64) * mss;
            let r = ((base + b as u64) * mss).min(size);
            (l, r)
        };
        let mut blocks = [(0usize, 0usize); MAX_SACK];
        let mut n = 0;
        // RFC 2018 §4: then the most recently reported blocks, then (our fill) the
        // lowest others.
        let recent = self.reported.iter().flatten().copied();
        // As indices into the hole map, those still held out of order.
        let candidates = trigger.into_iter().chain(recent).filter_map(|k| {
            let i = k.checked_sub(base)? as usize;
            ooo.get(i).is_some_and(|&held| held).then_some(i)
        });
        for i in candidates {
            // Recent segments are mostly in a block already taken (arrivals extending
            // one block): known without walking the hole map.
            if n == MAX_SACK {
                break;
            }
            if blocks[..n].iter().any(|&(a, b)| a <= i && i < b) {
                continue;
            }
            blocks[n] = block_of(i);
            n += 1;
        }
        let mut i = 0;
        while i < ooo.len() && n < MAX_SACK {
            if ooo[i] {
                let b = block_of(i);
                if !blocks[..n].contains(&b) {
                    blocks[n] = b;
                    n += 1;
                }
                i = b.1;
            } else {
                i += 1;
            }
        }
        for (s, &b) in ack.sack.iter_mut().zip(&blocks[..n]) {
            *s = to_bytes(b);
        }
        ack.nsack = n as u8;
        if let Some(k) = trigger {
            // Distinct blocks, most recent first (Linux keeps its list so): entries now
            // inside the trigger's block (blocks[0]) give way to it, or arrivals extending
            // one block would fill the list with it and push older blocks out.
            let (lo, hi) = (base + blocks[0].0 as u64, base + blocks[0].1 as u64);
            let mut kept = [None; MAX_SACK];
            kept[0] = Some(k);
            let older = self.reported.iter().flatten();
            for (slot, &r) in kept[1..]
                .iter_mut()
                .zip(older.filter(|&&r| r < lo || r >= hi))
            {
                *slot = Some(r);
            }
            self.reported = kept;
        }
        ack
    }
}
