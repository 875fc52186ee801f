//! Link-layer flow control (DeTail §4.1, §5.2, §6.1): an input buffer that fills past XOFF
//! drain bytes pauses the upstream port, for the classes concerned; drained below XON,
//! it resumes them. `pfc` pauses per class (802.1Qbb: a class's drain bytes are its bytes
//! and those of the classes above it); `pause` pauses the whole link (802.3x: one class
//! for all traffic).
//!
//! The thresholds follow §6.1: a pause takes effect at most T after it is decided, T = 2
//! frame times (the frame on the wire here, then the one on the wire upstream) + 2
//! propagation delays + the response time (two 512-bit times), so H = T x rate bytes may
//! still arrive per paused class: XOFF = (buffer - N x H) / N with N classes paused
//! independently, XON = H.

use crate::packet::pause::RESPONSE_BYTES;
use crate::switch::port::CLASSES;
use crate::units::{serialization_ps, Ps, PS_PER_S};

/// `switch.flow_control`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowControl {
    None,
    /// 802.3x: one pause for all traffic (DeTail's FC environment).
    Pause,
    /// 802.1Qbb: per class.
    Pfc,
}

impl FlowControl {
    /// Classes paused independently: each needs its own headroom.
    pub fn classes(self) -> u64 {
        match self {
            FlowControl::Pfc => CLASSES as u64,
            _ => 1,
        }
    }
}

/// An input's pause thresholds, in drain bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    pub xoff: u64,
    pub xon: u64,
}

/// Bytes that can still arrive after a pause is decided (§6.1's H), on a link of `rate`
/// bits/s and `delay` propagation with frames of at most `frame` bytes.
pub fn headroom(rate: u64, delay: Ps, frame: u64) -> u64 {
    let t = 2 * serialization_ps(frame, rate) + 2 * delay + serialization_ps(RESPONSE_BYTES, rate);
    ((t as u128 * rate as u128).div_ceil(8 * PS_PER_S as u128)) as u64
}

/// §6.1's thresholds for an input of `buffer` bytes with `classes` classes paused
/// independently; `None` when the buffer cannot hold the headroom of every class.
pub fn thresholds(
    buffer: u64,
    classes: u64,
    rate: u64,
    delay: Ps,
    frame: u64,
) -> Option<Thresholds> {
    let h = headroom(rate, delay, frame);
    let reserved = classes.checked_mul(h)?;
    let xoff = buffer.checked_sub(reserved)? / classes;
    (xoff > h).then_some(Thresholds { xoff, xon: h })
}

/// The classes an input should pause or resume, given its drain bytes per class and the
/// classes it has paused: (newly paused, newly resumed).
pub fn decide(mode: FlowControl, drain: &[u64; CLASSES], paused: u8, t: Thresholds) -> (u8, u8) {
    match mode {
        FlowControl::None => (0, 0),
        FlowControl::Pause => {
            // The lowest class's drain bytes are every byte held.
            let all = drain[CLASSES - 1];
            if paused == 0 && all >= t.xoff {
                (u8::MAX, 0)
            } else if paused != 0 && all < t.xon {
                (0, u8::MAX)
            } else {
                (0, 0)
            }
        }
        FlowControl::Pfc => {
            let mut on = 0u8;
            let mut off = 0u8;
            for (k, &d) in drain.iter().enumerate() {
                let bit = 1u8 << k;
                if paused & bit == 0 && d >= t.xoff {
                    on |= bit;
                } else if paused & bit != 0 && d < t.xon {
                    off |= bit;
                }
            }
            (on, off)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DeTail §6.1 with its numbers: 1 GbE, 6.6 us links, 1530 B frames, 128 KB buffers,
    /// 8 classes: T = 38.7 us, H = 4,838 B, XOFF = 11,546 B, XON = H.
    #[test]
    fn thresholds_follow_the_papers_arithmetic() {
        let g = 1_000_000_000;
        assert_eq!(headroom(g, 6_600_000, 1530), 4_838);
        let t = thresholds(131_072, 8, g, 6_600_000, 1530).unwrap();
        assert_eq!(
            t,
            Thresholds {
                xoff: 11_546,
                xon: 4_838
            }
        );
        // 802.3x pause: one class, one headroom.
        let p = thresholds(131_072, 1, g, 6_600_000, 1530).unwrap();
        assert_eq!(
            p,
            Thresholds {
                xoff: 131_072 - 4_838,
                xon: 4_838
            }
        );
        // A buffer too small for eight headrooms has no thresholds.
        assert!(thresholds(8 * 4_838, 8, g, 6_600_000, 1530).is_none());
    }

    #[test]
    fn pfc_pauses_a_class_and_those_below_it() {
        let t = Thresholds { xoff: 100, xon: 40 };
        // Class 2's drain bytes reach XOFF: it and every lower class (3..7) pause.
        let drain = [10, 10, 100, 100, 100, 100, 100, 120];
        assert_eq!(decide(FlowControl::Pfc, &drain, 0, t), (0b1111_1100, 0));
        // Drained below XON from class 2 up: 2..6 resume, 7 stays (still 45).
        let drain = [0, 0, 30, 30, 30, 30, 39, 45];
        assert_eq!(
            decide(FlowControl::Pfc, &drain, 0b1111_1100, t),
            (0, 0b0111_1100)
        );
        // 802.3x looks at all bytes and pauses everything.
        assert_eq!(
            decide(FlowControl::Pause, &[0, 0, 0, 0, 0, 0, 0, 100], 0, t),
            (0xFF, 0)
        );
        assert_eq!(
            decide(FlowControl::Pause, &[0, 0, 0, 0, 0, 0, 0, 39], 0xFF, t),
            (0, 0xFF)
        );
    }
}
