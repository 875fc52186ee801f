//! CP, transport half (CP §4.3–§4.4): a PACK names the bytes of a payload-cut packet,
//! exactly. The receiver answers a cut packet at once with them (`receiver.rs`: the
//! PACK option of its next ACK); the sender marks them lost and resends them at once,
//! entering recovery (one window cut) outside one, instead of waiting for duplicate
//! ACKs or a timeout. Segments already received, or lost and not yet resent, are left
//! alone, so a stale or duplicate PACK does nothing; a retransmission cut again is lost
//! again.

use super::scoreboard::Scoreboard;

/// The sender's PACKs.
#[derive(Debug, Default)]
pub struct Packs {
    received: u32,
    /// Those that named bytes already received or already lost.
    ignored: u32,
}

impl Packs {
    /// A PACK for bytes [l, r): marks their segments lost on `sb`. True when it named
    /// something new, so the sender should recover (if not already).
    #[inline]
    pub fn on_pack(&mut self, sb: &mut Scoreboard, l: u64, r: u64) -> bool {
        self.received += 1;
        if !sb.mark_cut(l, r) {
            self.ignored += 1;
            return false;
        }
        true
    }

    #[inline]
    pub fn received(&self) -> u32 {
        self.received
    }

    #[inline]
    pub fn ignored(&self) -> u32 {
        self.ignored
    }
}
