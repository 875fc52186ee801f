//! `[switch]`, as the switches take it (read once by config/switch.rs).

use super::discipline::pfabric::ServeOrder;
use super::flow_control::FlowControl;
use super::forwarding::Forwarding;
use super::marking::codel::{Codel, CodelConfig};
use super::marking::red::{Red, RedConfig};
use super::marking::AtDequeue;
use super::overflow::fastlane::FastLaneConfig;
use super::overflow::Overflow;
use crate::fabric::{Fabric, LinkEnd, SwitchTiming};
use crate::rng::Rng;
use crate::units::Ps;

/// `switch.queue`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    DropTail,
    PFabric,
}

/// `switch.kind`: where packets wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchKind {
    /// Output-queued: a packet goes to its egress port's queue as it arrives.
    Oq,
    /// Combined input/output-queued (DeTail §5.1): ingress queues, a scheduled crossbar,
    /// egress queues.
    Cioq(CioqConfig),
}

/// `switch.ingress`: how an input's packets wait for the crossbar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ingress {
    /// A virtual output queue per output and class: a blocked output stalls no other.
    Voq,
    /// One FIFO per class: the head blocks what is behind it.
    Fifo,
}

/// The combined input/output-queued switch's own settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CioqConfig {
    pub ingress: Ingress,
    /// Bytes each input holds (`switch.ingress_buffer`); `None`: the egress port's
    /// buffer on the same link.
    pub ingress_buffer: Option<u64>,
    pub flow_control: FlowControl,
    /// `switch.pfc_xoff` and `switch.pfc_xon` when given (else §6.1's, per link).
    pub xoff: Option<u64>,
    pub xon: Option<u64>,
    /// The largest frame on the wire (§6.1's T_frame): set from the transport.
    pub max_frame: u64,
    /// `switch.deadlock_after`: a cycle of ports paused this long stops the run.
    pub deadlock_after: Ps,
}

/// `[switch]`, read once (config/switch.rs).
#[derive(Debug, Clone)]
pub struct SwitchConfig {
    pub buffer: u64,
    /// Buffer of host-facing switch ports.
    pub edge_buffer: u64,
    /// Buffer of the top tier's ports.
    pub spine_buffer: u64,
    /// DCTCP-style marking threshold K, when `switch.ecn = "threshold"`.
    pub ecn_threshold: Option<u64>,
    /// `switch.ecn_threshold_by_rate`: (rate, K) pairs, sorted by rate.
    pub ecn_by_rate: Vec<(u64, u64)>,
    /// CP's extra allowance for payload-cut packets and PACKs.
    pub cut_extra: u64,
    pub forwarding: Forwarding,
    pub queue: QueueKind,
    /// `switch.serve_order`: which packet of the owning flow a pFabric queue serves
    /// (switch ports and, with pFabric, the hosts' NICs).
    pub serve_order: ServeOrder,
    pub overflow: Overflow,
    pub fastlane: FastLaneConfig,
    /// CoDel marking, when `switch.ecn = "codel"`.
    pub codel: Option<CodelConfig>,
    /// RED-style marking, when `switch.ecn = "red"`.
    pub red: Option<RedSpec>,
    /// Forwarding delay and crossbar speedup (the fabric's timing).
    pub timing: SwitchTiming,
    pub kind: SwitchKind,
    /// `switch.buffer_sharing = "dynamic"`: one pool a switch, shared by its ports.
    pub shared: Option<SharedBuffer>,
    /// Every port stamps HPCC's telemetry on the data packets that carry it (set when
    /// the flows run `transport.cc = "hpcc"`).
    pub telemetry: bool,
}

/// `switch.ecn = "red"`: the thresholds as given (None: the HPCC simulator's by the
/// port's rate, [`RedConfig::hpcc_default`]) and the probability at `kmax`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedSpec {
    pub kmin: Option<u64>,
    pub kmax: Option<u64>,
    pub pmax: f64,
}

/// A switch-wide buffer shared by its egress ports with Choudhury and Hahne's dynamic
/// thresholds ("Dynamic queue length thresholds for shared-memory packet switches",
/// IEEE/ACM ToN 1998), as merchant-silicon switches and the HPCC simulator's MMU share
/// theirs: a port may grow while its queue is below `alpha` times the pool's free bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SharedBuffer {
    /// `switch.shared_buffer`: the pool's bytes.
    pub pool: u64,
    /// `switch.dt_alpha`.
    pub alpha: f64,
}

impl SwitchConfig {
    /// The buffer of switch `node`'s port on `end`: facing a host, in the top tier, or
    /// between.
    pub fn port_buffer(&self, fabric: &Fabric, node: u32, end: &LinkEnd) -> u64 {
        if end.peer < fabric.hosts() {
            self.edge_buffer
        } else if fabric.top_tier().is_some_and(|t| node >= t) {
            self.spine_buffer
        } else {
            self.buffer
        }
    }

    /// Does any marker set CE (or, with Source Quench, quench)?
    pub fn marks_ecn(&self) -> bool {
        self.codel.is_some() || self.ecn_threshold.is_some() || self.red.is_some()
    }

    /// The marking threshold of the port on `end`: its rate's K, else the one K.
    pub fn port_ecn_threshold(&self, end: &LinkEnd) -> Option<u64> {
        let k = self.ecn_threshold?;
        Some(
            self.ecn_by_rate
                .iter()
                .find(|&&(rate, _)| rate == end.rate)
                .map_or(k, |&(_, by_rate)| by_rate),
        )
    }

    /// The RED thresholds of the port on `end`, when `switch.ecn = "red"`.
    pub fn port_red(&self, end: &LinkEnd) -> Option<RedConfig> {
        let spec = self.red?;
        let (kmin, kmax) = RedConfig::hpcc_default(end.rate);
        let kmin = spec.kmin.unwrap_or(kmin);
        // A rate below 62.5 kbit/s would make the defaults equal; keep them apart.
        let kmax = spec.kmax.unwrap_or(kmax).max(kmin + 1);
        Some(RedConfig {
            kmin,
            kmax,
            pmax: spec.pmax,
        })
    }

    /// The marker that decides at dequeue for port `port` (on `end`) of a switch whose
    /// random stream is `rng`: RED draws from a stream of the port's own.
    pub fn port_dequeue_marker(
        &self,
        end: &LinkEnd,
        port: usize,
        rng: &Rng,
    ) -> Option<Box<AtDequeue>> {
        if self.telemetry {
            // Refused beside a dequeue marker when the scenario is read.
            return Some(Box::new(AtDequeue::Telemetry));
        }
        if let Some(c) = self.codel {
            return Some(Box::new(AtDequeue::Codel(Codel::new(c))));
        }
        let red = self.port_red(end)?;
        let base = rng.clone().next_u64();
        Some(Box::new(AtDequeue::Red(Red::new(
            red,
            Rng::new(base, port as u64),
        ))))
    }

    /// `switch.flow_control`.
    pub fn flow_control(&self) -> FlowControl {
        match self.kind {
            SwitchKind::Cioq(c) => c.flow_control,
            SwitchKind::Oq => FlowControl::None,
        }
    }
}

/// A switch that cannot be built as configured: the scenario key at fault, its value,
/// and why (the engine reports it as the scenario's error).
#[derive(Debug)]
pub struct BuildError {
    pub key: &'static str,
    pub value: String,
    pub message: String,
}
