//! An endpoint's demand: Poisson arrivals, or a trace read from a file. Either way a
//! stream of one-timeslot packets `(arrival, destination)` in time order.

use super::config::parse_duration;

/// Poisson arrivals of one-timeslot packets at `load` of the endpoint's link, to
/// destinations drawn uniformly among the other endpoints; deterministic from the seed.
#[derive(Clone, Debug)]
pub struct Poisson {
    rng: u64,
    /// Mean gap between arrivals, ps.
    mean_gap: f64,
    pub next_at: u64,
    /// No arrivals at or after this time (the demand window).
    pub until: u64,
    id: u32,
    n: u32,
}

impl Poisson {
    pub fn new(
        seed: u64,
        id: u32,
        n: u32,
        load: f64,
        timeslot: u64,
        start: u64,
        until: u64,
    ) -> Self {
        let mut p = Poisson {
            rng: crate::fcp::splitmix(seed ^ ((id as u64) << 32) ^ 0x5eed),
            mean_gap: timeslot as f64 / load.max(1e-9),
            next_at: start,
            until,
            id,
            n,
        };
        p.next_at = start + p.gap();
        p
    }

    fn uniform(&mut self) -> f64 {
        // xorshift64*: enough for a demand generator.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let x = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn gap(&mut self) -> u64 {
        (-self.uniform().ln() * self.mean_gap) as u64
    }

    /// The next arrival at or before `now`: its destination (and advance), if any.
    pub fn poll(&mut self, now: u64) -> Option<(u64, u32)> {
        if self.next_at > now || self.next_at >= self.until || self.n < 2 {
            return None;
        }
        let at = self.next_at;
        let k = ((self.uniform() * (self.n - 1) as f64) as u32).min(self.n - 2);
        let dst = if k >= self.id { k + 1 } else { k };
        self.next_at = at + self.gap().max(1);
        Some((at, dst))
    }

    pub fn deadline(&self) -> u64 {
        if self.next_at < self.until && self.n >= 2 {
            self.next_at
        } else {
            u64::MAX
        }
    }
}

/// Packets from a trace: `(arrival, destination)`, sorted by arrival.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    packets: Vec<(u64, u32)>,
    next: usize,
}

impl Trace {
    /// Parse a trace: one line per burst, `TIME DST [PACKETS]`: TIME a duration with its
    /// unit after the endpoint starts (`250us`, `1.5ms`), DST an endpoint id other than
    /// `id` (of `n`), PACKETS one-timeslot packets (default 1). Blank lines and `#`
    /// comments are skipped; times must not decrease. Arrivals are offset by `start`.
    pub fn parse(text: &str, id: u32, n: u32, start: u64) -> Result<Self, String> {
        let mut packets = Vec::new();
        let mut last = 0;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at = |m: String| format!("line {}: {m}: {raw:?}", i + 1);
            let f: Vec<&str> = line.split_whitespace().collect();
            if !(2..=3).contains(&f.len()) {
                return Err(at("expected TIME DST [PACKETS]".into()));
            }
            let t = parse_duration(f[0]).map_err(at)?;
            let dst: u32 = f[1]
                .parse()
                .map_err(|_| at(format!("destination {:?} is not an endpoint id", f[1])))?;
            if dst >= n || dst == id {
                return Err(at(format!(
                    "destination {dst}: an endpoint of 0..{n} other than this one ({id})"
                )));
            }
            let k: u32 = match f.get(2) {
                None => 1,
                Some(s) => s
                    .parse()
                    .ok()
                    .filter(|k| (1..=1_000_000).contains(k))
                    .ok_or_else(|| at(format!("packets {s:?}: 1..=1000000")))?,
            };
            if t < last {
                return Err(at("times must not decrease".into()));
            }
            last = t;
            packets.extend(std::iter::repeat_n((start + t, dst), k as usize));
        }
        Ok(Trace { packets, next: 0 })
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
}

/// Where an endpoint's packets come from.
#[derive(Clone, Debug)]
pub enum Demand {
    Poisson(Poisson),
    Trace(Trace),
}

impl Demand {
    /// The next packet that has arrived by `now`, if any (and advance).
    pub fn poll(&mut self, now: u64) -> Option<(u64, u32)> {
        match self {
            Demand::Poisson(p) => p.poll(now),
            Demand::Trace(t) => {
                let &(at, dst) = t.packets.get(t.next)?;
                if at > now {
                    return None;
                }
                t.next += 1;
                Some((at, dst))
            }
        }
    }

    /// When the next packet arrives (`u64::MAX`: never).
    pub fn deadline(&self) -> u64 {
        match self {
            Demand::Poisson(p) => p.deadline(),
            Demand::Trace(t) => t.packets.get(t.next).map_or(u64::MAX, |p| p.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_rate_and_destinations() {
        let slot = 100_000_000;
        let mut p = Poisson::new(7, 2, 5, 0.5, slot, 0, 10_000 * slot);
        let mut n = 0;
        let mut per = [0u32; 5];
        let mut last = 0;
        while let Some((at, dst)) = p.poll(u64::MAX) {
            assert!(at >= last && at < 10_000 * slot);
            last = at;
            n += 1;
            per[dst as usize] += 1;
        }
        // 5000 expected; Poisson sd ~71.
        assert!((4700..5300).contains(&n), "{n}");
        assert_eq!(per[2], 0, "never to itself");
        for (d, &c) in per.iter().enumerate() {
            if d != 2 {
                assert!((1000..1500).contains(&c), "{d}: {c}");
            }
        }
        // Same seed, same arrivals; another endpoint, others.
        let a: Vec<_> = std::iter::from_fn({
            let mut p = Poisson::new(7, 2, 5, 0.5, slot, 0, 100 * slot);
            move || p.poll(u64::MAX)
        })
        .collect();
        let b: Vec<_> = std::iter::from_fn({
            let mut p = Poisson::new(7, 2, 5, 0.5, slot, 0, 100 * slot);
            move || p.poll(u64::MAX)
        })
        .collect();
        let c: Vec<_> = std::iter::from_fn({
            let mut p = Poisson::new(7, 3, 5, 0.5, slot, 0, 100 * slot);
            move || p.poll(u64::MAX)
        })
        .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn nothing_before_its_time_or_after_the_window() {
        let slot = 1_000;
        let mut p = Poisson::new(1, 0, 2, 1.0, slot, 1_000_000, 2_000_000);
        assert_eq!(p.poll(999_999), None);
        while p.poll(u64::MAX).is_some() {}
        assert_eq!(p.deadline(), u64::MAX);
    }

    #[test]
    fn a_trace_in_order_and_refusals_by_line() {
        let text = "# time dst packets\n100us 1\n\n250us 2 3  # a burst\n250us 1\n";
        let mut d = Demand::Trace(Trace::parse(text, 0, 3, 1_000).unwrap());
        assert_eq!(d.deadline(), 1_000 + 100_000_000);
        assert_eq!(d.poll(1_000 + 99_999_999), None);
        let all: Vec<_> = std::iter::from_fn(|| d.poll(u64::MAX)).collect();
        let t = 1_000 + 250_000_000;
        assert_eq!(
            all,
            vec![(1_000 + 100_000_000, 1), (t, 2), (t, 2), (t, 2), (t, 1)]
        );
        assert_eq!(d.deadline(), u64::MAX);
        for (bad, says) in [
            ("100us", "line 1"),
            ("1ms 0", "other than this one"),
            ("1ms 3", "0..3"),
            ("1ms x", "not an endpoint id"),
            ("1ms 1 0", "packets"),
            ("2ms 1\n1ms 1", "line 2: times must not decrease"),
            ("soon 1", "line 1"),
        ] {
            let e = Trace::parse(bad, 0, 3, 0).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
