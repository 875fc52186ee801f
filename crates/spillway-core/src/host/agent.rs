//! Agents: per-host endpoints of protocols that belong to no flow. The host's
//! demultiplexer hands them the packets of their kinds; flows get the rest. The probe
//! responder is the first: a host's NIC answers every probe at once with a header-only
//! echo (pFabric §4.3, FastLane §3.4.2), whether or not the flow is still there, past
//! any server delay. The ping responder answers the ping workload's requests (`[ping]`)
//! the same way, at the data's class. Fastpass's FCP endpoint is the next.

use crate::packet::{Arena, PktKind};

/// The agents every host runs.
#[derive(Debug, Clone, Copy)]
pub enum Agent {
    /// Answers probes, at the priority class of acknowledgements.
    ProbeResponder { class: u8 },
    /// Answers pings with a reply of the request's size, at the priority class of data
    /// (so that it waits behind data in FIFO queues, as an ICMP echo does).
    PingResponder { class: u8 },
}

impl Agent {
    /// The agent that takes packets of `kind`, if one does.
    #[inline(always)]
    pub fn for_kind(kind: PktKind, agents: &[Agent]) -> Option<&Agent> {
        match kind {
            PktKind::Probe => agents
                .iter()
                .find(|a| matches!(a, Agent::ProbeResponder { .. })),
            PktKind::Ping => agents
                .iter()
                .find(|a| matches!(a, Agent::PingResponder { .. })),
            _ => None,
        }
    }

    /// `pkt` arrived for this agent: rewrites it into what goes back out of the host's
    /// NIC, if anything (a probe becomes its echo, addressed to the prober, at top
    /// transport priority; a ping its reply, the same size, its sequence number and
    /// send time kept).
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
            Agent::PingResponder { class } => {
                let mut p = pkts.get(pkt).clone();
                p.kind = PktKind::PingReply;
                p.orig = PktKind::PingReply;
                std::mem::swap(&mut p.src, &mut p.dst);
                p.class = class;
                p.hash = p.hash.rotate_left(17);
                pkts.replace(pkt, p);
                true
            }
        }
    }
}
