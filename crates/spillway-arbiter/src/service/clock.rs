//! Wall clock to the state machines' picoseconds, precise sleeps, and SIGTERM.
//!
//! Every process on the machine reads the same `CLOCK_REALTIME` (`SystemTime`), so
//! arbiters and endpoints agree on when timeslot t starts (`origin + t x timeslot`)
//! without exchanging anything: on one machine that is the paper's PTP (§6.3) for free.
//! u64 picoseconds cover 213 days, so time counts from an origin, not from 1970.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Unix time in nanoseconds.
pub fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Without a configured origin: the current Unix time rounded down to 2^20 s (about 12
/// days). Processes started in the same window agree; the demo and tests always set it.
pub fn default_origin() -> u64 {
    const WINDOW_NS: u64 = (1 << 20) * 1_000_000_000;
    unix_ns() / WINDOW_NS * WINDOW_NS
}

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub origin_unix_ns: u64,
}

impl Clock {
    /// Picoseconds since the origin (0 before it).
    pub fn now(&self) -> u64 {
        unix_ns()
            .saturating_sub(self.origin_unix_ns)
            .saturating_mul(1000)
    }
    /// The Unix ns of `ps` since the origin.
    pub fn to_unix_ns(&self, ps: u64) -> u64 {
        self.origin_unix_ns + ps / 1000
    }
}

/// Lower this thread's timer slack to 1 us. Linux rounds a sleeping thread's wake-up up
/// by its slack (50 us by default) to batch wake-ups, which is most of a loopback
/// timeslot. Written to `/proc/thread-self/timerslack_ns` (Linux >= 4.6, one's own thread
/// needs no capability), so no `prctl` binding is needed. Returns the slack now in force.
pub fn lower_timer_slack() -> Option<u64> {
    let p = "/proc/thread-self/timerslack_ns";
    let _ = std::fs::write(p, "1000");
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

static STOP: AtomicBool = AtomicBool::new(false);

/// Whether SIGTERM or SIGINT has arrived (after [`on_sigterm`]).
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

pub fn request_stop() {
    STOP.store(true, Ordering::Relaxed);
}

/// SIGTERM and SIGINT set a flag that the loops check, so they exit cleanly (logs flushed,
/// summary written, exit code 0). std has no signal API; `signal(2)` is declared here
/// from the C library std already links (no `libc` crate). The handler only stores to an
/// atomic, which is async-signal-safe.
pub fn on_sigterm() {
    #[cfg(unix)]
    {
        extern "C" fn handler(_: i32) {
            STOP.store(true, Ordering::Relaxed);
        }
        extern "C" {
            fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
        }
        const SIGINT: i32 = 2;
        const SIGTERM: i32 = 15;
        // SAFETY: installs a handler that only stores to a static atomic.
        unsafe {
            signal(SIGTERM, handler);
            signal(SIGINT, handler);
        }
    }
}

/// Timer lateness (how long after its deadline a timer fired), in power-of-two
/// microsecond buckets: what the OS's sleeps and scheduling give on this machine.
#[derive(Clone, Debug, Default)]
pub struct Lateness {
    /// buckets[0]: < 1 us; buckets[k]: [2^(k-1), 2^k) us.
    pub buckets: [u64; 24],
    pub count: u64,
    pub max_ps: u64,
    pub sum_ps: u128,
}

impl Lateness {
    pub fn record(&mut self, late_ps: u64) {
        let us = late_ps / 1_000_000;
        let k = (64 - us.leading_zeros()) as usize;
        self.buckets[k.min(23)] += 1;
        self.count += 1;
        self.max_ps = self.max_ps.max(late_ps);
        self.sum_ps += late_ps as u128;
    }
    /// The upper bound (us) of the bucket holding quantile `q`.
    pub fn quantile_us(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let target = ((self.count as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (k, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= target {
                return 1 << k;
            }
        }
        1 << 23
    }
    pub fn mean_us(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ps as f64 / self.count as f64 / 1e6
        }
    }
    pub fn json(&self) -> String {
        format!(
            "{{\"wakeups\": {}, \"mean_us\": {:.1}, \"p50_us_le\": {}, \"p99_us_le\": {}, \"p999_us_le\": {}, \"max_us\": {:.1}}}",
            self.count,
            self.mean_us(),
            self.quantile_us(0.5),
            self.quantile_us(0.99),
            self.quantile_us(0.999),
            self.max_ps as f64 / 1e6
        )
    }
}

/// A `Duration` of `ps` picoseconds.
pub fn ps_duration(ps: u64) -> Duration {
    Duration::from_nanos(ps / 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_buckets() {
        let mut l = Lateness::default();
        for us in [0u64, 1, 3, 3, 100] {
            l.record(us * 1_000_000);
        }
        assert_eq!(l.count, 5);
        assert_eq!(l.buckets[0], 1);
        assert_eq!(l.buckets[1], 1);
        assert_eq!(l.buckets[2], 2);
        assert_eq!(l.quantile_us(0.5), 4);
        assert_eq!(l.quantile_us(1.0), 128);
        assert_eq!(l.max_ps, 100_000_000);
    }

    #[test]
    fn clock_counts_from_the_origin() {
        let c = Clock {
            origin_unix_ns: unix_ns() - 1_000_000,
        };
        let t = c.now();
        assert!(t >= 1_000_000_000, "{t}");
        assert!(c.to_unix_ns(t) >= c.origin_unix_ns + 1_000_000);
        let future = Clock {
            origin_unix_ns: unix_ns() + 1_000_000_000,
        };
        assert_eq!(future.now(), 0);
    }
}
