//! The HPCC simulator's `fct.txt` (`run.fct_txt`): what its readers need from a run, a
//! line a finished flow.
//!
//! Two variants, as read from their sources (../shared/specs/hpcc-formats-and-parsimon.md):
//! - `hpcc`, alibaba-edu's `scratch/third.cc` (`qp_finish`): `sip dip sport dport size
//!   start_ns fct_ns standalone_fct_ns`, written when the last ACK reaches the sender, so
//!   `fct_ns` here is the sender's end (`acked_ps`). Its standalone FCT is
//!   `2 x prop + sum over hops of (payload x 8 / rate) + total x 8 / bottleneck`, with
//!   `total = size + packets x header` (one MTU's serialization per hop and the ACK's
//!   return propagation, on top of the bytes at the bottleneck).
//! - `hpcc9`, kwzhao's fork that Parsimon and m3 run: the flow id first, written when the
//!   receiver holds the last byte (`fct_ps`); standalone is Parsimon's `ideal_fct`:
//!   one-way propagation, the first packet serialized at every hop, the rest at the
//!   bottleneck, a header per packet.
//!
//! Both are integer nanoseconds, each term truncated as those programs do. The payload and
//! header are this run's (`transport.mss`, and the header and framing bytes a packet adds
//! on the wire), not HPCC's 1000 and 48: a flow alone then takes its standalone time.
//! Ours differs from our own `ideal_fct_ps` in that: the ideal pipelines every packet
//! through every hop at its own size (the last packet may be short), adds forwarding
//! delays and crossbars, and ends at the receiver.

use std::io::{self, Write};
use std::path::Path;

use crate::units::{Ps, PS_PER_NS};

/// `run.fct_txt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FctTxt {
    Hpcc,
    Hpcc9,
}

/// The IPv4 address the HPCC simulator gives node `id` (`0x0b000001 + (id / 256) << 16
/// + (id % 256) << 8`), read back as `(ip >> 8) & 0xffff`.
pub fn node_ip(id: u32) -> u32 {
    0x0b00_0001 + ((id / 256) << 16) + ((id % 256) << 8)
}

/// Nanoseconds to send `bytes` at `rate` bit/s, truncated.
fn tx_ns(bytes: u64, rate: u64) -> u64 {
    (bytes as u128 * 8 * 1_000_000_000 / rate as u128) as u64
}

/// A flow of `size` bytes alone on `hops` ((rate, propagation) each, host to host), with
/// `payload` bytes a packet and `header` bytes each adds: the standalone FCT in ns.
pub fn standalone_ns(
    variant: FctTxt,
    hops: &[(u64, Ps)],
    size: u64,
    payload: u64,
    header: u64,
) -> u64 {
    let prop_ns: u64 = hops.iter().map(|&(_, d)| d / PS_PER_NS).sum();
    let bottleneck = hops.iter().map(|&(r, _)| r).min().unwrap_or(1).max(1);
    match variant {
        FctTxt::Hpcc => {
            let tx: u64 = hops.iter().map(|&(r, _)| tx_ns(payload, r)).sum();
            let packets = size.saturating_sub(1) / payload + 1;
            2 * prop_ns + tx + tx_ns(size + packets * header, bottleneck)
        }
        FctTxt::Hpcc9 => {
            let head = size.min(payload);
            let first = if head > 0 { head + header } else { 0 };
            let head_ns: u64 = hops.iter().map(|&(r, _)| tx_ns(first, r)).sum();
            let rest = size - head;
            let (full, partial) = (rest / payload, rest % payload);
            let partial = if partial > 0 { partial + header } else { 0 };
            let rest_ns = full * tx_ns(payload + header, bottleneck) + tx_ns(partial, bottleneck);
            prop_ns + head_ns + rest_ns
        }
    }
}

/// Collects a run's finished flows and writes them as fct.txt at the end (the source
/// ports number each (src, dst) pair's flows from 10000 in the order they started, as
/// HPCC's `third.cc` does, which needs them all).
pub struct FctWriter {
    variant: FctTxt,
    payload: u64,
    header: u64,
    /// The topology's id of each host (a graph's file ids), else the host index.
    ids: Option<Vec<u32>>,
    rows: Vec<Row>,
}

struct Row {
    id: u64,
    src: u32,
    dst: u32,
    size: u64,
    start: Ps,
    /// The flow's end as this variant times it.
    end: Ps,
}

impl FctWriter {
    pub fn new(variant: FctTxt, payload: u64, header: u64, ids: Option<Vec<u32>>) -> FctWriter {
        FctWriter {
            variant,
            payload: payload.max(1),
            header,
            ids,
            rows: Vec::new(),
        }
    }

    /// Records as a run hands them out: the finished ones are kept (fct.txt has no line
    /// for a flow that did not finish).
    pub fn add(&mut self, r: &super::flows::FlowRecords) {
        let ends = match self.variant {
            FctTxt::Hpcc => &r.acked_ps,
            FctTxt::Hpcc9 => &r.finish_ps,
        };
        for (i, &end) in ends.iter().enumerate() {
            if end == u64::MAX {
                continue;
            }
            self.rows.push(Row {
                id: r.flow_id[i],
                src: r.src[i],
                dst: r.dst[i],
                size: r.size_bytes[i],
                start: r.start_ps[i],
                end,
            });
        }
    }

    /// The file, a line a finished flow in the order they finished.
    pub fn render(&self, fabric: &crate::fabric::Fabric) -> String {
        let mut out = Vec::with_capacity(self.rows.len() * 64);
        self.write(fabric, &mut out).expect("writing to memory");
        String::from_utf8(out).expect("fct.txt is ASCII")
    }

    /// `render`, written to `w` a line at a time (a 5 s run at 6,144 hosts has 29 M
    /// lines: 1.8 GB held as one string).
    pub fn write(&self, fabric: &crate::fabric::Fabric, w: &mut impl Write) -> io::Result<()> {
        // Source ports: per pair, by start order (flow ids count starts).
        let mut order: Vec<u32> = (0..self.rows.len() as u32).collect();
        let row = |i: u32| &self.rows[i as usize];
        order.sort_unstable_by_key(|&i| (row(i).src, row(i).dst, row(i).id));
        let mut sport = vec![0u32; self.rows.len()];
        for (k, &i) in order.iter().enumerate() {
            let first = k == 0 || {
                let p = row(order[k - 1]);
                (p.src, p.dst) != (row(i).src, row(i).dst)
            };
            sport[i as usize] = if first {
                10_000
            } else {
                sport[order[k - 1] as usize] + 1
            };
        }
        drop(order);
        // One path walk a line: a cache by pair would hold millions of paths.
        let mut hops = Vec::with_capacity(8);
        for (i, r) in self.rows.iter().enumerate() {
            fabric.links_between_into(r.src, r.dst, &mut hops);
            let standalone = standalone_ns(self.variant, &hops, r.size, self.payload, self.header);
            let id = |h: u32| self.ids.as_ref().map_or(h, |ids| ids[h as usize]);
            let (start, fct) = (r.start / PS_PER_NS, (r.end - r.start) / PS_PER_NS);
            let (sip, dip) = (node_ip(id(r.src)), node_ip(id(r.dst)));
            if self.variant == FctTxt::Hpcc9 {
                write!(w, "{} ", r.id)?;
            }
            writeln!(
                w,
                "{sip:08x} {dip:08x} {} 100 {} {start} {fct} {standalone}",
                sport[i], r.size
            )?;
        }
        Ok(())
    }

    /// `write` to the file at `path`.
    pub fn write_file(&self, fabric: &crate::fabric::Fabric, path: &Path) -> io::Result<()> {
        let mut w = io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
        self.write(fabric, &mut w)?;
        w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ips_are_hpccs() {
        assert_eq!(node_ip(0), 0x0b00_0001);
        assert_eq!(node_ip(1), 0x0b00_0101);
        assert_eq!(node_ip(300), 0x0b01_2c01);
        for id in [0, 7, 255, 256, 6143, 65535] {
            assert_eq!((node_ip(id) >> 8) & 0xffff, id);
        }
    }

    #[test]
    fn standalone_by_hand() {
        // Two 10 Gbit/s links of 1 us (host, switch, host); 1000-byte payloads, 48-byte
        // headers, 3000 bytes: 3 packets.
        let hops = [(10_000_000_000, 1_000_000), (10_000_000_000, 1_000_000)];
        // alibaba: 2 x 2000 + 2 x 800 + (3000 + 3 x 48) x 0.8 = 4000 + 1600 + 2515 (2515.2).
        assert_eq!(
            standalone_ns(FctTxt::Hpcc, &hops, 3000, 1000, 48),
            4000 + 1600 + 2515
        );
        // Parsimon: 2000 + 2 x 1048 x 0.8 (838 each) + 2 x 838 = 2000 + 1676 + 1676.
        assert_eq!(
            standalone_ns(FctTxt::Hpcc9, &hops, 3000, 1000, 48),
            2000 + 1676 + 1676
        );
        // A partial last packet: 2500 bytes = 1000 + 1000 + 500 (+48 each).
        assert_eq!(
            standalone_ns(FctTxt::Hpcc9, &hops, 2500, 1000, 48),
            2000 + 1676 + 838 + 438
        );
        // A slower middle: the bottleneck sets the rest, every hop the first packet.
        let slow = [
            (10_000_000_000, 1_000_000),
            (1_000_000_000, 0),
            (10_000_000_000, 1_000_000),
        ];
        assert_eq!(
            standalone_ns(FctTxt::Hpcc9, &slow, 2000, 1000, 48),
            2000 + (838 + 8384 + 838) + 8384
        );
    }
}
