//! The sender's scoreboard (RFC 6675): the send sequence space, `una` to `nxt`, with one
//! state byte per segment (every segment but the last carries exactly one MSS), the data
//! in flight (`pipe`) kept exact as states change, and the loss marks: RFC 6675's
//! IsLost, lost retransmissions (Linux's tcp_mark_lost_retrans), PACKs' and
//! notifications' marks, a timeout's.

use std::collections::VecDeque;

// Segment states, as bits.
pub const SACKED: u8 = 1;
pub const LOST: u8 = 2;
pub const RETX: u8 = 4;
/// Lost by a FastLane notification: resent from the notification table only.
pub const NOTIFIED: u8 = 8;

pub struct Scoreboard {
    size: u64,
    mss: u64,
    /// Lowest unacknowledged byte; always a segment boundary (or `size`).
    una: u64,
    /// `una` in segments: the board's first segment (kept, not divided out on every use).
    una_k: u64,
    /// Next new byte to send.
    nxt: u64,
    /// States of segments [una/mss, ceil(nxt/mss)).
    sb: VecDeque<u8>,
    /// Transmission order of each segment's latest transmission (parallel to `sb`).
    sb_tx: VecDeque<u32>,
    /// Transmissions so far (the order stamp of the next one).
    tx_count: u32,
    /// Highest transmission stamp known delivered (SACKed or cumulatively acknowledged).
    delivered_tx: u32,
    /// Segments retransmitted and not yet SACKed: the candidates for lost retransmissions.
    retx_out: u32,
    /// Bytes in flight by RFC 6675's definition.
    pipe: u64,
    /// Bytes of SACKed segments above `una`.
    sacked: u64,
    /// One past the highest SACKed segment.
    high_sacked: u64,
    /// One past the highest segment `mark_lost_by_sack` (or a timeout) has marked lost:
    /// every segment below it has been examined for RFC 6675's IsLost since.
    lost_scanned: u64,
    /// No lost-and-not-retransmitted segment lies below this segment.
    retx_cursor: u64,
}

/// What taking back a segment the NIC refused did ([`Scoreboard::take_back`]).
pub enum TakenBack {
    /// New data: `nxt` stepped back over it.
    NewData,
    /// Sent before (or a retransmission, `retx`): lost again, to be resent.
    Remarked { retx: bool },
    /// Nothing: delivered, notified, or outside the board.
    Nothing,
}

impl Scoreboard {
    pub fn new(size: u64, mss: u64) -> Self {
        Scoreboard {
            size,
            mss,
            una: 0,
            una_k: 0,
            nxt: 0,
            sb: VecDeque::new(),
            sb_tx: VecDeque::new(),
            tx_count: 0,
            delivered_tx: 0,
            retx_out: 0,
            pipe: 0,
            sacked: 0,
            high_sacked: 0,
            lost_scanned: 0,
            retx_cursor: 0,
        }
    }

    #[inline]
    pub fn una(&self) -> u64 {
        self.una
    }

    #[inline]
    pub fn nxt(&self) -> u64 {
        self.nxt
    }

    /// Bytes in flight (RFC 6675's pipe).
    #[inline]
    pub fn pipe(&self) -> u64 {
        self.pipe
    }

    /// Bytes SACKed above `una`.
    #[inline]
    pub fn sacked(&self) -> u64 {
        self.sacked
    }

    /// Retransmissions not yet SACKed.
    #[inline]
    pub fn retx_out(&self) -> u32 {
        self.retx_out
    }

    /// One past the highest SACKed segment.
    #[inline]
    pub fn high_sacked(&self) -> u64 {
        self.high_sacked
    }

    #[inline]
    pub fn seg_len(&self, k: u64) -> u64 {
        (self.size - k * self.mss).min(self.mss)
    }

    #[inline]
    pub fn una_seg(&self) -> u64 {
        // `una` is a segment boundary, or `size` once everything is acknowledged.
        debug_assert_eq!(self.una_k, self.una.div_ceil(self.mss));
        self.una_k
    }

    /// One past the last segment sent: the board holds [una_seg, nxt_seg).
    #[inline]
    pub fn nxt_seg(&self) -> u64 {
        debug_assert_eq!(
            self.una_k + self.sb.len() as u64,
            self.nxt.div_ceil(self.mss)
        );
        self.una_k + self.sb.len() as u64
    }

    #[inline]
    fn sacked_len(state: u8, len: u64) -> u64 {
        if state & SACKED != 0 {
            len
        } else {
            0
        }
    }

    #[inline]
    fn contrib(state: u8, len: u64) -> u64 {
        if state & SACKED != 0 || (state & LOST != 0 && state & RETX == 0) {
            0
        } else {
            len
        }
    }

    #[inline]
    fn retx_pending(state: u8) -> u32 {
        u32::from(state & RETX != 0 && state & SACKED == 0)
    }

    /// Changes the state of absolute segment `k`, keeping `pipe` exact.
    #[inline]
    fn set_state(&mut self, k: u64, new: u8) {
        let i = (k - self.una_seg()) as usize;
        let old = self.sb[i];
        let len = self.seg_len(k);
        self.pipe = self.pipe + Self::contrib(new, len) - Self::contrib(old, len);
        self.sacked = self.sacked + Self::sacked_len(new, len) - Self::sacked_len(old, len);
        self.retx_out = self.retx_out + Self::retx_pending(new) - Self::retx_pending(old);
        self.sb[i] = new;
    }

    /// The cumulative ACK moved to `cum` (past `una`): the segments below it leave the
    /// board. Returns the bytes newly acknowledged and the reordering it shows: how far
    /// below `fack` (one past the highest SACKed segment before this ACK) a segment
    /// never retransmitted was delivered.
    #[inline]
    pub fn ack_to(&mut self, cum: u64, fack: u64) -> (u64, u64) {
        let mut reordered = 0;
        let new_seg = cum.div_ceil(self.mss);
        for k in self.una_seg()..new_seg {
            let st = self
                .sb
                .pop_front()
                .expect("acked segment is on the scoreboard");
            if st & (SACKED | RETX) == 0 && k + 1 < fack {
                reordered = reordered.max(fack - k);
            }
            let tx = self.sb_tx.pop_front().expect("parallel to sb");
            self.delivered_tx = self.delivered_tx.max(tx);
            self.pipe -= Self::contrib(st, self.seg_len(k));
            self.sacked -= Self::sacked_len(st, self.seg_len(k));
            self.retx_out -= Self::retx_pending(st);
        }
        let newly_acked = cum - self.una;
        self.una = (new_seg * self.mss).min(self.size);
        self.una_k = new_seg;
        (newly_acked, reordered)
    }

    /// SACK blocks: the segments they cover are delivered. Returns whether any was news,
    /// and the reordering shown (as in [`Scoreboard::ack_to`]).
    #[inline]
    pub fn sack(&mut self, blocks: &[(u64, u64)], fack: u64) -> (bool, u64) {
        let mut news = false;
        let mut reordered = 0;
        let una_seg = self.una_seg();
        let nxt_seg = self.nxt_seg();
        for &(l, r) in blocks {
            let first = (l / self.mss).max(una_seg);
            let last = r.div_ceil(self.mss).min(nxt_seg);
            for k in first..last {
                let st = self.sb[(k - una_seg) as usize];
                if st & SACKED == 0 {
                    if st & RETX == 0 && k + 1 < fack {
                        reordered = reordered.max(fack - k);
                    }
                    self.set_state(k, st | SACKED);
                    let tx = self.sb_tx[(k - una_seg) as usize];
                    self.delivered_tx = self.delivered_tx.max(tx);
                    news = true;
                }
            }
            self.high_sacked = self.high_sacked.max(last);
        }
        (news, reordered)
    }

    /// The state bits of absolute segment `k` (on the board).
    #[cfg(test)]
    pub fn state(&self, k: u64) -> u8 {
        self.sb[(k - self.una_seg()) as usize]
    }

    /// The first unacknowledged segment is marked lost (and not by a notification).
    #[inline]
    pub fn head_lost(&self) -> bool {
        self.sb
            .front()
            .is_some_and(|&s| s & LOST != 0 && s & NOTIFIED == 0)
    }

    /// Data sent after the first unacknowledged segment's latest transmission has been
    /// delivered.
    #[inline]
    pub fn head_overtaken(&self) -> bool {
        self.sb_tx.front().is_some_and(|&tx| tx < self.delivered_tx)
    }

    /// Segment `k` has been delivered (acknowledged or SACKed).
    #[inline]
    pub fn delivered(&self, k: u64) -> bool {
        let una_seg = self.una_seg();
        k < una_seg || self.sb[(k - una_seg) as usize] & SACKED != 0
    }

    /// The next new segment goes out: returns its (seq, len).
    #[inline]
    pub fn send_new(&mut self) -> (u64, u64) {
        let len = self.seg_len(self.nxt_seg());
        let seq = self.nxt;
        self.sb.push_back(0);
        self.tx_count += 1;
        self.sb_tx.push_back(self.tx_count);
        self.pipe += len;
        self.nxt += len;
        (seq, len)
    }

    /// Segment `k` is retransmitted.
    #[inline]
    pub fn resend(&mut self, k: u64) {
        let i = (k - self.una_seg()) as usize;
        let st = self.sb[i];
        self.set_state(k, st | RETX);
        self.tx_count += 1;
        self.sb_tx[i] = self.tx_count;
    }

    #[inline]
    pub fn mark_head_lost(&mut self) {
        let k = self.una_seg();
        if let Some(&st) = self.sb.front() {
            if st & (SACKED | LOST) == 0 {
                self.set_state(k, st | LOST);
                self.retx_cursor = self.retx_cursor.min(k);
            }
        }
    }

    /// RFC 6675 IsLost: a segment with at least `th` SACKed segments above it is lost.
    #[inline]
    pub fn mark_lost_by_sack(&mut self, th: u32) {
        let una_seg = self.una_seg();
        if self.high_sacked <= una_seg {
            return;
        }
        let mut sacked_above = 0;
        for k in (una_seg..self.high_sacked).rev() {
            let st = self.sb[(k - una_seg) as usize];
            if st & SACKED != 0 {
                sacked_above += 1;
            } else if sacked_above >= th {
                if st & NOTIFIED != 0 {
                    continue; // FastLane's table owns it
                }
                if st & LOST != 0 {
                    if k < self.lost_scanned {
                        // Everything below was examined when the scan marked this one
                        // or one above it. A segment a PACK or a partial ACK marked
                        // is no such bound: the scan goes on below it.
                        break;
                    }
                    continue;
                }
                self.set_state(k, st | LOST);
                self.retx_cursor = self.retx_cursor.min(k);
                self.lost_scanned = self.lost_scanned.max(k + 1);
            }
        }
    }

    /// A retransmission is lost when a segment sent `th` or more transmissions after it
    /// has been delivered (the same tolerance for reordering as the duplicate-ACK
    /// threshold): it becomes lost-and-unsent again and is resent without waiting for
    /// the RTO.
    #[inline]
    pub fn mark_lost_retransmissions(&mut self, th: u32) {
        let una_seg = self.una_seg();
        // Only the `retx_out` pending retransmissions can change, and they usually sit
        // near the head: stop at the last of them instead of walking the whole
        // scoreboard on every ACK of a recovery (callgrind: 2% of all instructions on
        // the fat-tree benchmark).
        let mut left = self.retx_out;
        for i in 0..self.sb.len() {
            if left == 0 {
                break;
            }
            let st = self.sb[i];
            if Self::retx_pending(st) == 1 {
                left -= 1;
                if st & NOTIFIED == 0 && self.sb_tx[i] + th <= self.delivered_tx {
                    let k = una_seg + i as u64;
                    self.set_state(k, LOST);
                    self.retx_cursor = self.retx_cursor.min(k);
                }
            }
        }
    }

    /// Lowest segment marked lost and not yet retransmitted.
    #[inline]
    pub fn next_lost(&mut self) -> Option<u64> {
        let una_seg = self.una_seg();
        let nxt_seg = self.nxt_seg();
        let mut k = self.retx_cursor.max(una_seg);
        while k < nxt_seg {
            let st = self.sb[(k - una_seg) as usize];
            if st & LOST != 0 && st & (RETX | SACKED | NOTIFIED) == 0 {
                self.retx_cursor = k;
                return Some(k);
            }
            k += 1;
        }
        self.retx_cursor = nxt_seg;
        None
    }

    /// A segment marked lost and not since SACKed (resent or not): Linux's lost_out.
    #[inline]
    pub fn lost_outstanding(&self) -> bool {
        self.sb
            .iter()
            .any(|&st| st & LOST != 0 && st & (SACKED | NOTIFIED) == 0)
    }

    /// A timeout: everything outstanding and not SACKed is presumed lost; SACKed data is
    /// not resent.
    #[inline]
    pub fn mark_unsacked_lost(&mut self) {
        for k in self.una_seg()..self.nxt_seg() {
            let st = self.sb[(k - self.una_seg()) as usize];
            if st & SACKED == 0 {
                self.set_state(k, LOST);
            }
        }
        self.retx_cursor = self.una_seg();
        self.lost_scanned = self.nxt_seg();
    }

    /// CP §4.4: the segments of bytes [l, r) a PACK names are lost, unless received
    /// already or already lost and not resent (a retransmission cut again is lost
    /// again). Returns whether it marked any.
    #[inline]
    pub fn mark_cut(&mut self, l: u64, r: u64) -> bool {
        let una_seg = self.una_seg();
        let nxt_seg = self.nxt_seg();
        let first = (l / self.mss).max(una_seg);
        let last = r.div_ceil(self.mss).min(nxt_seg);
        let mut news = false;
        for k in first..last {
            let st = self.sb[(k - una_seg) as usize];
            if st & SACKED != 0 || (st & LOST != 0 && st & RETX == 0) {
                continue;
            }
            self.set_state(k, LOST);
            self.retx_cursor = self.retx_cursor.min(k);
            news = true;
        }
        news
    }

    /// FastLane: the packet carrying `seq` was dropped. Its segment (if outstanding and
    /// not delivered) is marked lost by notification; returns the segment.
    #[inline]
    pub fn mark_notified(&mut self, seq: u64) -> Option<u64> {
        if seq < self.una || seq >= self.nxt {
            return None;
        }
        let k = seq / self.mss;
        let st = self.sb[(k - self.una_seg()) as usize];
        if st & SACKED != 0 {
            return None;
        }
        // Dropped: it has left the network.
        self.set_state(k, LOST | NOTIFIED);
        Some(k)
    }

    /// The host's NIC refused the segment at `seq` (`len` bytes), which never left: new
    /// data at the end of what was sent is taken back; data sent before is lost again.
    #[inline]
    pub fn take_back(&mut self, seq: u64, len: u64, retx: bool) -> TakenBack {
        let k = seq / self.mss;
        if !retx && seq + len == self.nxt && self.sb.back() == Some(&0) {
            self.sb.pop_back();
            self.sb_tx.pop_back();
            self.tx_count -= 1;
            self.pipe -= len;
            self.nxt = seq;
            return TakenBack::NewData;
        }
        let una_seg = self.una_seg();
        if k < una_seg || seq >= self.nxt {
            return TakenBack::Nothing;
        }
        let st = self.sb[(k - una_seg) as usize];
        if st & (SACKED | NOTIFIED) != 0 {
            return TakenBack::Nothing;
        }
        self.set_state(k, (st & !RETX) | LOST);
        self.retx_cursor = self.retx_cursor.min(k);
        TakenBack::Remarked { retx }
    }
}
