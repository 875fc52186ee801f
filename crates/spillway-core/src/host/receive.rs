//! The receiving side of the hosts: a packet arrives at a host's NIC, the demultiplexer
//! hands it to an agent (a probe or a ping: answered by the NIC at once), a ping's reply
//! to the pinger, or anything else through the receive path (timing, interrupts, receive
//! offload, the server model) to its flow's connection; what the connection then wants
//! sent goes out, and a flow whose last byte arrived tells the applications.

use super::agent::Agent;
use super::flows::Ends;
use super::Hosts;
use crate::engine::context::Ctx;
use crate::engine::event::Ev;
use crate::engine::mailbox::Done;
use crate::packet::{Packet, PktKind, CARRIES_INT, IN_NETWORK};
use crate::transport::connection::{AckInfo, Data, Handled, Input, RoceAck};
use crate::units::Ps;

/// What [`Hosts::deliver`] reads of a packet.
struct Delivered {
    flow_slot: u32,
    flow_id: u64,
    kind: PktKind,
    orig: PktKind,
    ppl: bool,
    seq: u64,
    len: u32,
    ts: Ps,
    retx: bool,
    ce: bool,
    epoch: u16,
    ack: Option<AckInfo>,
}

impl Delivered {
    #[inline(always)]
    fn of(p: &Packet) -> Delivered {
        Delivered {
            flow_slot: p.flow_slot,
            flow_id: p.flow_id,
            kind: p.kind,
            orig: p.orig,
            ppl: p.ppl,
            seq: p.seq,
            len: p.len,
            ts: p.ts,
            retx: p.retx,
            ce: p.ce,
            epoch: p.epoch,
            ack: if p.kind == PktKind::Ack {
                Some(AckInfo {
                    cum: p.seq,
                    sack: p.sack,
                    nsack: p.nsack,
                    echo_ts: p.ts,
                    echo_retx: p.retx,
                    ece: p.ece,
                    ooo: p.ooo as u64,
                    pack: p.pack,
                    dsack: p.dsack,
                })
            } else {
                None
            },
        }
    }
}

impl Hosts {
    /// A packet has been fully received at `host`'s NIC.
    #[inline(always)]
    pub fn on_arrive(&mut self, cx: &mut Ctx, host: u32, pkt: u32) {
        let kind = cx.pkts.hot(pkt).kind;
        if kind == PktKind::Data {
            self.count_received(cx, pkt);
        }
        if kind == PktKind::Pause {
            self.pause_arrived(cx, host, pkt);
        } else if kind == PktKind::Fcp {
            self.with_fastpass(cx, |fp, cx| fp.on_packet(cx, host, pkt));
        } else if let Some(&agent) = Agent::for_kind(kind, &self.agents) {
            if agent.answer(&mut cx.pkts, pkt) {
                self.nic_send(cx, host, pkt);
            }
        } else if kind == PktKind::ProbeAck {
            // The echo is not queued behind the source's server either.
            self.deliver(cx, pkt);
        } else if kind == PktKind::PingReply {
            self.ping_reply(cx, pkt);
        } else if let Some(t) = self.rx.release_time(cx.now, host) {
            cx.push(t, Ev::HostRx { host, pkt });
        } else {
            self.on_host_rx(cx, host, pkt);
        }
    }

    /// `[ping]`: a reply reached its source's NIC; the RTT is taken there.
    #[inline(never)]
    fn ping_reply(&mut self, cx: &mut Ctx, pkt: u32) {
        if let Some(p) = &mut self.pinger {
            p.reply(cx.now, cx.pkts.get(pkt));
        }
        cx.pkts.free(pkt);
    }

    /// Turbo §5.2's dead-packet count: what hosts receive of the data they sent.
    #[inline(always)]
    fn count_received(&self, cx: &mut Ctx, pkt: u32) {
        let p = cx.pkts.get_mut(pkt);
        p.journey &= !IN_NETWORK;
        let payload = p.payload();
        let c = &mut cx.counters;
        c.host_received_data_bytes += payload;
        c.host_received_data_wire_bytes += cx.pkts.hot(pkt).wire as u64;
    }

    /// A received packet reaches `host`'s stack: delivered at once, or through the
    /// server model.
    pub fn on_host_rx(&mut self, cx: &mut Ctx, host: u32, pkt: u32) {
        if self.rx.admit(cx, host, pkt) {
            self.deliver(cx, pkt);
        }
    }

    /// `host`'s server has processed `pkt`.
    pub fn on_host_done(&mut self, cx: &mut Ctx, host: u32, pkt: u32) {
        self.deliver(cx, pkt);
        self.rx.done(cx, host);
    }

    /// `host.gro`: the flow's `GroFlush` event at `time`.
    pub fn on_gro_flush(&mut self, cx: &mut Ctx, slot: u32, time: Ps) {
        if let Some(f) = self.flows.slot(slot) {
            if f.gro.flush_due(time) {
                self.gro_flush(cx, slot);
            }
        }
    }

    /// `host.gro`: a data segment reaches the transport. One that continues the segment
    /// held from this interrupt's batch joins it (Linux merges up to 64 KB; a CE mark,
    /// which changes the IP header, ends a merge); one that cannot join sends the held one
    /// up first. The merged segment is acknowledged once the batch has been handled.
    #[inline(never)]
    fn gro_receive(&mut self, cx: &mut Ctx, slot: u32, d: Data) -> Handled {
        let now = cx.now;
        let Data { seq, len, ce, .. } = d;
        let f = self.flows.get(slot);
        // Linux merges only segments whose headers and options match: not a CE mark,
        // not a retransmission (a later timestamp), and not a duplicate.
        let mergeable = !ce && !d.retx && !f.conn.is_duplicate(seq);
        let joins = mergeable && f.gro.joins(now, seq, len);
        if !joins {
            self.gro_flush(cx, slot);
        }
        self.ack_held_if_ce_flips(cx, slot, ce);
        let f = self.flows.get(slot);
        let rx = f.conn.handle(now, Input::Data(d));
        if rx.ack_now && mergeable {
            if f.gro.hold(now, seq, len, joins) {
                // After every packet of the batch: they were queued before it.
                cx.push(now, Ev::GroFlush { slot });
            }
        } else if rx.ack_now {
            self.send_ack(cx, slot);
        }
        rx
    }

    /// RFC 8257 §3.2: before a segment whose CE mark differs from the segments a delayed
    /// ACK is held for, those are acknowledged with their own mark.
    #[inline]
    fn ack_held_if_ce_flips(&mut self, cx: &mut Ctx, slot: u32, ce: bool) {
        if self.flows.get(slot).conn.ce_flips(ce) {
            self.send_ack(cx, slot);
        }
    }

    /// `host.gro`: acknowledges the flow's segment held for merging, if any. (An ACK
    /// only clears the receiver's timer, so no timer needs arming after it.)
    fn gro_flush(&mut self, cx: &mut Ctx, slot: u32) {
        let Some(f) = self.flows.slot(slot) else {
            return;
        };
        if f.gro.held() {
            self.send_ack(cx, slot);
        }
    }

    /// A packet reached its destination host's transport.
    fn deliver(&mut self, cx: &mut Ctx, pkt: u32) {
        // Only the fields read below, not the whole packet: its slot may be reused by
        // the ACK this sends, so they are taken before the packet is freed.
        let p = Delivered::of(cx.pkts.get(pkt));
        if self.telemetry && cx.pkts.get(pkt).journey & CARRIES_INT != 0 {
            self.int_rx = *cx.pkts.int(pkt);
        }
        cx.pkts.free(pkt);
        let slot = p.flow_slot;
        if self.flows.live_mut(slot, p.flow_id).is_none() {
            cx.counters.stale_packets += 1;
            if p.kind == PktKind::Data && !p.ppl {
                // Its flow had every byte already (Turbo §5.2 counts it as a duplicate).
                cx.counters.duplicate_bytes += p.len as u64;
            }
            return;
        }
        let now = cx.now;
        match p.kind {
            PktKind::Data if p.ppl => {
                // CP §4.3: a payload-cut packet is answered at once by a PACK (after the
                // ACK of any segment held for merging, which came before it).
                if self.rx.gro() {
                    self.gro_flush(cx, slot);
                }
                let f = self.flows.get(slot);
                f.conn.handle(
                    now,
                    Input::Cut {
                        seq: p.seq,
                        len: p.len,
                    },
                );
                self.send_ack(cx, slot);
                self.arm_timer(cx, slot);
            }
            PktKind::Data => {
                let d = Data {
                    seq: p.seq,
                    len: p.len,
                    ts: p.ts,
                    retx: p.retx,
                    ce: p.ce,
                };
                let rx = if self.rx.gro() {
                    self.gro_receive(cx, slot, d)
                } else {
                    self.ack_held_if_ce_flips(cx, slot, d.ce);
                    let f = self.flows.get(slot);
                    let rx = f.conn.handle(now, Input::Data(d));
                    if rx.ack_now {
                        self.send_ack(cx, slot);
                    }
                    rx
                };
                if rx.completed {
                    let f = self.flows.get(slot);
                    f.finish = Some(now);
                    let (tag, dst) = (f.tag, f.dst);
                    if let Some(sh) = &mut self.share {
                        // Every process's copy of the workload hears of it, at the
                        // window's end (Hosts::post_dones), if it reacts to completions.
                        if self.apps.reacts() {
                            let lp = sh.lp;
                            sh.mine.push(Done {
                                time: now,
                                lp,
                                dst,
                                tag,
                            });
                        }
                    } else {
                        let mut nf = self.apps.flow_done(now, tag, dst);
                        for f in nf.drain(..) {
                            self.start_flow(cx, f);
                        }
                        self.apps.recycle(nf);
                        self.apps.schedule(cx);
                    }
                }
                self.arm_timer(cx, slot);
            }
            PktKind::Ack => {
                let ack = p.ack.expect("taken for every ACK");
                let mut segs = std::mem::take(&mut self.segs);
                let f = self.flows.get(slot);
                let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
                if self.roce {
                    let a = RoceAck {
                        cum: ack.cum,
                        nack: p.ppl,
                        ece: ack.ece,
                        int: self.telemetry.then_some(&self.int_rx),
                    };
                    f.conn.handle(now, Input::RoceAck(a));
                } else {
                    f.conn.handle(now, Input::Ack(&ack));
                }
                f.conn.poll_transmit(now, budget, &mut segs);
                let done = if f.ends == Ends::Sender {
                    f.conn.sender_done()
                } else {
                    f.conn.finished()
                };
                self.send_segments(cx, slot, &mut segs);
                self.segs = segs;
                if done {
                    self.record(cx, slot);
                    self.check_done(cx);
                } else {
                    self.arm_timer(cx, slot);
                }
            }
            PktKind::Notify if p.orig == PktKind::Ack => {
                // FastLane §3.4.1: a lost control packet is resent at once.
                cx.counters.notifications_delivered += 1;
                self.flows.get(slot).notified += 1;
                self.send_ack(cx, slot);
            }
            PktKind::Notify | PktKind::ProbeAck | PktKind::Quench => {
                let mut segs = std::mem::take(&mut self.segs);
                let f = self.flows.get(slot);
                let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
                let input = match p.kind {
                    PktKind::Notify => {
                        cx.counters.notifications_delivered += 1;
                        f.notified += 1;
                        if p.orig == PktKind::Probe {
                            Input::ProbeNotified
                        } else {
                            Input::Notified {
                                seq: p.seq,
                                epoch: p.epoch,
                            }
                        }
                    }
                    PktKind::ProbeAck => Input::ProbeEcho,
                    _ => {
                        cx.counters.quenches_delivered += 1;
                        Input::Quench
                    }
                };
                f.conn.handle(now, input);
                f.conn.poll_transmit(now, budget, &mut segs);
                self.send_segments(cx, slot, &mut segs);
                self.segs = segs;
                self.arm_timer(cx, slot);
            }
            PktKind::Probe => unreachable!("probes are answered by the NIC's agent"),
            PktKind::Pause => unreachable!("pause frames stop at the NIC"),
            PktKind::Fcp => unreachable!("FCP messages go to the Fastpass agents"),
            PktKind::Ping | PktKind::PingReply => unreachable!("pings stop at the NIC"),
        }
    }
}
