//! What an offered load counts (`workload.load_on`). A load is a fraction of the
//! sending hosts' link capacity, turned into an arrival rate by the mean bytes a flow
//! (or query) brings: Spillway counts its payload (`payload`, the DCTCP and CP papers'
//! convention: the application's bytes); the pFabric group's simulator counts what its
//! packets put on the wire, headers and framing included (`wire`). At the same nominal
//! load, `wire` offers fewer flows: with 1460 B segments in 1500 B packets (no framing),
//! 1460/1500 of `payload`'s.

use super::cdf::Cdf;
use crate::packet::wire::{flow_wire_bytes, wire_bytes};

/// A load: the fraction of the sending hosts' links (`workload.load`,
/// `workload.background_load`), and what it counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Load {
    pub fraction: f64,
    pub on: LoadOn,
}

/// `workload.load_on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadOn {
    /// A flow weighs its payload bytes.
    #[default]
    Payload,
    /// A flow weighs the bytes its data packets take on the wire: segments of `mss`,
    /// each with `header` bytes of TCP/IP, framed (`topology.framing_bytes`, Ethernet's
    /// minimum frame) as they are sent (`packet::wire`). ACKs and retransmissions are
    /// not offered load.
    Wire { mss: u32, header: u32, framing: u32 },
}

impl LoadOn {
    /// What a flow of `size` payload bytes weighs.
    pub fn flow_bytes(&self, size: u64) -> f64 {
        match *self {
            LoadOn::Payload => size as f64,
            LoadOn::Wire {
                mss,
                header,
                framing,
            } => flow_wire_bytes(size, mss, header, framing) as f64,
        }
    }

    /// The mean weight of a flow whose size is drawn from `cdf` (as [`Cdf::mean`],
    /// over the piecewise-linear distribution, without the sample's rounding).
    pub fn cdf_mean(&self, cdf: &Cdf) -> f64 {
        match *self {
            // Exactly the payload mean, so rates are what they were before the key.
            LoadOn::Payload => cdf.mean(),
            LoadOn::Wire { .. } => cdf
                .pieces()
                .map(|(a, b, p)| p * self.mean_between(a, b))
                .sum(),
        }
    }

    /// The mean weight of a flow whose size is one of `sizes` (not empty), uniformly.
    pub fn sizes_mean(&self, sizes: &[u64]) -> f64 {
        sizes.iter().map(|&s| self.flow_bytes(s)).sum::<f64>() / sizes.len() as f64
    }

    /// The mean wire weight of a size uniform on [a, b] (a point if a == b).
    fn mean_between(&self, a: f64, b: f64) -> f64 {
        let LoadOn::Wire {
            mss,
            header,
            framing,
        } = *self
        else {
            return (a + b) / 2.0;
        };
        let w = WireCurve::new(mss, header, framing);
        if b > a {
            (w.integral(b) - w.integral(a)) / (b - a)
        } else {
            w.at(a)
        }
    }
}

/// A flow's wire bytes as a function of a real size x (what [`flow_wire_bytes`] is at
/// whole bytes): on ((k−1)·m, k·m], k − 1 full frames of W bytes and a last one of
/// L(r) = max(r, c) + h + f for the r = x − (k−1)·m bytes left, c being the payload
/// below which Ethernet pads the frame to its minimum (0 without framing).
struct WireCurve {
    m: f64,
    w_full: f64,
    /// h + f: a segment's header and framing.
    over: f64,
    c: f64,
}

impl WireCurve {
    fn new(mss: u32, header: u32, framing: u32) -> WireCurve {
        let over = (header + framing) as f64;
        WireCurve {
            m: mss as f64,
            w_full: wire_bytes(mss + header, framing) as f64,
            over,
            c: wire_bytes(header, framing) as f64 - over,
        }
    }

    /// ∫₀ʳ L(u) du for r in [0, m].
    fn last(&self, r: f64) -> f64 {
        let c = self.c;
        self.over * r + if r <= c { c * r } else { (r * r + c * c) / 2.0 }
    }

    /// ∫₀ˣ w(t) dt: K = ⌊x/m⌋ whole segments' spans and the remainder r:
    /// W·m·K(K−1)/2 + K·∫₀ᵐL + K·W·r + ∫₀ʳL.
    fn integral(&self, x: f64) -> f64 {
        let k = (x / self.m).floor();
        let r = x - k * self.m;
        self.w_full * self.m * k * (k - 1.0) / 2.0
            + k * self.last(self.m)
            + k * self.w_full * r
            + self.last(r)
    }

    /// w(x).
    fn at(&self, x: f64) -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        let k = (x / self.m).ceil();
        let r = x - (k - 1.0) * self.m;
        (k - 1.0) * self.w_full + r.max(self.c) + self.over
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    const WIRE: LoadOn = LoadOn::Wire {
        mss: 1460,
        header: 40,
        framing: 38,
    };

    #[test]
    fn the_curve_is_the_flows_wire_bytes_at_whole_bytes() {
        for framing in [38, 0] {
            let w = WireCurve::new(1460, 40, framing);
            for s in (1..5000).chain([14_600, 14_601, 1_000_000]) {
                assert_eq!(
                    w.at(s as f64),
                    flow_wire_bytes(s, 1460, 40, framing) as f64,
                    "{s} B, framing {framing}"
                );
            }
            // The integral's derivative is the curve (away from the jumps at k·m).
            for x in [3.0, 5.5, 100.0, 1459.0, 1461.5, 7000.25, 2e6] {
                let d = (w.integral(x + 1e-3) - w.integral(x - 1e-3)) / 2e-3;
                assert!(
                    (d - w.at(x)).abs() < 1e-3 * w.at(x),
                    "{x}: {d} vs {}",
                    w.at(x)
                );
            }
        }
    }

    /// The wire mean over a CDF is what the samples' wire bytes average to (the
    /// samples' rounding to whole bytes aside: within 0.2%, 400k samples of a
    /// distribution whose coefficient of variation is under 1).
    #[test]
    fn the_cdf_mean_on_the_wire_is_the_samples_mean() {
        let cdf = Cdf::parse("100 0\n3000 0.5\n20000 0.9\n60000 1").unwrap();
        let mut rng = Rng::new(3, 1);
        let n = 400_000;
        let m: f64 = (0..n)
            .map(|_| WIRE.flow_bytes(cdf.sample(&mut rng)))
            .sum::<f64>()
            / n as f64;
        let exact = WIRE.cdf_mean(&cdf);
        assert!((m / exact - 1.0).abs() < 0.002, "{m} vs {exact}");
        // And above the payload mean by about a frame's overhead per segment.
        assert!(exact > cdf.mean() * 1.04, "{exact} vs {}", cdf.mean());
        // Payload is the payload mean, bit for bit.
        assert_eq!(LoadOn::Payload.cdf_mean(&cdf), cdf.mean());
        // A one-point CDF weighs its one size's frames.
        let one = Cdf::parse("14600 1").unwrap();
        assert_eq!(WIRE.cdf_mean(&one), 10.0 * 1538.0);
    }
}
