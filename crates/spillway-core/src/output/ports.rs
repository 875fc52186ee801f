//! Per-port statistics: one row per egress port, host NICs (nodes `0..hosts`) first,
//! then switches' ports (ports.parquet).

use super::queues::QueueRow;
use super::records;
use crate::switch::port::{DropReason, PortReport};

records! {
    /// Per-port statistics, one row per egress port.
    pub struct PortRecords {
        /// The node (hosts first, then switches).
        node: u32;
        /// The port's index at its node.
        port: u32;
        /// The node at the other end of the link.
        peer: u32;
        /// A switch's port (else a host's NIC).
        is_switch: bool;
        /// The port's buffer (`switch.buffer_sharing = "dynamic"`: the most its dynamic
        /// threshold lets it hold alone, alpha B / (1 + alpha) of the pool B).
        capacity_bytes: u64;
        /// Packets admitted.
        enqueued: u64;
        /// Packets dropped here, every reason but a notification's: `dropped_full +
        /// dropped_cut + dropped_displaced + dropped_least + dropped_ingress`.
        dropped: u64;
        /// Wire bytes of those.
        dropped_bytes: u64;
        /// Packets this port started on its link (pause frames aside).
        sent_packets: u64;
        /// Their wire bytes.
        sent_bytes: u64;
        /// Highest occupancy.
        max_bytes: u64;
        /// Time-averaged occupancy over the run.
        mean_bytes: f64;
        /// `run.queue_sample_interval`: the samples of this port's queued bytes (the bytes
        /// `max_bytes` is the highest of: waiting, not on the wire) taken, one every
        /// interval at every port; null when not sampling.
        queue_samples: u64, null = Max;
        /// Median of those samples: the ⌈0.5·n⌉-th smallest of the n (nearest rank), 0
        /// exact, others within 1/128 (a log-linear histogram: docs/outputs.md); null
        /// when not sampling or no sample was taken.
        queue_p50_bytes: u64, null = Max;
        /// 90th percentile of the samples (nearest rank, as `queue_p50_bytes`).
        queue_p90_bytes: u64, null = Max;
        /// 99th percentile of the samples.
        queue_p99_bytes: u64, null = Max;
        /// 99.9th percentile of the samples.
        queue_p999_bytes: u64, null = Max;
        /// The link's rate (as the node's clock makes it).
        rate_bps: u64;
        /// Packets the ECN marker marked (DCTCP's threshold, CoDel), or quenched with
        /// Source Quench.
        ecn_marked: u64;
        /// FastLane: notifications this port created from packets that had arrived
        /// through it and were dropped.
        notif_generated: u64;
        /// FastLane: notifications refused by the full notification buffer.
        notif_dropped: u64;
        /// FastLane: notifications transmitted.
        notif_sent: u64;
        /// FastLane: their wire bytes.
        notif_sent_bytes: u64;
        /// FastLane: of those, sent beyond the bandwidth cap on an otherwise idle link
        /// (work conservation).
        notif_sent_idle: u64;
        /// FastLane: peak notification buffer occupancy.
        notif_max_bytes: u64;
        /// FastLane: the notification buffer.
        notif_capacity_bytes: u64;
        /// CP: payload-cut packets made here.
        cut: u64;
        /// CP: of those, refused by the full extra allowance (= `dropped_cut`).
        cut_dropped: u64;
        /// Drops for want of room: the buffer full (tail drop), and for a packet that may
        /// use CP's allowance, the allowance too.
        dropped_full: u64;
        /// CP: packets cut to their header here that did not fit the allowance either.
        dropped_cut: u64;
        /// pFabric: queued packets pushed out by a more urgent arrival.
        dropped_displaced: u64;
        /// pFabric: arrivals that were the least urgent packet.
        dropped_least: u64;
        /// `switch.kind = "cioq"`: arrivals refused by this port's full input buffer.
        /// With flow control on, a sign the pause thresholds leave too little headroom.
        dropped_ingress: u64;
        /// `switch.kind = "cioq"`: the most bytes this port's input buffer held.
        ingress_max_bytes: u64;
        /// Flow control: pause (and resume) frames this port sent, for its input.
        pause_frames_sent: u64;
        /// Flow control: pause (and resume) frames that reached this port.
        pause_frames_received: u64;
        /// Flow control: time this port had some class paused.
        paused_ps: u64;
        /// Flow control: time class 0 was paused at this port (0: the highest).
        paused_ps_class0: u64;
        /// Flow control: time class 1 was paused at this port.
        paused_ps_class1: u64;
        /// Flow control: time class 2 was paused at this port.
        paused_ps_class2: u64;
        /// Flow control: time class 3 was paused at this port.
        paused_ps_class3: u64;
        /// Flow control: time class 4 was paused at this port.
        paused_ps_class4: u64;
        /// Flow control: time class 5 was paused at this port.
        paused_ps_class5: u64;
        /// Flow control: time class 6 was paused at this port.
        paused_ps_class6: u64;
        /// Flow control: time class 7 was paused at this port.
        paused_ps_class7: u64;
    }
}

impl PortRecords {
    /// Row `k`'s paused time per class, class 0 first.
    pub fn paused_by_class(&self, k: usize) -> [u64; 8] {
        [
            self.paused_ps_class0[k],
            self.paused_ps_class1[k],
            self.paused_ps_class2[k],
            self.paused_ps_class3[k],
            self.paused_ps_class4[k],
            self.paused_ps_class5[k],
            self.paused_ps_class6[k],
            self.paused_ps_class7[k],
        ]
    }

    /// Appends port `port` of `node`, its sampled queue as `q` says.
    pub fn push(&mut self, node: u32, port: u32, is_switch: bool, r: &PortReport, q: QueueRow) {
        let d = |reason: DropReason| r.drops[reason as usize];
        self.node.push(node);
        self.port.push(port);
        self.peer.push(r.peer);
        self.is_switch.push(is_switch);
        self.capacity_bytes.push(r.capacity);
        self.enqueued.push(r.enqueued);
        self.dropped.push(
            d(DropReason::Full)
                + d(DropReason::Cut)
                + d(DropReason::Displaced)
                + d(DropReason::Least)
                + d(DropReason::Ingress),
        );
        self.dropped_bytes.push(r.dropped_bytes);
        self.sent_packets.push(r.sent);
        self.sent_bytes.push(r.sent_bytes);
        self.max_bytes.push(r.max_bytes);
        self.mean_bytes.push(r.mean_bytes);
        self.queue_samples.push(q.samples);
        let [p50, p90, p99, p999] = q.percentiles;
        self.queue_p50_bytes.push(p50);
        self.queue_p90_bytes.push(p90);
        self.queue_p99_bytes.push(p99);
        self.queue_p999_bytes.push(p999);
        self.rate_bps.push(r.rate);
        self.ecn_marked.push(r.marked);
        self.notif_generated.push(r.notif.generated);
        self.notif_dropped.push(r.notif.dropped);
        self.notif_sent.push(r.notif.sent);
        self.notif_sent_bytes.push(r.notif.sent_bytes);
        self.notif_sent_idle.push(r.notif.sent_idle);
        self.notif_max_bytes.push(r.notif.max_bytes);
        self.notif_capacity_bytes.push(r.notif_capacity);
        self.cut.push(r.cut);
        self.cut_dropped.push(d(DropReason::Cut));
        self.dropped_full.push(d(DropReason::Full));
        self.dropped_cut.push(d(DropReason::Cut));
        self.dropped_displaced.push(d(DropReason::Displaced));
        self.dropped_least.push(d(DropReason::Least));
        self.dropped_ingress.push(d(DropReason::Ingress));
        self.ingress_max_bytes.push(r.ingress_max_bytes);
        self.pause_frames_sent.push(r.pause_sent);
        self.pause_frames_received.push(r.pause_received);
        self.paused_ps.push(r.paused_any);
        for (col, &t) in [
            &mut self.paused_ps_class0,
            &mut self.paused_ps_class1,
            &mut self.paused_ps_class2,
            &mut self.paused_ps_class3,
            &mut self.paused_ps_class4,
            &mut self.paused_ps_class5,
            &mut self.paused_ps_class6,
            &mut self.paused_ps_class7,
        ]
        .into_iter()
        .zip(&r.paused)
        {
            col.push(t);
        }
    }
}
