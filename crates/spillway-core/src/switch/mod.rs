//! Switches. A switch is a component: it owns its ports and its decisions, and the
//! engine hands it what arrives and what its ports' timers say. [`Switch`] is an enum
//! dispatched statically: the output-queued switch ([`oq`]) and the combined
//! input/output-queued one ([`cioq`], DeTail's), with its crossbar ([`crossbar`]), flow
//! control ([`flow_control`]) and deadlock detection ([`deadlock`]).
//!
//! A port's pipeline stages each have a module: [`discipline`] (who is served, who is
//! the victim: FIFO by class in [`port`], pFabric), [`marking`] (threshold, CoDel),
//! [`overflow`] (drop, FastLane, Source Quench, CP's cut) and [`forwarding`] (ECMP,
//! spraying, weighted routes).

pub mod cioq;
pub mod config;
pub mod crossbar;
pub mod cut_through;
pub mod deadlock;
pub mod discipline;
pub mod flow_control;
pub mod forwarding;
pub mod marking;
pub mod oq;
pub mod overflow;
pub mod port;

use crate::engine::context::Ctx;
use crate::fabric::Fabric;
use crate::rng::{component, Rng};
use cioq::CioqSwitch;
use oq::OqSwitch;
use port::{Port, PortReport};

pub use config::{BuildError, CioqConfig, Ingress, QueueKind, SwitchConfig, SwitchKind};

/// A switch, dispatched statically.
pub enum Switch {
    Oq(OqSwitch),
    /// Boxed: its crossbar state would make every switch of the vector (output-queued
    /// ones too) several times larger.
    Cioq(Box<CioqSwitch>),
}

impl Switch {
    /// Switch `node` of `fabric`, with its own random stream from `seed`.
    pub fn new(
        cfg: &SwitchConfig,
        fabric: &Fabric,
        node: u32,
        seed: u64,
        framing: u32,
    ) -> Result<Self, BuildError> {
        let rng = Rng::new(
            seed,
            component::SWITCH_BASE + (node - fabric.hosts()) as u64,
        );
        Ok(match &cfg.kind {
            SwitchKind::Oq => Switch::Oq(OqSwitch::new(cfg, fabric, node, rng, framing)),
            SwitchKind::Cioq(c) => Switch::Cioq(Box::new(CioqSwitch::new(
                cfg, c, fabric, node, rng, framing,
            )?)),
        })
    }

    #[inline(always)]
    pub fn on_arrive(&mut self, cx: &mut Ctx, node: u32, pkt: u32, in_port: u16, egress: u16) {
        match self {
            Switch::Oq(s) => s.on_arrive(cx, node, pkt, in_port, egress),
            Switch::Cioq(s) => s.on_arrive(cx, node, pkt, in_port, egress),
        }
    }

    #[inline(always)]
    pub fn on_port_free(&mut self, cx: &mut Ctx, node: u32, port: u32, time: u64) {
        match self {
            Switch::Oq(s) => s.on_port_free(cx, node, port, time),
            Switch::Cioq(s) => s.on_port_free(cx, node, port, time),
        }
    }

    /// Cut-through: the header of `pkt` has arrived by `in_port`.
    pub fn on_header(&mut self, cx: &mut Ctx, node: u32, pkt: u32, in_port: u16, egress: u16) {
        match self {
            Switch::Oq(s) => s.on_header(cx, node, pkt, in_port, egress),
            Switch::Cioq(_) => unreachable!("CIOQ switches do not cut through"),
        }
    }

    /// A combined input/output-queued switch's crossbar delivered `pkt`.
    pub fn on_crossed(&mut self, cx: &mut Ctx, node: u32, pkt: u32, input: u16, output: u16) {
        match self {
            Switch::Cioq(s) => s.on_crossed(cx, node, pkt, input, output),
            Switch::Oq(_) => unreachable!("an output-queued switch has no scheduled crossbar"),
        }
    }

    /// A pause frame received on `port` takes effect.
    pub fn on_pause_takes(&mut self, cx: &mut Ctx, node: u32, port: u32, pkt: u32) {
        match self {
            Switch::Cioq(s) => s.on_pause_takes(cx, node, port, pkt),
            Switch::Oq(_) => unreachable!("output-queued switches get no pause frames"),
        }
    }

    /// A switch of another process of a parallel run (a place holder: never sent to).
    pub fn absent() -> Switch {
        Switch::Oq(OqSwitch::absent())
    }

    /// The ports whose peer `cut` says is another process's send by the post.
    pub fn cut_links(&mut self, cut: impl Fn(u32) -> bool) {
        let ports = match self {
            Switch::Oq(s) => s.ports_mut(),
            Switch::Cioq(s) => s.ports_mut(),
        };
        for p in ports.iter_mut().filter(|p| cut(p.peer())) {
            p.set_remote();
        }
    }

    pub fn ports(&self) -> &[Port] {
        match self {
            Switch::Oq(s) => s.ports(),
            Switch::Cioq(s) => s.ports(),
        }
    }

    pub fn reports(&self, now: u64) -> Vec<PortReport> {
        match self {
            Switch::Oq(s) => s.reports(now).collect(),
            Switch::Cioq(s) => s.reports(now).collect(),
        }
    }
}
