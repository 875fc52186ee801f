//! DCTCP on the RoCE host, as the HPCC simulator's `CC_MODE` 8 runs it (`HandleAckDctcp`):
//! α from the fraction of ECN-echoing ACKs in each window, the rate cut by α/2 at the
//! first echo outside a cut's window (CWR until the ACKs pass the `snd_nxt` at the cut),
//! and raised by a fixed step once per window without a cut.

use super::config::RoceDctcpConfig;

#[derive(Debug, Clone)]
pub struct RoceDctcp {
    cfg: RoceDctcpConfig,
    pub(super) alpha: f64,
    ecn_count: u64,
    started: bool,
    last_update_seq: u64,
    batch: u64,
    cwr: bool,
    high_seq: u64,
    cuts: u32,
}

impl RoceDctcp {
    pub fn new(cfg: RoceDctcpConfig) -> Self {
        RoceDctcp {
            cfg,
            alpha: 1.0,
            ecn_count: 0,
            started: false,
            last_update_seq: 0,
            batch: 1,
            cwr: false,
            high_seq: 0,
            cuts: 0,
        }
    }

    pub fn cuts(&self) -> u32 {
        self.cuts
    }

    /// An ACK of everything below `ack_seq` with ECN echo `ece`, the sender's next byte
    /// being `snd_nxt`; `mtu` is a full packet's payload.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        ack_seq: u64,
        snd_nxt: u64,
        ece: bool,
        mtu: u64,
        rate: &mut f64,
        line: f64,
        min_rate: f64,
    ) {
        self.ecn_count += ece as u64;
        let mut new_batch = false;
        if ack_seq > self.last_update_seq {
            new_batch = true;
            if !self.started {
                self.started = true;
                self.batch = snd_nxt / mtu + 1;
            } else {
                let frac = (self.ecn_count as f64 / self.batch as f64).min(1.0);
                self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g * frac;
                self.ecn_count = 0;
                self.batch = snd_nxt.saturating_sub(ack_seq) / mtu + 1;
            }
            self.last_update_seq = snd_nxt;
        }
        if self.cwr && ack_seq > self.high_seq {
            self.cwr = false;
        }
        if ece && !self.cwr {
            *rate = (*rate * (1.0 - self.alpha / 2.0)).max(min_rate);
            self.cwr = true;
            self.high_seq = snd_nxt;
            self.cuts += 1;
        }
        if !self.cwr && new_batch {
            *rate = (*rate + self.cfg.rate_ai).min(line);
        }
    }
}
