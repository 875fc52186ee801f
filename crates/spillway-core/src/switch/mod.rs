//! Switches. A switch is a component: it owns its ports and its decisions, and the
//! engine hands it what arrives and what its ports' timers say. [`Switch`] is an enum
//! dispatched statically; the output-queued switch ([`oq`]) is its one variant, and a
//! combined input/output-queued one (DeTail's) goes beside it.
//!
//! A port's pipeline stages each have a module: [`discipline`] (who is served, who is
//! the victim: FIFO by class in [`port`], pFabric), [`marking`] (threshold, CoDel),
//! [`overflow`] (drop, FastLane, Source Quench, CP's cut) and [`forwarding`] (ECMP,
//! spraying, weighted routes).

pub mod config;
pub mod crossbar;
pub mod discipline;
pub mod forwarding;
pub mod marking;
pub mod oq;
pub mod overflow;
pub mod port;

use crate::engine::context::Ctx;
use crate::fabric::Fabric;
use crate::rng::{component, Rng};
use oq::OqSwitch;
use port::{Port, PortReport};

pub use config::{QueueKind, SwitchConfig};

/// A switch, dispatched statically.
pub enum Switch {
    Oq(OqSwitch),
}

impl Switch {
    /// Switch `node` of `fabric`, with its own random stream from `seed`.
    pub fn new(cfg: &SwitchConfig, fabric: &Fabric, node: u32, seed: u64, framing: u32) -> Self {
        let rng = Rng::new(
            seed,
            component::SWITCH_BASE + (node - fabric.hosts()) as u64,
        );
        Switch::Oq(OqSwitch::new(cfg, fabric, node, rng, framing))
    }

    #[inline(always)]
    pub fn on_arrive(&mut self, cx: &mut Ctx, node: u32, pkt: u32, in_port: u16, egress: u16) {
        match self {
            Switch::Oq(s) => s.on_arrive(cx, node, pkt, in_port, egress),
        }
    }

    #[inline(always)]
    pub fn on_port_free(&mut self, cx: &mut Ctx, node: u32, port: u32, time: u64) {
        match self {
            Switch::Oq(s) => s.on_port_free(cx, node, port, time),
        }
    }

    #[inline(always)]
    pub fn prefetch_port(&self, port: u16) {
        match self {
            Switch::Oq(s) => s.prefetch_port(port),
        }
    }

    pub fn ports(&self) -> &[Port] {
        match self {
            Switch::Oq(s) => s.ports(),
        }
    }

    pub fn reports(&self, now: u64) -> Vec<PortReport> {
        match self {
            Switch::Oq(s) => s.reports(now).collect(),
        }
    }
}
