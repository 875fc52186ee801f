//! The sending side of the hosts: flows start, their connections' segments and ACKs
//! become packets and go through the queue discipline to the NIC, and what the NIC does
//! with them (starts them, drops them, refuses them: `host.nic_drop`) comes back to the
//! flows, along with their timers.

use super::flows::{Ends, Flow};
use super::qdisc::Qdisc;
use super::rx::Gro;
use super::Hosts;
use crate::engine::context::Ctx;
use crate::engine::event::Ev;
use crate::output::ideal::{ideal_fct, ideal_fct_cut_through};
use crate::packet::int::IntStack;
use crate::packet::wire::wire_bytes;
use crate::packet::{Packet, PktKind, IN_NETWORK};
use crate::rng::mix64;
use crate::switch::port::Sent;
use crate::transport::connection::{Input, Segment};
use crate::transport::Transport;
use crate::units::Ps;
use crate::workload::NewFlow;

impl Hosts {
    /// The workload hands a flow to its source's transport.
    pub(super) fn start_flow(&mut self, cx: &mut Ctx, f: NewFlow) {
        let id = self.flows.next_id();
        // In a parallel run, the ends among this process's hosts (share.rs).
        let ends = match &self.share {
            None => Ends::Both,
            Some(sh) => match (sh.owns(f.src), sh.owns(f.dst)) {
                (true, true) => Ends::Both,
                (true, false) => Ends::Sender,
                (false, true) => Ends::Receiver,
                (false, false) => return,
            },
        };
        let mss = self.transport.mss() as u64;
        let header = self.transport.header_bytes();
        let packets = f.size.div_ceil(mss);
        let last = f.size - (packets - 1) * mss;
        let path = cx.fabric.path(f.src, f.dst);
        let (full, last) = (
            wire_bytes(mss as u32 + header, self.framing),
            wire_bytes(last as u32 + header, self.framing),
        );
        let ideal = match cx.fabric.timing().cut_through {
            None => ideal_fct(&path, packets, full, last),
            Some(h) => ideal_fct_cut_through(&path, packets, full, last, h),
        };
        // The 5-tuple: addresses plus ephemeral ports, which we derive from the flow id.
        let hash = mix64(self.seed ^ ((f.src as u64) << 40) ^ ((f.dst as u64) << 20) ^ mix64(id));
        let slot = self.flows.insert(Flow {
            id,
            src: f.src,
            dst: f.dst,
            size: f.size,
            start: cx.now,
            ideal,
            class: f.class,
            priority: f.priority,
            query: f.query,
            tag: f.tag,
            hash,
            drops: 0,
            finish: None,
            timer_ev: None,
            gro: Gro::default(),
            in_nic: 0,
            nic_blocked: false,
            notified: 0,
            probes: 0,
            conn: Transport::new(
                &self.transport,
                f.size,
                f.priority.filter(|_| self.priorities),
            ),
            ends,
        });
        if let Some(sh) = &mut self.share {
            // Even a flow with both ends here: its packets may cross another process's
            // switch on the way (a core of a pod's that shares this process).
            sh.insert(id, slot);
            if ends == Ends::Receiver {
                // It waits for data; the sender's process counts the flow.
                return;
            }
        }
        let c = &mut cx.counters;
        c.flows_started += 1;
        c.bytes_offered += f.size;
        c.peak_active_flows = c.peak_active_flows.max(self.flows.active());
        let mut segs = std::mem::take(&mut self.segs);
        let f = self.flows.get(slot);
        let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
        f.conn.start();
        f.conn.poll_transmit(cx.now, budget, &mut segs);
        self.send_segments(cx, slot, &mut segs);
        self.segs = segs;
        self.arm_timer(cx, slot);
    }

    /// A segment of this flow left its NIC: let the window send into the freed slot.
    pub(super) fn poll_flow(&mut self, cx: &mut Ctx, slot: u32) {
        let now = cx.now;
        let Some(f) = self.flows.slot(slot) else {
            return;
        };
        let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
        if !f.conn.wants_poll(budget) {
            return;
        }
        let mut segs = std::mem::take(&mut self.segs);
        f.conn.handle(now, Input::NicFreed);
        f.conn.poll_transmit(now, budget, &mut segs);
        self.send_segments(cx, slot, &mut segs);
        self.segs = segs;
        self.arm_timer(cx, slot);
    }

    /// The segments a connection handed over become packets at its source's NIC.
    pub(super) fn send_segments(&mut self, cx: &mut Ctx, slot: u32, segs: &mut Vec<Segment>) {
        if segs.is_empty() {
            return;
        }
        let f = self.flows.get(slot);
        f.in_nic += segs.len() as u32;
        f.probes += segs.iter().filter(|s| s.probe).count() as u32;
        let (src, dst, id, hash) = (f.src, f.dst, f.id, f.hash);
        for (i, &s) in segs.iter().enumerate() {
            let kind = if s.probe {
                cx.counters.probes += 1;
                PktKind::Probe
            } else {
                PktKind::Data
            };
            let wire = wire_bytes(s.ip_bytes, self.framing);
            let mut p = Packet::new(kind, slot, id, src, dst, s.class, wire, hash);
            p.retx = s.retx;
            p.len = s.len;
            p.seq = s.seq;
            p.ts = s.ts;
            p.prio = s.prio;
            p.epoch = s.epoch;
            p.ect = s.ect;
            p.cpa = s.cpa;
            let pkt = cx.pkts.alloc(p);
            if self.telemetry && kind == PktKind::Data {
                // HPCC: an empty telemetry header, filled hop by hop.
                cx.pkts.set_int(pkt, IntStack::default());
            }
            self.nic_send(cx, src, pkt);
            if self.nic_refused {
                self.nic_refused = false;
                self.refused(cx, slot, src, &segs[i..]);
                break;
            }
            // Counted as it leaves: a segment its own NIC refused was never sent.
            cx.counters.retransmits += s.retx as u64;
        }
        segs.clear();
    }

    /// `host.nic_drop = "local"`: the host's NIC refused `segs[0]`, so neither it nor the
    /// rest of the burst leaves (Linux's tcp_write_xmit stops at the first refusal). The
    /// sender takes them back, and the flow waits for the NIC to start its next packet
    /// (a wake now would offer them to the still-full queue; Linux waits for its next
    /// ACK, or with nothing in flight for a probe timer).
    #[inline(never)]
    fn refused(&mut self, cx: &mut Ctx, slot: u32, host: u32, segs: &[Segment]) {
        let f = self.flows.get(slot);
        f.in_nic -= segs.len() as u32 - 1; // the first was counted out as it was dropped
        f.conn.handle(cx.now, Input::Refused(segs));
        if !f.nic_blocked {
            f.nic_blocked = true;
            self.nic_blocked[host as usize].push(slot);
        }
    }

    /// The receiver of the flow in `slot` acknowledges, now.
    pub(super) fn send_ack(&mut self, cx: &mut Ctx, slot: u32) {
        let f = self.flows.get(slot);
        // Any ACK covers a segment held for merging (`host.gro`).
        f.gro.release();
        let a = f.conn.poll_ack();
        let ack = a.info;
        let wire = wire_bytes(a.ip_bytes, self.framing);
        let mut pkt = Packet::new(
            PktKind::Ack,
            slot,
            f.id,
            f.dst,
            f.src,
            a.class,
            wire,
            f.hash.rotate_left(17),
        );
        pkt.retx = ack.echo_retx;
        pkt.nsack = ack.nsack;
        pkt.seq = ack.cum;
        pkt.ts = ack.echo_ts;
        pkt.sack = ack.sack;
        pkt.ece = ack.ece;
        pkt.ooo = ack.ooo.min(u32::MAX as u64) as u32;
        pkt.ppl = a.pack;
        pkt.pack = ack.pack;
        pkt.dsack = ack.dsack;
        let from = f.dst;
        let pkt = cx.pkts.alloc(pkt);
        if self.telemetry {
            // HPCC: the ACK carries the records of the data packet it answers.
            cx.pkts.set_int(pkt, self.int_rx);
        }
        self.nic_send(cx, from, pkt);
    }

    /// `[ping]`: the pinger's next request leaves its source now, as any packet does.
    pub fn send_ping(&mut self, cx: &mut Ctx) {
        let Some(pinger) = &mut self.pinger else {
            return;
        };
        // In a parallel run every process keeps the pinger's clock; its source's sends.
        if self.share.as_ref().is_some_and(|sh| !sh.owns(pinger.src())) {
            return;
        }
        let p = pinger.request(cx.now);
        let src = p.src;
        let pkt = cx.pkts.alloc(p);
        self.nic_send(cx, src, pkt);
    }

    /// `pkt` leaves `host` through its queue discipline and NIC.
    #[inline(always)]
    pub(super) fn nic_send(&mut self, cx: &mut Ctx, host: u32, pkt: u32) {
        if let Qdisc::Fastpass(fp) = &mut self.qdisc {
            fp.enqueue(cx, host, pkt);
            self.flush_fastpass(cx);
            return;
        }
        self.nic_offer(cx, host, pkt);
    }

    /// `pkt` joins `host`'s NIC queue: what the NIC drops and starts is accounted.
    #[inline(always)]
    pub(super) fn nic_offer(&mut self, cx: &mut Ctx, host: u32, pkt: u32) {
        let i = (host - self.nic_base) as usize;
        let sent = self.nics[i].offer(cx, host, pkt, &mut self.dropped);
        if !self.dropped.is_empty() {
            self.nic_dropped(cx);
        }
        if let Some(s) = sent {
            self.left_nic(cx, host, s);
        }
    }

    /// A pause frame from the switch reached `host`'s NIC: it takes effect after the
    /// response time (802.1Qbb: two 512-bit times).
    pub(super) fn pause_arrived(&mut self, cx: &mut Ctx, host: u32, pkt: u32) {
        let t = self.nic_mut(host).pause_arrived(cx.now);
        cx.push(
            t,
            Ev::PauseTakes {
                node: host,
                port: 0,
                pkt,
            },
        );
    }

    /// A pause frame's effect at `host`'s NIC: it pauses or resumes classes, and a
    /// resumed class's packet may start.
    pub fn on_pause_takes(&mut self, cx: &mut Ctx, host: u32, pkt: u32) {
        if let Some(s) = self.nic_mut(host).on_pause(cx, host, pkt) {
            self.left_nic(cx, host, s);
        }
    }

    /// `host`'s NIC woke at `time`: its next packet, if any, starts.
    #[inline(always)]
    pub fn on_nic_free(&mut self, cx: &mut Ctx, host: u32, time: Ps) {
        if let Some(s) = self.nic_mut(host).on_wake(cx, host, time) {
            self.left_nic(cx, host, s);
        }
    }

    /// Packets a NIC did not keep (its drops counted): their flows hear of it, and a
    /// sender whose own segment was refused (`host.nic_drop = "local"`) takes it back.
    #[inline(never)]
    fn nic_dropped(&mut self, cx: &mut Ctx) {
        for pkt in self.dropped.drain(..) {
            let p = cx.pkts.get(pkt);
            let kind = p.kind;
            if matches!(kind, PktKind::Data | PktKind::Probe) {
                if let Some(f) = self.flows.live_mut(p.flow_slot, p.flow_id) {
                    f.drops += 1;
                    f.in_nic -= 1;
                    if self.nic_drop_local && kind == PktKind::Data {
                        // `send_segments` hands the refused segments back to the sender.
                        self.nic_refused = true;
                    } else {
                        self.nic_wake.push(p.flow_slot);
                    }
                }
            }
            cx.pkts.free(pkt);
        }
    }

    /// A packet left `host`'s NIC queue: a data segment or probe makes room for its
    /// flow, and any packet leaving lets the flows a full NIC refused try again.
    #[inline(always)]
    fn left_nic(&mut self, cx: &mut Ctx, host: u32, s: Sent) {
        if matches!(s.kind, PktKind::Data | PktKind::Probe) {
            self.data_left_nic(cx, host, s.pkt);
        } else if self
            .nic_blocked
            .get(host as usize)
            .is_some_and(|b| !b.is_empty())
        {
            // Any packet leaving makes room: a flow whose whole burst was refused
            // while only ACKs were queued has nothing else to wake it.
            self.wake_nic_blocked(host);
        }
    }

    #[inline(never)]
    fn data_left_nic(&mut self, cx: &mut Ctx, host: u32, pkt: u32) {
        let p = cx.pkts.get_mut(pkt);
        let (slot, id) = (p.flow_slot, p.flow_id);
        if p.kind == PktKind::Data {
            // Turbo §5.2's dead-packet count: what hosts send their switch.
            p.journey |= IN_NETWORK;
            let payload = p.payload();
            let c = &mut cx.counters;
            c.host_sent_data_bytes += payload;
            c.host_sent_data_wire_bytes += cx.pkts.hot(pkt).wire as u64;
        }
        if let Some(f) = self.flows.live_mut(slot, id) {
            f.in_nic -= 1;
            self.nic_wake.push(slot);
        }
        self.wake_nic_blocked(host);
    }

    /// `host.nic_drop = "local"`: the flows whose segments the NIC refused may try again.
    fn wake_nic_blocked(&mut self, host: u32) {
        if let Some(blocked) = self.nic_blocked.get_mut(host as usize) {
            for s in blocked.drain(..) {
                if let Some(f) = self.flows.slot(s) {
                    f.nic_blocked = false;
                }
                self.nic_wake.push(s);
            }
        }
    }

    /// Schedules a timer event if this flow's earliest deadline is earlier than the one queued.
    ///
    /// Called after every packet a flow handles, and nearly always a no-op (a restarted
    /// retransmission timer is later than the event already queued): the check is
    /// inlined, only the push is a call (as one call, its register saves and restores
    /// were half of its instructions).
    #[inline(always)]
    pub(super) fn arm_timer(&mut self, cx: &mut Ctx, slot: u32) {
        let f = self.flows.get(slot);
        // Deadlines are at most rto_max after now, never Ps::MAX ("none").
        let want = f.conn.poll_timeout().unwrap_or(Ps::MAX);
        if want < f.timer_ev.unwrap_or(Ps::MAX) {
            Self::queue_timer(cx, f, slot, want);
        }
    }

    #[inline(never)]
    fn queue_timer(cx: &mut Ctx, f: &mut Flow, slot: u32, t: Ps) {
        f.timer_ev = Some(t);
        cx.push(t, Ev::Timer { slot });
    }

    /// The timer event of the flow in `slot`, queued for `at`.
    pub fn on_timer(&mut self, cx: &mut Ctx, slot: u32, at: Ps) {
        let now = cx.now;
        let Some(f) = self.flows.slot(slot) else {
            return;
        };
        if f.timer_ev != Some(at) {
            return; // superseded by an earlier timer event
        }
        f.timer_ev = None;
        let mut segs = std::mem::take(&mut self.segs);
        let before = f.conn.stats().timeouts;
        let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
        let ack_due = f.conn.handle(now, Input::Timeout).ack_now;
        f.conn.poll_transmit(now, budget, &mut segs);
        cx.counters.timeouts += (f.conn.stats().timeouts - before) as u64;
        self.send_segments(cx, slot, &mut segs);
        self.segs = segs;
        if ack_due {
            self.send_ack(cx, slot);
        }
        self.arm_timer(cx, slot);
    }
}
