//! Empirical flow-size distributions.
//!
//! Convention (the one ns-2's EmpiricalRandomVariable, pFabric and HPCC use): the CDF is
//! piecewise linear between its points. Sampling inverts it linearly; the mean used to
//! turn a load into an arrival rate is the mean of that piecewise-linear distribution,
//! Σ (v[i-1] + v[i]) / 2 · (c[i] − c[i-1]), plus v[0]·c[0] for mass at the first point.

use crate::rng::Rng;

#[derive(Debug, Clone)]
pub struct Cdf {
    /// (size in bytes, cumulative probability), sizes and probabilities non-decreasing,
    /// the last probability exactly 1.
    points: Vec<(f64, f64)>,
    mean: f64,
}

const WEBSEARCH: &str = include_str!("../../data/cdf/websearch.txt");
const DATAMINING: &str = include_str!("../../data/cdf/datamining.txt");
const ADITYA: &str = include_str!("../../data/cdf/aditya.txt");
// Meta's (Roy et al., "Inside the Social Network's (Datacenter) Network", SIGCOMM'15), as
// Parsimon's evaluation ships them (data/cdf/SOURCES.md).
const WEBSERVER: &str = include_str!("../../data/cdf/webserver.txt");
const CACHEFOLLOWER: &str = include_str!("../../data/cdf/cachefollower.txt");
const HADOOP: &str = include_str!("../../data/cdf/hadoop.txt");

/// Payload bytes per "packet" in the ns-2 format files.
const NS2_PACKET_BYTES: f64 = 1460.0;

impl Cdf {
    pub const BUILTINS: &'static [&'static str] = &[
        "websearch",
        "datamining",
        "aditya",
        "webserver",
        "cachefollower",
        "hadoop",
    ];

    pub fn builtin(name: &str) -> Option<Cdf> {
        let text = match name {
            "websearch" => WEBSEARCH,
            "datamining" => DATAMINING,
            "aditya" => ADITYA,
            "webserver" => WEBSERVER,
            "cachefollower" => CACHEFOLLOWER,
            "hadoop" => HADOOP,
            _ => return None,
        };
        Some(Cdf::parse(text).expect("built-in CDFs are valid"))
    }

    /// Parses any of the three formats public CDF files come in: A (ns-2, pFabric,
    /// YAPS) `<packets> 1 <cdf>`; B (HPCC) `<bytes> <percent>`; C (Homa) a first line
    /// with the mean, then `<bytes> <cdf>`.
    pub fn parse(text: &str) -> Result<Cdf, String> {
        let rows: Vec<Vec<f64>> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .enumerate()
            .map(|(i, l)| {
                l.split_whitespace()
                    .map(|t| {
                        t.parse::<f64>()
                            .map_err(|_| format!("CDF line {}: '{t}' is not a number", i + 1))
                    })
                    .collect::<Result<Vec<f64>, String>>()
            })
            .collect::<Result<_, _>>()?;
        if rows.is_empty() {
            return Err("the CDF is empty".into());
        }
        let (body, scale_size, scale_cdf) = match rows[0].len() {
            1 => (&rows[1..], 1.0, 1.0), // format C: mean line, then bytes + [0,1]
            3 => (&rows[..], NS2_PACKET_BYTES, 1.0),
            2 => {
                // Read only once every row has its columns (a short last row is refused
                // below, naming it).
                let last = rows.last().and_then(|r| r.get(1)).copied().unwrap_or(0.0);
                // Format B is in percent; a two-column file ending at 1 is a plain fraction.
                let pct = last > 1.0 + 1e-9;
                (&rows[..], 1.0, if pct { 0.01 } else { 1.0 })
            }
            n => {
                return Err(format!(
                    "CDF line 1 has {n} columns; expected 2 or 3 (see docs/workloads.md)"
                ))
            }
        };
        let mut points = Vec::with_capacity(body.len());
        for (i, r) in body.iter().enumerate() {
            let (v, c) = match r.len() {
                3 => (r[0], r[2]),
                2 => (r[0], r[1]),
                n => return Err(format!("CDF row {}: {n} columns, expected 2 or 3", i + 1)),
            };
            points.push((v * scale_size, c * scale_cdf));
        }
        Cdf::from_points(points)
    }

    pub fn from_points(points: Vec<(f64, f64)>) -> Result<Cdf, String> {
        if points.len() < 2 && points.first().map(|p| p.1) != Some(1.0) {
            return Err("a CDF needs at least two points".into());
        }
        let mut prev = (0.0, 0.0);
        for (i, &(v, c)) in points.iter().enumerate() {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!(
                    "CDF point {}: size {v} is not a non-negative number",
                    i + 1
                ));
            }
            if v > crate::units::MAX_SIZE as f64 {
                return Err(format!(
                    "CDF point {}: size {v} B is more than 1024GB (2^40 B), the largest size a scenario may give",
                    i + 1
                ));
            }
            if !(0.0..=1.0 + 1e-9).contains(&c) {
                return Err(format!(
                    "CDF point {}: probability {c} is outside [0, 1]",
                    i + 1
                ));
            }
            if i > 0 && (c < prev.1 || v < prev.0) {
                return Err(format!(
                    "the CDF is not monotone at point {} ({v}, {c}) after ({}, {})",
                    i + 1,
                    prev.0,
                    prev.1
                ));
            }
            prev = (v, c);
        }
        let last = points.last().unwrap().1;
        if (last - 1.0).abs() > 1e-6 {
            return Err(format!("the CDF does not end at 1 (it ends at {last})"));
        }
        let mut mean = points[0].0 * points[0].1;
        for w in points.windows(2) {
            mean += (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1);
        }
        if mean < 1.0 {
            return Err("the CDF's mean size is below 1 byte".into());
        }
        Ok(Cdf { points, mean })
    }

    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The distribution as uniform pieces: (from, to, probability), `from == to` for a
    /// point's mass (the first point's, or a vertical step), in order; the
    /// probabilities sum to 1. (Sampling rounds to whole bytes, at least 1, which this,
    /// like [`Cdf::mean`], leaves out.)
    pub fn pieces(&self) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        let (v0, c0) = self.points[0];
        std::iter::once((v0, v0, c0))
            .chain(
                self.points
                    .windows(2)
                    .map(|w| (w[0].0, w[1].0, w[1].1 - w[0].1)),
            )
            .filter(|&(_, _, p)| p > 0.0)
    }

    /// Inverse-transform sample, linear between points; at least 1 byte.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        self.quantile(rng.next_f64())
    }

    pub fn quantile(&self, u: f64) -> u64 {
        let p = &self.points;
        let i = p.partition_point(|&(_, c)| c < u);
        let v = if i == 0 {
            p[0].0
        } else if i >= p.len() {
            p[p.len() - 1].0
        } else {
            let (v0, c0) = p[i - 1];
            let (v1, c1) = p[i];
            if c1 > c0 {
                v0 + (u - c0) / (c1 - c0) * (v1 - v0)
            } else {
                v1
            }
        };
        (v.round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-column file whose last row has one column is refused, naming the row (it
    /// panicked reading the last row's second column; found by the CLI fuzz test).
    #[test]
    fn a_short_last_row_is_refused() {
        for text in ["1 0.5\n2\n", "1 1\n 0\n2 1 0.5\n10 1 0.9\n600 "] {
            let e = Cdf::parse(text).unwrap_err();
            assert!(e.contains("columns"), "{e}");
        }
    }

    #[test]
    fn builtin_means_match_the_published_ones() {
        // data/cdf/SOURCES.md: piecewise-linear means 1,665,831 / 7,470,236 / 195,357 B;
        // Meta's 91,343 / 609,883 / 568,755 B (computed when the files were collected).
        for (name, mean) in [
            ("websearch", 1_665_831.0),
            ("datamining", 7_470_236.0),
            ("aditya", 195_357.0),
            ("webserver", 91_343.0),
            ("cachefollower", 609_883.0),
            ("hadoop", 568_755.0),
        ] {
            let c = Cdf::builtin(name).unwrap();
            assert!((c.mean() - mean).abs() < 1.0, "{name}: {}", c.mean());
        }
    }

    #[test]
    fn sample_mean_converges() {
        let c = Cdf::builtin("aditya").unwrap();
        let mut rng = Rng::new(7, 1);
        let n = 400_000;
        let m: f64 = (0..n).map(|_| c.sample(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((m / c.mean() - 1.0).abs() < 0.03, "{m} vs {}", c.mean());
    }

    #[test]
    fn bad_cdfs_are_refused() {
        assert!(Cdf::parse("1 1 0\n2 1 0.5")
            .unwrap_err()
            .contains("does not end at 1"));
        assert!(Cdf::parse("1 1 0\n3 1 0.6\n2 1 0.5\n4 1 1")
            .unwrap_err()
            .contains("not monotone"));
        assert!(Cdf::parse("0 0\n10000 15\n30000000 100").is_ok());
    }
}
