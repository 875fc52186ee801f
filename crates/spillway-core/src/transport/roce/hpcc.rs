//! HPCC's sender (HPCC §3.3, Algorithm 1) as the HPCC simulator's `UpdateRateHp` runs it
//! (`CC_MODE` 3, one rate for the whole path): each ACK's telemetry gives every hop's
//! utilization, the bytes it sent over the time between two records plus its standing
//! queue over a BDP; the most utilized hop feeds an average over the base RTT T; the
//! rate is the last committed one divided by (U / η), plus the additive step, or only
//! plus the step for up to maxStage rounds while U stays below η. Only the first ACK
//! after a round trip (one acknowledging beyond the `snd_nxt` of the last commit) commits
//! the rate and stage; the others react from the committed rate (`FAST_REACT`).

use super::config::HpccConfig;
use crate::packet::int::{IntHop, IntStack, MAX_HOPS};
use crate::units::Ps;

#[derive(Debug, Clone)]
pub struct Hpcc {
    cfg: HpccConfig,
    /// The first ACK only stores its records.
    started: bool,
    last_update_seq: u64,
    hops: [IntHop; MAX_HOPS],
    /// U, the averaged utilization (starts at 1, as the simulator's).
    pub(super) u: f64,
    /// The committed rate W_c / T, bit/s.
    pub(super) committed: f64,
    pub(super) stage: u32,
    cuts: u32,
}

impl Hpcc {
    pub fn new(cfg: HpccConfig, line: f64) -> Self {
        Hpcc {
            cfg,
            started: false,
            last_update_seq: 0,
            hops: [IntHop::default(); MAX_HOPS],
            u: 1.0,
            committed: line,
            stage: 0,
            cuts: 0,
        }
    }

    /// Committed multiplicative decreases (U at or above η) so far.
    pub fn cuts(&self) -> u32 {
        self.cuts
    }

    /// An ACK of everything below `ack_seq`, sent when the sender's next byte was
    /// `snd_nxt`, with the telemetry `int` of the data packet it acknowledges.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        ack_seq: u64,
        snd_nxt: u64,
        int: &IntStack,
        rate: &mut f64,
        line: f64,
        min_rate: f64,
        base_rtt: Ps,
    ) {
        if !self.started {
            self.started = true;
            self.last_update_seq = snd_nxt;
            if let Some(h) = int.hops() {
                self.hops[..h.len()].copy_from_slice(h);
            }
            return;
        }
        let fast = ack_seq <= self.last_update_seq;
        if fast && !self.cfg.fast_react {
            return;
        }
        if let Some(hops) = int.hops() {
            let t = base_rtt as f64 * 1e-12;
            let (mut max_u, mut dt, mut any) = (0.0f64, 0u64, false);
            for (i, cur) in hops.iter().enumerate() {
                let prev = self.hops[i];
                let tau = cur.ts.saturating_sub(prev.ts);
                if tau == 0 || cur.rate == 0 {
                    // No time between the two records: no rate to read from them.
                    continue;
                }
                any = true;
                let b = cur.rate as f64;
                let tx_rate =
                    cur.tx_bytes.wrapping_sub(prev.tx_bytes) as f64 * 8.0 / (tau as f64 * 1e-12);
                // The queue standing over both records, in BDPs of this hop's rate.
                let queue = cur.qlen.min(prev.qlen) as f64 * 8.0 / (b * t);
                let u = tx_rate / b + queue;
                if u > max_u {
                    max_u = u;
                    dt = tau;
                }
                self.hops[i] = *cur;
            }
            if any {
                let dt = dt.min(base_rtt) as f64;
                let tt = base_rtt as f64;
                self.u = (self.u * (tt - dt) + max_u * dt) / tt;
                let c = self.u / self.cfg.eta;
                let (new, stage) = if c >= 1.0 || self.stage >= self.cfg.max_stage {
                    (self.committed / c + self.cfg.rate_ai, 0)
                } else {
                    (self.committed + self.cfg.rate_ai, self.stage + 1)
                };
                let new = new.clamp(min_rate, line);
                *rate = new;
                if !fast {
                    if c >= 1.0 {
                        self.cuts += 1;
                    }
                    self.committed = new;
                    self.stage = stage;
                }
            }
        }
        if !fast && snd_nxt > self.last_update_seq {
            self.last_update_seq = snd_nxt;
        }
    }
}
