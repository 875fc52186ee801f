//! RoCE's settings: one struct, read once from `[transport]` (config/transport.rs) and
//! handed to each connection. Every constant's source is in the key's documentation
//! (docs/reference.md) and in docs/mechanisms.md § RoCE.

use crate::units::Ps;

/// DCQCN's reaction point (the sender), as the HPCC simulator's `CC_MODE` 1 runs it (its
/// "Mellanox CX-4" model; ../shared/specs/rdma-congestion-control.md §1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DcqcnConfig {
    /// α's gain: α ← (1 − g)·α + g on a CNP-flagged period (DCQCN §3.1: 1/256).
    pub g: f64,
    /// α's period (`ALPHA_RESUME_INTERVAL`).
    pub alpha_interval: Ps,
    /// How often a pending CNP may cut the rate (`RATE_DECREASE_INTERVAL`).
    pub decrease_interval: Ps,
    /// The rate-increase timer (`RP_TIMER`).
    pub increase_interval: Ps,
    /// Increase events of fast recovery before additive increase (`FAST_RECOVERY_TIMES`).
    pub fast_recovery: u32,
    /// Additive and hyper increase steps of the target rate, bit/s.
    pub rate_ai: f64,
    pub rate_hai: f64,
    /// A cut sets the target rate to the current rate even right after another cut
    /// (`CLAMP_TARGET_RATE`).
    pub clamp_target: bool,
    /// The receiver flags at most one CNP per flow in this long (DCQCN §3.1's N = 50 us);
    /// 0: every ACK of a marked packet carries one, as the HPCC simulator does.
    pub cnp_interval: Ps,
}

/// HPCC's sender (HPCC §3.3, Algorithm 1; the simulator's `CC_MODE` 3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HpccConfig {
    /// Target utilization η.
    pub eta: f64,
    /// Additive-increase rounds before a multiplicative step (maxStage).
    pub max_stage: u32,
    /// W_AI as a rate: the additive step, bit/s.
    pub rate_ai: f64,
    /// React to every ACK from the last committed rate, not only once per round trip
    /// (the simulator's `FAST_REACT`).
    pub fast_react: bool,
}

/// DCTCP on the RoCE host: the HPCC simulator's `CC_MODE` 8, a rate (and window) cut by
/// α/2 once per window of marks, raised by a step per round trip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoceDctcpConfig {
    /// α's gain per round trip (DCTCP: 1/16).
    pub g: f64,
    /// The rate's step per round trip without marks, bit/s (`DCTCP_RATE_AI`).
    pub rate_ai: f64,
}

/// `transport.cc` with `transport.kind = "roce"`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RoceCc {
    /// Line rate; only PFC holds the fabric (DCQCN §2's baseline).
    None,
    Dcqcn(DcqcnConfig),
    Hpcc(HpccConfig),
    Dctcp(RoceDctcpConfig),
}

/// RoCE's settings (`[transport]` with `kind = "roce"`), read once.
#[derive(Debug, Clone)]
pub struct RoceConfig {
    pub mss: u32,
    /// IP bytes of a data packet's headers (IP, UDP, BTH, ICRC), telemetry aside.
    pub header_bytes: u32,
    /// Framing bytes per frame on the wire (`topology.framing_bytes`): the rate limiter
    /// spaces frames, not IP packets.
    pub framing: u32,
    /// The hosts' NIC rate, bit/s: every flow starts at it.
    pub line_rate: u64,
    /// T: the fabric's longest base round trip (HPCC's window is R·T; its utilization
    /// estimate averages over T).
    pub base_rtt: Ps,
    /// The window W = R·T bounds the bytes in flight besides the rate (HPCC, DCTCP).
    pub window: bool,
    /// No congestion control cuts below this rate, bit/s.
    pub min_rate: f64,
    /// Go-back-N from the first unacknowledged byte when nothing was acknowledged for so
    /// long (a fixed timeout, as a RoCE NIC's).
    pub timeout: Ps,
    /// The receiver NACKs the same missing byte again only after this long.
    pub nack_interval: Ps,
    pub cc: RoceCc,
    pub data_class: u8,
    pub ack_class: u8,
}

impl RoceConfig {
    /// The telemetry header (HPCC) on every data packet and ACK.
    pub fn int_bytes(&self) -> u32 {
        if matches!(self.cc, RoceCc::Hpcc(_)) {
            crate::packet::int::INT_HEADER_BYTES
        } else {
            0
        }
    }

    /// Do the switches mark ECN for this congestion control?
    pub fn ecn_capable(&self) -> bool {
        matches!(self.cc, RoceCc::Dcqcn(_) | RoceCc::Dctcp(_))
    }
}
