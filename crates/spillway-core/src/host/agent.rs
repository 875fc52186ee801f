//! Agents: per-host endpoints of protocols that belong to no flow. The host's
//! demultiplexer hands them the packets of their kinds; flows get the rest. The probe
//! responder is the first: a host's NIC answers every probe at once with a header-only
//! echo (pFabric §4.3, FastLane §3.4.2), whether or not the flow is still there, past
//! any server delay. Fastpass's FCP endpoint is the next.

use crate::packet::{Arena, PktKind};

/// The agents every host runs.
#[derive(Debug, Clone, Copy)]
pub enum Agent {
    /// Answers probes, at the priority class of acknowledgements.
    ProbeResponder { class: u8 },
}

impl Agent {
    /// The agent that takes packets of `kind`, if one does.
    #[inline(always)]
    pub fn for_kind(kind: PktKind, agents: &[Agent]) -> Option<&Agent> {
        match kind {
            PktKind::Probe => agents
                .iter()
                .find(|a| matches!(a, Agent::ProbeResponder { .. })),
            _ => None,
        }
    }

    /// `pkt` arrived for this agent: rewrites it into what goes back out of the host's
    /// NIC, if anything (a probe becomes its echo, addressed to the prober, at top
    /// transport priority).
    pub fn answer(&self, pkts: &mut Arena, pkt: u32) -> bool {
        match *self {
            Agent::ProbeResponder { class } => {
                let mut p = pkts.get(pkt).clone();
                p.kind = PktKind::ProbeAck;
                std::mem::swap(&mut p.src, &mut p.dst);
                p.prio = 0;
                p.class = class;
                p.hash = p.hash.rotate_left(17);
                pkts.replace(pkt, p);
                true
            }
        }
    }
}
