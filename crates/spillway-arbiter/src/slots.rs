//! The bitmap table of one batch of timeslots (Fastpass §3.1).
//!
//! One u64 word per source and per destination, one bit per timeslot of the batch: 1 =
//! free. The first timeslot a pair can use is `ffs(src & dst)`. Oversubscribed fabrics
//! (§3 footnote 2) add one word per rack uplink and downlink, whose bit clears when the
//! rack's capacity for that timeslot is used up.

use crate::demand::Flow;
use crate::fabric::{ConfigError, Fabric};

/// Most timeslots one batch can hold: the bits of a word.
pub const MAX_WIDTH: u32 = 64;

/// One allocated timeslot: `src` sends one MTU to `dst` in timeslot `first + slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    pub slot: u32,
    pub src: u32,
    pub dst: u32,
}

impl Grant {
    pub fn flow(&self) -> Flow {
        Flow {
            src: self.src,
            dst: self.dst,
        }
    }
}

/// A batch width the bitmap table can hold: `1..=MAX_WIDTH`.
pub(crate) fn check_width(width: u32) -> Result<(), ConfigError> {
    if (1..=MAX_WIDTH).contains(&width) {
        Ok(())
    } else {
        Err(ConfigError::Width(width))
    }
}

pub(crate) struct Slots {
    pub full: u64,
    pub src_free: Vec<u64>,
    pub dst_free: Vec<u64>,
    /// Grant index owning (endpoint, slot), valid only where the free bit is clear,
    /// so it never needs clearing.
    pub src_owner: Vec<u32>,
    pub dst_owner: Vec<u32>,
    /// Whether to maintain the owner tables (iterative mode only).
    pub own: bool,
    racks: bool,
    rack_of: Vec<u32>,
    up_cap: Vec<u16>,
    down_cap: Vec<u16>,
    up_free: Vec<u64>,
    down_free: Vec<u64>,
    up_used: Vec<u16>,
    down_used: Vec<u16>,
}

impl Slots {
    /// `width` checked by [`check_width`].
    pub fn new(fabric: &Fabric, width: u32) -> Self {
        debug_assert!(check_width(width).is_ok());
        let n = fabric.endpoints();
        let cap = |c: &u32| (*c).min(u16::MAX as u32) as u16;
        let (up, down) = fabric.caps();
        Slots {
            full: if width == 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            },
            src_free: vec![0; n],
            dst_free: vec![0; n],
            src_owner: vec![0; n * 64],
            dst_owner: vec![0; n * 64],
            own: false,
            racks: fabric.constrained(),
            rack_of: fabric.racks_of().to_vec(),
            up_cap: up.iter().map(cap).collect(),
            down_cap: down.iter().map(cap).collect(),
            up_free: vec![0; up.len()],
            down_free: vec![0; up.len()],
            up_used: vec![0; up.len() * 64],
            down_used: vec![0; up.len() * 64],
        }
    }

    pub fn racks(&self) -> bool {
        self.racks
    }

    /// Start a new batch: everything free.
    pub fn clear(&mut self) {
        let full = self.full;
        self.src_free.fill(full);
        self.dst_free.fill(full);
        if self.racks {
            for r in 0..self.up_cap.len() {
                // A rack with zero capacity never has a free uplink slot.
                self.up_free[r] = if self.up_cap[r] > 0 { full } else { 0 };
                self.down_free[r] = if self.down_cap[r] > 0 { full } else { 0 };
            }
            self.up_used.fill(0);
            self.down_used.fill(0);
        }
    }

    /// Timeslots of the batch in which `f` could be placed.
    #[inline(always)]
    pub fn avail<const RACKS: bool>(&self, f: Flow) -> u64 {
        let a = self.src_free[f.src as usize] & self.dst_free[f.dst as usize];
        if RACKS && a != 0 {
            let rs = self.rack_of[f.src as usize] as usize;
            let rd = self.rack_of[f.dst as usize] as usize;
            if rs != rd {
                return a & self.up_free[rs] & self.down_free[rd];
            }
        }
        a
    }

    #[inline(always)]
    pub fn place<const RACKS: bool>(&mut self, f: Flow, k: u32, grant: u32) {
        let (s, d) = (f.src as usize, f.dst as usize);
        let bit = 1u64 << k;
        debug_assert!(self.src_free[s] & self.dst_free[d] & bit != 0);
        self.src_free[s] &= !bit;
        self.dst_free[d] &= !bit;
        if self.own {
            self.src_owner[s * 64 + k as usize] = grant;
            self.dst_owner[d * 64 + k as usize] = grant;
        }
        if RACKS {
            let (rs, rd) = (self.rack_of[s] as usize, self.rack_of[d] as usize);
            if rs != rd {
                let u = &mut self.up_used[rs * 64 + k as usize];
                *u += 1;
                if *u >= self.up_cap[rs] {
                    self.up_free[rs] &= !bit;
                }
                let w = &mut self.down_used[rd * 64 + k as usize];
                *w += 1;
                if *w >= self.down_cap[rd] {
                    self.down_free[rd] &= !bit;
                }
            }
        }
    }

    /// Undo `place` (iterative mode moves grants within the batch).
    pub fn unplace<const RACKS: bool>(&mut self, f: Flow, k: u32) {
        let (s, d) = (f.src as usize, f.dst as usize);
        let bit = 1u64 << k;
        self.src_free[s] |= bit;
        self.dst_free[d] |= bit;
        if RACKS {
            let (rs, rd) = (self.rack_of[s] as usize, self.rack_of[d] as usize);
            if rs != rd {
                self.up_used[rs * 64 + k as usize] -= 1;
                self.up_free[rs] |= bit;
                self.down_used[rd * 64 + k as usize] -= 1;
                self.down_free[rd] |= bit;
            }
        }
    }
}
