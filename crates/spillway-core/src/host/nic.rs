//! A host's NIC: a port like a switch's (its buffer `host.nic_buffer`, and with pFabric's
//! queue it serves by priority too, pFabric §4.1), but no marker and no overflow action
//! beyond the drop. What leaves or is dropped here matters to the host's flows (TCP Small
//! Queues, local drops), so the NIC tells the host: the packets it dropped, the one it
//! started.

use crate::engine::context::Ctx;
use crate::fabric::LinkEnd;
use crate::packet::pause;
use crate::switch::discipline::pfabric::{Entry, PFabricQueue, ServeOrder};
use crate::switch::marking::threshold::Threshold;
use crate::switch::port::{DropReason, Offer, Port, PortReport, Sent};
use crate::units::Ps;

pub struct Nic {
    port: Port,
    /// pFabric victims of the current admission.
    evicted: Vec<Entry>,
}

impl Nic {
    /// The NIC at the host end of `link`; `buffer`: `host.nic_buffer` (unbounded when
    /// absent); `pfabric`: serve by priority, in this order.
    pub fn new(link: &LinkEnd, buffer: Option<u64>, pfabric: Option<ServeOrder>) -> Nic {
        let mut port = Port::new(link, buffer.unwrap_or(u64::MAX));
        port.install(
            pfabric.map(|order| Box::new(PFabricQueue::new(order))),
            None,
            None,
            Threshold::OFF,
        );
        Nic {
            port,
            evicted: Vec::new(),
        }
    }

    /// Offers `pkt` of host `host`. The packets it drops (pFabric's victims, then the
    /// offered one if it does not fit) go to `dropped`, counted and still allocated,
    /// for the host to account; the packet the link started, if any, is returned.
    #[inline(always)]
    pub fn offer(
        &mut self,
        cx: &mut Ctx,
        host: u32,
        pkt: u32,
        dropped: &mut Vec<u32>,
    ) -> Option<Sent> {
        match self.port.offer(cx, host, 0, pkt) {
            Offer::Sent(kind) => Some(Sent {
                pkt,
                kind,
                mark: false,
            }),
            Offer::Queued => None,
            Offer::Slow => self.offer_slow(cx, host, pkt, dropped),
        }
    }

    #[inline(never)]
    fn offer_slow(
        &mut self,
        cx: &mut Ctx,
        host: u32,
        pkt: u32,
        dropped: &mut Vec<u32>,
    ) -> Option<Sent> {
        let p = &mut self.port;
        if !p.has_pfabric() {
            // A FIFO NIC, maybe with a class paused.
            if p.enqueue(cx.now, pkt, &mut cx.pkts.hot, 0) {
                return p.queued(cx, host, 0);
            }
            p.count_drop(cx, DropReason::Full, pkt);
            dropped.push(pkt);
            return None;
        }
        let e = Entry::of(&cx.pkts, pkt, u16::MAX);
        let admitted = p.enqueue_pfabric(cx, e, &mut self.evicted);
        dropped.extend(self.evicted.drain(..).map(|v| v.pkt));
        if !admitted {
            dropped.push(pkt);
            return None;
        }
        p.kick(cx, host, 0)
    }

    /// Obey pause frames from the switch (`switch.flow_control`).
    pub fn obey_pauses(&mut self) {
        self.port.enable_flow_control();
    }

    /// A pause frame has arrived: counted, and when it takes effect (802.1Qbb: two
    /// 512-bit times later).
    pub fn pause_arrived(&mut self, now: Ps) -> Ps {
        self.port.count_pause_received();
        now + self.port.serialization(pause::RESPONSE_BYTES)
    }

    /// Pause frame `pkt` takes effect: the NIC pauses or resumes its classes; a
    /// resumed class's packet starts if the link is free.
    pub fn on_pause(&mut self, cx: &mut Ctx, host: u32, pkt: u32) -> Option<Sent> {
        let (classes, on) = pause::read(cx.pkts.get(pkt));
        cx.pkts.free(pkt);
        let p = &mut self.port;
        let before = p.paused();
        p.set_paused(cx.now, pause::apply(before, classes, on));
        if before & !p.paused() != 0 {
            return p.kick(cx, host, 0);
        }
        None
    }

    /// The NIC's wake-up at `time`: the next packet, if any, starts.
    #[inline(always)]
    pub fn on_wake(&mut self, cx: &mut Ctx, host: u32, time: Ps) -> Option<Sent> {
        self.port.on_wake(cx, host, 0, time)
    }

    #[inline(always)]
    pub fn prefetch(&self) {
        self.port.prefetch();
    }

    pub fn port_mut(&mut self) -> &mut Port {
        &mut self.port
    }

    pub fn port(&self) -> &Port {
        &self.port
    }

    pub fn report(&self, now: Ps) -> PortReport {
        self.port.report(now)
    }
}
